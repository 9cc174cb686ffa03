#include "providers/cpu/common/half_float.h"

#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace onyx {

namespace {

Tensor Widen(const Tensor& t) {
  return t.type() == ElemType::kFloat16 ? WidenToFloat<Float16>(t) : WidenToFloat<BFloat16>(t);
}

class FloatView final : public KernelContext {
 public:
  FloatView(KernelContext& inner, std::initializer_list<std::pair<int, int>> typed_like)
      : inner_(inner), widened_(static_cast<size_t>(inner.InputCount())), outputs_(inner.OutputCount()) {
    for (const auto& [o, i] : typed_like) {
      const Tensor* t = inner.Input(i);
      if (o >= 0 && o < inner.OutputCount() && t != nullptr && IsHalfType(t->type()))
        outputs_[static_cast<size_t>(o)].half = t->type();
    }
  }

  int InputCount() const override { return inner_.InputCount(); }
  const Tensor* Input(int i) const override {
    const Tensor* t = inner_.Input(i);
    if (t == nullptr || !IsHalfType(t->type())) return t;
    auto& w = widened_[static_cast<size_t>(i)];
    if (!w) w = std::make_unique<Tensor>(Widen(*t));
    return w.get();
  }
  int OutputCount() const override { return inner_.OutputCount(); }
  Tensor* Output(int i, const Dims& dims, ElemType type) override {
    const ElemType half = i >= 0 && i < OutputCount() ? outputs_[static_cast<size_t>(i)].half : ElemType::kUndefined;
    const bool narrow = half != ElemType::kUndefined && type == ElemType::kFloat;
    Tensor* real = inner_.Output(i, dims, narrow ? half : type);
    if (real == nullptr || !narrow) return real;
    Pending& p = outputs_[static_cast<size_t>(i)];
    p.real = real;
    p.wide = std::make_unique<Tensor>(ElemType::kFloat, dims);
    return p.wide.get();
  }
  ThreadPool* threads() const override { return inner_.threads(); }
  bool terminate_requested() const override { return inner_.terminate_requested(); }
  const Value* OuterValue(const std::string& name) const override { return inner_.OuterValue(name); }
  const Value* InputValue(int i) const override { return inner_.InputValue(i); }
  Status SetOutputValue(int i, Value v) override { return inner_.SetOutputValue(i, std::move(v)); }

  // Rounds every float result into its 16-bit output.
  void Narrow() {
    for (Pending& p : outputs_) {
      if (!p.wide) continue;
      if (p.real->type() == ElemType::kFloat16) NarrowFromFloat<Float16>(*p.wide, p.real);
      else NarrowFromFloat<BFloat16>(*p.wide, p.real);
    }
  }

 private:
  struct Pending {
    ElemType half = ElemType::kUndefined;  // the 16-bit type this output has, if any
    Tensor* real = nullptr;
    std::unique_ptr<Tensor> wide;
  };
  KernelContext& inner_;
  mutable std::vector<std::unique_ptr<Tensor>> widened_;
  std::vector<Pending> outputs_;
};

}  // namespace

Status ComputeThroughFloat(const OpKernel& kernel, KernelContext& ctx,
                           std::initializer_list<std::pair<int, int>> typed_like) {
  FloatView view(ctx, typed_like);
  ONYX_RETURN_IF_ERROR(kernel.Compute(view));
  view.Narrow();
  return Status::OK();
}

}  // namespace onyx
