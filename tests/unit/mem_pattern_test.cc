// Memory patterns (SessionOptions::enable_mem_pattern): a run with input
// shapes seen before takes all of its intermediates from one planned block,
// and results never change because of it.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstring>
#include <functional>
#include <mutex>
#include <thread>

#include "core/session/session.h"
#include "onnx-ml.pb.h"

namespace onyx {
namespace {

// The CPU allocator, counting what goes through it (outputs only: kernels
// take scratch memory elsewhere).
class CountingAllocator final : public Allocator {
 public:
  void* Alloc(size_t bytes) override {
    std::lock_guard<std::mutex> lock(mu_);
    sizes_.push_back(bytes);
    return GetCpuAllocator()->Alloc(bytes);
  }
  void Free(void* p) override { GetCpuAllocator()->Free(p); }
  const MemoryInfo& Info() const override { return GetCpuAllocator()->Info(); }

  // Sizes of the allocations since the last call.
  std::vector<size_t> Take() {
    std::lock_guard<std::mutex> lock(mu_);
    std::vector<size_t> out;
    out.swap(sizes_);
    return out;
  }

 private:
  std::mutex mu_;
  std::vector<size_t> sizes_;
};

onnx::ValueInfoProto* AddValue(google::protobuf::RepeatedPtrField<onnx::ValueInfoProto>* list, const std::string& name,
                               int elem, std::vector<std::string> dims) {
  auto* vi = list->Add();
  vi->set_name(name);
  auto* shape = vi->mutable_type()->mutable_tensor_type()->mutable_shape();
  vi->mutable_type()->mutable_tensor_type()->set_elem_type(elem);
  for (const auto& d : dims) {
    if (std::isdigit(static_cast<unsigned char>(d[0]))) shape->add_dim()->set_dim_value(std::stoll(d));
    else shape->add_dim()->set_dim_param(d);
  }
  return vi;
}

void AddNode(onnx::GraphProto* g, const std::string& op, std::vector<std::string> in, std::vector<std::string> out) {
  auto* n = g->add_node();
  n->set_op_type(op);
  n->set_name(op + "_" + out[0]);
  for (auto& s : in) n->add_input(s);
  for (auto& s : out) n->add_output(s);
}

onnx::ModelProto NewModel() {
  onnx::ModelProto m;
  m.set_ir_version(8);
  auto* op = m.add_opset_import();
  op->set_domain("");
  op->set_version(17);
  m.mutable_graph()->set_name("mem_pattern");
  return m;
}

// Ten elementwise nodes on X float [N, 64]: nine intermediates and Y. t1 is
// read again near the end, so it stays live while the others come and go.
onnx::ModelProto ChainModel() {
  onnx::ModelProto m = NewModel();
  auto* g = m.mutable_graph();
  AddValue(g->mutable_input(), "X", 1, {"N", "64"});
  AddValue(g->mutable_output(), "Y", 1, {"N", "64"});
  AddNode(g, "Relu", {"X"}, {"t1"});
  AddNode(g, "Neg", {"t1"}, {"t2"});
  AddNode(g, "Add", {"t2", "X"}, {"t3"});
  AddNode(g, "Tanh", {"t3"}, {"t4"});
  AddNode(g, "Mul", {"t4", "t3"}, {"t5"});
  AddNode(g, "Sigmoid", {"t5"}, {"t6"});
  AddNode(g, "Abs", {"t6"}, {"t7"});
  AddNode(g, "Sub", {"t7", "t5"}, {"t8"});
  AddNode(g, "Add", {"t8", "t1"}, {"t9"});
  AddNode(g, "Mul", {"t9", "X"}, {"Y"});
  return m;
}
constexpr size_t kChainIntermediates = 9;

SessionOptions Options(std::shared_ptr<Allocator> alloc, bool pattern, bool reuse = true) {
  SessionOptions o;
  o.graph_optimization_level = 0;  // keep every node, so allocation counts are exact
  o.intra_op_threads = 1;
  o.enable_mem_pattern = pattern;
  o.enable_mem_reuse = reuse;
  o.cpu_allocator = std::move(alloc);
  return o;
}

std::unique_ptr<Session> Load(const onnx::ModelProto& m, const SessionOptions& o) {
  std::string bytes = m.SerializeAsString();
  std::unique_ptr<Session> s;
  Status st = Session::CreateFromBytes(o, bytes.data(), bytes.size(), &s);
  EXPECT_TRUE(st.ok()) << st.message();
  return s;
}

Value FloatInput(int64_t rows, int64_t cols, float seed) {
  Tensor x(ElemType::kFloat, {rows, cols});
  for (int64_t i = 0; i < x.size(); ++i) x.data<float>()[i] = std::sin(seed + 0.37f * static_cast<float>(i)) * 3.f;
  return Value(std::move(x));
}

Tensor RunModel(const Session& s, const std::vector<std::string>& names, const std::vector<Value>& feeds) {
  std::vector<const Value*> ptrs;
  for (const Value& v : feeds) ptrs.push_back(&v);
  std::vector<Value> out;
  Status st = s.Run(nullptr, names, ptrs, {}, &out);
  EXPECT_TRUE(st.ok()) << st.message();
  if (!st.ok() || out.empty()) return Tensor();
  return std::move(out[0].tensor());
}

void ExpectSame(const Tensor& a, const Tensor& b, const std::string& where) {
  ASSERT_EQ(a.type(), b.type()) << where;
  ASSERT_EQ(a.dims(), b.dims()) << where;
  ASSERT_GT(a.bytes(), 0u) << where;
  EXPECT_EQ(std::memcmp(a.raw(), b.raw(), a.bytes()), 0) << where << ": results differ";
}

// Not a constant or a copy of the input: guards the comparisons above.
void ExpectVaried(const Tensor& t) {
  const float* p = t.data<float>();
  float lo = p[0], hi = p[0];
  for (int64_t i = 1; i < t.size(); ++i) lo = std::min(lo, p[i]), hi = std::max(hi, p[i]);
  EXPECT_GT(hi - lo, 0.1f);
}

TEST(MemPattern, SecondRunTakesIntermediatesFromOneBlock) {
  auto counter = std::make_shared<CountingAllocator>();
  auto with = Load(ChainModel(), Options(counter, true));
  auto without = Load(ChainModel(), Options(nullptr, false));
  ASSERT_TRUE(with && without);
  const Value x = FloatInput(8, 64, 0.5f);
  const size_t tensor_bytes = 8 * 64 * sizeof(float);
  Tensor expected = RunModel(*without, {"X"}, {x});
  ExpectVaried(expected);

  counter->Take();
  Tensor first = RunModel(*with, {"X"}, {x});
  std::vector<size_t> recording = counter->Take();
  EXPECT_EQ(recording.size(), kChainIntermediates + 1);  // one per node output
  ExpectSame(first, expected, "run 1 (recording)");

  for (int run = 2; run <= 4; ++run) {
    Tensor y = RunModel(*with, {"X"}, {x});
    std::vector<size_t> sizes = counter->Take();
    ASSERT_EQ(sizes.size(), 2u) << "run " << run << ": the block and the graph output";
    // Intermediates reuse each other's bytes: the block holds the few that
    // are live at once (t1, plus a node's inputs and output), not all nine.
    const size_t block = std::max(sizes[0], sizes[1]);
    EXPECT_GE(block, 3 * tensor_bytes);
    EXPECT_LE(block, 4 * tensor_bytes);
    ExpectSame(y, expected, "run " + std::to_string(run));
  }
}

TEST(MemPattern, NewInputShapeRecordsAgainAndOldPatternStays) {
  auto counter = std::make_shared<CountingAllocator>();
  auto with = Load(ChainModel(), Options(counter, true));
  auto without = Load(ChainModel(), Options(nullptr, false));
  ASSERT_TRUE(with && without);
  const Value small = FloatInput(2, 64, 1.f), large = FloatInput(33, 64, 2.f);
  Tensor expected_small = RunModel(*without, {"X"}, {small});
  Tensor expected_large = RunModel(*without, {"X"}, {large});

  counter->Take();
  ExpectSame(RunModel(*with, {"X"}, {small}), expected_small, "small, recording");
  EXPECT_EQ(counter->Take().size(), kChainIntermediates + 1);
  ExpectSame(RunModel(*with, {"X"}, {small}), expected_small, "small, pattern");
  EXPECT_EQ(counter->Take().size(), 2u);
  ExpectSame(RunModel(*with, {"X"}, {large}), expected_large, "large, recording");
  EXPECT_EQ(counter->Take().size(), kChainIntermediates + 1);
  ExpectSame(RunModel(*with, {"X"}, {large}), expected_large, "large, pattern");
  EXPECT_EQ(counter->Take().size(), 2u);
  ExpectSame(RunModel(*with, {"X"}, {small}), expected_small, "small again");
  EXPECT_EQ(counter->Take().size(), 2u);
}

TEST(MemPattern, OffAllocatesEachOutput) {
  auto counter = std::make_shared<CountingAllocator>();
  auto s = Load(ChainModel(), Options(counter, false));
  ASSERT_TRUE(s);
  const Value x = FloatInput(4, 64, 0.f);
  for (int run = 0; run < 3; ++run) {
    RunModel(*s, {"X"}, {x});
    EXPECT_EQ(counter->Take().size(), kChainIntermediates + 1) << "run " << run;
  }
}

TEST(MemPattern, WithoutReleaseEveryIntermediateHasItsOwnBytes) {
  auto counter = std::make_shared<CountingAllocator>();
  auto with = Load(ChainModel(), Options(counter, true, /*reuse=*/false));
  auto without = Load(ChainModel(), Options(nullptr, false, /*reuse=*/false));
  ASSERT_TRUE(with && without);
  const Value x = FloatInput(5, 64, 3.f);
  const size_t tensor_bytes = 5 * 64 * sizeof(float);
  Tensor expected = RunModel(*without, {"X"}, {x});
  counter->Take();
  ExpectSame(RunModel(*with, {"X"}, {x}), expected, "recording");
  EXPECT_EQ(counter->Take().size(), kChainIntermediates + 1);
  for (int run = 2; run <= 3; ++run) {
    ExpectSame(RunModel(*with, {"X"}, {x}), expected, "run " + std::to_string(run));
    std::vector<size_t> sizes = counter->Take();
    ASSERT_EQ(sizes.size(), 2u);
    EXPECT_GE(std::max(sizes[0], sizes[1]), kChainIntermediates * tensor_bytes);
  }
}

// Kernels like Transpose and Concat read their inputs while writing the
// output: a node's output must not lie on bytes of an input released right
// after that node.
TEST(MemPattern, OutputsNeverOverlapInputsReleasedByTheirNode) {
  onnx::ModelProto m = NewModel();
  auto* g = m.mutable_graph();
  AddValue(g->mutable_input(), "X", 1, {"N", "64"});
  AddValue(g->mutable_output(), "Y", 1, {"N", "128"});
  AddNode(g, "Relu", {"X"}, {"a"});
  AddNode(g, "Concat", {"a", "a"}, {"b"});
  g->mutable_node(1)->add_attribute()->set_name("axis");
  g->mutable_node(1)->mutable_attribute(0)->set_type(onnx::AttributeProto::INT);
  g->mutable_node(1)->mutable_attribute(0)->set_i(1);
  AddNode(g, "Transpose", {"b"}, {"c"});  // [128, N]
  AddNode(g, "Tanh", {"c"}, {"d"});
  AddNode(g, "Transpose", {"d"}, {"e"});  // [N, 128]
  AddNode(g, "Sigmoid", {"e"}, {"Y"});
  auto counter = std::make_shared<CountingAllocator>();
  auto with = Load(m, Options(counter, true));
  auto without = Load(m, Options(nullptr, false));
  ASSERT_TRUE(with && without);
  const Value x = FloatInput(8, 64, 0.3f);
  Tensor expected = RunModel(*without, {"X"}, {x});
  ExpectVaried(expected);
  counter->Take();
  for (int run = 1; run <= 3; ++run) {
    ExpectSame(RunModel(*with, {"X"}, {x}), expected, "run " + std::to_string(run));
    EXPECT_EQ(counter->Take().size(), run == 1 ? 6u : 2u) << "run " << run;
  }
}

// Y = Abs(Neg(Relu(Expand(X, S)))) + Relu(...): the intermediates' shapes come
// from S's values, so runs with the same input shapes can differ.
onnx::ModelProto ExpandModel() {
  onnx::ModelProto m = NewModel();
  auto* g = m.mutable_graph();
  AddValue(g->mutable_input(), "X", 1, {"3"});
  AddValue(g->mutable_input(), "S", 7, {"2"});
  AddValue(g->mutable_output(), "Y", 1, {"R", "3"});
  AddNode(g, "Expand", {"X", "S"}, {"e"});
  AddNode(g, "Relu", {"e"}, {"a"});
  AddNode(g, "Neg", {"a"}, {"b"});
  AddNode(g, "Abs", {"b"}, {"c"});
  AddNode(g, "Add", {"c", "a"}, {"Y"});
  return m;
}

TEST(MemPattern, DataDependentShapeLeavesThePatternAndRecordsAgain) {
  auto counter = std::make_shared<CountingAllocator>();
  auto s = Load(ExpandModel(), Options(counter, true));
  ASSERT_TRUE(s);
  Tensor xt(ElemType::kFloat, {3});
  const float xs[] = {-1.5f, 2.f, 0.25f};
  std::copy(xs, xs + 3, xt.data<float>());
  const Value x(std::move(xt));
  auto shape = [](int64_t rows) {
    Tensor t(ElemType::kInt64, {2});
    t.data<int64_t>()[0] = rows;
    t.data<int64_t>()[1] = 3;
    return Value(std::move(t));
  };
  auto check = [&](const Tensor& y, int64_t rows, const std::string& where) {
    ASSERT_EQ(y.dims(), (Dims{rows, 3})) << where;
    for (int64_t r = 0; r < rows; ++r)
      for (int c = 0; c < 3; ++c) EXPECT_EQ(y.data<float>()[r * 3 + c], 2 * std::max(xs[c], 0.f)) << where;
  };
  const size_t kOutputs = 5;  // four intermediates and Y

  counter->Take();
  check(RunModel(*s, {"X", "S"}, {x, shape(2)}), 2, "2 rows, recording");
  EXPECT_EQ(counter->Take().size(), kOutputs);
  check(RunModel(*s, {"X", "S"}, {x, shape(2)}), 2, "2 rows, pattern");
  EXPECT_EQ(counter->Take().size(), 2u);
  // Same input shapes, larger intermediates: the first one no longer fits,
  // so the run allocates the ordinary way and drops the pattern.
  check(RunModel(*s, {"X", "S"}, {x, shape(40)}), 40, "40 rows, mismatch");
  EXPECT_EQ(counter->Take().size(), kOutputs);
  check(RunModel(*s, {"X", "S"}, {x, shape(40)}), 40, "40 rows, recording");
  EXPECT_EQ(counter->Take().size(), kOutputs);
  check(RunModel(*s, {"X", "S"}, {x, shape(40)}), 40, "40 rows, pattern");
  EXPECT_EQ(counter->Take().size(), 2u);
  check(RunModel(*s, {"X", "S"}, {x, shape(2)}), 2, "2 rows, mismatch");
  EXPECT_EQ(counter->Take().size(), kOutputs);
}

// A sequence built from an intermediate keeps it alive past its last reader:
// its bytes must not go to the tensors computed after it.
TEST(MemPattern, TensorsHeldBySequencesKeepTheirBytes) {
  onnx::ModelProto m = NewModel();
  auto* g = m.mutable_graph();
  AddValue(g->mutable_input(), "X", 1, {"N", "64"});
  AddValue(g->mutable_output(), "Y", 1, {"N", "64"});
  AddNode(g, "Relu", {"X"}, {"a"});
  AddNode(g, "SequenceConstruct", {"a"}, {"seq"});
  AddNode(g, "Neg", {"X"}, {"b"});
  AddNode(g, "Abs", {"b"}, {"c"});
  AddNode(g, "Tanh", {"c"}, {"d"});
  auto* zero = g->add_initializer();
  zero->set_name("zero");
  zero->set_data_type(7);
  zero->add_int64_data(0);
  AddNode(g, "SequenceAt", {"seq", "zero"}, {"e"});
  AddNode(g, "Add", {"e", "d"}, {"Y"});
  auto counter = std::make_shared<CountingAllocator>();
  auto with = Load(m, Options(counter, true));
  auto without = Load(m, Options(nullptr, false));
  ASSERT_TRUE(with && without);
  const Value x = FloatInput(6, 64, 0.7f);
  Tensor expected = RunModel(*without, {"X"}, {x});
  ExpectVaried(expected);
  for (int run = 1; run <= 4; ++run) ExpectSame(RunModel(*with, {"X"}, {x}), expected, "run " + std::to_string(run));
}

TEST(MemPattern, ConcurrentRunsOfTwoShapes) {
  auto with = Load(ChainModel(), Options(nullptr, true));
  auto without = Load(ChainModel(), Options(nullptr, false));
  ASSERT_TRUE(with && without);
  const Value a = FloatInput(3, 64, 0.1f), b = FloatInput(17, 64, 0.9f);
  Tensor expected_a = RunModel(*without, {"X"}, {a});
  Tensor expected_b = RunModel(*without, {"X"}, {b});
  std::atomic<int> wrong{0}, failed{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < 25; ++i) {
        const bool use_a = (i + t) % 2 == 0;
        const Value* feed = use_a ? &a : &b;
        std::vector<Value> out;
        Status st = with->Run(nullptr, {"X"}, {feed}, {}, &out);
        if (!st.ok()) {
          ++failed;
          continue;
        }
        const Tensor& want = use_a ? expected_a : expected_b;
        const Tensor& got = out[0].tensor();
        if (got.dims() != want.dims() || std::memcmp(got.raw(), want.raw(), want.bytes()) != 0) ++wrong;
      }
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_EQ(failed.load(), 0);
  EXPECT_EQ(wrong.load(), 0);
}

}  // namespace
}  // namespace onyx

