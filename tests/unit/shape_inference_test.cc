// Load-time type and shape inference: one test group per rule family, a
// BERT-style attention block and a Conv/Pool stack, and the INVALID_GRAPH cases.
#include <gtest/gtest.h>

#include <cctype>

#include "core/graph/shape_inference.h"
#include "onnx-ml.pb.h"

namespace onyx {
namespace {

std::vector<Dim> ParseDims(const std::vector<std::string>& dims) {
  std::vector<Dim> out;
  for (const auto& d : dims) {
    if (d == "?") out.push_back(Dim{});
    else if (!d.empty() && std::isdigit(static_cast<unsigned char>(d[0]))) out.push_back(Dim::Of(std::stoll(d)));
    else out.push_back(Dim::Symbol(d));
  }
  return out;
}

// Builds a Graph directly, runs Finalize + inference, and prints value types.
class G {
 public:
  explicit G(int opset = 17) : opset_(opset) { g.name = "test"; }

  void Input(const std::string& name, ElemType e, const std::vector<std::string>& dims) {
    ValueInfo vi{name, TypeInfo::Tensor(e, ParseDims(dims)), ""};
    g.inputs.push_back(vi);
    g.value_types[name] = vi.type;
  }
  void InputNoShape(const std::string& name, ElemType e) {
    ValueInfo vi{name, TypeInfo::Tensor(e), ""};
    g.inputs.push_back(vi);
    g.value_types[name] = vi.type;
  }
  void Declare(const std::string& name, ElemType e, const std::vector<std::string>& dims) {
    g.value_types[name] = TypeInfo::Tensor(e, ParseDims(dims));
  }
  void Output(const std::string& name) {
    ValueInfo vi{name, TypeInfo(), ""};
    auto it = g.value_types.find(name);
    if (it != g.value_types.end()) vi.type = it->second;
    g.outputs.push_back(vi);
  }
  void Ints(const std::string& name, const std::vector<int64_t>& v, bool scalar = false) {
    Dims d;
    if (!scalar) d.push_back(static_cast<int64_t>(v.size()));
    auto t = std::make_shared<Tensor>(ElemType::kInt64, d);
    for (size_t i = 0; i < v.size(); ++i) t->data<int64_t>()[i] = v[i];
    g.initializers[name] = t;
  }
  void Weight(const std::string& name, ElemType e, const Dims& d) {
    g.initializers[name] = std::make_shared<Tensor>(e, d);
  }
  Node& N(const std::string& op, std::vector<std::string> in, std::vector<std::string> out,
          const std::string& name = "") {
    Node n;
    n.name = name.empty() ? op + "_" + std::to_string(g.nodes.size()) : name;
    n.op_type = op;
    n.since_version = opset_;
    n.inputs = std::move(in);
    n.outputs = std::move(out);
    g.nodes.push_back(std::move(n));
    return g.nodes.back();
  }
  Status Run() {
    Status s = g.Finalize();
    if (!s.ok()) return s;
    return InferTypesAndShapes(g);
  }
  // "tensor(float)[batch,768]"; "none" when nothing is known.
  std::string T(const std::string& name) const {
    auto it = g.value_types.find(name);
    if (it == g.value_types.end()) return "none";
    if (it->second.kind != TypeInfo::Kind::kTensor) return it->second.ToString();
    return it->second.ToString() + ShapeString(it->second);
  }

  Graph g;

