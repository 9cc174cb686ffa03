#include "core/session/execution_plan_run_context.h"

#include "core/session/execution_plan_mem_pattern.h"

namespace onyx {

Tensor* RunContext::Output(int i, const Dims& dims, ElemType type) {
  if (i < 0 || i >= static_cast<int>(outputs_.size()) || outputs_[i] < 0) return nullptr;
  const int slot = outputs_[i];
  if (presets_ && (*presets_)[slot]) {
    // A caller-bound buffer: write there, or refuse rather than reallocate
    // behind the caller's back.
    const std::shared_ptr<Tensor>& bound = (*presets_)[slot];
    if (bound->type() != type || bound->dims() != dims)
      throw OnyxException(MakeError(ErrorCode::kInvalidArgument, "output '", plan_.slot_name(slot), "' is bound to a ",
                                    ElemTypeName(bound->type()), ShapeToString(bound->dims()),
                                    " buffer but the model produces ", ElemTypeName(type), ShapeToString(dims)));
    values_[slot] = Value(bound);
    return bound.get();
  }
  if (presets_) {
    // A graph output made on a device and bound by the caller to a buffer in
    // that device's memory: written there, so the copy step after it has
    // nothing to do.
    const int alias = plan_.PresetAlias(slot);
    const std::shared_ptr<Tensor>* bound = alias >= 0 ? &(*presets_)[alias] : nullptr;
    Allocator* alloc = output_allocs_ ? (*output_allocs_)[i] : alloc_;
    if (bound && *bound && (*bound)->type() == type && (*bound)->dims() == dims &&
        (*bound)->location().device == alloc->Info().device &&
        (*bound)->location().device_id == alloc->Info().device_id) {
      values_[slot] = Value(*bound);
      return bound->get();
    }
  }
  std::shared_ptr<Tensor> t;
  if (pattern_) t = pattern_->Allocate(slot, type, dims);
  if (!t) t = std::make_shared<Tensor>(type, dims, output_allocs_ ? (*output_allocs_)[i] : alloc_);
  Tensor* raw = t.get();
  values_[slot] = Value(std::move(t));
  return raw;
}

bool RunContext::Bound(int slot) const {
  return presets_ && ((*presets_)[slot] || (plan_.PresetAlias(slot) >= 0 && (*presets_)[plan_.PresetAlias(slot)]));
}

const Tensor* RunContext::OutputView(int out, int in, const Dims& dims) {
  if (out < 0 || out >= static_cast<int>(views_.size()) || views_[out] != in || outputs_[out] < 0) return nullptr;
  const int slot = outputs_[out];
  if (Bound(slot)) return nullptr;
  const Tensor* x = Input(in);
  if (x == nullptr || ShapeSize(dims) != x->size() || (x->raw() == nullptr && x->size() > 0)) return nullptr;
  auto view = std::make_shared<Tensor>(x->View(dims));
  const Tensor* raw = view.get();
  values_[slot] = Value(std::move(view));
  return raw;
}

Tensor* RunContext::OutputInPlace(int out, int in, const Dims& dims, ElemType type) {
  if (out < 0 || out >= static_cast<int>(in_place_.size()) || in_place_[out] != in || outputs_[out] < 0 ||
      in < 0 || in >= static_cast<int>(inputs_.size()) || inputs_[in] < 0)
    return nullptr;
  const int slot = outputs_[out];
  if (Bound(slot)) return nullptr;
  const Value& v = values_[inputs_[in]];
  // Only the run's value table may hold the input (not a sequence, an
  // optional or the caller).
  if (!v.IsTensor() || v.tensor_ptr().use_count() != 1) return nullptr;
  const Tensor& x = v.tensor();
  const Allocator* alloc = output_allocs_ ? (*output_allocs_)[out] : alloc_;
  if (x.type() != type || x.dims() != dims || (x.raw() == nullptr && x.size() > 0) || alloc == nullptr ||
      x.location().device != alloc->Info().device || x.location().device_id != alloc->Info().device_id)
    return nullptr;
  auto t = std::make_shared<Tensor>(x.View(dims));
  Tensor* raw = t.get();
  values_[slot] = Value(std::move(t));
  return raw;
}

Status RunContext::SetOutputValue(int i, Value v) {
  ONYX_CHECK_ARG(i >= 0 && i < static_cast<int>(outputs_.size()), "output index ", i, " out of range");
  if (outputs_[i] < 0) return Status::OK();
  ONYX_CHECK_ARG(!(presets_ && (*presets_)[outputs_[i]]), "output '", plan_.slot_name(outputs_[i]),
                 "' is bound to a tensor buffer but the model produces a non-tensor value");
  values_[outputs_[i]] = std::move(v);
  return Status::OK();
}

}  // namespace onyx
