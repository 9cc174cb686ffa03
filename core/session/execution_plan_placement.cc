#include "core/session/execution_plan_placement.h"

namespace onyx {
namespace {

// Copies its input into its output's memory (the step's allocator, or a
// caller-bound buffer) through a device provider's data transfer.
class CopyKernel final : public OpKernel {
 public:
  CopyKernel(const ExecutionProvider* copier, DeviceType target, bool pass_through)
      : copier_(copier), target_(target), pass_through_(pass_through) {}
  Status Compute(KernelContext& ctx) const override {
    const Value* in = ctx.InputValue(0);
    if (!in) return MakeError(ErrorCode::kRuntimeException, "copy has no input value");
    if (!in->IsTensor()) {
      // Sequences and maps never live on a device: pass them on.
      if (target_ == DeviceType::kCpu) return ctx.SetOutputValue(0, *in);
      return MakeError(ErrorCode::kNotImplemented, "a ", copier_->Name(), " kernel cannot take a non-tensor value");
    }
    const Tensor& x = in->tensor();
    if (pass_through_ && x.location().device == target_) {
      // A caller-bound output refuses a value: copy into it below instead.
      Status s = ctx.SetOutputValue(0, *in);
      if (s.ok()) return s;
    }
    if (x.type() == ElemType::kString)
      return MakeError(ErrorCode::kNotImplemented, copier_->Name(), " cannot hold string tensors");
    Tensor* y = ctx.Output(0, x.dims(), x.type());
    // The producer wrote a caller-bound device buffer directly (PresetAlias).
    if (!y || y->raw() == x.raw()) return Status::OK();
    return copier_->CopyTensor(x, y);
  }

