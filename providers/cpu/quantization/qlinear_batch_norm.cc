// com.onyxruntime QLinearBatchNormalization: the group
//   QuantizeLinear(Relu?(BatchNormalization(DequantizeLinear(X), scale, B, mean, var)))
// in one pass over int8/uint8 data (optimizer/qdq_batch_norm_fusion.cc writes
// it; onnxruntime has no such operator and runs the group as three or four
// float passes). Inputs: X, X_scale, X_zero_point, scale, B, input_mean,
// input_var (BatchNormalization's, float, one per channel), Y_scale,
// Y_zero_point (required: it gives Y's type). Attributes: epsilon (as
// BatchNormalization's), activation ("" or "Relu"), channels_last (0: X is
// [N, C, ...]; 1: [N, ..., C], as nhwc_transformer.cc runs it).
// Each element takes the steps of the kernels it replaces, in float, in the
// same order and never fused into one FMA, so the result is theirs bit for bit:
//   v = (float(x) - zx) * sx                        DequantizeLinear
//   v = v * a[c] + b[c], a = scale / sqrt(var + eps), b = B - mean * a   BatchNormalization
//   v = max(v, 0)                                   Relu (the activation)
//   y = saturate(round_half_even(v / sy) + zy)      QuantizeLinear (NaN: zy)
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "providers/cpu/common/fast_math.h"
#include "providers/cpu/quantization/qlinear_common.h"
#include "providers/kernel.h"

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#define ONYX_QBN_X86 1
#endif

