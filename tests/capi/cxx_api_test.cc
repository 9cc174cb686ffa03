// The binding scenario through the C++ RAII header only (no engine headers):
// load the MobileNetV2-like model named by $ONYX_TEST_MODEL, inspect it, run
// it on the deterministic input shared with capi_test and the Python test,
// check error paths, ownership and move semantics. $ONYX_TEST_OUT, when set,
// receives the raw bytes of the first output.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <memory>
#include <string>
#include <thread>
#include <type_traits>
#include <vector>

#include "onyxruntime_cxx_api.h"

namespace {

constexpr int64_t kBatch = 1;
const std::vector<int64_t> kInputShape = {kBatch, 3, 224, 224};

static_assert(!std::is_copy_constructible<onyx::Value>::value, "wrappers are move-only");
static_assert(!std::is_copy_assignable<onyx::Session>::value, "wrappers are move-only");
static_assert(std::is_nothrow_move_constructible<onyx::Value>::value, "moves never throw");
static_assert(std::is_base_of<std::runtime_error, onyx::Exception>::value, "Exception is a runtime_error");

std::vector<float> DeterministicInput(size_t n) {
  std::vector<float> x(n);
  for (size_t i = 0; i < n; ++i) x[i] = static_cast<float>(static_cast<double>((i * 7919u) % 1000u) / 500.0 - 1.0);
  return x;
}

const char* ModelPath() { return std::getenv("ONYX_TEST_MODEL"); }

// Expects `stmt` to throw onyx::Exception with `code` and a non-empty message.
#define EXPECT_ONYX_CODE(stmt, expected_code)                                     \
  do {                                                                            \
    bool thrown = false;                                                          \
    try {                                                                         \
      stmt;                                                                       \
    } catch (const onyx::Exception& e) {                                          \
      thrown = true;                                                              \
      EXPECT_EQ(e.code(), expected_code) << e.what();                             \
      EXPECT_STRNE(e.what(), "");                                                 \
    }                                                                             \
    EXPECT_TRUE(thrown) << #stmt " did not throw";                                \
  } while (0)

class CxxApiTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (ModelPath() == nullptr) GTEST_SKIP() << "set ONYX_TEST_MODEL to the model path";
    session_ = std::make_unique<onyx::Session>(env_, ModelPath(), onyx::SessionOptions());
    input_ = DeterministicInput(3 * 224 * 224 * static_cast<size_t>(kBatch));
  }

  onyx::Value InputValue() {
    return onyx::Value::CreateTensor<float>(mem_, input_.data(), input_.size(), kInputShape);
  }

  std::vector<onyx::Value> RunGood() {
    std::vector<onyx::Value> inputs;
    inputs.push_back(InputValue());
    return session_->Run(onyx::RunOptions(), {"input"}, inputs, {});
  }

  onyx::Env env_{ONYX_LOG_WARNING, "cxx_api_test"};
  onyx::MemoryInfo mem_ = onyx::MemoryInfo::CreateCpu();
  std::unique_ptr<onyx::Session> session_;
  std::vector<float> input_;
};

std::vector<char> Bytes(const onyx::Value& v) {
  const float* p = v.GetTensorData<float>();
  size_t n = v.GetElementCount() * sizeof(float);
  return std::vector<char>(reinterpret_cast<const char*>(p), reinterpret_cast<const char*>(p) + n);
}

TEST(CxxApi, LibraryInfo) {
  EXPECT_FALSE(onyx::GetVersionString().empty());
  EXPECT_FALSE(onyx::GetBuildInfoString().empty());
  auto available = onyx::GetAvailableProviders();
  ASSERT_FALSE(available.empty());
  EXPECT_NE(std::find(available.begin(), available.end(), "CPUExecutionProvider"), available.end());
  auto all = onyx::GetAllProviders();
  EXPECT_NE(std::find(all.begin(), all.end(), "CUDAExecutionProvider"), all.end());
}

