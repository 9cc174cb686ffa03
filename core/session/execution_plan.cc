#include "core/session/execution_plan.h"

#include <algorithm>
#include <numeric>
#include <optional>
#include <thread>
#include <unordered_set>

namespace onyx {

// Offsets and sizes in a pattern block are multiples of this (the CPU
// allocator's alignment, and a cache line).
constexpr size_t kPatternAlign = 64;
// Input signatures a plan keeps patterns for; a model fed ever new shapes
// starts over rather than grow without bound.
constexpr size_t kMaxPatterns = 8;

struct MemPattern {
  // The k-th allocation the run makes from the block: its slot, its bytes
  // (rounded up to kPatternAlign) and where it lies.
  std::vector<int> slots;
  std::vector<size_t> sizes;
  std::vector<size_t> offsets;
  size_t total = 0;
};

// With a pattern for the run's input signature, hands out the intermediates'
// memory from one block; without, records the allocations and, when the run
// succeeds, lays them out into a pattern for the next run.
class MemPatternRun {
 public:
  // `values` holds the feeds only (constants not yet placed).
  MemPatternRun(const ExecutionPlan& plan, const std::vector<Value>& values);
  void BeginStep(int step) { step_ = step; }
  // Memory for output `slot` from the block, or null to allocate it the
  // ordinary way (not eligible, recording, or the run left the pattern).
  std::shared_ptr<Tensor> Allocate(int slot, ElemType type, const Dims& dims);
  // Called before `slot` is released after its last reader.
  void Releasing(int slot, const Value& v);
  // After a successful run: stores what was recorded.
  void Finish();

 private:
  struct Record {
    int slot;
    size_t size;
    int start;  // the step that produced it
  };
  void DropPattern();
  std::shared_ptr<const MemPattern> Plan() const;

