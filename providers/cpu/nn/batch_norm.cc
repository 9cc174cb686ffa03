// BatchNormalization: Y = (X - mean) / sqrt(var + eps) * scale + B, folded per
// channel into Y = X * a + b. Inference uses input_mean/input_var; training
// (training_mode=1, opset 14+) uses the batch's own mean and population
// variance per channel and also returns the running statistics
// input_stat * momentum + batch_stat * (1 - momentum).
#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "providers/cpu/common/dispatch.h"
#include "providers/cpu/common/half_float.h"
#include "providers/kernel.h"

namespace onyx {
namespace {

class BatchNormKernel final : public OpKernel {
 public:
  Status Init(const KernelInfo& info) {
    epsilon_ = info.AttrFloat("epsilon", 1e-5f);
    ONYX_CHECK(epsilon_ >= 0.f, ErrorCode::kInvalidGraph, "BatchNormalization: attribute epsilon must be >= 0, got ",
               epsilon_);
    training_ = info.opset() >= 14 && info.AttrInt("training_mode", 0) != 0;
    momentum_ = info.AttrFloat("momentum", 0.9f);
    // Before opset 9 `spatial`=0 gave each (channel, position) its own statistics.
    spatial_ = info.opset() < 9 ? info.AttrInt("spatial", 1) != 0 : true;
    // Outputs past Y are statistics that only training produces; before opset
    // 14 (mean, var, saved_mean, saved_var) they are not implemented.
    const Node& node = info.node();
    for (size_t i = 1; i < node.outputs.size(); ++i)
      ONYX_CHECK(node.outputs[i].empty() || (training_ && i <= 2), ErrorCode::kNotImplemented,
                 "BatchNormalization: output ", i, " ('", node.outputs[i], "') is a training statistic; ",
                 info.opset() >= 14 ? "it needs training_mode=1" : "training outputs before opset 14 are not "
                 "implemented");
    return Status::OK();
  }

  Status Compute(KernelContext& ctx) const override {
    // float16/bfloat16 run the float code, accumulating in float.
    if (const Tensor* in0 = ctx.Input(0); in0 != nullptr && IsHalfType(in0->type()))
      return ComputeThroughFloat(*this, ctx, {{0, 0}, {1, 3}, {2, 3}});
    const Tensor* in[5];
    for (int i = 0; i < 5; ++i) ONYX_RETURN_IF_ERROR(ctx.RequiredInput(i, &in[i]));
    const Tensor& x = *in[0];
    const Dims& xd = x.dims();
    ONYX_CHECK_ARG(xd.size() >= 2, "BatchNormalization: input X ", ShapeToString(xd), " must have rank >= 2");
    const int64_t N = xd[0], C = xd[1];
    int64_t inner = 1;
    for (size_t j = 2; j < xd.size(); ++j) inner *= xd[j];
    // With spatial statistics each parameter covers `inner` contiguous values;
    // without, every (channel, position) has its own parameter.
    const int64_t params = spatial_ ? C : C * inner;
    const int64_t run = spatial_ ? inner : 1;
    static const char* kNames[] = {"X", "scale", "B", "input_mean", "input_var"};
    for (int i = 1; i < 5; ++i) {
      ONYX_CHECK_ARG(in[i]->type() == x.type(), "BatchNormalization: input ", kNames[i], " has type ",
                     ElemTypeName(in[i]->type()), " but X has ", ElemTypeName(x.type()));
      ONYX_CHECK_ARG(in[i]->size() == params && (in[i]->rank() == 1 || !spatial_), "BatchNormalization: input ",
                     kNames[i], " ", ShapeToString(in[i]->dims()), " must have ", params,
                     " values to match X ", ShapeToString(xd));
    }
    Tensor* y = ctx.Output(0, xd, x.type());
    if (y == nullptr || (y->size() == 0 && !training_)) return Status::OK();

    return DispatchFloat(x.type(), "BatchNormalization", [&](auto tag) -> Status {
      using T = typename decltype(tag)::type;
      std::vector<T> a(params), b(params);
      const T* scale = in[1]->data<T>();
      const T* bias = in[2]->data<T>();
      const T* mean = in[3]->data<T>();
      const T* var = in[4]->data<T>();
      const T* xv = x.data<T>();
      std::vector<T> bmean, bvar;
      if (training_) {
        // Per channel over N and the spatial positions, in double: mean, then
        // the population variance around it.
        bmean.resize(params);
        bvar.resize(params);
        const double count = static_cast<double>(N * run);
        ThreadPool::For(ctx.threads(), params, std::max<int64_t>(1, 32768 / std::max<int64_t>(N * run, 1)),
                        [&](int64_t begin, int64_t end) {
                          for (int64_t c = begin; c < end; ++c) {
                            double sum = 0, sq = 0;
                            for (int64_t n = 0; n < N; ++n) {
                              const T* src = xv + (n * params + c) * run;
                              for (int64_t i = 0; i < run; ++i) sum += static_cast<double>(src[i]);
                            }
                            const double m = count > 0 ? sum / count : 0.0;
                            for (int64_t n = 0; n < N; ++n) {
                              const T* src = xv + (n * params + c) * run;
                              for (int64_t i = 0; i < run; ++i) {
                                const double d = static_cast<double>(src[i]) - m;
                                sq += d * d;
                              }
                            }
                            bmean[c] = static_cast<T>(m);
                            bvar[c] = static_cast<T>(count > 0 ? sq / count : 0.0);
                          }
                        });
        mean = bmean.data();
        var = bvar.data();
        const T mom = static_cast<T>(momentum_);
        for (int out = 1; out <= 2 && out < ctx.OutputCount(); ++out) {
          Tensor* o = ctx.Output(out, in[2 + out]->dims(), x.type());
          if (o == nullptr) continue;
          const T* prior = in[2 + out]->data<T>();
          const T* batch = out == 1 ? mean : var;
          T* ov = o->data<T>();
          for (int64_t c = 0; c < params; ++c) ov[c] = prior[c] * mom + batch[c] * (T(1) - mom);
        }
      }
      for (int64_t c = 0; c < params; ++c) {
        a[c] = scale[c] / std::sqrt(var[c] + static_cast<T>(epsilon_));
        b[c] = bias[c] - mean[c] * a[c];
      }
      T* yv = y->data<T>();
      const int64_t rows = N * params;
      ThreadPool::For(ctx.threads(), rows, std::max<int64_t>(1, 32768 / std::max<int64_t>(run, 1)),
                      [&](int64_t begin, int64_t end) {
                        for (int64_t r = begin; r < end; ++r) {
                          const T ar = a[r % params], br = b[r % params];
                          const T* src = xv + r * run;
                          T* dst = yv + r * run;
                          for (int64_t i = 0; i < run; ++i) dst[i] = src[i] * ar + br;
                        }
                      });
      return Status::OK();
    });
  }

 private:
  float epsilon_ = 1e-5f;
  float momentum_ = 0.9f;
  bool spatial_ = true;
  bool training_ = false;
};

}  // namespace

ONYX_REGISTER_KERNEL(BatchNormKernel, "", "BatchNormalization", 1, kMaxVersion, FloatOrHalfTypes());

}  // namespace onyx
