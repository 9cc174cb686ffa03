// com.microsoft FusedConv (the Conv kernel with an activation and optional sum
// input Z): each activation on each Conv path against plain Conv followed by
// the activation computed here in double.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>

#include "core/graph/shape_inference.h"
#include "tests/unit/kernel_test_util.h"

namespace onyx {
namespace {

using testing::MakeNode;
using testing::Run1;
using testing::RunCpuKernel;
using testing::SetInt;
using testing::SetInts;
using testing::ToVector;

struct Act {
  const char* name;
  std::vector<float> params;
};

double Apply(const Act& a, double v) {
  const std::string n = a.name;
  if (n == "Relu") return v > 0 ? v : 0;
  if (n == "Sigmoid") return 1 / (1 + std::exp(-v));
  if (n == "Tanh") return std::tanh(v);
  if (n == "LeakyRelu") return v < 0 ? v * a.params[0] : v;
  if (n == "Clip") return std::min<double>(std::max<double>(v, a.params[0]), a.params[1]);
  if (n == "HardSigmoid") return std::min(1.0, std::max(0.0, a.params[0] * v + a.params[1]));
  ADD_FAILURE() << "no reference for " << n;
  return 0;
}

Node FusedNode(const Act& a) {
  Node n = MakeNode("FusedConv", 1);
  n.domain = "com.microsoft";
  Attribute kind;
  kind.type = Attribute::Type::kString;
  kind.s = a.name;
  n.attrs["activation"] = kind;
  if (!a.params.empty()) {
    Attribute p;
    p.type = Attribute::Type::kFloats;
    p.floats = a.params;
    n.attrs["activation_params"] = p;
  }
  return n;
}

Tensor Random(const Dims& dims, uint32_t seed, float scale = 1.f) {
  Tensor t(ElemType::kFloat, dims);
  std::mt19937 rng(seed);
  std::normal_distribution<float> nd(0.f, scale);
  for (int64_t i = 0; i < t.size(); ++i) t.data<float>()[i] = nd(rng);
  return t;
}

struct Geometry {
  const char* what;
  Dims x, w;
  int64_t group;
  std::vector<int64_t> pads, strides;
};

const std::vector<Geometry>& Geometries() {
  static const std::vector<Geometry> g = {
      {"im2col", {2, 3, 9, 8}, {5, 3, 3, 3}, 1, {1, 1, 1, 1}, {2, 1}},
      {"pointwise", {2, 6, 7, 7}, {4, 6, 1, 1}, 1, {0, 0, 0, 0}, {1, 1}},
      {"depthwise 3x3 fast", {1, 4, 10, 11}, {4, 1, 3, 3}, 4, {1, 1, 1, 1}, {2, 2}},
      {"depthwise 5x5", {1, 4, 9, 9}, {4, 1, 5, 5}, 4, {2, 2, 2, 2}, {1, 1}},
      {"1-D grouped", {3, 4, 13}, {6, 2, 3}, 2, {1, 0}, {1}},
  };
  return g;
}

const std::vector<Act>& Activations() {
  static const std::vector<Act> a = {{"Relu", {}},           {"Sigmoid", {}},
                                     {"Tanh", {}},           {"LeakyRelu", {0.15f}},
                                     {"Clip", {-0.5f, 0.75f}}, {"HardSigmoid", {0.3f, 0.4f}}};
  return a;
}

void SetGeometry(Node& n, const Geometry& g) {
  SetInt(n, "group", g.group);
  SetInts(n, "pads", g.pads);
  SetInts(n, "strides", g.strides);
}

TEST(FusedConv, EveryActivationOnEveryPath) {
  uint32_t seed = 1;
  for (const Geometry& geo : Geometries()) {
    Tensor x = Random(geo.x, seed++);
    Tensor w = Random(geo.w, seed++, 0.5f);
    Tensor b = Random({geo.w[0]}, seed++);
    Node conv = MakeNode("Conv", 11);
    SetGeometry(conv, geo);
    const Tensor plain = Run1(conv, {&x, &w, &b});
    ASSERT_GT(plain.size(), 0) << geo.what;
    for (bool with_z : {false, true}) {
      Tensor z = Random(plain.dims(), seed++);
      for (const Act& act : Activations()) {
        Node fused = FusedNode(act);
        SetGeometry(fused, geo);
        std::vector<const Tensor*> in = {&x, &w, &b};
        if (with_z) in.push_back(&z);
        const Tensor got = Run1(fused, in);
        ASSERT_EQ(got.dims(), plain.dims()) << geo.what << " " << act.name;
        for (int64_t i = 0; i < got.size(); ++i) {
          const double pre = plain.data<float>()[i] + (with_z ? z.data<float>()[i] : 0.f);
          const double want = Apply(act, pre);
          ASSERT_NEAR(got.data<float>()[i], want, 2e-6 * (1 + std::fabs(pre)))
              << geo.what << ", " << act.name << (with_z ? " with Z" : "") << ", element " << i;
        }
      }
    }
  }
}

TEST(FusedConv, DoubleToo) {
  Tensor x(ElemType::kDouble, {1, 2, 4, 4});
  Tensor w(ElemType::kDouble, {3, 2, 3, 3});
  for (int64_t i = 0; i < x.size(); ++i) x.data<double>()[i] = std::sin(0.7 * i);
  for (int64_t i = 0; i < w.size(); ++i) w.data<double>()[i] = std::cos(0.3 * i);
  Node conv = MakeNode("Conv", 11);
  const Tensor plain = Run1(conv, {&x, &w});
  const Tensor got = Run1(FusedNode({"Tanh", {}}), {&x, &w});
  ASSERT_EQ(got.size(), plain.size());
  for (int64_t i = 0; i < got.size(); ++i) EXPECT_NEAR(got.data<double>()[i], std::tanh(plain.data<double>()[i]), 1e-12);
}

TEST(FusedConv, PlainConvIgnoresTheFusedAttributes) {
  // Only FusedConv reads them; a stray attribute on ai.onnx Conv changes nothing.
  Tensor x = Random({1, 2, 5, 5}, 11);
  Tensor w = Random({3, 2, 3, 3}, 12);
  Node conv = MakeNode("Conv", 11);
  const Tensor want = Run1(conv, {&x, &w});
  Node odd = FusedNode({"Relu", {}});
  odd.op_type = "Conv";
  odd.domain = "";
  odd.since_version = 11;
  const Tensor got = Run1(odd, {&x, &w});
  EXPECT_EQ(ToVector<float>(got), ToVector<float>(want));
  bool negative = false;
  for (float v : ToVector<float>(got)) negative = negative || v < 0;
  EXPECT_TRUE(negative);  // no Relu was applied
}

TEST(FusedConv, BadActivationsAndZAreErrors) {
  Tensor x = Random({1, 2, 5, 5}, 21);
  Tensor w = Random({3, 2, 3, 3}, 22);
  std::vector<std::unique_ptr<Tensor>> out;

  Node n = FusedNode({"Clip", {0.f}});
  n.name = "fc";
  Status s = RunCpuKernel(n, {&x, &w}, 1, &out);
  EXPECT_EQ(s.code(), ErrorCode::kInvalidGraph);
  EXPECT_NE(s.message().find("'fc'"), std::string::npos) << s.message();
  EXPECT_NE(s.message().find("activation_params"), std::string::npos) << s.message();

  s = RunCpuKernel(FusedNode({"Softsign", {}}), {&x, &w}, 1, &out);
  EXPECT_EQ(s.code(), ErrorCode::kNotImplemented);
  EXPECT_NE(s.message().find("Softsign"), std::string::npos) << s.message();

  Tensor z = Random({1, 3, 3, 4}, 23);  // output is [1, 3, 3, 3]
  s = RunCpuKernel(FusedNode({"Relu", {}}), {&x, &w, nullptr, &z}, 1, &out);
  EXPECT_EQ(s.code(), ErrorCode::kInvalidArgument);
  EXPECT_NE(s.message().find("[1,3,3,4]"), std::string::npos) << s.message();
}

TEST(FusedConv, ShapeInferenceFollowsConv) {
  // A saved optimized model is read back through inference: FusedConv's
  // output gets Conv's type and shape, symbolic batch included.
  Graph g;
  g.name = "fused";
  g.inputs.push_back({"X", TypeInfo::Tensor(ElemType::kFloat, {Dim::Symbol("N"), Dim::Of(3), Dim::Of(9), Dim::Of(8)}), ""});
  g.value_types["X"] = g.inputs[0].type;
  g.initializers["W"] = std::make_shared<Tensor>(Random({5, 3, 3, 3}, 31));
  Node n = FusedNode({"Relu", {}});
  n.name = "fc";
  n.inputs = {"X", "W"};
  n.outputs = {"Y"};
  SetInts(n, "strides", {2, 1});
  SetInts(n, "pads", {1, 1, 1, 1});
  g.nodes.push_back(n);
  g.outputs.push_back({"Y", TypeInfo(), ""});
  ASSERT_TRUE(g.Finalize().ok());
  Status s = InferTypesAndShapes(g);
  ASSERT_TRUE(s.ok()) << s.message();
  ASSERT_EQ(g.value_types.count("Y"), 1u);
  EXPECT_EQ(g.value_types["Y"].ToString(), "tensor(float)");
  EXPECT_EQ(ShapeString(g.value_types["Y"]), "[N,5,5,8]");
}

}  // namespace
}  // namespace onyx
