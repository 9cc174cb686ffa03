// QuantizeLinear and DequantizeLinear: per-tensor, per-axis (opset 13+) and
// blocked (opset 21+) scales and zero points, into and out of the 8- and
// 16-bit integers, int32 (dequantize only), the packed 4- and 2-bit integers and the
// narrow floats (float8 from opset 19, float4e2m1 from 23).
//
//   QuantizeLinear:   y = saturate(round_half_even(x / scale) + zero_point)
//   DequantizeLinear: y = (x - zero_point) * scale
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <type_traits>
#include <vector>

#include "providers/cpu/common/broadcast.h"
#include "providers/cpu/common/dispatch.h"
#include "providers/cpu/common/fast_math.h"
#include "providers/cpu/common/narrow_float.h"
#include "providers/cpu/quantization/int8_gemm.h"
#include "providers/kernel.h"

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#endif

namespace onyx {

namespace {

// ---------------------------------------------------------------------------
// The quantized element kinds, as tags: each knows how to read element i of
// its storage as a float and how to make its code from a float.

template <typename T>
struct IntQ {  // int8, uint8, int16, uint16, int32: stored as themselves
  using Storage = T;
  static constexpr bool kPacked = false;
  static constexpr bool kInteger = true;
  static constexpr double kLo = static_cast<double>(std::numeric_limits<T>::lowest());
  static constexpr double kHi = static_cast<double>(std::numeric_limits<T>::max());
  static float Load(const void* p, int64_t i) { return static_cast<float>(static_cast<const T*>(p)[i]); }
};

// One packed code of `bits` bits: element i of several-per-byte storage, low bits first.
template <int kBits>
inline uint8_t PackedCode(const void* p, int64_t i) {
  constexpr int kPer = 8 / kBits;
  const uint8_t byte = static_cast<const uint8_t*>(p)[i / kPer];
  return static_cast<uint8_t>((byte >> ((i % kPer) * kBits)) & ((1u << kBits) - 1u));
}

template <int kBitsN, bool kSigned>
struct PackedIntQ {  // int4/uint4 (two per byte) and int2/uint2 (four per byte)
  static constexpr int kBits = kBitsN;
  static constexpr bool kPacked = true;
  static constexpr bool kInteger = true;
  static constexpr double kLo = kSigned ? -static_cast<double>(1 << (kBits - 1)) : 0.0;
  static constexpr double kHi = kSigned ? static_cast<double>((1 << (kBits - 1)) - 1) : static_cast<double>((1 << kBits) - 1);
  static float Load(const void* p, int64_t i) {
    const int n = PackedCode<kBits>(p, i);
    return static_cast<float>(kSigned && n >= (1 << (kBits - 1)) ? n - (1 << kBits) : n);
  }
};

template <typename Fmt>
struct FloatQ {  // float8 (one byte each) and float4e2m1 (packed)
  using Storage = uint8_t;  // the byte-wide ones; the packed ones go through PackCodes
  static constexpr int kBits = Fmt::kBits;
  static constexpr bool kPacked = Fmt::kBits == 4;
  static constexpr bool kInteger = false;
  static float Load(const void* p, int64_t i) {
    const uint8_t code = kPacked ? PackedCode<4>(p, i) : static_cast<const uint8_t*>(p)[i];
    return minifloat::DecodeMini<Fmt>(code);
  }
};

// Calls fn(tag) for the quantized kind stored as `t`.
template <typename F>
Status DispatchQuantized(ElemType t, const char* what, bool allow_int32, F&& fn) {
  switch (t) {
    case ElemType::kInt8: return fn(IntQ<int8_t>{});
    case ElemType::kUint8: return fn(IntQ<uint8_t>{});
    case ElemType::kInt16: return fn(IntQ<int16_t>{});
    case ElemType::kUint16: return fn(IntQ<uint16_t>{});
    case ElemType::kInt32:
      if (allow_int32) return fn(IntQ<int32_t>{});
      break;
    case ElemType::kInt4: return fn(PackedIntQ<4, true>{});
    case ElemType::kUint4: return fn(PackedIntQ<4, false>{});
    case ElemType::kInt2: return fn(PackedIntQ<2, true>{});
    case ElemType::kUint2: return fn(PackedIntQ<2, false>{});
    case ElemType::kFloat8E4M3FN: return fn(FloatQ<minifloat::E4M3FN>{});
    case ElemType::kFloat8E4M3FNUZ: return fn(FloatQ<minifloat::E4M3FNUZ>{});
    case ElemType::kFloat8E5M2: return fn(FloatQ<minifloat::E5M2>{});
    case ElemType::kFloat8E5M2FNUZ: return fn(FloatQ<minifloat::E5M2FNUZ>{});
    case ElemType::kFloat4E2M1: return fn(FloatQ<minifloat::E2M1>{});
    default: break;
  }
  return UnsupportedType(what, t);
}

// The float types scales, inputs of QuantizeLinear and outputs of
// DequantizeLinear come in.
using ScaleTypeSet = TypeSet<float, Float16, BFloat16>;

// Value of element i of a float-typed tensor (float, float16, bfloat16, or
// int32 for QuantizeLinear's x) as a double.
template <typename T>
double LoadReal(const void* p, int64_t i) {
  return static_cast<double>(static_cast<typename CalcType<T>::type>(static_cast<const T*>(p)[i]));
}

// Rounds `v` to the precision of `t` (the type the division is done in).
double RoundTo(ElemType t, double v) {
  switch (t) {
    case ElemType::kFloat: return static_cast<double>(static_cast<float>(v));
    case ElemType::kFloat16: {
      Float16 h(static_cast<float>(v));  // float then half: the quotient is exact enough in float
      return static_cast<double>(static_cast<float>(h));
    }
    case ElemType::kBFloat16: {
      BFloat16 h(static_cast<float>(v));
      return static_cast<double>(static_cast<float>(h));
    }
    default: return v;
  }
}

// ---------------------------------------------------------------------------
// Where each element's scale and zero point are: x is walked as
// [outer, axis_len, inner]; the scale index of (o, a, i) is
//   per-tensor: 0; per-axis: a; blocked: (o * blocks + a / block) * inner + i.

struct QuantLayout {
  int64_t outer = 1, axis_len = 1, inner = 1;
  int64_t block = 0;   // > 0: blocked
  int64_t blocks = 1;  // scale's extent along the axis when blocked
  bool per_tensor = true;

