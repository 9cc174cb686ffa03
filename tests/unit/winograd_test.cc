// Winograd F(2x2, 3x3) and F(4x4, 3x3) (providers/cpu/nn/winograd_conv.h)
// on every ISA this CPU runs, straight through winograd::Run: partial tiles
// on both edges, pads 0 to 2 (asymmetric), one image and several, one thread
// and a pool (several blocks, and the one block whose phases are split over
// the threads), bias, residual Z and clamp; against a double direct conv,
// within 1e-5 of the output's range (F(2x2, 3x3) 2e-6). Under the address
// sanitizer (scripts/sanitize.sh asan) this also checks that the
// transforms' vector loads and stores stay inside their buffers.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <random>
#include <vector>

#include "core/framework/thread_pool.h"
#include "providers/cpu/common/fast_math.h"
#include "providers/cpu/math/sgemm.h"
#include "providers/cpu/nn/winograd_conv.h"

namespace onyx {
namespace {

struct Case {
  int64_t N, C, M, H, W, pt, pl, pb, pr;
  bool bias, z, clamp;
};

// One case's data and its double direct conv (bias, Z, clamp applied).
struct Data {
  int64_t OH, OW;
  std::vector<float> w, x, b, z;
  std::vector<double> ref;
  double range = 0;
};

Data Make(const Case& c) {
  Data d;
  d.OH = c.H + c.pt + c.pb - 2, d.OW = c.W + c.pl + c.pr - 2;
  std::mt19937 rng(static_cast<unsigned>(c.C * 131 + c.H * 7));
  std::normal_distribution<float> normal(0.f, 1.f);
  d.w.resize(c.M * c.C * 9), d.x.resize(c.N * c.C * c.H * c.W), d.b.resize(c.M), d.z.resize(c.N * c.M * d.OH * d.OW);
  for (float& v : d.w) v = normal(rng) * std::sqrt(2.f / (9 * c.C));
  for (float& v : d.x) v = normal(rng);
  for (float& v : d.b) v = 0.1f * normal(rng);
  for (float& v : d.z) v = normal(rng);
  d.ref.resize(d.z.size());
  for (int64_t n = 0; n < c.N; ++n)
    for (int64_t m = 0; m < c.M; ++m)
      for (int64_t oh = 0; oh < d.OH; ++oh)
        for (int64_t ow = 0; ow < d.OW; ++ow) {
          double acc = c.bias ? d.b[m] : 0.0;
          for (int64_t ch = 0; ch < c.C; ++ch)
            for (int i = 0; i < 3; ++i) {
              const int64_t ih = oh - c.pt + i;
              if (ih < 0 || ih >= c.H) continue;
              for (int j = 0; j < 3; ++j) {
                const int64_t iw = ow - c.pl + j;
                if (iw < 0 || iw >= c.W) continue;
                acc += static_cast<double>(d.w[((m * c.C + ch) * 3 + i) * 3 + j]) *
                       d.x[((n * c.C + ch) * c.H + ih) * c.W + iw];
              }
            }
          const int64_t o = ((n * c.M + m) * d.OH + oh) * d.OW + ow;
          if (c.z) acc += d.z[o];
          if (c.clamp) acc = std::min(std::max(acc, 0.0), 6.0);
          d.ref[o] = acc;
          d.range = std::max(d.range, std::fabs(acc));
        }
  return d;
}

// Relative to the largest |y|: the worst difference of Run's y from the double conv.
double RunAndCompare(const Case& c, const Data& d, int tile, ThreadPool* pool) {
  const winograd::Filters u = winograd::TransformFilters(d.w.data(), c.M, c.C, tile);
  EXPECT_EQ(u.tile, tile);
  winograd::Geom g;
  g.N = c.N, g.C = c.C, g.H = c.H, g.W = c.W, g.M = c.M, g.OH = d.OH, g.OW = d.OW, g.ph = c.pt, g.pw = c.pl;
  std::vector<float> y(d.ref.size(), -7.f);
  winograd::Run(g, u, d.x.data(), c.bias ? d.b.data() : nullptr, c.z ? d.z.data() : nullptr, c.clamp, 0.f, 6.f,
                y.data(), pool);
  double worst = 0;
  for (size_t o = 0; o < y.size(); ++o) worst = std::max(worst, std::fabs(d.ref[o] - y[o]));
  return worst / std::max(d.range, 1e-30);
}

TEST(Winograd, BothTilesAgreeWithTheDirectConvOnEveryIsa) {
  const Case cases[] = {
      {1, 64, 64, 29, 31, 1, 1, 1, 1, true, false, true},    // partial tiles on both edges
      {2, 37, 70, 30, 33, 2, 0, 0, 2, true, true, false},    // asymmetric pads, odd channels, residual
      {3, 64, 48, 9, 11, 0, 0, 0, 0, false, false, false},   // valid, several images, few tiles
      {1, 72, 64, 7, 7, 1, 1, 1, 1, true, true, true},       // one block at 2 threads
      {2, 64, 64, 57, 55, 1, 1, 1, 1, true, false, true},    // several blocks per thread
      {1, 33, 40, 4, 45, 2, 1, 2, 1, false, true, false},    // rows of one tile, a long tile row
  };
  ThreadPool pool(2);
  const sgemm::Isa saved = sgemm::ActiveIsa();
  const fastmath::Isa best = fastmath::BestIsa();
  for (const Case& c : cases) {
    const Data d = Make(c);
    for (int i = 0; i <= static_cast<int>(best); ++i) {
      sgemm::SetIsaForTesting(static_cast<sgemm::Isa>(i));
      for (int tile : {2, 4}) {
        for (ThreadPool* p : {static_cast<ThreadPool*>(nullptr), &pool}) {
          SCOPED_TRACE(testing::Message() << "isa " << i << " tile " << tile << " threads " << (p ? 2 : 1) << " C "
                                          << c.C << " M " << c.M << " " << c.H << "x" << c.W);
          EXPECT_LT(RunAndCompare(c, d, tile, p), tile == 4 ? 1e-5 : 2e-6);
        }
      }
    }
  }
  sgemm::SetIsaForTesting(saved);
}

// The tile TileFor picks: F(4x4, 3x3) only with 64-256 channels on images of
// 28x28 and more, and only when allowed; F(2x2, 3x3) where it won before; the
// direct conv on tiny images, few channels and 7x7 at 1024 channels.
TEST(Winograd, TileForKeepsF4ToLargeImages) {
  EXPECT_EQ(winograd::TileFor(64, 64, 56, 56, true), 4);
  EXPECT_EQ(winograd::TileFor(64, 64, 56, 56, false), 2);
  EXPECT_EQ(winograd::TileFor(128, 128, 28, 28, true), 4);
  EXPECT_EQ(winograd::TileFor(256, 256, 14, 14, true), 2);
  EXPECT_EQ(winograd::TileFor(512, 512, 7, 7, true), 2);
  EXPECT_EQ(winograd::TileFor(512, 512, 28, 28, true), 2);
  EXPECT_EQ(winograd::TileFor(32, 32, 56, 56, true), 2);
  EXPECT_EQ(winograd::TileFor(64, 64, 0, 0, true), 2);  // size unknown
  EXPECT_EQ(winograd::TileFor(16, 16, 56, 56, true), 0);
  EXPECT_EQ(winograd::TileFor(1024, 1024, 7, 7, true), 0);
}

}  // namespace
}  // namespace onyx
