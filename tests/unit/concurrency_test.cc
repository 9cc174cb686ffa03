// Many threads on one session, cancellation, handles outliving their session,
// the per-session memory limit and OpenBLAS's thread count following the
// session that runs. scripts/sanitize.sh runs the Concurrency* tests under
// ThreadSanitizer as well.
#include <cblas.h>
#include <gtest/gtest.h>

#include <dirent.h>

#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <map>
#include <sstream>
#include <thread>
#include <unistd.h>

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

// An empty opset-17 model to add a graph to.
onnx::ModelProto NewModel() {
  onnx::ModelProto m;
  m.set_ir_version(8);
  auto* op = m.add_opset_import();
  op->set_domain("");
  op->set_version(17);
  return m;
}

// Y = Softmax(Relu(X @ W1) @ W2) + Tanh(X @ W1): GEMMs (OpenBLAS), the
// session's pool (elementwise and softmax), intermediates reused per run.
onnx::ModelProto MlpModel(int width) {
  onnx::ModelProto m = NewModel();
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
  onnx::ModelProto m = NewModel();
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

// Provider options the engine cannot act on are refused, naming them;
// ORT_PARALLEL and any inter_op_num_threads are accepted (with
// ORT_SEQUENTIAL, inter-op threads are ignored, as in onnxruntime).
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
      {"parallel", [](SessionOptions* o) { o->execution_mode = 1; }, ""},
      {"inter_op 4 sequential", [](SessionOptions* o) { o->inter_op_threads = 4; }, ""},
      {"inter_op 4 parallel", [](SessionOptions* o) { o->inter_op_threads = 4; o->execution_mode = 1; }, ""},
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

// CPU time (ns) the process's threads named `name` have used so far:
// schedstat's run time where the kernel has it, else utime+stime ticks.
int64_t ThreadsCpuNs(const std::string& name) {
  int64_t total = 0;
  DIR* d = opendir("/proc/self/task");
  if (!d) return -1;
  const int64_t tick_ns = 1000000000LL / sysconf(_SC_CLK_TCK);
  while (dirent* e = readdir(d)) {
    if (e->d_name[0] == '.') continue;
    const std::string dir = std::string("/proc/self/task/") + e->d_name;
    std::string comm;
    std::ifstream(dir + "/comm") >> comm;
    if (comm != name) continue;
    int64_t ns = -1;
    std::ifstream sched(dir + "/schedstat");
    if (sched >> ns) {
      total += ns;
      continue;
    }
    std::ifstream stat(dir + "/stat");
    std::string line;
    std::getline(stat, line);
    std::istringstream rest(line.substr(line.rfind(')') + 2));
    std::string field;
    int64_t utime = 0, stime = 0;
    for (int i = 3; i <= 15 && rest >> field; ++i) {
      if (i == 14) utime = std::stoll(field);
      if (i == 15) stime = std::stoll(field);
    }
    total += (utime + stime) * tick_ns;
  }
  closedir(d);
  return total;
}

// CPU time the intra-op workers burn in the idle gaps between runs: with
// spinning (session.intra_op.allow_spinning, default "1") they poll through
// a gap shorter than the spin; with "0", or with session.force_spinning_stop
// "1", they sleep as soon as a run's work is done.
int64_t IdleWorkerCpuNs(const std::map<std::string, std::string>& config) {
  SessionOptions o;
  o.intra_op_threads = 2;
  o.config = config;
  auto s = Load(MlpModel(128), o);
  if (!s) return -1;
  int64_t idle = 0;
  for (int i = 0; i < 20; ++i) {
    if (RunMlp(*s, 64, 128, i).empty()) return -1;
    const int64_t before = ThreadsCpuNs("onyx-intra-op");
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
    idle += ThreadsCpuNs("onyx-intra-op") - before;
  }
  return idle;
}

TEST(Concurrency, IdleWorkersSpinOnlyWhenAllowed) {
  const int64_t spinning = IdleWorkerCpuNs({{"session.intra_op.spin_duration_us", "50000"}});
  const int64_t asleep = IdleWorkerCpuNs({{"session.intra_op.allow_spinning", "0"}});
  const int64_t stopped = IdleWorkerCpuNs({{"session.force_spinning_stop", "1"}});
  std::printf("intra-op worker CPU over 20 idle gaps of 5 ms: spinning %.1f ms, allow_spinning=0 %.1f ms, "
              "force_spinning_stop=1 %.1f ms\n", spinning / 1e6, asleep / 1e6, stopped / 1e6);
  ASSERT_GE(spinning, 0);
  // 100 ms of gaps; a loaded 2-core machine still gives the spinner a share.
  EXPECT_GT(spinning, 15000000);
  EXPECT_LT(asleep, 5000000);
  EXPECT_LT(stopped, 5000000);
  EXPECT_GT(spinning, 5 * std::max<int64_t>(asleep, 1000000));
}

TEST(Concurrency, ThreadConfigKeysAreCheckedByName) {
  const std::pair<const char*, const char*> bad[] = {
      {"session.intra_op.allow_spinning", "yes"},   {"session.inter_op.allow_spinning", "2"},
      {"session.intra_op.spin_duration_us", "-1"},  {"session.intra_op.spin_backoff_max", "0"},
      {"session.force_spinning_stop", "true"},      {"session.set_denormal_as_zero", ""},
      {"session.intra_op_thread_affinities", "1;2"}, {"session.intra_op_thread_affinities", "0"},
      {"session.intra_op_thread_affinities", "3-1"}, {"session.intra_op_thread_affinities", "99999"},
  };
  std::string bytes = MlpModel(4).SerializeAsString();
  for (const auto& kv : bad) {
    SessionOptions o;
    o.intra_op_threads = 2;
    o.config[kv.first] = kv.second;
    std::unique_ptr<Session> s;
    Status st = Session::CreateFromBytes(o, bytes.data(), bytes.size(), &s);
    EXPECT_EQ(st.code(), ErrorCode::kInvalidArgument) << kv.first << "=" << kv.second;
    EXPECT_NE(st.message().find(kv.first), std::string::npos) << st.message();
    EXPECT_NE(st.message().find(std::string("'") + kv.second + "'"), std::string::npos) << st.message();
  }
  // A valid affinity pins the one worker of a 2-thread pool to processor 1.
  SessionOptions o;
  o.intra_op_threads = 2;
  o.config["session.intra_op_thread_affinities"] = "1";
  auto s = Load(MlpModel(8), o);
  ASSERT_TRUE(s);
  EXPECT_EQ(RunMlp(*s, 4, 8, 0).size(), 32u);
}

// K independent branches, each a chain of `depth` MatMul+Tanh (or Relu),
// summed at the end: Y = sum_k f_k(X). Node names say the branch.
onnx::ModelProto WideModel(int branches, int depth, int width) {
  onnx::ModelProto m = NewModel();
  auto* g = m.mutable_graph();
  g->set_name("wide");
  const std::string w = std::to_string(width);
  AddValue(g->mutable_input(), "X", 1, {"N", w});
  AddValue(g->mutable_output(), "Y", 1, {"N", w});
  std::string sum;
  for (int b = 0; b < branches; ++b) {
    std::string cur = "X";
    for (int d = 0; d < depth; ++d) {
      const std::string tag = "b" + std::to_string(b) + "_" + std::to_string(d);
      AddWeights(g, "W" + tag, width, width, 0.02f + 0.001f * static_cast<float>(b * depth + d));
      AddNode(g, "MatMul", {cur, "W" + tag}, {"M" + tag})->set_name("matmul_" + tag);
      AddNode(g, d % 2 ? "Relu" : "Tanh", {"M" + tag}, {"A" + tag})->set_name("act_" + tag);
      cur = "A" + tag;
    }
    if (sum.empty()) {
      sum = cur;
    } else {
      const std::string next = b + 1 == branches ? "Y" : "S" + std::to_string(b);
      AddNode(g, "Add", {sum, cur}, {next})->set_name("sum_" + std::to_string(b));
      sum = next;
    }
  }
  return m;
}

SessionOptions ParallelOptions(int inter) {
  SessionOptions o;
  o.execution_mode = 1;
  o.inter_op_threads = inter;
  o.intra_op_threads = 1;
  return o;
}

// (start, end) in microseconds of every node event in a profile file.
std::vector<std::pair<int64_t, int64_t>> NodeSpans(const std::string& path) {
  std::ifstream f(path);
  std::stringstream ss;
  ss << f.rdbuf();
  const std::string json = ss.str();
  std::vector<std::pair<int64_t, int64_t>> spans;
  size_t at = 0;
  while ((at = json.find("\"cat\":\"Node\"", at)) != std::string::npos) {
    const size_t dur = json.find("\"dur\":", at), ts = json.find("\"ts\":", at);
    const int64_t d = std::stoll(json.substr(dur + 6)), t = std::stoll(json.substr(ts + 5));
    spans.emplace_back(t, t + d);
    ++at;
  }
  return spans;
}

// ORT_PARALLEL gives the sequential results, with nodes of different
// branches running at the same time (their profile spans overlap), and is
// faster on more than one core.
TEST(Concurrency, ParallelExecutionMatchesSequentialAndOverlapsBranches) {
  constexpr int kBranches = 4, kDepth = 3, kWidth = 256, kRows = 512, kProfiled = 8;
  const onnx::ModelProto model = WideModel(kBranches, kDepth, kWidth);
  SessionOptions seq_options;
  seq_options.intra_op_threads = 1;
  auto seq = Load(model, seq_options);
  SessionOptions par_options = ParallelOptions(kBranches);
  par_options.enable_profiling = true;
  par_options.profile_file_prefix = ::testing::TempDir() + "onyx_parallel_profile_";
  auto par = Load(model, par_options);
  auto par_noprof = Load(model, ParallelOptions(kBranches));
  ASSERT_TRUE(seq && par && par_noprof);
  const std::vector<float> expect = RunMlp(*seq, kRows, kWidth, 3);
  ASSERT_EQ(expect.size(), static_cast<size_t>(kRows * kWidth));
  for (int r = 0; r < kProfiled; ++r) EXPECT_EQ(RunMlp(*par, kRows, kWidth, 3), expect) << "run " << r;
  std::string path;
  ASSERT_TRUE(par->EndProfiling(&path).ok());
  const auto spans = NodeSpans(path);
  std::remove(path.c_str());
  EXPECT_EQ(spans.size(), static_cast<size_t>(kProfiled * (kBranches * kDepth * 2 + kBranches - 1)));
  int overlapping = 0;
  for (size_t i = 0; i < spans.size(); ++i)
    for (size_t j = i + 1; j < spans.size(); ++j)
      if (spans[i].first < spans[j].second && spans[j].first < spans[i].second) ++overlapping;
  EXPECT_GT(overlapping, 0) << "no two nodes ran at the same time";

  auto time = [&](const Session& s) {
    auto best = std::chrono::nanoseconds::max();
    for (int r = 0; r < 5; ++r) {
      auto t0 = std::chrono::steady_clock::now();
      RunMlp(s, kRows, kWidth, r);
      best = std::min(best, std::chrono::steady_clock::now() - t0);
    }
    return std::chrono::duration<double, std::milli>(best).count();
  };
  const double t_seq = time(*seq), t_par = time(*par_noprof);
  std::printf("wide graph (%d branches x %d MatMul+activation, %dx%d): sequential %.2f ms, parallel %.2f ms "
              "(%.2fx, %u hardware threads)\n", kBranches, kDepth, kRows, kWidth, t_seq, t_par, t_seq / t_par,
              std::thread::hardware_concurrency());
}

// Many threads x many runs on one parallel session give the serial results.
TEST(Concurrency, ParallelSessionManyThreadsMatchSerialRuns) {
  constexpr int kThreads = 4, kRuns = 15, kWidth = 32;
  auto seq = Load(WideModel(3, 2, kWidth));
  auto par = Load(WideModel(3, 2, kWidth), ParallelOptions(3));
  ASSERT_TRUE(seq && par);
  auto rows = [](int t, int r) { return 1 + (t * 7 + r) % 9; };
  std::vector<int> mismatches(kThreads, 0);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t)
    threads.emplace_back([&, t] {
      for (int r = 0; r < kRuns; ++r) {
        const std::vector<float> got = RunMlp(*par, rows(t, r), kWidth, t * 50 + r);
        if (got.empty() || got != RunMlp(*seq, rows(t, r), kWidth, t * 50 + r)) mismatches[t]++;
      }
    });
  for (auto& th : threads) th.join();
  for (int t = 0; t < kThreads; ++t) EXPECT_EQ(mismatches[t], 0) << "thread " << t;
}

