#include "core/session/execution_plan.h"

#include <thread>
#include <unordered_set>

namespace onyx {
namespace {

class RunContext final : public KernelContext {
 public:
  RunContext(std::vector<std::shared_ptr<Tensor>>& values, const std::vector<int>& inputs,
             const std::vector<int>& outputs, Allocator* alloc, ThreadPool* threads, const RunOptions* ro)
      : values_(values), inputs_(inputs), outputs_(outputs), alloc_(alloc), threads_(threads), run_options_(ro) {}

  int InputCount() const override { return static_cast<int>(inputs_.size()); }
  const Tensor* Input(int i) const override {
    if (i < 0 || i >= static_cast<int>(inputs_.size()) || inputs_[i] < 0) return nullptr;
    return values_[inputs_[i]].get();
  }
  int OutputCount() const override { return static_cast<int>(outputs_.size()); }
  Tensor* Output(int i, const Dims& dims, ElemType type) override {
    if (i < 0 || i >= static_cast<int>(outputs_.size()) || outputs_[i] < 0) return nullptr;
    auto t = std::make_shared<Tensor>(type, dims, alloc_);
    Tensor* raw = t.get();
    values_[outputs_[i]] = std::move(t);
    return raw;
  }
  ThreadPool* threads() const override { return threads_; }
  bool terminate_requested() const override { return run_options_ && run_options_->terminate.load(); }

 private:
  std::vector<std::shared_ptr<Tensor>>& values_;
  const std::vector<int>& inputs_;
  const std::vector<int>& outputs_;
  Allocator* alloc_;
  ThreadPool* threads_;
  const RunOptions* run_options_;
};

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
                            std::unique_ptr<ExecutionPlan>* out) {
  auto plan = std::unique_ptr<ExecutionPlan>(new ExecutionPlan());
  auto slot = [&](const std::string& name) {
    auto it = plan->slot_of_.find(name);
    if (it != plan->slot_of_.end()) return it->second;
    int s = static_cast<int>(plan->slot_names_.size());
    plan->slot_names_.push_back(name);
    plan->slot_of_[name] = s;
    return s;
  };
  for (const auto& in : graph.inputs) slot(in.name);
  for (const auto& kv : graph.initializers) {
    // Filled before each run only where no feed (of an overridable
    // initializer) already took the slot.
    plan->constants_.emplace_back(slot(kv.first), kv.second);
  }

  for (const Node& node : graph.nodes) {
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
  for (size_t s = 0; s < n; ++s)
    if (last_use[s] >= 0 && !keep.count(static_cast<int>(s))) plan->steps_[last_use[s]].release.push_back(static_cast<int>(s));
  *out = std::move(plan);
  return Status::OK();
}

std::string ExecutionPlan::DescribeInputs(const Step& step, const std::vector<std::shared_ptr<Tensor>>& values) const {
  std::string s;
  for (size_t i = 0; i < step.inputs.size(); ++i) {
    if (i) s += ", ";
    int slot = step.inputs[i];
    if (slot < 0) { s += "<omitted>"; continue; }
    s += "'" + slot_names_[slot] + "'";
    const auto& v = values[slot];
    s += v ? StrCat(ElemTypeName(v->type()), ShapeToString(v->dims())) : "<missing>";
  }
  return s;
}

namespace {
std::string TypeShapeJson(const std::vector<int>& slots, const std::vector<std::shared_ptr<Tensor>>& values) {
  std::string s = "[";
  bool first = true;
  for (int slot : slots) {
    if (slot < 0 || !values[slot]) continue;
    const Tensor& t = *values[slot];
    s += StrCat(first ? "" : ",", "{\"", ElemTypeName(t.type()), "\":", ShapeToString(t.dims()), "}");
    first = false;
  }
  return s + "]";
}
}  // namespace

void ExecutionPlan::RecordNode(Profiler* profiler, const Step& step, const std::vector<std::shared_ptr<Tensor>>& values,
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

Status ExecutionPlan::Execute(std::vector<std::shared_ptr<Tensor>>& values, const RunOptions* run_options,
                              ThreadPool* threads, Profiler* profiler) const {
  for (const auto& c : constants_)
    if (!values[c.first]) values[c.first] = c.second;
  for (const Step& step : steps_) {
    if (run_options && run_options->terminate.load())
      return MakeError(ErrorCode::kRuntimeException, "Exiting due to terminate flag being set to true.");
    for (int s : step.inputs) {
      if (s >= 0 && !values[s])
        return MakeError(ErrorCode::kRuntimeException, "while running ", step.node->Describe(), ": input '",
                         slot_names_[s], "' has no value");
    }
    RunContext ctx(values, step.inputs, step.outputs, step.allocator, threads, run_options);
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
      if (o >= 0 && !values[o])
        return MakeError(ErrorCode::kEngineError, step.node->Describe(), " did not produce output ", i, " '",
                         slot_names_[o], "'");
    }
    if (profiler) RecordNode(profiler, step, values, start, Profiler::Clock::now());
    for (int r : step.release) values[r].reset();
  }
  return Status::OK();
}

}  // namespace onyx
