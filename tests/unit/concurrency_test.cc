// Many threads on one session, cancellation, handles outliving their session,
// the per-session memory limit and OpenBLAS's thread count following the
// session that runs. scripts/sanitize.sh runs the Concurrency* tests under
// ThreadSanitizer as well.
#include <cblas.h>
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cmath>
#include <thread>

#include "core/session/session.h"
#include "providers/cpu/math/sgemm.h"
#include "onnx-ml.pb.h"

namespace onyx {
namespace {

onnx::ValueInfoProto* AddValue(google::protobuf::RepeatedPtrField<onnx::ValueInfoProto>* list,
                               const std::string& name, int elem, const std::vector<std::string>& dims) {
  auto* vi = list->Add();
  vi->set_name(name);
  auto* tt = vi->mutable_type()->mutable_tensor_type();
  tt->set_elem_type(elem);
  auto* shape = tt->mutable_shape();
  for (const auto& d : dims) {
    if (std::isdigit(static_cast<unsigned char>(d[0]))) shape->add_dim()->set_dim_value(std::stoll(d));
    else shape->add_dim()->set_dim_param(d);
  }
  return vi;
}

onnx::NodeProto* AddNode(onnx::GraphProto* g, const std::string& op, std::vector<std::string> in,
                         std::vector<std::string> out) {
  auto* n = g->add_node();
  n->set_op_type(op);
  n->set_name(op + "_" + std::to_string(g->node_size()));
  for (auto& s : in) n->add_input(s);
  for (auto& s : out) n->add_output(s);
  return n;
}

void AddWeights(onnx::GraphProto* g, const std::string& name, int rows, int cols, float scale) {
  auto* w = g->add_initializer();
  w->set_name(name);
  w->set_data_type(1);
  w->add_dims(rows);
  w->add_dims(cols);
  for (int i = 0; i < rows * cols; ++i) w->add_float_data(scale * std::sin(0.37f * static_cast<float>(i)));
}

// Y = Softmax(Relu(X @ W1) @ W2) + Tanh(X @ W1): GEMMs (OpenBLAS), the
// session's pool (elementwise and softmax), intermediates reused per run.
onnx::ModelProto MlpModel(int width) {
  onnx::ModelProto m;
  m.set_ir_version(8);
  auto* op = m.add_opset_import();
  op->set_domain("");
  op->set_version(17);
  auto* g = m.mutable_graph();
  g->set_name("mlp");
  const std::string w = std::to_string(width);
  AddValue(g->mutable_input(), "X", 1, {"N", w});
  AddValue(g->mutable_output(), "Y", 1, {"N", w});
  AddWeights(g, "W1", width, width, 0.05f);
  AddWeights(g, "W2", width, width, 0.03f);
  AddNode(g, "MatMul", {"X", "W1"}, {"H"});
  AddNode(g, "Relu", {"H"}, {"R"});
  AddNode(g, "MatMul", {"R", "W2"}, {"P"});
  AddNode(g, "Softmax", {"P"}, {"S"});
  AddNode(g, "Tanh", {"H"}, {"T"});
  AddNode(g, "Add", {"S", "T"}, {"Y"});
  return m;
}

// Loop with trip count M (an input): a run as long as the caller asks.
// Y = X + M (one added per iteration).
onnx::ModelProto LongLoopModel() {
  onnx::ModelProto m;
  m.set_ir_version(8);
  auto* op = m.add_opset_import();
  op->set_domain("");
  op->set_version(17);
  auto* g = m.mutable_graph();
  g->set_name("long_loop");
  AddValue(g->mutable_input(), "M", 7, {});
  AddValue(g->mutable_input(), "X", 1, {"4"});
  AddValue(g->mutable_output(), "Y", 1, {"4"});
  auto* one = g->add_initializer();
  one->set_name("one");
  one->set_data_type(1);
  one->add_float_data(1.f);
  auto* loop = AddNode(g, "Loop", {"M", "", "X"}, {"Y"});
  auto* attr = loop->add_attribute();
  attr->set_name("body");
  attr->set_type(onnx::AttributeProto::GRAPH);
  auto* body = attr->mutable_g();
  body->set_name("body");
  AddValue(body->mutable_input(), "i", 7, {});
  AddValue(body->mutable_input(), "cond_in", 9, {});
  AddValue(body->mutable_input(), "acc", 1, {"4"});
  AddValue(body->mutable_output(), "cond_out", 9, {});
  AddValue(body->mutable_output(), "acc_out", 1, {"4"});
  AddNode(body, "Identity", {"cond_in"}, {"cond_out"});
  AddNode(body, "Add", {"acc", "one"}, {"acc_out"});
  return m;
}

std::unique_ptr<Session> Load(const onnx::ModelProto& m, SessionOptions o = SessionOptions()) {
  std::string bytes = m.SerializeAsString();
  std::unique_ptr<Session> s;
  Status st = Session::CreateFromBytes(o, bytes.data(), bytes.size(), &s);
  EXPECT_TRUE(st.ok()) << st.message();
  return s;
}

Tensor Input(int rows, int width, int seed) {
  Tensor x(ElemType::kFloat, {rows, width});
  for (int i = 0; i < rows * width; ++i) x.data<float>()[i] = std::cos(0.11f * static_cast<float>(i + 7 * seed));
  return x;
}

std::vector<float> RunMlp(const Session& s, int rows, int width, int seed) {
  Value v(Input(rows, width, seed));
  std::vector<Value> out;
  Status st = s.Run(nullptr, {"X"}, {&v}, {}, &out);
  if (!st.ok()) return {};
  const Tensor& y = out[0].tensor();
  return std::vector<float>(y.data<float>(), y.data<float>() + y.size());
}

// N threads x M runs, each with its own input (and batch size), give exactly
// what the same runs give one after another.
TEST(Concurrency, ThreadsOnOneSessionMatchSerialRuns) {
  constexpr int kThreads = 6, kRuns = 25, kWidth = 64;
  SessionOptions o;
  o.intra_op_threads = 2;
  auto s = Load(MlpModel(kWidth), o);
  ASSERT_TRUE(s);
  auto rows = [](int t, int r) { return 1 + (t + r) % 5 * 8; };
  std::vector<std::vector<std::vector<float>>> serial(kThreads, std::vector<std::vector<float>>(kRuns));
  for (int t = 0; t < kThreads; ++t)
    for (int r = 0; r < kRuns; ++r) {
      serial[t][r] = RunMlp(*s, rows(t, r), kWidth, t * 100 + r);
      ASSERT_EQ(serial[t][r].size(), static_cast<size_t>(rows(t, r) * kWidth));
    }
  std::vector<int> mismatches(kThreads, 0);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t)
    threads.emplace_back([&, t] {
      for (int r = 0; r < kRuns; ++r)
        if (RunMlp(*s, rows(t, r), kWidth, t * 100 + r) != serial[t][r]) mismatches[t]++;
    });
  for (auto& th : threads) th.join();
  for (int t = 0; t < kThreads; ++t) EXPECT_EQ(mismatches[t], 0) << "thread " << t;
}

// RunOptions.terminate set from another thread stops a run that would take
// minutes within a fraction of a second; the session then runs normally.
TEST(Concurrency, TerminateStopsALongRunPromptlyAndTheSessionStaysUsable) {
  auto s = Load(LongLoopModel());
  ASSERT_TRUE(s);
  Tensor m(ElemType::kInt64, {});
  m.data<int64_t>()[0] = int64_t{1} << 40;
  Tensor x(ElemType::kFloat, {4});
  for (int i = 0; i < 4; ++i) x.data<float>()[i] = static_cast<float>(i);
  Value mv(std::move(m)), xv(std::move(x));
  RunOptions ro;
  std::atomic<bool> started{false};
  Status st;
  auto begin = std::chrono::steady_clock::now();
  std::chrono::steady_clock::time_point stopped;
  std::thread runner([&] {
    started = true;
    std::vector<Value> out;
    st = s->Run(&ro, {"M", "X"}, {&mv, &xv}, {}, &out);
    stopped = std::chrono::steady_clock::now();
  });
  while (!started) std::this_thread::yield();
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  auto set_at = std::chrono::steady_clock::now();
  ro.terminate = true;
  runner.join();
  EXPECT_FALSE(st.ok());
  EXPECT_NE(st.message().find("terminate"), std::string::npos) << st.message();
  auto latency = std::chrono::duration_cast<std::chrono::milliseconds>(stopped - set_at).count();
  EXPECT_LT(latency, 1000) << "run went on " << latency << " ms after terminate was set";
  EXPECT_GT(std::chrono::duration_cast<std::chrono::milliseconds>(set_at - begin).count(), 150);

  ro.terminate = false;
  Tensor m3(ElemType::kInt64, {});
  m3.data<int64_t>()[0] = 3;
  Value m3v(std::move(m3));
  std::vector<Value> out;
  st = s->Run(&ro, {"M", "X"}, {&m3v, &xv}, {}, &out);
  ASSERT_TRUE(st.ok()) << st.message();
  for (int i = 0; i < 4; ++i) EXPECT_EQ(out[0].tensor().data<float>()[i], static_cast<float>(i + 3));
}

// Outputs (and their buffers from a memory-limited allocator) outlive the
// session that made them; releasing in either order is fine.
TEST(Concurrency, OutputsOutliveTheirSession) {
  for (bool limited : {false, true}) {
    SessionOptions o;
    if (limited) o.config[kSessionMemoryLimitKey] = "10000000";
    auto s = Load(MlpModel(16), o);
    ASSERT_TRUE(s);
    Value v(Input(3, 16, 1));
    std::vector<Value> first, second;
    ASSERT_TRUE(s->Run(nullptr, {"X"}, {&v}, {}, &first).ok());
    ASSERT_TRUE(s->Run(nullptr, {"X"}, {&v}, {}, &second).ok());
    std::vector<float> expect(first[0].tensor().data<float>(), first[0].tensor().data<float>() + 48);
    second.clear();
    s.reset();
    std::vector<float> got(first[0].tensor().data<float>(), first[0].tensor().data<float>() + 48);
    EXPECT_EQ(got, expect);
    first.clear();  // the last buffer of the limited allocator: it goes with it
  }
}

// The memory limit refuses a run that needs more, naming the key, and counts
// every run in flight; smaller runs still pass afterwards.
TEST(Concurrency, MemoryLimitRefusesBigRunsAndKeepsTheSessionUsable) {
  SessionOptions o;
  o.config[kSessionMemoryLimitKey] = "200000";
  auto s = Load(MlpModel(64), o);
  ASSERT_TRUE(s);
  Value big(Input(512, 64, 0));  // 128 KiB per intermediate
  std::vector<Value> out;
  Status st = s->Run(nullptr, {"X"}, {&big}, {}, &out);
  ASSERT_FALSE(st.ok());
  EXPECT_NE(st.message().find("session.memory_limit_bytes"), std::string::npos) << st.message();
  EXPECT_EQ(RunMlp(*s, 2, 64, 5).size(), 128u);

  for (const char* bad : {"0", "-5", "12abc", "", "99999999999999999999999"}) {
    SessionOptions b;
    b.config[kSessionMemoryLimitKey] = bad;
    std::string bytes = MlpModel(4).SerializeAsString();
    std::unique_ptr<Session> bs;
    Status bst = Session::CreateFromBytes(b, bytes.data(), bytes.size(), &bs);
    EXPECT_EQ(bst.code(), ErrorCode::kInvalidArgument) << bad;
    EXPECT_NE(bst.message().find("session.memory_limit_bytes"), std::string::npos) << bst.message();
  }
}

// OpenBLAS's thread count is process-wide; each session's GEMMs get the
// session's own intra-op count, not the last-created session's.
TEST(Concurrency, BlasThreadsFollowTheSessionThatRuns) {
  // Float GEMMs run on the engine's own SGEMM where it has a micro-kernel:
  // the portable path sends them to OpenBLAS, whose thread count is observed.
  const sgemm::Isa saved = sgemm::ActiveIsa();
  sgemm::SetIsaForTesting(sgemm::Isa::kBaseline);
  SessionOptions one, three;
  one.intra_op_threads = 1;
  three.intra_op_threads = 3;
  auto a = Load(MlpModel(32), one);
  auto b = Load(MlpModel(32), three);
  ASSERT_TRUE(a && b);
  ASSERT_FALSE(RunMlp(*a, 4, 32, 0).empty());
  EXPECT_EQ(openblas_get_num_threads(), 1);
  ASSERT_FALSE(RunMlp(*b, 4, 32, 0).empty());
  EXPECT_EQ(openblas_get_num_threads(), 3);
  ASSERT_FALSE(RunMlp(*a, 4, 32, 0).empty());
  EXPECT_EQ(openblas_get_num_threads(), 1);
  sgemm::SetIsaForTesting(saved);
}

// Options the engine cannot act on are refused, naming them; the settings
// onnxruntime code uses for sequential execution pass.
TEST(Concurrency, UnhonouredOptionsAreRefusedByName) {
  struct Case {
    const char* name;
    void (*set)(SessionOptions*);
    const char* expect;  // empty: accepted
  };
  const Case cases[] = {
      {"sequential", [](SessionOptions* o) { o->execution_mode = 0; }, ""},
      {"inter_op 0", [](SessionOptions* o) { o->inter_op_threads = 0; }, ""},
      {"inter_op 1", [](SessionOptions* o) { o->inter_op_threads = 1; }, ""},
      {"parallel", [](SessionOptions* o) { o->execution_mode = 1; }, "execution_mode"},
      {"inter_op 4", [](SessionOptions* o) { o->inter_op_threads = 4; }, "inter_op_num_threads"},
      {"provider option",
       [](SessionOptions* o) { o->providers.push_back({"CPUExecutionProvider", {{"use_arena", "1"}}}); },
       "provider option 'use_arena'"},
  };
  std::string bytes = MlpModel(4).SerializeAsString();
  for (const auto& c : cases) {
    SessionOptions o;
    c.set(&o);
    std::unique_ptr<Session> s;
    Status st = Session::CreateFromBytes(o, bytes.data(), bytes.size(), &s);
    if (*c.expect == '\0') {
      EXPECT_TRUE(st.ok()) << c.name << ": " << st.message();
    } else {
      EXPECT_FALSE(st.ok()) << c.name;
      EXPECT_NE(st.message().find(c.expect), std::string::npos) << c.name << ": " << st.message();
    }
  }
}

}  // namespace
}  // namespace onyx