 private:
  int opset_;
};

void SetInt(Node& n, const std::string& k, int64_t v) {
  n.attrs[k].type = Attribute::Type::kInt;
  n.attrs[k].i = v;
}
void SetInts(Node& n, const std::string& k, std::vector<int64_t> v) {
  n.attrs[k].type = Attribute::Type::kInts;
  n.attrs[k].ints = std::move(v);
}
void SetStr(Node& n, const std::string& k, const std::string& v) {
  n.attrs[k].type = Attribute::Type::kString;
  n.attrs[k].s = v;
}
void SetTensorAttr(Node& n, const std::string& k, std::shared_ptr<Tensor> t) {
  n.attrs[k].type = Attribute::Type::kTensor;
  n.attrs[k].t = std::move(t);
}

std::string Err(const Status& s) { return s.ok() ? "OK" : s.message(); }

constexpr ElemType F = ElemType::kFloat;
constexpr ElemType I64 = ElemType::kInt64;

// ---------------------------------------------------------------------------

TEST(ShapeInferenceUnary, KeepsTypeAndShape) {
  G t;
  t.Input("x", F, {"batch", "768"});
  t.N("Relu", {"x"}, {"r"});
  t.N("Erf", {"r"}, {"e"});
  t.N("Softmax", {"e"}, {"s"});
  SetInt(t.N("Cast", {"s"}, {"c"}), "to", 10);
  t.N("Not", {"b"}, {"n"});
  t.Input("b", ElemType::kBool, {"3"});
  t.N("Dropout", {"x"}, {"d", "mask"});
  t.N("Gelu", {"x"}, {"g"}).since_version = 20;
  ASSERT_TRUE(t.Run().ok());
  EXPECT_EQ(t.T("r"), "tensor(float)[batch,768]");
  EXPECT_EQ(t.T("s"), "tensor(float)[batch,768]");
  EXPECT_EQ(t.T("c"), "tensor(float16)[batch,768]");
  EXPECT_EQ(t.T("n"), "tensor(bool)[3]");
  EXPECT_EQ(t.T("d"), "tensor(float)[batch,768]");
  EXPECT_EQ(t.T("mask"), "tensor(bool)[batch,768]");
  EXPECT_EQ(t.T("g"), "tensor(float)[batch,768]");
}

TEST(ShapeInferenceUnary, LayerNormAndBatchNorm) {
  G t;
  t.Input("x", F, {"batch", "seq", "768"});
  t.Weight("gamma", F, {768});
  t.Weight("beta", F, {768});
  t.N("LayerNormalization", {"x", "gamma", "beta"}, {"y", "mean", "inv"});
  t.Input("img", ElemType::kFloat16, {"N", "8", "4", "4"});
  t.Weight("s", ElemType::kFloat16, {8});
  t.N("BatchNormalization", {"img", "s", "s", "s", "s"}, {"bn"});
  ASSERT_TRUE(t.Run().ok());
  EXPECT_EQ(t.T("y"), "tensor(float)[batch,seq,768]");
  EXPECT_EQ(t.T("mean"), "tensor(float)[batch,seq,1]");
  EXPECT_EQ(t.T("inv"), "tensor(float)[batch,seq,1]");
  EXPECT_EQ(t.T("bn"), "tensor(float16)[N,8,4,4]");
}

TEST(ShapeInferenceBroadcast, SymbolsPropagate) {
  G t;
  t.Input("a", F, {"batch", "768"});
  t.Input("b", F, {"768"});
  t.Input("c", F, {"1", "seq", "1"});
  t.Input("d", F, {"batch", "1", "1"});
  t.Input("e", F, {"other", "1"});
  t.Input("i", I64, {"2", "3"});
  t.N("Add", {"a", "b"}, {"ab"});
  t.N("Mul", {"c", "d"}, {"cd"});
  t.N("Sub", {"a", "e"}, {"ae"});
  t.N("Greater", {"a", "b"}, {"gt"});
  t.N("Pow", {"a", "i_f"}, {"pw"});
  t.Input("i_f", ElemType::kInt32, {"1"});
  t.N("Where", {"gt", "a", "b"}, {"w"});
  t.N("Sum", {"a", "b", "a"}, {"sum"});
  ASSERT_TRUE(t.Run().ok());
  EXPECT_EQ(t.T("ab"), "tensor(float)[batch,768]");
  EXPECT_EQ(t.T("cd"), "tensor(float)[batch,seq,1]");
  EXPECT_EQ(t.T("ae"), "tensor(float)[?,768]");  // batch vs other: unknown
  EXPECT_EQ(t.T("gt"), "tensor(bool)[batch,768]");
  EXPECT_EQ(t.T("pw"), "tensor(float)[batch,768]");
  EXPECT_EQ(t.T("w"), "tensor(float)[batch,768]");
  EXPECT_EQ(t.T("sum"), "tensor(float)[batch,768]");
}

TEST(ShapeInferenceBroadcast, MismatchIsInvalidGraph) {
  G t;
  t.Input("a", F, {"2", "3"});
  t.Input("b", F, {"4", "3"});
  t.N("Add", {"a", "b"}, {"c"}, "add1");
  Status s = t.Run();
  EXPECT_EQ(s.code(), ErrorCode::kInvalidGraph);
  EXPECT_EQ(s.message(), "node 'add1' (Add): cannot broadcast input shapes [2,3] and [4,3]");
}

TEST(ShapeInferenceBroadcast, ElementTypeMismatchIsInvalidGraph) {
  G t;
  t.Input("a", F, {"2"});
  t.Input("b", I64, {"2"});
  t.N("Mul", {"a", "b"}, {"c"}, "mul");
  Status s = t.Run();
  EXPECT_EQ(s.code(), ErrorCode::kInvalidGraph);
  EXPECT_NE(s.message().find("node 'mul' (Mul): input element types float and int64 differ"), std::string::npos)
      << s.message();
}

TEST(ShapeInferenceMatMul, NumpyRules) {
  G t;
  t.Input("x", F, {"batch", "seq", "768"});
  t.Weight("w", F, {768, 3072});
  t.Input("v", F, {"3"});
  t.Input("m", F, {"3", "4"});
  t.Input("b3", F, {"1", "5", "3", "4"});
  t.Input("b1", F, {"7", "1", "4", "6"});
  t.Input("v4", F, {"4"});
  t.N("MatMul", {"x", "w"}, {"xw"});
  t.N("MatMul", {"v", "m"}, {"vm"});
  t.N("MatMul", {"m", "v4"}, {"mv"});
  t.N("MatMul", {"v", "v"}, {"vv"});
  t.N("MatMul", {"b3", "b1"}, {"bb"});
  ASSERT_TRUE(t.Run().ok());
  EXPECT_EQ(t.T("xw"), "tensor(float)[batch,seq,3072]");
  EXPECT_EQ(t.T("vm"), "tensor(float)[4]");
  EXPECT_EQ(t.T("mv"), "tensor(float)[3]");
  EXPECT_EQ(t.T("vv"), "tensor(float)[]");
  EXPECT_EQ(t.T("bb"), "tensor(float)[7,5,3,6]");
}

TEST(ShapeInferenceMatMul, InnerDimMismatch) {
  G t;
  t.Input("a", F, {"2", "3"});
  t.Input("b", F, {"4", "5"});
  t.N("MatMul", {"a", "b"}, {"c"}, "mm");
  Status s = t.Run();
  EXPECT_EQ(s.code(), ErrorCode::kInvalidGraph);
  EXPECT_EQ(s.message(), "node 'mm' (MatMul): inner dimensions 3 and 4 do not match for input shapes [2,3] and [4,5]");
}

TEST(ShapeInferenceGemm, TransposesAndChecks) {
  G t;
  t.Input("a", F, {"N", "512"});
  t.Weight("b", F, {1000, 512});
  t.Weight("c", F, {1000});
  Node& n = t.N("Gemm", {"a", "b", "c"}, {"y"});
  SetInt(n, "transB", 1);
  t.Input("a2", F, {"8", "4"});
  Node& n2 = t.N("Gemm", {"a2", "b", "c"}, {"y2"}, "gemm_bad");
  SetInt(n2, "transA", 1);
  SetInt(n2, "transB", 1);
  Status s = t.Run();
  EXPECT_EQ(s.code(), ErrorCode::kInvalidGraph);
  EXPECT_NE(s.message().find("node 'gemm_bad' (Gemm): inner dimensions 8 and 512"), std::string::npos) << s.message();
  EXPECT_EQ(t.T("y"), "tensor(float)[N,1000]");
}

TEST(ShapeInferenceConvPool, ResNetStem) {
  G t;
  t.Input("x", F, {"N", "3", "224", "224"});
  t.Weight("w1", F, {64, 3, 7, 7});
  Node& c1 = t.N("Conv", {"x", "w1"}, {"c1"});
  SetInts(c1, "strides", {2, 2});
  SetInts(c1, "pads", {3, 3, 3, 3});
  t.N("Relu", {"c1"}, {"r1"});
  Node& p1 = t.N("MaxPool", {"r1"}, {"p1"});
  SetInts(p1, "kernel_shape", {3, 3});
  SetInts(p1, "strides", {2, 2});
  SetInts(p1, "pads", {1, 1, 1, 1});
  t.Weight("w2", F, {64, 1, 3, 3});
  Node& c2 = t.N("Conv", {"p1", "w2"}, {"c2"});  // depthwise, SAME padding
  SetInt(c2, "group", 64);
  SetStr(c2, "auto_pad", "SAME_UPPER");
  SetInts(c2, "strides", {2, 2});
  t.Weight("w3", F, {128, 64, 3, 3});
  Node& c3 = t.N("Conv", {"c2", "w3"}, {"c3"});
  SetInts(c3, "dilations", {2, 2});
  Node& p2 = t.N("AveragePool", {"c3"}, {"p2"});
  SetInts(p2, "kernel_shape", {2, 2});
  SetInts(p2, "strides", {2, 2});
  SetInt(p2, "ceil_mode", 1);
  t.N("GlobalAveragePool", {"p2"}, {"gap"});
  t.N("Flatten", {"gap"}, {"flat"});
  t.Weight("fc", F, {128, 10});
  t.N("MatMul", {"flat", "fc"}, {"logits"});
  ASSERT_TRUE(t.Run().ok()) << Err(t.Run());
  EXPECT_EQ(t.T("c1"), "tensor(float)[N,64,112,112]");
  EXPECT_EQ(t.T("p1"), "tensor(float)[N,64,56,56]");
  EXPECT_EQ(t.T("c2"), "tensor(float)[N,64,28,28]");
  EXPECT_EQ(t.T("c3"), "tensor(float)[N,128,24,24]");
  EXPECT_EQ(t.T("p2"), "tensor(float)[N,128,12,12]");
  EXPECT_EQ(t.T("gap"), "tensor(float)[N,128,1,1]");
  EXPECT_EQ(t.T("flat"), "tensor(float)[N,128]");
  EXPECT_EQ(t.T("logits"), "tensor(float)[N,10]");
}

TEST(ShapeInferenceConvPool, CeilModeAndIndices) {
  G t;
  t.Input("x", F, {"1", "2", "5", "5"});
  Node& p = t.N("MaxPool", {"x"}, {"y", "idx"});
  SetInts(p, "kernel_shape", {2, 2});
  SetInts(p, "strides", {2, 2});
  SetInt(p, "ceil_mode", 1);
  t.Input("z", F, {"1", "1", "4"});
  Node& q = t.N("MaxPool", {"z"}, {"zy"});  // the last window would start in the padding
  SetInts(q, "kernel_shape", {2});
  SetInts(q, "strides", {3});
  SetInts(q, "pads", {0, 1});
  SetInt(q, "ceil_mode", 1);
  ASSERT_TRUE(t.Run().ok());
  EXPECT_EQ(t.T("y"), "tensor(float)[1,2,3,3]");
  EXPECT_EQ(t.T("idx"), "tensor(int64)[1,2,3,3]");
  EXPECT_EQ(t.T("zy"), "tensor(float)[1,1,2]");
}

TEST(ShapeInferenceConvPool, ChannelMismatch) {
  G t;
  t.Input("x", F, {"1", "3", "8", "8"});
  t.Weight("w", F, {16, 4, 3, 3});
  t.N("Conv", {"x", "w"}, {"y"}, "conv1");
  Status s = t.Run();
  EXPECT_EQ(s.code(), ErrorCode::kInvalidGraph);
  EXPECT_EQ(s.message(),
            "node 'conv1' (Conv): input channels 3 do not match W's 4 x group 1 (input shapes [1,3,8,8] and [16,4,3,3])");
}

TEST(ShapeInferenceReshape, ConstantShapes) {
  G t;
  t.Input("x", F, {"batch", "seq", "768"});
  t.Ints("s1", {0, 0, 12, 64});
  t.N("Reshape", {"x", "s1"}, {"r1"});
  t.Ints("s2", {0, 0, -1});
  t.N("Reshape", {"r1", "s2"}, {"r2"});
  t.Input("k", F, {"2", "3", "4"});
  t.Ints("s3", {-1, 4});
  t.N("Reshape", {"k", "s3"}, {"r3"});
  t.Ints("s4", {0, 3});
  Node& az = t.N("Reshape", {"e", "s4"}, {"r4"});
  SetInt(az, "allowzero", 1);
  t.Input("e", F, {"0", "5"});
  // A Constant node as the shape.
  auto ct = std::make_shared<Tensor>(I64, Dims{2});
  ct->data<int64_t>()[0] = 6;
  ct->data<int64_t>()[1] = -1;
  SetTensorAttr(t.N("Constant", {}, {"cs"}), "value", ct);
  t.N("Reshape", {"k", "cs"}, {"r5"});
  t.Input("dyn", I64, {"3"});
  t.N("Reshape", {"k", "dyn"}, {"r6"});
  ASSERT_TRUE(t.Run().ok()) << Err(t.Run());
  EXPECT_EQ(t.T("r1"), "tensor(float)[batch,seq,12,64]");
  EXPECT_EQ(t.T("r2"), "tensor(float)[batch,seq,768]");
  EXPECT_EQ(t.T("r3"), "tensor(float)[6,4]");
  EXPECT_EQ(t.T("r4"), "tensor(float)[0,3]");
  EXPECT_EQ(t.T("cs"), "tensor(int64)[2]");
  EXPECT_EQ(t.T("r5"), "tensor(float)[6,4]");
  EXPECT_EQ(t.T("r6"), "tensor(float)[?,?,?]");
}

TEST(ShapeInferenceReshape, IncompatibleSize) {
  G t;
  t.Input("x", F, {"2", "3"});
  t.Ints("s", {4, 2});
  t.N("Reshape", {"x", "s"}, {"y"}, "rs");
  Status s = t.Run();
  EXPECT_EQ(s.code(), ErrorCode::kInvalidGraph);
  EXPECT_EQ(s.message(), "node 'rs' (Reshape): cannot reshape input shapes [2,3] and [2] to [4,2]");
  G u;
  u.Input("x", F, {"2", "5"});
  u.Ints("s", {3, -1});
  u.N("Reshape", {"x", "s"}, {"y"}, "rs2");
  EXPECT_EQ(u.Run().code(), ErrorCode::kInvalidGraph);
}

TEST(ShapeInferenceReshape, TorchShapeChainWithSymbols) {
  // Shape -> Gather -> Unsqueeze -> Concat -> Reshape, as torch.onnx exports view().
  G t(13);
  t.Input("x", F, {"batch", "seq", "768"});
  t.N("Shape", {"x"}, {"shp"});
  t.Ints("i0", {0}, true);
  t.Ints("i1", {1}, true);
  t.N("Gather", {"shp", "i0"}, {"b"});
  t.N("Gather", {"shp", "i1"}, {"s"});
  t.Ints("ax0", {0});
  t.N("Unsqueeze", {"b", "ax0"}, {"bu"});
  t.N("Unsqueeze", {"s", "ax0"}, {"su"});
  t.Ints("heads", {12, 64});
  SetInt(t.N("Concat", {"bu", "su", "heads"}, {"newshape"}), "axis", 0);
  t.N("Reshape", {"x", "newshape"}, {"y"});
  t.N("Size", {"x"}, {"n"});
  ASSERT_TRUE(t.Run().ok()) << Err(t.Run());
  EXPECT_EQ(t.T("shp"), "tensor(int64)[3]");
  EXPECT_EQ(t.T("b"), "tensor(int64)[]");
  EXPECT_EQ(t.T("bu"), "tensor(int64)[1]");
  EXPECT_EQ(t.T("newshape"), "tensor(int64)[4]");
  EXPECT_EQ(t.T("y"), "tensor(float)[batch,seq,12,64]");
  EXPECT_EQ(t.T("n"), "tensor(int64)[]");
}

TEST(ShapeInferenceSqueeze, AttributeAndInputForms) {
  G old(11);
  old.Input("x", F, {"1", "batch", "1", "4"});
  SetInts(old.N("Squeeze", {"x"}, {"sq"}), "axes", {0, -2});
  SetInts(old.N("Unsqueeze", {"sq"}, {"us"}), "axes", {0, 3});
  old.Input("y", F, {"1", "3", "1"});
  old.N("Squeeze", {"y"}, {"all"});
  ASSERT_TRUE(old.Run().ok());
  EXPECT_EQ(old.T("sq"), "tensor(float)[batch,4]");
  EXPECT_EQ(old.T("us"), "tensor(float)[1,batch,4,1]");
  EXPECT_EQ(old.T("all"), "tensor(float)[3]");

  G nw(13);
  nw.Input("x", F, {"1", "batch", "1", "4"});
  nw.Ints("axes", {0, 2});
  nw.N("Squeeze", {"x", "axes"}, {"sq"});
  nw.Ints("uaxes", {-1});
  nw.N("Unsqueeze", {"sq", "uaxes"}, {"us"});
  nw.Input("dyn", I64, {"1"});
  nw.N("Squeeze", {"x", "dyn"}, {"unk"});
  ASSERT_TRUE(nw.Run().ok());
  EXPECT_EQ(nw.T("sq"), "tensor(float)[batch,4]");
  EXPECT_EQ(nw.T("us"), "tensor(float)[batch,4,1]");
  EXPECT_EQ(nw.T("unk"), "tensor(float)?");

  G bad(13);
  bad.Input("x", F, {"2", "3"});
  bad.Ints("axes", {1});
  bad.N("Squeeze", {"x", "axes"}, {"y"}, "sq");
  Status s = bad.Run();
  EXPECT_EQ(s.code(), ErrorCode::kInvalidGraph);
  EXPECT_EQ(s.message(), "node 'sq' (Squeeze): cannot squeeze axis 1 of size 3 (input shapes [2,3] and [1])");
}

TEST(ShapeInferenceTensor, TransposeConcatGather) {
  G t;
  t.Input("x", F, {"batch", "seq", "12", "64"});
  SetInts(t.N("Transpose", {"x"}, {"tp"}), "perm", {0, 2, 1, 3});
  t.N("Transpose", {"x"}, {"rev"});
  t.Input("a", F, {"batch", "3"});
  t.Input("b", F, {"batch", "5"});
  t.Input("c", F, {"?", "n"});
  SetInt(t.N("Concat", {"a", "b"}, {"ab"}), "axis", -1);
  SetInt(t.N("Concat", {"a", "c"}, {"ac"}), "axis", 1);
  t.Weight("emb", F, {30522, 768});
  t.Input("ids", I64, {"batch", "seq"});
  t.N("Gather", {"emb", "ids"}, {"g"});
  t.Ints("scalar", {2}, true);
  SetInt(t.N("Gather", {"x", "scalar"}, {"g2"}), "axis", 2);
  ASSERT_TRUE(t.Run().ok()) << Err(t.Run());
  EXPECT_EQ(t.T("tp"), "tensor(float)[batch,12,seq,64]");
  EXPECT_EQ(t.T("rev"), "tensor(float)[64,12,seq,batch]");
  EXPECT_EQ(t.T("ab"), "tensor(float)[batch,8]");
  EXPECT_EQ(t.T("ac"), "tensor(float)[batch,?]");
  EXPECT_EQ(t.T("g"), "tensor(float)[batch,seq,768]");
  EXPECT_EQ(t.T("g2"), "tensor(float)[batch,seq,64]");
}

TEST(ShapeInferenceTensor, ConcatRankMismatch) {
  G t;
  t.Input("a", F, {"2", "3"});
  t.Input("b", F, {"2", "3", "4"});
  SetInt(t.N("Concat", {"a", "b"}, {"c"}, "cat"), "axis", 0);
  Status s = t.Run();
  EXPECT_EQ(s.code(), ErrorCode::kInvalidGraph);
  EXPECT_EQ(s.message(), "node 'cat' (Concat): inputs have different ranks 2 and 3 (input shapes [2,3] and [2,3,4])");
}

TEST(ShapeInferenceTensor, ShapeSizeSlice) {
  G t(15);
  t.Input("x", F, {"batch", "seq", "768"});
  Node& sh = t.N("Shape", {"x"}, {"tail"});
  SetInt(sh, "start", 1);
  t.N("Size", {"x"}, {"sz"});
  t.Ints("st", {1, 0});
  t.Ints("en", {INT64_MAX, -1});
  t.Ints("ax", {2, 1});
  t.N("Slice", {"x", "st", "en", "ax"}, {"sl"});
  t.Ints("st2", {-1});
  t.Ints("en2", {INT64_MIN});
  t.Ints("ax2", {2});
  t.Ints("step2", {-2});
  t.N("Slice", {"x", "st2", "en2", "ax2", "step2"}, {"rev"});
  t.Ints("z", {0});
  t.Ints("big", {INT64_MAX});
  t.N("Slice", {"x", "z", "big"}, {"all"});
  t.N("Shape", {"x"}, {"shp"});
  t.Ints("one", {1});
  t.Ints("three", {3});
  t.N("Slice", {"shp", "one", "three"}, {"shp_tail"});
  t.Ints("e", {0, 0, 16, 48});
  t.N("Reshape", {"x", "shp_tail"}, {"r"}).since_version = 15;
  ASSERT_TRUE(t.Run().ok()) << Err(t.Run());
  EXPECT_EQ(t.T("tail"), "tensor(int64)[2]");
  EXPECT_EQ(t.T("sz"), "tensor(int64)[]");
  EXPECT_EQ(t.T("sl"), "tensor(float)[batch,?,767]");
  EXPECT_EQ(t.T("rev"), "tensor(float)[batch,seq,384]");
  EXPECT_EQ(t.T("all"), "tensor(float)[batch,seq,768]");
  EXPECT_EQ(t.T("shp_tail"), "tensor(int64)[2]");
  EXPECT_EQ(t.T("r"), "tensor(float)[seq,768]");  // uses the folded [seq,768]
}

TEST(ShapeInferenceTensor, SliceAttributeForm) {
  G t(9);
  t.Input("x", F, {"10", "20"});
  Node& n = t.N("Slice", {"x"}, {"y"});
  SetInts(n, "starts", {2, -5});
  SetInts(n, "ends", {8, 1000});
  SetInts(n, "axes", {0, 1});
  ASSERT_TRUE(t.Run().ok());
  EXPECT_EQ(t.T("y"), "tensor(float)[6,5]");
}

TEST(ShapeInferenceTensor, ExpandConstantOfShapeConstant) {
  G t;
  t.Input("x", F, {"3", "1"});
  t.Ints("shape", {2, 1, 4});
  t.N("Expand", {"x", "shape"}, {"ex"});
  t.Ints("cs", {2, 3});
  auto v = std::make_shared<Tensor>(I64, Dims{1});
  v->data<int64_t>()[0] = 7;
  SetTensorAttr(t.N("ConstantOfShape", {"cs"}, {"filled"}), "value", v);
  t.N("ConstantOfShape", {"cs"}, {"zeros"});
  Node& c1 = t.N("Constant", {}, {"cf"});
  c1.attrs["value_float"].type = Attribute::Type::kFloat;
  Node& c2 = t.N("Constant", {}, {"cis"});
  SetInts(c2, "value_ints", {1, 2, 3});
  Node& c3 = t.N("Constant", {}, {"ci"});
  SetInt(c3, "value_int", 5);
  ASSERT_TRUE(t.Run().ok()) << Err(t.Run());
  EXPECT_EQ(t.T("ex"), "tensor(float)[2,3,4]");
  EXPECT_EQ(t.T("filled"), "tensor(int64)[2,3]");
  EXPECT_EQ(t.T("zeros"), "tensor(float)[2,3]");
  EXPECT_EQ(t.T("cf"), "tensor(float)[]");
  EXPECT_EQ(t.T("cis"), "tensor(int64)[3]");
  EXPECT_EQ(t.T("ci"), "tensor(int64)[]");
}

TEST(ShapeInferenceReduce, AxesByOpset) {
  G t(13);
  t.Input("x", F, {"batch", "seq", "768"});
  t.Ints("ax", {-1});
  t.N("ReduceSum", {"x", "ax"}, {"rs"});  // ReduceSum-13 takes axes as an input
  SetInts(t.N("ReduceMean", {"x"}, {"rm"}), "axes", {1});  // ReduceMean-13 still an attribute
  Node& k0 = t.N("ReduceMax", {"x"}, {"rmax"});
  SetInt(k0, "keepdims", 0);
  SetInts(k0, "axes", {0, 2});
  Node& noop = t.N("ReduceSum", {"x"}, {"noop"});
  SetInt(noop, "noop_with_empty_axes", 1);
  t.N("ReduceSum", {"x"}, {"all"});
  Node& am = t.N("ArgMax", {"x"}, {"am"});
  SetInt(am, "axis", -1);
  SetInt(am, "keepdims", 0);
  ASSERT_TRUE(t.Run().ok()) << Err(t.Run());
  EXPECT_EQ(t.T("rs"), "tensor(float)[batch,seq,1]");
  EXPECT_EQ(t.T("rm"), "tensor(float)[batch,1,768]");
  EXPECT_EQ(t.T("rmax"), "tensor(float)[seq]");
  EXPECT_EQ(t.T("noop"), "tensor(float)[batch,seq,768]");
  EXPECT_EQ(t.T("all"), "tensor(float)[1,1,1]");
  EXPECT_EQ(t.T("am"), "tensor(int64)[batch,seq]");

  G u(18);
  u.Input("x", F, {"batch", "seq", "768"});
  u.Ints("ax", {1});
  Node& m = u.N("ReduceMean", {"x", "ax"}, {"rm"});
  SetInt(m, "keepdims", 0);
  u.Input("dyn", I64, {"1"});
  u.N("ReduceMean", {"x", "dyn"}, {"unk"});
  ASSERT_TRUE(u.Run().ok());
  EXPECT_EQ(u.T("rm"), "tensor(float)[batch,768]");
  EXPECT_EQ(u.T("unk"), "tensor(float)[?,?,?]");
}

TEST(ShapeInferenceDeclared, RefinesAndDetectsConflicts) {
  G t;
  t.Input("x", F, {"2", "3"});
  t.N("Relu", {"x"}, {"y"});
  t.Declare("y", F, {"?", "n"});
  t.Output("y");
  ASSERT_TRUE(t.Run().ok());
  EXPECT_EQ(t.T("y"), "tensor(float)[2,3]");
  EXPECT_EQ(ShapeString(t.g.outputs[0].type), "[2,3]");

  // A rule of ours disproves the declared shape (ONNX's generic rules only keep
  // the declaration: see SchemaInferenceFallback): like onnxruntime's lenient
  // merge, the model loads with what both agree on, and another rank drops the
  // shape (ddddocr's common.onnx declares its [T,1,C] Reshape output as [1,T]).
  G c;
  c.Input("x", F, {"2", "3"});
  c.N("Add", {"x", "x"}, {"y"}, "add");
  c.Declare("y", F, {"2", "4"});
  c.N("Reshape", {"x", "shp"}, {"r"}, "reshape");
  c.Ints("shp", {3, 1, 2});
  c.Declare("r", F, {"1", "n"});
  c.N("Relu", {"r"}, {"rr"});
  ASSERT_TRUE(c.Run().ok());
  EXPECT_EQ(c.T("y"), "tensor(float)[2,?]");
  EXPECT_EQ(c.T("r"), "tensor(float)?");  // ? = unknown rank
  EXPECT_EQ(c.T("rr"), "tensor(float)?");

  G ty;
  ty.Input("x", F, {"2"});
  SetInt(ty.N("Cast", {"x"}, {"y"}, "cast"), "to", 7);
  ty.Declare("y", F, {"2"});
  EXPECT_EQ(ty.Run().code(), ErrorCode::kInvalidGraph);
}

TEST(ShapeInferenceRobustness, UnknownOpsAndOddAttributes) {
  G t;
  t.Input("x", F, {"2", "3"});
  t.InputNoShape("u", F);
  t.N("MyCustomOp", {"x"}, {"c"});
  t.N("Relu", {"c"}, {"rc"});
  t.N("Relu", {"u"}, {"ru"});
  t.N("Transpose", {"u"}, {"tu"});
  t.N("Concat", {"x", "x"}, {"noaxis"});  // missing axis: type only
  t.N("Cast", {"x"}, {"noto"});
  t.N("Reshape", {"x"}, {"noshape"});
  t.N("Gather", {"x"}, {"noidx"});
  t.N("MaxPool", {"u"}, {"mp"});
  t.N("Conv", {"u", "u"}, {"cv"});
  t.N("Squeeze", {"x", "", ""}, {"sq"}).since_version = 13;
  ASSERT_TRUE(t.Run().ok()) << Err(t.Run());
  EXPECT_EQ(t.T("c"), "none");
  EXPECT_EQ(t.T("rc"), "none");
  EXPECT_EQ(t.T("ru"), "tensor(float)?");
  EXPECT_EQ(t.T("tu"), "tensor(float)?");
  EXPECT_EQ(t.T("noaxis"), "tensor(float)?");
  EXPECT_EQ(t.T("noto"), "none");
  EXPECT_EQ(t.T("noshape"), "tensor(float)?");
  EXPECT_EQ(t.T("noidx"), "tensor(float)?");
  EXPECT_EQ(t.T("mp"), "tensor(float)?");
  EXPECT_EQ(t.T("cv"), "tensor(float)?");
  EXPECT_EQ(t.T("sq"), "tensor(float)[2,3]");

  G p;
  p.Input("x", F, {"2", "3"});
  SetInts(p.N("Transpose", {"x"}, {"y"}, "tp"), "perm", {0, 0});
  EXPECT_EQ(p.Run().code(), ErrorCode::kInvalidGraph);
}

TEST(ShapeInferenceControlFlow, IfAndLoop) {
  G t(13);
  t.Input("cond", ElemType::kBool, {});
  t.Input("x", F, {"batch", "4"});
  auto then_g = std::make_shared<Graph>();
  then_g->name = "then";
  {
    Node n;
    n.name = "then_relu";
    n.op_type = "Relu";
    n.since_version = 13;
    n.inputs = {"x"};
    n.outputs = {"t_out"};
    then_g->nodes.push_back(n);
    then_g->outputs.push_back(ValueInfo{"t_out", TypeInfo(), ""});
  }
  auto else_g = std::make_shared<Graph>();
  else_g->name = "else";
  {
    Node n;
    n.name = "else_neg";
    n.op_type = "Neg";
    n.since_version = 13;
    n.inputs = {"x"};
    n.outputs = {"e_out"};
    else_g->nodes.push_back(n);
    else_g->outputs.push_back(ValueInfo{"e_out", TypeInfo(), ""});
  }
  Node& iff = t.N("If", {"cond"}, {"y"});
  iff.attrs["then_branch"].type = Attribute::Type::kGraph;
  iff.attrs["then_branch"].g = then_g;
  iff.attrs["else_branch"].type = Attribute::Type::kGraph;
  iff.attrs["else_branch"].g = else_g;
  iff.implicit_inputs = {"x"};

  auto body = std::make_shared<Graph>();
  body->name = "body";
  body->inputs = {ValueInfo{"i", TypeInfo(), ""}, ValueInfo{"c_in", TypeInfo(), ""}, ValueInfo{"acc", TypeInfo(), ""}};
  {
    Node add;
    add.name = "body_add";
    add.op_type = "Add";
    add.since_version = 13;
    add.inputs = {"acc", "x"};
    add.outputs = {"acc_out"};
    body->nodes.push_back(add);
    Node id;
    id.name = "body_id";
    id.op_type = "Identity";
    id.since_version = 13;
    id.inputs = {"c_in"};
    id.outputs = {"c_out"};
    body->nodes.push_back(id);
    Node sc;
    sc.name = "body_scan";
    sc.op_type = "ReduceSum";
    sc.since_version = 13;
    sc.inputs = {"x"};
    sc.outputs = {"scan"};
    body->nodes.push_back(sc);
    body->outputs = {ValueInfo{"c_out", TypeInfo(), ""}, ValueInfo{"acc_out", TypeInfo(), ""},
                     ValueInfo{"scan", TypeInfo(), ""}};
  }
  t.Ints("trip", {5}, true);
  Node& loop = t.N("Loop", {"trip", "", "x"}, {"final", "scans"});
  loop.attrs["body"].type = Attribute::Type::kGraph;
  loop.attrs["body"].g = body;
  loop.implicit_inputs = {"x"};
  ASSERT_TRUE(t.Run().ok()) << Err(t.Run());
  EXPECT_EQ(t.T("y"), "tensor(float)[batch,4]");
  auto ty = then_g->value_types.find("t_out");
  ASSERT_NE(ty, then_g->value_types.end());
  EXPECT_EQ(ShapeString(ty->second), "[batch,4]");
  // Carried values enter the body without a shape (it may change per
  // iteration), so the final value keeps only its type, as in onnx.
  EXPECT_EQ(t.T("final"), "tensor(float)?");
  EXPECT_EQ(t.T("scans"), "tensor(float)[5,1,1]");
  EXPECT_EQ(body->value_types["i"].ToString(), "tensor(int64)");
}

// ---------------------------------------------------------------------------
// A BERT-style self-attention block built as an ONNX protobuf and loaded the
// way a session loads it, with symbolic batch and sequence.

void AddDims(onnx::TensorShapeProto* shape, const std::vector<std::string>& dims) {
  for (const auto& d : dims) {
    if (std::isdigit(static_cast<unsigned char>(d[0]))) shape->add_dim()->set_dim_value(std::stoll(d));
    else shape->add_dim()->set_dim_param(d);
  }
}

void AddValue(google::protobuf::RepeatedPtrField<onnx::ValueInfoProto>* list, const std::string& name, int elem,
              const std::vector<std::string>& dims) {
  auto* vi = list->Add();
  vi->set_name(name);
  vi->mutable_type()->mutable_tensor_type()->set_elem_type(elem);
  AddDims(vi->mutable_type()->mutable_tensor_type()->mutable_shape(), dims);
}

onnx::NodeProto* AddNode(onnx::GraphProto* g, const std::string& op, std::vector<std::string> in,
                         std::vector<std::string> out) {
  auto* n = g->add_node();
  n->set_op_type(op);
  n->set_name(out[0] + "_" + op);
  for (auto& s : in) n->add_input(s);
  for (auto& s : out) n->add_output(s);
  return n;
}

void AddInitF(onnx::GraphProto* g, const std::string& name, std::vector<int64_t> dims) {
  auto* t = g->add_initializer();
  t->set_name(name);
  t->set_data_type(onnx::TensorProto::FLOAT);
  int64_t n = 1;
  for (int64_t d : dims) {
    t->add_dims(d);
    n *= d;
  }
  t->mutable_raw_data()->assign(static_cast<size_t>(n) * 4, '\0');
}

void AddInitI(onnx::GraphProto* g, const std::string& name, std::vector<int64_t> vals, bool scalar = false) {
  auto* t = g->add_initializer();
  t->set_name(name);
  t->set_data_type(onnx::TensorProto::INT64);
  if (!scalar) t->add_dims(static_cast<int64_t>(vals.size()));
  for (int64_t v : vals) t->add_int64_data(v);
}

void AttrInts(onnx::NodeProto* n, const std::string& name, std::vector<int64_t> v) {
  auto* a = n->add_attribute();
  a->set_name(name);
  a->set_type(onnx::AttributeProto::INTS);
  for (int64_t x : v) a->add_ints(x);
}
void AttrInt(onnx::NodeProto* n, const std::string& name, int64_t v) {
  auto* a = n->add_attribute();
  a->set_name(name);
  a->set_type(onnx::AttributeProto::INT);
  a->set_i(v);
}

TEST(ShapeInferenceModel, BertAttentionBlock) {
  onnx::ModelProto m;
  m.set_ir_version(8);
  auto* op = m.add_opset_import();
  op->set_domain("");
  op->set_version(17);
  auto* g = m.mutable_graph();
  g->set_name("attention");
  AddValue(g->mutable_input(), "hidden", 1, {"batch", "seq", "768"});
  AddValue(g->mutable_input(), "mask", 7, {"batch", "seq"});
  AddValue(g->mutable_output(), "out", 1, {"batch", "seq", "768"});
  for (const char* w : {"Wq", "Wk", "Wv", "Wo"}) AddInitF(g, w, {768, 768});
  for (const char* b : {"Bq", "Bk", "Bv", "Bo", "gamma", "beta"}) AddInitF(g, b, {768});
  AddInitI(g, "split_heads", {0, 0, 12, 64});
  AddInitI(g, "ax12", {1, 2});
  AddInitI(g, "i0", {0}, true);
  AddInitI(g, "i1", {1}, true);
  AddInitI(g, "ax0", {0});
  AddInitI(g, "hid", {768});
  AddInitF(g, "scale", {});

  for (std::string p : {"q", "k", "v"}) {
    AddNode(g, "MatMul", {"hidden", "W" + p}, {p + "_mm"});
    AddNode(g, "Add", {p + "_mm", "B" + p}, {p + "_lin"});
    AddNode(g, "Reshape", {p + "_lin", "split_heads"}, {p + "_heads"});
  }
  AttrInts(AddNode(g, "Transpose", {"q_heads"}, {"q_t"}), "perm", {0, 2, 1, 3});
  AttrInts(AddNode(g, "Transpose", {"k_heads"}, {"k_t"}), "perm", {0, 2, 3, 1});
  AttrInts(AddNode(g, "Transpose", {"v_heads"}, {"v_t"}), "perm", {0, 2, 1, 3});
  AddNode(g, "MatMul", {"q_t", "k_t"}, {"scores"});
  AddNode(g, "Div", {"scores", "scale"}, {"scaled"});
  // Mask [batch, seq] -> [batch, 1, 1, seq] float additive mask.
  AddNode(g, "Unsqueeze", {"mask", "ax12"}, {"mask4"});
  AttrInt(AddNode(g, "Cast", {"mask4"}, {"maskf"}), "to", 1);
  AddNode(g, "Add", {"scaled", "maskf"}, {"masked"});
  AttrInt(AddNode(g, "Softmax", {"masked"}, {"probs"}), "axis", -1);
  AddNode(g, "MatMul", {"probs", "v_t"}, {"ctx"});
  AttrInts(AddNode(g, "Transpose", {"ctx"}, {"ctx_t"}), "perm", {0, 2, 1, 3});
  // Merge heads through the torch-style Shape chain.
  AddNode(g, "Shape", {"hidden"}, {"hshape"});
  AddNode(g, "Gather", {"hshape", "i0"}, {"b"});
  AddNode(g, "Gather", {"hshape", "i1"}, {"s"});
  AddNode(g, "Unsqueeze", {"b", "ax0"}, {"b1"});
  AddNode(g, "Unsqueeze", {"s", "ax0"}, {"s1"});
  AttrInt(AddNode(g, "Concat", {"b1", "s1", "hid"}, {"merge_shape"}), "axis", 0);
  AddNode(g, "Reshape", {"ctx_t", "merge_shape"}, {"merged"});
  AddNode(g, "MatMul", {"merged", "Wo"}, {"o_mm"});
  AddNode(g, "Add", {"o_mm", "Bo"}, {"o_lin"});
  AddNode(g, "Add", {"o_lin", "hidden"}, {"resid"});
  AttrInt(AddNode(g, "LayerNormalization", {"resid", "gamma", "beta"}, {"out"}), "axis", -1);

  std::string bytes = m.SerializeAsString();
  Model model;
  Status s = LoadModelFromBytes(bytes.data(), bytes.size(), "", &model);
  ASSERT_TRUE(s.ok()) << s.message();
  s = InferTypesAndShapes(*model.graph);
  ASSERT_TRUE(s.ok()) << s.message();
  auto T = [&](const std::string& n) {
    auto it = model.graph->value_types.find(n);
    return it == model.graph->value_types.end() ? std::string("none")
                                                 : it->second.ToString() + ShapeString(it->second);
  };
  EXPECT_EQ(T("q_lin"), "tensor(float)[batch,seq,768]");
  EXPECT_EQ(T("q_heads"), "tensor(float)[batch,seq,12,64]");
  EXPECT_EQ(T("q_t"), "tensor(float)[batch,12,seq,64]");
  EXPECT_EQ(T("k_t"), "tensor(float)[batch,12,64,seq]");
  EXPECT_EQ(T("scores"), "tensor(float)[batch,12,seq,seq]");
  EXPECT_EQ(T("mask4"), "tensor(int64)[batch,1,1,seq]");
  EXPECT_EQ(T("maskf"), "tensor(float)[batch,1,1,seq]");
  EXPECT_EQ(T("probs"), "tensor(float)[batch,12,seq,seq]");
  EXPECT_EQ(T("ctx"), "tensor(float)[batch,12,seq,64]");
  EXPECT_EQ(T("ctx_t"), "tensor(float)[batch,seq,12,64]");
  EXPECT_EQ(T("merge_shape"), "tensor(int64)[3]");
  EXPECT_EQ(T("merged"), "tensor(float)[batch,seq,768]");
  EXPECT_EQ(T("resid"), "tensor(float)[batch,seq,768]");
  EXPECT_EQ(T("out"), "tensor(float)[batch,seq,768]");
}

// A Graph-input initializer can be overridden by a feed, so its value is not
// used as a constant (its type still is).
TEST(ShapeInferenceModel, OverridableInitializerIsNotConstant) {
  G t;
  t.Input("x", F, {"2", "3"});
  t.Ints("s", {3, 2});
  t.Input("s", I64, {"2"});
  t.N("Reshape", {"x", "s"}, {"y"});
  ASSERT_TRUE(t.Run().ok());
  EXPECT_EQ(t.T("y"), "tensor(float)[?,?]");
}

// ---------------------------------------------------------------------------
// Operators without a rule of ours fall back on ONNX's schema inference.

TEST(SchemaInferenceFallback, DetKeepsSymbolicBatch) {
  G t;
  t.Input("x", F, {"batch", "3", "3"});
  t.N("Det", {"x"}, {"y"});
  t.Output("y");
  ASSERT_EQ(Err(t.Run()), "OK");
  EXPECT_EQ(t.T("y"), "tensor(float)[batch]");
}

TEST(SchemaInferenceFallback, TileSeesConstantRepeats) {
  G t;
  t.Input("x", F, {"2", "3"});
  t.Ints("reps", {2, 2});
  t.N("Tile", {"x", "reps"}, {"y"});
  t.Output("y");
  ASSERT_EQ(Err(t.Run()), "OK");
  EXPECT_EQ(t.T("y"), "tensor(float)[4,6]");
}

TEST(SchemaInferenceFallback, DisagreementWithADeclarationKeepsTheDeclaration) {
  G t;
  t.Input("x", F, {"4", "3", "3"});
  t.Declare("y", F, {"7"});
  t.N("Det", {"x"}, {"y"});
  t.Output("y");
  ASSERT_EQ(Err(t.Run()), "OK");
  EXPECT_EQ(t.T("y"), "tensor(float)[7]");
}

}  // namespace
}  // namespace onyx
