// onnxruntime's contrib activations (domain com.microsoft, version 1) that its
// transformer optimizer writes into BERT/GPT-style models:
//   Gelu       Y = 0.5 * X * (1 + erf(X / sqrt(2)))
//   BiasGelu   Gelu(A + B), B a 1-D bias over A's last axis (required)
//   FastGelu   Y = 0.5 * Z * (1 + tanh(sqrt(2/pi) * (Z + 0.044715 * Z^3))),
//              Z = X + bias, bias optional, 1-D over X's last axis
//   QuickGelu  Y = X * sigmoid(alpha * X), alpha default 1.702
// and the two that its optimizer writes into Stable Diffusion's UNet (X is
// [N, S, D] there, bias [D]):
//   BiasSplitGelu  Z = X + bias split in halves along D: Y = Z[..., :D/2] *
//                  Gelu(Z[..., D/2:]), [N, S, D/2]
//   BiasAdd        Y = X + bias + skip (skip shaped like X): no activation
// float, double, float16 and bfloat16; the 16-bit floats compute in float.
// Each thread works through its range in blocks: input plus bias widened into
// a block of the compute type, the activation applied in place (float uses the
// SIMD array forms of fast_math), then narrowed into Y.
#include <algorithm>
#include <cmath>
#include <type_traits>

#include "providers/cpu/math/gelu_contrib.h"

#include "providers/cpu/common/broadcast.h"
#include "providers/cpu/common/dispatch.h"
#include "providers/cpu/common/fast_math.h"
#include "providers/kernel.h"

namespace onyx {

namespace {

enum class GeluKind { kGelu, kBiasGelu, kFastGelu, kQuickGelu, kBiasSplitGelu, kBiasAdd };

constexpr int64_t kBlock = 512;

// In-place activation of one block in the compute type C.
template <typename C>
void ActivateBlock(GeluKind kind, C alpha, C* v, int64_t n) {
  switch (kind) {
    case GeluKind::kBiasAdd:
      break;
    case GeluKind::kGelu:
    case GeluKind::kBiasGelu:
    case GeluKind::kBiasSplitGelu:
      if constexpr (std::is_same<C, float>::value) {
        fastmath::GeluArray(v, v, n);
      } else {
        for (int64_t i = 0; i < n; ++i) v[i] = C(0.5) * v[i] * (C(1) + std::erf(v[i] * C(0.70710678118654752440)));
      }
      break;
    case GeluKind::kFastGelu: {
      const C k = C(0.79788456080286535588);  // sqrt(2/pi)
      C t[kBlock];
      for (int64_t i = 0; i < n; ++i) t[i] = k * (v[i] + C(0.044715) * v[i] * v[i] * v[i]);
      if constexpr (std::is_same<C, float>::value) {
        fastmath::TanhArray(t, t, n);
      } else {
        for (int64_t i = 0; i < n; ++i) t[i] = std::tanh(t[i]);
      }
      for (int64_t i = 0; i < n; ++i) v[i] = C(0.5) * v[i] * (C(1) + t[i]);
      break;
    }
    case GeluKind::kQuickGelu:
      for (int64_t i = 0; i < n; ++i) {
        // sigmoid split by sign so exp never overflows.
        const C z = alpha * v[i];
        const C e = fastmath::ExpOf(z >= C(0) ? -z : z);
        const C s = z >= C(0) ? C(1) / (C(1) + e) : e / (C(1) + e);
        v[i] *= s;
      }
      break;
  }
}

template <typename T>
void RunGelu(GeluKind kind, float alpha, const T* x, const T* bias, int64_t bias_len, const T* skip, T* y, int64_t n,
             ThreadPool* pool) {
  using C = typename CalcType<T>::type;
  if constexpr (std::is_same<T, float>::value) {
    if (kind == GeluKind::kGelu || kind == GeluKind::kBiasGelu || kind == GeluKind::kFastGelu) {
      // One SIMD pass (bias add and activation) per stretch of the range
      // that sees the bias contiguously.
      auto* fn = kind == GeluKind::kFastGelu ? &fastmath::FastGeluArray : &fastmath::BiasGeluArray;
      ThreadPool::For(pool, n, 4096, [&](int64_t b, int64_t e) {
        if (bias == nullptr) {
          fn(x + b, nullptr, y + b, e - b);
          return;
        }
        for (int64_t s = b; s < e;) {
          const int64_t j = s % bias_len, len = std::min(bias_len - j, e - s);
          fn(x + s, bias + j, y + s, len);
          s += len;
        }
      });
      return;
    }
  }
  ThreadPool::For(pool, n, 4096, [&](int64_t b, int64_t e) {
    C buf[kBlock];
    for (int64_t s = b; s < e; s += kBlock) {
      const int64_t len = std::min(kBlock, e - s);
      if (bias != nullptr) {
        int64_t j = s % bias_len;
        for (int64_t i = 0; i < len; ++i) {
          buf[i] = static_cast<C>(x[s + i]) + static_cast<C>(bias[j]);
          if (++j == bias_len) j = 0;
        }
      } else {
        for (int64_t i = 0; i < len; ++i) buf[i] = static_cast<C>(x[s + i]);
      }
      if (skip != nullptr)
        for (int64_t i = 0; i < len; ++i) buf[i] += static_cast<C>(skip[s + i]);
      ActivateBlock<C>(kind, static_cast<C>(alpha), buf, len);
      for (int64_t i = 0; i < len; ++i) y[s + i] = static_cast<T>(buf[i]);
    }
  });
}

// BiasSplitGelu over `rows` rows of width d (even): y row r, column j =
// (x[r, j] + bias[j]) * Gelu(x[r, j + d/2] + bias[j + d/2]).
template <typename T>
void RunBiasSplitGelu(const T* x, const T* bias, int64_t d, T* y, int64_t rows, ThreadPool* pool) {
  using C = typename CalcType<T>::type;
  const int64_t half = d / 2;
  ThreadPool::For(pool, rows, std::max<int64_t>(1, 4096 / std::max<int64_t>(1, half)), [&](int64_t b, int64_t e) {
    C buf[kBlock];
    for (int64_t r = b; r < e; ++r) {
      const T* xr = x + r * d;
      T* yr = y + r * half;
      for (int64_t j0 = 0; j0 < half; j0 += kBlock) {
        const int64_t len = std::min(kBlock, half - j0);
        for (int64_t i = 0; i < len; ++i)
          buf[i] = static_cast<C>(xr[half + j0 + i]) + static_cast<C>(bias[half + j0 + i]);
        ActivateBlock<C>(GeluKind::kGelu, C(0), buf, len);
        for (int64_t i = 0; i < len; ++i)
          yr[j0 + i] = static_cast<T>((static_cast<C>(xr[j0 + i]) + static_cast<C>(bias[j0 + i])) * buf[i]);
      }
    }
  });
}

class ContribGeluKernel final : public OpKernel {
 public:
  ContribGeluKernel(GeluKind kind, const char* name) : kind_(kind), name_(name) {}

