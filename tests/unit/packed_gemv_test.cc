// One row against a pre-packed B through BlasGemm (M = 1 with a packed
// weight): providers/cpu/math/packed_gemv.h on AVX-512, sgemm::Gemm on AVX2,
// against a double-precision reference; and the layout probe that keeps the
// GEMV in step with sgemm's packing.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "core/framework/thread_pool.h"
#include "providers/cpu/common/fast_math.h"
#include "providers/cpu/math/blas.h"
#include "providers/cpu/math/packed_gemv.h"
#include "providers/cpu/math/sgemm.h"

namespace onyx {
namespace {

struct Row {
  int64_t K, N;
  bool ta, tb;
  float alpha, beta;
  int64_t lda;  // A's row stride when ta (A stored [K, 1])
};

// BlasGemm(M = 1) with B packed; every output and the floats past N checked.
void CheckRow(const Row& c, ThreadPool* pool, uint32_t seed) {
  const std::string what = std::string(fastmath::IsaName(sgemm::ActiveIsa())) + " K=" + std::to_string(c.K) +
                           " N=" + std::to_string(c.N) + " ta=" + std::to_string(c.ta) + " tb=" +
                           std::to_string(c.tb) + " beta=" + std::to_string(c.beta) +
                           (pool != nullptr ? " threads=2" : " threads=1");
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(-1.f, 1.f);
  const int64_t lda = c.ta ? c.lda : c.K;
  std::vector<float> A(static_cast<size_t>(c.ta ? c.K * lda : c.K)), B(static_cast<size_t>(c.K * c.N));
  for (auto& v : A) v = dist(rng);
  for (auto& v : B) v = dist(rng);
  // B stored [N, K] when tb.
  auto b_at = [&](int64_t k, int64_t j) { return static_cast<double>(c.tb ? B[j * c.K + k] : B[k * c.N + j]); };
  const sgemm::Packed pb = sgemm::PackB(c.tb, c.K, c.N, B.data(), c.tb ? c.K : c.N);
  ASSERT_EQ(gemv::Usable(&pb, c.K, c.N), sgemm::ActiveIsa() == fastmath::Isa::kAvx512) << what;
  const float sentinel = 12345.f;
  std::vector<float> C(static_cast<size_t>(c.N + 7), sentinel);
  for (int64_t j = 0; j < c.N; ++j) C[j] = c.beta == 0.f ? std::numeric_limits<float>::quiet_NaN() : dist(rng);
  const std::vector<float> C0 = C;
  BlasGemm<float>(c.ta, c.tb, 1, c.N, c.K, c.alpha, A.data(), lda, nullptr, c.tb ? c.K : c.N, c.beta, C.data(),
                  c.N, pool, nullptr, &pb);
  for (int64_t j = 0; j < c.N; ++j) {
    double ref = 0, mag = 0;
    for (int64_t k = 0; k < c.K; ++k) {
      const double a = A[c.ta ? k * lda : k];
      ref += a * b_at(k, j);
      mag += std::fabs(a * b_at(k, j));
    }
    ref = c.alpha * ref + (c.beta == 0.f ? 0.0 : c.beta * static_cast<double>(C0[j]));
    ASSERT_NEAR(C[j], ref, 1e-5 * (mag + 1.0)) << what << " column " << j;
  }
  for (int64_t j = c.N; j < c.N + 7; ++j) ASSERT_EQ(C[j], sentinel) << what << " wrote past N at " << j;
}

class PackedGemvTest : public ::testing::TestWithParam<int> {};

TEST_P(PackedGemvTest, MatchesDoubleReference) {
  const auto want = static_cast<fastmath::Isa>(GetParam());
  const fastmath::Isa saved = sgemm::ActiveIsa();
  const fastmath::Isa isa = sgemm::SetIsaForTesting(want);
  if (isa != want) {
    sgemm::SetIsaForTesting(saved);
    GTEST_SKIP() << "this CPU (or ONYX_CPU_ISA) does not run " << fastmath::IsaName(want);
  }
  if (isa == fastmath::Isa::kAvx512) {
    EXPECT_TRUE(gemv::LayoutMatches()) << "sgemm's packed layout changed: packed_gemv.cc reads the old one";
  }
  ThreadPool pool(2);
  uint32_t seed = 1;
  // One K block and several (576 = 3 x 192, 3072 = 12 x 256, 1000 = 4 x
  // 250), N on and off whole panels and groups of four, down to one panel.
  const Row rows[] = {{768, 2304, false, false, 1.f, 0.f, 0},   {3072, 771, false, false, 1.f, 0.f, 0},
                      {576, 37, false, false, 0.5f, 0.f, 0},    {77, 16, false, false, 1.f, 1.f, 0},
                      {1000, 129, false, true, -0.7f, 1.3f, 0}, {5, 100, true, false, 2.f, 0.f, 3},
                      {300, 500, true, true, 1.f, 0.25f, 1},    {256, 8, false, false, 1.f, 0.f, 0},
                      {257, 4099, false, false, 1.f, 0.f, 0}};
  for (const Row& r : rows) {
    CheckRow(r, nullptr, seed++);
    CheckRow(r, &pool, seed++);
  }
  sgemm::SetIsaForTesting(saved);
}

INSTANTIATE_TEST_SUITE_P(Isas, PackedGemvTest, ::testing::Values(1, 2),
                         [](const ::testing::TestParamInfo<int>& i) {
                           return std::string(fastmath::IsaName(static_cast<fastmath::Isa>(i.param)));
                         });

// Without a micro-kernel (baseline) nothing is packed and nothing is usable.
TEST(PackedGemv, BaselineIsNeverUsable) {
  const fastmath::Isa saved = sgemm::ActiveIsa();
  sgemm::SetIsaForTesting(fastmath::Isa::kBaseline);
  const std::vector<float> B(64 * 40, 1.f);
  const sgemm::Packed pb = sgemm::PackB(false, 64, 40, B.data(), 40);
  EXPECT_FALSE(gemv::Usable(&pb, 64, 40));
  EXPECT_FALSE(gemv::Usable(nullptr, 64, 40));
  sgemm::SetIsaForTesting(saved);
}

}  // namespace
}  // namespace onyx
