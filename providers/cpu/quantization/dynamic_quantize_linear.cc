// DynamicQuantizeLinear (opset 11): float x to uint8 over the whole tensor,
// y = saturate(round(x / y_scale) + y_zero_point), with y_scale and
// y_zero_point from x's range widened to hold 0 (int8gemm::
// DynamicQuantizeParams). A kernel of its own (two vectorized passes) rather
// than ONNX's function body, which takes a dozen nodes; quantize_dynamic
// puts one before every MatMulInteger. When x is all zero the scale is 1 (as
// onnxruntime; the function body would divide 0 by 0); a value that is not
// finite is an error naming its index.
#include <cstdint>

#include "providers/cpu/quantization/int8_gemm.h"
#include "providers/kernel.h"

namespace onyx {

namespace {

class DynamicQuantizeLinearKernel final : public OpKernel {
 public:
  Status Init(const KernelInfo&) { return Status::OK(); }

  Status Compute(KernelContext& ctx) const override {
    const Tensor* x = nullptr;
    ONYX_RETURN_IF_ERROR(ctx.RequiredInput(0, &x));
    ONYX_CHECK_ARG(x->type() == ElemType::kFloat, "DynamicQuantizeLinear: input 0 (x) must be float, got ",
                   ElemTypeName(x->type()));
    const float* xv = x->data<float>();
    float scale = 1.f;
    int32_t zero_point = 0;
    const int64_t bad = int8gemm::DynamicQuantizeParams(xv, x->size(), &scale, &zero_point, ctx.threads());
    ONYX_CHECK_ARG(bad < 0, "DynamicQuantizeLinear: input 0 (x) holds ", bad < 0 ? 0.f : xv[bad], " at flat index ",
                   bad, ", which cannot be quantized");
    Tensor* y = ctx.Output(0, x->dims(), ElemType::kUint8);
    if (y != nullptr) int8gemm::QuantizeU8(xv, x->size(), scale, zero_point, y->data<uint8_t>(), ctx.threads());
    Tensor* ys = ctx.Output(1, {}, ElemType::kFloat);
    if (ys != nullptr) ys->data<float>()[0] = scale;
    Tensor* yz = ctx.Output(2, {}, ElemType::kUint8);
    if (yz != nullptr) yz->data<uint8_t>()[0] = static_cast<uint8_t>(zero_point);
    return Status::OK();
  }
};

}  // namespace

ONYX_REGISTER_KERNEL(DynamicQuantizeLinearKernel, "", "DynamicQuantizeLinear", 11, kMaxVersion,
                     std::vector<ElemType>{ElemType::kFloat});

}  // namespace onyx