  int64_t ScaleIndex(int64_t o, int64_t a, int64_t i) const {
    if (per_tensor) return 0;
    if (block == 0) return a;
    return (o * blocks + a / block) * inner + i;
  }
};

// Checks the scale (input 1) and zero point (input 2, may be null) against x
// and fills `lay`. `op`, `sname` and `zname` name the node's inputs in errors.
Status PlanLayout(const char* op, const char* sname, const char* zname, int opset, const Tensor& x,
                  const Tensor& scale, const Tensor* zp, int64_t axis_attr, int64_t block_size, QuantLayout* lay) {
  const Dims& xd = x.dims();
  const Dims& sd = scale.dims();
  const int64_t r = static_cast<int64_t>(xd.size());
  // A one-element scale and zero point may differ in rank ([] and [1]), as
  // onnx's own tests write them.
  const bool both_single = zp != nullptr && scale.size() == 1 && zp->size() == 1 && sd.size() <= 1 &&
                           zp->dims().size() <= 1;
  if (zp != nullptr && !both_single) {
    ONYX_CHECK_ARG(zp->dims() == sd, op, ": input 2 (", zname, ") has shape ", ShapeToString(zp->dims()),
                   " but input 1 (", sname, ") has shape ", ShapeToString(sd), "; they must match");
  }
  ONYX_CHECK_ARG(block_size >= 0, op, ": attribute block_size must be >= 0, got ", block_size);
  if (block_size == 0 && scale.size() == 1 && sd.size() <= 1) {
    lay->per_tensor = true;
    return Status::OK();
  }
  ONYX_CHECK_ARG(opset >= 13 || sd.empty(), op, ": input 1 (", sname, ") must be a scalar before opset 13, got shape ",
                 ShapeToString(sd));
  ONYX_CHECK_ARG(axis_attr >= -r && axis_attr < r, op, ": attribute axis ", axis_attr,
                 " is out of range for input 0 of rank ", r);
  const int64_t axis = axis_attr < 0 ? axis_attr + r : axis_attr;
  lay->per_tensor = false;
  lay->outer = 1;
  lay->inner = 1;
  for (int64_t k = 0; k < axis; ++k) lay->outer *= xd[k];
  lay->axis_len = xd[axis];
  for (int64_t k = axis + 1; k < r; ++k) lay->inner *= xd[k];
  if (block_size == 0) {
    ONYX_CHECK_ARG(sd.size() == 1 && sd[0] == xd[axis], op, ": input 1 (", sname, ") of shape ", ShapeToString(sd),
                   " must be a scalar or a 1-D tensor of length ", xd[axis], " (input 0 shape ", ShapeToString(xd),
                   " along axis ", axis_attr, ")");
    lay->block = 0;
    return Status::OK();
  }
  ONYX_CHECK_ARG(opset >= 21, op, ": blocked quantization (block_size ", block_size, ") needs opset 21, node has ",
                 opset);
  bool ok = static_cast<int64_t>(sd.size()) == r;
  for (int64_t k = 0; ok && k < r; ++k) {
    if (k == axis)
      ok = sd[k] == (xd[k] + block_size - 1) / block_size;
    else
      ok = sd[k] == xd[k];
  }
  ONYX_CHECK_ARG(ok, op, ": input 1 (", sname, ") of shape ", ShapeToString(sd), " does not fit input 0 shape ",
                 ShapeToString(xd), " with block_size ", block_size, " along axis ", axis_attr,
                 " (expected the same shape with ceil(", xd[axis], "/", block_size, ") on that axis)");
  lay->block = block_size;
  lay->blocks = sd[axis];
  return Status::OK();
}

// Runs fn(element_index, scale_index) over every element, split by rows of
// `inner` elements across `pool`.
template <typename F>
void ForEachQuantElement(const QuantLayout& lay, int64_t n, ThreadPool* pool, const F& fn) {
  if (lay.per_tensor) {
    ThreadPool::For(pool, n, 1 << 14, [&](int64_t b, int64_t e) {
      for (int64_t i = b; i < e; ++i) fn(i, 0);
    });
    return;
  }
  const int64_t rows = lay.outer * lay.axis_len;
  ThreadPool::For(pool, rows, std::max<int64_t>(1, (1 << 14) / std::max<int64_t>(1, lay.inner)),
                  [&](int64_t b, int64_t e) {
    for (int64_t row = b; row < e; ++row) {
      const int64_t o = row / lay.axis_len, a = row % lay.axis_len;
      const int64_t base = row * lay.inner;
      for (int64_t i = 0; i < lay.inner; ++i) fn(base + i, lay.ScaleIndex(o, a, i));
    }
  });
}

// Packs 4-bit codes (one per byte in `codes`) two per byte, low nibble first.
// Packs `bits`-bit codes several per byte, the first in the lowest bits.
void PackCodes(const std::vector<uint8_t>& codes, int bits, uint8_t* dst) {
  const size_t n = codes.size(), per = static_cast<size_t>(8 / bits);
  const uint8_t mask = static_cast<uint8_t>((1u << bits) - 1u);
  for (size_t j = 0; j < (n + per - 1) / per; ++j) {
    uint8_t b = 0;
    for (size_t k = 0; k < per && j * per + k < n; ++k)
      b = static_cast<uint8_t>(b | ((codes[j * per + k] & mask) << (k * static_cast<size_t>(bits))));
    dst[j] = b;
  }
}

bool IsScaleType(ElemType t) {
  return t == ElemType::kFloat || t == ElemType::kFloat16 || t == ElemType::kBFloat16;
}

// ---------------------------------------------------------------------------

class QuantizeLinearKernel final : public OpKernel {
 public:
  Status Init(const KernelInfo& info) {
    opset_ = info.opset();
    axis_ = info.AttrInt("axis", 1);
    saturate_ = info.AttrInt("saturate", 1) != 0;
    block_size_ = info.AttrInt("block_size", 0);
    output_dtype_ = info.AttrInt("output_dtype", 0);
    precision_ = info.AttrInt("precision", 0);
    ONYX_CHECK(precision_ == 0 || IsScaleType(static_cast<ElemType>(precision_)), ErrorCode::kInvalidGraph,
               "QuantizeLinear: attribute precision must be float, float16 or bfloat16, got ", precision_);
    return Status::OK();
  }

