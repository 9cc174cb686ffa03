// The packed SGEMM (providers/cpu/math/sgemm.h) and BlasGemm's float path
// against a double-precision reference, on every ISA path this machine runs.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
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
  // Several row blocks over narrower column blocks (NC) and two K blocks,
  // beta accumulated: the large-product loop (GPT-2's LM head, shrunk).
  cases.push_back({200, 1100, 300, false, false, 1.f, 0.5f, 0});
  cases.push_back({1, 2100, 520, false, false, 1.f, 1.f, 0});
  // Several row blocks over one column block whose K blocks of a packed B
  // fit in L2 (GPT-2's MLP projection, shrunk), beta accumulated; and at
  // the largest width that does (768 columns at KC).
  cases.push_back({400, 700, 600, false, false, 1.f, 0.5f, 0});
  cases.push_back({250, 768, 500, true, true, -0.5f, 0.f, 3});
  // A transposed B packed by 8x8 register blocks: attention's scores
  // (Q x K^T, 128x128x64, alpha 1/8), and column and K counts off the
  // blocks (panels of 8k + 1..7 columns, K blocks of 8k + 1..7).
  cases.push_back({128, 128, 64, false, true, 0.125f, 0.f, 0});
  cases.push_back({37, 45, 71, false, true, 1.f, 0.5f, 2});
  cases.push_back({12, 70, 263, true, true, -1.f, 0.f, 1});
  // A packed by 8 values of K at a time (whole row panels), K off the 8s:
  // attention's probabilities x V, and 8k + 1..7 deep.
  cases.push_back({128, 64, 128, false, false, 1.f, 0.f, 0});
  cases.push_back({50, 33, 45, false, false, 1.f, 0.f, 1});
  // Every right edge of a tile (N mod NR: 1..W/2 EdgeColumns, past that a
  // half tile, past W a full vector beside a partial one; NR = 16 on AVX2,
  // 32 on AVX-512) under every row count of a tile (M mod MR), K odd and
  // across two K blocks: B read in place under a packed A (1x1 conv) and
  // packed, with alpha and beta (kept out of the registers during the k loop).
  for (int64_t N : {5, 9, 13, 16 + 7, 16 + 11, 32 + 5, 32 + 13, 32 + 20, 32 + 29})
    for (int64_t M : {3, 6, 13, 17, 23}) {
      const bool deep = (N + M) % 2 == 0;
      cases.push_back({M, N, deep ? 301 : 67, false, false, M % 2 ? 1.f : -0.75f, N % 3 ? 0.f : 0.5f, N % 2});
    }
  // The same edges under several groups of row tiles (MC) and two or three
  // K blocks: EdgeColumns runs per group and K block, beta on the first.
  for (int64_t N : {32 + 4, 3 * 32 + 16 + 1, 5})
    cases.push_back({400, N, N == 5 ? 700 : 301, false, false, 1.f, N == 5 ? 0.f : 0.5f, N % 2});
  // Rows over every column past L2 (several column blocks) while B fits:
  // each group of rows over every K block in turn, edge columns included.
  cases.push_back({400, 292, 301, false, false, 1.f, 0.5f, 1});
  cases.push_back({400, 288, 700, false, false, -1.f, 0.f, 0});
  // One row against a long transposed B (dot products, split over threads).
  cases.push_back({1, 2100, 519, false, true, 0.5f, 0.25f, 3});
  cases.push_back({1, 1031, 64, true, true, 1.f, 0.f, 0});
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

// Transpose on every path: whole 8x8 blocks, the row and column edges, and
// strides wider than the block (a padded scratch into a tight output).
TEST(Sgemm, TransposeOnEveryPath) {
  for (const fastmath::Isa want : {fastmath::Isa::kBaseline, fastmath::Isa::kAvx2, fastmath::Isa::kAvx512}) {
    if (sgemm::SetIsaForTesting(want) != want) continue;
    for (const int64_t rows : {1, 7, 8, 9, 49, 64})
      for (const int64_t cols : {1, 5, 8, 16, 37}) {
        const int64_t lds = cols + 3, ldd = rows + 1;
        std::vector<float> src(rows * lds), dst(cols * ldd, -7.f);
        for (size_t i = 0; i < src.size(); ++i) src[i] = static_cast<float>(i);
        sgemm::Transpose(rows, cols, src.data(), lds, dst.data(), ldd);
        for (int64_t c = 0; c < cols; ++c) {
          for (int64_t r = 0; r < rows; ++r)
            ASSERT_EQ(dst[c * ldd + r], src[r * lds + c]) << fastmath::IsaName(want) << " " << rows << "x" << cols
                                                          << " at (" << r << ", " << c << ")";
          EXPECT_EQ(dst[c * ldd + rows], -7.f) << "wrote past row " << c << " of the output";
        }
      }
  }
  sgemm::SetIsaForTesting(fastmath::BestIsa());
}

