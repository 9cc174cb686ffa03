// Session and run config keys through the engine (issue 12: no silent
// options): unknown keys refused by name, refused keys with their reason,
// keys accepted at the value that says what the engine does, and the effect
// of the honoured ones.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <fstream>
#include <limits>

#include "core/session/session.h"
#include "core/session/session_config.h"
#include "onnx-ml.pb.h"

namespace onyx {
namespace {

// Y = X * S (S a float initializer of 1 element), X float [N].
onnx::ModelProto MulModel(float scale, const std::string& out_dim = "N") {
  onnx::ModelProto m;
  m.set_ir_version(8);
  auto* op = m.add_opset_import();
  op->set_domain("");
  op->set_version(17);
  auto* g = m.mutable_graph();
  g->set_name("mul");
  for (auto* vi : {g->add_input(), g->add_output()}) {
    vi->set_name(vi == &g->input(0) ? "X" : "Y");
    auto* tt = vi->mutable_type()->mutable_tensor_type();
    tt->set_elem_type(1);
    auto* dim = tt->mutable_shape()->add_dim();
    if (vi == &g->input(0) || out_dim == "N") dim->set_dim_param("N");
    else dim->set_dim_value(std::stoll(out_dim));
  }
  auto* s = g->add_initializer();
  s->set_name("S");
  s->set_data_type(1);
  s->add_float_data(scale);
  auto* n = g->add_node();
  n->set_op_type("Mul");
  n->set_name("mul_node");
  n->add_input("X");
  n->add_input("S");
  n->add_output("Y");
  return m;
}

Status Create(const onnx::ModelProto& m, const std::map<std::string, std::string>& config,
              std::unique_ptr<Session>* out, SessionOptions o = SessionOptions()) {
  for (const auto& kv : config) o.config[kv.first] = kv.second;
  const std::string bytes = m.SerializeAsString();
  return Session::CreateFromBytes(o, bytes.data(), bytes.size(), out);
}

std::vector<float> RunMul(const Session& s, const std::vector<float>& x, const RunOptions* ro = nullptr,
                       Status* status = nullptr) {
  Tensor t(ElemType::kFloat, {static_cast<int64_t>(x.size())});
  for (size_t i = 0; i < x.size(); ++i) t.data<float>()[i] = x[i];
  Value v(std::move(t));
  std::vector<Value> out;
  Status st = s.Run(ro, {"X"}, {&v}, {}, &out);
  if (status) *status = st;
  if (!st.ok()) return {};
  const Tensor& y = out[0].tensor();
  return std::vector<float>(y.data<float>(), y.data<float>() + y.size());
}

bool Mentions(const Status& st, const std::string& text) { return st.message().find(text) != std::string::npos; }

TEST(SessionConfig, UnknownKeysAreRefusedByName) {
  std::unique_ptr<Session> s;
  Status st = Create(MulModel(2.f), {{"session.intra_op.allow_spining", "0"}}, &s);
  EXPECT_EQ(st.code(), ErrorCode::kInvalidArgument);
  EXPECT_TRUE(Mentions(st, "'session.intra_op.allow_spining' is not a key")) << st.message();

  ASSERT_TRUE(Create(MulModel(2.f), {}, &s).ok());
  RunOptions ro;
  ro.config["memory.enable_memory_arena_shrinkage_typo"] = "cpu:0";
  RunMul(*s, {1.f}, &ro, &st);
  EXPECT_EQ(st.code(), ErrorCode::kInvalidArgument);
  EXPECT_TRUE(Mentions(st, "run config entry 'memory.enable_memory_arena_shrinkage_typo'")) << st.message();
  // A session key is not a run key.
  RunOptions ro2;
  ro2.config["session.disable_prepacking"] = "0";
  RunMul(*s, {1.f}, &ro2, &st);
  EXPECT_FALSE(st.ok());
  EXPECT_EQ(RunMul(*s, {1.f, 2.f}), (std::vector<float>{2.f, 4.f}));
}

// Every key of the table: refused ones fail naming the key and the reason
// for any value; values-only ones pass with each listed value and fail
// with another; honoured ones are exercised below and in concurrency_test.
TEST(SessionConfig, EveryTableKeyIsHonouredOrRefusedWithItsReason) {
  int honoured = 0, values_only = 0, refused = 0;
  for (const ConfigKey& k : ConfigKeys()) {
    ASSERT_NE(std::string(k.why), "") << k.key;
    if (k.handling == ConfigHandling::kHonoured) {
      ++honoured;
      continue;
    }
    auto attempt = [&](const std::string& value) {
      std::unique_ptr<Session> s;
      if (k.scope == ConfigScope::kSession) return Create(MulModel(2.f), {{k.key, value}}, &s);
      EXPECT_TRUE(Create(MulModel(2.f), {}, &s).ok());
      RunOptions ro;
      ro.config[k.key] = value;
      Status st;
      RunMul(*s, {1.f}, &ro, &st);
      return st;
    };
    if (k.handling == ConfigHandling::kValuesOnly) {
      ++values_only;
      std::string values = k.values;
      size_t b = 0;
      while (b <= values.size()) {
        size_t e = std::min(values.find('|', b), values.size());
        Status st = attempt(values.substr(b, e - b));
        EXPECT_TRUE(st.ok()) << k.key << "=" << values.substr(b, e - b) << ": " << st.message();
        b = e + 1;
      }
    } else {
      ++refused;
    }
    Status st = attempt("2");
    EXPECT_EQ(st.code(), ErrorCode::kNotImplemented) << k.key;
    EXPECT_TRUE(Mentions(st, std::string("'") + k.key + "' = '2' is not supported")) << st.message();
    EXPECT_TRUE(Mentions(st, k.why)) << st.message();
  }
  std::printf("config keys: %d honoured, %d accepted only at the engine's value, %d refused\n", honoured,
              values_only, refused);
}

// FTZ/DAZ: a denormal input times 2 is a denormal (not zero) unless the
// session sets denormals to zero, on the caller's thread and the workers'.
TEST(SessionConfig, DenormalAsZeroFlushesDenormals) {
  const float tiny = std::numeric_limits<float>::denorm_min() * 1000.f;
  ASSERT_TRUE(std::fpclassify(tiny) == FP_SUBNORMAL);
  std::vector<float> x(100000, tiny);
  for (const char* on : {"0", "1"}) {
    SessionOptions o;
    o.intra_op_threads = 2;
    std::unique_ptr<Session> s;
    ASSERT_TRUE(Create(MulModel(2.f), {{"session.set_denormal_as_zero", on}}, &s, o).ok());
    const std::vector<float> y = RunMul(*s, x);
    ASSERT_EQ(y.size(), x.size());
    size_t zeros = 0;
    for (float v : y) zeros += v == 0.f;
    if (*on == '1') EXPECT_EQ(zeros, y.size());
    else EXPECT_EQ(zeros, 0u);
  }
  // The caller's thread gets its own state back after the run.
  EXPECT_NE(tiny * 2.f, 0.f);
}

TEST(SessionConfig, DisableCpuEpFallback) {
  std::unique_ptr<Session> s;
  Status st = Create(MulModel(2.f), {{"session.disable_cpu_ep_fallback", "1"}}, &s);
  EXPECT_EQ(st.code(), ErrorCode::kFail);
  EXPECT_TRUE(Mentions(st, "fallback to CPU EP has been explicitly disabled")) << st.message();
  EXPECT_TRUE(Mentions(st, "mul_node")) << st.message();
  SessionOptions cpu;
  cpu.providers.push_back({"CPUExecutionProvider", {}});
  st = Create(MulModel(2.f), {{"session.disable_cpu_ep_fallback", "1"}}, &s, cpu);
  EXPECT_EQ(st.code(), ErrorCode::kInvalidArgument);
  EXPECT_TRUE(Create(MulModel(2.f), {{"session.disable_cpu_ep_fallback", "0"}}, &s).ok());
  st = Create(MulModel(2.f), {{"session.disable_cpu_ep_fallback", "on"}}, &s);
  EXPECT_EQ(st.code(), ErrorCode::kInvalidArgument);
}

// An output declared [1] that the graph makes [2]: a warning by default (and
// the run works), a failure with strict inference.
TEST(SessionConfig, StrictShapeTypeInference) {
  onnx::ModelProto m = MulModel(3.f, "1");
  m.mutable_graph()->mutable_input(0)->mutable_type()->mutable_tensor_type()->mutable_shape()->mutable_dim(0)
      ->set_dim_value(2);
  std::unique_ptr<Session> s;
  ASSERT_TRUE(Create(m, {}, &s).ok());
  EXPECT_EQ(RunMul(*s, {1.f, 2.f}), (std::vector<float>{3.f, 6.f}));
  Status st = Create(m, {{"session.strict_shape_type_inference", "1"}}, &s);
  EXPECT_FALSE(st.ok());
  EXPECT_TRUE(Mentions(st, "session.strict_shape_type_inference")) << st.message();
  EXPECT_TRUE(Mentions(st, "mul_node")) << st.message();
  EXPECT_TRUE(Create(MulModel(3.f), {{"session.strict_shape_type_inference", "1"}}, &s).ok());
}

// A model with external data loaded from bytes reads it from the folder the
// key names (and refuses to guess one without it).
TEST(SessionConfig, ModelExternalInitializersFolder) {
  const std::string dir = ::testing::TempDir() + "onyx_ext_folder_test";
  ASSERT_EQ(std::system(("mkdir -p '" + dir + "'").c_str()), 0);
  const float scale = 5.f;
  std::ofstream(dir + "/s.bin", std::ios::binary).write(reinterpret_cast<const char*>(&scale), sizeof(scale));
  onnx::ModelProto m = MulModel(0.f);
  auto* init = m.mutable_graph()->mutable_initializer(0);
  init->clear_float_data();
  init->set_data_location(onnx::TensorProto::EXTERNAL);
  auto* loc = init->add_external_data();
  loc->set_key("location");
  loc->set_value("s.bin");
  std::unique_ptr<Session> s;
  EXPECT_FALSE(Create(m, {}, &s).ok());
  Status st = Create(m, {{"session.model_external_initializers_file_folder_path", dir}}, &s);
  ASSERT_TRUE(st.ok()) << st.message();
  EXPECT_EQ(RunMul(*s, {2.f}), std::vector<float>{10.f});
  std::remove((dir + "/s.bin").c_str());
}

TEST(SessionConfig, ModelFormatKeys) {
  std::unique_ptr<Session> s;
  EXPECT_TRUE(Create(MulModel(2.f), {{"session.load_model_format", "ONNX"}}, &s).ok());
  Status st = Create(MulModel(2.f), {{"session.load_model_format", "ORT"}}, &s);
  EXPECT_EQ(st.code(), ErrorCode::kNotImplemented);
  EXPECT_TRUE(Mentions(st, "ORT format")) << st.message();
}

}  // namespace
}  // namespace onyx