  Status Compute(KernelContext& ctx) const override {
    const char* op = "QuantizeLinear";
    const Tensor* X = nullptr;
    const Tensor* S = nullptr;
    ONYX_RETURN_IF_ERROR(ctx.RequiredInput(0, &X));
    ONYX_RETURN_IF_ERROR(ctx.RequiredInput(1, &S));
    const Tensor* Z = ctx.Input(2);
    ONYX_CHECK_ARG(X->type() == ElemType::kFloat || X->type() == ElemType::kFloat16 ||
                       X->type() == ElemType::kBFloat16 || X->type() == ElemType::kInt32,
                   op, ": input 0 (x) has unsupported type ", ElemTypeName(X->type()));
    ONYX_CHECK_ARG(IsScaleType(S->type()), op, ": input 1 (y_scale) has unsupported type ",
                   ElemTypeName(S->type()));
    ElemType out = output_dtype_ != 0 ? static_cast<ElemType>(output_dtype_) : ElemType::kUint8;
    if (Z != nullptr) {
      ONYX_CHECK_ARG(output_dtype_ == 0 || static_cast<ElemType>(output_dtype_) == Z->type(), op,
                     ": attribute output_dtype (", ElemTypeName(static_cast<ElemType>(output_dtype_)),
                     ") differs from the type of input 2 (y_zero_point), ", ElemTypeName(Z->type()));
      out = Z->type();
    }
    QuantLayout lay;
    ONYX_RETURN_IF_ERROR(PlanLayout(op, "y_scale", "y_zero_point", opset_, *X, *S, Z, axis_, block_size_, &lay));
    // The division's precision: the attribute, else the common type of x and
    // the scale (a float16 and a float divide in float, as numpy does).
    ElemType prec = precision_ != 0 ? static_cast<ElemType>(precision_)
                    : X->type() == S->type() ? S->type()
                    : X->type() == ElemType::kInt32 ? ElemType::kDouble
                                                    : ElemType::kFloat;
    return DispatchQuantized(out, op, /*allow_int32=*/false, [&](auto qtag) -> Status {
      using Q = decltype(qtag);
      return DispatchOver(TypeSet<float, Float16, BFloat16, int32_t>{}, X->type(), op, [&](auto xtag) -> Status {
        using TX = typename decltype(xtag)::type;
        return DispatchOver(ScaleTypeSet{}, S->type(), op, [&](auto stag) -> Status {
          using TS = typename decltype(stag)::type;
          return Run<Q, TX, TS>(ctx, *X, *S, Z, lay, out, prec);
        });
      });
    });
  }