namespace onyx {
namespace {

// Run config "memory.enable_memory_arena_shrinkage" = "cpu:0" returns the
// session arena's idle blocks to the system after the run (onnxruntime's key).
TEST(ArenaShrink, RunConfigKeyTrimsTheSessionArena) {
  auto arena = std::make_shared<CpuAllocator>(size_t{1} << 10);
  auto s = Load(ChainModel(), Options(arena, false));
  ASSERT_TRUE(s);
  const Value x = FloatInput(64, 64, 0.5f);  // 16 KiB tensors: cached by this arena
  std::vector<const Value*> feeds{&x};
  std::vector<Value> out;
  ASSERT_TRUE(s->Run(nullptr, {"X"}, feeds, {}, &out).ok());
  EXPECT_GT(arena->CachedBytes(), 0u) << "intermediates should be back in the arena";
  out.clear();  // the first run's output goes back to the arena too
  RunOptions ro;
  ro.config[kRunArenaShrinkKey] = "cpu:0";
  Status st = s->Run(&ro, {"X"}, feeds, {}, &out);
  ASSERT_TRUE(st.ok()) << st.message();
  EXPECT_EQ(arena->CachedBytes(), 0u);
  out.clear();
  // A device without an arena is refused before the run, naming it.
  ro.config[kRunArenaShrinkKey] = "gpu:0";
  st = s->Run(&ro, {"X"}, feeds, {}, &out);
  EXPECT_EQ(st.code(), ErrorCode::kInvalidArgument);
  EXPECT_NE(st.message().find("memory arena shrink list: gpu:0"), std::string::npos) << st.message();
}

}  // namespace
}  // namespace onyx

