// Graph optimizer: each transformer on small graphs. Every fused graph must
// give the unfused graph's results (level 99 vs level 0 through a Session),
// keep its output names, and shrink by the expected number of nodes.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <random>

#include "core/graph/shape_inference.h"
#include "core/optimizer/optimizer.h"
#include "core/session/session.h"
#include "providers/cpu/cpu_provider.h"
#include "onnx-ml.pb.h"

namespace onyx {
namespace {

// A tiny ONNX graph builder over the protobuf, so tests go through the loader.
class ModelBuilder {
 public:
  explicit ModelBuilder(int opset = 17) {
    m_.set_ir_version(8);
    auto* op = m_.add_opset_import();
    op->set_domain("");
    op->set_version(opset);
    g_ = m_.mutable_graph();
    g_->set_name("optimizer_test");
  }
  void Input(const std::string& name, std::vector<int64_t> dims, int elem = 1) { Value(g_->add_input(), name, dims, elem); }
  void Output(const std::string& name, int elem = 1) {
    auto* vi = g_->add_output();
    vi->set_name(name);
    vi->mutable_type()->mutable_tensor_type()->set_elem_type(elem);
  }
  // Random float initializer; `offset` shifts the values (e.g. positive variances).
  void Init(const std::string& name, std::vector<int64_t> dims, float scale = 1.f, float offset = 0.f) {
    auto* t = g_->add_initializer();
    t->set_name(name);
    t->set_data_type(1);
    int64_t n = 1;
    for (int64_t d : dims) {
      t->add_dims(d);
      n *= d;
    }
    std::uniform_real_distribution<float> u(-1.f, 1.f);
    for (int64_t i = 0; i < n; ++i) t->add_float_data(offset + scale * u(rng_));
  }
  void InitValues(const std::string& name, std::vector<int64_t> dims, const std::vector<float>& v) {
    auto* t = g_->add_initializer();
    t->set_name(name);
    t->set_data_type(1);
    for (int64_t d : dims) t->add_dims(d);
    for (float f : v) t->add_float_data(f);
  }
  onnx::NodeProto* Node(const std::string& op, std::vector<std::string> in, std::vector<std::string> out) {
    auto* n = g_->add_node();
    n->set_op_type(op);
    n->set_name(op + "_" + std::to_string(g_->node_size()));
    for (auto& s : in) n->add_input(s);
    for (auto& s : out) n->add_output(s);
    return n;
  }
  static void Ints(onnx::NodeProto* n, const std::string& k, std::vector<int64_t> v) {
    auto* a = n->add_attribute();
    a->set_name(k);
    a->set_type(onnx::AttributeProto::INTS);
    for (int64_t x : v) a->add_ints(x);
  }
  static void Int(onnx::NodeProto* n, const std::string& k, int64_t v) {
    auto* a = n->add_attribute();
    a->set_name(k);
    a->set_type(onnx::AttributeProto::INT);
    a->set_i(v);
  }
  static void Float(onnx::NodeProto* n, const std::string& k, float v) {
    auto* a = n->add_attribute();
    a->set_name(k);
    a->set_type(onnx::AttributeProto::FLOAT);
    a->set_f(v);
  }
  // Conv + BatchNormalization with fresh parameters named after `p`.
  std::string ConvBn(const std::string& x, const std::string& p, int64_t cin, int64_t cout, int64_t k, int64_t stride,
                     int64_t group, bool bias) {
    Init(p + "_W", {cout, cin / group, k, k}, 0.5f);
    std::vector<std::string> in = {x, p + "_W"};
    if (bias) {
      Init(p + "_B", {cout}, 0.5f);
      in.push_back(p + "_B");
    }
    auto* c = Node("Conv", in, {p + "_conv"});
    Ints(c, "kernel_shape", {k, k});
    Ints(c, "strides", {stride, stride});
    Ints(c, "pads", {k / 2, k / 2, k / 2, k / 2});
    Int(c, "group", group);
    Init(p + "_scale", {cout}, 0.2f, 1.f);
    Init(p + "_bias", {cout}, 0.3f);
    Init(p + "_mean", {cout}, 0.3f);
    Init(p + "_var", {cout}, 0.2f, 1.f);
    Node("BatchNormalization", {p + "_conv", p + "_scale", p + "_bias", p + "_mean", p + "_var"}, {p + "_bn"});
    return p + "_bn";
  }
  const onnx::ModelProto& model() const { return m_; }