 private:
  template <typename Q, typename TX, typename TS>
  Status Run(KernelContext& ctx, const Tensor& X, const Tensor& S, const Tensor* Z, const QuantLayout& lay,
             ElemType out, ElemType prec) const {
    Tensor* Y = ctx.Output(0, X.dims(), out);
    if (Y == nullptr || X.size() == 0) return Status::OK();
    const void* x = X.raw();
    const void* s = S.raw();
    const void* z = Z != nullptr ? Z->raw() : nullptr;
    if constexpr (Q::kInteger && !Q::kPacked && std::is_same<TX, float>::value && std::is_same<TS, float>::value) {
      if constexpr (sizeof(typename Q::Storage) == 1) {
        // The common case (float x, one float scale, 8-bit codes) in float,
        // which gives the same codes: a float quotient is the double one
        // rounded to float, and the codes are small integers.
        if (lay.per_tensor && prec == ElemType::kFloat) {
          QuantizeFloatTo8Bit<typename Q::Storage>(ctx, X.data<float>(), X.size(), *static_cast<const float*>(s),
                                                   z != nullptr ? Q::Load(z, 0) : 0.f,
                                                   Y->data<typename Q::Storage>());
          return Status::OK();
        }
      }
    }
    const bool saturate = saturate_;
    // The code of element i, as one byte for the byte-wide kinds and 4-bit
    // ones, or as the integer itself.
    auto quantize = [&](int64_t i, int64_t si) {
      double q = RoundTo(prec, LoadReal<TX>(x, i) / LoadReal<TS>(s, si));
      const double zv = z != nullptr ? static_cast<double>(Q::Load(z, si)) : 0.0;
      if constexpr (Q::kInteger) {
        // Ties to even (the default rounding mode); NaN quantizes as 0.
        double r = std::isnan(q) ? 0.0 : std::nearbyint(q);
        r = std::min(std::max(r + zv, Q::kLo), Q::kHi);
        return static_cast<int64_t>(r);
      } else {
        using Fmt = typename MiniFmt<Q>::type;
        return static_cast<int64_t>(minifloat::EncodeMini<Fmt>(static_cast<float>(q + zv), saturate));
      }
    };
    if constexpr (Q::kPacked) {
      std::vector<uint8_t> codes(static_cast<size_t>(X.size()));
      ForEachQuantElement(lay, X.size(), ctx.threads(),
                          [&](int64_t i, int64_t si) { codes[i] = static_cast<uint8_t>(quantize(i, si) & 0xF); });
      PackCodes(codes, Q::kBits, Y->data<uint8_t>());
    } else {
      // One code per element: the integer itself, or a float8 byte.
      using T = typename Q::Storage;
      T* y = Y->data<T>();
      ForEachQuantElement(lay, X.size(), ctx.threads(),
                          [&](int64_t i, int64_t si) { y[i] = static_cast<T>(quantize(i, si)); });
    }
    return Status::OK();
  }

