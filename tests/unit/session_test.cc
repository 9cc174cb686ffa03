// Session-level behaviour through the engine API: loading, validation of
// feeds, error codes and messages, concurrency.
#include <gtest/gtest.h>

#include <thread>

#include "core/session/session.h"
#include "onnx-ml.pb.h"

namespace onyx {
namespace {

void AddDim(onnx::TensorShapeProto* shape, int64_t v) { shape->add_dim()->set_dim_value(v); }
void AddSym(onnx::TensorShapeProto* shape, const std::string& s) { shape->add_dim()->set_dim_param(s); }

onnx::ValueInfoProto* AddValue(google::protobuf::RepeatedPtrField<onnx::ValueInfoProto>* list, const std::string& name,
                               int elem, std::vector<std::string> dims) {
  auto* vi = list->Add();
  vi->set_name(name);
  auto* tt = vi->mutable_type()->mutable_tensor_type();
  tt->set_elem_type(elem);
  auto* shape = tt->mutable_shape();
  for (const auto& d : dims) {
    if (!d.empty() && std::isdigit(static_cast<unsigned char>(d[0]))) AddDim(shape, std::stoll(d));
    else AddSym(shape, d);
  }
  return vi;
}

onnx::NodeProto* AddNode(onnx::GraphProto* g, const std::string& op, std::vector<std::string> in,
                         std::vector<std::string> out, const std::string& name = "") {
  auto* n = g->add_node();
  n->set_op_type(op);
  n->set_name(name.empty() ? op + "_node" : name);
  for (auto& s : in) n->add_input(s);
  for (auto& s : out) n->add_output(s);
  return n;
}

// Y = Relu(X + B) with X float [N, 3] (N symbolic) and B an initializer.
onnx::ModelProto AddReluModel() {
  onnx::ModelProto m;
  m.set_ir_version(8);
  m.set_producer_name("session_test");
  auto* op = m.add_opset_import();
  op->set_domain("");
  op->set_version(17);
  auto* g = m.mutable_graph();
  g->set_name("add_relu");
  AddValue(g->mutable_input(), "X", 1, {"N", "3"});
  AddValue(g->mutable_output(), "Y", 1, {"N", "3"});
  auto* b = g->add_initializer();
  b->set_name("B");
  b->set_data_type(1);
  b->add_dims(3);
  for (float v : {1.f, -2.f, 0.5f}) b->add_float_data(v);
  AddNode(g, "Add", {"X", "B"}, {"S"}, "add");
  AddNode(g, "Relu", {"S"}, {"Y"}, "relu");
  return m;
}

Status Load(const onnx::ModelProto& m, std::unique_ptr<Session>* s) {
  std::string bytes = m.SerializeAsString();
  return Session::CreateFromBytes(SessionOptions(), bytes.data(), bytes.size(), s);
}

Status RunOne(const Session& s, const std::string& name, Tensor x, std::vector<Value>* out) {
  Value v(std::move(x));
  return s.Run(nullptr, {name}, {&v}, {}, out);
}

TEST(Session, RunsAndBroadcasts) {
  std::unique_ptr<Session> s;
  ASSERT_TRUE(Load(AddReluModel(), &s).ok());
  Tensor x(ElemType::kFloat, {2, 3});
  float in[] = {0, 0, 0, -5, 5, -1};
  std::copy(in, in + 6, x.data<float>());
  std::vector<Value> out;
  Status st = RunOne(*s, "X", std::move(x), &out);
  ASSERT_TRUE(st.ok()) << st.message();
  ASSERT_EQ(out.size(), 1u);
  const float* y = out[0].tensor().data<float>();
  std::vector<float> expect = {1, 0, 0.5f, 0, 3, 0};
  for (int i = 0; i < 6; ++i) EXPECT_FLOAT_EQ(y[i], expect[i]);
  EXPECT_EQ(s->inputs().size(), 1u);
  EXPECT_EQ(s->inputs()[0].type.dims[0].symbol, "N");
}

TEST(Session, MissingFileIsNoSuchFile) {
  std::unique_ptr<Session> s;
  Status st = Session::Create(SessionOptions(), "/nonexistent/model.onnx", &s);
  EXPECT_EQ(st.code(), ErrorCode::kNoSuchFile);
  EXPECT_NE(st.message().find("/nonexistent/model.onnx"), std::string::npos);
}

TEST(Session, GarbageIsInvalidProtobuf) {
  std::unique_ptr<Session> s;
  std::string junk = "this is not a protobuf \xff\xff\xff\xff";
  EXPECT_EQ(Session::CreateFromBytes(SessionOptions(), junk.data(), junk.size(), &s).code(),
            ErrorCode::kInvalidProtobuf);
  EXPECT_EQ(Session::CreateFromBytes(SessionOptions(), "", 0, &s).code(), ErrorCode::kInvalidProtobuf);
}

TEST(Session, UnknownOpIsNotImplementedNamingIt) {
  auto m = AddReluModel();
  m.mutable_graph()->mutable_node(1)->set_op_type("FancyOp");
  std::unique_ptr<Session> s;
  Status st = Load(m, &s);
  EXPECT_EQ(st.code(), ErrorCode::kNotImplemented);
  EXPECT_NE(st.message().find("FancyOp"), std::string::npos) << st.message();
  EXPECT_NE(st.message().find("'relu'"), std::string::npos) << st.message();
  EXPECT_NE(st.message().find("opset 17"), std::string::npos) << st.message();
  EXPECT_NE(st.message().find("ai.onnx"), std::string::npos) << st.message();
}

TEST(Session, CycleIsInvalidGraph) {
  auto m = AddReluModel();
  auto* g = m.mutable_graph();
  g->mutable_node(0)->set_input(0, "Y2");
  AddNode(g, "Relu", {"S"}, {"Y2"}, "back");
  std::unique_ptr<Session> s;
  Status st = Load(m, &s);
  EXPECT_EQ(st.code(), ErrorCode::kInvalidGraph);
  EXPECT_NE(st.message().find("cycle"), std::string::npos) << st.message();
}

TEST(Session, DanglingInputAndMissingInitializerAreInvalidGraph) {
  auto m = AddReluModel();
  m.mutable_graph()->mutable_initializer()->Clear();  // B is now referenced but absent
  std::unique_ptr<Session> s;
  Status st = Load(m, &s);
  EXPECT_EQ(st.code(), ErrorCode::kInvalidGraph);
  EXPECT_NE(st.message().find("'B'"), std::string::npos) << st.message();
  EXPECT_NE(st.message().find("'add'"), std::string::npos) << st.message();

  auto m2 = AddReluModel();
  m2.mutable_graph()->mutable_output(0)->set_name("Nowhere");
  EXPECT_EQ(Load(m2, &s).code(), ErrorCode::kInvalidGraph);
}

TEST(Session, BadFeedsAreInvalidArgumentAndSessionStaysUsable) {
  std::unique_ptr<Session> s;
  ASSERT_TRUE(Load(AddReluModel(), &s).ok());
  std::vector<Value> out;

  Status st = RunOne(*s, "Z", Tensor(ElemType::kFloat, {1, 3}), &out);
  EXPECT_EQ(st.code(), ErrorCode::kInvalidArgument);
  EXPECT_EQ(st.message(), "Invalid input name: Z");

  st = s->Run(nullptr, {}, {}, {}, &out);
  EXPECT_EQ(st.code(), ErrorCode::kInvalidArgument);
  EXPECT_EQ(st.message(), "Missing Input: X");

  st = RunOne(*s, "X", Tensor(ElemType::kFloat, {2, 4}), &out);
  EXPECT_EQ(st.code(), ErrorCode::kInvalidArgument);
  EXPECT_EQ(st.message(),
            "Got invalid dimensions for input: X for the following indices\n index: 1 Got: 4 Expected: 3\n"
            " Please fix either the inputs or the model.");

  st = RunOne(*s, "X", Tensor(ElemType::kFloat, {3}), &out);
  EXPECT_EQ(st.code(), ErrorCode::kInvalidArgument);
  EXPECT_NE(st.message().find("Invalid rank for input: X Got: 1 Expected: 2"), std::string::npos) << st.message();

  st = RunOne(*s, "X", Tensor(ElemType::kDouble, {1, 3}), &out);
  EXPECT_EQ(st.code(), ErrorCode::kInvalidArgument);
  EXPECT_NE(st.message().find("tensor(double)"), std::string::npos) << st.message();

  Tensor ok(ElemType::kFloat, {1, 3});
  for (int i = 0; i < 3; ++i) ok.data<float>()[i] = 1.f;
  ASSERT_TRUE(RunOne(*s, "X", std::move(ok), &out).ok());
  EXPECT_FLOAT_EQ(out[0].tensor().data<float>()[0], 2.f);
}

TEST(Session, KernelErrorNamesNodeOpAndShapes) {
  // MatMul with mismatched inner dims is only detectable at run time here.
  onnx::ModelProto m;
  m.set_ir_version(8);
  m.add_opset_import()->set_version(17);
  auto* g = m.mutable_graph();
  AddValue(g->mutable_input(), "A", 1, {"M", "K"});
  AddValue(g->mutable_input(), "B", 1, {"K2", "N"});
  AddValue(g->mutable_output(), "C", 1, {"M", "N"});
  AddNode(g, "MatMul", {"A", "B"}, {"C"}, "mm");
  std::unique_ptr<Session> s;
  ASSERT_TRUE(Load(m, &s).ok());
  Value a(Tensor(ElemType::kFloat, {2, 3})), b(Tensor(ElemType::kFloat, {4, 5}));
  std::vector<Value> out;
  Status st = s->Run(nullptr, {"A", "B"}, {&a, &b}, {}, &out);
  EXPECT_NE(st.code(), ErrorCode::kOk);
  EXPECT_NE(st.message().find("MatMul"), std::string::npos) << st.message();
  EXPECT_NE(st.message().find("'mm'"), std::string::npos) << st.message();
  EXPECT_NE(st.message().find("[2,3]"), std::string::npos) << st.message();
  EXPECT_NE(st.message().find("[4,5]"), std::string::npos) << st.message();
}

TEST(Session, ConcurrentRunsAgree) {
  std::unique_ptr<Session> s;
  ASSERT_TRUE(Load(AddReluModel(), &s).ok());
  std::vector<std::thread> threads;
  std::vector<int> failures(8, 0);
  for (int t = 0; t < 8; ++t) {
    threads.emplace_back([&, t] {
      for (int iter = 0; iter < 200; ++iter) {
        Tensor x(ElemType::kFloat, {4, 3});
        for (int i = 0; i < 12; ++i) x.data<float>()[i] = static_cast<float>(t + i);
        std::vector<Value> out;
        if (!RunOne(*s, "X", std::move(x), &out).ok()) { failures[t]++; continue; }
        const float* y = out[0].tensor().data<float>();
        float b[3] = {1.f, -2.f, 0.5f};
        for (int i = 0; i < 12; ++i)
          if (y[i] != std::max(0.f, static_cast<float>(t + i) + b[i % 3])) failures[t]++;
      }
    });
  }
  for (auto& th : threads) th.join();
  for (int f : failures) EXPECT_EQ(f, 0);
}

TEST(Session, TerminateFlagStopsRun) {
  std::unique_ptr<Session> s;
  ASSERT_TRUE(Load(AddReluModel(), &s).ok());
  RunOptions ro;
  ro.terminate = true;
  Value v(Tensor(ElemType::kFloat, {1, 3}));
  std::vector<Value> out;
  Status st = s->Run(&ro, {"X"}, {&v}, {}, &out);
  EXPECT_EQ(st.code(), ErrorCode::kRuntimeException);
  EXPECT_NE(st.message().find("terminate"), std::string::npos);
}

}  // namespace
}  // namespace onyx