// Gemm with a transposed result (Epilogue::t_out, Conv's transposed product
// on small images): each task moves its block of C into t_out with bias per
// row of t_out, Z and a clamp; B pre-packed and not, inline and on a pool
// (the tasks split rows or columns), on every path.
TEST(Sgemm, TransposedResultOnEveryPath) {
  ThreadPool pool(3);
  std::mt19937 rng(7);
  std::uniform_real_distribution<float> u(-1.f, 1.f);
  for (const fastmath::Isa want : {fastmath::Isa::kAvx2, fastmath::Isa::kAvx512}) {
    if (sgemm::SetIsaForTesting(want) != want) continue;
    for (const auto& [M, N, K] : {std::array<int64_t, 3>{49, 96, 64}, {13, 40, 300}, {200, 70, 33}}) {
      std::vector<float> a(M * K), b(K * N), bias(N), z(N * M);
      for (auto* v : {&a, &b, &bias, &z})
        for (float& x : *v) x = u(rng);
      const sgemm::Packed pb = sgemm::PackB(false, K, N, b.data(), N);
      for (ThreadPool* p : {static_cast<ThreadPool*>(nullptr), &pool}) {
        for (const sgemm::Packed* packed : {&pb, static_cast<const sgemm::Packed*>(nullptr)}) {
          const int64_t ldc = N + 5, ldt = M + 3;
          std::vector<float> c(M * ldc), t(N * ldt, -9.f);
          sgemm::Epilogue ep;
          ep.bias = bias.data();
          ep.z = z.data();
          ep.ldz = M;
          ep.clamp = true;
          ep.lo = -0.5f;
          ep.hi = 0.75f;
          ep.t_out = t.data();
          ep.ldt = ldt;
          sgemm::Gemm(false, false, M, N, K, 1.f, a.data(), K, b.data(), N, 0.f, c.data(), ldc, p, nullptr, packed,
                      nullptr, &ep);
          for (int64_t j = 0; j < N; ++j) {
            for (int64_t i = 0; i < M; ++i) {
              double acc = 0;
              for (int64_t k = 0; k < K; ++k) acc += static_cast<double>(a[i * K + k]) * b[k * N + j];
              const double want_v = std::min(std::max(acc + bias[j] + z[j * M + i], -0.5), 0.75);
              ASSERT_NEAR(t[j * ldt + i], want_v, 1e-4) << fastmath::IsaName(want) << " " << M << "x" << N << "x"
                                                        << K << " at (" << j << ", " << i << ")";
            }
            EXPECT_EQ(t[j * ldt + M], -9.f) << "wrote past row " << j << " of the output";
          }
        }
      }
    }
  }
  sgemm::SetIsaForTesting(fastmath::BestIsa());
}