  // y = saturate(round_half_even(x / scale) + zp) for 8-bit T; NaN gives zp
  // (int8gemm::QuantizeFloat8, over the pool's threads).
  template <typename T>
  static void QuantizeFloatTo8Bit(KernelContext& ctx, const float* x, int64_t n, float scale, float zp, T* y) {
    const int32_t z = static_cast<int32_t>(zp);
    ThreadPool::For(ctx.threads(), n, 1 << 15,
                    [&](int64_t b, int64_t e) { int8gemm::QuantizeFloat8<T>(x + b, e - b, scale, z, y + b); });
  }

  template <typename Q>
  struct MiniFmt;
  template <typename Fmt>
  struct MiniFmt<FloatQ<Fmt>> {
    using type = Fmt;
  };

  int opset_ = 21;
  int64_t axis_ = 1;
  bool saturate_ = true;
  int64_t block_size_ = 0;
  int64_t output_dtype_ = 0;
  int64_t precision_ = 0;
};

// ---------------------------------------------------------------------------

#if defined(__x86_64__) || defined(__i386__)
// y[i] = (float(x[i]) - z) * s for 8-bit codes over [b, e), AVX-512 (the
// compiled loop widened the bytes in several steps): the same two float
// operations, so the same values.
template <typename T>
__attribute__((target("avx512f,avx512bw,avx512vl,avx2"))) void Dequant8Avx512(const T* x, float* y, int64_t b,
                                                                             int64_t e, float z, float s) {
  const __m512 vz = _mm512_set1_ps(z), vs = _mm512_set1_ps(s);
  int64_t i = b;
  for (; i + 16 <= e; i += 16) {
    const __m128i q = _mm_loadu_si128(reinterpret_cast<const __m128i*>(x + i));
    // The masked forms: GCC 12's plain ones pass an uninitialised source
    // that -Wmaybe-uninitialized reports.
    const __m512i w =
        std::is_same<T, uint8_t>::value ? _mm512_maskz_cvtepu8_epi32(0xFFFF, q) : _mm512_maskz_cvtepi8_epi32(0xFFFF, q);
    _mm512_storeu_ps(y + i, _mm512_mul_ps(_mm512_sub_ps(_mm512_maskz_cvtepi32_ps(0xFFFF, w), vz), vs));
  }
  for (; i < e; ++i) y[i] = (static_cast<float>(x[i]) - z) * s;
}
#endif

// DequantizeLinear's common case (8- to 32-bit integer codes, one float
// scale, float output) as one typed loop the compiler vectorizes; false when
// the case is another one.
template <typename Q, typename TS, typename TO>
bool DequantizePerTensor(KernelContext& ctx, const Tensor& X, const TS* s, const void* z, const QuantLayout& lay,
                         TO* y) {
  if constexpr (Q::kInteger && !Q::kPacked && std::is_same<TS, float>::value && std::is_same<TO, float>::value) {
    if (!lay.per_tensor) return false;
    using T = typename Q::Storage;
    const T* xv = X.data<T>();
    const float zv = z != nullptr ? Q::Load(z, 0) : 0.f, sv = s[0];
#if defined(__x86_64__) || defined(__i386__)
    if constexpr (sizeof(T) == 1) {
      if (fastmath::BestIsa() == fastmath::Isa::kAvx512) {
        ThreadPool::For(ctx.threads(), X.size(), 1 << 15,
                        [&](int64_t b, int64_t e) { Dequant8Avx512(xv, y, b, e, zv, sv); });
        return true;
      }
    }
#endif
    ThreadPool::For(ctx.threads(), X.size(), 1 << 15, [&](int64_t b, int64_t e) {
      const T* __restrict xs = xv;  // locals: see QuantizeFloatTo8Bit
      TO* __restrict ys = y;
      const float z0 = zv, s0 = sv;
      for (int64_t i = b; i < e; ++i) ys[i] = (static_cast<float>(xs[i]) - z0) * s0;
    });
    return true;
  }
  return false;
}

class DequantizeLinearKernel final : public OpKernel {
 public:
  Status Init(const KernelInfo& info) {
    opset_ = info.opset();
    axis_ = info.AttrInt("axis", 1);
    block_size_ = info.AttrInt("block_size", 0);
    output_dtype_ = info.AttrInt("output_dtype", 0);
    ONYX_CHECK(output_dtype_ == 0 || IsScaleType(static_cast<ElemType>(output_dtype_)), ErrorCode::kInvalidGraph,
               "DequantizeLinear: attribute output_dtype must be float, float16 or bfloat16, got ", output_dtype_);
    return Status::OK();
  }

