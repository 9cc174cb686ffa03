#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "tests/unit/kernel_test_util.h"

namespace onyx {
namespace {

using testing::MakeTensor;
using testing::Run1;
using testing::RunCpuKernel;
using testing::ToVector;

Node MakeNode(const std::string& op, int opset, std::vector<int64_t> axes = {}, int keepdims = 1) {
  Node n;
  n.op_type = op;
  n.since_version = opset;
  if (!axes.empty()) {
    Attribute a;
    a.type = Attribute::Type::kInts;
    a.ints = std::move(axes);
    n.attrs["axes"] = a;
  }
  Attribute k;
  k.type = Attribute::Type::kInt;
  k.i = keepdims;
  n.attrs["keepdims"] = k;
  return n;
}

std::vector<float> Iota(int n) {
  std::vector<float> v(n);
  for (int i = 0; i < n; ++i) v[i] = static_cast<float>(i);
  return v;
}

TEST(KernelsReductionTest, ReduceMeanLastAxis) {
  Tensor x = MakeTensor<float>({2, 3, 20}, Iota(120));
  Tensor y = Run1(MakeNode("ReduceMean", 13, {-1}), {&x});
  EXPECT_EQ(y.dims(), (Dims{2, 3, 1}));
  auto v = ToVector<float>(y);
  for (int r = 0; r < 6; ++r) EXPECT_FLOAT_EQ(v[r], r * 20 + 9.5f);
  Tensor axes = MakeTensor<int64_t>({1}, {2});
  Tensor z = Run1(MakeNode("ReduceMean", 18, {}, 0), {&x, &axes});
  EXPECT_EQ(z.dims(), (Dims{2, 3}));
}

TEST(KernelsReductionTest, ReduceSumAxesFormsAndAll) {
  Tensor x = MakeTensor<float>({2, 3, 4}, Iota(24));
  // Middle axis, attribute form (opset 11).
  auto y = ToVector<float>(Run1(MakeNode("ReduceSum", 11, {1}, 0), {&x}));
  ASSERT_EQ(y.size(), 8u);
  EXPECT_EQ(y[0], 0 + 4 + 8);
  EXPECT_EQ(y[7], 15 + 19 + 23);
  // Two separate axes, input form (opset 13).
  Tensor ax = MakeTensor<int64_t>({2}, {0, 2});
  Tensor z = Run1(MakeNode("ReduceSum", 13, {}, 1), {&x, &ax});
  EXPECT_EQ(z.dims(), (Dims{1, 3, 1}));
  auto zv = ToVector<float>(z);
  EXPECT_EQ(zv[0], (0 + 1 + 2 + 3) + (12 + 13 + 14 + 15));
  // No axes: reduce everything.
  Tensor all = Run1(MakeNode("ReduceSum", 13, {}, 0), {&x});
  EXPECT_EQ(all.dims(), Dims{});
  EXPECT_EQ(all.data<float>()[0], 276);
  // noop_with_empty_axes.
  Node noop = MakeNode("ReduceSum", 13);
  Attribute a;
  a.type = Attribute::Type::kInt;
  a.i = 1;
  noop.attrs["noop_with_empty_axes"] = a;
  EXPECT_EQ(ToVector<float>(Run1(noop, {&x})), Iota(24));
}

TEST(KernelsReductionTest, OtherReducers) {
  Tensor x = MakeTensor<float>({2, 2}, {1, -2, 3, 4});
  EXPECT_EQ(ToVector<float>(Run1(MakeNode("ReduceMax", 13, {1}), {&x})), (std::vector<float>{1, 4}));
  EXPECT_EQ(ToVector<float>(Run1(MakeNode("ReduceMin", 13, {0}), {&x})), (std::vector<float>{1, -2}));
  EXPECT_EQ(ToVector<float>(Run1(MakeNode("ReduceProd", 13, {1}), {&x})), (std::vector<float>{-2, 12}));
  EXPECT_EQ(ToVector<float>(Run1(MakeNode("ReduceSumSquare", 13, {1}), {&x})), (std::vector<float>{5, 25}));
  EXPECT_EQ(ToVector<float>(Run1(MakeNode("ReduceL1", 13, {1}), {&x})), (std::vector<float>{3, 7}));
  auto l2 = ToVector<float>(Run1(MakeNode("ReduceL2", 13, {1}), {&x}));
  EXPECT_FLOAT_EQ(l2[0], std::sqrt(5.f));
  Tensor big = MakeTensor<float>({2}, {1000, 1000});
  auto lse = ToVector<float>(Run1(MakeNode("ReduceLogSumExp", 13, {0}), {&big}));
  EXPECT_NEAR(lse[0], 1000 + std::log(2.f), 1e-3);
  Tensor xi = MakeTensor<int64_t>({3}, {1, 2, 4});
  EXPECT_EQ(ToVector<int64_t>(Run1(MakeNode("ReduceMean", 13, {0}), {&xi})), (std::vector<int64_t>{2}));
}

TEST(KernelsReductionTest, BadAxisIsAnError) {
  Tensor x = MakeTensor<float>({2, 2}, {1, 2, 3, 4});
  std::vector<std::unique_ptr<Tensor>> out;
  Status s = RunCpuKernel(MakeNode("ReduceMean", 13, {5}), {&x}, 1, &out);
  EXPECT_EQ(s.code(), ErrorCode::kInvalidArgument);
  EXPECT_NE(s.message().find("axis 5"), std::string::npos) << s.message();
}

}  // namespace
}  // namespace onyx
