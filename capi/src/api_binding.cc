// IO binding: inputs and output destinations bound once, for repeated runs.
#include <algorithm>

#include "capi/src/api_table.h"
#include "capi/src/handles.h"

namespace onyx {
namespace capi {
namespace {

bool Declares(const std::vector<ValueInfo>& list, const std::string& name) {
  return std::any_of(list.begin(), list.end(), [&](const ValueInfo& v) { return v.name == name; });
}

std::string Names(const std::vector<ValueInfo>& a, const std::vector<ValueInfo>& b = {}) {
  std::string s;
  for (const auto* list : {&a, &b})
    for (const auto& v : *list) s += (s.empty() ? "" : ", ") + v.name;
  return s.empty() ? "none" : s;
}

// Replaces the entry for `name` or appends one, keeping first-bound order.
template <typename T>
void Upsert(std::vector<std::string>& names, std::vector<T>& values, const std::string& name, T value) {
  auto it = std::find(names.begin(), names.end(), name);
  if (it != names.end()) {
    values[static_cast<size_t>(it - names.begin())] = std::move(value);
    return;
  }
  names.push_back(name);
  values.push_back(std::move(value));
}

OnyxStatus* SessionCreateIoBinding(OnyxSession* session, OnyxIoBinding** out) {
  API_BEGIN
  API_CHECK_NOT_NULL(session);
  API_CHECK_NOT_NULL(out);
  auto b = std::make_unique<OnyxIoBinding>();
  b->session = session->session;
  *out = b.release();
  API_END
}

void IoBindingRelease(OnyxIoBinding* binding) { delete binding; }

OnyxStatus* IoBindingBindInput(OnyxIoBinding* binding, const char* name, const OnyxValue* value) {
  API_BEGIN
  API_CHECK_NOT_NULL(binding);
  API_CHECK_NOT_NULL(name);
  API_CHECK_NOT_NULL(value);
  const Session& s = *binding->session;
  if (!Declares(s.inputs(), name) && !Declares(s.overridable_initializers(), name))
    return NewStatus(ONYX_INVALID_ARGUMENT, StrCat("bind_input: the model has no input named '", name,
                                                   "' (inputs: ", Names(s.inputs(), s.overridable_initializers()), ")"));
  if (!value->value.HasValue())
    return NewStatus(ONYX_INVALID_ARGUMENT, StrCat("bind_input: the value for '", name, "' holds nothing"));
  Upsert(binding->input_names, binding->inputs, name, value->value);
  API_END
}

Status CheckOutputName(const OnyxIoBinding* binding, const char* name) {
  const Session& s = *binding->session;
  if (!Declares(s.outputs(), name))
    return MakeError(ErrorCode::kInvalidArgument, "bind_output: the model has no output named '", name,
                     "' (outputs: ", Names(s.outputs()), ")");
  return Status::OK();
}

// Binds output `name` to `buffer` (null: allocated by each run, in memory
// `device`), replacing an earlier binding of the name.
void BindOutputEntry(OnyxIoBinding* binding, const std::string& name, std::shared_ptr<Tensor> buffer,
                     const MemoryInfo& device) {
  Upsert(binding->output_names, binding->output_buffers, name, std::move(buffer));
  binding->output_devices.resize(binding->output_buffers.size());
  const auto it = std::find(binding->output_names.begin(), binding->output_names.end(), name);
  binding->output_devices[static_cast<size_t>(it - binding->output_names.begin())] = device;
}

OnyxStatus* IoBindingBindOutput(OnyxIoBinding* binding, const char* name, const OnyxValue* value) {
  API_BEGIN
  API_CHECK_NOT_NULL(binding);
  API_CHECK_NOT_NULL(name);
  API_CHECK_NOT_NULL(value);
  API_RETURN_IF_ERROR(CheckOutputName(binding, name));
  if (!value->value.IsTensor())
    return NewStatus(ONYX_INVALID_ARGUMENT, StrCat("bind_output: the value for '", name, "' is not a tensor"));
  const std::shared_ptr<Tensor>& t = value->value.tensor_ptr();
  const auto& providers = binding->session->provider_names();
  const bool session_has_cuda =
      std::find(providers.begin(), providers.end(), "CUDAExecutionProvider") != providers.end();
  if (t->location().device != DeviceType::kCpu && !(t->location().device == DeviceType::kCuda && session_has_cuda)) {
    std::string runs_on;
    for (const auto& p : providers) runs_on += (runs_on.empty() ? "" : ", ") + p;
    return NewStatus(ONYX_INVALID_ARGUMENT, StrCat("bind_output: '", name, "' is bound to ", t->location().name,
                                                   " memory, which this session cannot write (it runs on: ",
                                                   runs_on, ")"));
  }
  BindOutputEntry(binding, name, t, MemoryInfo());
  API_END
}

OnyxStatus* IoBindingBindOutputToDevice(OnyxIoBinding* binding, const char* name, const OnyxMemoryInfo* info) {
  API_BEGIN
  API_CHECK_NOT_NULL(binding);
  API_CHECK_NOT_NULL(name);
  API_CHECK_NOT_NULL(info);
  API_RETURN_IF_ERROR(CheckOutputName(binding, name));
  // Device memory (mem type default) of a device this session runs on: the
  // run leaves the output there, allocated at the shape it computes. The CPU
  // mem types of a device's info ("Cuda" with ONYX_MEM_CPU_OUTPUT) are host
  // memory.
  MemoryInfo where = info->info.mem_type == ONYX_MEM_DEFAULT ? info->info : MemoryInfo();
  Status st = binding->session->CheckOutputDevice(name, where);
  if (!st.ok()) return NewStatus(ONYX_INVALID_ARGUMENT, "bind_output: " + st.message());
  BindOutputEntry(binding, name, std::shared_ptr<Tensor>(), where);
  API_END
}

OnyxStatus* IoBindingGetBoundOutputCount(const OnyxIoBinding* binding, size_t* out) {
  API_BEGIN
  API_CHECK_NOT_NULL(binding);
  API_CHECK_NOT_NULL(out);
  *out = binding->has_run ? binding->result_names.size() : binding->output_names.size();
  API_END
}

OnyxStatus* IoBindingGetBoundOutputName(const OnyxIoBinding* binding, size_t index, const char** out) {
  API_BEGIN
  API_CHECK_NOT_NULL(binding);
  API_CHECK_NOT_NULL(out);
  const auto& names = binding->has_run ? binding->result_names : binding->output_names;
  if (index >= names.size())
    return NewStatus(ONYX_INVALID_ARGUMENT,
                     StrCat("bound output index ", index, " is out of range (", names.size(), " bound)"));
  *out = names[index].c_str();
  API_END
}

OnyxStatus* IoBindingGetBoundOutputValue(const OnyxIoBinding* binding, size_t index, OnyxValue** out) {
  API_BEGIN
  API_CHECK_NOT_NULL(binding);
  API_CHECK_NOT_NULL(out);
  if (!binding->has_run) {
    // Before a run: the bound tensor, or an empty value where the run will allocate.
    if (index >= binding->output_buffers.size())
      return NewStatus(ONYX_INVALID_ARGUMENT, StrCat("bound output index ", index, " is out of range (",
                                                     binding->output_buffers.size(), " bound)"));
    const auto& buffer = binding->output_buffers[index];
    *out = new OnyxValue{buffer ? Value(buffer) : Value()};
    return nullptr;
  }
  if (index >= binding->results.size())
    return NewStatus(ONYX_INVALID_ARGUMENT,
                     StrCat("bound output index ", index, " is out of range (", binding->results.size(), " outputs)"));
  *out = new OnyxValue{binding->results[index]};
  API_END
}

void IoBindingClearBoundInputs(OnyxIoBinding* binding) {
  if (!binding) return;
  binding->input_names.clear();
  binding->inputs.clear();
}

void IoBindingClearBoundOutputs(OnyxIoBinding* binding) {
  if (!binding) return;
  binding->output_names.clear();
  binding->output_buffers.clear();
  binding->output_devices.clear();
  binding->result_names.clear();
  binding->results.clear();
  binding->has_run = false;
}

OnyxStatus* IoBindingSynchronize(OnyxIoBinding* binding) {
  API_BEGIN
  API_CHECK_NOT_NULL(binding);
  // Runs end by synchronizing their device streams, and device values are
  // made (ValueCreateTensorOnDevice) synchronously: nothing is in flight.
  API_END
}

OnyxStatus* SessionRunWithBinding(OnyxSession* session, const OnyxRunOptions* run_options, OnyxIoBinding* binding) {
  API_BEGIN
  API_CHECK_NOT_NULL(session);
  API_CHECK_NOT_NULL(binding);
  if (binding->session != session->session)
    return NewStatus(ONYX_INVALID_ARGUMENT, "SessionRunWithBinding: the binding was created for another session");
  if (binding->output_names.empty())
    return NewStatus(ONYX_INVALID_ARGUMENT,
                     "At least one output should be requested: bind an output before running the binding");
  std::vector<const Value*> feeds;
  for (const auto& v : binding->inputs) feeds.push_back(&v);
  std::vector<std::string> names = binding->output_names;
  std::vector<Value> results;
  API_RETURN_IF_ERROR(session->session->Run(run_options ? &run_options->options : nullptr, binding->input_names,
                                            feeds, names, &results, &binding->output_buffers,
                                            &binding->output_devices));
  binding->result_names = std::move(names);
  binding->results = std::move(results);
  binding->has_run = true;
  API_END
}

}  // namespace

void FillBindingApi(OnyxApi& a) {
  a.SessionCreateIoBinding = SessionCreateIoBinding;
  a.IoBindingRelease = IoBindingRelease;
  a.IoBindingBindInput = IoBindingBindInput;
  a.IoBindingBindOutput = IoBindingBindOutput;
  a.IoBindingBindOutputToDevice = IoBindingBindOutputToDevice;
  a.IoBindingGetBoundOutputCount = IoBindingGetBoundOutputCount;
  a.IoBindingGetBoundOutputName = IoBindingGetBoundOutputName;
  a.IoBindingGetBoundOutputValue = IoBindingGetBoundOutputValue;
  a.IoBindingClearBoundInputs = IoBindingClearBoundInputs;
  a.IoBindingClearBoundOutputs = IoBindingClearBoundOutputs;
  a.IoBindingSynchronizeInputs = IoBindingSynchronize;
  a.IoBindingSynchronizeOutputs = IoBindingSynchronize;
  a.SessionRunWithBinding = SessionRunWithBinding;
}

}  // namespace capi
}  // namespace onyx
