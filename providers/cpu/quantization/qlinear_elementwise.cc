// onnxruntime's quantized elementwise contrib ops (com.microsoft, version 1),
// which onnxruntime.quantization writes in QOperator format. int8 or uint8
// data, per-tensor scales and zero points (an omitted zero point is 0):
//   QLinearAdd(A, A_scale, A_zp?, B, B_scale, B_zp?, C_scale, C_zp?)  numpy broadcasting
//   QLinearMul(same inputs)
//   QLinearSigmoid(X, X_scale, X_zp?, Y_scale, Y_zp?)
//   QLinearLeakyRelu(X, X_scale, X_zp?, Y_scale, Y_zp?)  attribute alpha (0.01)
//   QLinearSoftmax(X, X_scale, X_zp?, Y_scale, Y_zp?)   attributes axis, opset (required)
// Each follows onnxruntime's float formula (its MLAS x86 kernels), rounding
// half to even and saturating:
//   Add: (zpC - (a_s/c_s * zpA + b_s/c_s * zpB)) + a * a_s/c_s + b * b_s/c_s
//   Mul: (a - zpA) * (b - zpB) * (a_s * b_s / c_s) + zpC
//   Sigmoid/LeakyRelu: a 256-entry table of quantize(f(dequantize(x)))
//   Softmax: onnxruntime's exp table, see SoftmaxTable.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <type_traits>
#include <string>
#include <vector>

#include "providers/cpu/common/broadcast.h"
#include "providers/cpu/common/fast_math.h"
#include "providers/cpu/quantization/qlinear_common.h"
#include "providers/kernel.h"

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#endif

namespace onyx {
namespace {

using qlinear::Int8TypeSet;

using qlinear::QParam;
using qlinear::ReadQParam;

// round_half_even(v) saturated to Q (NaN gives 0 before the zero point, as
// x86's conversion does not; callers add no NaN here but stay defined).
template <typename Q>
Q SaturateRound(float v) {
  if (std::isnan(v)) v = 0.f;
  const float lo = static_cast<float>(std::numeric_limits<Q>::min());
  const float hi = static_cast<float>(std::numeric_limits<Q>::max());
  v = std::nearbyint(v);
  return static_cast<Q>(v < lo ? lo : (v > hi ? hi : v));
}

// QLinearAdd over one broadcast segment, as onnxruntime's MLAS kernels round:
// its AVX2 kernel (what it runs on any x86 with AVX2) computes
// fma(a, rac, fma(b, rbc, fixed)), folding a broadcast (stride 0) operand
// into the fixed part first with a separate multiply and add (`fixed` here
// is already that sum); its SSE2 kernel (fixed + a * rac) + b * rbc. A value
// on a rounding tie lands on one side or the other by the last bit, so the
// order is kept as theirs, not merely the formula.
#if defined(__x86_64__) || defined(__i386__)
#define ONYX_QADD_X86 1
#define ONYX_QADD_FMA __attribute__((target("avx2,fma")))

// 8 codes of T widened to float.
template <typename T>
ONYX_QADD_FMA inline __m256 Load8(const T* p) {
  const __m128i v = _mm_loadl_epi64(reinterpret_cast<const __m128i*>(p));
  return _mm256_cvtepi32_ps(std::is_signed<T>::value ? _mm256_cvtepi8_epi32(v) : _mm256_cvtepu8_epi32(v));
}

// Clamped to T's range first (a NaN becomes T's lowest, as onnxruntime's
// conversion to INT_MIN and saturating packs give), rounded half to even.
template <typename T>
ONYX_QADD_FMA inline T RoundClamp(float v) {
  const float lo = static_cast<float>(std::numeric_limits<T>::min());
  const float hi = static_cast<float>(std::numeric_limits<T>::max());
  v = v >= lo ? v : lo;
  v = v <= hi ? v : hi;
  return static_cast<T>(static_cast<int32_t>(std::nearbyint(v)));
}

template <typename T>
ONYX_QADD_FMA void QAddSegmentFma(const T* __restrict a, int64_t da, const T* __restrict b, int64_t db,
                                  T* __restrict c, int64_t len, float fixed, float ra, float rb) {
  int64_t i = 0;
  if (da <= 1 && db <= 1) {
    const __m256 vfix = _mm256_set1_ps(fixed), vra = _mm256_set1_ps(ra), vrb = _mm256_set1_ps(rb);
    const __m256 lo = _mm256_set1_ps(static_cast<float>(std::numeric_limits<T>::min()));
    const __m256 hi = _mm256_set1_ps(static_cast<float>(std::numeric_limits<T>::max()));
    for (; i + 8 <= len; i += 8) {
      __m256 v;
      if (da == 0) v = _mm256_fmadd_ps(Load8(b + i), vrb, vfix);
      else if (db == 0) v = _mm256_fmadd_ps(Load8(a + i), vra, vfix);
      else v = _mm256_fmadd_ps(Load8(a + i), vra, _mm256_fmadd_ps(Load8(b + i), vrb, vfix));
      v = _mm256_min_ps(_mm256_max_ps(v, lo), hi);
      const __m256i r = _mm256_cvtps_epi32(v);
      const __m128i p16 = _mm_packs_epi32(_mm256_castsi256_si128(r), _mm256_extracti128_si256(r, 1));
      const __m128i p8 = std::is_signed<T>::value ? _mm_packs_epi16(p16, p16) : _mm_packus_epi16(p16, p16);
      _mm_storel_epi64(reinterpret_cast<__m128i*>(c + i), p8);
    }
  }
  for (; i < len; ++i) {
    float v;
    if (da == 0) v = std::fma(static_cast<float>(b[i * db]), rb, fixed);
    else if (db == 0) v = std::fma(static_cast<float>(a[i * da]), ra, fixed);
    else v = std::fma(static_cast<float>(a[i * da]), ra, std::fma(static_cast<float>(b[i * db]), rb, fixed));
    c[i] = RoundClamp<T>(v);
  }
}
#endif

template <typename T>
void QAddSegment(const T* __restrict a, int64_t da, const T* __restrict b, int64_t db, T* __restrict c, int64_t len,
                 float fixed, float ra, float rb, bool fma) {
  // The broadcast operand's product joins the fixed part here, in code built
  // without FMA: a separate multiply and add, as onnxruntime's.
  if (da == 0) fixed = fixed + static_cast<float>(a[0]) * ra;
  else if (db == 0) fixed = fixed + static_cast<float>(b[0]) * rb;
#ifdef ONYX_QADD_X86
  if (fma) return QAddSegmentFma(a, da, b, db, c, len, fixed, ra, rb);
#endif
  if (da == 0 || db == 0) {
    const T* x = da == 0 ? b : a;
    const int64_t dx = da == 0 ? db : da;
    const float r = da == 0 ? rb : ra;
    for (int64_t i = 0; i < len; ++i) c[i] = SaturateRound<T>(fixed + static_cast<float>(x[i * dx]) * r);
    return;
  }
  for (int64_t i = 0; i < len; ++i)
    c[i] = SaturateRound<T>(fixed + static_cast<float>(a[i * da]) * ra + static_cast<float>(b[i * db]) * rb);
}

bool FmaAvailable() {
#if defined(__x86_64__) || defined(__i386__)
  static const bool fma = [] {
    __builtin_cpu_init();
    return __builtin_cpu_supports("fma") != 0;
  }();
  return fma;
#else
  return false;
#endif
}

enum class BinaryKind { kAdd, kMul };

class QLinearBinaryKernel final : public OpKernel {
 public:
  explicit QLinearBinaryKernel(BinaryKind kind) : kind_(kind) {}
  Status Init(const KernelInfo&) { return Status::OK(); }