  Status Init(const KernelInfo& info) {
    if (kind_ == GeluKind::kQuickGelu) alpha_ = info.AttrFloat("alpha", 1.702f);
    return Status::OK();
  }

  Status Compute(KernelContext& ctx) const override {
    const Tensor* X = nullptr;
    ONYX_RETURN_IF_ERROR(ctx.RequiredInput(0, &X));
    const Tensor* B = nullptr;
    const Tensor* skip = nullptr;
    const bool bias_required = kind_ == GeluKind::kBiasGelu || kind_ == GeluKind::kBiasSplitGelu ||
                               kind_ == GeluKind::kBiasAdd;
    if (bias_required) {
      ONYX_RETURN_IF_ERROR(ctx.RequiredInput(1, &B));
    } else if (kind_ == GeluKind::kFastGelu && ctx.InputCount() > 1) {
      B = ctx.Input(1);
    }
    const char* xname = kind_ == GeluKind::kBiasGelu ? "A" : "X";
    const char* bname = kind_ == GeluKind::kBiasGelu ? "B" : "bias";
    // The diffusion ops take X as [N, S, D] only, as onnxruntime's.
    if (kind_ == GeluKind::kBiasSplitGelu || kind_ == GeluKind::kBiasAdd)
      ONYX_CHECK_ARG(X->rank() == 3, name_, ": input 0 (X) of shape ", ShapeToString(X->dims()),
                     " must be 3-D [batch, sequence, channels]");
    if (kind_ == GeluKind::kBiasAdd) {
      ONYX_RETURN_IF_ERROR(ctx.RequiredInput(2, &skip));
      ONYX_CHECK_ARG(skip->type() == X->type() && skip->dims() == X->dims(), name_, ": input 2 (skip) of type ",
                     ElemTypeName(skip->type()), " and shape ", ShapeToString(skip->dims()),
                     " must match input 0 (X), ", ElemTypeName(X->type()), " ", ShapeToString(X->dims()));
    }
    int64_t bias_len = 0;
    if (B != nullptr) {
      ONYX_CHECK_ARG(B->type() == X->type(), name_, ": input 1 (", bname, ") has type ", ElemTypeName(B->type()),
                     " but input 0 (", xname, ") has type ", ElemTypeName(X->type()));
      ONYX_CHECK_ARG(X->rank() >= 1, name_, ": input 0 (", xname, ") must have rank >= 1 to take a bias, got a scalar");
      const int64_t last = X->dims().back();
      ONYX_CHECK_ARG(B->rank() == 1 && B->dims()[0] == last, name_, ": input 1 (", bname, ") of shape ",
                     ShapeToString(B->dims()), " must be 1-D of length ", last, ", the last dimension of input 0 (",
                     xname, ") ", ShapeToString(X->dims()));
      bias_len = last;
    }
    if (kind_ == GeluKind::kBiasSplitGelu)
      ONYX_CHECK_ARG(bias_len % 2 == 0, name_, ": the last dimension of input 0 (X) ", ShapeToString(X->dims()),
                     " must be even to split in halves");
    return DispatchOver(FloatOrHalfTypeSet{}, X->type(), name_, [&](auto tag) -> Status {
      using T = typename decltype(tag)::type;
      if (kind_ == GeluKind::kBiasSplitGelu) {
        Tensor* Y = ctx.Output(0, {X->dims()[0], X->dims()[1], bias_len / 2}, X->type());
        if (Y == nullptr || Y->size() == 0) return Status::OK();
        RunBiasSplitGelu<T>(X->data<T>(), B->data<T>(), bias_len, Y->data<T>(), X->dims()[0] * X->dims()[1],
                            ctx.threads());
        return Status::OK();
      }
      Tensor* Y = ctx.Output(0, X->dims(), X->type());
      if (Y == nullptr || X->size() == 0) return Status::OK();
      RunGelu<T>(kind_, alpha_, X->data<T>(), B != nullptr ? B->data<T>() : nullptr, bias_len,
                 skip != nullptr ? skip->data<T>() : nullptr, Y->data<T>(), X->size(), ctx.threads());
      return Status::OK();
    });
  }

