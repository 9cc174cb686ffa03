// The depthwise kernel (providers/cpu/nn/depthwise_conv.cc) on MobileNetV2's
// 3x3 depthwise convs, best of many rounds (the machine is shared and
// noisy), in GFLOP/s and microseconds per conv; with 2 threads or more the
// planes are split over a pool the way Conv splits them (conv.cc).
// Build (from the repository root, after scripts/build.sh):
//   g++ -O3 -std=gnu++17 -I. tests/bench/depthwise_bench.cc providers/cpu/nn/depthwise_conv.cc \
//       providers/cpu/math/sgemm.cc providers/cpu/common/fast_math.cc core/framework/thread_pool.cc \
//       -o build/depthwise_bench -lpthread
// Run: build/depthwise_bench [seconds per shape] [threads] [batch]; ONYX_CPU_ISA=avx2 times the AVX2 path.
// At batch 8 the early layers' inputs (14 MB at 144 x 56x56) no longer fit
// the L2 caches, as in the model.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <vector>

#include "core/framework/thread_pool.h"
#include "providers/cpu/nn/depthwise_conv.h"

using namespace onyx;

int main(int argc, char** argv) {
  const double budget = argc > 1 ? std::atof(argv[1]) : 0.3;
  const int threads = argc > 2 ? std::atoi(argv[2]) : 1;
  const int64_t N = argc > 3 ? std::max(1, std::atoi(argv[3])) : 1;
  ThreadPool pool(threads);
  struct S {
    int64_t C, H, W, s;
  };
  // MobileNetV2's depthwise convs at 224x224 (pads 1), each once.
  const S shapes[] = {{32, 112, 112, 1}, {96, 112, 112, 2}, {144, 56, 56, 1}, {144, 56, 56, 2}, {192, 28, 28, 1},
                      {192, 28, 28, 2},  {384, 14, 14, 1},  {576, 14, 14, 1}, {576, 14, 14, 2}, {960, 7, 7, 1}};
  std::mt19937 rng(1);
  std::normal_distribution<float> nd;
  double total = 0;
  for (const S& s : shapes) {
    depthwise::Plane2D g;
    g.H = s.H, g.W = s.W, g.KH = g.KW = 3, g.sh = g.sw = s.s, g.ph = g.pw = 1;
    g.OH = (s.H + 2 - 3) / s.s + 1, g.OW = (s.W + 2 - 3) / s.s + 1;
    std::vector<float> x(N * s.C * s.H * s.W), w(s.C * 9), b(s.C), y(N * s.C * g.OH * g.OW);
    for (float& v : x) v = nd(rng);
    for (float& v : w) v = nd(rng);
    for (float& v : b) v = nd(rng);
    const int64_t in_size = s.H * s.W, out_size = g.OH * g.OW;
    const int64_t min_chunk = std::max<int64_t>(1, 32768 / (out_size * 9));
    auto run = [&] {
      // Runs of planes of one image, as Conv splits them.
      ThreadPool::For(&pool, N * s.C, min_chunk, [&](int64_t begin, int64_t end) {
        for (int64_t p = begin; p < end;) {
          const int64_t c = p % s.C, count = std::min(end - p, s.C - c);
          depthwise::Run(g, count, x.data() + p * in_size, in_size, w.data() + c * 9, 9, b.data() + c, true, 0.f, 6.f,
                         y.data() + p * out_size, out_size);
          p += count;
        }
      });
    };
    run();
    double best = 1e9;
    const auto t_end = std::chrono::steady_clock::now() + std::chrono::duration<double>(budget);
    while (std::chrono::steady_clock::now() < t_end) {
      const auto t0 = std::chrono::steady_clock::now();
      run();
      best = std::min(best, std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
    }
    const double flops = 2.0 * 9 * N * s.C * g.OH * g.OW;
    total += best;
    std::printf("C=%4lld %3lldx%-3lld s%lld  %8.1f us  %6.1f GFLOP/s\n", static_cast<long long>(s.C),
                static_cast<long long>(s.H), static_cast<long long>(s.W), static_cast<long long>(s.s), best * 1e6,
                flops / best * 1e-9);
  }
  std::printf("total %.1f us\n", total * 1e6);
  return 0;
}