TEST(CxxApi, ErrorsBecomeExceptionsWithCodes) {
  onyx::Env env;
  onyx::SessionOptions opts;
  EXPECT_ONYX_CODE(onyx::Session(env, "/nonexistent/dir/model.onnx", opts), ONYX_NO_SUCHFILE);
  const std::string garbage = "not a model";
  EXPECT_ONYX_CODE(onyx::Session(env, garbage.data(), garbage.size(), opts), ONYX_INVALID_PROTOBUF);
  EXPECT_ONYX_CODE(opts.AppendExecutionProvider("NoSuchExecutionProvider"), ONYX_INVALID_ARGUMENT);
  EXPECT_ONYX_CODE(opts.SetIntraOpNumThreads(-1), ONYX_INVALID_ARGUMENT);
  // Catchable as std::runtime_error too.
  EXPECT_THROW(onyx::Session(env, "/nonexistent/dir/model.onnx", opts), std::runtime_error);
  onyx::MemoryInfo mem = onyx::MemoryInfo::CreateCpu();
  std::vector<float> buf(6);
  EXPECT_ONYX_CODE(onyx::Value::CreateTensor<float>(mem, buf.data(), 5, {2, 3}), ONYX_INVALID_ARGUMENT);
}

TEST(CxxApi, MoveSemanticsAndClone) {
  onyx::Env env;
  OnyxEnv* raw = env.get();
  onyx::Env moved(std::move(env));
  EXPECT_EQ(moved.get(), raw);
  EXPECT_EQ(env.get(), nullptr);  // NOLINT: checking the moved-from state on purpose

  onyx::SessionOptions a;
  a.AddConfigEntry("k", "1");
  onyx::SessionOptions b = a.Clone();
  b.AddConfigEntry("k", "2");
  EXPECT_EQ(a.GetConfigEntry("k").value(), "1");
  EXPECT_EQ(b.GetConfigEntry("k").value(), "2");
  EXPECT_FALSE(a.GetConfigEntry("absent").has_value());
  EXPECT_NE(a.get(), b.get());

  // Move-assigning over a live value releases the old one (checked by ASan/valgrind).
  onyx::Value v1 = onyx::Value::CreateTensor<float>({2, 2});
  onyx::Value v2 = onyx::Value::CreateTensor<int64_t>({3});
  OnyxValue* raw2 = v2.get();
  v1 = std::move(v2);
  EXPECT_EQ(v1.get(), raw2);
  EXPECT_EQ(v2.get(), nullptr);  // NOLINT
  EXPECT_EQ(v1.GetElementType(), ONYX_TYPE_INT64);
  onyx::Value& self = v1;
  v1 = std::move(self);  // self-move keeps the handle
  EXPECT_EQ(v1.get(), raw2);

  // Growing a vector moves the handles; nothing is freed twice.
  std::vector<onyx::Value> values;
  for (int i = 0; i < 20; ++i) values.push_back(onyx::Value::CreateTensor<float>({i + 1}));
  for (int i = 0; i < 20; ++i) EXPECT_EQ(values[i].GetShape(), std::vector<int64_t>{i + 1});

  // release() hands ownership back to the caller.
  onyx::RunOptions ro;
  OnyxRunOptions* taken = ro.release();
  EXPECT_EQ(ro.get(), nullptr);
  onyx::GetApi().RunOptionsRelease(taken);

  // A moved-from wrapper reports a clean error instead of crashing.
  EXPECT_ONYX_CODE(v2.GetShape(), ONYX_INVALID_ARGUMENT);
}

TEST(CxxApi, OwnedAndStringTensors) {
  onyx::Value t = onyx::Value::CreateTensor<float>({2, 3});
  EXPECT_TRUE(t.IsTensor());
  EXPECT_EQ(t.GetShape(), (std::vector<int64_t>{2, 3}));
  EXPECT_EQ(t.GetElementType(), ONYX_TYPE_FLOAT);
  float* p = t.GetTensorMutableData<float>();
  for (int i = 0; i < 6; ++i) p[i] = static_cast<float>(i);
  EXPECT_EQ(t.GetTensorData<float>()[5], 5.0f);
  EXPECT_ONYX_CODE(t.GetTensorData<int32_t>(), ONYX_INVALID_ARGUMENT);
  EXPECT_EQ(t.GetTensorMemoryInfo().GetName(), "Cpu");

  std::vector<std::string> strings = {"ab", std::string("c\0d", 3), ""};
  onyx::Value s = onyx::Value::CreateStringTensor({3}, strings);
  EXPECT_EQ(s.GetElementType(), ONYX_TYPE_STRING);
  EXPECT_EQ(s.GetStringTensorData(), strings);

  onyx::MemoryInfo mem = onyx::MemoryInfo::CreateCpu();
  std::vector<int32_t> ints = {1, 2, 3, 4};
  onyx::Value borrowed = onyx::Value::CreateTensor<int32_t>(mem, ints.data(), ints.size(), {4});
  EXPECT_EQ(borrowed.GetTensorData<int32_t>(), ints.data());
  EXPECT_EQ(mem.GetDeviceId(), 0);
  EXPECT_EQ(mem.GetMemType(), ONYX_MEM_DEFAULT);
}

