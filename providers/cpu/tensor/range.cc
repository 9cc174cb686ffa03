// Range (opset 11+): start, start + delta, ... while short of limit.
//
// ONNX defines Range as a function whose body is a Loop; expanding it cost a
// Loop with a subgraph run per element (GPT-2's position ids, every run) and,
// worse, hid the output length from shape reasoning. This kernel computes the
// length as the spec does, max(ceil((limit - start) / delta), 0) in double
// (as onnxruntime), and the values by repeated addition, as the function
// body's Loop does, so floats agree with both the body and onnxruntime.
#include <cmath>
#include <cstdint>
#include <limits>

#include "providers/cpu/common/dispatch.h"
#include "providers/kernel.h"

namespace onyx {

namespace {

using RangeTypeSet = TypeSet<float, double, int16_t, int32_t, int64_t>;

const char* const kRangeInputs[] = {"start", "limit", "delta"};

class RangeKernel final : public OpKernel {
 public:
  Status Init(const KernelInfo&) { return Status::OK(); }

  Status Compute(KernelContext& ctx) const override {
    const Tensor* in[3] = {nullptr, nullptr, nullptr};
    for (int i = 0; i < 3; ++i) {
      ONYX_RETURN_IF_ERROR(ctx.RequiredInput(i, &in[i]));
      // The spec asks for scalars; a one-element tensor (some exporters write
      // shape [1]) is read as its one value, as onnxruntime does.
      ONYX_CHECK_ARG(in[i]->size() == 1, "Range: input ", i, " (", kRangeInputs[i],
                     ") must be a scalar, got shape ", ShapeToString(in[i]->dims()));
      ONYX_CHECK_ARG(in[i]->type() == in[0]->type(), "Range: input ", i, " (", kRangeInputs[i],
                     ") must have the type of input 0 (start)");
    }
    return DispatchOver(RangeTypeSet{}, in[0]->type(), "Range", [&](auto tag) -> Status {
      using T = typename decltype(tag)::type;
      const T start = in[0]->data<T>()[0], limit = in[1]->data<T>()[0], delta = in[2]->data<T>()[0];
      ONYX_CHECK_ARG(delta != T(0), "Range: input 2 (delta) must not be 0");
      const double count = std::ceil((static_cast<double>(limit) - static_cast<double>(start)) / static_cast<double>(delta));
      ONYX_CHECK_ARG(!std::isnan(count), "Range: start ", static_cast<double>(start), ", limit ",
                     static_cast<double>(limit), " and delta ", static_cast<double>(delta), " give no length");
      // Checked in double: the conversion below is undefined past int64.
      const double max_count = static_cast<double>(std::numeric_limits<int64_t>::max() / sizeof(T));
      ONYX_CHECK_ARG(count < max_count, "Range: start ", static_cast<double>(start), ", limit ",
                     static_cast<double>(limit), " and delta ", static_cast<double>(delta), " give ", count,
                     " elements, too many to hold");
      const int64_t n = count > 0 ? static_cast<int64_t>(count) : 0;
      Tensor* Y = ctx.Output(0, {n}, in[0]->type());
      if (Y == nullptr || n == 0) return Status::OK();
      T* y = Y->data<T>();
      T value = start;
      for (int64_t i = 0; i < n; ++i) {
        y[i] = value;
        // Past the last element an integer sum may overflow; it is never stored.
        if (i + 1 < n) value = static_cast<T>(value + delta);
      }
      return Status::OK();
    });
  }
};

}  // namespace

ONYX_REGISTER_KERNEL(RangeKernel, "", "Range", 11, kMaxVersion, RangeTypeSet::ElemTypes());

}  // namespace onyx
