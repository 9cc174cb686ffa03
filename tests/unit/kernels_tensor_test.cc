#include <gtest/gtest.h>

#include <algorithm>
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

Status RunErr(const Node& n, const std::vector<const Tensor*>& in) {
  std::vector<std::unique_ptr<Tensor>> out;
  return RunCpuKernel(n, in, 1, &out);
}

std::vector<float> Iota(int n) {
  std::vector<float> v(n);
  for (int i = 0; i < n; ++i) v[i] = static_cast<float>(i);
  return v;
}

TEST(KernelsTensorTest, CastNumericBoolHalf) {
  Node n = MakeNode("Cast", 19);
  SetInt(n, "to", static_cast<int64_t>(ElemType::kInt32));
  Tensor x = MakeTensor<float>({3}, {1.7f, -2.5f, 0.f});
  EXPECT_EQ(ToVector<int32_t>(Run1(n, {&x})), (std::vector<int32_t>{1, -2, 0}));
  SetInt(n, "to", static_cast<int64_t>(ElemType::kBool));
  EXPECT_EQ(ToVector<bool>(Run1(n, {&x})), (std::vector<bool>{true, true, false}));
  SetInt(n, "to", static_cast<int64_t>(ElemType::kFloat16));
  Tensor h = Run1(n, {&x});
  EXPECT_EQ(h.type(), ElemType::kFloat16);
  EXPECT_EQ(static_cast<float>(h.data<Float16>()[1]), -2.5f);
  SetInt(n, "to", static_cast<int64_t>(ElemType::kFloat));
  EXPECT_EQ(ToVector<float>(Run1(n, {&h})), (std::vector<float>{1.7001953125f, -2.5f, 0.f}));
  SetInt(n, "to", static_cast<int64_t>(ElemType::kString));
  Tensor s = Run1(n, {&x});
  EXPECT_EQ(s.data<std::string>()[1], "-2.5");
  SetInt(n, "to", static_cast<int64_t>(ElemType::kDouble));
  EXPECT_EQ(ToVector<double>(Run1(n, {&s}))[1], -2.5);
}

TEST(KernelsTensorTest, ConcatAnyAxis) {
  Node n = MakeNode("Concat", 13);
  SetInt(n, "axis", -1);
  Tensor a = MakeTensor<float>({2, 1}, {1, 2});
  Tensor b = MakeTensor<float>({2, 2}, {3, 4, 5, 6});
  Tensor y = Run1(n, {&a, &b});
  EXPECT_EQ(y.dims(), (Dims{2, 3}));
  EXPECT_EQ(ToVector<float>(y), (std::vector<float>{1, 3, 4, 2, 5, 6}));
  Tensor bad = MakeTensor<float>({3, 1}, {1, 2, 3});
  EXPECT_EQ(RunErr(n, {&a, &bad}).code(), ErrorCode::kInvalidArgument);
}

TEST(KernelsTensorTest, ConstantAndConstantOfShape) {
  Node n = MakeNode("Constant", 13);
  SetInts(n, "value_ints", {4, 5});
  Tensor y = Run1(n, {});
  EXPECT_EQ(y.type(), ElemType::kInt64);
  EXPECT_EQ(ToVector<int64_t>(y), (std::vector<int64_t>{4, 5}));
  Node c = MakeNode("ConstantOfShape", 9);
  Attribute v;
  v.type = Attribute::Type::kTensor;
  v.t = std::make_shared<Tensor>(MakeTensor<int32_t>({1}, {7}));
  c.attrs["value"] = v;
  Tensor shape = MakeTensor<int64_t>({2}, {2, 2});
  Tensor z = Run1(c, {&shape});
  EXPECT_EQ(z.dims(), (Dims{2, 2}));
  EXPECT_EQ(ToVector<int32_t>(z), (std::vector<int32_t>{7, 7, 7, 7}));
}

TEST(KernelsTensorTest, ExpandBroadcasts) {
  Tensor x = MakeTensor<float>({3, 1}, {1, 2, 3});
  Tensor s = MakeTensor<int64_t>({3}, {2, 1, 2});
  Tensor y = Run1(MakeNode("Expand", 13), {&x, &s});
  EXPECT_EQ(y.dims(), (Dims{2, 3, 2}));
  EXPECT_EQ(ToVector<float>(y), (std::vector<float>{1, 1, 2, 2, 3, 3, 1, 1, 2, 2, 3, 3}));
}