TEST_F(CxxApiTest, Inspect) {
  ASSERT_EQ(session_->GetInputCount(), 1u);
  EXPECT_EQ(session_->GetInputNames(), std::vector<std::string>{"input"});
  onyx::TypeInfo ti = session_->GetInputTypeInfo(0);
  EXPECT_EQ(ti.GetKind(), ONYX_VALUE_TENSOR);
  EXPECT_EQ(ti.GetTypeString(), "tensor(float)");
  onyx::TensorTypeAndShapeInfo t = ti.GetTensorTypeAndShapeInfo();
  EXPECT_FALSE(t.owned());
  EXPECT_EQ(t.GetElementType(), ONYX_TYPE_FLOAT);
  EXPECT_TRUE(t.HasShape());
  EXPECT_EQ(t.GetShape(), (std::vector<int64_t>{-1, 3, 224, 224}));
  EXPECT_EQ(t.GetSymbolicDimensions(), (std::vector<std::string>{"batch", "", "", ""}));
  EXPECT_EQ(t.GetElementCount(), -1);
  EXPECT_ONYX_CODE(session_->GetInputName(1), ONYX_INVALID_ARGUMENT);

  ASSERT_GE(session_->GetOutputCount(), 1u);
  onyx::TypeInfo to = session_->GetOutputTypeInfo(0);
  EXPECT_EQ(to.GetTensorTypeAndShapeInfo().GetShape(), (std::vector<int64_t>{-1, 1000}));
  EXPECT_EQ(to.GetTensorTypeAndShapeInfo().GetSymbolicDimensions()[0], "batch");
  // The generated models list no initializer among their inputs.
  EXPECT_TRUE(session_->GetOverridableInitializerNames().empty());

  auto providers = session_->GetProviders();
  ASSERT_FALSE(providers.empty());
  EXPECT_EQ(providers.back(), "CPUExecutionProvider");

  onyx::ModelMetadata md = session_->GetModelMetadata();
  EXPECT_FALSE(md.GetGraphName().empty());
  // What tests/models/generate.py writes into every model it makes.
  EXPECT_EQ(md.GetProducerName(), "onyx-tests");
  EXPECT_EQ(md.GetDomain(), "");
  EXPECT_FALSE(md.GetDescription().empty());
  EXPECT_EQ(md.GetGraphDescription(), md.GetDescription());
  EXPECT_GE(md.GetVersion(), 1);
  for (const auto& kv : md.GetCustomMetadataMap()) EXPECT_EQ(md.LookupCustomMetadata(kv.first).value(), kv.second);
  EXPECT_FALSE(md.LookupCustomMetadata("cxx_api_test.absent").has_value());
}

TEST_F(CxxApiTest, RunZeroCopyDeterministic) {
  onyx::Value in = InputValue();
  EXPECT_EQ(in.GetTensorData<float>(), input_.data());  // wraps the caller's buffer
  const std::vector<float> before = input_;

  std::vector<onyx::Value> inputs;
  inputs.push_back(std::move(in));
  onyx::RunOptions ro;
  ro.SetTag("cxx_api_test").SetLogSeverityLevel(ONYX_LOG_WARNING);
  EXPECT_EQ(ro.GetTag(), "cxx_api_test");
  std::vector<onyx::Value> out = session_->Run(ro, {"input"}, inputs, {});
  ASSERT_EQ(out.size(), session_->GetOutputCount());
  EXPECT_EQ(input_, before) << "a run must not write its input";

  const onyx::Value& y = out[0];
  EXPECT_TRUE(y.IsTensor());
  EXPECT_EQ(y.GetElementType(), ONYX_TYPE_FLOAT);
  EXPECT_EQ(y.GetShape(), (std::vector<int64_t>{kBatch, 1000}));
  const float* p = y.GetTensorData<float>();
  float lo = p[0], hi = p[0];
  for (size_t i = 0; i < y.GetElementCount(); ++i) {
    ASSERT_TRUE(std::isfinite(p[i])) << "output " << i;
    lo = std::min(lo, p[i]);
    hi = std::max(hi, p[i]);
  }
  EXPECT_LT(lo, hi);

  // Explicit output names; same bytes again.
  std::vector<onyx::Value> again = session_->Run({"input"}, inputs, {session_->GetOutputName(0)});
  ASSERT_EQ(again.size(), 1u);
  EXPECT_EQ(Bytes(again[0]), Bytes(y));

  if (const char* out_path = std::getenv("ONYX_TEST_OUT")) {
    std::vector<char> bytes = Bytes(y);
    std::ofstream f(out_path, std::ios::binary);
    f.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
    ASSERT_TRUE(f.good()) << "cannot write " << out_path;
  }
}