 private:
  GeluKind kind_;
  const char* name_;
  float alpha_ = 1.702f;
};

}  // namespace

template <typename T>
void FastGeluWithBias(const T* x, const T* bias, int64_t bias_len, T* y, int64_t n, ThreadPool* pool) {
  RunGelu<T>(GeluKind::kFastGelu, 0.f, x, bias, bias_len, nullptr, y, n, pool);
}
template void FastGeluWithBias<float>(const float*, const float*, int64_t, float*, int64_t, ThreadPool*);
template void FastGeluWithBias<double>(const double*, const double*, int64_t, double*, int64_t, ThreadPool*);
template void FastGeluWithBias<Float16>(const Float16*, const Float16*, int64_t, Float16*, int64_t, ThreadPool*);
template void FastGeluWithBias<BFloat16>(const BFloat16*, const BFloat16*, int64_t, BFloat16*, int64_t, ThreadPool*);

ONYX_REGISTER_KERNEL(ContribGeluKernel, "com.microsoft", "Gelu", 1, kMaxVersion, FloatOrHalfTypes(), GeluKind::kGelu,
                     "Gelu");
ONYX_REGISTER_KERNEL(ContribGeluKernel, "com.microsoft", "BiasGelu", 1, kMaxVersion, FloatOrHalfTypes(),
                     GeluKind::kBiasGelu, "BiasGelu");
ONYX_REGISTER_KERNEL(ContribGeluKernel, "com.microsoft", "FastGelu", 1, kMaxVersion, FloatOrHalfTypes(),
                     GeluKind::kFastGelu, "FastGelu");
ONYX_REGISTER_KERNEL(ContribGeluKernel, "com.microsoft", "QuickGelu", 1, kMaxVersion, FloatOrHalfTypes(),
                     GeluKind::kQuickGelu, "QuickGelu");
ONYX_REGISTER_KERNEL(ContribGeluKernel, "com.microsoft", "BiasSplitGelu", 1, kMaxVersion, FloatOrHalfTypes(),
                     GeluKind::kBiasSplitGelu, "BiasSplitGelu");
ONYX_REGISTER_KERNEL(ContribGeluKernel, "com.microsoft", "BiasAdd", 1, kMaxVersion, FloatOrHalfTypes(),
                     GeluKind::kBiasAdd, "BiasAdd");

}  // namespace onyx