// A failing node in one branch fails the run naming it, while the other
// branches were running; terminate stops a parallel run; the session stays
// usable after both.
TEST(Concurrency, ParallelRunErrorsAndTerminate) {
  onnx::ModelProto m = WideModel(3, 2, 16);
  // Branch 1 reads a second input whose width the caller chooses.
  auto* g = m.mutable_graph();
  AddValue(g->mutable_input(), "Z", 1, {"N", "K"});
  for (auto& node : *g->mutable_node())
    if (node.name() == "matmul_b1_0") node.set_input(0, "Z");
  auto s = Load(m, ParallelOptions(3));
  ASSERT_TRUE(s);
  Value x(Input(2, 16, 0)), bad_z(Input(2, 5, 1)), good_z(Input(2, 16, 1));
  std::vector<Value> out;
  for (int r = 0; r < 3; ++r) {
    Status st = s->Run(nullptr, {"X", "Z"}, {&x, &bad_z}, {}, &out);
    ASSERT_FALSE(st.ok());
    EXPECT_NE(st.message().find("matmul_b1_0"), std::string::npos) << st.message();
    ASSERT_TRUE(s->Run(nullptr, {"X", "Z"}, {&x, &good_z}, {}, &out).ok());
    EXPECT_EQ(out[0].tensor().size(), 32);
  }

  SessionOptions o = ParallelOptions(2);
  auto loop = Load(LongLoopModel(), o);
  ASSERT_TRUE(loop);
  Tensor mt(ElemType::kInt64, {});
  mt.data<int64_t>()[0] = int64_t{1} << 40;
  Tensor xt(ElemType::kFloat, {4});
  for (int i = 0; i < 4; ++i) xt.data<float>()[i] = static_cast<float>(i);
  Value mv(std::move(mt)), xv(std::move(xt));
  RunOptions ro;
  Status st;
  std::thread runner([&] {
    std::vector<Value> o2;
    st = loop->Run(&ro, {"M", "X"}, {&mv, &xv}, {}, &o2);
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  ro.terminate = true;
  runner.join();
  EXPECT_NE(st.message().find("terminate"), std::string::npos) << st.message();
}

}  // namespace
}  // namespace onyx