  Status Compute(KernelContext& ctx) const override {
    const char* op = "DequantizeLinear";
    const Tensor* X = nullptr;
    const Tensor* S = nullptr;
    ONYX_RETURN_IF_ERROR(ctx.RequiredInput(0, &X));
    ONYX_RETURN_IF_ERROR(ctx.RequiredInput(1, &S));
    const Tensor* Z = ctx.Input(2);
    ONYX_CHECK_ARG(IsScaleType(S->type()), op, ": input 1 (x_scale) has unsupported type ",
                   ElemTypeName(S->type()));
    if (Z != nullptr) {
      ONYX_CHECK_ARG(Z->type() == X->type(), op, ": input 2 (x_zero_point) has type ", ElemTypeName(Z->type()),
                     " but input 0 (x) has type ", ElemTypeName(X->type()));
      if (X->type() == ElemType::kInt32) {
        // int32 has no zero point: one may be given, but it must be 0.
        for (int64_t k = 0; k < Z->size(); ++k)
          ONYX_CHECK_ARG(Z->data<int32_t>()[k] == 0, op, ": input 2 (x_zero_point) must be 0 for int32 input 0 (x)");
      }
    }
    const ElemType out = output_dtype_ != 0 ? static_cast<ElemType>(output_dtype_) : S->type();
    QuantLayout lay;
    ONYX_RETURN_IF_ERROR(PlanLayout(op, "x_scale", "x_zero_point", opset_, *X, *S, Z, axis_, block_size_, &lay));
    return DispatchQuantized(X->type(), op, /*allow_int32=*/true, [&](auto qtag) -> Status {
      using Q = decltype(qtag);
      return DispatchOver(ScaleTypeSet{}, S->type(), op, [&](auto stag) -> Status {
        using TS = typename decltype(stag)::type;
        return DispatchOver(ScaleTypeSet{}, out, op, [&](auto otag) -> Status {
          using TO = typename decltype(otag)::type;
          Tensor* Y = ctx.Output(0, X->dims(), out);
          if (Y == nullptr || X->size() == 0) return Status::OK();
          const void* x = X->raw();
          const TS* s = S->data<TS>();
          const void* z = Z != nullptr ? Z->raw() : nullptr;
          TO* y = Y->data<TO>();
          if (DequantizePerTensor<Q, TS, TO>(ctx, *X, s, z, lay, y)) return Status::OK();
          // In float, as onnx's reference computes it.
          ForEachQuantElement(lay, X->size(), ctx.threads(), [&](int64_t i, int64_t si) {
            float d = Q::Load(x, i);
            if (z != nullptr) d -= Q::Load(z, si);
            y[i] = static_cast<TO>(d * static_cast<float>(s[si]));
          });
          return Status::OK();
        });
      });
    });
  }

