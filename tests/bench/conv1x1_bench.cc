// Conv's 1x1 stride-1 product as RunFusedGemm runs it at batch N on T
// threads: the images split over the threads (with fewer images than
// threads, batch 1 on 2: one image after another, each GEMM split over the
// pool by sgemm's ChooseSplit), each image one GEMM of its
// input X_n [K, HW] read in place under the pre-packed weights [M, K]
// ("plain"), or as TransposedUnit does it ("transp.": Y^T = X^T W^T under W^T
// pre-packed, moved back into Y by the GEMM), with bias, the residual Z
// (conv3) and Relu in the epilogue; GFLOP/s of each. Every timing starts
// with the caches rinsed (a 64 MiB pass) and the input written again, as in
// a network whose weights come from memory and whose input the layer before
// just wrote. Reports the best of several runs (on one thread, of the
// thread's CPU time: slices given to other processes do not count), and the
// largest difference of either from a plain sum.
// Build (from the repository root, after scripts/build.sh):
//   g++ -O3 -std=gnu++17 -I. tests/bench/conv1x1_bench.cc providers/cpu/math/sgemm.cc \
//       providers/cpu/common/fast_math.cc core/framework/thread_pool.cc -o build/conv1x1_bench -lpthread
// Run: build/conv1x1_bench [threads] [images] [runs]; ONLY=text keeps the
// shapes whose name contains it; ONYX_CPU_ISA=avx2 times the AVX2 kernel.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <ctime>
#include <vector>

#include "core/framework/thread_pool.h"
#include "providers/cpu/math/sgemm.h"

using namespace onyx;

struct Shape {
  const char* name;
  int64_t M, K, HW;
  bool z;
};

static double Now() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

// On one thread, the thread's CPU time: time slices given to other
// processes on a busy machine do not count.
static double ThreadNow() {
  timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return ts.tv_sec + 1e-9 * ts.tv_nsec;
}

