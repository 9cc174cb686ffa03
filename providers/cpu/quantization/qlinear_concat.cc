// onnxruntime's com.microsoft QLinearConcat (version 1), which
// onnxruntime.quantization writes in QOperator format:
//   QLinearConcat(Y_scale, Y_zero_point, X0, X0_scale, X0_zero_point, X1, ...)
// attribute axis (required, negative counts from the end). int8 or uint8,
// every X of Y's type, per-tensor scales. An input quantized like Y is copied;
// any other is requantized as onnxruntime does (through a 256-entry table):
//   y = saturate(round_half_even(x_scale * (x - x_zp) / y_scale) + y_zp).
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include "providers/cpu/quantization/qlinear_common.h"
#include "providers/kernel.h"
#include "providers/type_sets.h"

namespace onyx {
namespace {

using qlinear::Int8TypeSet;

class QLinearConcatKernel final : public OpKernel {
 public:
  Status Init(const KernelInfo& info) {
    const Attribute* axis = info.Attr("axis");
    ONYX_CHECK(axis != nullptr, ErrorCode::kInvalidGraph, "QLinearConcat: attribute axis is required");
    axis_ = axis->i;
    const int n = info.InputCount();
    ONYX_CHECK(n >= 5 && (n - 2) % 3 == 0, ErrorCode::kInvalidGraph, "QLinearConcat: takes Y_scale, Y_zero_point "
               "and then (X, X_scale, X_zero_point) for each input, got ", n, " inputs");
    return Status::OK();
  }

  Status Compute(KernelContext& ctx) const override {
    const char* op = "QLinearConcat";
    const int n = (ctx.InputCount() - 2) / 3;
    std::vector<const Tensor*> xs(static_cast<size_t>(n));
    for (int k = 0; k < n; ++k) ONYX_RETURN_IF_ERROR(ctx.RequiredInput(2 + 3 * k, &xs[k]));
    const Tensor* first = xs[0];
    qlinear::QParam qy;
    ONYX_RETURN_IF_ERROR(qlinear::ReadQParam(ctx, op, 0, "Y_scale", "Y_zero_point", first, true, &qy));

    const Dims& d0 = first->dims();
    const int64_t rank = static_cast<int64_t>(d0.size());
    const int64_t axis = axis_ < 0 ? axis_ + rank : axis_;
    ONYX_CHECK_ARG(rank > 0 && axis >= 0 && axis < rank, op, ": attribute axis ", axis_,
                   " is out of range for input 2 (X0) of shape ", ShapeToString(d0));
    Dims yd = d0;
    yd[axis] = 0;
    std::vector<qlinear::QParam> qx(static_cast<size_t>(n));
    for (int k = 0; k < n; ++k) {
      const Tensor* x = xs[k];
      const int xi = 2 + 3 * k;
      const std::string name = "X" + std::to_string(k);
      ONYX_CHECK_ARG(x->type() == first->type(), op, ": input ", xi, " (", name, ") has type ",
                     ElemTypeName(x->type()), " but input 2 (X0) has type ", ElemTypeName(first->type()));
      bool same = static_cast<int64_t>(x->rank()) == rank;
      for (int64_t j = 0; same && j < rank; ++j) same = j == axis || x->dims()[j] == d0[j];
      ONYX_CHECK_ARG(same, op, ": input ", xi, " (", name, ") of shape ", ShapeToString(x->dims()),
                     " does not match input 2 (X0) ", ShapeToString(d0), " outside axis ", axis);
      yd[axis] += x->dims()[axis];
      const std::string sname = name + "_scale", zname = name + "_zero_point";
      ONYX_RETURN_IF_ERROR(qlinear::ReadQParam(ctx, op, xi + 1, sname.c_str(), zname.c_str(), x, false, &qx[k]));
    }
    Tensor* y = ctx.Output(0, yd, first->type());
    if (y == nullptr || y->size() == 0) return Status::OK();
    int64_t outer = 1, inner = 1;
    for (int64_t j = 0; j < rank; ++j) {
      if (j < axis) outer *= yd[j];
      else if (j > axis) inner *= yd[j];
    }
    return DispatchOver(Int8TypeSet{}, first->type(), op, [&](auto tag) -> Status {
      using T = typename decltype(tag)::type;
      T* yv = y->data<T>();
      const int64_t y_block = yd[axis] * inner;
      int64_t at = 0;
      for (int k = 0; k < n; ++k) {
        const T* xv = xs[k]->data<T>();
        const int64_t block = xs[k]->dims()[axis] * inner;
        const bool copy = qx[k].scale == qy.scale && qx[k].zp == qy.zp;
        T table[256];
        if (!copy) {
          const float lo = static_cast<float>(std::numeric_limits<T>::min());
          const float hi = static_cast<float>(std::numeric_limits<T>::max());
          for (int i = 0; i < 256; ++i) {
            const T code = static_cast<T>(static_cast<uint8_t>(i));
            const float v = qx[k].scale * static_cast<float>(static_cast<int32_t>(code) - qx[k].zp);
            const float q = std::nearbyint(v / qy.scale) + static_cast<float>(qy.zp);
            table[i] = static_cast<T>(q < lo ? lo : (q > hi ? hi : q));
          }
        }
        for (int64_t o = 0; o < outer; ++o) {
          const T* src = xv + o * block;
          T* dst = yv + o * y_block + at;
          if (copy) {
            std::memcpy(dst, src, static_cast<size_t>(block) * sizeof(T));
          } else {
            for (int64_t i = 0; i < block; ++i) dst[i] = table[static_cast<uint8_t>(src[i])];
          }
        }
        at += block;
      }
      return Status::OK();
    });
  }

 private:
  int64_t axis_ = 0;
};

}  // namespace

// The type constraint binds input 2 (the first X); inputs 0 and 1 are Y's scale and zero point.
ONYX_REGISTER_KERNEL(QLinearConcatKernel, "com.microsoft", "QLinearConcat", 1, kMaxVersion, AnyType());

}  // namespace onyx