  const ExecutionPlan& plan_;
  std::vector<int64_t> key_;
  std::shared_ptr<const std::vector<bool>> eligible_;
  uint64_t generation_ = 0;
  std::shared_ptr<const MemPattern> pattern_;  // null while recording
  std::shared_ptr<void> block_;                // allocated on first use
  size_t next_ = 0;
  std::vector<Record> records_;
  int step_ = 0;
  // Set when the run stops following (or recording) a pattern: its
  // allocations no longer match, or a tensor outlived its planned lifetime.
  // Later allocations are ordinary, so nothing placed after that point can
  // overlap memory still in use.
  bool stopped_ = false;
};

namespace {

void AppendSignature(const Value& v, std::vector<int64_t>* key) {
  key->push_back(static_cast<int64_t>(v.kind()));
  if (v.IsTensor()) {
    const Tensor& t = v.tensor();
    key->push_back(static_cast<int64_t>(t.type()));
    key->push_back(static_cast<int64_t>(t.rank()));
    key->insert(key->end(), t.dims().begin(), t.dims().end());
  } else if (v.kind() == Value::Kind::kSequence || v.kind() == Value::Kind::kMap ||
             v.kind() == Value::Kind::kOptional) {
    key->push_back(static_cast<int64_t>(v.items().size()));
    for (const Value& item : v.items()) AppendSignature(item, key);
  }
}

}  // namespace

MemPatternRun::MemPatternRun(const ExecutionPlan& plan, const std::vector<Value>& values) : plan_(plan) {
  for (int s : plan.input_slots_) AppendSignature(values[s], &key_);
  std::lock_guard<std::mutex> lock(plan.pattern_mu_);
  eligible_ = plan.pattern_eligible_;
  generation_ = plan.pattern_generation_;
  auto it = plan.patterns_.find(key_);
  if (it != plan.patterns_.end()) pattern_ = it->second;
}

std::shared_ptr<Tensor> MemPatternRun::Allocate(int slot, ElemType type, const Dims& dims) {
  // Strings need constructed storage; empty tensors and invalid shapes take
  // the ordinary path (which reports the latter).
  if (stopped_ || !(*eligible_)[slot] || type == ElemType::kString) return nullptr;
  const int64_t n = ShapeSize(dims);
  if (n <= 0) return nullptr;
  const size_t bytes = StorageBytes(type, static_cast<size_t>(n));
  if (bytes == 0) return nullptr;
  const size_t size = (bytes + kPatternAlign - 1) / kPatternAlign * kPatternAlign;
  if (!pattern_) {
    records_.push_back({slot, size, step_});
    return nullptr;
  }
  const size_t k = next_++;
  if (k >= pattern_->slots.size() || pattern_->slots[k] != slot || pattern_->sizes[k] != size) {
    // Shapes that depend on data, not only on the inputs' shapes: this
    // signature needs a new recording.
    stopped_ = true;
    DropPattern();
    return nullptr;
  }
  if (!block_) {
    Allocator* alloc = plan_.pattern_allocator_;
    void* p = alloc->Alloc(pattern_->total);
    block_ = std::shared_ptr<void>(p, [alloc](void* q) { alloc->Free(q); });
  }
  return std::make_shared<Tensor>(type, dims, block_, static_cast<char*>(block_.get()) + pattern_->offsets[k],
                                  plan_.pattern_allocator_->Info());
}

void MemPatternRun::Releasing(int slot, const Value& v) {
  if (!(*eligible_)[slot] || !v.IsTensor() || v.tensor_ptr().use_count() <= 1) return;
  // Something still holds the tensor (a sequence or optional built from it),
  // so its bytes must not be reused: never place this slot in a pattern.
  stopped_ = true;
  std::lock_guard<std::mutex> lock(plan_.pattern_mu_);
  if ((*plan_.pattern_eligible_)[slot]) {
    auto eligible = std::make_shared<std::vector<bool>>(*plan_.pattern_eligible_);
    (*eligible)[slot] = false;
    plan_.pattern_eligible_ = std::move(eligible);
    ++plan_.pattern_generation_;
    plan_.patterns_.clear();
  }
}

void MemPatternRun::DropPattern() {
  std::lock_guard<std::mutex> lock(plan_.pattern_mu_);
  auto it = plan_.patterns_.find(key_);
  if (it != plan_.patterns_.end() && it->second == pattern_) plan_.patterns_.erase(it);
}

std::shared_ptr<const MemPattern> MemPatternRun::Plan() const {
  // Largest first, each at the lowest offset free of every placed allocation
  // whose lifetime overlaps its own. Lifetimes are inclusive step ranges: a
  // tensor released after step i is still read by step i, so it must not
  // share bytes with an output of step i.
  const size_t n = records_.size();
  auto pattern = std::make_shared<MemPattern>();
  pattern->slots.resize(n);
  pattern->sizes.resize(n);
  pattern->offsets.assign(n, 0);
  std::vector<int> end(n);
  for (size_t k = 0; k < n; ++k) {
    pattern->slots[k] = records_[k].slot;
    pattern->sizes[k] = records_[k].size;
    end[k] = std::max(records_[k].start, plan_.slot_end_[records_[k].slot]);
  }
  std::vector<size_t> order(n);
  std::iota(order.begin(), order.end(), size_t{0});
  std::stable_sort(order.begin(), order.end(),
                   [&](size_t a, size_t b) { return records_[a].size > records_[b].size; });
  std::vector<size_t> placed;
  std::vector<std::pair<size_t, size_t>> busy;  // [offset, end) of overlapping placed allocations
  for (size_t k : order) {
    busy.clear();
    for (size_t j : placed)
      if (records_[k].start <= end[j] && records_[j].start <= end[k])
        busy.emplace_back(pattern->offsets[j], pattern->offsets[j] + pattern->sizes[j]);
    std::sort(busy.begin(), busy.end());
    size_t offset = 0;
    for (const auto& b : busy) {
      if (b.first >= offset + records_[k].size) break;
      offset = std::max(offset, b.second);
    }
    pattern->offsets[k] = offset;
    pattern->total = std::max(pattern->total, offset + records_[k].size);
    placed.push_back(k);
  }
  return pattern;
}

void MemPatternRun::Finish() {
  if (pattern_ || stopped_) return;
  std::shared_ptr<const MemPattern> planned = Plan();
  std::lock_guard<std::mutex> lock(plan_.pattern_mu_);
  // A slot found shared since this run started may be among the records.
  if (generation_ != plan_.pattern_generation_) return;
  if (plan_.patterns_.size() >= kMaxPatterns && !plan_.patterns_.count(key_)) plan_.patterns_.clear();
  plan_.patterns_[key_] = std::move(planned);
}

namespace {

class RunContext final : public KernelContext {
 public:
  RunContext(std::vector<Value>& values, const std::vector<int>& inputs, const std::vector<int>& outputs,
             const std::vector<std::shared_ptr<Tensor>>* presets, const std::vector<std::string>& slot_names,
             Allocator* alloc, MemPatternRun* pattern, ThreadPool* threads, const RunOptions* ro)
      : values_(values),
        inputs_(inputs),
        outputs_(outputs),
        presets_(presets),
        slot_names_(slot_names),
        alloc_(alloc),
        pattern_(pattern),
        threads_(threads),
        run_options_(ro) {}