  Status Compute(KernelContext& ctx) const override {
    const char* op = kind_ == BinaryKind::kAdd ? "QLinearAdd" : "QLinearMul";
    const Tensor* A = nullptr;
    const Tensor* B = nullptr;
    ONYX_RETURN_IF_ERROR(ctx.RequiredInput(0, &A));
    ONYX_RETURN_IF_ERROR(ctx.RequiredInput(3, &B));
    ONYX_CHECK_ARG(B->type() == A->type(), op, ": input 3 (B) has type ", ElemTypeName(B->type()),
                   " but input 0 (A) has type ", ElemTypeName(A->type()));
    QParam qa, qb, qc;
    ONYX_RETURN_IF_ERROR(ReadQParam(ctx, op, 1, "A_scale", "A_zero_point", A, false, &qa));
    ONYX_RETURN_IF_ERROR(ReadQParam(ctx, op, 4, "B_scale", "B_zero_point", A, false, &qb));
    ONYX_RETURN_IF_ERROR(ReadQParam(ctx, op, 6, "C_scale", "C_zero_point", A, true, &qc));
    Dims out_dims;
    ONYX_RETURN_IF_ERROR(BroadcastShapes(A->dims(), B->dims(), &out_dims, op));
    BroadcastPlan plan;
    ONYX_RETURN_IF_ERROR(plan.Init({A->dims(), B->dims()}, out_dims, op));
    Tensor* C = ctx.Output(0, out_dims, A->type());
    if (C == nullptr || C->size() == 0) return Status::OK();
    return DispatchOver(Int8TypeSet{}, A->type(), op, [&](auto tag) -> Status {
      using T = typename decltype(tag)::type;
      const T* a = A->data<T>();
      const T* b = B->data<T>();
      T* c = C->data<T>();
      const int64_t sa = plan.inner_step(0), sb = plan.inner_step(1);
      if (kind_ == BinaryKind::kAdd) {
        const float rac = qa.scale / qc.scale, rbc = qb.scale / qc.scale;
        const float fixed = static_cast<float>(qc.zp) -
                            (rac * static_cast<float>(qa.zp) + rbc * static_cast<float>(qb.zp));
        const bool fma = fastmath::BestIsa() >= fastmath::Isa::kAvx2 && FmaAvailable();
        ParallelForEachSegment(plan, ctx.threads(), [&](int64_t off, const int64_t* in, int64_t len) {
          // Locals: a uint8_t store may alias the captures (see qlinear_common.h).
          QAddSegment<T>(a + in[0], sa, b + in[1], sb, c + off, len, fixed, rac, rbc, fma);
        });
      } else {
        const float ratio = qa.scale * qb.scale / qc.scale;
        const float zc = static_cast<float>(qc.zp);
        ParallelForEachSegment(plan, ctx.threads(), [&](int64_t off, const int64_t* in, int64_t len) {
          const T* __restrict pa = a + in[0];
          const T* __restrict pb = b + in[1];
          T* __restrict pc = c + off;
          const int64_t da = sa, db = sb;
          const int32_t za = qa.zp, zb = qb.zp;
          const float r = ratio, z = zc;
          for (int64_t i = 0; i < len; ++i) {
            const int32_t p = (static_cast<int32_t>(pa[i * da]) - za) * (static_cast<int32_t>(pb[i * db]) - zb);
            pc[i] = SaturateRound<T>(static_cast<float>(p) * r + z);
          }
        });
      }
      return Status::OK();
    });
  }

