// BitCast (opset 26): the input's bytes reinterpreted as the element type of
// attribute `to`, which must have the same bit width; same shape. Our tensors
// are little endian, as the spec asks. A byte read as bool is normalized to
// 0/1 (any non-zero byte is true, as numpy's view reads it), since other
// byte values are not valid C++ bools for the kernels that read them.
#include <cstring>

#include "core/framework/data_type.h"
#include "providers/cpu/common/indexing.h"
#include "providers/kernel.h"

namespace onyx {

namespace {

// Bits of one element, for every fixed-size and sub-byte type; 0 for string.
size_t BitWidth(ElemType t) {
  if (t == ElemType::kString) return 0;
  if (t == ElemType::kUint4 || t == ElemType::kInt4 || t == ElemType::kFloat4E2M1) return 4;
  return ElemSize(t) * 8;
}

class BitCastKernel final : public OpKernel {
 public:
  Status Init(const KernelInfo& info) {
    const Attribute* a = info.Attr("to");
    ONYX_CHECK_ARG(a != nullptr, "BitCast: attribute 'to' is required");
    const int64_t to = info.AttrInt("to", 0);
    ONYX_CHECK_ARG(IsKnownElemType(static_cast<int32_t>(to)) && static_cast<ElemType>(to) != ElemType::kUndefined,
                   "BitCast: attribute 'to' has value ", to, ", which is not an element type this runtime knows");
    to_ = static_cast<ElemType>(to);
    ONYX_CHECK_ARG(to_ != ElemType::kString, "BitCast: attribute 'to' may not be string");
    return Status::OK();
  }

  Status Compute(KernelContext& ctx) const override {
    const Tensor* X = nullptr;
    ONYX_RETURN_IF_ERROR(ctx.RequiredInput(0, &X));
    ONYX_CHECK_ARG(X->type() != ElemType::kString, "BitCast: input 0 (input) may not be string");
    ONYX_CHECK_ARG(BitWidth(X->type()) == BitWidth(to_), "BitCast: input 0 (input) has type ",
                   ElemTypeName(X->type()), " (", BitWidth(X->type()), " bits) but attribute 'to' is ",
                   ElemTypeName(to_), " (", BitWidth(to_), " bits); the widths must match");
    Tensor* Y = ctx.Output(0, X->dims(), to_);
    if (Y == nullptr || Y->size() == 0) return Status::OK();
    if (to_ == ElemType::kBool) {
      const uint8_t* src = static_cast<const uint8_t*>(X->raw());
      bool* dst = Y->data<bool>();
      for (int64_t i = 0; i < Y->size(); ++i) dst[i] = src[i] != 0;
    } else {
      std::memcpy(Y->raw(), X->raw(), X->bytes());
    }
    return Status::OK();
  }

 private:
  ElemType to_ = ElemType::kUndefined;
};

}  // namespace

ONYX_REGISTER_KERNEL(BitCastKernel, "", "BitCast", 26, kMaxVersion, AnyType());

}  // namespace onyx
