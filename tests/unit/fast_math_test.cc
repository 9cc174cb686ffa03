#include <gtest/gtest.h>

#include <cmath>
#include <limits>

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

}  // namespace
}  // namespace onyx