// Transpose with an epilogue (Conv's transposed product finishing Y): bias
// per output row, Z shaped like the output (its own row stride), a clamp,
// on the whole blocks and the edges of every path.
TEST(Sgemm, TransposeEpilogueOnEveryPath) {
  for (const fastmath::Isa want : {fastmath::Isa::kBaseline, fastmath::Isa::kAvx2, fastmath::Isa::kAvx512}) {
    if (sgemm::SetIsaForTesting(want) != want) continue;
    for (const int64_t rows : {1, 9, 49})
      for (const int64_t cols : {3, 8, 37}) {
        const int64_t lds = cols + 3, ldd = rows + 1, ldz = rows + 2;
        std::vector<float> src(rows * lds), dst(cols * ldd, -7.f), bias(cols), z(cols * ldz);
        for (size_t i = 0; i < src.size(); ++i) src[i] = static_cast<float>(i % 23) - 11.f;
        for (size_t i = 0; i < bias.size(); ++i) bias[i] = static_cast<float>(i % 5) - 2.f;
        for (size_t i = 0; i < z.size(); ++i) z[i] = static_cast<float>(i % 7) * 0.5f - 1.f;
        sgemm::Epilogue ep;
        ep.bias = bias.data();
        ep.z = z.data();
        ep.ldz = ldz;
        ep.clamp = true;
        ep.lo = -3.f;
        ep.hi = 6.f;
        sgemm::Transpose(rows, cols, src.data(), lds, dst.data(), ldd, &ep);
        for (int64_t c = 0; c < cols; ++c) {
          for (int64_t r = 0; r < rows; ++r) {
            const float want_v = std::min(std::max(src[r * lds + c] + bias[c] + z[c * ldz + r], -3.f), 6.f);
            ASSERT_EQ(dst[c * ldd + r], want_v) << fastmath::IsaName(want) << " " << rows << "x" << cols << " at ("
                                                << r << ", " << c << ")";
          }
          EXPECT_EQ(dst[c * ldd + rows], -7.f) << "wrote past row " << c << " of the output";
        }
      }
  }
  sgemm::SetIsaForTesting(fastmath::BestIsa());
}

}  // namespace
}  // namespace onyx