  int InputCount() const override { return static_cast<int>(inputs_.size()); }
  const Tensor* Input(int i) const override {
    const Value* v = InputValue(i);
    return v && v->IsTensor() ? &v->tensor() : nullptr;
  }
  const Value* InputValue(int i) const override {
    if (i < 0 || i >= static_cast<int>(inputs_.size()) || inputs_[i] < 0) return nullptr;
    const Value& v = values_[inputs_[i]];
    return v.HasValue() ? &v : nullptr;
  }
  int OutputCount() const override { return static_cast<int>(outputs_.size()); }
  Tensor* Output(int i, const Dims& dims, ElemType type) override {
    if (i < 0 || i >= static_cast<int>(outputs_.size()) || outputs_[i] < 0) return nullptr;
    const int slot = outputs_[i];
    if (presets_ && (*presets_)[slot]) {
      // A caller-bound buffer: write there, or refuse rather than reallocate
      // behind the caller's back.
      const std::shared_ptr<Tensor>& bound = (*presets_)[slot];
      if (bound->type() != type || bound->dims() != dims)
        throw OnyxException(MakeError(ErrorCode::kInvalidArgument, "output '", slot_names_[slot], "' is bound to a ",
                                      ElemTypeName(bound->type()), ShapeToString(bound->dims()),
                                      " buffer but the model produces ", ElemTypeName(type), ShapeToString(dims)));
      values_[slot] = Value(bound);
      return bound.get();
    }
    std::shared_ptr<Tensor> t;
    if (pattern_) t = pattern_->Allocate(slot, type, dims);
    if (!t) t = std::make_shared<Tensor>(type, dims, alloc_);
    Tensor* raw = t.get();
    values_[slot] = Value(std::move(t));
    return raw;
  }
  Status SetOutputValue(int i, Value v) override {
    ONYX_CHECK_ARG(i >= 0 && i < static_cast<int>(outputs_.size()), "output index ", i, " out of range");
    if (outputs_[i] < 0) return Status::OK();
    ONYX_CHECK_ARG(!(presets_ && (*presets_)[outputs_[i]]), "output '", slot_names_[outputs_[i]],
                   "' is bound to a tensor buffer but the model produces a non-tensor value");
    values_[outputs_[i]] = std::move(v);
    return Status::OK();
  }
  ThreadPool* threads() const override { return threads_; }
  bool terminate_requested() const override { return run_options_ && run_options_->terminate.load(); }