// Output views (KernelInfo::AllowOutputView): Reshape, Flatten, Squeeze,
// Unsqueeze and Identity hand out their input's bytes under a new shape where
// the plan allows it, and copy where a view would let the caller see or
// change memory it does not own.
namespace onyx {
namespace {

void AddShape(onnx::GraphProto* g, const std::string& name, std::vector<int64_t> dims) {
  auto* t = g->add_initializer();
  t->set_name(name);
  t->set_data_type(7);
  t->add_dims(static_cast<int64_t>(dims.size()));
  for (int64_t d : dims) t->add_int64_data(d);
}

// All outputs of a run (with `bound`, written into those tensors).
std::vector<Value> RunAll(const Session& s, const Value& x, const std::vector<std::string>& outputs,
                          const std::vector<std::shared_ptr<Tensor>>* bound = nullptr) {
  std::vector<const Value*> feeds{&x};
  std::vector<Value> out;
  Status st = s.Run(nullptr, {"X"}, feeds, outputs, &out, bound);
  EXPECT_TRUE(st.ok()) << st.message();
  return out;
}

void ExpectFloats(const Value& v, const Dims& dims, const std::function<float(int64_t)>& want, const std::string& what) {
  ASSERT_TRUE(v.IsTensor()) << what;
  ASSERT_EQ(v.tensor().dims(), dims) << what;
  for (int64_t i = 0; i < v.tensor().size(); ++i) ASSERT_EQ(v.tensor().data<float>()[i], want(i)) << what << " at " << i;
}

// t = Relu(X) [N, 64]; r = Reshape(t) [N, 8, 8]; q = Reshape(r) [N*64];
// u = Flatten(Unsqueeze(q)); Y = Neg(u): t's bytes are read through three
// views, and only t and Y get memory of their own.
TEST(OutputViews, ChainOfViewsAllocatesNothing) {
  onnx::ModelProto m = NewModel();
  auto* g = m.mutable_graph();
  AddValue(g->mutable_input(), "X", 1, {"N", "64"});
  AddValue(g->mutable_output(), "Y", 1, {"1", "?"});
  AddShape(g, "s3", {-1, 8, 8});
  AddShape(g, "s1", {-1});
  AddShape(g, "axes", {0});
  g->mutable_initializer(2)->clear_dims();
  g->mutable_initializer(2)->add_dims(1);
  AddNode(g, "Relu", {"X"}, {"t"});
  AddNode(g, "Reshape", {"t", "s3"}, {"r"});
  AddNode(g, "Reshape", {"r", "s1"}, {"q"});
  AddNode(g, "Unsqueeze", {"q", "axes"}, {"w"});
  AddNode(g, "Flatten", {"w"}, {"u"});
  AddNode(g, "Neg", {"u"}, {"Y"});
  auto counter = std::make_shared<CountingAllocator>();
  auto s = Load(m, Options(counter, false));
  ASSERT_TRUE(s);
  const Value x = FloatInput(4, 64, 0.2f);
  const float* xs = x.tensor().data<float>();
  counter->Take();
  std::vector<Value> out = RunAll(*s, x, {"Y"});
  ASSERT_EQ(out.size(), 1u);
  ExpectFloats(out[0], {1, 256}, [&](int64_t i) { return -std::max(xs[i], 0.f); }, "Y");
  EXPECT_EQ(counter->Take().size(), 2u) << "t and Y only";
}

// A view that is read long after its owner's last direct reader: with a
// memory pattern, the owner's bytes must not go to the tensors in between.
TEST(OutputViews, ViewedBytesOutliveTheirOwnerInThePattern) {
  onnx::ModelProto m = NewModel();
  auto* g = m.mutable_graph();
  AddValue(g->mutable_input(), "X", 1, {"N", "64"});
  AddValue(g->mutable_output(), "Y", 1, {"N", "64"});
  AddShape(g, "s", {-1, 64});
  AddNode(g, "Relu", {"X"}, {"t"});
  AddNode(g, "Reshape", {"t", "s"}, {"r"});  // t's last reader
  AddNode(g, "Neg", {"X"}, {"a"});
  AddNode(g, "Tanh", {"a"}, {"b"});
  AddNode(g, "Sigmoid", {"b"}, {"c"});
  AddNode(g, "Abs", {"c"}, {"d"});
  AddNode(g, "Add", {"d", "r"}, {"Y"});
  auto counter = std::make_shared<CountingAllocator>();
  auto with = Load(m, Options(counter, true));
  auto without = Load(m, Options(nullptr, false, /*reuse=*/false));
  ASSERT_TRUE(with && without);
  const Value x = FloatInput(8, 64, 0.4f);
  Tensor expected = RunModel(*without, {"X"}, {x});
  ExpectVaried(expected);
  counter->Take();
  for (int run = 1; run <= 3; ++run) {
    ExpectSame(RunModel(*with, {"X"}, {x}), expected, "run " + std::to_string(run));
    // Recording: t, a..d and Y (r is a view); then the block and Y.
    EXPECT_EQ(counter->Take().size(), run == 1 ? 6u : 2u) << "run " << run;
  }
}

// A sequence built from a view holds the view's owner's bytes: neither may
// come from the pattern block, whose ranges later tensors reuse.
TEST(OutputViews, SequenceOfAViewKeepsTheOwnersBytes) {
  onnx::ModelProto m = NewModel();
  auto* g = m.mutable_graph();
  AddValue(g->mutable_input(), "X", 1, {"N", "64"});
  AddValue(g->mutable_output(), "Y", 1, {"N", "64"});
  AddShape(g, "s", {-1, 64});
  auto* zero = g->add_initializer();
  zero->set_name("zero");
  zero->set_data_type(7);
  zero->add_int64_data(0);
  AddNode(g, "Relu", {"X"}, {"t"});
  AddNode(g, "Reshape", {"t", "s"}, {"r"});
  AddNode(g, "SequenceConstruct", {"r"}, {"seq"});
  AddNode(g, "Neg", {"X"}, {"b"});
  AddNode(g, "Abs", {"b"}, {"c"});
  AddNode(g, "Tanh", {"c"}, {"d"});
  AddNode(g, "SequenceAt", {"seq", "zero"}, {"e"});
  AddNode(g, "Add", {"e", "d"}, {"Y"});
  auto with = Load(m, Options(nullptr, true));
  auto without = Load(m, Options(nullptr, false, /*reuse=*/false));
  ASSERT_TRUE(with && without);
  const Value x = FloatInput(6, 64, 0.8f);
  Tensor expected = RunModel(*without, {"X"}, {x});
  ExpectVaried(expected);
  for (int run = 1; run <= 4; ++run) ExpectSame(RunModel(*with, {"X"}, {x}), expected, "run " + std::to_string(run));
}

// Graph outputs: a view of an intermediate is handed out as is; a view of a
// feed, of an initializer or of another graph output is a copy, so the
// caller's arrays and the session's weights never change through an output.
TEST(OutputViews, GraphOutputsViewOnlyBytesOfTheirOwn) {
  onnx::ModelProto m = NewModel();
  auto* g = m.mutable_graph();
  AddValue(g->mutable_input(), "X", 1, {"2", "6"});
  for (const char* name : {"A", "IX"}) AddValue(g->mutable_output(), name, 1, {"2", "6"});
  for (const char* name : {"RA", "RX", "RW", "RT"}) AddValue(g->mutable_output(), name, 1, {"3", "4"});
  AddShape(g, "s", {3, 4});
  auto* w = g->add_initializer();
  w->set_name("W");
  w->set_data_type(1);
  w->add_dims(12);
  for (int i = 0; i < 12; ++i) w->add_float_data(static_cast<float>(i) * 0.5f);
  AddNode(g, "Relu", {"X"}, {"A"});           // a graph output
  AddNode(g, "Reshape", {"A", "s"}, {"RA"});  // view of a graph output: copy
  AddNode(g, "Reshape", {"X", "s"}, {"RX"});  // view of the feed: copy
  AddNode(g, "Reshape", {"W", "s"}, {"RW"});  // view of an initializer: copy
  AddNode(g, "Neg", {"X"}, {"t"});
  AddNode(g, "Reshape", {"t", "s"}, {"RT"});  // view of an intermediate: shared
  AddNode(g, "Identity", {"X"}, {"IX"});      // the feed again: copy
  SessionOptions o = Options(nullptr, true);
  auto s = Load(m, o);
  ASSERT_TRUE(s);
  const Value x = FloatInput(2, 6, 0.9f);
  std::vector<float> original(x.tensor().data<float>(), x.tensor().data<float>() + 12);
  for (int run = 1; run <= 2; ++run) {
    std::vector<Value> out = RunAll(*s, x, {"A", "RA", "RX", "RW", "RT", "IX"});
    // (declared order: A, IX, RA, RX, RW, RT; asked for by name)
    ASSERT_EQ(out.size(), 6u);
    auto xs = [&](int64_t i) { return original[static_cast<size_t>(i)]; };
    ExpectFloats(out[0], {2, 6}, [&](int64_t i) { return std::max(xs(i), 0.f); }, "A");
    ExpectFloats(out[1], {3, 4}, [&](int64_t i) { return std::max(xs(i), 0.f); }, "RA");
    ExpectFloats(out[2], {3, 4}, xs, "RX");
    ExpectFloats(out[3], {3, 4}, [](int64_t i) { return static_cast<float>(i) * 0.5f; }, "RW");
    ExpectFloats(out[4], {3, 4}, [&](int64_t i) { return -xs(i); }, "RT");
    ExpectFloats(out[5], {2, 6}, xs, "IX");
    const void* feed = x.tensor().raw();
    EXPECT_NE(out[1].tensor().raw(), out[0].tensor().raw()) << "two graph outputs share bytes";
    EXPECT_NE(out[2].tensor().raw(), feed);
    EXPECT_NE(out[5].tensor().raw(), feed);
    // The caller owns what it got: scribbling over every output changes
    // neither the feed nor the weights the next run reads.
    for (Value& v : out) std::fill(v.tensor().data<float>(), v.tensor().data<float>() + v.tensor().size(), -7.f);
    for (int i = 0; i < 12; ++i) ASSERT_EQ(x.tensor().data<float>()[i], original[i]);
  }
}

// An output the caller bound to a buffer of its own (IOBinding) is written
// there, never turned into a view of another tensor.
TEST(OutputViews, BoundOutputIsWrittenNotViewed) {
  onnx::ModelProto m = NewModel();
  auto* g = m.mutable_graph();
  AddValue(g->mutable_input(), "X", 1, {"2", "6"});
  AddValue(g->mutable_output(), "R", 1, {"3", "4"});
  AddShape(g, "s", {3, 4});
  AddNode(g, "Neg", {"X"}, {"t"});
  AddNode(g, "Reshape", {"t", "s"}, {"R"});
  auto s = Load(m, Options(nullptr, true));
  ASSERT_TRUE(s);
  const Value x = FloatInput(2, 6, 0.1f);
  auto bound = std::make_shared<Tensor>(ElemType::kFloat, Dims{3, 4});
  std::vector<std::shared_ptr<Tensor>> binding{bound};
  for (int run = 1; run <= 2; ++run) {
    std::vector<Value> out = RunAll(*s, x, {"R"}, &binding);
    ASSERT_EQ(out.size(), 1u);
    EXPECT_EQ(out[0].tensor().raw(), bound->raw());
    for (int i = 0; i < 12; ++i) ASSERT_EQ(bound->data<float>()[i], -x.tensor().data<float>()[i]);
  }
}

// Parallel execution frees a tensor when its last reader is done: a view
// keeps the bytes alive (they go back only with the last tensor sharing them).
TEST(OutputViews, ParallelPlanKeepsViewedBytes) {
  onnx::ModelProto m = NewModel();
  auto* g = m.mutable_graph();
  AddValue(g->mutable_input(), "X", 1, {"N", "64"});
  AddValue(g->mutable_output(), "Y", 1, {"N", "64"});
  AddShape(g, "s", {-1, 64});
  AddNode(g, "Relu", {"X"}, {"t"});
  AddNode(g, "Reshape", {"t", "s"}, {"r"});
  AddNode(g, "Neg", {"X"}, {"a"});
  AddNode(g, "Tanh", {"a"}, {"b"});
  AddNode(g, "Add", {"b", "r"}, {"Y"});
  SessionOptions par = Options(nullptr, false);
  par.execution_mode = 1;
  par.inter_op_threads = 2;
  auto s = Load(m, par);
  auto ref = Load(m, Options(nullptr, false, /*reuse=*/false));
  ASSERT_TRUE(s && ref);
  const Value x = FloatInput(16, 64, 1.1f);
  Tensor expected = RunModel(*ref, {"X"}, {x});
  for (int run = 0; run < 20; ++run) ExpectSame(RunModel(*s, {"X"}, {x}), expected, "run " + std::to_string(run));
}

}  // namespace
}  // namespace onyx