 private:
  const ExecutionProvider* copier_;
  DeviceType target_;
  bool pass_through_;
};

}  // namespace

DevicePlacement::DevicePlacement(ExecutionPlan* plan, const Graph& graph,
                                 const std::vector<ExecutionProvider*>& providers, Allocator* host_alloc,
                                 std::function<int(const std::string&)> slot)
    : plan_(plan), graph_(graph), host_alloc_(host_alloc), slot_(std::move(slot)) {
  for (ExecutionProvider* p : providers)
    if (p->Device() != DeviceType::kCpu && !first_device_) first_device_ = p;
  for (const auto& in : graph.inputs) feeds_.insert(in.name);
}

bool DevicePlacement::DeviceMayRun(const Node& node, const std::vector<TypeInfo>& input_types) const {
  if (!node.implicit_inputs.empty()) return false;
  bool all_host_integers = true;
  int inputs = 0;
  for (size_t i = 0; i < node.inputs.size(); ++i) {
    if (node.inputs[i].empty()) continue;
    const TypeInfo& t = input_types[i];
    if (t.kind != TypeInfo::Kind::kTensor && t.kind != TypeInfo::Kind::kUnknown) return false;
    if (t.elem == ElemType::kString) return false;
    const bool integer = t.kind == TypeInfo::Kind::kTensor &&
                         (t.elem == ElemType::kInt64 || t.elem == ElemType::kInt32);
    const bool host = produced_on_.count(node.inputs[i]) == 0;
    all_host_integers = all_host_integers && integer && host;
    ++inputs;
  }
  return inputs == 0 || !all_host_integers;
}

void DevicePlacement::AddCopy(int from, int to, ExecutionProvider* copier, ExecutionProvider* to_device,
                              bool pass_through) {
  plan_->copy_nodes_.emplace_back();
  Node& n = plan_->copy_nodes_.back();
  n.op_type = to_device ? "MemcpyFromHost" : "MemcpyToHost";
  n.name = n.op_type + "_" + plan_->slot_names_[from];
  n.inputs = {plan_->slot_names_[from]};
  n.outputs = {plan_->slot_names_[to]};
  ExecutionPlan::Step step;
  step.node = &n;
  step.kernel = std::make_unique<CopyKernel>(copier, to_device ? to_device->Device() : DeviceType::kCpu, pass_through);
  // A device-to-host copy writes into the copier's host memory (CUDA: pinned)
  // where it has one.
  Allocator* host = copier->GetHostAllocator();
  step.allocator = to_device ? to_device->GetAllocator() : host ? host : host_alloc_;
  step.provider = &copier->Name();
  step.inputs = {from};
  step.outputs = {to};
  plan_->steps_.push_back(std::move(step));
}

void DevicePlacement::ToHost(const std::string& name) {
  auto dev = produced_on_.find(name);
  if (dev == produced_on_.end() || on_host_.count(name)) return;
  AddCopy(slot_(name + "@" + dev->second->Name()), slot_(name), dev->second, nullptr, false);
  on_host_.insert(name);
}

Status DevicePlacement::Input(const std::string& name, ExecutionProvider* p, const KernelDef& def, int i, int* out) {
  const bool on_device = p->Device() != DeviceType::kCpu && !p->InputOnHost(def, i);
  if (!on_device) {
    ToHost(name);
    if (!IsFeed(name)) {
      *out = slot_(name);
      return Status::OK();
    }
    // A feed may be in device memory: a copy step passes host feeds through.
    auto key = std::make_pair(name, static_cast<ExecutionProvider*>(nullptr));
    auto it = copies_.find(key);
    if (it == copies_.end()) {
      int to = slot_(name + "@host");
      AddCopy(slot_(name), to, first_device_, nullptr, true);
      it = copies_.emplace(key, to).first;
    }
    *out = it->second;
    return Status::OK();
  }
  const std::string dev_name = name + "@" + p->Name();
  auto made = produced_on_.find(name);
  if (made != produced_on_.end() && made->second == p) {
    *out = slot_(dev_name);
    return Status::OK();
  }
  auto key = std::make_pair(name, p);
  auto it = copies_.find(key);
  if (it != copies_.end()) {
    *out = it->second;
    return Status::OK();
  }
  const int to = slot_(dev_name);
  if (IsConstant(name)) {
    // Uploaded once, now: every run reads the device copy.
    const Tensor& host = *graph_.initializers.at(name);
    if (host.type() == ElemType::kString)
      return MakeError(ErrorCode::kNotImplemented, p->Name(), " cannot hold string constant '", name, "'");
    auto dev = std::make_shared<Tensor>(host.type(), host.dims(), p->GetAllocator());
    Status s = p->CopyTensor(host, dev.get());
    if (!s.ok()) return s.WithContext("copying constant '" + name + "' to " + p->Name() + ": ");
    plan_->constants_.emplace_back(to, std::move(dev));
  } else {
    ToHost(name);  // a value of another device goes through the host
    AddCopy(slot_(name), to, p, p, IsFeed(name));
  }
  copies_.emplace(key, to);
  *out = to;
  return Status::OK();
}

int DevicePlacement::Output(const std::string& name, ExecutionProvider* p, const KernelDef& def, int i,
                            Allocator** alloc) {
  if (p->Device() == DeviceType::kCpu) {
    on_host_.insert(name);
    return slot_(name);
  }
  if (p->OutputOnHost(def, i)) {
    *alloc = host_alloc_;
    on_host_.insert(name);
    return slot_(name);
  }
  produced_on_[name] = p;
  return slot_(name + "@" + p->Name());
}

void DevicePlacement::Finish() {
  for (const auto& o : graph_.outputs) {
    auto dev = produced_on_.find(o.name);
    const bool copied_here = dev != produced_on_.end() && !on_host_.count(o.name);
    ToHost(o.name);
    if (dev == produced_on_.end()) continue;
    const int from = slot_(o.name + "@" + dev->second->Name()), to = slot_(o.name);
    if (plan_->device_twin_.size() <= static_cast<size_t>(to)) plan_->device_twin_.resize(to + 1, -1);
    plan_->device_twin_[to] = from;
    if (!copied_here) {
      // A host node reads it too, so its copy runs anyway: the device
      // version stays to the end of the run for a caller wanting it there.
      device_kept_.push_back(from);
      continue;
    }
    plan_->steps_.back().output_copy = true;
    if (plan_->preset_alias_.size() <= static_cast<size_t>(from)) plan_->preset_alias_.resize(from + 1, -1);
    plan_->preset_alias_[from] = to;
  }
}

}  // namespace onyx
