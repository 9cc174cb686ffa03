// ExecutionPlan::Execute: runs the steps in order on one run's value array,
// turns kernel failures into statuses naming the node, and records profile
// events.
#include <optional>
#include <thread>

#include "core/session/execution_plan.h"
#include "core/session/execution_plan_mem_pattern.h"
#include "core/session/execution_plan_run_context.h"

namespace onyx {

namespace {

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

Status ExecutionPlan::RunStep(const Step& step, std::vector<Value>& values,
                              const std::vector<std::shared_ptr<Tensor>>* presets, const RunOptions* run_options,
                              ThreadPool* threads, Profiler* profiler, const KernelContext* outer,
                              MemPatternRun* pattern, const std::vector<char>* on_device) const {
  if (step.output_copy && on_device && (*on_device)[step.outputs[0]]) {
    // The caller wants this graph output where it was made: no copy, the
    // host slot hands the device value over (the device slot is released
    // after this step as planned).
    values[step.outputs[0]] = values[step.inputs[0]];
    return Status::OK();
  }
  if ((run_options && run_options->terminate.load()) || (outer && outer->terminate_requested()))
    return MakeError(ErrorCode::kRuntimeException, "Exiting due to terminate flag being set to true.");
  for (int s : step.inputs) {
    if (s >= 0 && !values[s].HasValue())
      return MakeError(ErrorCode::kRuntimeException, "while running ", step.node->Describe(), ": input '",
                       slot_names_[s], "' has no value");
  }
  RunContext ctx(values, step.inputs, step.outputs, step.views, step.in_place, presets, step.allocator,
                 step.output_allocators.empty() ? nullptr : &step.output_allocators, pattern, threads, run_options,
                 *this, outer);
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
    return Status(s.code(), StrCat("Non-zero status code returned while running ", n.op_type, " node. Name:'", n.name,
                                   "' Status Message: ", s.message(), " (input shapes: ", DescribeInputs(step, values),
                                   ")"));
  }
  for (size_t i = 0; i < step.outputs.size(); ++i) {
    int o = step.outputs[i];
    if (o >= 0 && !values[o].HasValue())
      return MakeError(ErrorCode::kEngineError, step.node->Describe(), " did not produce output ", i, " '",
                       slot_names_[o], "'");
  }
  if (profiler) RecordNode(profiler, step, values, start, Profiler::Clock::now());
  return Status::OK();
}

Status ExecutionPlan::Execute(std::vector<Value>& values, const std::vector<std::shared_ptr<Tensor>>* presets,
                              const RunOptions* run_options, ThreadPool* threads, Profiler* profiler,
                              const KernelContext* outer, ThreadPool* inter_op,
                              const std::vector<char>* on_device) const {
  if (parallel_ && inter_op != nullptr) {
    for (const auto& c : constants_)
      if (!values[c.first].HasValue()) values[c.first] = Value(c.second);
    return ExecuteParallel(values, presets, run_options, threads, profiler, outer, inter_op);
  }
  std::optional<MemPatternRun> pattern;
  if (pattern_allocator_) pattern.emplace(*this, values);
  for (ExecutionProvider* p : device_providers_) ONYX_RETURN_IF_ERROR(p->OnRunStart());
  for (const auto& c : constants_)
    if (!values[c.first].HasValue()) values[c.first] = Value(c.second);
  for (const Step& step : steps_) {
    if (pattern) pattern->BeginStep(static_cast<int>(&step - steps_.data()));
    ONYX_RETURN_IF_ERROR(
        RunStep(step, values, presets, run_options, threads, profiler, outer, pattern ? &*pattern : nullptr,
                on_device));
    for (int r : step.release) {
      if (pattern) pattern->Releasing(r, values[r]);
      values[r] = Value();
    }
  }
  if (pattern) pattern->Finish();
  for (ExecutionProvider* p : device_providers_) ONYX_RETURN_IF_ERROR(p->Synchronize());
  return Status::OK();
}

}  // namespace onyx