// In-place outputs (KernelInfo::AllowOutputInPlace): FusedConv writes Y over
// its residual sum Z where nothing reads Z after it, and nowhere else: not
// over a feed, a graph output, bytes a view shares, a tensor a sequence
// holds, or in a parallel plan.
namespace onyx {
namespace {

constexpr int64_t kIpC = 8, kIpHW = 256;  // X [1, 8, 16, 16]; 1x1 convs 8 -> 8

void AddFloats(onnx::GraphProto* g, const std::string& name, std::vector<int64_t> dims, float seed) {
  auto* t = g->add_initializer();
  t->set_name(name);
  t->set_data_type(1);
  int64_t n = 1;
  for (int64_t d : dims) t->add_dims(d), n *= d;
  for (int64_t i = 0; i < n; ++i) t->add_float_data(std::cos(seed + 0.61f * static_cast<float>(i)) * 0.4f);
}

// Y = Relu(W x + B + z), the 1x1 FusedConv of the models below.
void AddFused(onnx::GraphProto* g, const std::string& x, const std::string& z, const std::string& y) {
  auto* n = g->add_node();
  n->set_op_type("FusedConv");
  n->set_domain("com.microsoft");
  n->set_name("FusedConv_" + y);
  for (const char* in : {x.c_str(), "W", "B"}) n->add_input(in);
  if (!z.empty()) n->add_input(z);
  n->add_output(y);
  auto* a = n->add_attribute();
  a->set_name("activation");
  a->set_type(onnx::AttributeProto::STRING);
  a->set_s("Relu");
}

onnx::ModelProto InPlaceModel() {
  onnx::ModelProto m = NewModel();
  auto* ms = m.add_opset_import();
  ms->set_domain("com.microsoft");
  ms->set_version(1);
  auto* g = m.mutable_graph();
  AddValue(g->mutable_input(), "X", 1, {"1", "8", "16", "16"});
  AddFloats(g, "W", {kIpC, kIpC, 1, 1}, 0.3f);
  AddFloats(g, "B", {kIpC}, 1.1f);
  return m;
}

// The same math in double, from the model's own W and B.
std::vector<double> FusedRef(const onnx::ModelProto& m, const std::vector<double>& x, const std::vector<double>* z) {
  const auto& w = m.graph().initializer(0);
  const auto& b = m.graph().initializer(1);
  std::vector<double> y(static_cast<size_t>(kIpC * kIpHW));
  for (int64_t o = 0; o < kIpC; ++o)
    for (int64_t p = 0; p < kIpHW; ++p) {
      double s = b.float_data(static_cast<int>(o)) + (z ? (*z)[o * kIpHW + p] : 0.0);
      for (int64_t c = 0; c < kIpC; ++c) s += w.float_data(static_cast<int>(o * kIpC + c)) * x[c * kIpHW + p];
      y[o * kIpHW + p] = std::max(s, 0.0);
    }
  return y;
}

std::vector<double> AsDoubles(const Tensor& t) {
  std::vector<double> v(static_cast<size_t>(t.size()));
  for (int64_t i = 0; i < t.size(); ++i) v[i] = t.data<float>()[i];
  return v;
}

void ExpectNear(const Tensor& got, const std::vector<double>& want, const std::string& what) {
  ASSERT_EQ(got.size(), static_cast<int64_t>(want.size())) << what;
  double lo = want[0], hi = want[0];
  for (size_t i = 0; i < want.size(); ++i) {
    ASSERT_NEAR(got.data<float>()[i], want[i], 1e-4 * (1 + std::fabs(want[i]))) << what << " at " << i;
    lo = std::min(lo, want[i]), hi = std::max(hi, want[i]);
  }
  EXPECT_GT(hi - lo, 0.1) << what << ": the reference is flat";
}

SessionOptions InPlaceOptions(std::shared_ptr<Allocator> alloc, bool pattern, bool parallel = false) {
  SessionOptions o = Options(std::move(alloc), pattern);
  o.execution_mode = parallel ? 1 : 0;
  o.inter_op_threads = parallel ? 2 : 0;
  return o;
}

Value ConvInput() {
  Tensor x(ElemType::kFloat, {1, kIpC, 16, 16});
  for (int64_t i = 0; i < x.size(); ++i) x.data<float>()[i] = std::sin(0.3f + 0.23f * static_cast<float>(i)) * 2.f;
  return Value(std::move(x));
}

// t = Relu(X); a = FusedConv(t); y1 = FusedConv(a, Z=t); b = FusedConv(y1);
// y2 = FusedConv(b, Z=y1); Y = Neg(y2) [+ t when `t_read_late`]: y1 takes
// t's bytes and y2 y1's (a residual chain), unless t is read at the end.
TEST(InPlaceOutputs, ResidualChainWritesOverItsSums) {
  for (bool t_read_late : {false, true}) {
    SCOPED_TRACE(t_read_late ? "t read at the end" : "t read last by y1");
    onnx::ModelProto m = InPlaceModel();
    auto* g = m.mutable_graph();
    AddValue(g->mutable_output(), "Y", 1, {"1", "8", "16", "16"});
    AddNode(g, "Relu", {"X"}, {"t"});
    AddFused(g, "t", "", "a");
    AddFused(g, "a", "t", "y1");
    AddFused(g, "y1", "", "b");
    AddFused(g, "b", "y1", "y2");
    if (t_read_late) {
      AddNode(g, "Neg", {"y2"}, {"n"});
      AddNode(g, "Add", {"n", "t"}, {"Y"});
    } else {
      AddNode(g, "Neg", {"y2"}, {"Y"});
    }
    const Value x = ConvInput();
    std::vector<double> t = AsDoubles(x.tensor());
    for (double& v : t) v = std::max(v, 0.0);
    const std::vector<double> y1 = FusedRef(m, FusedRef(m, t, nullptr), &t);
    std::vector<double> want = FusedRef(m, FusedRef(m, y1, nullptr), &y1);
    for (size_t i = 0; i < want.size(); ++i) want[i] = -want[i] + (t_read_late ? t[i] : 0.0);
    for (bool pattern : {false, true}) {
      auto counter = std::make_shared<CountingAllocator>();
      auto s = Load(m, InPlaceOptions(counter, pattern));
      ASSERT_TRUE(s);
      for (int run = 1; run <= 3; ++run) {
        ExpectNear(RunModel(*s, {"X"}, {x}), want, "run " + std::to_string(run));
        const size_t allocs = counter->Take().size();
        // t, a, b and Y have bytes of their own; y1 (unless t is read late)
        // and y2 take their sums'. A pattern's runs after the first take
        // one block and Y.
        if (!pattern || run == 1) EXPECT_EQ(allocs, t_read_late ? 6u : 4u) << "run " << run;
        else EXPECT_EQ(allocs, 2u) << "run " << run;
      }
    }
  }
}

// Sums that are a feed, a graph output, bytes a Reshape view shares, or a
// tensor a sequence holds keep their values; so does every sum in a parallel
// plan. Y = y_feed + y_out + y_view + y_seq + SequenceAt(seq, 0) + t_out.
TEST(InPlaceOutputs, FeedsOutputsViewsAndSequencesAreNeverWrittenOver) {
  onnx::ModelProto m = InPlaceModel();
  auto* g = m.mutable_graph();
  AddValue(g->mutable_output(), "Y", 1, {"1", "8", "16", "16"});
  AddValue(g->mutable_output(), "t_out", 1, {"1", "8", "16", "16"});
  AddShape(g, "s", {1, kIpC, 16, 16});
  auto* zero = g->add_initializer();
  zero->set_name("zero");
  zero->set_data_type(7);
  zero->add_int64_data(0);
  AddNode(g, "Relu", {"X"}, {"t_out"});
  AddFused(g, "t_out", "X", "y_feed");      // Z a feed
  AddFused(g, "y_feed", "t_out", "y_out");  // Z a graph output
  AddNode(g, "Abs", {"y_out"}, {"u"});
  AddNode(g, "Reshape", {"u", "s"}, {"r"});  // a view of u
  AddFused(g, "y_out", "r", "y_view");       // Z shares u's bytes
  AddNode(g, "Neg", {"y_view"}, {"q"});
  AddNode(g, "SequenceConstruct", {"q"}, {"seq"});
  AddFused(g, "u", "q", "y_seq");  // q's last plan reader, but the sequence holds it
  AddNode(g, "SequenceAt", {"seq", "zero"}, {"q2"});
  AddNode(g, "Add", {"y_feed", "y_out"}, {"s1"});
  AddNode(g, "Add", {"s1", "y_view"}, {"s2"});
  AddNode(g, "Add", {"s2", "y_seq"}, {"s3"});
  AddNode(g, "Add", {"s3", "q2"}, {"Y"});
  const Value x = ConvInput();
  const std::vector<double> xd = AsDoubles(x.tensor());
  std::vector<double> t = xd;
  for (double& v : t) v = std::max(v, 0.0);
  const std::vector<double> y_feed = FusedRef(m, t, &xd);
  const std::vector<double> y_out = FusedRef(m, y_feed, &t);
  std::vector<double> u = y_out;
  for (double& v : u) v = std::fabs(v);
  const std::vector<double> y_view = FusedRef(m, y_out, &u);
  std::vector<double> q = y_view;
  for (double& v : q) v = -v;
  const std::vector<double> y_seq = FusedRef(m, u, &q);
  std::vector<double> want(y_seq.size());
  for (size_t i = 0; i < want.size(); ++i) want[i] = y_feed[i] + y_out[i] + y_view[i] + y_seq[i] + q[i];
  for (int mode = 0; mode < 3; ++mode) {
    SCOPED_TRACE(mode == 0 ? "sequential" : mode == 1 ? "memory pattern" : "parallel");
    auto s = Load(m, InPlaceOptions(nullptr, mode == 1, mode == 2));
    ASSERT_TRUE(s);
    for (int run = 1; run <= 2; ++run) {
      const std::vector<float> before(x.tensor().data<float>(), x.tensor().data<float>() + x.tensor().size());
      std::vector<Value> out = RunAll(*s, x, {"Y", "t_out"});
      ASSERT_EQ(out.size(), 2u);
      ExpectNear(out[0].tensor(), want, "Y, run " + std::to_string(run));
      ExpectNear(out[1].tensor(), t, "t_out, run " + std::to_string(run));
      EXPECT_EQ(std::memcmp(before.data(), x.tensor().data<float>(), before.size() * sizeof(float)), 0)
          << "the feed X changed";
    }
  }
}

}  // namespace
}  // namespace onyx