int main(int argc, char** argv) {
  const int threads = argc > 1 ? std::atoi(argv[1]) : 2;
  const int64_t N = argc > 2 ? std::atoi(argv[2]) : 8;
  const int runs = argc > 3 ? std::atoi(argv[3]) : 15;
  ThreadPool pool(threads);
  std::printf("isa %s, %d threads, %lld images\n", fastmath::IsaName(sgemm::ActiveIsa()), threads,
              static_cast<long long>(N));
  std::vector<Shape> all = {
      {"r50 l1 conv1 64x256 @3136", 64, 256, 3136, false},
      {"r50 l1 conv3 256x64 @3136 z", 256, 64, 3136, true},
      {"r50 l2 conv1 128x512 @784", 128, 512, 784, false},
      {"r50 l2 conv3 512x128 @784 z", 512, 128, 784, true},
      {"r50 l3 conv1 256x1024 @196", 256, 1024, 196, false},
      {"r50 l3 conv3 1024x256 @196 z", 1024, 256, 196, true},
      {"mb 12 proj 96x576 @196", 96, 576, 196, false},
      {"mb 13 exp 576x96 @196", 576, 96, 196, false},
      {"mb 7 exp 384x64 @196", 384, 64, 196, false},
      {"mb 7 proj 64x384 @196", 64, 384, 196, false},
      {"mb 4 exp 192x32 @784", 192, 32, 784, false},
      {"mb 2 proj 24x144 @3136", 24, 144, 3136, false},
      {"r50 l4 conv1 512x2048 @49", 512, 2048, 49, false},
      {"r50 l4 conv3 2048x512 @49 z", 2048, 512, 49, true},
      {"mb 17 proj 320x960 @49", 320, 960, 49, false},
      {"mb 18 1280x320 @49", 1280, 320, 49, false},
      {"mb 16 exp 960x160 @49", 960, 160, 49, false},
  };
  // SHAPE=M,K,HW times that product alone.
  if (const char* e = getenv("SHAPE")) {
    static Shape one{"custom", 0, 0, 0, false};
    long long m = 0, k = 0, hw = 0;
    if (std::sscanf(e, "%lld,%lld,%lld", &m, &k, &hw) == 3) {
      one.M = m, one.K = k, one.HW = hw;
      all = {one};
    }
  }
  std::vector<float> rinse(16 << 20);
  std::mt19937 rng(1);
  std::uniform_real_distribution<float> dist(-1.f, 1.f);
  const char* only = getenv("ONLY");
  std::printf("%-30s %9s %9s %8s %10s\n", "shape", "plain", "transp.", "plain us", "maxdiff");
  for (const Shape& s : all) {
    if (only && !strstr(s.name, only)) continue;
    std::vector<float> w(s.M * s.K), x(N * s.K * s.HW), bias(s.M), z(s.z ? N * s.M * s.HW : 0), y(N * s.M * s.HW);
    for (auto& v : w) v = dist(rng);
    for (auto& v : x) v = dist(rng);
    for (auto& v : bias) v = dist(rng);
    for (auto& v : z) v = dist(rng);
    const sgemm::Packed packed = sgemm::PackA(false, s.M, s.K, w.data(), s.K);
    // W^T pre-packed for the transposed product Y^T = X^T W^T (Conv's
    // TransposedUnit: Y^T into a scratch, moved back into Y by the GEMM's
    // tasks with the epilogue).
    const sgemm::Packed packed_t = sgemm::PackB(true, s.K, s.M, w.data(), s.K);
    const int64_t ldt = s.M + 16;
    // One Y^T scratch per image: however For splits the images over the
    // threads (3 images on 2 threads: 1 + 2), no two share one.
    std::vector<std::vector<float>> yt(N, std::vector<float>(s.HW * ldt));
    bool transposed = false;
    // Fewer images than threads (batch 1): the images one after another,
    // each GEMM split over the pool, as Conv runs them then.
    const bool inner = N < threads;
    ThreadPool* gemm_pool = inner ? &pool : nullptr;
    auto run = [&] {
      auto images = [&](int64_t begin, int64_t end) {
        for (int64_t n = begin; n < end; ++n) {
          sgemm::Epilogue ep;
          ep.bias = bias.data();
          ep.z = s.z ? z.data() + n * s.M * s.HW : nullptr;
          ep.ldz = s.HW;
          ep.clamp = true;
          ep.lo = 0.f;
          ep.hi = INFINITY;
          if (transposed) {
            ep.t_out = y.data() + n * s.M * s.HW;
            ep.ldt = s.HW;
            sgemm::Gemm(true, false, s.HW, s.M, s.K, 1.f, x.data() + n * s.K * s.HW, s.HW, nullptr, s.M, 0.f,
                        yt[n].data(), ldt, gemm_pool, nullptr, &packed_t, nullptr, &ep);
          } else {
            sgemm::Gemm(false, false, s.M, s.HW, s.K, 1.f, w.data(), s.K, x.data() + n * s.K * s.HW, s.HW, 0.f,
                        y.data() + n * s.M * s.HW, s.HW, gemm_pool, &packed, nullptr, nullptr, &ep);
          }
        }
      };
      if (inner) images(0, N);
      else ThreadPool::For(&pool, N, 1, images);
    };
    // The largest difference from a plain sum (every 7th row of the first
    // and last image), of both ways.
    auto max_err = [&] {
      double err = 0;
      for (int64_t n = 0; n < N; n += std::max<int64_t>(1, N - 1)) {
        for (int64_t m = 0; m < s.M; m += 7) {
          for (int64_t j = 0; j < s.HW; ++j) {
            double acc = bias[m] + (s.z ? z[(n * s.M + m) * s.HW + j] : 0.0);
            for (int64_t k = 0; k < s.K; ++k) acc += double(w[m * s.K + k]) * x[(n * s.K + k) * s.HW + j];
            err = std::max(err, std::fabs(std::max(acc, 0.0) - y[(n * s.M + m) * s.HW + j]));
          }
        }
      }
      return err;
    };
    double err = 0;
    for (int t = 0; t < 2; ++t) {
      transposed = t == 1;
      std::fill(y.begin(), y.end(), NAN);
      run();
      err = std::max(err, max_err());
    }
    // Plain and transposed alternately, so that a noisy neighbour slows both alike.
    double best[2] = {1e30, 1e30};
    for (int r = 0; r < runs; ++r) {
      for (int t = 0; t < 2; ++t) {
        transposed = t == 1;
        if (!getenv("HOT")) {
          for (size_t i = 0; i < rinse.size(); i += 16) rinse[i] += 1.f;
          // The input as the layer before left it: just written (in L3).
          for (size_t i = 0; i < x.size(); i += 16) x[i] += 0.f;
        }
        const double t0 = threads == 1 ? ThreadNow() : Now();
        run();
        best[t] = std::min(best[t], (threads == 1 ? ThreadNow() : Now()) - t0);
      }
    }
    const double gf = 2.0 * N * s.M * s.K * s.HW * 1e-9;
    std::printf("%-30s %9.1f %9.1f %8.0f %10.2e\n", s.name, gf / best[0], gf / best[1], best[0] * 1e6, err);
  }
  return 0;
}
