#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <vector>

#include "providers/cpu/common/fast_math.h"

namespace onyx {
namespace {

TEST(FastMath, ExpTanhErfMatchLibm) {
  double max_exp_rel = 0, max_tanh = 0, max_erf = 0;
  for (double v = -87.0; v < 88.7; v += 0.00137) {
    float x = static_cast<float>(v);
    double e = std::exp(static_cast<double>(x));
    max_exp_rel = std::max(max_exp_rel, std::fabs(fastmath::Exp(x) - e) / e);
    max_tanh = std::max(max_tanh, std::fabs(fastmath::Tanh(x) - std::tanh(static_cast<double>(x))));
    max_erf = std::max(max_erf, std::fabs(fastmath::Erf(x) - std::erf(static_cast<double>(x))));
  }
  EXPECT_LT(max_exp_rel, 3e-7);
  EXPECT_LT(max_tanh, 3e-7);
  EXPECT_LT(max_erf, 3e-7);
}

TEST(FastMath, Limits) {
  EXPECT_EQ(fastmath::Exp(1000.f), std::numeric_limits<float>::infinity());
  EXPECT_LT(fastmath::Exp(-1000.f), 1.2e-38f);  // clamped to stay a normal float
  EXPECT_EQ(fastmath::Exp(0.f), 1.f);
  EXPECT_EQ(fastmath::Tanh(50.f), 1.f);
  EXPECT_EQ(fastmath::Tanh(-50.f), -1.f);
  EXPECT_EQ(fastmath::Erf(10.f), 1.f);
  EXPECT_EQ(fastmath::Erf(0.f), 0.f);
  EXPECT_FLOAT_EQ(fastmath::Tanh(1e-6f), 1e-6f);
}

// Every SIMD variant the machine supports must agree with the scalar forms,
// including at the tail of an array that is not a multiple of the width.
TEST(FastMath, ArrayFormsMatchScalarOnEveryIsa) {
  std::vector<float> x;
  for (double v = -95.0; v < 95.0; v += 0.0173) x.push_back(static_cast<float>(v));
  x.push_back(0.f);
  x.push_back(-0.f);
  x.push_back(1e-30f);
  x.push_back(std::numeric_limits<float>::infinity());
  x.push_back(-std::numeric_limits<float>::infinity());
  x.push_back(3.f);  // odd length: the last few go through the tail path
  const int64_t n = static_cast<int64_t>(x.size());
  std::vector<float> y(x.size());
  const fastmath::Isa best = fastmath::BestIsa();
  for (int i = 0; i <= static_cast<int>(best); ++i) {
    const fastmath::Isa isa = fastmath::SetIsaForTesting(static_cast<fastmath::Isa>(i));
    ASSERT_EQ(static_cast<int>(isa), i);
    SCOPED_TRACE(i);
    fastmath::ExpArray(x.data(), y.data(), n);
    for (int64_t k = 0; k < n; ++k) {
      const float ref = fastmath::Exp(x[k]);
      if (std::isinf(ref)) EXPECT_EQ(y[k], ref) << x[k];
      else EXPECT_NEAR(y[k], ref, 4e-7 * ref + 1e-37) << x[k];
    }
    fastmath::ErfArray(x.data(), y.data(), n);
    for (int64_t k = 0; k < n; ++k) EXPECT_NEAR(y[k], std::erf(static_cast<double>(x[k])), 3e-7) << x[k];
    fastmath::TanhArray(x.data(), y.data(), n);
    for (int64_t k = 0; k < n; ++k) EXPECT_NEAR(y[k], std::tanh(static_cast<double>(x[k])), 3e-7) << x[k];
    fastmath::GeluArray(x.data(), y.data(), 1001);
    for (int64_t k = 0; k < 1001; ++k) {
      const double v = x[k], ref = 0.5 * v * (1 + std::erf(v / std::sqrt(2.0)));
      EXPECT_NEAR(y[k], ref, 1e-6 * std::fabs(v) + 1e-30) << v;
    }
    // In place, and NaN passes through.
    std::vector<float> z = {std::nanf(""), 0.5f, -0.5f};
    fastmath::ErfArray(z.data(), z.data(), 3);
    EXPECT_TRUE(std::isnan(z[0]));
    EXPECT_NEAR(z[1], std::erf(0.5), 3e-7);
    EXPECT_NEAR(z[2], -std::erf(0.5), 3e-7);
    std::vector<float> w = {std::nanf("")};
    fastmath::ExpArray(w.data(), w.data(), 1);
    EXPECT_TRUE(std::isnan(w[0]));

    // Softmax helpers: max, then exp(x - max) with its sum.
    for (int64_t len : {1, 3, 16, 37, 128}) {
      std::vector<float> v(static_cast<size_t>(len)), e(static_cast<size_t>(len));
      for (int64_t k = 0; k < len; ++k) v[k] = static_cast<float>(std::sin(0.7 * k) * 10);
      float m = v[0];
      for (float a : v) m = std::max(m, a);
      EXPECT_EQ(fastmath::MaxArray(v.data(), len), m);
      double sum = 0;
      for (float a : v) sum += std::exp(static_cast<double>(a) - m);
      EXPECT_NEAR(fastmath::ExpShiftSumArray(v.data(), e.data(), len, m), sum, 1e-6 * sum);
      for (int64_t k = 0; k < len; ++k) EXPECT_NEAR(e[k], std::exp(static_cast<double>(v[k]) - m), 1e-6);
      // The whole softmax in one call, out of place and in place.
      fastmath::SoftmaxArray(v.data(), e.data(), len);
      for (int64_t k = 0; k < len; ++k) EXPECT_NEAR(e[k], std::exp(static_cast<double>(v[k]) - m) / sum, 1e-6);
      fastmath::SoftmaxArray(v.data(), v.data(), len);
      for (int64_t k = 0; k < len; ++k) EXPECT_EQ(v[k], e[k]);
    }
    // Masked attention scores: far-below-max terms become exact zeros, not
    // denormals once scaled by 1/sum.
    std::vector<float> masked(19, -3.4e38f), em(19);
    masked[0] = 0.5f;
    masked[7] = -86.f;
    EXPECT_NEAR(fastmath::ExpShiftSumArray(masked.data(), em.data(), 19, 0.5f), 1.0 + std::exp(-86.5), 1e-7);
    EXPECT_EQ(em[0], 1.f);
    EXPECT_NEAR(em[7], std::exp(-86.5), 1e-44);
    for (int k : {1, 5, 18}) EXPECT_EQ(em[k], 0.f);
    fastmath::SoftmaxArray(masked.data(), em.data(), 19);
    EXPECT_NEAR(em[0], 1.f, 1e-7);
    for (int k : {1, 5, 18}) EXPECT_EQ(em[k], 0.f);
    std::vector<float> nan_first = {std::nanf(""), 1.f, 2.f};
    EXPECT_TRUE(std::isnan(fastmath::MaxArray(nan_first.data(), 3)));
    std::vector<float> nan_later = {1.f, std::nanf(""), 2.f};
    EXPECT_EQ(fastmath::MaxArray(nan_later.data(), 3), 2.f);

    // Bias activations: Gelu and FastGelu of x + b, b optional, over the
    // range (and a tail) against double formulas.
    std::vector<float> b(1001);
    for (int64_t k = 0; k < 1001; ++k) b[k] = static_cast<float>(std::cos(0.3 * k));
    for (const float* bias : {static_cast<const float*>(nullptr), static_cast<const float*>(b.data())}) {
      const int64_t len = 1001;
      std::vector<float> xs(static_cast<size_t>(len));
      for (int64_t k = 0; k < len; ++k) xs[k] = static_cast<float>(std::sin(0.01 * k) * 12);
      fastmath::BiasGeluArray(xs.data(), bias, y.data(), len);
      for (int64_t k = 0; k < len; ++k) {
        const double v = static_cast<double>(xs[k]) + (bias ? bias[k] : 0.f);
        EXPECT_NEAR(y[k], 0.5 * v * (1 + std::erf(v / std::sqrt(2.0))), 1e-6 * std::fabs(v) + 1e-30) << v;
      }
      fastmath::FastGeluArray(xs.data(), bias, y.data(), len);
      for (int64_t k = 0; k < len; ++k) {
        const double v = static_cast<double>(xs[k]) + (bias ? bias[k] : 0.f);
        const double ref = 0.5 * v * (1 + std::tanh(0.7978845608028654 * (v + 0.044715 * v * v * v)));
        EXPECT_NEAR(y[k], ref, 1e-6 * std::fabs(v) + 1e-30) << v;
      }
    }
    std::vector<float> big = {-1000.f, 1000.f, std::nanf("")};
    fastmath::FastGeluArray(big.data(), nullptr, big.data(), 3);
    EXPECT_EQ(big[0], -0.f);
    EXPECT_EQ(big[1], 1000.f);
    EXPECT_TRUE(std::isnan(big[2]));

    // Normalization helpers: sums in SIMD partial sums, then (x-mean)*inv*g+b.
    for (int64_t len : {0, 1, 7, 16, 63, 64, 65, 768, 1001}) {
      std::vector<float> v(static_cast<size_t>(len) + 1), g(v.size()), bb(v.size()), out(v.size());
      double sum = 0, sq = 0;
      for (int64_t k = 0; k < len; ++k) {
        v[k] = static_cast<float>(1000 + std::sin(1.3 * k) * 3);  // a large mean
        g[k] = static_cast<float>(0.5 + 0.001 * k);
        bb[k] = static_cast<float>(-0.25 * k);
        sum += v[k];
      }
      const double mean = len ? sum / len : 0;
      for (int64_t k = 0; k < len; ++k) sq += (v[k] - mean) * (v[k] - mean);
      EXPECT_NEAR(fastmath::SumArray(v.data(), len), sum, 1e-6 * sum + 1e-3) << len;
      EXPECT_NEAR(fastmath::SumSquaredDevArray(v.data(), len, static_cast<float>(mean)), sq, 1e-4 * sq + 1e-2) << len;
      const float inv = 0.7f;
      for (const float* bias : {static_cast<const float*>(nullptr), static_cast<const float*>(bb.data())}) {
        fastmath::NormalizeArray(v.data(), static_cast<float>(mean), inv, g.data(), bias, out.data(), len);
        for (int64_t k = 0; k < len; ++k)
          EXPECT_NEAR(out[k], (v[k] - mean) * inv * g[k] + (bias ? bias[k] : 0.0), 1e-3) << len << " " << k;
      }
    }
  }
  fastmath::SetIsaForTesting(best);
}

// The helpers a fused kernel uses round each step as the unfused graph's
// kernels do, on every ISA and at every tail length: LayerNormalization gives
// the bits of ReduceMean (SumArray), Sub, Pow 2 (x * x), ReduceMean, Add,
// Sqrt, Div, Mul, Add; Gelu those of Div by float(sqrt(2)), Erf (ErfArray),
// Add 1, Mul x, Mul 0.5. Without this an optimized int8 model drifts from
// its unoptimized self by quantization steps.
TEST(FastMath, FusedHelpersRoundStepByStepOnEveryIsa) {
  const fastmath::Isa best = fastmath::BestIsa();
  for (int i = 0; i <= static_cast<int>(best); ++i) {
    fastmath::SetIsaForTesting(static_cast<fastmath::Isa>(i));
    SCOPED_TRACE(fastmath::IsaName(static_cast<fastmath::Isa>(i)));
    for (int64_t len : {1, 5, 16, 33, 64, 100, 768}) {
      SCOPED_TRACE(len);
      std::vector<float> x(static_cast<size_t>(len)), g(x.size()), b(x.size()), d(x.size()), sq(x.size());
      for (int64_t k = 0; k < len; ++k) {
        x[k] = static_cast<float>(std::sin(0.77 * k + len) * 3.1 + 0.3);
        g[k] = static_cast<float>(0.9 + 0.013 * std::cos(0.5 * k));
        b[k] = static_cast<float>(0.01 * k - 0.2);
      }
      const float mean = fastmath::SumArray(x.data(), len) / static_cast<float>(len);
      for (int64_t k = 0; k < len; ++k) {
        d[k] = x[k] - mean;
        sq[k] = d[k] * d[k];
      }
      const float var_sum = fastmath::SumArray(sq.data(), len);
      ASSERT_EQ(fastmath::SumSquaredDevArray(x.data(), len, mean), var_sum);
      const float sd = std::sqrt(var_sum / static_cast<float>(len) + 1e-5f);
      std::vector<float> y(x.size()), want(x.size());
      // volatile: each product stored before the add, as separate kernels do.
      for (int64_t k = 0; k < len; ++k) {
        volatile float q = d[k] / sd;
        volatile float m = q * g[k];
        want[k] = m + b[k];
      }
      fastmath::NormalizeDivArray(x.data(), mean, sd, g.data(), b.data(), y.data(), len);
      for (int64_t k = 0; k < len; ++k) ASSERT_EQ(y[k], want[k]) << k;
      const float inv = 1.f / sd;
      for (int64_t k = 0; k < len; ++k) {
        volatile float q = d[k] * inv;
        volatile float m = q * g[k];
        want[k] = m + b[k];
      }
      fastmath::NormalizeArray(x.data(), mean, inv, g.data(), b.data(), y.data(), len);
      for (int64_t k = 0; k < len; ++k) ASSERT_EQ(y[k], want[k]) << k;

      std::vector<float> t(x.size());
      for (int64_t k = 0; k < len; ++k) t[k] = x[k] / 1.41421356237309504880f;
      fastmath::ErfArray(t.data(), t.data(), len);
      for (int64_t k = 0; k < len; ++k) {
        volatile float e1 = t[k] + 1.f;
        volatile float m = x[k] * e1;
        want[k] = m * 0.5f;
      }
      fastmath::GeluArray(x.data(), y.data(), len);
      for (int64_t k = 0; k < len; ++k) ASSERT_EQ(y[k], want[k]) << k;
    }
  }
  fastmath::SetIsaForTesting(best);
}

// Every length from 1 to 3 vectors of the widest ISA, so each path's masked
// tail (and its horizontal max and sum) meets every remainder: results match
// double formulas, and nothing past the end is read into a result or written.
TEST(FastMath, ReductionTailsOnEveryIsa) {
  const fastmath::Isa best = fastmath::BestIsa();
  const float guard = 12345.f;
  for (int i = 0; i <= static_cast<int>(best); ++i) {
    fastmath::SetIsaForTesting(static_cast<fastmath::Isa>(i));
    SCOPED_TRACE(fastmath::IsaName(static_cast<fastmath::Isa>(i)));
    for (int64_t len = 1; len <= 48; ++len) {
      SCOPED_TRACE(len);
      // Padded with a huge value: a tail that read past the end would see it
      // as the max, and one that wrote there would change it.
      std::vector<float> v(static_cast<size_t>(len) + 16, 1e30f), y(v.size(), guard), g(v.size(), guard);
      for (int64_t k = 0; k < len; ++k) {
        v[k] = static_cast<float>(std::sin(1.3 * k + len) * 8);
        g[k] = static_cast<float>(0.5 + 0.01 * k);
      }
      v[len / 2] = 9.5f;  // the max, wherever the tail starts
      double sum = 0, plain = 0, mean = 0, sq = 0;
      for (int64_t k = 0; k < len; ++k) {
        sum += std::exp(static_cast<double>(v[k]) - 9.5);
        plain += v[k];
      }
      mean = plain / static_cast<double>(len);
      for (int64_t k = 0; k < len; ++k) sq += (v[k] - mean) * (v[k] - mean);
      EXPECT_EQ(fastmath::MaxArray(v.data(), len), 9.5f);
      EXPECT_NEAR(fastmath::SumArray(v.data(), len), plain, 1e-5 * std::fabs(plain) + 1e-4);
      EXPECT_NEAR(fastmath::SumSquaredDevArray(v.data(), len, static_cast<float>(mean)), sq, 1e-5 * sq + 1e-4);
      EXPECT_NEAR(fastmath::ExpShiftSumArray(v.data(), y.data(), len, 9.5f), sum, 1e-6 * sum);
      fastmath::SoftmaxArray(v.data(), y.data(), len);
      for (int64_t k = 0; k < len; ++k) EXPECT_NEAR(y[k], std::exp(v[k] - 9.5) / sum, 1e-6);
      fastmath::LogSoftmaxArray(v.data(), y.data(), len);
      for (int64_t k = 0; k < len; ++k) EXPECT_NEAR(y[k], v[k] - 9.5 - std::log(sum), 2e-6);
      // In place, as the Softmax and LogSoftmax kernels may call them.
      std::vector<float> w(v), ref(y);
      fastmath::LogSoftmaxArray(w.data(), w.data(), len);
      for (int64_t k = 0; k < len; ++k) EXPECT_EQ(w[k], ref[k]);
      w = v;
      fastmath::SoftmaxArray(w.data(), w.data(), len);
      for (int64_t k = 0; k < len; ++k) EXPECT_NEAR(w[k], std::exp(v[k] - 9.5) / sum, 1e-6);
      fastmath::NormalizeArray(v.data(), 1.f, 0.5f, g.data(), g.data(), y.data(), len);
      for (int64_t k = 0; k < len; ++k) EXPECT_NEAR(y[k], (v[k] - 1.0) * 0.5 * g[k] + g[k], 1e-5);
      fastmath::ExpArray(v.data(), y.data(), len);
      for (int64_t k = 0; k < len; ++k) EXPECT_NEAR(y[k], std::exp(static_cast<double>(v[k])), 1e-6 * std::exp(v[k]));
      for (size_t k = static_cast<size_t>(len); k < y.size(); ++k) ASSERT_EQ(y[k], guard) << "written past the end";
      for (size_t k = static_cast<size_t>(len); k < w.size(); ++k) ASSERT_EQ(w[k], 1e30f) << "written past the end";
    }
  }
  fastmath::SetIsaForTesting(best);
}

}  // namespace
}  // namespace onyx