 private:
  int opset_ = 21;
  int64_t axis_ = 1;
  int64_t block_size_ = 0;
  int64_t output_dtype_ = 0;
};

// float and int32 from opset 10; the 16-bit floats from 19.
std::vector<ElemType> QuantizeInputTypes(int since) {
  std::vector<ElemType> t = {ElemType::kFloat, ElemType::kInt32};
  if (since >= 19) t.insert(t.end(), {ElemType::kFloat16, ElemType::kBFloat16});
  return t;
}

std::vector<ElemType> DequantizeInputTypes(int since) {
  std::vector<ElemType> t = {ElemType::kInt8, ElemType::kUint8, ElemType::kInt32};
  if (since >= 19) {
    t.insert(t.end(), {ElemType::kFloat8E4M3FN, ElemType::kFloat8E4M3FNUZ, ElemType::kFloat8E5M2,
                       ElemType::kFloat8E5M2FNUZ});
  }
  if (since >= 21) t.insert(t.end(), {ElemType::kInt16, ElemType::kUint16, ElemType::kInt4, ElemType::kUint4});
  if (since >= 23) t.push_back(ElemType::kFloat4E2M1);
  if (since >= 25) t.insert(t.end(), {ElemType::kInt2, ElemType::kUint2});
  return t;
}

}  // namespace

// One kernel reads each opset's attributes; the ranges follow the schema's
// changes: 10 per-tensor, 13 per-axis, 19 float8 and saturate, 21 blocked,
// output_dtype and the 16- and 4-bit integers, 23 float4e2m1 and precision,
// 25 the 2-bit integers.
ONYX_REGISTER_KERNEL(QuantizeLinearKernel, "", "QuantizeLinear", 10, 12, QuantizeInputTypes(10));
ONYX_REGISTER_KERNEL(QuantizeLinearKernel, "", "QuantizeLinear", 13, 18, QuantizeInputTypes(13));
ONYX_REGISTER_KERNEL(QuantizeLinearKernel, "", "QuantizeLinear", 19, 20, QuantizeInputTypes(19));
ONYX_REGISTER_KERNEL(QuantizeLinearKernel, "", "QuantizeLinear", 21, 22, QuantizeInputTypes(21));
ONYX_REGISTER_KERNEL(QuantizeLinearKernel, "", "QuantizeLinear", 23, 24, QuantizeInputTypes(23));
ONYX_REGISTER_KERNEL(QuantizeLinearKernel, "", "QuantizeLinear", 25, kMaxVersion, QuantizeInputTypes(25));
ONYX_REGISTER_KERNEL(DequantizeLinearKernel, "", "DequantizeLinear", 10, 12, DequantizeInputTypes(10));
ONYX_REGISTER_KERNEL(DequantizeLinearKernel, "", "DequantizeLinear", 13, 18, DequantizeInputTypes(13));
ONYX_REGISTER_KERNEL(DequantizeLinearKernel, "", "DequantizeLinear", 19, 20, DequantizeInputTypes(19));
ONYX_REGISTER_KERNEL(DequantizeLinearKernel, "", "DequantizeLinear", 21, 22, DequantizeInputTypes(21));
ONYX_REGISTER_KERNEL(DequantizeLinearKernel, "", "DequantizeLinear", 23, 24, DequantizeInputTypes(23));
ONYX_REGISTER_KERNEL(DequantizeLinearKernel, "", "DequantizeLinear", 25, kMaxVersion, DequantizeInputTypes(25));

}  // namespace onyx