 private:
  std::vector<Value>& values_;
  const std::vector<int>& inputs_;
  const std::vector<int>& outputs_;
  const std::vector<std::shared_ptr<Tensor>>* presets_;
  const std::vector<std::string>& slot_names_;
  Allocator* alloc_;
  MemPatternRun* pattern_;
  ThreadPool* threads_;
  const RunOptions* run_options_;
};

std::string DescribeValue(const Value& v) {
  switch (v.kind()) {
    case Value::Kind::kTensor:
      return StrCat(ElemTypeName(v.tensor().type()), ShapeToString(v.tensor().dims()));
    case Value::Kind::kSequence:
      return StrCat("sequence of ", v.items().size());
    case Value::Kind::kMap:
      return StrCat("map of ", v.items()[0].tensor().size());
    case Value::Kind::kOptional:
      return v.items().empty() ? "optional(none)" : "optional(" + DescribeValue(v.items()[0]) + ")";
    default:
      return "<missing>";
  }
}

// Estimated bytes of a value from its inferred type (symbolic dims count as 1).
size_t EstimatedBytes(const Graph& graph, const std::string& name) {
  auto it = graph.value_types.find(name);
  if (it == graph.value_types.end() || it->second.kind != TypeInfo::Kind::kTensor || !it->second.has_shape)
    return 0;
  size_t n = 1;
  for (const Dim& d : it->second.dims) n *= d.known() && d.value > 0 ? static_cast<size_t>(d.value) : 1;
  return StorageBytes(it->second.elem, n);
}

// The order nodes run in (see PlanOptions::execution_order). graph.nodes is
// already a topological order; the other orders re-sort with Kahn's algorithm
// and break ties by that order.
std::vector<size_t> OrderNodes(const Graph& graph, int execution_order) {
  const size_t n = graph.nodes.size();
  std::vector<size_t> order(n);
  for (size_t i = 0; i < n; ++i) order[i] = i;
  if (execution_order == 0 || n < 2) return order;

  std::unordered_map<std::string, size_t> producer;
  for (size_t i = 0; i < n; ++i)
    for (const auto& o : graph.nodes[i].outputs)
      if (!o.empty()) producer[o] = i;
  std::vector<std::vector<size_t>> consumers(n);
  std::vector<int> pending(n, 0);
  std::unordered_map<std::string, int> readers;  // remaining readers of each value
  for (size_t i = 0; i < n; ++i) {
    std::unordered_set<size_t> deps;
    std::unordered_set<std::string> read;
    auto add = [&](const std::string& in) {
      if (in.empty() || !read.insert(in).second) return;
      ++readers[in];
      auto p = producer.find(in);
      if (p != producer.end() && deps.insert(p->second).second) consumers[p->second].push_back(i);
    };
    for (const auto& in : graph.nodes[i].inputs) add(in);
    for (const auto& in : graph.nodes[i].implicit_inputs) add(in);
    pending[i] = static_cast<int>(deps.size());
  }
  // Shape computations first: they are cheap and unblock the rest.
  std::vector<bool> shape_like(n, false);
  for (size_t i = 0; i < n; ++i) {
    const Node& node = graph.nodes[i];
    bool from_shapes = !node.inputs.empty();
    for (const auto& in : node.inputs) {
      auto p = producer.find(in);
      from_shapes = from_shapes && !in.empty() && (graph.IsInitializer(in) || (p != producer.end() && shape_like[p->second]));
    }
    shape_like[i] = (node.domain.empty() && (node.op_type == "Shape" || node.op_type == "Size")) || from_shapes;
  }
  // Live bytes a node adds when run now: its outputs, less the inputs it is
  // the last reader of.
  auto delta = [&](size_t i) {
    long long d = 0;
    for (const auto& o : graph.nodes[i].outputs)
      if (!o.empty()) d += static_cast<long long>(EstimatedBytes(graph, o));
    std::unordered_set<std::string> seen;
    for (const auto& in : graph.nodes[i].inputs)
      if (!in.empty() && seen.insert(in).second && readers[in] == 1 && producer.count(in))
        d -= static_cast<long long>(EstimatedBytes(graph, in));
    return d;
  };

  std::vector<size_t> ready;
  for (size_t i = 0; i < n; ++i)
    if (pending[i] == 0) ready.push_back(i);
  order.clear();
  while (!ready.empty()) {
    size_t best = 0;
    for (size_t k = 1; k < ready.size(); ++k) {
      size_t a = ready[k], b = ready[best];
      bool better;
      if (execution_order == 1)
        better = shape_like[a] != shape_like[b] ? shape_like[a] : a < b;
      else {
        long long da = delta(a), db = delta(b);
        better = da != db ? da < db : a < b;
      }
      if (better) best = k;
    }
    size_t i = ready[best];
    ready.erase(ready.begin() + static_cast<long>(best));
    order.push_back(i);
    std::unordered_set<std::string> seen;
    for (const auto& in : graph.nodes[i].inputs)
      if (!in.empty() && seen.insert(in).second) --readers[in];
    for (const auto& in : graph.nodes[i].implicit_inputs)
      if (!in.empty() && seen.insert(in).second) --readers[in];
    for (size_t c : consumers[i])
      if (--pending[c] == 0) ready.push_back(c);
  }
  return order;
}

std::string DescribeDeclared(const Node& node, const Graph& graph) {
  std::string s;
  for (size_t i = 0; i < node.inputs.size(); ++i) {
    if (i) s += ", ";
    const std::string& n = node.inputs[i];
    if (n.empty()) { s += "<omitted>"; continue; }
    s += "'" + n + "'";
    auto init = graph.initializers.find(n);
    if (init != graph.initializers.end()) {
      s += ShapeToString(init->second->dims());
      continue;
    }
    auto it = graph.value_types.find(n);
    if (it != graph.value_types.end() && it->second.has_shape) {
      s += "[";
      for (size_t d = 0; d < it->second.dims.size(); ++d) {
        const Dim& dim = it->second.dims[d];
        s += (d ? "," : "") + (dim.known() ? std::to_string(dim.value) : dim.symbol.empty() ? "?" : dim.symbol);
      }
      s += "]";
    }
  }
  return s;
}

}  // namespace

Status ExecutionPlan::Build(const Graph& graph, const std::vector<ExecutionProvider*>& providers,
                            const PlanOptions& options, std::unique_ptr<ExecutionPlan>* out) {
  auto plan = std::unique_ptr<ExecutionPlan>(new ExecutionPlan());
  auto slot = [&](const std::string& name) {
    auto it = plan->slot_of_.find(name);
    if (it != plan->slot_of_.end()) return it->second;
    int s = static_cast<int>(plan->slot_names_.size());
    plan->slot_names_.push_back(name);
    plan->slot_of_[name] = s;
    return s;
  };
  for (const auto& in : graph.inputs) plan->input_slots_.push_back(slot(in.name));
  for (const auto& kv : graph.initializers) {
    // Filled before each run only where no feed (of an overridable
    // initializer) already took the slot.
    plan->constants_.emplace_back(slot(kv.first), kv.second);
  }

  for (size_t node_index : OrderNodes(graph, options.execution_order)) {
    const Node& node = graph.nodes[node_index];
    std::vector<TypeInfo> input_types;
    for (const auto& in : node.inputs) {
      TypeInfo t;
      auto init = graph.initializers.find(in);
      if (init != graph.initializers.end()) {
        t = TypeInfo::Tensor(init->second->type());
      } else {
        auto it = graph.value_types.find(in);
        if (it != graph.value_types.end()) t = it->second;
      }
      input_types.push_back(std::move(t));
    }
    const KernelDef* def = nullptr;
    ExecutionProvider* chosen = nullptr;
    std::string why;
    for (ExecutionProvider* p : providers) {
      def = p->Kernels().Find(node, input_types, &why);
      if (def) {
        chosen = p;
        break;
      }
    }
    if (!def)
      return MakeError(ErrorCode::kNotImplemented, "Could not find an implementation for ", node.op_type, "(",
                       node.since_version, ") node with name '", node.name, "' (domain '",
                       node.domain.empty() ? "ai.onnx" : node.domain, "', opset ", node.since_version,
                       ", inputs: ", DescribeDeclared(node, graph), "): ", why);
    Step step;
    step.node = &node;
    step.allocator = chosen->GetAllocator();
    if (options.cpu_allocator && chosen->Name() == kCpuProviderName) step.allocator = options.cpu_allocator;
    step.provider = &chosen->Name();
    KernelInfo info(node, graph, input_types);
    info.constants_may_be_overridden = true;
    Status s = def->create(info, &step.kernel);
    if (!s.ok())
      return Status(s.code(), StrCat("Failed to create kernel for ", node.op_type, " node with name '", node.name,
                                     "' (inputs: ", DescribeDeclared(node, graph), "): ", s.message()));
    for (const auto& in : node.inputs) step.inputs.push_back(in.empty() ? -1 : slot(in));
    for (const auto& o : node.outputs) step.outputs.push_back(o.empty() ? -1 : slot(o));
    plan->steps_.push_back(std::move(step));
  }

  // Free each intermediate right after its last reader; graph outputs, inputs
  // and constants are never freed by the plan.
  size_t n = plan->slot_names_.size();
  plan->is_node_output_.assign(n, false);
  for (const Step& st : plan->steps_)
    for (int s : st.outputs)
      if (s >= 0) plan->is_node_output_[s] = true;
  std::vector<int> last_use(n, -1);
  for (size_t i = 0; i < plan->steps_.size(); ++i) {
    const Step& st = plan->steps_[i];
    for (int s : st.inputs)
      if (s >= 0) last_use[s] = static_cast<int>(i);
    for (const auto& implicit : st.node->implicit_inputs) {
      int s = plan->SlotOf(implicit);
      if (s >= 0) last_use[s] = static_cast<int>(i);
    }
    for (int s : st.outputs)
      if (s >= 0 && last_use[s] < static_cast<int>(i)) last_use[s] = static_cast<int>(i);
  }
  std::unordered_set<int> keep;
  for (const auto& o : graph.outputs) keep.insert(plan->SlotOf(o.name));
  for (const auto& in : graph.inputs) keep.insert(plan->SlotOf(in.name));
  for (const auto& c : plan->constants_) keep.insert(c.first);
  if (options.release_intermediates) {
    for (size_t s = 0; s < n; ++s)
      if (last_use[s] >= 0 && !keep.count(static_cast<int>(s)))
        plan->steps_[last_use[s]].release.push_back(static_cast<int>(s));
  }
  if (options.mem_pattern) plan->PrepareMemPattern(graph, keep);
  *out = std::move(plan);
  return Status::OK();
}

void ExecutionPlan::PrepareMemPattern(const Graph& graph, const std::unordered_set<int>& keep) {
  const size_t n = slot_names_.size();
  slot_end_.assign(n, steps_.empty() ? 0 : static_cast<int>(steps_.size()) - 1);
  for (size_t i = 0; i < steps_.size(); ++i)
    for (int s : steps_[i].release) slot_end_[s] = static_cast<int>(i);
  // Slots whose declared or inferred type is not a tensor; unknown ones are
  // left to the run (only Output() tensors ever come from the block).
  auto non_tensor = [&](int s) {
    auto it = graph.value_types.find(slot_names_[s]);
    return it != graph.value_types.end() && it->second.kind != TypeInfo::Kind::kUnknown &&
           it->second.kind != TypeInfo::Kind::kTensor;
  };
  auto eligible = std::make_shared<std::vector<bool>>(n, false);
  for (const Step& st : steps_)
    for (int s : st.outputs)
      if (s >= 0 && !keep.count(s) && !non_tensor(s)) (*eligible)[s] = true;
  // Sequences, maps and optionals share the tensors they are built from, so
  // those tensors live past their last reader. (A run that finds one anyway
  // excludes it then; see MemPatternRun::Releasing.)
  for (const Step& st : steps_) {
    if (std::none_of(st.outputs.begin(), st.outputs.end(), [&](int s) { return s >= 0 && non_tensor(s); })) continue;
    for (int s : st.inputs)
      if (s >= 0) (*eligible)[s] = false;
    for (const auto& implicit : st.node->implicit_inputs) {
      int s = SlotOf(implicit);
      if (s >= 0) (*eligible)[s] = false;
    }
  }
  // One block comes from one allocator: with outputs spread over several,
  // patterns stay off.
  Allocator* alloc = nullptr;
  for (const Step& st : steps_)
    for (int s : st.outputs) {
      if (s < 0 || !(*eligible)[s]) continue;
      if (alloc && alloc != st.allocator) return;
      alloc = st.allocator;
    }
  pattern_allocator_ = alloc;
  pattern_eligible_ = std::move(eligible);
}

std::vector<std::string> ExecutionPlan::NodeOrder() const {
  std::vector<std::string> names;
  for (const Step& st : steps_) names.push_back(st.node->name);
  return names;
}

std::string ExecutionPlan::DescribeInputs(const Step& step, const std::vector<Value>& values) const {
  std::string s;
  for (size_t i = 0; i < step.inputs.size(); ++i) {
    if (i) s += ", ";
    int slot = step.inputs[i];
    if (slot < 0) { s += "<omitted>"; continue; }
    s += "'" + slot_names_[slot] + "'";
    s += DescribeValue(values[slot]);
  }
  return s;
}

namespace {
std::string TypeShapeJson(const std::vector<int>& slots, const std::vector<Value>& values) {
  std::string s = "[";
  bool first = true;
  for (int slot : slots) {
    if (slot < 0 || !values[slot].IsTensor()) continue;
    const Tensor& t = values[slot].tensor();
    s += StrCat(first ? "" : ",", "{\"", ElemTypeName(t.type()), "\":", ShapeToString(t.dims()), "}");
    first = false;
  }
  return s + "]";
}
}  // namespace

void ExecutionPlan::RecordNode(Profiler* profiler, const Step& step, const std::vector<Value>& values,
                               Profiler::Clock::time_point start, Profiler::Clock::time_point end) const {
  ProfileEvent e;
  e.category = "Node";
  e.name = step.node->name + "_kernel_time";
  e.start_us = profiler->MicrosSinceStart(start);
  e.duration_us = std::chrono::duration_cast<std::chrono::microseconds>(end - start).count();
  e.thread_id = static_cast<int>(std::hash<std::thread::id>()(std::this_thread::get_id()) % 100000);
  e.args = {{"op_name", Profiler::JsonString(step.node->op_type)},
            {"provider", Profiler::JsonString(*step.provider)},
            {"node_index", std::to_string(&step - steps_.data())},
            {"input_type_shape", TypeShapeJson(step.inputs, values)},
            {"output_type_shape", TypeShapeJson(step.outputs, values)}};
  profiler->Record(std::move(e));
}

Status ExecutionPlan::Execute(std::vector<Value>& values, const std::vector<std::shared_ptr<Tensor>>* presets,
                              const RunOptions* run_options, ThreadPool* threads, Profiler* profiler) const {
  std::optional<MemPatternRun> pattern;
  if (pattern_allocator_) pattern.emplace(*this, values);
  for (const auto& c : constants_)
    if (!values[c.first].HasValue()) values[c.first] = Value(c.second);
  for (const Step& step : steps_) {
    if (pattern) pattern->BeginStep(static_cast<int>(&step - steps_.data()));
    if (run_options && run_options->terminate.load())
      return MakeError(ErrorCode::kRuntimeException, "Exiting due to terminate flag being set to true.");
    for (int s : step.inputs) {
      if (s >= 0 && !values[s].HasValue())
        return MakeError(ErrorCode::kRuntimeException, "while running ", step.node->Describe(), ": input '",
                         slot_names_[s], "' has no value");
    }
    RunContext ctx(values, step.inputs, step.outputs, presets, slot_names_, step.allocator,
                   pattern ? &*pattern : nullptr, threads, run_options);
    auto start = profiler ? Profiler::Clock::now() : Profiler::Clock::time_point();
    Status s;
    try {
      s = step.kernel->Compute(ctx);
    } catch (const OnyxException& e) {
      s = e.status();
    } catch (const std::bad_alloc&) {
      s = MakeError(ErrorCode::kFail, "out of memory");
    } catch (const std::exception& e) {
      s = MakeError(ErrorCode::kRuntimeException, e.what());
    }
    if (!s.ok()) {
      const Node& n = *step.node;
      return Status(s.code(), StrCat("Non-zero status code returned while running ", n.op_type, " node. Name:'",
                                     n.name, "' Status Message: ", s.message(),
                                     " (input shapes: ", DescribeInputs(step, values), ")"));
    }
    for (size_t i = 0; i < step.outputs.size(); ++i) {
      int o = step.outputs[i];
      if (o >= 0 && !values[o].HasValue())
        return MakeError(ErrorCode::kEngineError, step.node->Describe(), " did not produce output ", i, " '",
                         slot_names_[o], "'");
    }
    if (profiler) RecordNode(profiler, step, values, start, Profiler::Clock::now());
    for (int r : step.release) {
      if (pattern) pattern->Releasing(r, values[r]);
      values[r] = Value();
    }
  }
  if (pattern) pattern->Finish();
  return Status::OK();
}

}  // namespace onyx