 private:
  static void Value(onnx::ValueInfoProto* vi, const std::string& name, const std::vector<int64_t>& dims, int elem) {
    vi->set_name(name);
    auto* tt = vi->mutable_type()->mutable_tensor_type();
    tt->set_elem_type(elem);
    auto* shape = tt->mutable_shape();
    for (int64_t d : dims) shape->add_dim()->set_dim_value(d);
  }
  onnx::ModelProto m_;
  onnx::GraphProto* g_;
  std::mt19937 rng_{1234};
};

// The model's graph after loading, inference and OptimizeGraph at `level`.
Graph Optimized(const ModelBuilder& b, int level, const std::vector<std::string>& disabled = {}) {
  std::string bytes = b.model().SerializeAsString();
  Model m;
  Status s = LoadModelFromBytes(bytes.data(), bytes.size(), "", &m);
  EXPECT_TRUE(s.ok()) << s.message();
  s = InferTypesAndShapes(*m.graph);
  EXPECT_TRUE(s.ok()) << s.message();
  static const std::unique_ptr<ExecutionProvider> cpu = CreateCpuProvider();
  OptimizerContext ctx;
  ctx.fold_kernels = &cpu->Kernels();
  s = OptimizeGraph(*m.graph, level, disabled, ctx);
  EXPECT_TRUE(s.ok()) << s.message();
  return std::move(*m.graph);
}

int Count(const Graph& g, const std::string& op) {
  int n = 0;
  for (const auto& node : g.nodes) n += node.op_type == op;
  return n;
}

Tensor RandomTensor(const Dims& dims, unsigned seed) {
  Tensor t(ElemType::kFloat, dims);
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> u(-2.f, 2.f);
  for (int64_t i = 0; i < t.size(); ++i) t.data<float>()[i] = u(rng);
  return t;
}

// Runs the model at `level` on feeds {name: tensor}; returns the first output.
std::vector<float> RunAt(const ModelBuilder& b, int level, const std::vector<std::pair<std::string, Dims>>& feeds,
                         const std::map<std::string, std::string>& config = {}) {
  SessionOptions opts;
  opts.graph_optimization_level = level;
  opts.intra_op_threads = 2;
  opts.config = config;
  std::string bytes = b.model().SerializeAsString();
  std::unique_ptr<Session> s;
  Status st = Session::CreateFromBytes(opts, bytes.data(), bytes.size(), &s);
  EXPECT_TRUE(st.ok()) << st.message();
  if (!st.ok()) return {};
  std::vector<std::string> names;
  std::vector<onyx::Value> values;
  values.reserve(feeds.size());
  unsigned seed = 7;
  for (const auto& f : feeds) {
    names.push_back(f.first);
    values.emplace_back(RandomTensor(f.second, seed++));
  }
  std::vector<const onyx::Value*> ptrs;
  for (auto& v : values) ptrs.push_back(&v);
  std::vector<onyx::Value> out;
  st = s->Run(nullptr, names, ptrs, {}, &out);
  EXPECT_TRUE(st.ok()) << st.message();
  if (!st.ok()) return {};
  const Tensor& t = out[0].tensor();
  return std::vector<float>(t.data<float>(), t.data<float>() + t.size());
}

void ExpectSameResults(const ModelBuilder& b, const std::vector<std::pair<std::string, Dims>>& feeds) {
  std::vector<float> ref = RunAt(b, 0, feeds), opt = RunAt(b, 99, feeds);
  ASSERT_EQ(ref.size(), opt.size());
  ASSERT_FALSE(ref.empty());
  for (size_t i = 0; i < ref.size(); ++i)
    ASSERT_NEAR(opt[i], ref[i], 1e-4f * (1.f + std::fabs(ref[i]))) << "element " << i;
}

TEST(Optimizer, ConvBnReluFusesIntoOneConv) {
  ModelBuilder b;
  b.Input("X", {1, 3, 9, 9});
  std::string y = b.ConvBn("X", "c1", 3, 8, 3, 1, 1, /*bias=*/true);
  b.Node("Relu", {y}, {"Y"});
  b.Output("Y");
  Graph g = Optimized(b, kOptimizeAll);
  ASSERT_EQ(g.nodes.size(), 1u);
  // onnxruntime's contrib op, so a saved optimized model stays valid ONNX.
  EXPECT_EQ(g.nodes[0].op_type, "FusedConv");
  EXPECT_EQ(g.nodes[0].domain, "com.microsoft");
  EXPECT_EQ(g.nodes[0].since_version, 1);
  EXPECT_EQ(g.nodes[0].AttrString("activation", ""), "Relu");
  EXPECT_EQ(g.nodes[0].Attr("activation_params"), nullptr);
  EXPECT_EQ(g.nodes[0].AttrInts("kernel_shape"), (std::vector<int64_t>{3, 3}));
  EXPECT_EQ(g.nodes[0].outputs[0], "Y");
  // Only the folded weight and bias are left.
  EXPECT_EQ(g.initializers.size(), 2u);
  EXPECT_FALSE(g.IsInitializer("c1_W"));
  ExpectSameResults(b, {{"X", {1, 3, 9, 9}}});
}

TEST(Optimizer, ConvBnFusionFoldsChainsAndSiblingsInOnePassEach) {
  // Two Conv+BN pairs side by side fold in one pass over one index; a second
  // BN after the first folds in the next round (its producer was a BN).
  ModelBuilder b;
  b.Input("X", {1, 3, 9, 9});
  std::string a = b.ConvBn("X", "a", 3, 4, 3, 1, 1, true);
  std::string c = b.ConvBn("X", "c", 3, 4, 1, 1, 1, false);
  b.Init("d_scale", {4}, 0.2f, 1.f);
  b.Init("d_bias", {4}, 0.3f);
  b.Init("d_mean", {4}, 0.3f);
  b.Init("d_var", {4}, 0.2f, 1.f);
  b.Node("BatchNormalization", {c, "d_scale", "d_bias", "d_mean", "d_var"}, {"cc"});
  b.Node("Add", {a, "cc"}, {"Y"});
  b.Output("Y");
  Graph g = Optimized(b, kOptimizeExtended);
  EXPECT_EQ(Count(g, "BatchNormalization"), 0);
  // The Add of the two folded convs then becomes one FusedConv's residual input.
  EXPECT_EQ(Count(g, "Conv"), 1);
  EXPECT_EQ(Count(g, "FusedConv"), 1);
  EXPECT_EQ(Count(g, "Add"), 0);
  ExpectSameResults(b, {{"X", {1, 3, 9, 9}}});
}

TEST(Optimizer, LevelsAreCumulativeAndZeroDisables) {
  ModelBuilder b;
  b.Input("X", {1, 3, 9, 9});
  std::string y = b.ConvBn("X", "c1", 3, 8, 3, 1, 1, false);
  b.Node("Identity", {y}, {"I"});
  b.Node("Relu", {"I"}, {"Y"});
  b.Output("Y");
  EXPECT_EQ(Optimized(b, kOptimizeDisabled).nodes.size(), 4u);
  EXPECT_EQ(Optimized(b, kOptimizeBasic).nodes.size(), 3u);     // Identity gone
  EXPECT_EQ(Optimized(b, kOptimizeExtended).nodes.size(), 1u);  // and fused
  // Disabled by our name or onnxruntime's.
  // BN still sits between Conv and Relu, so neither fusion applies.
  EXPECT_EQ(Optimized(b, kOptimizeAll, {"conv_bn_fusion"}).nodes.size(), 3u);
  EXPECT_EQ(Count(Optimized(b, kOptimizeAll, {"ConvActivationFusion"}), "Relu"), 1);
}

TEST(Optimizer, MobileNetBlockWithDepthwiseAndClip) {
  // Pointwise expand -> depthwise (stride 1 and 2) -> pointwise project, ReLU6
  // as Clip(0, 6) with constant bounds, as in MobileNetV2.
  for (int64_t stride : {1, 2}) {
    for (int64_t hw : {7, 8, 13}) {
      ModelBuilder b;
      b.Input("X", {2, 4, hw, hw});
      b.InitValues("zero", {}, {0.f});
      b.InitValues("six", {}, {6.f});
      std::string y = b.ConvBn("X", "expand", 4, 12, 1, 1, 1, false);
      y = (b.Node("Clip", {y, "zero", "six"}, {"e6"}), "e6");
      y = b.ConvBn(y, "dw", 12, 12, 3, stride, 12, false);
      y = (b.Node("Clip", {y, "zero", "six"}, {"d6"}), "d6");
      y = b.ConvBn(y, "project", 12, 6, 1, 1, 1, false);
      b.Node("Identity", {y}, {"Y"});
      b.Output("Y");
      Graph g = Optimized(b, kOptimizeAll);
      EXPECT_EQ(g.nodes.size(), 3u) << "stride " << stride;
      EXPECT_EQ(Count(g, "FusedConv"), 2);
      EXPECT_EQ(Count(g, "Conv"), 1);
      EXPECT_EQ(g.nodes.back().outputs[0], "Y");
      ExpectSameResults(b, {{"X", {2, 4, hw, hw}}});
    }
  }
}

TEST(Optimizer, LeakyReluAndClipWithoutMaxFuse) {
  ModelBuilder b;
  b.Input("X", {1, 2, 6, 6});
  b.InitValues("lo", {}, {-0.25f});
  b.Init("W1", {5, 2, 3, 3});
  auto* c = b.Node("Conv", {"X", "W1"}, {"c"});
  ModelBuilder::Ints(c, "pads", {1, 1, 1, 1});
  auto* l = b.Node("LeakyRelu", {"c"}, {"l"});
  ModelBuilder::Float(l, "alpha", 0.2f);
  b.Init("W2", {3, 5, 1, 1});
  b.Node("Conv", {"l", "W2"}, {"c2"});
  b.Node("Clip", {"c2", "lo"}, {"Y"});
  b.Output("Y");
  Graph g = Optimized(b, kOptimizeAll);
  EXPECT_EQ(g.nodes.size(), 2u);
  EXPECT_EQ(g.nodes[0].AttrString("activation", ""), "LeakyRelu");
  ASSERT_NE(g.nodes[0].Attr("activation_params"), nullptr);
  EXPECT_EQ(g.nodes[0].Attr("activation_params")->floats, (std::vector<float>{0.2f}));
  EXPECT_EQ(g.nodes[1].AttrString("activation", ""), "Clip");
  ASSERT_NE(g.nodes[1].Attr("activation_params"), nullptr);
  EXPECT_EQ(g.nodes[1].Attr("activation_params")->floats,
            (std::vector<float>{-0.25f, std::numeric_limits<float>::max()}));
  ExpectSameResults(b, {{"X", {1, 2, 6, 6}}});
}

TEST(Optimizer, SigmoidTanhHardSigmoidFuseOnEveryConvPath) {
  // One activation per Conv path: depthwise 3x3 (float fast path), depthwise
  // 5x5 (generic), pointwise, and im2col.
  for (const char* op : {"Sigmoid", "Tanh", "HardSigmoid"}) {
    ModelBuilder b;
    b.Input("X", {2, 4, 9, 9});
    b.Init("Wd3", {4, 1, 3, 3});
    auto* c = b.Node("Conv", {"X", "Wd3"}, {"d3"});
    ModelBuilder::Int(c, "group", 4);
    ModelBuilder::Ints(c, "pads", {1, 1, 1, 1});
    b.Node(op, {"d3"}, {"a1"});
    b.Init("Wd5", {4, 1, 5, 5});
    b.Init("Bd5", {4});
    c = b.Node("Conv", {"a1", "Wd5", "Bd5"}, {"d5"});
    ModelBuilder::Int(c, "group", 4);
    ModelBuilder::Ints(c, "pads", {2, 2, 2, 2});
    auto* a = b.Node(op, {"d5"}, {"a2"});
    if (std::string(op) == "HardSigmoid") ModelBuilder::Float(a, "alpha", 0.3f);
    b.Init("Wp", {6, 4, 1, 1});
    b.Node("Conv", {"a2", "Wp"}, {"p"});
    b.Node(op, {"p"}, {"a3"});
    b.Init("Wf", {3, 6, 3, 3}, 0.5f);
    b.Init("Bf", {3});
    c = b.Node("Conv", {"a3", "Wf", "Bf"}, {"f"});
    ModelBuilder::Ints(c, "strides", {2, 2});
    b.Node(op, {"f"}, {"Y"});
    b.Output("Y");
    Graph g = Optimized(b, kOptimizeAll);
    ASSERT_EQ(g.nodes.size(), 4u) << op;
    EXPECT_EQ(Count(g, "FusedConv"), 4) << op;
    for (const Node& n : g.nodes) EXPECT_EQ(n.AttrString("activation", ""), op);
    if (std::string(op) == "HardSigmoid") {
      ASSERT_NE(g.nodes[1].Attr("activation_params"), nullptr);
      EXPECT_EQ(g.nodes[1].Attr("activation_params")->floats, (std::vector<float>{0.3f, 0.5f}));
    }
    ExpectSameResults(b, {{"X", {2, 4, 9, 9}}});
  }
}

TEST(Optimizer, DoubleConvIsNotFused) {
  // onnxruntime's FusedConv kernel takes float only.
  ModelBuilder b;
  b.Input("X", {1, 2, 5, 5}, /*elem=*/11);
  auto* w = b.Node("Constant", {}, {"W"});
  auto* a = w->add_attribute();
  a->set_name("value");
  a->set_type(onnx::AttributeProto::TENSOR);
  a->mutable_t()->set_data_type(11);
  for (int64_t d : {3, 2, 1, 1}) a->mutable_t()->add_dims(d);
  for (int k = 0; k < 6; ++k) a->mutable_t()->add_double_data(0.25 * k - 0.5);
  b.Node("Conv", {"X", "W"}, {"c"});
  b.Node("Relu", {"c"}, {"Y"});
  b.Output("Y", 11);
  Graph g = Optimized(b, kOptimizeAll);
  EXPECT_EQ(Count(g, "Conv"), 1);
  EXPECT_EQ(Count(g, "FusedConv"), 0);
}

TEST(Optimizer, ConvWithTwoConsumersIsNotFused) {
  ModelBuilder b;
  b.Input("X", {1, 3, 5, 5});
  b.Init("W", {4, 3, 3, 3});
  b.Init("s", {4}, 0.1f, 1.f);
  b.Init("m", {4}, 0.1f);
  b.Init("v", {4}, 0.1f, 1.f);
  b.Node("Conv", {"X", "W"}, {"c"});
  b.Node("BatchNormalization", {"c", "s", "m", "m", "v"}, {"bn"});
  b.Node("Relu", {"c"}, {"r"});
  b.Node("Add", {"bn", "r"}, {"Y"});
  b.Output("Y");
  Graph g = Optimized(b, kOptimizeAll);
  EXPECT_EQ(g.nodes.size(), 4u);
  EXPECT_EQ(g.nodes[0].Attr("activation"), nullptr);
  ExpectSameResults(b, {{"X", {1, 3, 5, 5}}});

  // A Conv output that is also a graph output keeps its producer unfused.
  ModelBuilder b2;
  b2.Input("X", {1, 3, 5, 5});
  b2.Init("W", {4, 3, 3, 3});
  b2.Node("Conv", {"X", "W"}, {"C"});
  b2.Node("Relu", {"C"}, {"Y"});
  b2.Output("Y");
  b2.Output("C");
  EXPECT_EQ(Optimized(b2, kOptimizeAll).nodes.size(), 2u);
}

TEST(Optimizer, IdentityAndDropoutRemovedOutputNamesKept) {
  ModelBuilder b;
  b.Input("X", {2, 3});
  b.Node("Identity", {"X"}, {"a"});
  b.Node("Relu", {"a"}, {"r"});
  b.Node("Dropout", {"r"}, {"d"});
  b.Node("Identity", {"d"}, {"Y"});  // a graph output: the producer takes its name
  b.Output("Y");
  Graph g = Optimized(b, kOptimizeBasic);
  ASSERT_EQ(g.nodes.size(), 1u);
  EXPECT_EQ(g.nodes[0].op_type, "Relu");
  EXPECT_EQ(g.nodes[0].inputs[0], "X");
  EXPECT_EQ(g.nodes[0].outputs[0], "Y");
  EXPECT_EQ(g.value_types.count("r"), 0u);
  ExpectSameResults(b, {{"X", {2, 3}}});

  // Identity from a graph input straight to a graph output has nothing to rewire.
  ModelBuilder b2;
  b2.Input("X", {2, 3});
  b2.Node("Identity", {"X"}, {"Y"});
  b2.Output("Y");
  EXPECT_EQ(Optimized(b2, kOptimizeAll).nodes.size(), 1u);

  // A Dropout whose mask is read stays.
  ModelBuilder b3;
  b3.Input("X", {2, 3});
  b3.Node("Dropout", {"X"}, {"d", "mask"});
  b3.Node("Cast", {"mask"}, {"mf"})->add_attribute()->CopyFrom([] {
    onnx::AttributeProto a;
    a.set_name("to");
    a.set_type(onnx::AttributeProto::INT);
    a.set_i(1);
    return a;
  }());
  b3.Node("Add", {"d", "mf"}, {"Y"});
  b3.Output("Y");
  EXPECT_EQ(Count(Optimized(b3, kOptimizeAll), "Dropout"), 1);
}

TEST(Optimizer, ConstantFoldingAndOverridableInitializers) {
  ModelBuilder b;
  b.Input("X", {2, 3});
  b.InitValues("c1", {3}, {1.f, 2.f, 3.f});
  b.InitValues("c2", {3}, {0.5f, -1.f, 4.f});
  b.Node("Mul", {"c1", "c2"}, {"k"});      // folds
  b.Node("Sqrt", {"c1"}, {"q"});           // folds
  b.Node("Add", {"k", "q"}, {"kq"});       // folds in the next step
  b.Node("Add", {"X", "kq"}, {"Y"});       // reads a graph input: stays
  b.Output("Y");
  Graph g = Optimized(b, kOptimizeBasic);
  ASSERT_EQ(g.nodes.size(), 1u);
  EXPECT_EQ(g.initializers.size(), 1u);
  ASSERT_TRUE(g.IsInitializer("kq"));
  EXPECT_FLOAT_EQ(g.initializers.at("kq")->data<float>()[2], 12.f + std::sqrt(3.f));
  ExpectSameResults(b, {{"X", {2, 3}}});

  // The same with c2 listed as a graph input: a run may replace it, so
  // nothing that reads it folds.
  ModelBuilder b2;
  b2.Input("X", {2, 3});
  b2.Input("c2", {3});
  b2.InitValues("c1", {3}, {1.f, 2.f, 3.f});
  b2.InitValues("c2", {3}, {0.5f, -1.f, 4.f});
  b2.Node("Mul", {"c1", "c2"}, {"k"});
  b2.Node("Add", {"X", "k"}, {"Y"});
  b2.Output("Y");
  Graph g2 = Optimized(b2, kOptimizeAll);
  EXPECT_EQ(g2.nodes.size(), 2u);
  EXPECT_TRUE(g2.IsInitializer("c2"));
}

TEST(Optimizer, ShapeOfStaticValueFeedsFoldedReshape) {
  ModelBuilder b;
  b.Input("X", {2, 3, 4});
  b.Input("Z", {6, 4});
  b.Node("Shape", {"Z"}, {"s"});
  b.Node("Reshape", {"X", "s"}, {"Y"});
  b.Output("Y");
  Graph g = Optimized(b, kOptimizeBasic);
  ASSERT_EQ(g.nodes.size(), 1u);
  ASSERT_TRUE(g.IsInitializer("s"));
  EXPECT_EQ(g.initializers.at("s")->data<int64_t>()[0], 6);
  SessionOptions opts;
  std::string bytes = b.model().SerializeAsString();
  std::unique_ptr<Session> s;
  ASSERT_TRUE(Session::CreateFromBytes(opts, bytes.data(), bytes.size(), &s).ok());
}

TEST(Optimizer, MatMulAddBecomesGemmOnlyFor2D) {
  for (bool two_d : {true, false}) {
    ModelBuilder b;
    Dims a = two_d ? Dims{5, 4} : Dims{2, 5, 4};
    b.Input("A", a);
    b.Init("B", {4, 3});
    b.Init("bias", {3});
    b.Node("MatMul", {"A", "B"}, {"mm"});
    b.Node("Add", {"bias", "mm"}, {"Y"});
    b.Output("Y");
    Graph g = Optimized(b, kOptimizeAll);
    EXPECT_EQ(Count(g, "Gemm"), two_d ? 1 : 0);
    EXPECT_EQ(g.nodes.size(), two_d ? 1u : 2u);
    EXPECT_EQ(g.nodes.back().outputs[0], "Y");
    ExpectSameResults(b, {{"A", a}});
  }
}

TEST(Optimizer, SessionReadsDisabledListFromConfig) {
  ModelBuilder b;
  b.Input("X", {1, 3, 5, 5});
  std::string y = b.ConvBn("X", "c", 3, 4, 3, 1, 1, true);
  b.Node("Relu", {y}, {"Y"});
  b.Output("Y");
  std::string bytes = b.model().SerializeAsString();
  SessionOptions opts;
  opts.config["optimization.disable_specified_optimizers"] = "ConvBNFusion, conv_activation_fusion";
  std::unique_ptr<Session> s;
  ASSERT_TRUE(Session::CreateFromBytes(opts, bytes.data(), bytes.size(), &s).ok());
  EXPECT_EQ(s->model().graph->nodes.size(), 3u);
  opts.config.clear();
  ASSERT_TRUE(Session::CreateFromBytes(opts, bytes.data(), bytes.size(), &s).ok());
  EXPECT_EQ(s->model().graph->nodes.size(), 1u);
}

}  // namespace
}  // namespace onyx
