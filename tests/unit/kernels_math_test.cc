#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "tests/unit/kernel_test_util.h"

namespace onyx {
namespace {

using testing::MakeTensor;
using testing::RunCpuKernel;
using testing::ToVector;
using testing::MakeNode;
using testing::Run1;
using testing::SetFloat;
using testing::SetInt;
using testing::SetInts;

TEST(KernelsMathTest, AddSameShapeAndBias) {
  Tensor a = MakeTensor<float>({2, 3}, {1, 2, 3, 4, 5, 6});
  Tensor b = MakeTensor<float>({3}, {10, 20, 30});
  Tensor y = Run1(MakeNode("Add", 14), {&a, &b});
  EXPECT_EQ(y.dims(), (Dims{2, 3}));
  EXPECT_EQ(ToVector<float>(y), (std::vector<float>{11, 22, 33, 14, 25, 36}));
  Tensor y2 = Run1(MakeNode("Add", 14), {&a, &a});
  EXPECT_EQ(ToVector<float>(y2), (std::vector<float>{2, 4, 6, 8, 10, 12}));
}

TEST(KernelsMathTest, BroadcastBothSidesAndMask) {
  // [2,1] op [1,3] -> [2,3]
  Tensor a = MakeTensor<float>({2, 1}, {1, 2});
  Tensor b = MakeTensor<float>({1, 3}, {10, 20, 30});
  Tensor y = Run1(MakeNode("Sub", 14), {&a, &b});
  EXPECT_EQ(y.dims(), (Dims{2, 3}));
  EXPECT_EQ(ToVector<float>(y), (std::vector<float>{-9, -19, -29, -8, -18, -28}));
  // Attention mask [B,1,1,S] against scores [B,H,S,S].
  const int B = 2, H = 3, S = 4;
  std::vector<float> sv(B * H * S * S), mv(B * S);
  for (size_t i = 0; i < sv.size(); ++i) sv[i] = static_cast<float>(i);
  for (size_t i = 0; i < mv.size(); ++i) mv[i] = static_cast<float>(100 * (i + 1));
  Tensor scores = MakeTensor<float>({B, H, S, S}, sv);
  Tensor mask = MakeTensor<float>({B, 1, 1, S}, mv);
  Tensor z = Run1(MakeNode("Add", 14), {&scores, &mask});
  auto zv = ToVector<float>(z);
  for (int b = 0; b < B; ++b)
    for (int h = 0; h < H; ++h)
      for (int i = 0; i < S; ++i)
        for (int j = 0; j < S; ++j) {
          int idx = ((b * H + h) * S + i) * S + j;
          ASSERT_EQ(zv[idx], sv[idx] + mv[b * S + j]);
        }
}

TEST(KernelsMathTest, BroadcastMismatchIsAnError) {
  Tensor a = MakeTensor<float>({2, 3}, {1, 2, 3, 4, 5, 6});
  Tensor b = MakeTensor<float>({4}, {1, 2, 3, 4});
  std::vector<std::unique_ptr<Tensor>> out;
  Status s = RunCpuKernel(MakeNode("Mul", 14), {&a, &b}, 1, &out);
  EXPECT_EQ(s.code(), ErrorCode::kInvalidArgument);
  EXPECT_NE(s.message().find("[2,3]"), std::string::npos) << s.message();
  EXPECT_NE(s.message().find("[4]"), std::string::npos) << s.message();
}

TEST(KernelsMathTest, IntegerDivTruncatesAndZeroIsAnError) {
  Tensor a = MakeTensor<int32_t>({4}, {7, -7, 7, -7});
  Tensor b = MakeTensor<int32_t>({4}, {2, 2, -2, -2});
  Tensor y = Run1(MakeNode("Div", 14), {&a, &b});
  EXPECT_EQ(ToVector<int32_t>(y), (std::vector<int32_t>{3, -3, -3, 3}));
  Tensor z = MakeTensor<int32_t>({1}, {0});
  std::vector<std::unique_ptr<Tensor>> out;
  Status s = RunCpuKernel(MakeNode("Div", 14), {&a, &z}, 1, &out);
  EXPECT_EQ(s.code(), ErrorCode::kInvalidArgument);
}

TEST(KernelsMathTest, ModSignFollowsDivisorUnlessFmod) {
  Tensor a = MakeTensor<int64_t>({4}, {7, -7, 7, -7});
  Tensor b = MakeTensor<int64_t>({4}, {3, 3, -3, -3});
  Tensor y = Run1(MakeNode("Mod", 13), {&a, &b});
  EXPECT_EQ(ToVector<int64_t>(y), (std::vector<int64_t>{1, 2, -2, -1}));
  Node n = MakeNode("Mod", 13);
  SetInt(n, "fmod", 1);
  Tensor fa = MakeTensor<float>({2}, {7.5f, -7.5f});
  Tensor fb = MakeTensor<float>({1}, {2.f});
  Tensor z = Run1(n, {&fa, &fb});
  EXPECT_EQ(ToVector<float>(z), (std::vector<float>{1.5f, -1.5f}));
}

TEST(KernelsMathTest, PowFastPathsAndMixedTypes) {
  Tensor x = MakeTensor<float>({3}, {1, 2, 9});
  Tensor two = MakeTensor<float>({}, {2.f});
  Tensor half = MakeTensor<float>({}, {0.5f});
  EXPECT_EQ(ToVector<float>(Run1(MakeNode("Pow", 15), {&x, &two})), (std::vector<float>{1, 4, 81}));
  EXPECT_EQ(ToVector<float>(Run1(MakeNode("Pow", 15), {&x, &half})), (std::vector<float>{1, std::sqrt(2.f), 3}));
  Tensor ie = MakeTensor<int64_t>({3}, {3, 2, 0});
  EXPECT_EQ(ToVector<float>(Run1(MakeNode("Pow", 15), {&x, &ie})), (std::vector<float>{1, 4, 1}));
  Tensor xi = MakeTensor<int32_t>({2}, {3, -2});
  Tensor e3 = MakeTensor<int32_t>({}, {3});
  EXPECT_EQ(ToVector<int32_t>(Run1(MakeNode("Pow", 15), {&xi, &e3})), (std::vector<int32_t>{27, -8}));
}

TEST(KernelsMathTest, ComparisonsAndLogic) {
  Tensor a = MakeTensor<int64_t>({3}, {1, 2, 3});
  Tensor b = MakeTensor<int64_t>({}, {2});
  Tensor eq = Run1(MakeNode("Equal", 13), {&a, &b});
  EXPECT_EQ(eq.type(), ElemType::kBool);
  EXPECT_EQ(ToVector<bool>(eq), (std::vector<bool>{false, true, false}));
  EXPECT_EQ(ToVector<bool>(Run1(MakeNode("Greater", 13), {&a, &b})), (std::vector<bool>{false, false, true}));
  EXPECT_EQ(ToVector<bool>(Run1(MakeNode("LessOrEqual", 16), {&a, &b})), (std::vector<bool>{true, true, false}));
  Tensor p = MakeTensor<bool>({4}, {true, true, false, false});
  Tensor q = MakeTensor<bool>({4}, {true, false, true, false});
  EXPECT_EQ(ToVector<bool>(Run1(MakeNode("Xor", 7), {&p, &q})), (std::vector<bool>{false, true, true, false}));
  EXPECT_EQ(ToVector<bool>(Run1(MakeNode("And", 7), {&p, &q})), (std::vector<bool>{true, false, false, false}));
}

TEST(KernelsMathTest, VariadicMaxSumMean) {
  Tensor a = MakeTensor<float>({2, 2}, {1, 5, 3, 0});
  Tensor b = MakeTensor<float>({2}, {2, 2});
  Tensor c = MakeTensor<float>({}, {4});
  EXPECT_EQ(ToVector<float>(Run1(MakeNode("Max", 13), {&a, &b, &c})), (std::vector<float>{4, 5, 4, 4}));
  EXPECT_EQ(ToVector<float>(Run1(MakeNode("Sum", 13), {&a, &b, &c})), (std::vector<float>{7, 11, 9, 6}));
  EXPECT_EQ(ToVector<float>(Run1(MakeNode("Mean", 13), {&a, &b})), (std::vector<float>{1.5f, 3.5f, 2.5f, 1}));
  EXPECT_EQ(ToVector<float>(Run1(MakeNode("Min", 13), {&a})), (std::vector<float>{1, 5, 3, 0}));
}

TEST(KernelsMathTest, LegacyBroadcastAttribute) {
  Node n = MakeNode("Add", 6);
  SetInt(n, "broadcast", 1);
  SetInt(n, "axis", 1);
  Tensor a = MakeTensor<float>({2, 3, 2}, std::vector<float>(12, 1.f));
  Tensor b = MakeTensor<float>({3}, {10, 20, 30});
  auto y = ToVector<float>(Run1(n, {&a, &b}));
  EXPECT_EQ(y[0], 11);
  EXPECT_EQ(y[1], 11);
  EXPECT_EQ(y[2], 21);
  EXPECT_EQ(y[11], 31);
}

TEST(KernelsMathTest, UnaryOps) {
  Tensor x = MakeTensor<float>({4}, {-2, -0.5f, 0, 1.5f});
  EXPECT_EQ(ToVector<float>(Run1(MakeNode("Relu", 14), {&x})), (std::vector<float>{0, 0, 0, 1.5f}));
  auto erf = ToVector<float>(Run1(MakeNode("Erf", 13), {&x}));
  auto th = ToVector<float>(Run1(MakeNode("Tanh", 13), {&x}));
  auto sg = ToVector<float>(Run1(MakeNode("Sigmoid", 13), {&x}));
  for (int i = 0; i < 4; ++i) {
    float v = x.data<float>()[i];
    EXPECT_NEAR(erf[i], std::erf(v), 1e-6);
    EXPECT_NEAR(th[i], std::tanh(v), 1e-6);
    EXPECT_NEAR(sg[i], 1.f / (1.f + std::exp(-v)), 1e-6);
  }
  Node lr = MakeNode("LeakyRelu", 16);
  SetFloat(lr, "alpha", 0.1f);
  auto l = ToVector<float>(Run1(lr, {&x}));
  EXPECT_FLOAT_EQ(l[0], -0.2f);
  EXPECT_FLOAT_EQ(l[3], 1.5f);
  Tensor s = MakeTensor<float>({2}, {4, 9});
  EXPECT_EQ(ToVector<float>(Run1(MakeNode("Sqrt", 13), {&s})), (std::vector<float>{2, 3}));
  Tensor xi = MakeTensor<int32_t>({3}, {-3, 0, 3});
  EXPECT_EQ(ToVector<int32_t>(Run1(MakeNode("Abs", 13), {&xi})), (std::vector<int32_t>{3, 0, 3}));
  EXPECT_EQ(ToVector<int32_t>(Run1(MakeNode("Neg", 13), {&xi})), (std::vector<int32_t>{3, 0, -3}));
  Tensor b = MakeTensor<bool>({2}, {true, false});
  EXPECT_EQ(ToVector<bool>(Run1(MakeNode("Not", 1), {&b})), (std::vector<bool>{false, true}));
  Node g = MakeNode("Gelu", 20);
  auto gv = ToVector<float>(Run1(g, {&x}));
  EXPECT_NEAR(gv[3], 0.5f * 1.5f * (1 + std::erf(1.5f / std::sqrt(2.f))), 1e-6);
}

// Float Exp/Tanh/Erf/Gelu take the SIMD array path: a long odd-length input
// covers the vector body and the tail.
TEST(KernelsMathTest, UnaryFloatArrayPathsMatchLibm) {
  const int64_t n = 10007;
  std::vector<float> v(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) v[i] = static_cast<float>(-12.0 + 24.0 * i / n);
  Tensor x = MakeTensor<float>({n}, v);
  auto e = ToVector<float>(Run1(MakeNode("Exp", 13), {&x}));
  auto th = ToVector<float>(Run1(MakeNode("Tanh", 13), {&x}));
  auto erf = ToVector<float>(Run1(MakeNode("Erf", 13), {&x}));
  auto g = ToVector<float>(Run1(MakeNode("Gelu", 20), {&x}));
  for (int64_t i = 0; i < n; ++i) {
    const double d = v[i];
    EXPECT_NEAR(e[i], std::exp(d), 4e-7 * std::exp(d)) << d;
    EXPECT_NEAR(th[i], std::tanh(d), 3e-7) << d;
    EXPECT_NEAR(erf[i], std::erf(d), 3e-7) << d;
    EXPECT_NEAR(g[i], 0.5 * d * (1 + std::erf(d / std::sqrt(2.0))), 1e-6 * std::fabs(d) + 1e-12) << d;
  }
}

TEST(KernelsMathTest, ClipAttributeAndInputForms) {
  Tensor x = MakeTensor<float>({4}, {-2, 0, 3, 7});
  Node old = MakeNode("Clip", 6);
  SetFloat(old, "min", -1.f);
  SetFloat(old, "max", 5.f);
  EXPECT_EQ(ToVector<float>(Run1(old, {&x})), (std::vector<float>{-1, 0, 3, 5}));
  Tensor lo = MakeTensor<float>({}, {0.f});
  EXPECT_EQ(ToVector<float>(Run1(MakeNode("Clip", 13), {&x, &lo})), (std::vector<float>{0, 0, 3, 7}));
  Tensor hi = MakeTensor<float>({}, {2.f});
  EXPECT_EQ(ToVector<float>(Run1(MakeNode("Clip", 13), {&x, nullptr, &hi})), (std::vector<float>{-2, 0, 2, 2}));
  Tensor bad = MakeTensor<float>({2}, {0.f, 1.f});
  std::vector<std::unique_ptr<Tensor>> out;
  EXPECT_EQ(RunCpuKernel(MakeNode("Clip", 13), {&x, &bad}, 1, &out).code(), ErrorCode::kInvalidArgument);
}

TEST(KernelsMathTest, WhereBroadcasts) {
  Tensor c = MakeTensor<bool>({2, 1}, {true, false});
  Tensor x = MakeTensor<float>({}, {-1.f});
  Tensor y = MakeTensor<float>({2, 3}, {1, 2, 3, 4, 5, 6});
  Tensor o = Run1(MakeNode("Where", 16), {&c, &x, &y});
  EXPECT_EQ(o.dims(), (Dims{2, 3}));
  EXPECT_EQ(ToVector<float>(o), (std::vector<float>{-1, -1, -1, 4, 5, 6}));
}

TEST(KernelsMathTest, SoftmaxAxesAndStability) {
  Tensor x = MakeTensor<float>({2, 3}, {1, 2, 3, 1000, 1000, 1000});
  auto y = ToVector<float>(Run1(MakeNode("Softmax", 13), {&x}));
  float e1 = std::exp(-2.f), e2 = std::exp(-1.f), s = e1 + e2 + 1;
  EXPECT_NEAR(y[0], e1 / s, 1e-6);
  EXPECT_NEAR(y[2], 1 / s, 1e-6);
  EXPECT_NEAR(y[3], 1.f / 3, 1e-6);
  // axis 0 (non-last) in opset 13.
  Node n = MakeNode("Softmax", 13);
  SetInt(n, "axis", 0);
  Tensor x2 = MakeTensor<float>({2, 2}, {0, 1, 0, 3});
  auto y2 = ToVector<float>(Run1(n, {&x2}));
  EXPECT_NEAR(y2[0], 0.5f, 1e-6);
  EXPECT_NEAR(y2[1], 1 / (1 + std::exp(2.f)), 1e-6);
  EXPECT_NEAR(y2[3], 1 / (1 + std::exp(-2.f)), 1e-6);
  // opset 11 flattens from axis 1: [2, 2*2] rows.
  Tensor x3 = MakeTensor<float>({2, 2, 2}, {0, 0, 0, 0, 1, 1, 1, 1});
  auto y3 = ToVector<float>(Run1(MakeNode("Softmax", 11), {&x3}));
  for (float v : y3) EXPECT_NEAR(v, 0.25f, 1e-6);
  auto ls = ToVector<float>(Run1(MakeNode("LogSoftmax", 13), {&x}));
  EXPECT_NEAR(ls[2], -std::log(s), 1e-5);
}

// Attention rows: long rows (SIMD body plus tail) with BERT's additive mask
// (-3.4e38) must give exact zeros where masked, never denormals, and sum to 1.
TEST(KernelsMathTest, SoftmaxMaskedRowsHaveNoDenormals) {
  const int64_t rows = 3, n = 37;
  std::vector<float> v(static_cast<size_t>(rows * n));
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t i = 0; i < n; ++i)
      v[r * n + i] = i < n - 5 * r ? static_cast<float>(std::sin(0.3 * i + r)) * 4 : -3.4028235e38f;
  Tensor x = MakeTensor<float>({rows, n}, v);
  auto y = ToVector<float>(Run1(MakeNode("Softmax", 13), {&x}));
  for (int64_t r = 0; r < rows; ++r) {
    double m = -1e30, s = 0, total = 0;
    for (int64_t i = 0; i < n - 5 * r; ++i) m = std::max(m, static_cast<double>(v[r * n + i]));
    for (int64_t i = 0; i < n - 5 * r; ++i) s += std::exp(v[r * n + i] - m);
    for (int64_t i = 0; i < n; ++i) {
      const float got = y[r * n + i];
      EXPECT_TRUE(got == 0.f || std::fpclassify(got) == FP_NORMAL) << got;
      const double want = i < n - 5 * r ? std::exp(v[r * n + i] - m) / s : 0.0;
      EXPECT_NEAR(got, want, 1e-6) << r << "," << i;
      total += got;
    }
    EXPECT_NEAR(total, 1.0, 1e-5);
  }
}

// Random shapes against a naive per-element reference: covers the dim merging
// in BroadcastPlan (runs of broadcast and non-broadcast dims in any order).
TEST(KernelsMathTest, BroadcastMatchesNaiveReference) {
  uint32_t seed = 12345;
  auto rnd = [&seed](uint32_t n) {
    seed = seed * 1664525u + 1013904223u;
    return (seed >> 8) % n;
  };
  for (int iter = 0; iter < 300; ++iter) {
    const size_t rank = rnd(5);
    Dims out(rank), da, db;
    for (auto& d : out) d = 1 + rnd(4);
    // a keeps the full rank so the output rank is known; b may be shorter.
    const size_t ra = rank, rb = rnd(static_cast<uint32_t>(rank) + 1);
    for (size_t k = rank - ra; k < rank; ++k) da.push_back(rnd(3) == 0 ? 1 : out[k]);
    for (size_t k = rank - rb; k < rank; ++k) db.push_back(rnd(3) == 0 ? 1 : out[k]);
    std::vector<float> va(ShapeSize(da)), vb(ShapeSize(db));
    for (auto& v : va) v = static_cast<float>(rnd(100));
    for (auto& v : vb) v = static_cast<float>(rnd(100));
    Tensor a = MakeTensor<float>(da, va), b = MakeTensor<float>(db, vb);
    Tensor y = Run1(MakeNode("Sub", 14), {&a, &b});
    Dims expect(rank);
    for (size_t k = 0; k < rank; ++k) {
      int64_t x = k >= rank - ra ? da[k - (rank - ra)] : 1, z = k >= rank - rb ? db[k - (rank - rb)] : 1;
      expect[k] = std::max(x, z);
    }
    ASSERT_EQ(y.dims(), expect);
    auto yv = ToVector<float>(y);
    for (int64_t i = 0; i < ShapeSize(expect); ++i) {
      int64_t r = i, ia = 0, ib = 0, sa = 1, sb = 1;
      for (size_t k = rank; k-- > 0;) {
        int64_t idx = r % expect[k];
        r /= expect[k];
        if (k >= rank - ra) {
          int64_t d = da[k - (rank - ra)];
          ia += (d == 1 ? 0 : idx) * sa;
          sa *= d;
        }
        if (k >= rank - rb) {
          int64_t d = db[k - (rank - rb)];
          ib += (d == 1 ? 0 : idx) * sb;
          sb *= d;
        }
      }
      ASSERT_EQ(yv[i], va[ia] - vb[ib]) << "iter " << iter << " a " << ShapeToString(da) << " b " << ShapeToString(db);
    }
  }
}

}  // namespace
}  // namespace onyx