 private:
  BinaryKind kind_;
};

// The unary ops read X, X_scale, X_zp?, Y_scale, Y_zp? (Y's type is X's).
const char* const kUnaryNames[4] = {"X_scale", "X_zero_point", "Y_scale", "Y_zero_point"};

enum class TableKind { kSigmoid, kLeakyRelu };

// y = table[x]: the table holds quantize(f(dequantize(x))) for all 256 codes.
class QLinearTableKernel final : public OpKernel {
 public:
  explicit QLinearTableKernel(TableKind kind) : kind_(kind) {}
  Status Init(const KernelInfo& info) {
    alpha_ = info.AttrFloat("alpha", 0.01f);
    return Status::OK();
  }

  Status Compute(KernelContext& ctx) const override {
    const char* op = kind_ == TableKind::kSigmoid ? "QLinearSigmoid" : "QLinearLeakyRelu";
    const Tensor* X = nullptr;
    QParam qx, qy;
    ONYX_RETURN_IF_ERROR(qlinear::ReadUnaryQParams(ctx, op, kUnaryNames, &X, &qx, &qy));
    Tensor* Y = ctx.Output(0, X->dims(), X->type());
    if (Y == nullptr || Y->size() == 0) return Status::OK();
    return DispatchOver(Int8TypeSet{}, X->type(), op, [&](auto tag) -> Status {
      using T = typename decltype(tag)::type;
      T table[256];
      for (int i = 0; i < 256; ++i) {
        const T code = static_cast<T>(static_cast<uint8_t>(i));
        const float v = qx.scale * static_cast<float>(static_cast<int32_t>(code) - qx.zp);
        float f;
        if (kind_ == TableKind::kSigmoid) f = v >= 0.f ? 1.f / (1.f + std::exp(-v)) : std::exp(v) / (1.f + std::exp(v));
        else f = v >= 0.f ? v : v * alpha_;
        table[i] = SaturateRound<T>(f / qy.scale + static_cast<float>(qy.zp));
      }
      const T* x = X->data<T>();
      T* y = Y->data<T>();
      ThreadPool::For(ctx.threads(), X->size(), 1 << 16, [&](int64_t begin, int64_t end) {
        for (int64_t i = begin; i < end; ++i) y[i] = table[static_cast<uint8_t>(x[i])];
      });
      return Status::OK();
    });
  }