TEST_F(CxxApiTest, RunErrorsLeaveSessionUsable) {
  const std::vector<char> reference = Bytes(RunGood()[0]);
  auto check_still_good = [&] { EXPECT_EQ(Bytes(RunGood()[0]), reference); };

  std::vector<onyx::Value> inputs;
  inputs.push_back(InputValue());
  EXPECT_ONYX_CODE(session_->Run({"no_such_input"}, inputs), ONYX_INVALID_ARGUMENT);
  check_still_good();
  EXPECT_ONYX_CODE(session_->Run({"input"}, inputs, {"no_such_output"}), ONYX_INVALID_ARGUMENT);
  check_still_good();
  EXPECT_ONYX_CODE(session_->Run({}, std::vector<onyx::Value>{}), ONYX_INVALID_ARGUMENT);  // missing input
  check_still_good();
  EXPECT_ONYX_CODE(session_->Run({"input", "input2"}, inputs), ONYX_INVALID_ARGUMENT);   // name/value mismatch
  check_still_good();

  std::vector<onyx::Value> wrong_shape;
  wrong_shape.push_back(onyx::Value::CreateTensor<float>(mem_, input_.data(), input_.size(), {kBatch, 3, 112, 448}));
  EXPECT_ONYX_CODE(session_->Run({"input"}, wrong_shape), ONYX_INVALID_ARGUMENT);
  check_still_good();

  std::vector<onyx::Value> wrong_rank;
  wrong_rank.push_back(onyx::Value::CreateTensor<float>(mem_, input_.data(), input_.size(), {3 * kBatch, 224, 224}));
  EXPECT_ONYX_CODE(session_->Run({"input"}, wrong_rank), ONYX_INVALID_ARGUMENT);
  check_still_good();

  std::vector<int32_t> ints(input_.size(), 1);
  std::vector<onyx::Value> wrong_type;
  wrong_type.push_back(onyx::Value::CreateTensor<int32_t>(mem_, ints.data(), ints.size(), kInputShape));
  EXPECT_ONYX_CODE(session_->Run({"input"}, wrong_type), ONYX_INVALID_ARGUMENT);
  check_still_good();

  onyx::RunOptions stop;
  stop.SetTerminate(true);
  EXPECT_TRUE(stop.GetTerminate());
  EXPECT_ONYX_CODE(session_->Run(stop, {"input"}, inputs, {}), ONYX_RUNTIME_EXCEPTION);
  check_still_good();
}

TEST_F(CxxApiTest, ConcurrentRunsAgree) {
  const std::vector<char> reference = Bytes(RunGood()[0]);
  constexpr int kThreads = 3;
  std::atomic<int> mismatches{0}, errors{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&] {
      try {
        std::vector<onyx::Value> inputs;
        inputs.push_back(InputValue());
        std::vector<onyx::Value> out = session_->Run({"input"}, inputs);
        if (Bytes(out[0]) != reference) ++mismatches;
      } catch (const onyx::Exception&) {
        ++errors;
      }
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_EQ(errors.load(), 0);
  EXPECT_EQ(mismatches.load(), 0);
}

TEST_F(CxxApiTest, EnvAndOptionsMayBeReleasedBeforeSession) {
  std::unique_ptr<onyx::Session> s;
  {
    onyx::Env env;
    onyx::SessionOptions opts;
    opts.SetIntraOpNumThreads(1).SetGraphOptimizationLevel(ONYX_ENABLE_BASIC).AppendExecutionProvider(
        "CPUExecutionProvider");
    s = std::make_unique<onyx::Session>(env, ModelPath(), opts);
  }
  std::vector<onyx::Value> inputs;
  inputs.push_back(InputValue());
  std::vector<onyx::Value> out = s->Run({"input"}, inputs);
  EXPECT_EQ(out[0].GetShape(), (std::vector<int64_t>{kBatch, 1000}));
}

}  // namespace