TEST(KernelsTensorTest, GatherAxesAndNegativeIndices) {
  Tensor x = MakeTensor<float>({3, 2}, {0, 1, 2, 3, 4, 5});
  Tensor idx = MakeTensor<int64_t>({2}, {-1, 0});
  Tensor y = Run1(MakeNode("Gather", 13), {&x, &idx});
  EXPECT_EQ(y.dims(), (Dims{2, 2}));
  EXPECT_EQ(ToVector<float>(y), (std::vector<float>{4, 5, 0, 1}));
  Node n = MakeNode("Gather", 13);
  SetInt(n, "axis", 1);
  Tensor i2 = MakeTensor<int32_t>({1, 1}, {1});
  Tensor z = Run1(n, {&x, &i2});
  EXPECT_EQ(z.dims(), (Dims{3, 1, 1}));
  EXPECT_EQ(ToVector<float>(z), (std::vector<float>{1, 3, 5}));
  Tensor bad = MakeTensor<int64_t>({1}, {7});
  Status s = RunErr(MakeNode("Gather", 13), {&x, &bad});
  EXPECT_EQ(s.code(), ErrorCode::kInvalidArgument);
  EXPECT_NE(s.message().find("7 is out of range [-3, 3)"), std::string::npos) << s.message();
}

TEST(KernelsTensorTest, ReshapeFlattenSqueezeUnsqueeze) {
  Tensor x = MakeTensor<float>({2, 3, 4}, Iota(24));
  Tensor shape = MakeTensor<int64_t>({3}, {0, -1, 2});
  Tensor y = Run1(MakeNode("Reshape", 14), {&x, &shape});
  EXPECT_EQ(y.dims(), (Dims{2, 6, 2}));
  EXPECT_EQ(ToVector<float>(y), Iota(24));
  Tensor bad = MakeTensor<int64_t>({2}, {5, -1});
  EXPECT_EQ(RunErr(MakeNode("Reshape", 14), {&x, &bad}).code(), ErrorCode::kInvalidArgument);
  Node f = MakeNode("Flatten", 13);
  SetInt(f, "axis", 2);
  EXPECT_EQ(Run1(f, {&x}).dims(), (Dims{6, 4}));
  Tensor one = MakeTensor<float>({1, 3, 1}, {1, 2, 3});
  EXPECT_EQ(Run1(MakeNode("Squeeze", 13), {&one}).dims(), (Dims{3}));
  Tensor ax = MakeTensor<int64_t>({1}, {-1});
  EXPECT_EQ(Run1(MakeNode("Squeeze", 13), {&one, &ax}).dims(), (Dims{1, 3}));
  Node sq = MakeNode("Squeeze", 11);
  SetInts(sq, "axes", {0});
  EXPECT_EQ(Run1(sq, {&one}).dims(), (Dims{3, 1}));
  Tensor uax = MakeTensor<int64_t>({2}, {0, -1});
  EXPECT_EQ(Run1(MakeNode("Unsqueeze", 13), {&x, &uax}).dims(), (Dims{1, 2, 3, 4, 1}));
  Node us = MakeNode("Unsqueeze", 11);
  SetInts(us, "axes", {1});
  EXPECT_EQ(Run1(us, {&x}).dims(), (Dims{2, 1, 3, 4}));
  Tensor sq_bad = MakeTensor<int64_t>({1}, {1});
  EXPECT_EQ(RunErr(MakeNode("Squeeze", 13), {&one, &sq_bad}).code(), ErrorCode::kInvalidArgument);
}

TEST(KernelsTensorTest, IdentityDropoutShapeSize) {
  Tensor x = MakeTensor<float>({2, 3}, Iota(6));
  EXPECT_EQ(ToVector<float>(Run1(MakeNode("Identity", 16), {&x})), Iota(6));
  std::vector<std::unique_ptr<Tensor>> out;
  ASSERT_TRUE(RunCpuKernel(MakeNode("Dropout", 13), {&x}, 2, &out).ok());
  EXPECT_EQ(ToVector<float>(*out[0]), Iota(6));
  EXPECT_EQ(ToVector<bool>(*out[1]), std::vector<bool>(6, true));
  EXPECT_EQ(ToVector<int64_t>(Run1(MakeNode("Shape", 13), {&x})), (std::vector<int64_t>{2, 3}));
  Node s = MakeNode("Shape", 15);
  SetInt(s, "start", -1);
  EXPECT_EQ(ToVector<int64_t>(Run1(s, {&x})), (std::vector<int64_t>{3}));
  Tensor sz = Run1(MakeNode("Size", 13), {&x});
  EXPECT_EQ(sz.dims(), Dims{});
  EXPECT_EQ(sz.data<int64_t>()[0], 6);
}

