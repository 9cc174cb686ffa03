// Our SGEMM (providers/cpu/math/sgemm.cc) against OpenBLAS's cblas_sgemm on
// the engine's shape classes, interleaved in one process (the machine is
// shared and noisy): per shape, rounds of {ours, ours with B or A pre-packed,
// OpenBLAS}, the best round of each reported in GFLOP/s.
// Build (from the repository root, after scripts/build.sh):
//   g++ -O3 -std=gnu++17 -I. -I/usr/include/x86_64-linux-gnu/openblas-pthread tests/bench/sgemm_bench.cc \
//       providers/cpu/math/sgemm.cc providers/cpu/common/fast_math.cc core/framework/thread_pool.cc \
//       -o build/sgemm_bench -lopenblas -lpthread
// Run: build/sgemm_bench [threads] [seconds per timing]; ONLY=text keeps the
// shapes whose name contains it; PREPACK_ONLY=1 times only the pre-packed
// call (the others print 0). ONYX_CPU_ISA=avx2 times the AVX2 kernel.
#include <cblas.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <vector>

#include "core/framework/thread_pool.h"
#include "providers/cpu/math/sgemm.h"

using namespace onyx;

struct Shape {
  const char* name;
  int64_t M, N, K;
  bool ta, tb;
  bool pack_a;  // the constant operand is A (Conv's weight), else B
};

static double Now() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

template <typename F>
static double Time(F&& f, double budget) {
  f();
  double best = 1e30;
  const double end = Now() + budget;
  int n = 0;
  while (n < 3 || Now() < end) {
    const double t0 = Now();
    f();
    best = std::min(best, Now() - t0);
    ++n;
  }
  return best;
}