namespace onyx {
namespace {

// The im2col matrix of `s`, [C*KH*KW, OH*OW], written out.
std::vector<double> Im2ColReference(const sgemm::Im2Col2D& s) {
  const int64_t K = s.C * s.KH * s.KW, N = s.OH * s.OW;
  std::vector<double> m(static_cast<size_t>(K * N), 0.0);
  for (int64_t c = 0; c < s.C; ++c)
    for (int64_t kh = 0; kh < s.KH; ++kh)
      for (int64_t kw = 0; kw < s.KW; ++kw)
        for (int64_t oh = 0; oh < s.OH; ++oh)
          for (int64_t ow = 0; ow < s.OW; ++ow) {
            const int64_t ih = oh * s.sh - s.ph + kh * s.dh, iw = ow * s.sw - s.pw + kw * s.dw;
            if (ih >= 0 && ih < s.H && iw >= 0 && iw < s.W)
              m[((c * s.KH + kh) * s.KW + kw) * N + oh * s.OW + ow] = s.x[(c * s.H + ih) * s.W + iw];
          }
  return m;
}

// Gemm with the im2col matrix as B (C = W x im2col) or, transposed, as A
// (C^T = im2col^T x W^T), with the epilogue (bias per row of C, Z, clamp),
// on every ISA path, against a double reference.
TEST(Sgemm, Im2ColOperandAndEpilogueMatchReference) {
  struct Geo {
    int64_t C, H, W, KH, KW, sh, sw, ph, pw, dh, dw, M;
  };
  const std::vector<Geo> geos = {
      {3, 9, 11, 3, 3, 1, 1, 1, 1, 1, 1, 13},   {16, 14, 14, 3, 3, 1, 1, 1, 1, 1, 1, 40},
      {5, 23, 40, 3, 3, 2, 2, 1, 1, 1, 1, 7},   {4, 17, 19, 5, 3, 3, 2, 2, 1, 2, 1, 25},
      {2, 30, 33, 7, 7, 2, 2, 3, 3, 1, 1, 64},  {7, 1, 50, 1, 5, 1, 3, 0, 2, 1, 2, 9},
      {300, 4, 4, 3, 3, 1, 1, 1, 1, 1, 1, 20},  {8, 7, 7, 1, 1, 1, 1, 0, 0, 1, 1, 33}};
  ThreadPool pool(2);
  for (int isa_i = 2; isa_i >= 0; --isa_i) {
    const auto want = static_cast<fastmath::Isa>(isa_i);
    if (sgemm::SetIsaForTesting(want) != want || !sgemm::Available()) continue;
    uint32_t seed = 7;
    for (const Geo& gm : geos) {
      sgemm::Im2Col2D s;
      s.C = gm.C, s.H = gm.H, s.W = gm.W, s.KH = gm.KH, s.KW = gm.KW, s.sh = gm.sh, s.sw = gm.sw;
      s.ph = gm.ph, s.pw = gm.pw, s.dh = gm.dh, s.dw = gm.dw;
      s.OH = (gm.H + 2 * gm.ph - (gm.KH - 1) * gm.dh - 1) / gm.sh + 1;
      s.OW = (gm.W + 2 * gm.pw - (gm.KW - 1) * gm.dw - 1) / gm.sw + 1;
      const int64_t K = s.C * s.KH * s.KW, N = s.OH * s.OW, M = gm.M;
      std::mt19937 rng(seed++);
      std::uniform_real_distribution<float> dist(-1.f, 1.f);
      std::vector<float> x(static_cast<size_t>(s.C * s.H * s.W)), w(static_cast<size_t>(M * K)), bias(M),
          z(static_cast<size_t>(M * N));
      for (auto* v : {&x, &w, &bias, &z})
        for (auto& e : *v) e = dist(rng);
      s.x = x.data();
      const std::vector<double> col = Im2ColReference(s);
      std::vector<double> ref(static_cast<size_t>(M * N)), mag(static_cast<size_t>(M * N));
      for (int64_t m = 0; m < M; ++m)
        for (int64_t j = 0; j < N; ++j) {
          double acc = 0.0, a = 0.0;
          for (int64_t k = 0; k < K; ++k) {
            acc += static_cast<double>(w[m * K + k]) * col[k * N + j];
            a += std::fabs(static_cast<double>(w[m * K + k]) * col[k * N + j]);
          }
          ref[m * N + j] = acc;
          mag[m * N + j] = a;
        }
      const sgemm::Packed pw = sgemm::PackA(false, M, K, w.data(), K);
      const sgemm::Packed pwt = sgemm::PackB(true, K, M, w.data(), K);
      for (ThreadPool* p : {static_cast<ThreadPool*>(nullptr), &pool}) {
        // C = W x im2col + bias + Z, clamped to [-0.5, 0.75]; W packed and not.
        for (const sgemm::Packed* pa : {&pw, static_cast<const sgemm::Packed*>(nullptr)}) {
          std::vector<float> c(static_cast<size_t>(M * N), std::numeric_limits<float>::quiet_NaN());
          sgemm::Epilogue ep;
          ep.bias = bias.data();
          ep.z = z.data();
          ep.ldz = N;
          ep.clamp = true;
          ep.lo = -0.5f;
          ep.hi = 0.75f;
          sgemm::Gemm(false, false, M, N, K, 1.f, w.data(), K, nullptr, N, 0.f, c.data(), N, p, pa, nullptr, &s, &ep);
          for (int64_t i = 0; i < M * N; ++i) {
            const double want_v = std::min(0.75, std::max(-0.5, ref[i] + bias[i / N] + z[i]));
            ASSERT_NEAR(c[i], want_v, 1e-5 * (mag[i] + 3.0))
                << fastmath::IsaName(want) << " C=" << s.C << " M=" << M << " at " << i;
          }
        }
        // C^T = im2col^T x W^T, W^T packed and not.
        sgemm::Im2Col2D st = s;
        st.transposed = true;
        for (const sgemm::Packed* pb : {&pwt, static_cast<const sgemm::Packed*>(nullptr)}) {
          std::vector<float> ct(static_cast<size_t>(N * (M + 3)), std::numeric_limits<float>::quiet_NaN());
          sgemm::Gemm(false, true, N, M, K, 1.f, nullptr, N, w.data(), K, 0.f, ct.data(), M + 3, p, nullptr, pb, &st);
          for (int64_t m = 0; m < M; ++m)
            for (int64_t j = 0; j < N; ++j)
              ASSERT_NEAR(ct[j * (M + 3) + m], ref[m * N + j], 1e-5 * (mag[m * N + j] + 1.0))
                  << fastmath::IsaName(want) << " transposed C=" << s.C << " M=" << M << " at " << m << "," << j;
        }
      }
    }
  }
  sgemm::SetIsaForTesting(fastmath::BestIsa());
}

}  // namespace
}  // namespace onyx