TEST(KernelsTensorTest, SliceStepsAndClamping) {
  Tensor x = MakeTensor<float>({3, 4}, Iota(12));
  Tensor starts = MakeTensor<int64_t>({2}, {0, 3});
  Tensor ends = MakeTensor<int64_t>({2}, {INT64_MAX, -100});
  Tensor axes = MakeTensor<int64_t>({2}, {0, 1});
  Tensor steps = MakeTensor<int64_t>({2}, {2, -2});
  Tensor y = Run1(MakeNode("Slice", 13), {&x, &starts, &ends, &axes, &steps});
  EXPECT_EQ(y.dims(), (Dims{2, 2}));
  EXPECT_EQ(ToVector<float>(y), (std::vector<float>{3, 1, 11, 9}));
  Node old = MakeNode("Slice", 9);
  SetInts(old, "starts", {1});
  SetInts(old, "ends", {1000});
  SetInts(old, "axes", {1});
  Tensor z = Run1(old, {&x});
  EXPECT_EQ(z.dims(), (Dims{3, 3}));
  EXPECT_EQ(ToVector<float>(z), (std::vector<float>{1, 2, 3, 5, 6, 7, 9, 10, 11}));
  Tensor s32 = MakeTensor<int32_t>({1}, {-1});
  Tensor e32 = MakeTensor<int32_t>({1}, {-5});
  Tensor a32 = MakeTensor<int32_t>({1}, {0});
  Tensor st32 = MakeTensor<int32_t>({1}, {-1});
  Tensor w = Run1(MakeNode("Slice", 13), {&x, &s32, &e32, &a32, &st32});
  EXPECT_EQ(w.dims(), (Dims{3, 4}));
  EXPECT_EQ(ToVector<float>(w)[0], 8);
}

TEST(KernelsTensorTest, TransposeDefaultBertAnd2D) {
  Tensor x = MakeTensor<float>({2, 3}, Iota(6));
  Tensor y = Run1(MakeNode("Transpose", 13), {&x});
  EXPECT_EQ(y.dims(), (Dims{3, 2}));
  EXPECT_EQ(ToVector<float>(y), (std::vector<float>{0, 3, 1, 4, 2, 5}));
  const int B = 2, S = 5, H = 3, D = 4;
  Tensor b = MakeTensor<float>({B, S, H, D}, Iota(B * S * H * D));
  Node n = MakeNode("Transpose", 13);
  SetInts(n, "perm", {0, 2, 1, 3});
  auto v = ToVector<float>(Run1(n, {&b}));
  for (int i = 0; i < B; ++i)
    for (int h = 0; h < H; ++h)
      for (int s = 0; s < S; ++s)
        for (int d = 0; d < D; ++d)
          ASSERT_EQ(v[((i * H + h) * S + s) * D + d], static_cast<float>(((i * S + s) * H + h) * D + d));
  // A large 2D transpose exercises the tiled path.
  const int M = 70, N = 45;
  Tensor big = MakeTensor<float>({M, N}, Iota(M * N));
  auto t = ToVector<float>(Run1(MakeNode("Transpose", 13), {&big}));
  for (int i = 0; i < N; ++i)
    for (int j = 0; j < M; ++j) ASSERT_EQ(t[i * M + j], static_cast<float>(j * N + i));
  Node bad = MakeNode("Transpose", 13);
  SetInts(bad, "perm", {0, 0});
  EXPECT_EQ(RunErr(bad, {&x}).code(), ErrorCode::kInvalidArgument);
}

TEST(KernelsTensorTest, TransposeRandomPermsMatchNaive) {
  uint32_t seed = 777;
  auto rnd = [&seed](uint32_t n) {
    seed = seed * 1664525u + 1013904223u;
    return (seed >> 8) % n;
  };
  for (int iter = 0; iter < 200; ++iter) {
    const size_t rank = 1 + rnd(5);
    Dims in(rank);
    for (auto& d : in) d = 1 + rnd(rnd(4) == 0 ? 40 : 4);
    std::vector<int64_t> perm(rank);
    for (size_t k = 0; k < rank; ++k) perm[k] = static_cast<int64_t>(k);
    for (size_t k = rank; k > 1; --k) std::swap(perm[k - 1], perm[rnd(static_cast<uint32_t>(k))]);
    const int n = static_cast<int>(ShapeSize(in));
    Tensor x = MakeTensor<float>(in, Iota(n));
    Node node = MakeNode("Transpose", 13);
    SetInts(node, "perm", perm);
    Tensor y = Run1(node, {&x});
    Dims out(rank), st(rank);
    int64_t acc = 1;
    for (size_t k = rank; k-- > 0;) {
      st[k] = acc;
      acc *= in[k];
    }
    for (size_t k = 0; k < rank; ++k) out[k] = in[perm[k]];
    ASSERT_EQ(y.dims(), out);
    auto yv = ToVector<float>(y);
    for (int64_t i = 0; i < n; ++i) {
      int64_t r = i, src = 0;
      for (size_t k = rank; k-- > 0;) {
        src += (r % out[k]) * st[perm[k]];
        r /= out[k];
      }
      ASSERT_EQ(yv[i], static_cast<float>(src)) << "iter " << iter << " shape " << ShapeToString(in);
    }
  }
}

}  // namespace
}  // namespace onyx