namespace onyx {
namespace {

using qlinear::Int8TypeSet;

// What a run of elements needs: the quantization parameters and, per
// element, the channel's a and b (a[i], b[i] for i in the run; a
// channels-first run repeats one channel's value, see Row below).
struct QbnParams {
  float zx, sx, sy, lo, hi;  // lo/hi: Y's range less zy, as floats
  int32_t zy;
  bool relu;
};

template <typename TX, typename TY>
inline TY One(TX x, float a, float b, const QbnParams& p) {
  float v = (static_cast<float>(x) - p.zx) * p.sx;
  const float t = v * a;
  v = t + b;
  if (p.relu) v = v > 0.f ? v : 0.f;
  v = v / p.sy;
  v = v == v ? v : 0.f;
  v = v < p.lo ? p.lo : (v > p.hi ? p.hi : v);
  return static_cast<TY>(static_cast<int32_t>(std::nearbyint(v)) + p.zy);
}

// n elements; a/b point at per-element values (step 1) or one value (step 0).
template <typename TX, typename TY>
void RowBase(const TX* x, int64_t n, const float* a, const float* b, int64_t step, const QbnParams& p, TY* y) {
  for (int64_t i = 0; i < n; ++i) y[i] = One<TX, TY>(x[i], a[i * step], b[i * step], p);
}

#ifdef ONYX_QBN_X86
// 8 lanes: AVX2 without FMA in its target, so the multiply and add stay two
// roundings; the conversion rounds half to even (MXCSR's default).
template <typename TX, typename TY>
__attribute__((target("avx2"))) void RowAvx2(const TX* x, int64_t n, const float* a, const float* b, int64_t step,
                                             const QbnParams& p, TY* y) {
  const __m256 vzx = _mm256_set1_ps(p.zx), vsx = _mm256_set1_ps(p.sx), vsy = _mm256_set1_ps(p.sy);
  const __m256 vlo = _mm256_set1_ps(p.lo), vhi = _mm256_set1_ps(p.hi), zero = _mm256_setzero_ps();
  const __m256i vzy = _mm256_set1_epi32(p.zy);
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) {
    const __m128i q = _mm_loadl_epi64(reinterpret_cast<const __m128i*>(x + i));
    const __m256i w = std::is_same<TX, uint8_t>::value ? _mm256_cvtepu8_epi32(q) : _mm256_cvtepi8_epi32(q);
    __m256 v = _mm256_mul_ps(_mm256_sub_ps(_mm256_cvtepi32_ps(w), vzx), vsx);
    const __m256 va = step ? _mm256_loadu_ps(a + i) : _mm256_set1_ps(a[0]);
    const __m256 vb = step ? _mm256_loadu_ps(b + i) : _mm256_set1_ps(b[0]);
    v = _mm256_add_ps(_mm256_mul_ps(v, va), vb);
    if (p.relu) v = _mm256_max_ps(v, zero);
    v = _mm256_div_ps(v, vsy);
    v = _mm256_and_ps(v, _mm256_cmp_ps(v, v, _CMP_ORD_Q));  // NaN -> 0
    v = _mm256_min_ps(_mm256_max_ps(v, vlo), vhi);
    const __m256i r = _mm256_add_epi32(_mm256_cvtps_epi32(v), vzy);  // in TY's range
    const __m128i r16 = _mm_packs_epi32(_mm256_castsi256_si128(r), _mm256_extracti128_si256(r, 1));
    const __m128i r8 = std::is_same<TY, uint8_t>::value ? _mm_packus_epi16(r16, r16) : _mm_packs_epi16(r16, r16);
    _mm_storel_epi64(reinterpret_cast<__m128i*>(y + i), r8);
  }
  RowBase<TX, TY>(x + i, n - i, a + i * step, b + i * step, step, p, y + i);
}

// 16 lanes, the tail masked. AVX-512's target allows FMA: the masked
// multiply and add are builtins the compiler does not contract.
template <typename TX, typename TY>
__attribute__((target("avx512f,avx512bw,avx512vl,avx2"))) void RowAvx512(const TX* x, int64_t n, const float* a,
                                                                        const float* b, int64_t step,
                                                                        const QbnParams& p, TY* y) {
  const __m512 vzx = _mm512_set1_ps(p.zx), vsx = _mm512_set1_ps(p.sx), vsy = _mm512_set1_ps(p.sy);
  const __m512 vlo = _mm512_set1_ps(p.lo), vhi = _mm512_set1_ps(p.hi), zero = _mm512_setzero_ps();
  const __m512i vzy = _mm512_set1_epi32(p.zy);
  const __m128i z128 = _mm_setzero_si128();
  for (int64_t i = 0; i < n; i += 16) {
    const __mmask16 k = n - i >= 16 ? static_cast<__mmask16>(0xFFFF) : static_cast<__mmask16>((1u << (n - i)) - 1);
    const __m128i q = _mm_maskz_loadu_epi8(k, x + i);
    const __m512i w = std::is_same<TX, uint8_t>::value ? _mm512_maskz_cvtepu8_epi32(k, q) : _mm512_maskz_cvtepi8_epi32(k, q);
    __m512 v = _mm512_maskz_mul_ps(k, _mm512_maskz_sub_ps(k, _mm512_maskz_cvtepi32_ps(k, w), vzx), vsx);
    const __m512 va = step ? _mm512_maskz_loadu_ps(k, a + i) : _mm512_set1_ps(a[0]);
    const __m512 vb = step ? _mm512_maskz_loadu_ps(k, b + i) : _mm512_set1_ps(b[0]);
    v = _mm512_maskz_add_ps(k, _mm512_maskz_mul_ps(k, v, va), vb);
    if (p.relu) v = _mm512_maskz_max_ps(k, v, zero);
    v = _mm512_maskz_div_ps(k, v, vsy);
    const __mmask16 ordered = _mm512_cmp_ps_mask(v, v, _CMP_ORD_Q);
    v = _mm512_maskz_min_ps(k, _mm512_maskz_max_ps(k, v, vlo), vhi);
    const __m512i r = _mm512_add_epi32(_mm512_maskz_cvtps_epi32(ordered, v), vzy);
    const __m128i packed = std::is_same<TY, uint8_t>::value ? _mm512_mask_cvtusepi32_epi8(z128, 0xFFFF, r)
                                                           : _mm512_mask_cvtsepi32_epi8(z128, 0xFFFF, r);
    _mm_mask_storeu_epi8(y + i, k, packed);
  }
}
#endif

template <typename TX, typename TY>
void Row(const TX* x, int64_t n, const float* a, const float* b, int64_t step, const QbnParams& p, TY* y) {
#ifdef ONYX_QBN_X86
  const fastmath::Isa isa = fastmath::BestIsa();
  if (isa == fastmath::Isa::kAvx512) return RowAvx512<TX, TY>(x, n, a, b, step, p, y);
  if (isa == fastmath::Isa::kAvx2) return RowAvx2<TX, TY>(x, n, a, b, step, p, y);
#endif
  RowBase<TX, TY>(x, n, a, b, step, p, y);
}

class QLinearBatchNormKernel final : public OpKernel {
 public:
  Status Init(const KernelInfo& info) {
    epsilon_ = info.AttrFloat("epsilon", 1e-5f);
    ONYX_CHECK(epsilon_ >= 0.f, ErrorCode::kInvalidGraph,
               "QLinearBatchNormalization: attribute epsilon must be >= 0, got ", epsilon_);
    const std::string act = info.AttrString("activation", "");
    ONYX_CHECK(act.empty() || act == "Relu", ErrorCode::kInvalidGraph,
               "QLinearBatchNormalization: attribute activation must be \"\" or \"Relu\", got \"", act, "\"");
    relu_ = act == "Relu";
    channels_last_ = info.AttrInt("channels_last", 0) != 0;
    return Status::OK();
  }

