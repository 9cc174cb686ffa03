// ai.onnx.ml LinearClassifier and Normalizer kernels (providers/cpu/ml), as
// skl2onnx uses them for LogisticRegression; ZipMap is in sequence_test.cc.
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "core/graph/shape_inference.h"
#include "tests/unit/kernel_test_util.h"

namespace onyx {
namespace {

using testing::MakeTensor;
using testing::RunCpuKernel;
using testing::ToVector;

Node MlNode(const std::string& op) {
  Node n = testing::MakeNode(op, 1);
  n.domain = "ai.onnx.ml";
  n.name = "m";
  return n;
}

void SetFloats(Node& n, const std::string& k, std::vector<float> v) {
  Attribute a;
  a.type = Attribute::Type::kFloats;
  a.floats = std::move(v);
  n.attrs[k] = a;
}

void SetString(Node& n, const std::string& k, const std::string& v) {
  Attribute a;
  a.type = Attribute::Type::kString;
  a.s = v;
  n.attrs[k] = a;
}

void SetStrings(Node& n, const std::string& k, std::vector<std::string> v) {
  Attribute a;
  a.type = Attribute::Type::kStrings;
  a.strings = std::move(v);
  n.attrs[k] = a;
}

// Three classes over two features: scores = [x0, x1 + 0.5, x0 + x1 - 1].
Node ThreeClasses(const std::string& post) {
  Node n = MlNode("LinearClassifier");
  testing::SetInts(n, "classlabels_ints", {10, 20, 30});
  SetFloats(n, "coefficients", {1, 0, 0, 1, 1, 1});
  SetFloats(n, "intercepts", {0, 0.5f, -1});
  SetString(n, "post_transform", post);
  return n;
}

void ExpectNear(const std::vector<float>& got, const std::vector<float>& want) {
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < got.size(); ++i) EXPECT_NEAR(got[i], want[i], 1e-6f) << "at " << i;
}

float Sigmoid(float v) { return 1.f / (1.f + std::exp(-v)); }

TEST(LinearClassifier, MultiClassScoresAndLabels) {
  Tensor x = MakeTensor<float>({2, 2}, {1, 2, 3, -1});  // scores [1, 2.5, 2] and [3, -0.5, 1]
  std::vector<std::unique_ptr<Tensor>> out;
  Status s = RunCpuKernel(ThreeClasses("NONE"), {&x}, 2, &out);
  ASSERT_TRUE(s.ok()) << s.message();
  EXPECT_EQ(out[0]->dims(), Dims{2});
  EXPECT_EQ(ToVector<int64_t>(*out[0]), std::vector<int64_t>({20, 10}));
  EXPECT_EQ(out[1]->dims(), (Dims{2, 3}));
  ExpectNear(ToVector<float>(*out[1]), {1, 2.5f, 2, 3, -0.5f, 1});

  ASSERT_TRUE(RunCpuKernel(ThreeClasses("LOGISTIC"), {&x}, 2, &out).ok());
  EXPECT_EQ(ToVector<int64_t>(*out[0]), std::vector<int64_t>({20, 10}));
  ExpectNear(ToVector<float>(*out[1]),
             {Sigmoid(1), Sigmoid(2.5f), Sigmoid(2), Sigmoid(3), Sigmoid(-0.5f), Sigmoid(1)});

  ASSERT_TRUE(RunCpuKernel(ThreeClasses("SOFTMAX"), {&x}, 2, &out).ok());
  const float d0 = std::exp(1.f) + std::exp(2.5f) + std::exp(2.f), d1 = std::exp(3.f) + std::exp(-0.5f) + std::exp(1.f);
  ExpectNear(ToVector<float>(*out[1]), {std::exp(1.f) / d0, std::exp(2.5f) / d0, std::exp(2.f) / d0,
                                        std::exp(3.f) / d1, std::exp(-0.5f) / d1, std::exp(1.f) / d1});

  // SOFTMAX_ZERO leaves a zero score at zero probability.
  Tensor z = MakeTensor<float>({1, 2}, {0, 0.5f});  // scores [0, 1, -0.5]
  ASSERT_TRUE(RunCpuKernel(ThreeClasses("SOFTMAX_ZERO"), {&z}, 2, &out).ok());
  const float dz = std::exp(1.f) + std::exp(-0.5f);
  ExpectNear(ToVector<float>(*out[1]), {0, std::exp(1.f) / dz, std::exp(-0.5f) / dz});

  // PROBIT maps 0.5 to 0 and 0.975 to 1.959 (the approximation's 1.96).
  Node probit = ThreeClasses("PROBIT");
  Tensor p = MakeTensor<float>({1, 2}, {0.5f, 0.475f});  // scores [0.5, 0.975, -0.025]
  ASSERT_TRUE(RunCpuKernel(probit, {&p}, 2, &out).ok());
  EXPECT_NEAR(out[1]->data<float>()[0], 0.f, 1e-6f);
  EXPECT_NEAR(out[1]->data<float>()[1], 1.959049f, 1e-5f);
  EXPECT_EQ(ToVector<int64_t>(*out[0]), std::vector<int64_t>({20}));

  // Ties go to the first class; integer and 1-D inputs work alike.
  Tensor ints = MakeTensor<int64_t>({2}, {0, 0});  // scores [0, 0.5, -1]
  ASSERT_TRUE(RunCpuKernel(ThreeClasses("NONE"), {&ints}, 2, &out).ok());
  EXPECT_EQ(out[0]->dims(), Dims{1});
  EXPECT_EQ(out[1]->dims(), (Dims{1, 3}));
  EXPECT_EQ(ToVector<int64_t>(*out[0]), std::vector<int64_t>({20}));
  Node tie = ThreeClasses("NONE");
  SetFloats(tie, "intercepts", {0, 0, 0});
  ASSERT_TRUE(RunCpuKernel(tie, {&ints}, 2, &out).ok());
  EXPECT_EQ(ToVector<int64_t>(*out[0]), std::vector<int64_t>({10}));
}

TEST(LinearClassifier, BinaryWritesBothClasses) {
  Node n = MlNode("LinearClassifier");
  SetStrings(n, "classlabels_strings", {"no", "yes"});
  SetFloats(n, "coefficients", {1, -1});
  SetFloats(n, "intercepts", {0.5f});
  Tensor x = MakeTensor<float>({3, 2}, {1, 2, 2, 0, 0, 0.5f});  // scores -0.5, 2.5, 0
  std::vector<std::unique_ptr<Tensor>> out;
  SetString(n, "post_transform", "LOGISTIC");
  Status s = RunCpuKernel(n, {&x}, 2, &out);
  ASSERT_TRUE(s.ok()) << s.message();
  // A zero score is not positive: the first label.
  EXPECT_EQ(ToVector<std::string>(*out[0]), std::vector<std::string>({"no", "yes", "no"}));
  EXPECT_EQ(out[1]->dims(), (Dims{3, 2}));
  ExpectNear(ToVector<float>(*out[1]),
             {1 - Sigmoid(-0.5f), Sigmoid(-0.5f), 1 - Sigmoid(2.5f), Sigmoid(2.5f), 0.5f, 0.5f});
  // Untransformed, as onnxruntime writes it: [1 - s, s].
  SetString(n, "post_transform", "NONE");
  ASSERT_TRUE(RunCpuKernel(n, {&x}, 2, &out).ok());
  ExpectNear(ToVector<float>(*out[1]), {1.5f, -0.5f, -1.5f, 2.5f, 1, 0});
}

TEST(LinearClassifier, WithoutInterceptsTheFeaturesGiveTheRows) {
  Node n = MlNode("LinearClassifier");
  testing::SetInts(n, "classlabels_ints", {0, 1});
  SetFloats(n, "coefficients", {1, 2, 3, 4});
  std::vector<std::unique_ptr<Tensor>> out;
  // Four features: one row, a binary model.
  Tensor x4 = MakeTensor<float>({1, 4}, {1, 1, 1, 1});
  ASSERT_TRUE(RunCpuKernel(n, {&x4}, 2, &out).ok());
  ExpectNear(ToVector<float>(*out[1]), {-9, 10});
  EXPECT_EQ(ToVector<int64_t>(*out[0]), std::vector<int64_t>({1}));
  // Two features: two rows, one per label.
  Tensor x2 = MakeTensor<float>({1, 2}, {1, -1});
  ASSERT_TRUE(RunCpuKernel(n, {&x2}, 2, &out).ok());
  ExpectNear(ToVector<float>(*out[1]), {-1, -1});
  // Three features fit neither.
  Tensor x3 = MakeTensor<float>({1, 3}, {1, 1, 1});
  Status s = RunCpuKernel(n, {&x3}, 2, &out);
  EXPECT_EQ(s.code(), ErrorCode::kInvalidArgument);
  EXPECT_NE(s.message().find("input 0 has 3 features (shape [1,3]), which does not divide the 4 coefficients"),
            std::string::npos)
      << s.message();
}

TEST(LinearClassifier, Errors) {
  std::vector<std::unique_ptr<Tensor>> out;
  Tensor x = MakeTensor<float>({1, 3}, {1, 2, 3});
  Status s = RunCpuKernel(ThreeClasses("NONE"), {&x}, 2, &out);
  EXPECT_EQ(s.code(), ErrorCode::kInvalidArgument);
  EXPECT_NE(s.message().find("node 'm' (ai.onnx.ml.LinearClassifier): input 0 has 3 features (shape [1,3]) but the 6 "
                             "coefficients are for 2 features"),
            std::string::npos)
      << s.message();

  Node both = ThreeClasses("NONE");
  SetStrings(both, "classlabels_strings", {"a", "b", "c"});
  s = RunCpuKernel(both, {&x}, 2, &out);
  EXPECT_EQ(s.code(), ErrorCode::kInvalidGraph);
  EXPECT_NE(s.message().find("exactly one of the attributes classlabels_ints and classlabels_strings"),
            std::string::npos)
      << s.message();

  Node labels = ThreeClasses("NONE");
  testing::SetInts(labels, "classlabels_ints", {1, 2});
  s = RunCpuKernel(labels, {&x}, 2, &out);
  EXPECT_EQ(s.code(), ErrorCode::kInvalidGraph);
  EXPECT_NE(s.message().find("2 class labels for 3 rows of coefficients"), std::string::npos) << s.message();

  s = RunCpuKernel(ThreeClasses("SIGMOID"), {&x}, 2, &out);
  EXPECT_EQ(s.code(), ErrorCode::kInvalidGraph);
  EXPECT_NE(s.message().find("attribute post_transform 'SIGMOID' is not one of"), std::string::npos) << s.message();

  Tensor rank3 = MakeTensor<float>({1, 1, 2}, {1, 2});
  s = RunCpuKernel(ThreeClasses("NONE"), {&rank3}, 2, &out);
  EXPECT_NE(s.message().find("input 0 must have shape [N, F] or [F], got [1,1,2]"), std::string::npos)
      << s.message();
  Tensor str(ElemType::kString, {1, 2});
  s = RunCpuKernel(ThreeClasses("NONE"), {&str}, 2, &out);
  EXPECT_EQ(s.code(), ErrorCode::kNotImplemented);  // no kernel takes strings
}

std::vector<float> Normalize(const std::string& norm, const Tensor& x) {
  Node n = MlNode("Normalizer");
  SetString(n, "norm", norm);
  Tensor y = testing::Run1(n, {&x});
  EXPECT_EQ(y.type(), ElemType::kFloat);
  EXPECT_EQ(y.dims(), x.dims());
  return ToVector<float>(y);
}

TEST(Normalizer, MaxL1L2) {
  Tensor x = MakeTensor<float>({3, 3}, {1, -4, 2, -3, -1, -2, 0, 0, 0});
  // MAX divides by the largest value (negative for an all-negative row).
  ExpectNear(Normalize("MAX", x), {0.5f, -2, 1, 3, 1, 2, 0, 0, 0});
  ExpectNear(Normalize("L1", x), {1 / 7.f, -4 / 7.f, 2 / 7.f, -0.5f, -1 / 6.f, -1 / 3.f, 0, 0, 0});
  const float r21 = std::sqrt(21.f), r14 = std::sqrt(14.f);
  ExpectNear(Normalize("L2", x), {1 / r21, -4 / r21, 2 / r21, -3 / r14, -1 / r14, -2 / r14, 0, 0, 0});
  // A zero divisor leaves the row as it is.
  ExpectNear(Normalize("MAX", MakeTensor<float>({1, 2}, {-1, 0})), {-1, 0});
  // One row as [C]; integer inputs give float.
  ExpectNear(Normalize("L1", MakeTensor<int32_t>({4}, {1, 1, -1, 1})), {0.25f, 0.25f, -0.25f, 0.25f});
  ExpectNear(Normalize("MAX", MakeTensor<double>({2, 2}, {2, 4, 1, 8})), {0.5f, 1, 0.125f, 1});

  Node bad = MlNode("Normalizer");
  SetString(bad, "norm", "L3");
  std::vector<std::unique_ptr<Tensor>> out;
  Status s = RunCpuKernel(bad, {&x}, 1, &out);
  EXPECT_EQ(s.code(), ErrorCode::kInvalidGraph);
  EXPECT_NE(s.message().find("node 'm' (ai.onnx.ml.Normalizer): attribute norm 'L3' is not one of MAX, L1, L2"),
            std::string::npos)
      << s.message();
}

TEST(MlShapes, LinearClassifierAndNormalizer) {
  Graph g;
  g.inputs.push_back({"X", TypeInfo::Tensor(ElemType::kDouble, {Dim::Symbol("N"), Dim::Of(2)}), ""});
  g.value_types["X"] = g.inputs[0].type;
  Node lc = ThreeClasses("LOGISTIC");
  lc.inputs = {"X"};
  lc.outputs = {"label", "scores"};
  Node norm = MlNode("Normalizer");
  norm.name = "norm";
  SetString(norm, "norm", "L1");
  norm.inputs = {"scores"};
  norm.outputs = {"probs"};
  g.nodes = {lc, norm};
  ASSERT_TRUE(g.Finalize().ok());
  Status s = InferTypesAndShapes(g);
  ASSERT_TRUE(s.ok()) << s.message();
  EXPECT_EQ(g.value_types["label"].ToString() + ShapeString(g.value_types["label"]), "tensor(int64)[N]");
  EXPECT_EQ(g.value_types["scores"].ToString() + ShapeString(g.value_types["scores"]), "tensor(float)[N,3]");
  EXPECT_EQ(g.value_types["probs"].ToString() + ShapeString(g.value_types["probs"]), "tensor(float)[N,3]");
}

}  // namespace
}  // namespace onyx