 private:
  TableKind kind_;
  float alpha_ = 0.01f;
};

// onnxruntime's QLinearSoftmax: exp((code - 255 + shift) * x_scale) for each
// of the 256 codes, shift = max(0, log(FLT_MAX / D) - 5) / x_scale keeping the
// sum of D terms finite. The row's maximum is aligned with the table's top, so
// x_zero_point cancels out. y = round(e * floor(1 / y_scale) / sum) + y_zp.
void SoftmaxTable(float x_scale, int64_t reduce_len, float* table) {
  double shift = std::log(static_cast<double>(std::numeric_limits<float>::max()) / static_cast<double>(reduce_len));
  shift = std::max(0.0, shift - 5.0) / x_scale;
  for (int i = 0; i < 256; ++i)
    table[i] = static_cast<float>(std::exp((static_cast<double>(i) - 255 + shift) * static_cast<double>(x_scale)));
}

class QLinearSoftmaxKernel final : public OpKernel {
 public:
  Status Init(const KernelInfo& info) {
    const Attribute* opset = info.Attr("opset");
    ONYX_CHECK(opset != nullptr, ErrorCode::kInvalidGraph,
               "QLinearSoftmax: attribute opset (the Softmax opset it replaces) is required");
    opset_ = opset->i;
    axis_ = info.AttrInt("axis", opset_ < 13 ? 1 : -1);
    return Status::OK();
  }

  Status Compute(KernelContext& ctx) const override {
    const char* op = "QLinearSoftmax";
    const Tensor* X = nullptr;
    QParam qx, qy;
    ONYX_RETURN_IF_ERROR(qlinear::ReadUnaryQParams(ctx, op, kUnaryNames, &X, &qx, &qy));
    const Dims& xd = X->dims();
    const int64_t rank = static_cast<int64_t>(xd.size());
    int64_t axis = axis_ < 0 ? axis_ + rank : axis_;
    ONYX_CHECK_ARG(axis >= 0 && axis < std::max<int64_t>(rank, 1), op, ": attribute axis ", axis_,
                   " is out of range for input 0 (X) of shape ", ShapeToString(xd));
    Tensor* Y = ctx.Output(0, xd, X->type());
    if (Y == nullptr || Y->size() == 0) return Status::OK();
    // Before opset 13 the rows are the input flattened at axis; from 13 on
    // only the axis itself is reduced (a strided row).
    int64_t outer = 1, D = 1, inner = 1;
    for (int64_t i = 0; i < rank; ++i) {
      if (i < axis) outer *= xd[i];
      else if (i == axis || opset_ < 13) D *= xd[i];
      else inner *= xd[i];
    }
    float table[256];
    SoftmaxTable(qx.scale, D, table);
    const float y_mult = std::floor(1.f / qy.scale);
    return DispatchOver(Int8TypeSet{}, X->type(), op, [&](auto tag) -> Status {
      using T = typename decltype(tag)::type;
      const T* x = X->data<T>();
      T* y = Y->data<T>();
      ThreadPool::For(ctx.threads(), outer * inner, std::max<int64_t>(1, 4096 / D), [&](int64_t begin, int64_t end) {
        for (int64_t r = begin; r < end; ++r) {
          const int64_t base = (r / inner) * D * inner + r % inner;
          int32_t xmax = std::numeric_limits<int32_t>::min();
          for (int64_t j = 0; j < D; ++j) xmax = std::max<int32_t>(xmax, x[base + j * inner]);
          // Table index of code v: v - xmax + 255.
          const float* t = table + 255 - xmax;
          float sum = 0.f;
          for (int64_t j = 0; j < D; ++j) sum += t[static_cast<int32_t>(x[base + j * inner])];
          for (int64_t j = 0; j < D; ++j) {
            const float e = t[static_cast<int32_t>(x[base + j * inner])];
            y[base + j * inner] =
                sum > 0.f ? SaturateRound<T>(std::nearbyint(e * y_mult / sum) + static_cast<float>(qy.zp))
                          : static_cast<T>(qy.zp);
          }
        }
      });
      return Status::OK();
    });
  }

 private:
  int64_t opset_ = 13;
  int64_t axis_ = -1;
};

}  // namespace

ONYX_REGISTER_KERNEL(QLinearBinaryKernel, "com.microsoft", "QLinearAdd", 1, kMaxVersion, Int8TypeSet::ElemTypes(),
                     BinaryKind::kAdd);
ONYX_REGISTER_KERNEL(QLinearBinaryKernel, "com.microsoft", "QLinearMul", 1, kMaxVersion, Int8TypeSet::ElemTypes(),
                     BinaryKind::kMul);
ONYX_REGISTER_KERNEL(QLinearTableKernel, "com.microsoft", "QLinearSigmoid", 1, kMaxVersion, Int8TypeSet::ElemTypes(),
                     TableKind::kSigmoid);
ONYX_REGISTER_KERNEL(QLinearTableKernel, "com.microsoft", "QLinearLeakyRelu", 1, kMaxVersion,
                     Int8TypeSet::ElemTypes(), TableKind::kLeakyRelu);
ONYX_REGISTER_KERNEL(QLinearSoftmaxKernel, "com.microsoft", "QLinearSoftmax", 1, kMaxVersion,
                     Int8TypeSet::ElemTypes());

}  // namespace onyx