  Status Compute(KernelContext& ctx) const override {
    const char* op = "QLinearBatchNormalization";
    const Tensor* x = nullptr;
    const Tensor* yz = nullptr;
    ONYX_RETURN_IF_ERROR(ctx.RequiredInput(0, &x));
    ONYX_RETURN_IF_ERROR(ctx.RequiredInput(8, &yz));
    const Dims& xd = x->dims();
    ONYX_CHECK_ARG(xd.size() >= 2, op, ": input 0 (X) ", ShapeToString(xd), " must have rank >= 2 (",
                   channels_last_ ? "N, ..., C" : "N, C, ...", ")");
    const int64_t C = channels_last_ ? xd.back() : xd[1];
    qlinear::QParam qx, qy;
    ONYX_RETURN_IF_ERROR(qlinear::ReadQParam(ctx, op, 1, "X_scale", "X_zero_point", x, false, &qx));
    std::vector<float> ys;
    std::vector<int32_t> zy;
    ONYX_RETURN_IF_ERROR(qlinear::ReadScales(ctx.Input(7), op, 7, "Y_scale", -1, "", 1, true, &ys));
    ONYX_RETURN_IF_ERROR(qlinear::ReadZeroPoints(yz, nullptr, op, 8, "Y_zero_point", -1, "", 1, &zy));
    static const char* kNames[] = {"scale", "B", "input_mean", "input_var"};
    const float* prm[4];
    for (int i = 0; i < 4; ++i) {
      const Tensor* t = nullptr;
      ONYX_RETURN_IF_ERROR(ctx.RequiredInput(3 + i, &t));
      ONYX_CHECK_ARG(t->type() == ElemType::kFloat && t->rank() == 1 && t->dims()[0] == C, op, ": input ", 3 + i,
                     " (", kNames[i], ") ", ElemTypeName(t->type()), " ", ShapeToString(t->dims()),
                     " must be float of shape [", C, "] (one per channel of X ", ShapeToString(xd), ")");
      prm[i] = t->data<float>();
    }
    ONYX_CHECK_ARG(ctx.Input(1)->type() == ElemType::kFloat && ctx.Input(7)->type() == ElemType::kFloat, op,
                   ": inputs 1 (X_scale) and 7 (Y_scale) must be float");
    // BatchNormalization's own folding, in float.
    std::vector<float> a(static_cast<size_t>(C)), b(static_cast<size_t>(C));
    for (int64_t c = 0; c < C; ++c) {
      a[c] = prm[0][c] / std::sqrt(prm[3][c] + epsilon_);
      b[c] = prm[1][c] - prm[2][c] * a[c];
    }
    Tensor* y = ctx.Output(0, xd, yz->type());
    if (y == nullptr || y->size() == 0) return Status::OK();
    return DispatchOver(Int8TypeSet{}, x->type(), op, [&](auto xtag) -> Status {
      using TX = typename decltype(xtag)::type;
      return DispatchOver(Int8TypeSet{}, yz->type(), op, [&](auto ytag) -> Status {
        using TY = typename decltype(ytag)::type;
        QbnParams p;
        p.zx = static_cast<float>(qx.zp);
        p.sx = qx.scale;
        p.sy = ys[0];
        p.zy = zy[0];
        p.lo = static_cast<float>(std::numeric_limits<TY>::min() - zy[0]);
        p.hi = static_cast<float>(std::numeric_limits<TY>::max() - zy[0]);
        p.relu = relu_;
        const TX* xv = x->data<TX>();
        TY* yv = y->data<TY>();
        const int64_t total = x->size();
        if (channels_last_) {  // rows of C channels
          const int64_t rows = total / C;
          ThreadPool::For(ctx.threads(), rows, std::max<int64_t>(1, 32768 / C), [&](int64_t r0, int64_t r1) {
            for (int64_t r = r0; r < r1; ++r) Row<TX, TY>(xv + r * C, C, a.data(), b.data(), 1, p, yv + r * C);
          });
        } else {  // planes of one channel
          const int64_t run = total / (xd[0] * C);
          ThreadPool::For(ctx.threads(), xd[0] * C, std::max<int64_t>(1, 32768 / std::max<int64_t>(run, 1)),
                          [&](int64_t r0, int64_t r1) {
                            for (int64_t r = r0; r < r1; ++r)
                              Row<TX, TY>(xv + r * run, run, &a[r % C], &b[r % C], 0, p, yv + r * run);
                          });
        }
        return Status::OK();
      });
    });
  }

 private:
  float epsilon_ = 1e-5f;
  bool relu_ = false;
  bool channels_last_ = false;
};

}  // namespace

ONYX_REGISTER_KERNEL(QLinearBatchNormKernel, "com.onyxruntime", "QLinearBatchNormalization", 1, kMaxVersion,
                     Int8TypeSet::ElemTypes());

}  // namespace onyx
