// Conv, pools, BatchNormalization, LayerNormalization, Gemm and MatMul against
// naive reference loops written here from the ONNX operator definitions.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <memory>
#include <cstdint>
#include <limits>
#include <map>
#include <string>
#include <vector>

#include "tests/unit/kernel_test_util.h"

namespace onyx {
namespace {

using testing::MakeTensor;
using testing::RunCpuKernel;
using testing::ToVector;

Attribute Ints(std::vector<int64_t> v) {
  Attribute a;
  a.type = Attribute::Type::kInts;
  a.ints = std::move(v);
  return a;
}
Attribute Int(int64_t v) {
  Attribute a;
  a.type = Attribute::Type::kInt;
  a.i = v;
  return a;
}
Attribute Float(float v) {
  Attribute a;
  a.type = Attribute::Type::kFloat;
  a.f = v;
  return a;
}
Attribute Str(std::string v) {
  Attribute a;
  a.type = Attribute::Type::kString;
  a.s = std::move(v);
  return a;
}

Node MakeNode(const std::string& op, int opset, std::map<std::string, Attribute> attrs = {}) {
  Node n;
  n.op_type = op;
  n.since_version = opset;
  n.attrs = std::move(attrs);
  return n;
}

// Deterministic values in [-1, 1).
template <typename T = float>
std::vector<T> Random(int64_t n, uint32_t seed) {
  std::vector<T> v(n);
  uint32_t s = seed * 2654435761u + 12345u;
  for (auto& x : v) {
    s = s * 1664525u + 1013904223u;
    x = static_cast<T>(static_cast<double>(s >> 8) / (1 << 23) - 1.0);
  }
  return v;
}

template <typename T>
void ExpectNear(const std::vector<T>& got, const std::vector<T>& want, double tol) {
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < got.size(); ++i)
    ASSERT_NEAR(got[i], want[i], tol * (1.0 + std::fabs(static_cast<double>(want[i])))) << "at " << i;
}

// Runs the kernel both without threads and on a 4-thread pool; both must agree.
Status RunBoth(Node node, const std::vector<const Tensor*>& inputs, size_t nout,
           std::vector<std::unique_ptr<Tensor>>* outputs) {
  ONYX_RETURN_IF_ERROR(RunCpuKernel(node, inputs, nout, outputs));
  static ThreadPool pool(4);
  std::vector<std::unique_ptr<Tensor>> threaded;
  ONYX_RETURN_IF_ERROR(RunCpuKernel(node, inputs, nout, &threaded, &pool));
  for (size_t i = 0; i < nout; ++i) {
    const Tensor* a = (*outputs)[i].get();
    const Tensor* b = threaded[i].get();
    if (!a || !b) continue;
    EXPECT_EQ(a->dims(), b->dims());
    if (a->bytes() == b->bytes() && a->bytes() > 0) {
      EXPECT_EQ(0, std::memcmp(a->raw(), b->raw(), a->bytes())) << "threaded result differs, output " << i;
    }
  }
  return Status::OK();
}

// ---------------------------------------------------------------- Conv

struct ConvCase {
  ConvCase(Dims x_dims, Dims w_dims) : x(std::move(x_dims)), w(std::move(w_dims)) {}
  Dims x, w;
  int64_t group = 1;
  std::vector<int64_t> strides, dilations, pads;  // explicit, full length
  bool bias = false;
  std::map<std::string, Attribute> attrs;         // as given to the node
};

std::vector<float> RefConv(const ConvCase& c, const std::vector<float>& x, const std::vector<float>& w,
                           const std::vector<float>& b, Dims* out_dims) {
  const size_t nd = c.x.size() - 2;
  const int64_t N = c.x[0], C = c.x[1], M = c.w[0], Cg = c.w[1], Mg = M / c.group;
  Dims od{N, M};
  for (size_t j = 0; j < nd; ++j)
    od.push_back((c.x[j + 2] + c.pads[j] + c.pads[j + nd] - ((c.w[j + 2] - 1) * c.dilations[j] + 1)) / c.strides[j] +
                 1);
  *out_dims = od;
  std::vector<float> y(ShapeSize(od));
  const int64_t osz = ShapeSize(Dims(od.begin() + 2, od.end()));
  const int64_t isz = ShapeSize(Dims(c.x.begin() + 2, c.x.end()));
  const int64_t ksz = ShapeSize(Dims(c.w.begin() + 2, c.w.end()));
  for (int64_t n = 0; n < N; ++n)
    for (int64_t m = 0; m < M; ++m)
      for (int64_t o = 0; o < osz; ++o) {
        std::vector<int64_t> oc(nd);
        for (int64_t r = o, j = nd - 1; j >= 0; --j) oc[j] = r % od[j + 2], r /= od[j + 2];
        double acc = c.bias ? b[m] : 0.0;
        const int64_t g = m / Mg;
        for (int64_t ci = 0; ci < Cg; ++ci)
          for (int64_t k = 0; k < ksz; ++k) {
            int64_t in_off = 0;
            bool inside = true;
            for (int64_t r = k, j = nd - 1; j >= 0; --j) {
              const int64_t kj = r % c.w[j + 2];
              r /= c.w[j + 2];
              const int64_t ij = oc[j] * c.strides[j] - c.pads[j] + kj * c.dilations[j];
              inside = inside && ij >= 0 && ij < c.x[j + 2];
            }
            if (!inside) continue;
            for (size_t j = 0; j < nd; ++j) {
              int64_t r = k;
              for (size_t q = nd - 1; q > j; --q) r /= c.w[q + 2];
              const int64_t kj = r % c.w[j + 2];
              in_off = in_off * c.x[j + 2] + oc[j] * c.strides[j] - c.pads[j] + kj * c.dilations[j];
            }
            acc += static_cast<double>(x[(n * C + g * Cg + ci) * isz + in_off]) * w[(m * Cg + ci) * ksz + k];
          }
        y[(n * M + m) * osz + o] = static_cast<float>(acc);
      }
  return y;
}

void CheckConv(ConvCase c, uint32_t seed = 1) {
  const size_t nd = c.x.size() - 2;
  if (c.strides.empty()) c.strides.assign(nd, 1);
  if (c.dilations.empty()) c.dilations.assign(nd, 1);
  if (c.pads.empty()) c.pads.assign(2 * nd, 0);
  auto xv = Random(ShapeSize(c.x), seed);
  auto wv = Random(ShapeSize(c.w), seed + 1);
  auto bv = Random(c.w[0], seed + 2);
  Tensor x = MakeTensor<float>(c.x, xv), w = MakeTensor<float>(c.w, wv), b = MakeTensor<float>({c.w[0]}, bv);
  auto attrs = c.attrs;
  if (c.group != 1) attrs["group"] = Int(c.group);
  std::vector<std::unique_ptr<Tensor>> out;
  std::vector<const Tensor*> in{&x, &w};
  if (c.bias) in.push_back(&b);
  ASSERT_TRUE(RunBoth(MakeNode("Conv", 11, attrs), in, 1, &out).ok());
  Dims od;
  auto want = RefConv(c, xv, wv, bv, &od);
  EXPECT_EQ(out[0]->dims(), od);
  ExpectNear(ToVector<float>(*out[0]), want, 1e-4);
}

TEST(Conv, Regular2DWithBias) {
  ConvCase c{{2, 3, 7, 8}, {4, 3, 3, 3}};
  c.pads = {1, 1, 1, 1};
  c.attrs["pads"] = Ints(c.pads);
  c.bias = true;
  CheckConv(c);
}

TEST(Conv, NoPadNoBias) { CheckConv({{1, 2, 5, 6}, {3, 2, 2, 3}}); }

TEST(Conv, Grouped) {
  ConvCase c{{2, 4, 6, 6}, {6, 2, 3, 3}};
  c.group = 2;
  c.pads = {1, 0, 1, 0};
  c.attrs["pads"] = Ints(c.pads);
  CheckConv(c);
  c.bias = true;
  CheckConv(c, 7);
}

TEST(Conv, StridedDilatedAsymmetricPads) {
  ConvCase c{{1, 3, 11, 10}, {5, 3, 3, 2}};
  c.strides = {2, 1};
  c.dilations = {2, 3};
  c.pads = {0, 1, 2, 0};
  c.attrs = {{"strides", Ints(c.strides)}, {"dilations", Ints(c.dilations)}, {"pads", Ints(c.pads)}};
  c.bias = true;
  CheckConv(c);
}

TEST(Conv, Pointwise) {
  ConvCase c{{2, 16, 5, 5}, {8, 16, 1, 1}};
  c.bias = true;
  CheckConv(c);
  ConvCase g{{2, 16, 5, 5}, {8, 4, 1, 1}};
  g.group = 4;
  CheckConv(g);
}

TEST(Conv, Depthwise) {
  for (int64_t stride : {1, 2}) {
    ConvCase c{{2, 8, 9, 10}, {8, 1, 3, 3}};
    c.group = 8;
    c.strides = {stride, stride};
    c.pads = {1, 1, 1, 1};
    c.attrs = {{"strides", Ints(c.strides)}, {"pads", Ints(c.pads)}, {"kernel_shape", Ints({3, 3})}};
    c.bias = true;
    CheckConv(c, static_cast<uint32_t>(stride));
  }
  ConvCase d{{1, 6, 12, 11}, {6, 1, 3, 5}};  // dilated, no bias, asymmetric pads
  d.group = 6;
  d.dilations = {2, 1};
  d.pads = {2, 0, 1, 3};
  d.attrs = {{"dilations", Ints(d.dilations)}, {"pads", Ints(d.pads)}};
  CheckConv(d);
  ConvCase m{{1, 4, 7, 7}, {12, 1, 3, 3}};  // channel multiplier 3
  m.group = 4;
  m.bias = true;
  CheckConv(m);
  ConvCase big{{1, 32, 56, 56}, {32, 1, 3, 3}};  // big enough planes to run in parallel
  big.group = 32;
  big.pads = {1, 1, 1, 1};
  big.attrs["pads"] = Ints(big.pads);
  big.bias = true;
  CheckConv(big);
}

TEST(Conv, ManySmallGroupsRunInParallel) {
  ConvCase c{{2, 32, 14, 14}, {32, 4, 3, 3}};
  c.group = 8;
  c.pads = {1, 1, 1, 1};
  c.attrs["pads"] = Ints(c.pads);
  c.bias = true;
  CheckConv(c);
}

TEST(Conv, AutoPad) {
  // SAME_*: out = ceil(in / stride); the odd pad goes last (UPPER) or first (LOWER).
  ConvCase up{{1, 2, 7, 8}, {3, 2, 4, 3}};
  up.strides = {2, 2};
  up.pads = {1, 0, 2, 1};  // H: total 3+... computed by hand: out 4, 4
  up.attrs = {{"strides", Ints({2, 2})}, {"auto_pad", Str("SAME_UPPER")}};
  CheckConv(up);
  ConvCase lo = up;
  lo.pads = {2, 1, 1, 0};
  lo.attrs["auto_pad"] = Str("SAME_LOWER");
  CheckConv(lo);
  ConvCase valid{{1, 2, 7, 8}, {3, 2, 4, 3}};
  valid.strides = {2, 2};
  valid.attrs = {{"strides", Ints({2, 2})}, {"auto_pad", Str("VALID")}, {"pads", Ints({5, 5, 5, 5})}};
  CheckConv(valid);
}

TEST(Conv, OneAndThreeDims) {
  ConvCase c1{{2, 3, 20}, {4, 3, 5}};
  c1.strides = {3};
  c1.pads = {2, 1};
  c1.attrs = {{"strides", Ints(c1.strides)}, {"pads", Ints(c1.pads)}};
  c1.bias = true;
  CheckConv(c1);
  ConvCase c3{{1, 2, 5, 6, 7}, {3, 2, 3, 2, 3}};
  c3.pads = {1, 0, 1, 1, 1, 0};
  c3.strides = {1, 2, 2};
  c3.attrs = {{"strides", Ints(c3.strides)}, {"pads", Ints(c3.pads)}};
  c3.bias = true;
  CheckConv(c3);
}

TEST(Conv, LargeUsesSequentialGemmPath) {
  ConvCase c{{2, 16, 32, 32}, {32, 16, 3, 3}};
  c.pads = {1, 1, 1, 1};
  c.attrs["pads"] = Ints(c.pads);
  c.bias = true;
  CheckConv(c);
}

TEST(Conv, DoubleType) {
  std::vector<double> xv = Random<double>(1 * 2 * 4 * 4, 3), wv = Random<double>(2 * 2 * 3 * 3, 4);
  Tensor x = MakeTensor<double>({1, 2, 4, 4}, xv), w = MakeTensor<double>({2, 2, 3, 3}, wv);
  std::vector<std::unique_ptr<Tensor>> out;
  ASSERT_TRUE(RunBoth(MakeNode("Conv", 11), {&x, &w}, 1, &out).ok());
  ConvCase c{{1, 2, 4, 4}, {2, 2, 3, 3}};
  c.strides = {1, 1};
  c.dilations = {1, 1};
  c.pads = {0, 0, 0, 0};
  Dims od;
  auto want = RefConv(c, std::vector<float>(xv.begin(), xv.end()), std::vector<float>(wv.begin(), wv.end()), {}, &od);
  auto got = ToVector<double>(*out[0]);
  ExpectNear(std::vector<float>(got.begin(), got.end()), want, 1e-5);
}

TEST(Conv, BadInputsAreErrors) {
  Tensor x = MakeTensor<float>({1, 3, 8, 8}, Random(192, 1));
  Tensor w = MakeTensor<float>({64, 4, 7, 7}, Random(64 * 4 * 49, 2));
  std::vector<std::unique_ptr<Tensor>> out;
  Status s = RunCpuKernel(MakeNode("Conv", 11), {&x, &w}, 1, &out);
  EXPECT_EQ(s.code(), ErrorCode::kInvalidArgument);
  EXPECT_NE(s.message().find("has 3 channels but weight W [64,4,7,7] expects 4 (group 1)"), std::string::npos)
      << s.message();
  Tensor w2 = MakeTensor<float>({2, 3, 9, 9}, Random(2 * 3 * 81, 2));
  s = RunCpuKernel(MakeNode("Conv", 11), {&x, &w2}, 1, &out);
  EXPECT_EQ(s.code(), ErrorCode::kInvalidArgument) << s.message();
  Tensor w3 = MakeTensor<float>({2, 3, 3, 3}, Random(54, 2));
  Tensor b = MakeTensor<float>({3}, {1, 2, 3});
  s = RunCpuKernel(MakeNode("Conv", 11), {&x, &w3, &b}, 1, &out);
  EXPECT_EQ(s.code(), ErrorCode::kInvalidArgument) << s.message();
  s = RunCpuKernel(MakeNode("Conv", 11, {{"strides", Ints({0, 1})}}), {&x, &w3}, 1, &out);
  EXPECT_EQ(s.code(), ErrorCode::kInvalidGraph) << s.message();
  s = RunCpuKernel(MakeNode("Conv", 11, {{"strides", Ints({1, 1, 1})}}), {&x, &w3}, 1, &out);
  EXPECT_EQ(s.code(), ErrorCode::kInvalidArgument) << s.message();
  s = RunCpuKernel(MakeNode("Conv", 11, {{"auto_pad", Str("SAME")}}), {&x, &w3}, 1, &out);
  EXPECT_EQ(s.code(), ErrorCode::kInvalidGraph) << s.message();
}

// ---------------------------------------------------------------- Pools

struct PoolCase {
  Dims x;
  std::vector<int64_t> k, strides, dilations, pads;  // pads: explicit, as used
  bool include_pad = false;
  Dims out;  // expected spatial output dims
};

// Max or average over the window taps inside the input; include_pad counts
// taps inside the padded extent instead.
std::vector<float> RefPool(bool is_max, const PoolCase& c, const std::vector<float>& x,
                           std::vector<int64_t>* argmax) {
  const size_t nd = c.k.size();
  const int64_t planes = c.x[0] * c.x[1];
  const int64_t isz = ShapeSize(Dims(c.x.begin() + 2, c.x.end())), osz = ShapeSize(c.out);
  const int64_t ksz = ShapeSize(c.k);
  std::vector<float> y(planes * osz);
  argmax->assign(planes * osz, -1);
  for (int64_t p = 0; p < planes; ++p)
    for (int64_t o = 0; o < osz; ++o) {
      std::vector<int64_t> oc(nd);
      for (int64_t r = o, j = nd - 1; j >= 0; --j) oc[j] = r % c.out[j], r /= c.out[j];
      double sum = 0;
      float best = -std::numeric_limits<float>::infinity();
      int64_t count = 0;
      for (int64_t k = 0; k < ksz; ++k) {
        std::vector<int64_t> kc(nd);
        for (int64_t r = k, j = nd - 1; j >= 0; --j) kc[j] = r % c.k[j], r /= c.k[j];
        bool inside = true, in_padded = true;
        int64_t off = 0;
        for (size_t j = 0; j < nd; ++j) {
          const int64_t ij = oc[j] * c.strides[j] - c.pads[j] + kc[j] * c.dilations[j];
          inside = inside && ij >= 0 && ij < c.x[j + 2];
          in_padded = in_padded && ij < c.x[j + 2] + c.pads[j + nd];
          off = off * c.x[j + 2] + ij;
        }
        if (c.include_pad ? in_padded : inside) ++count;
        if (!inside) continue;
        const float v = x[p * isz + off];
        sum += v;
        if (v > best) best = v, (*argmax)[p * osz + o] = p * isz + off;
      }
      y[p * osz + o] = is_max ? best : static_cast<float>(sum / count);
    }
  return y;
}

void CheckPool(const std::string& op, const PoolCase& c, std::map<std::string, Attribute> attrs, int opset = 12) {
  attrs["kernel_shape"] = Ints(c.k);
  auto xv = Random(ShapeSize(c.x), 5);
  Tensor x = MakeTensor<float>(c.x, xv);
  const bool is_max = op == "MaxPool";
  std::vector<std::unique_ptr<Tensor>> out;
  Status s = RunBoth(MakeNode(op, opset, attrs), {&x}, is_max ? 2 : 1, &out);
  ASSERT_TRUE(s.ok()) << s.message();
  Dims want_dims{c.x[0], c.x[1]};
  want_dims.insert(want_dims.end(), c.out.begin(), c.out.end());
  EXPECT_EQ(out[0]->dims(), want_dims);
  std::vector<int64_t> argmax;
  const auto want = RefPool(is_max, c, xv, &argmax);
  ExpectNear(ToVector<float>(*out[0]), want, 1e-5);
  if (is_max) {
    EXPECT_EQ(ToVector<int64_t>(*out[1]), argmax);
    // Without the Indices output the kernel takes its row-wise path.
    ASSERT_TRUE(RunBoth(MakeNode(op, opset, attrs), {&x}, 1, &out).ok());
    ExpectNear(ToVector<float>(*out[0]), want, 1e-5);
  }
}

TEST(Pool, MaxPool2D) {
  CheckPool("MaxPool", {{2, 3, 7, 8}, {3, 3}, {2, 2}, {1, 1}, {1, 1, 1, 1}, false, {4, 4}},
            {{"strides", Ints({2, 2})}, {"pads", Ints({1, 1, 1, 1})}});
  CheckPool("MaxPool", {{1, 2, 9, 9}, {2, 3}, {1, 2}, {2, 1}, {0, 1, 1, 0}, false, {8, 4}},
            {{"strides", Ints({1, 2})}, {"dilations", Ints({2, 1})}, {"pads", Ints({0, 1, 1, 0})}});
}

TEST(Pool, MaxPoolCeilModeMatchesOnnxExample) {
  // onnx test_maxpool_2d_ceil / test_averagepool_2d_ceil.
  std::vector<float> xv(16);
  for (int i = 0; i < 16; ++i) xv[i] = static_cast<float>(i + 1);
  Tensor x = MakeTensor<float>({1, 1, 4, 4}, xv);
  std::map<std::string, Attribute> attrs{{"kernel_shape", Ints({3, 3})}, {"strides", Ints({2, 2})}, {"ceil_mode", Int(1)}};
  std::vector<std::unique_ptr<Tensor>> out;
  ASSERT_TRUE(RunBoth(MakeNode("MaxPool", 12, attrs), {&x}, 1, &out).ok());
  EXPECT_EQ(ToVector<float>(*out[0]), (std::vector<float>{11, 12, 15, 16}));
  ASSERT_TRUE(RunBoth(MakeNode("AveragePool", 12, attrs), {&x}, 1, &out).ok());
  EXPECT_EQ(ToVector<float>(*out[0]), (std::vector<float>{6, 7.5, 12, 13.5}));
  attrs.erase("ceil_mode");
  ASSERT_TRUE(RunBoth(MakeNode("MaxPool", 12, attrs), {&x}, 1, &out).ok());
  EXPECT_EQ(out[0]->dims(), (Dims{1, 1, 1, 1}));
}

TEST(Pool, MaxPoolCeilModeDropsWindowStartingInPad) {
  // in 5, k 2, s 2, pad 1+1: ceil((5+2-2)/2)+1 = 4, but window 3 would start at 5 (in the end pad).
  PoolCase c{{1, 1, 5, 5}, {2, 2}, {2, 2}, {1, 1}, {1, 1, 1, 1}, false, {3, 3}};
  CheckPool("MaxPool", c, {{"strides", Ints({2, 2})}, {"pads", Ints({1, 1, 1, 1})}, {"ceil_mode", Int(1)}});
}

TEST(Pool, MaxPoolStorageOrderColumnMajor) {
  std::vector<float> xv{1, 9, 3, 4, 5, 6};  // [1,1,2,3]
  Tensor x = MakeTensor<float>({1, 1, 2, 3}, xv);
  std::vector<std::unique_ptr<Tensor>> out;
  ASSERT_TRUE(RunBoth(MakeNode("MaxPool", 12, {{"kernel_shape", Ints({2, 2})}, {"storage_order", Int(1)}}), {&x}, 2, &out)
                  .ok());
  EXPECT_EQ(ToVector<float>(*out[0]), (std::vector<float>{9, 9}));
  // Row-major index of 9 is 1 (h 0, w 1); column-major is h + w*H = 2.
  EXPECT_EQ(ToVector<int64_t>(*out[1]), (std::vector<int64_t>{2, 2}));
}

TEST(Pool, MaxPoolInt8AndUint8) {
  Tensor x = MakeTensor<int8_t>({1, 1, 2, 2}, {-5, -3, -9, -4});
  std::vector<std::unique_ptr<Tensor>> out;
  ASSERT_TRUE(RunBoth(MakeNode("MaxPool", 12, {{"kernel_shape", Ints({2, 2})}}), {&x}, 1, &out).ok());
  EXPECT_EQ(ToVector<int8_t>(*out[0]), (std::vector<int8_t>{-3}));
  Tensor u = MakeTensor<uint8_t>({1, 1, 1, 3}, {7, 200, 3});
  ASSERT_TRUE(RunBoth(MakeNode("MaxPool", 12, {{"kernel_shape", Ints({1, 2})}}), {&u}, 1, &out).ok());
  EXPECT_EQ(ToVector<uint8_t>(*out[0]), (std::vector<uint8_t>{200, 200}));
}

TEST(Pool, AveragePoolPads) {
  PoolCase c{{2, 3, 6, 7}, {3, 3}, {2, 2}, {1, 1}, {1, 1, 1, 1}, false, {3, 4}};
  std::map<std::string, Attribute> attrs{{"strides", Ints({2, 2})}, {"pads", Ints({1, 1, 1, 1})}};
  CheckPool("AveragePool", c, attrs);
  c.include_pad = true;
  attrs["count_include_pad"] = Int(1);
  CheckPool("AveragePool", c, attrs);
}

TEST(Pool, AveragePoolCeilModeIncludePad) {
  // The last window runs past the end pad; those taps are not counted even with count_include_pad.
  PoolCase c{{1, 2, 5, 5}, {3, 3}, {2, 2}, {1, 1}, {1, 1, 0, 0}, true, {3, 3}};
  CheckPool("AveragePool", c,
            {{"strides", Ints({2, 2})}, {"pads", Ints({1, 1, 0, 0})}, {"ceil_mode", Int(1)},
             {"count_include_pad", Int(1)}});
}

TEST(Pool, AutoPadSameAndValid) {
  // in 7, k 3, s 2: SAME out 4, total pad 2 -> 1 + 1.  in 8: out 4, total 1 -> UPPER 0+1, LOWER 1+0.
  CheckPool("MaxPool", {{1, 2, 7, 8}, {3, 3}, {2, 2}, {1, 1}, {1, 0, 1, 1}, false, {4, 4}},
            {{"strides", Ints({2, 2})}, {"auto_pad", Str("SAME_UPPER")}});
  CheckPool("AveragePool", {{1, 2, 7, 8}, {3, 3}, {2, 2}, {1, 1}, {1, 1, 1, 0}, false, {4, 4}},
            {{"strides", Ints({2, 2})}, {"auto_pad", Str("SAME_LOWER")}});
  CheckPool("MaxPool", {{1, 2, 7, 8}, {3, 3}, {2, 2}, {1, 1}, {0, 0, 0, 0}, false, {3, 3}},
            {{"strides", Ints({2, 2})}, {"auto_pad", Str("VALID")}});
}

TEST(Pool, OneAndThreeDims) {
  CheckPool("MaxPool", {{2, 3, 11}, {3}, {2}, {1}, {1, 0}, false, {5}}, {{"strides", Ints({2})}, {"pads", Ints({1, 0})}});
  CheckPool("AveragePool", {{1, 2, 5, 6, 7}, {2, 3, 2}, {1, 2, 2}, {1, 1, 1}, {0, 1, 0, 1, 0, 1}, false, {5, 3, 4}},
            {{"strides", Ints({1, 2, 2})}, {"pads", Ints({0, 1, 0, 1, 0, 1})}});
  CheckPool("MaxPool", {{1, 2, 5, 6, 7}, {2, 3, 2}, {1, 2, 2}, {1, 1, 1}, {0, 1, 0, 1, 0, 1}, false, {5, 3, 4}},
            {{"strides", Ints({1, 2, 2})}, {"pads", Ints({0, 1, 0, 1, 0, 1})}});
}

TEST(Pool, GlobalPools) {
  auto xv = Random(2 * 3 * 4 * 5, 9);
  Tensor x = MakeTensor<float>({2, 3, 4, 5}, xv);
  std::vector<std::unique_ptr<Tensor>> avg, mx;
  ASSERT_TRUE(RunBoth(MakeNode("GlobalAveragePool", 1), {&x}, 1, &avg).ok());
  ASSERT_TRUE(RunBoth(MakeNode("GlobalMaxPool", 1), {&x}, 1, &mx).ok());
  EXPECT_EQ(avg[0]->dims(), (Dims{2, 3, 1, 1}));
  EXPECT_EQ(mx[0]->dims(), (Dims{2, 3, 1, 1}));
  for (int p = 0; p < 6; ++p) {
    double s = 0;
    float m = -1e30f;
    for (int i = 0; i < 20; ++i) s += xv[p * 20 + i], m = std::max(m, xv[p * 20 + i]);
    EXPECT_NEAR(avg[0]->data<float>()[p], s / 20, 1e-5);
    EXPECT_EQ(mx[0]->data<float>()[p], m);
  }
}

TEST(Pool, BadInputsAreErrors) {
  Tensor x = MakeTensor<float>({1, 1, 2, 2}, {1, 2, 3, 4});
  std::vector<std::unique_ptr<Tensor>> out;
  Status s = RunCpuKernel(MakeNode("MaxPool", 12, {{"kernel_shape", Ints({3, 3})}}), {&x}, 1, &out);
  EXPECT_EQ(s.code(), ErrorCode::kInvalidArgument) << s.message();
  s = RunCpuKernel(MakeNode("MaxPool", 12, {{"kernel_shape", Ints({2})}}), {&x}, 1, &out);
  EXPECT_EQ(s.code(), ErrorCode::kInvalidArgument) << s.message();
  s = RunCpuKernel(MakeNode("MaxPool", 12), {&x}, 1, &out);
  EXPECT_EQ(s.code(), ErrorCode::kInvalidGraph) << s.message();
  s = RunCpuKernel(MakeNode("AveragePool", 12, {{"kernel_shape", Ints({1, 1})}, {"pads", Ints({1})}}), {&x}, 1, &out);
  EXPECT_EQ(s.code(), ErrorCode::kInvalidGraph) << s.message();
}

// ---------------------------------------------------------------- BatchNormalization

TEST(BatchNorm, InferenceMatchesFormula) {
  const int64_t N = 2, C = 3, S = 20;
  auto xv = Random(N * C * S, 1), sv = Random(C, 2), bv = Random(C, 3), mv = Random(C, 4), vv = Random(C, 5);
  for (auto& v : vv) v = std::fabs(v) + 0.1f;
  Tensor x = MakeTensor<float>({N, C, 4, 5}, xv), sc = MakeTensor<float>({C}, sv), b = MakeTensor<float>({C}, bv),
         m = MakeTensor<float>({C}, mv), var = MakeTensor<float>({C}, vv);
  for (int opset : {7, 9, 14, 15}) {
    std::vector<std::unique_ptr<Tensor>> out;
    Status s = RunBoth(MakeNode("BatchNormalization", opset, {{"epsilon", Float(1e-3f)}}), {&x, &sc, &b, &m, &var}, 1, &out);
    ASSERT_TRUE(s.ok()) << s.message();
    std::vector<float> want(xv.size());
    for (int64_t n = 0; n < N; ++n)
      for (int64_t c = 0; c < C; ++c)
        for (int64_t i = 0; i < S; ++i) {
          const int64_t at = (n * C + c) * S + i;
          want[at] = (xv[at] - mv[c]) / std::sqrt(vv[c] + 1e-3f) * sv[c] + bv[c];
        }
    ExpectNear(ToVector<float>(*out[0]), want, 1e-5);
  }
}

TEST(BatchNorm, NonSpatialOpset7) {
  auto xv = Random(2 * 6, 1), sv = Random(6, 2), bv = Random(6, 3), mv = Random(6, 4), vv = Random(6, 5);
  for (auto& v : vv) v = std::fabs(v) + 0.1f;
  Tensor x = MakeTensor<float>({2, 3, 2}, xv), sc = MakeTensor<float>({3, 2}, sv), b = MakeTensor<float>({3, 2}, bv),
         m = MakeTensor<float>({3, 2}, mv), var = MakeTensor<float>({3, 2}, vv);
  std::vector<std::unique_ptr<Tensor>> out;
  ASSERT_TRUE(RunBoth(MakeNode("BatchNormalization", 7, {{"spatial", Int(0)}}), {&x, &sc, &b, &m, &var}, 1, &out).ok());
  std::vector<float> want(12);
  for (int i = 0; i < 12; ++i) want[i] = (xv[i] - mv[i % 6]) / std::sqrt(vv[i % 6] + 1e-5f) * sv[i % 6] + bv[i % 6];
  ExpectNear(ToVector<float>(*out[0]), want, 1e-5);
}

TEST(BatchNorm, ErrorsAreClear) {
  Tensor x = MakeTensor<float>({1, 2, 2}, Random(4, 1)), p2 = MakeTensor<float>({2}, {1, 1}),
         p3 = MakeTensor<float>({3}, {1, 1, 1});
  std::vector<std::unique_ptr<Tensor>> out;
  // Training mode with only Y asked for: the running statistics are not written.
  Status s = RunCpuKernel(MakeNode("BatchNormalization", 15, {{"training_mode", Int(1)}}), {&x, &p2, &p2, &p2, &p2}, 1,
                          &out);
  EXPECT_TRUE(s.ok()) << s.message();
  s = RunCpuKernel(MakeNode("BatchNormalization", 15), {&x, &p2, &p3, &p2, &p2}, 1, &out);
  EXPECT_EQ(s.code(), ErrorCode::kInvalidArgument) << s.message();
  s = RunCpuKernel(MakeNode("BatchNormalization", 15), {&x, &p2, &p2, &p2}, 1, &out);
  EXPECT_EQ(s.code(), ErrorCode::kInvalidArgument) << s.message();
}

// ---------------------------------------------------------------- LayerNormalization

void RefLayerNorm(const std::vector<float>& x, int64_t rows, int64_t cols, const std::vector<float>& scale,
                  const std::vector<float>* bias, float eps, std::vector<float>* y, std::vector<float>* mean,
                  std::vector<float>* inv) {
  y->resize(x.size());
  mean->resize(rows);
  inv->resize(rows);
  for (int64_t r = 0; r < rows; ++r) {
    double m = 0, v = 0;
    for (int64_t i = 0; i < cols; ++i) m += x[r * cols + i];
    m /= cols;
    for (int64_t i = 0; i < cols; ++i) v += (x[r * cols + i] - m) * (x[r * cols + i] - m);
    const double is = 1.0 / std::sqrt(v / cols + eps);
    (*mean)[r] = static_cast<float>(m);
    (*inv)[r] = static_cast<float>(is);
    for (int64_t i = 0; i < cols; ++i)
      (*y)[r * cols + i] = static_cast<float>((x[r * cols + i] - m) * is * scale[i] + (bias ? (*bias)[i] : 0.0));
  }
}

TEST(LayerNorm, LastAxisWithStats) {
  auto xv = Random(2 * 3 * 16, 1), sv = Random(16, 2), bv = Random(16, 3);
  for (auto& v : xv) v = v * 3 + 10;  // a large mean
  Tensor x = MakeTensor<float>({2, 3, 16}, xv), sc = MakeTensor<float>({16}, sv), b = MakeTensor<float>({16}, bv);
  std::vector<std::unique_ptr<Tensor>> out;
  Status s = RunBoth(MakeNode("LayerNormalization", 17, {{"epsilon", Float(1e-4f)}}), {&x, &sc, &b}, 3, &out);
  ASSERT_TRUE(s.ok()) << s.message();
  std::vector<float> y, m, inv;
  RefLayerNorm(xv, 6, 16, sv, &bv, 1e-4f, &y, &m, &inv);
  ExpectNear(ToVector<float>(*out[0]), y, 1e-4);
  EXPECT_EQ(out[1]->dims(), (Dims{2, 3, 1}));
  ExpectNear(ToVector<float>(*out[1]), m, 1e-5);
  ExpectNear(ToVector<float>(*out[2]), inv, 1e-4);
}

TEST(LayerNorm, InnerAxisNoBiasBroadcastScale) {
  auto xv = Random(2 * 3 * 4, 4), sv = Random(4, 5);
  Tensor x = MakeTensor<float>({2, 3, 4}, xv), sc = MakeTensor<float>({4}, sv);
  std::vector<std::unique_ptr<Tensor>> out;
  // axis 1: normalize over [3,4]; Scale [4] broadcasts along the 3.
  Status s = RunBoth(MakeNode("LayerNormalization", 17, {{"axis", Int(1)}}), {&x, &sc}, 1, &out);
  ASSERT_TRUE(s.ok()) << s.message();
  std::vector<float> full(12);
  for (int i = 0; i < 12; ++i) full[i] = sv[i % 4];
  std::vector<float> y, m, inv;
  RefLayerNorm(xv, 2, 12, full, nullptr, 1e-5f, &y, &m, &inv);
  ExpectNear(ToVector<float>(*out[0]), y, 1e-4);
}

TEST(LayerNorm, Errors) {
  Tensor x = MakeTensor<float>({2, 4}, Random(8, 1)), sc = MakeTensor<float>({3}, {1, 1, 1});
  std::vector<std::unique_ptr<Tensor>> out;
  Status s = RunCpuKernel(MakeNode("LayerNormalization", 17), {&x, &sc}, 1, &out);
  EXPECT_EQ(s.code(), ErrorCode::kInvalidArgument) << s.message();
  Tensor sc4 = MakeTensor<float>({4}, {1, 1, 1, 1});
  s = RunCpuKernel(MakeNode("LayerNormalization", 17, {{"axis", Int(2)}}), {&x, &sc4}, 1, &out);
  EXPECT_EQ(s.code(), ErrorCode::kInvalidArgument) << s.message();
}

// ---------------------------------------------------------------- Gemm

TEST(Gemm, AllTransposesAndBroadcastC) {
  const int64_t M = 5, N = 7, K = 6;
  auto av = Random(M * K, 1), bv = Random(K * N, 2);
  const std::vector<Dims> c_shapes{{}, {1}, {N}, {1, N}, {M, 1}, {M, N}};
  for (int ta = 0; ta < 2; ++ta)
    for (int tb = 0; tb < 2; ++tb)
      for (int with_c = 0; with_c <= static_cast<int>(c_shapes.size()); ++with_c) {
        Tensor a = MakeTensor<float>(ta ? Dims{K, M} : Dims{M, K}, av);
        Tensor b = MakeTensor<float>(tb ? Dims{N, K} : Dims{K, N}, bv);
        Dims cd = with_c ? c_shapes[with_c - 1] : Dims{};
        auto cv = Random(ShapeSize(cd), 3);
        Tensor c = MakeTensor<float>(cd, cv);
        std::vector<const Tensor*> in{&a, &b};
        if (with_c) in.push_back(&c);
        std::vector<std::unique_ptr<Tensor>> out;
        Status s = RunBoth(MakeNode("Gemm", 13,
                                {{"transA", Int(ta)}, {"transB", Int(tb)}, {"alpha", Float(0.5f)}, {"beta", Float(2.f)}}),
                       in, 1, &out);
        ASSERT_TRUE(s.ok()) << s.message();
        std::vector<float> want(M * N);
        for (int64_t i = 0; i < M; ++i)
          for (int64_t j = 0; j < N; ++j) {
            double acc = 0;
            for (int64_t k = 0; k < K; ++k) acc += av[ta ? k * M + i : i * K + k] * bv[tb ? j * K + k : k * N + j];
            double cval = 0;
            if (with_c) {
              const int64_t ci = cd.size() == 2 ? (cd[0] == 1 ? 0 : i) : 0;
              const int64_t cj = cd.empty() || cd.back() == 1 ? 0 : j;
              cval = cv[ci * (cd.empty() ? 1 : cd.back()) + cj];
            }
            want[i * N + j] = static_cast<float>(0.5 * acc + 2.0 * cval);
          }
        EXPECT_EQ(out[0]->dims(), (Dims{M, N}));
        ExpectNear(ToVector<float>(*out[0]), want, 1e-5);
      }
}

TEST(Gemm, IntegerAndDouble) {
  Tensor a = MakeTensor<int32_t>({2, 3}, {1, 2, 3, 4, 5, 6}), b = MakeTensor<int32_t>({3, 2}, {1, 0, 0, 1, 1, 1});
  Tensor c = MakeTensor<int32_t>({2}, {10, 20});
  std::vector<std::unique_ptr<Tensor>> out;
  ASSERT_TRUE(RunBoth(MakeNode("Gemm", 13), {&a, &b, &c}, 1, &out).ok());
  EXPECT_EQ(ToVector<int32_t>(*out[0]), (std::vector<int32_t>{14, 25, 20, 31}));
  Tensor ad = MakeTensor<double>({1, 2}, {1.5, 2}), bd = MakeTensor<double>({2, 1}, {2, 0.25});
  ASSERT_TRUE(RunBoth(MakeNode("Gemm", 13, {{"alpha", Float(2.f)}}), {&ad, &bd}, 1, &out).ok());
  EXPECT_EQ(ToVector<double>(*out[0]), (std::vector<double>{7.0}));
}

TEST(Gemm, EmptyInnerDimGivesBetaC) {
  Tensor a(ElemType::kFloat, {2, 0}), b(ElemType::kFloat, {0, 3});
  Tensor c = MakeTensor<float>({3}, {1, 2, 3});
  std::vector<std::unique_ptr<Tensor>> out;
  ASSERT_TRUE(RunBoth(MakeNode("Gemm", 13, {{"beta", Float(2.f)}}), {&a, &b, &c}, 1, &out).ok());
  EXPECT_EQ(ToVector<float>(*out[0]), (std::vector<float>{2, 4, 6, 2, 4, 6}));
}

TEST(Gemm, Errors) {
  Tensor a = MakeTensor<float>({2, 3}, Random(6, 1)), b = MakeTensor<float>({2, 3}, Random(6, 2));
  Tensor c = MakeTensor<float>({3, 3}, Random(9, 3));
  std::vector<std::unique_ptr<Tensor>> out;
  Status s = RunCpuKernel(MakeNode("Gemm", 13), {&a, &b}, 1, &out);
  EXPECT_EQ(s.code(), ErrorCode::kInvalidArgument);
  EXPECT_NE(s.message().find("[2,3]"), std::string::npos) << s.message();
  s = RunCpuKernel(MakeNode("Gemm", 13, {{"transB", Int(1)}}), {&a, &b, &c}, 1, &out);
  EXPECT_EQ(s.code(), ErrorCode::kInvalidArgument) << s.message();
  s = RunCpuKernel(MakeNode("Gemm", 13, {{"transA", Int(2)}}), {&a, &b}, 1, &out);
  EXPECT_EQ(s.code(), ErrorCode::kInvalidGraph) << s.message();
}

// ---------------------------------------------------------------- MatMul

// numpy.matmul written out: promote 1-D, broadcast batch dims, drop promoted dims.
template <typename T>
std::vector<T> RefMatMul(const std::vector<T>& a, Dims ad, const std::vector<T>& b, Dims bd, Dims* od) {
  const bool av = ad.size() == 1, bvec = bd.size() == 1;
  if (av) ad.insert(ad.begin(), 1);
  if (bvec) bd.push_back(1);
  const int64_t M = ad[ad.size() - 2], K = ad.back(), N = bd.back();
  const size_t r = std::max(ad.size(), bd.size()) - 2;
  Dims ab(r, 1), bb(r, 1), ob(r);
  for (size_t i = 0; i < ad.size() - 2; ++i) ab[r - (ad.size() - 2) + i] = ad[i];
  for (size_t i = 0; i < bd.size() - 2; ++i) bb[r - (bd.size() - 2) + i] = bd[i];
  for (size_t i = 0; i < r; ++i) ob[i] = std::max(ab[i], bb[i]);
  *od = ob;
  if (!av) od->push_back(M);
  if (!bvec) od->push_back(N);
  const int64_t batches = ShapeSize(ob);
  std::vector<T> y(batches * M * N);
  for (int64_t n = 0; n < batches; ++n) {
    int64_t ia = 0, ib = 0, rem = n;
    std::vector<int64_t> idx(r);
    for (size_t i = r; i-- > 0;) idx[i] = rem % ob[i], rem /= ob[i];
    for (size_t i = 0; i < r; ++i) {
      ia = ia * ab[i] + (ab[i] == 1 ? 0 : idx[i]);
      ib = ib * bb[i] + (bb[i] == 1 ? 0 : idx[i]);
    }
    for (int64_t i = 0; i < M; ++i)
      for (int64_t j = 0; j < N; ++j) {
        T acc = 0;
        for (int64_t k = 0; k < K; ++k) acc += a[(ia * M + i) * K + k] * b[(ib * K + k) * N + j];
        y[(n * M + i) * N + j] = acc;
      }
  }
  return y;
}

void CheckMatMul(const Dims& ad, const Dims& bd) {
  auto av = Random(ShapeSize(ad), 1), bv = Random(ShapeSize(bd), 2);
  Tensor a = MakeTensor<float>(ad, av), b = MakeTensor<float>(bd, bv);
  std::vector<std::unique_ptr<Tensor>> out;
  Status s = RunBoth(MakeNode("MatMul", 13), {&a, &b}, 1, &out);
  ASSERT_TRUE(s.ok()) << ShapeToString(ad) << " x " << ShapeToString(bd) << ": " << s.message();
  Dims od;
  auto want = RefMatMul(av, ad, bv, bd, &od);
  EXPECT_EQ(out[0]->dims(), od) << ShapeToString(ad) << " x " << ShapeToString(bd);
  ExpectNear(ToVector<float>(*out[0]), want, 1e-5);
}

TEST(MatMul, OneDimensionalOperands) {
  CheckMatMul({5}, {5});        // -> scalar
  CheckMatMul({5}, {5, 3});     // -> [3]
  CheckMatMul({4, 5}, {5});     // -> [4]
  CheckMatMul({5}, {2, 5, 3});  // -> [2,3]
  CheckMatMul({2, 4, 5}, {5});  // -> [2,4]
}

TEST(MatMul, BatchedAndBroadcast) {
  CheckMatMul({4, 5}, {5, 6});
  CheckMatMul({2, 3, 4, 5}, {5, 6});        // folded into one GEMM
  CheckMatMul({2, 3, 4, 5}, {1, 1, 5, 6});  // folded too (B's batch dims are all 1)
  CheckMatMul({2, 3, 4, 5}, {2, 3, 5, 6});
  CheckMatMul({2, 1, 4, 5}, {3, 5, 6});
  CheckMatMul({4, 5}, {2, 5, 3});
  CheckMatMul({1, 3, 1, 4, 5}, {2, 1, 2, 5, 3});
  CheckMatMul({2, 12, 16, 8}, {2, 12, 8, 16});  // attention-like, many small GEMMs
  CheckMatMul({2, 64, 96}, {2, 96, 80});        // above OpenBLAS's single-thread size
}

TEST(MatMul, IntegerTypesAndEmpty) {
  std::vector<int64_t> av{1, 2, 3, 4, 5, 6}, bv{1, -1, 2, 0, 0, 3};
  Tensor a = MakeTensor<int64_t>({2, 3}, av), b = MakeTensor<int64_t>({3, 2}, bv);
  std::vector<std::unique_ptr<Tensor>> out;
  ASSERT_TRUE(RunBoth(MakeNode("MatMul", 13), {&a, &b}, 1, &out).ok());
  Dims od;
  EXPECT_EQ(ToVector<int64_t>(*out[0]), RefMatMul(av, {2, 3}, bv, {3, 2}, &od));
  Tensor e(ElemType::kFloat, {0, 3}), f = MakeTensor<float>({3, 2}, Random(6, 1));
  ASSERT_TRUE(RunBoth(MakeNode("MatMul", 13), {&e, &f}, 1, &out).ok());
  EXPECT_EQ(out[0]->dims(), (Dims{0, 2}));
  Tensor g(ElemType::kFloat, {2, 0}), h(ElemType::kFloat, {0, 3});
  ASSERT_TRUE(RunBoth(MakeNode("MatMul", 13), {&g, &h}, 1, &out).ok());
  EXPECT_EQ(ToVector<float>(*out[0]), std::vector<float>(6, 0.f));
}

TEST(MatMul, Errors) {
  Tensor a = MakeTensor<float>({2, 3}, Random(6, 1)), b = MakeTensor<float>({4, 2}, Random(8, 2));
  std::vector<std::unique_ptr<Tensor>> out;
  Status s = RunCpuKernel(MakeNode("MatMul", 13), {&a, &b}, 1, &out);
  EXPECT_EQ(s.code(), ErrorCode::kInvalidArgument);
  EXPECT_NE(s.message().find("[2,3]"), std::string::npos) << s.message();
  Tensor c = MakeTensor<float>({2, 2, 3}, Random(12, 1)), d = MakeTensor<float>({3, 3, 2}, Random(18, 2));
  s = RunCpuKernel(MakeNode("MatMul", 13), {&c, &d}, 1, &out);
  EXPECT_EQ(s.code(), ErrorCode::kInvalidArgument) << s.message();
  Tensor scalar = MakeTensor<float>({}, {1});
  s = RunCpuKernel(MakeNode("MatMul", 13), {&scalar, &a}, 1, &out);
  EXPECT_EQ(s.code(), ErrorCode::kInvalidArgument) << s.message();
}

}  // namespace
}  // namespace onyx
