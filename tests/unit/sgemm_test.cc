// The packed SGEMM (providers/cpu/math/sgemm.h) and BlasGemm's float path
// against a double-precision reference, on every ISA path this machine runs.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "core/framework/thread_pool.h"
#include "providers/cpu/math/blas.h"
#include "providers/cpu/math/sgemm.h"

namespace onyx {
namespace {

struct Case {
  int64_t M, N, K;
  bool ta, tb;
  float alpha, beta;
  int64_t pad;  // extra elements on every leading dimension
};

std::string Describe(const Case& c, fastmath::Isa isa) {
  return std::string(fastmath::IsaName(isa)) + " M=" + std::to_string(c.M) + " N=" + std::to_string(c.N) +
         " K=" + std::to_string(c.K) + " ta=" + std::to_string(c.ta) + " tb=" + std::to_string(c.tb) +
         " alpha=" + std::to_string(c.alpha) + " beta=" + std::to_string(c.beta) + " pad=" + std::to_string(c.pad);
}

// How the product is computed.
enum class Via { kBlasGemm, kOwn, kPackedA, kPackedB, kPackedBoth };

// Runs one case and checks every element of C (and that the padding between
// rows of C is untouched) against a double reference, within a bound scaled
// by sum |a||b| of each output.
void Check(const Case& c, Via via, ThreadPool* pool, fastmath::Isa isa, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(-1.f, 1.f);
  const int64_t a_rows = c.ta ? c.K : c.M, a_cols = c.ta ? c.M : c.K;
  const int64_t b_rows = c.tb ? c.N : c.K, b_cols = c.tb ? c.K : c.N;
  const int64_t lda = a_cols + c.pad, ldb = b_cols + c.pad, ldc = c.N + c.pad;
  std::vector<float> A(static_cast<size_t>(a_rows * lda)), B(static_cast<size_t>(b_rows * ldb));
  std::vector<float> C(static_cast<size_t>(c.M * ldc));
  for (auto& v : A) v = dist(rng);
  for (auto& v : B) v = dist(rng);
  const float sentinel = 12345.f;
  for (int64_t i = 0; i < c.M; ++i)
    for (int64_t j = 0; j < ldc; ++j)
      C[i * ldc + j] = j >= c.N ? sentinel : c.beta == 0.f ? std::numeric_limits<float>::quiet_NaN() : dist(rng);
  const std::vector<float> C0 = C;
  auto a_at = [&](int64_t i, int64_t k) { return static_cast<double>(c.ta ? A[k * lda + i] : A[i * lda + k]); };
  auto b_at = [&](int64_t k, int64_t j) { return static_cast<double>(c.tb ? B[j * ldb + k] : B[k * ldb + j]); };

  sgemm::Packed pa, pb;
  if (via == Via::kPackedA || via == Via::kPackedBoth) pa = sgemm::PackA(c.ta, c.M, c.K, A.data(), lda);
  if (via == Via::kPackedB || via == Via::kPackedBoth) pb = sgemm::PackB(c.tb, c.K, c.N, B.data(), ldb);
  if (via == Via::kBlasGemm) {
    BlasGemm<float>(c.ta, c.tb, c.M, c.N, c.K, c.alpha, A.data(), lda, B.data(), ldb, c.beta, C.data(), ldc, pool);
  } else {
    ASSERT_TRUE(sgemm::Available());
    sgemm::Gemm(c.ta, c.tb, c.M, c.N, c.K, c.alpha, A.data(), lda, B.data(), ldb, c.beta, C.data(), ldc, pool,
                pa.empty() ? nullptr : &pa, pb.empty() ? nullptr : &pb);
  }
  int bad = 0;
  for (int64_t i = 0; i < c.M && bad < 5; ++i) {
    for (int64_t j = 0; j < ldc && bad < 5; ++j) {
      const float got = C[i * ldc + j];
      if (j >= c.N) {
        if (got != sentinel) {
          ADD_FAILURE() << Describe(c, isa) << ": padding C[" << i << "," << j << "] overwritten with " << got;
          ++bad;
        }
        continue;
      }
      double ref = 0, mag = 0;
      for (int64_t k = 0; k < c.K; ++k) {
        ref += a_at(i, k) * b_at(k, j);
        mag += std::fabs(a_at(i, k) * b_at(k, j));
      }
      ref *= c.alpha;
      mag *= std::fabs(c.alpha);
      if (c.beta != 0.f) {
        ref += static_cast<double>(c.beta) * C0[i * ldc + j];
        mag += std::fabs(static_cast<double>(c.beta) * C0[i * ldc + j]);
      }
      const double tol = 2e-7 * (static_cast<double>(c.K) + 4) * mag + 1e-30;
      if (!(std::fabs(got - ref) <= tol)) {
        ADD_FAILURE() << Describe(c, isa) << " via " << static_cast<int>(via) << ": C[" << i << "," << j
                      << "] = " << got << ", expected " << ref << " (tolerance " << tol << ")";
        ++bad;
      }
    }
  }
}

std::vector<Case> Cases() {
  const int64_t sizes[] = {1, 2, 7, 31, 33, 100, 257};
  std::vector<Case> cases;
  std::mt19937 rng(7);
  // Every M and N against a few K, each with its own trans flags and scalars.
  const float alphas[] = {1.f, 0.5f, -1.5f, 1.f};
  const float betas[] = {0.f, 0.f, 0.25f, 1.f};
  int v = 0;
  for (int64_t M : sizes)
    for (int64_t N : sizes)
      for (int64_t K : {int64_t{1}, int64_t{33}, int64_t{300}}) {
        if (M * N * K > 257 * 257 * 33) continue;
        cases.push_back({M, N, K, (v & 1) != 0, (v & 2) != 0, alphas[v % 4], betas[(v / 4) % 4], (v % 3) * 3});
        ++v;
      }
  // Deep K crosses several KC blocks (beta applied once, then accumulation).
  for (bool ta : {false, true})
    for (bool tb : {false, true}) {
      cases.push_back({33, 47, 777, ta, tb, 1.f, 0.f, 5});
      cases.push_back({13, 129, 600, ta, tb, 0.75f, -0.5f, 0});
    }
  // Several MC / NC blocks.
  cases.push_back({400, 1100, 40, false, false, 1.f, 0.f, 1});
  cases.push_back({1, 2100, 520, false, false, 1.f, 1.f, 0});
  return cases;
}

class SgemmTest : public ::testing::TestWithParam<int> {
 protected:
  void TearDown() override { sgemm::SetIsaForTesting(fastmath::BestIsa()); }
};

// Every case on one ISA path, on one thread and on a pool of 3, through
// BlasGemm and through sgemm::Gemm with and without pre-packed operands.
TEST_P(SgemmTest, MatchesDoubleReference) {
  const auto want = static_cast<fastmath::Isa>(GetParam());
  const fastmath::Isa isa = sgemm::SetIsaForTesting(want);
  if (isa != want) GTEST_SKIP() << "this CPU (or ONYX_CPU_ISA) does not run " << fastmath::IsaName(want);
  ThreadPool pool(3);
  uint32_t seed = 1;
  for (const Case& c : Cases()) {
    for (ThreadPool* p : {static_cast<ThreadPool*>(nullptr), &pool}) {
      Check(c, Via::kBlasGemm, p, isa, seed++);
      if (!sgemm::Available()) continue;
      Check(c, Via::kOwn, p, isa, seed++);
      Check(c, Via::kPackedA, p, isa, seed++);
      Check(c, Via::kPackedB, p, isa, seed++);
      Check(c, Via::kPackedBoth, p, isa, seed++);
    }
    if (HasFailure()) return;
  }
}

INSTANTIATE_TEST_SUITE_P(Isas, SgemmTest, ::testing::Values(0, 1, 2), [](const ::testing::TestParamInfo<int>& i) {
  return std::string(fastmath::IsaName(static_cast<fastmath::Isa>(i.param)));
});

TEST(Sgemm, BaselineHasNoKernelAndBlasGemmStillWorks) {
  sgemm::SetIsaForTesting(fastmath::Isa::kBaseline);
  EXPECT_FALSE(sgemm::Available());
  EXPECT_TRUE(sgemm::PackB(false, 4, 4, std::vector<float>(16, 1.f).data(), 4).empty());
  Check({5, 40, 9, false, true, 1.f, 0.f, 2}, Via::kBlasGemm, nullptr, fastmath::Isa::kBaseline, 3);
  sgemm::SetIsaForTesting(fastmath::BestIsa());
}

// An operand packed for one path is ignored (the raw one is read) on another,
// and one of the wrong shape is never used.
TEST(Sgemm, PackedOperandOfAnotherPathOrShapeIsIgnored) {
  if (fastmath::BestIsa() != fastmath::Isa::kAvx512) GTEST_SKIP() << "needs AVX-512 and AVX2";
  const int64_t M = 20, N = 70, K = 50;
  std::vector<float> A(M * K), B(K * N), C(M * N), R(M * N);
  std::mt19937 rng(5);
  std::uniform_real_distribution<float> dist(-1.f, 1.f);
  for (auto& v : A) v = dist(rng);
  for (auto& v : B) v = dist(rng);
  sgemm::SetIsaForTesting(fastmath::Isa::kAvx2);
  const sgemm::Packed pb2 = sgemm::PackB(false, K, N, B.data(), N);
  sgemm::SetIsaForTesting(fastmath::Isa::kAvx512);
  EXPECT_FALSE(sgemm::Usable(&pb2, false, N, K));
  const sgemm::Packed wrong = sgemm::PackB(false, K, N - 1, B.data(), N);
  EXPECT_FALSE(sgemm::Usable(&wrong, false, N, K));
  EXPECT_FALSE(sgemm::Usable(&wrong, true, N - 1, K));
  sgemm::Gemm(false, false, M, N, K, 1.f, A.data(), K, B.data(), N, 0.f, R.data(), N, nullptr);
  sgemm::Gemm(false, false, M, N, K, 1.f, A.data(), K, B.data(), N, 0.f, C.data(), N, nullptr, nullptr, &pb2);
  EXPECT_EQ(C, R);
  sgemm::Gemm(false, false, M, N, K, 1.f, A.data(), K, B.data(), N, 0.f, C.data(), N, nullptr, &wrong, &wrong);
  EXPECT_EQ(C, R);
  // Packed bytes: whole 32-column panels of K rows.
  const sgemm::Packed pb = sgemm::PackB(false, K, N, B.data(), N);
  EXPECT_EQ(pb.bytes(), static_cast<size_t>((N + 31) / 32 * 32 * K * 4 + 63) / 64 * 64);
  sgemm::SetIsaForTesting(fastmath::BestIsa());
}

}  // namespace
}  // namespace onyx
