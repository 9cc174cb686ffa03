#include <climits>
#include <cstring>
#include <memory>
#include <string>

#include "providers/cpu/common/dispatch.h"
#include "providers/kernel.h"

namespace onyx {

namespace {

// Copies `src` into a freshly allocated output (kernels never alias outputs).
Status CopyInto(const Tensor& src, Tensor* dst) {
  if (src.type() == ElemType::kString) {
    const auto* s = src.data<std::string>();
    auto* d = dst->data<std::string>();
    for (int64_t i = 0; i < src.size(); ++i) d[i] = s[i];
  } else if (src.bytes() > 0) {
    std::memcpy(dst->raw(), src.raw(), src.bytes());
  }
  return Status::OK();
}

class ConstantKernel final : public OpKernel {
 public:
  Status Init(const KernelInfo& info) {
    const Node& node = info.node();
    int set = 0;
    for (const auto& kv : node.attrs) {
      const std::string& k = kv.first;
      const Attribute& a = kv.second;
      if (k == "value") {
        ONYX_CHECK(a.t != nullptr, ErrorCode::kInvalidGraph, "Constant: attribute 'value' holds no tensor");
        value_ = a.t;
      } else if (k == "value_float") {
        value_ = std::make_shared<Tensor>(ElemType::kFloat, Dims{});
        value_->data<float>()[0] = a.f;
      } else if (k == "value_floats") {
        value_ = std::make_shared<Tensor>(ElemType::kFloat, Dims{static_cast<int64_t>(a.floats.size())});
        for (size_t i = 0; i < a.floats.size(); ++i) value_->data<float>()[i] = a.floats[i];
      } else if (k == "value_int") {
        value_ = std::make_shared<Tensor>(ElemType::kInt64, Dims{});
        value_->data<int64_t>()[0] = a.i;
      } else if (k == "value_ints") {
        value_ = std::make_shared<Tensor>(ElemType::kInt64, Dims{static_cast<int64_t>(a.ints.size())});
        for (size_t i = 0; i < a.ints.size(); ++i) value_->data<int64_t>()[i] = a.ints[i];
      } else if (k == "value_string") {
        value_ = std::make_shared<Tensor>(ElemType::kString, Dims{});
        value_->data<std::string>()[0] = a.s;
      } else if (k == "value_strings") {
        value_ = std::make_shared<Tensor>(ElemType::kString, Dims{static_cast<int64_t>(a.strings.size())});
        for (size_t i = 0; i < a.strings.size(); ++i) value_->data<std::string>()[i] = a.strings[i];
      } else if (k == "sparse_value") {
        return MakeError(ErrorCode::kNotImplemented, "Constant: attribute 'sparse_value' is not supported");
      } else {
        continue;
      }
      ++set;
    }
    ONYX_CHECK(set == 1, ErrorCode::kInvalidGraph, "Constant: exactly one value attribute must be set, found ", set);
    return Status::OK();
  }

  Status Compute(KernelContext& ctx) const override {
    Tensor* Y = ctx.Output(0, value_->dims(), value_->type());
    if (Y == nullptr) return Status::OK();
    return CopyInto(*value_, Y);
  }

 private:
  std::shared_ptr<Tensor> value_;
};

class ConstantOfShapeKernel final : public OpKernel {
 public:
  Status Init(const KernelInfo& info) {
    const Attribute* a = info.Attr("value");
    if (a != nullptr) {
      ONYX_CHECK(a->t != nullptr && a->t->size() == 1, ErrorCode::kInvalidGraph,
                 "ConstantOfShape: attribute 'value' must be a one-element tensor");
      ONYX_CHECK(a->t->type() != ElemType::kString && ElemSize(a->t->type()) > 0, ErrorCode::kNotImplemented,
                 "ConstantOfShape: value of type ", ElemTypeName(a->t->type()), " is not supported");
      value_ = a->t;
    } else {
      value_ = std::make_shared<Tensor>(ElemType::kFloat, Dims{1});
      value_->data<float>()[0] = 0.f;
    }
    return Status::OK();
  }

  Status Compute(KernelContext& ctx) const override {
    const Tensor* S = nullptr;
    ONYX_RETURN_IF_ERROR(ctx.RequiredInput(0, &S));
    ONYX_CHECK_ARG(S->type() == ElemType::kInt64 && S->rank() == 1, "ConstantOfShape: input 0 must be a 1-D int64 ",
                   "tensor, got ", ElemTypeName(S->type()), " of shape ", ShapeToString(S->dims()));
    Dims dims(S->data<int64_t>(), S->data<int64_t>() + S->size());
    for (size_t i = 0; i < dims.size(); ++i)
      ONYX_CHECK_ARG(dims[i] >= 0, "ConstantOfShape: input 0 holds negative dimension ", dims[i], " at index ", i);
    Tensor* Y = ctx.Output(0, dims, value_->type());
    if (Y == nullptr) return Status::OK();
    const size_t es = ElemSize(value_->type());
    auto* y = static_cast<char*>(Y->raw());
    const auto* v = static_cast<const char*>(value_->raw());
    bool zero = true;
    for (size_t b = 0; b < es; ++b) zero = zero && v[b] == 0;
    if (zero) {
      std::memset(y, 0, static_cast<size_t>(Y->size()) * es);
    } else {
      for (int64_t i = 0; i < Y->size(); ++i) std::memcpy(y + i * es, v, es);
    }
    return Status::OK();
  }

 private:
  std::shared_ptr<Tensor> value_;
};

}  // namespace

ONYX_REGISTER_KERNEL(ConstantKernel, "", "Constant", 1, kMaxVersion, AnyType());
ONYX_REGISTER_KERNEL(ConstantOfShapeKernel, "", "ConstantOfShape", 9, kMaxVersion, AnyType());

}  // namespace onyx