int main(int argc, char** argv) {
  const int threads = argc > 1 ? std::atoi(argv[1]) : 2;
  const double budget = argc > 2 ? std::atof(argv[2]) : 0.05;
  ThreadPool pool(threads);
  openblas_set_num_threads(threads);
  std::printf("isa %s, OpenBLAS %s, %d threads\n", fastmath::IsaName(sgemm::ActiveIsa()), openblas_get_corename(),
              threads);
  std::vector<Shape> all = {
      {"gpt2 qkv 1x2304x768", 1, 2304, 768, false, false, false},
      {"gpt2 proj 1x768x768", 1, 768, 768, false, false, false},
      {"gpt2 fc 1x3072x768", 1, 3072, 768, false, false, false},
      {"gpt2 fc2 1x768x3072", 1, 768, 3072, false, false, false},
      {"gpt2 head 1x50257x768 tB", 1, 50257, 768, false, true, false},
      {"decode scores 1x129x64 tB", 1, 129, 64, false, true, false},
      {"decode scores 1x257x128 tB", 1, 257, 128, false, true, false},
      {"m2 2x3072x768", 2, 3072, 768, false, false, false},
      {"m4 4x768x768", 4, 768, 768, false, false, false},
      {"bert 128x768x768", 128, 768, 768, false, false, false},
      {"bert 128x3072x768", 128, 3072, 768, false, false, false},
      {"bert 128x768x3072", 128, 768, 3072, false, false, false},
      {"attn 128x128x64 tB", 128, 128, 64, false, true, false},
      {"attn 128x64x128", 128, 64, 128, false, false, false},
      {"conv 64x3136x576", 64, 3136, 576, false, false, true},
      {"conv pw 64x3136x256", 64, 3136, 256, false, false, true},
      {"conv pw 256x3136x64", 256, 3136, 64, false, false, true},
      {"conv pw 128x784x512", 128, 784, 512, false, false, true},
      {"conv pw 512x784x128", 512, 784, 128, false, false, true},
      {"conv pw 256x196x1024", 256, 196, 1024, false, false, true},
      {"conv pw 1024x196x256", 1024, 196, 256, false, false, true},
      {"conv pw 96x12544x16", 96, 12544, 16, false, false, true},
      {"conv pw 24x12544x96", 24, 12544, 96, false, false, true},
      {"conv pw 144x3136x24", 144, 3136, 24, false, false, true},
      {"conv pw 32x3136x144", 32, 3136, 144, false, false, true},
      {"conv pw 192x784x32", 192, 784, 32, false, false, true},
      {"conv pw 64x784x192", 64, 784, 192, false, false, true},
      {"conv pw 384x196x64", 384, 196, 64, false, false, true},
      {"conv pw 96x196x384", 96, 196, 384, false, false, true},
      {"conv pw 1280x49x320", 1280, 49, 320, false, false, true},
      {"conv 64x3136x64", 64, 3136, 64, false, false, true},
      {"conv 256x196x2304", 256, 196, 2304, false, false, true},
      {"conv 512x49x4608", 512, 49, 4608, false, false, true},
      {"conv 32x12544x27", 32, 12544, 27, false, false, true},
      {"small 16x16x16", 16, 16, 16, false, false, false},
      {"small 32x32x32", 32, 32, 32, false, false, false},
      {"tall 3136x64x64", 3136, 64, 64, false, false, false},
      {"b8 1024x3072x768", 1024, 3072, 768, false, false, false},
      {"b8 1024x768x3072", 1024, 768, 3072, false, false, false},
      {"lm head 1024x50257x768", 1024, 50257, 768, false, false, false},
      {"2048^3", 2048, 2048, 2048, false, false, false},
      {"2000^3", 2000, 2000, 2000, false, false, false},
      {"1024^3", 1024, 1024, 1024, false, false, false},
  };
  std::mt19937 rng(1);
  std::uniform_real_distribution<float> dist(-1.f, 1.f);
  std::printf("%-26s %9s %9s %9s %7s %7s  (GFLOP/s)\n", "shape", "ours", "prepack", "openblas", "ratio", "ratio_p");
  const char* only = getenv("ONLY");
  const bool prepack_only = getenv("PREPACK_ONLY") != nullptr && std::atoi(getenv("PREPACK_ONLY")) != 0;
  for (const Shape& s : all) {
    if (only && !strstr(s.name, only)) continue;
    std::vector<float> A(s.M * s.K), B(s.K * s.N), C(s.M * s.N), R(s.M * s.N);
    for (auto& v : A) v = dist(rng);
    for (auto& v : B) v = dist(rng);
    const int64_t lda = s.ta ? s.M : s.K, ldb = s.tb ? s.K : s.N;
    const sgemm::Packed packed =
        s.pack_a ? sgemm::PackA(s.ta, s.M, s.K, A.data(), lda) : sgemm::PackB(s.tb, s.K, s.N, B.data(), ldb);
    auto ours = [&] {
      sgemm::Gemm(s.ta, s.tb, s.M, s.N, s.K, 1.f, A.data(), lda, B.data(), ldb, 0.f, C.data(), s.N, &pool);
    };
    auto pre = [&] {
      sgemm::Gemm(s.ta, s.tb, s.M, s.N, s.K, 1.f, A.data(), lda, B.data(), ldb, 0.f, C.data(), s.N, &pool,
                  s.pack_a ? &packed : nullptr, s.pack_a ? nullptr : &packed);
    };
    auto blas = [&] {
      cblas_sgemm(CblasRowMajor, s.ta ? CblasTrans : CblasNoTrans, s.tb ? CblasTrans : CblasNoTrans, s.M, s.N, s.K,
                  1.f, A.data(), lda, B.data(), ldb, 0.f, R.data(), s.N);
    };
    double t_ours = 1e30, t_pre = 1e30, t_blas = 1e30;
    for (int round = 0; round < 3; ++round) {
      if (!prepack_only) t_ours = std::min(t_ours, Time(ours, budget));
      t_pre = std::min(t_pre, Time(pre, budget));
      if (!prepack_only) t_blas = std::min(t_blas, Time(blas, budget));
    }
    if (prepack_only) blas(); // the reference for maxdiff
    double err = 0;
    if (prepack_only) pre();
    for (size_t i = 0; i < C.size(); ++i) err = std::max(err, static_cast<double>(std::fabs(C[i] - R[i])));
    const double gf = 2.0 * s.M * s.N * s.K * 1e-9;
    std::printf("%-26s %9.1f %9.1f %9.1f %7.2f %7.2f  maxdiff %.1e\n", s.name, gf / t_ours, gf / t_pre, gf / t_blas,
                t_blas / t_ours, t_blas / t_pre, err);
  }
  return 0;
}
