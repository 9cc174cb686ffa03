// Conv (NCHW, any number of spatial dims). Paths:
//  - float 3x3, stride 1, dilation 1, group 1, pads <= 2, constant W, on a
//    shape where it wins (winograd::TileFor: 32+ channels, 16+ 2x2 tiles per
//    image): Winograd F(2x2, 3x3), or F(4x4, 3x3) on images of 28x28 and
//    more (winograd_conv.h), W transformed and packed once at creation
//    (PrepareWinograd), 16 (36) GEMMs on the packed SGEMM, bias, Z and the
//    clamp in its output transform;
//  - depthwise 2-D (one input channel per group): a direct kernel, because
//    per-group GEMMs of one row are all overhead: the vector one of
//    depthwise_conv.h (AVX-512 / AVX2; 3x3 stride 2 over each plane's
//    phases where rows are wide), a padded-copy 3x3 and a generic
//    loop on the baseline path;
//  - float 2-D with at most 4 input channels, group 1, no dilation (a
//    network's stem: 3 channels, 7x7 or 3x3, stride 2; RunSmallConv): the
//    direct kernel of depthwise_conv.h's small_conv, which broadcasts each
//    tap's weights (AVX-512) or input elements (AVX2) against register
//    blocks (as a GEMM, K = C*KH*KW is too short to pay for packing);
//  - float 1-D / 2-D on a CPU with an SGEMM micro-kernel (RunFusedGemm): one
//    SGEMM per (image, group) that packs its right operand straight from the
//    input (sgemm::Im2Col2D, no im2col matrix; 1x1 stride 1 reads the input
//    itself, in place, under the pre-packed weights; stride 2 reads the
//    input's four phase planes, UsePhases, 3x3 in place; 1x1 stride 2 is the
//    pointwise product of its even rows and columns, Subsampled) and adds
//    bias and Z and clamps (Relu, Clip) as each tile of Y completes; on small images
//    (7x7) the transposed product Y^T instead
//    (TransposedWins), W packed once for whichever the graph's shapes pick;
//  - everything else (3-D, 16-bit floats through float, baseline): im2col,
//    then one GEMM per (image, group), then the epilogue.
//
// The same kernel runs onnxruntime's contrib op com.microsoft FusedConv (made
// by core/optimizer/conv_activation_fusion.cc, or found in models onnxruntime
// saved): Conv's attributes plus
//   activation        string: Relu, Sigmoid, Tanh (no params), LeakyRelu {alpha},
//                     Clip {min, max}, HardSigmoid {alpha, beta}
//   activation_params floats: the params in that order
// and an optional input Z (shaped like Y) added before the activation:
// Y = activation(Conv(X, W, B) + Z). Without Z the activation is applied with
// the bias in each block's epilogue, while that block of Y is still in cache,
// instead of as a separate pass over memory. Plain Conv ignores both attributes.
//
// And com.microsoft NhwcConv (onnxruntime's optimizer, enable_nhwc_conv, for
// Stable Diffusion): Conv's attributes and B, with X [N, spatial..., C],
// W [M, k..., C/group] and Y [N, spatial..., M], channels last. It moves the
// channels of X and W to the front, convolves, and moves Y's back.
#include <algorithm>
#include <cstring>
#include <limits>
#include <string>
#include <type_traits>
#include <vector>

#include "providers/cpu/common/dispatch.h"
#include "providers/cpu/common/fast_math.h"
#include "providers/cpu/common/half_float.h"
#include "providers/kernel.h"
#include "providers/cpu/math/blas.h"
#include "providers/cpu/nn/conv_geometry.h"
#include "providers/cpu/nn/depthwise_conv.h"
#include "providers/cpu/nn/strided_conv.h"
#include "providers/cpu/nn/winograd_conv.h"

namespace onyx {
namespace {

using conv::AutoPad;
using conv::CeilDiv;
using conv::ValidRange;
using ConvGeom = conv::Geom;

// Whether a conv of geometry `g` is a 1x1 stride-1 one without pads: its
// input X_(n, group) [C/group, spatial] is itself the im2col matrix.
bool IsPointwise(const ConvGeom& g) {
  bool pointwise = true;
  for (size_t j = 0; j < g.nd; ++j)
    pointwise = pointwise && g.k[j] == 1 && g.s[j] == 1 && g.pb[j] == 0 && g.out[j] == g.in[j];
  return pointwise;
}

// The fused activation: clamp(x, lo, hi) (Relu, Clip), leaky (alpha),
// sigmoid, tanh, or clamp(alpha * x + beta, 0, 1) (HardSigmoid).
struct Activation {
  enum class Kind { kNone, kClamp, kLeaky, kSigmoid, kTanh, kHardSigmoid };
  Kind kind = Kind::kNone;
  float lo = 0.f, hi = 0.f, alpha = 0.f, beta = 0.f;
};

Status ParseActivation(const KernelInfo& info, Activation* out) {
  const Attribute* a = info.Attr("activation");
  if (a == nullptr) return Status::OK();
  const Attribute* p = info.Attr("activation_params");
  const std::vector<float> params = p ? p->floats : std::vector<float>{};
  // onnxruntime reads no params for the parameterless kinds, so neither do we.
  const std::string& kind = a->s;
  if (kind == "Relu") {
    *out = {Activation::Kind::kClamp, 0.f, std::numeric_limits<float>::infinity()};
  } else if (kind == "Sigmoid") {
    out->kind = Activation::Kind::kSigmoid;
  } else if (kind == "Tanh") {
    out->kind = Activation::Kind::kTanh;
  } else if (kind == "Clip" && params.size() == 2) {
    *out = {Activation::Kind::kClamp, params[0], params[1]};
  } else if (kind == "LeakyRelu" && params.size() == 1) {
    *out = {Activation::Kind::kLeaky, 0.f, 0.f, params[0]};
  } else if (kind == "HardSigmoid" && params.size() == 2) {
    *out = {Activation::Kind::kHardSigmoid, 0.f, 0.f, params[0], params[1]};
  } else if (kind == "Clip" || kind == "LeakyRelu" || kind == "HardSigmoid") {
    return MakeError(ErrorCode::kInvalidGraph, info.node().Describe(), ": activation '", kind, "' needs ",
                     kind == "LeakyRelu" ? 1 : 2, " activation_params, got ", params.size());
  } else {
    return MakeError(ErrorCode::kNotImplemented, info.node().Describe(), ": activation '", kind,
                     "' is not supported (Relu, Sigmoid, Tanh, LeakyRelu, Clip, HardSigmoid are)");
  }
  return Status::OK();
}

// y[0..n) = act(y + bias): the whole epilogue of one output row or channel.
template <typename T>
void Epilogue(T* y, int64_t n, T bias, const Activation& act) {
  switch (act.kind) {
    case Activation::Kind::kNone:
      if (bias != T(0))
        for (int64_t i = 0; i < n; ++i) y[i] += bias;
      break;
    case Activation::Kind::kClamp: {
      // Clip's order: max with min first, so min > max gives max, like ONNX.
      const T lo = static_cast<T>(act.lo), hi = static_cast<T>(act.hi);
      for (int64_t i = 0; i < n; ++i) {
        T v = y[i] + bias;
        v = v < lo ? lo : v;
        y[i] = v > hi ? hi : v;
      }
      break;
    }
    case Activation::Kind::kLeaky: {
      const T alpha = static_cast<T>(act.alpha);
      for (int64_t i = 0; i < n; ++i) {
        const T v = y[i] + bias;
        y[i] = v < T(0) ? v * alpha : v;
      }
      break;
    }
    // The formulas of the standalone kernels (math/elementwise_unary.cc), so
    // fusing changes results by no more than their own rounding.
    case Activation::Kind::kSigmoid:
      for (int64_t i = 0; i < n; ++i) {
        const T v = y[i] + bias;
        // Split by sign so exp never overflows.
        if (v >= T(0)) {
          y[i] = T(1) / (T(1) + fastmath::ExpOf(-v));
        } else {
          const T e = fastmath::ExpOf(v);
          y[i] = e / (T(1) + e);
        }
      }
      break;
    case Activation::Kind::kTanh:
      if (bias != T(0))
        for (int64_t i = 0; i < n; ++i) y[i] += bias;
      if constexpr (std::is_same<T, float>::value) {
        fastmath::TanhArray(y, y, n);
      } else {
        for (int64_t i = 0; i < n; ++i) y[i] = fastmath::TanhOf(y[i]);
      }
      break;
    case Activation::Kind::kHardSigmoid: {
      const T alpha = static_cast<T>(act.alpha), beta = static_cast<T>(act.beta);
      for (int64_t i = 0; i < n; ++i) {
        const T r = alpha * (y[i] + bias) + beta;
        y[i] = r < T(0) ? T(0) : (r > T(1) ? T(1) : r);
      }
      break;
    }
  }
}

// 3x3 depthwise rows in float over a zero-padded copy of the plane, so the
// inner loops have no bounds checks and vectorize; cloned per ISA because
// the engine is built for baseline x86-64. Stride 2 reads rows split into
// even and odd columns, so every load is still contiguous.
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
#define ONYX_DW_CLONES __attribute__((target_clones("arch=x86-64-v4", "arch=x86-64-v3", "default")))
#else
#define ONYX_DW_CLONES
#endif

ONYX_DW_CLONES
void Dw3x3RowS1(const float* __restrict r0, const float* __restrict r1, const float* __restrict r2,
                const float* __restrict w, float bias, int64_t ow_n, float* __restrict out) {
  const float w0 = w[0], w1 = w[1], w2 = w[2], w3 = w[3], w4 = w[4], w5 = w[5], w6 = w[6], w7 = w[7], w8 = w[8];
  for (int64_t i = 0; i < ow_n; ++i) {
    out[i] = bias + w0 * r0[i] + w1 * r0[i + 1] + w2 * r0[i + 2] + w3 * r1[i] + w4 * r1[i + 1] + w5 * r1[i + 2] +
             w6 * r2[i] + w7 * r2[i + 1] + w8 * r2[i + 2];
  }
}

// rK points at a padded row stored as [even columns (ow_n + 1) | odd columns (ow_n)].
ONYX_DW_CLONES
void Dw3x3RowS2(const float* __restrict r0, const float* __restrict r1, const float* __restrict r2,
                const float* __restrict w, float bias, int64_t ow_n, float* __restrict out) {
  const float w0 = w[0], w1 = w[1], w2 = w[2], w3 = w[3], w4 = w[4], w5 = w[5], w6 = w[6], w7 = w[7], w8 = w[8];
  const float *e0 = r0, *o0 = r0 + ow_n + 1, *e1 = r1, *o1 = r1 + ow_n + 1, *e2 = r2, *o2 = r2 + ow_n + 1;
  for (int64_t i = 0; i < ow_n; ++i) {
    out[i] = bias + w0 * e0[i] + w1 * o0[i] + w2 * e0[i + 1] + w3 * e1[i] + w4 * o1[i] + w5 * e1[i + 1] +
             w6 * e2[i] + w7 * o2[i] + w8 * e2[i + 1];
  }
}

// Clamp/leaky over one row, cloned like the rows it follows.
ONYX_DW_CLONES
void RowActivation(float* __restrict y, int64_t n, int kind, float lo, float hi, float alpha) {
  if (kind == 1) {
    for (int64_t i = 0; i < n; ++i) {
      float v = y[i] < lo ? lo : y[i];
      y[i] = v > hi ? hi : v;
    }
  } else if (kind == 2) {
    for (int64_t i = 0; i < n; ++i) y[i] = y[i] < 0.f ? y[i] * alpha : y[i];
  }
}

// One output plane of a 2-D depthwise convolution. The loops run over output
// rows with the kernel taps outermost so the innermost loop is a contiguous
// (stride 1) multiply-add over the valid columns, which the compiler vectorizes.
template <typename T>
void DepthwisePlane(const T* in, const T* w, T bias, const ConvGeom& g, const std::vector<int64_t>& lo,
                    const std::vector<int64_t>& hi, const Activation& act, T* out) {
  const int64_t H = g.in[0], W = g.in[1], OH = g.out[0], OW = g.out[1], KH = g.k[0], KW = g.k[1];
  const int64_t sh = g.s[0], sw = g.s[1], dh = g.d[0], dw = g.d[1], ph = g.pb[0], pw = g.pb[1];
  for (int64_t oh = 0; oh < OH; ++oh) {
    T* orow = out + oh * OW;
    std::fill(orow, orow + OW, bias);
    for (int64_t kh = 0; kh < KH; ++kh) {
      const int64_t ih = oh * sh - ph + kh * dh;
      if (ih < 0 || ih >= H) continue;
      const T* irow = in + ih * W;
      for (int64_t kw = 0; kw < KW; ++kw) {
        const T wv = w[kh * KW + kw];
        const T* src = irow + kw * dw - pw;
        if (sw == 1) {
          for (int64_t ow = lo[kw]; ow < hi[kw]; ++ow) orow[ow] += wv * src[ow];
        } else {
          for (int64_t ow = lo[kw]; ow < hi[kw]; ++ow) orow[ow] += wv * src[ow * sw];
        }
      }
    }
    Epilogue<T>(orow, OW, T(0), act);
  }
}

bool IsFastDepthwise(const ConvGeom& g) {
  return g.nd == 2 && g.k[0] == 3 && g.k[1] == 3 && g.d[0] == 1 && g.d[1] == 1 && g.s[0] == g.s[1] &&
         (g.s[0] == 1 || g.s[0] == 2);
}

// Floats the padded copy of one plane takes in Dw3x3Plane.
int64_t Dw3x3ScratchSize(const ConvGeom& g) {
  const int64_t s = g.s[0];
  return ((g.out[0] - 1) * s + 3) * ((g.out[1] - 1) * s + 3) + ((g.out[1] - 1) * s + 3);
}

// One output plane of a 3x3 depthwise conv (stride 1 or 2) through a padded
// copy of the input plane, which costs one pass over the input and removes
// every border case from the nine-tap loop.
void Dw3x3Plane(const float* in, const float* w, float bias, const ConvGeom& g, const Activation& act,
                float* scratch, float* out) {
  const int64_t H = g.in[0], W = g.in[1], OH = g.out[0], OW = g.out[1], s = g.s[0], ph = g.pb[0], pw = g.pb[1];
  const int64_t PR = (OH - 1) * s + 3, PW = (OW - 1) * s + 3;
  float* pad = scratch;
  float* tmp = scratch + PR * PW;  // one linear row, for splitting columns at stride 2
  const int64_t lo = std::min(std::max<int64_t>(pw, 0), PW), hi = std::min(std::max<int64_t>(pw + W, lo), PW);
  for (int64_t r = 0; r < PR; ++r) {
    const int64_t ih = r - ph;
    float* dst = pad + r * PW;
    if (ih < 0 || ih >= H) {
      std::fill(dst, dst + PW, 0.f);
      continue;
    }
    float* row = s == 1 ? dst : tmp;
    std::fill(row, row + lo, 0.f);
    std::copy(in + ih * W + (lo - pw), in + ih * W + (hi - pw), row + lo);
    std::fill(row + hi, row + PW, 0.f);
    if (s == 2) {
      float* even = dst;
      float* odd = dst + OW + 1;
      for (int64_t j = 0; j <= OW; ++j) even[j] = tmp[2 * j];
      for (int64_t j = 0; j < OW; ++j) odd[j] = tmp[2 * j + 1];
    }
  }
  const int kind = act.kind == Activation::Kind::kClamp ? 1 : act.kind == Activation::Kind::kLeaky ? 2 : 0;
  for (int64_t oh = 0; oh < OH; ++oh) {
    const float* r0 = pad + oh * s * PW;
    float* orow = out + oh * OW;
    if (s == 1) Dw3x3RowS1(r0, r0 + PW, r0 + 2 * PW, w, bias, OW, orow);
    else Dw3x3RowS2(r0, r0 + PW, r0 + 2 * PW, w, bias, OW, orow);
    if (kind != 0) RowActivation(orow, OW, kind, act.lo, act.hi, act.alpha);
    else if (act.kind != Activation::Kind::kNone) Epilogue<float>(orow, OW, 0.f, act);
  }
}

// A copy of `t` [N, d1..., C] as [N, C, d1...] (to_front) or the reverse.
Tensor MoveChannels(const Tensor& t, bool to_front) {
  const Dims& d = t.dims();
  Dims out = d;
  const int64_t n = d[0], c = to_front ? d.back() : d[1];
  const int64_t inner = n * c == 0 ? 0 : t.size() / (n * c);
  if (to_front) {
    out.pop_back();
    out.insert(out.begin() + 1, c);
  } else {
    out.erase(out.begin() + 1);
    out.push_back(c);
  }
  Tensor r(t.type(), out);
  const size_t es = ElemSize(t.type());
  const char* src = static_cast<const char*>(t.raw());
  char* dst = static_cast<char*>(r.raw());
  for (int64_t b = 0; b < n; ++b)
    for (int64_t ch = 0; ch < c; ++ch)
      for (int64_t i = 0; i < inner; ++i) {
        const int64_t last = (b * inner + i) * c + ch, first = (b * c + ch) * inner + i;
        std::memcpy(dst + (to_front ? first : last) * es, src + (to_front ? last : first) * es, es);
      }
  return r;
}

class ConvKernel final : public OpKernel {
 public:
  Status Init(const KernelInfo& info) {
    const std::string who = "Conv";
    ONYX_RETURN_IF_ERROR(conv::ParseAttrs(info, who, &attrs_));
    ONYX_RETURN_IF_ERROR(conv::CheckAttrValues(attrs_.kernel_shape, 1, who, "kernel_shape"));
    ONYX_RETURN_IF_ERROR(conv::CheckAttrValues(attrs_.strides, 1, who, "strides"));
    ONYX_RETURN_IF_ERROR(conv::CheckAttrValues(attrs_.dilations, 1, who, "dilations"));
    ONYX_RETURN_IF_ERROR(conv::CheckAttrValues(attrs_.pads, 0, who, "pads"));
    ONYX_RETURN_IF_ERROR(conv::CheckPadsCount(attrs_.pads, who));
    nhwc_ = info.node().op_type == "NhwcConv";
    if (info.node().op_type == "FusedConv") {
      fused_ = true;
      ONYX_RETURN_IF_ERROR(ParseActivation(info, &act_));
      // Y may take the residual sum Z's bytes (Convolve: SumInPlaceApplies).
      if (info.node().inputs.size() > 3 && !info.node().inputs[3].empty()) info.AllowOutputInPlace(0, 3);
    }
    // Both read W as [M, C/group, k...].
    if (!nhwc_ && !PrepareWinograd(info) && !PrepareStrided(info)) PackConstantWeight(info);
    return Status::OK();
  }

  Status Compute(KernelContext& ctx) const override {
    const Tensor* x = nullptr;
    const Tensor* w = nullptr;
    ONYX_RETURN_IF_ERROR(ctx.RequiredInput(0, &x));
    ONYX_RETURN_IF_ERROR(ctx.RequiredInput(1, &w));
    if (!nhwc_) return Convolve(ctx, x, w, [&](const Dims& yd) { return ctx.Output(0, yd, x->type()); });
    ONYX_CHECK_ARG(x->rank() >= 3 && w->rank() == x->rank(), "NhwcConv: input X ", ShapeToString(x->dims()),
                   " and weight W ", ShapeToString(w->dims()), " must have one rank >= 3");
    ONYX_CHECK_ARG(x->dims().back() == w->dims().back() * attrs_.group, "NhwcConv: input X ",
                   ShapeToString(x->dims()), " has ", x->dims().back(), " channels (its last dimension) but weight W ",
                   ShapeToString(w->dims()), " expects ", w->dims().back() * attrs_.group, " (group ", attrs_.group,
                   ")");
    const Tensor xc = MoveChannels(*x, true), wc = MoveChannels(*w, true);
    Tensor yc;
    ONYX_RETURN_IF_ERROR(Convolve(ctx, &xc, &wc, [&](const Dims& yd) { return &(yc = Tensor(x->type(), yd)); }));
    Tensor moved = MoveChannels(yc, false);
    Tensor* y = ctx.Output(0, moved.dims(), x->type());
    if (y != nullptr && y->size() > 0) std::memcpy(y->raw(), moved.raw(), moved.bytes());
    return Status::OK();
  }

 private:
  // X and W channels first; `output(dims)` gives the tensor Y is written to
  // (null when it is not wanted).
  template <typename Output>
  Status Convolve(KernelContext& ctx, const Tensor* x, const Tensor* w, Output output) const {
    const Tensor* bias = ctx.Input(2);
    const Dims& xd = x->dims();
    const Dims& wd = w->dims();
    ONYX_CHECK_ARG(xd.size() >= 3, "Conv: input X ", ShapeToString(xd), " must have rank >= 3 (N, C, spatial...)");
    ONYX_CHECK_ARG(wd.size() == xd.size(), "Conv: weight W ", ShapeToString(wd), " must have the same rank as input X ",
                   ShapeToString(xd));
    ONYX_CHECK_ARG(w->type() == x->type() && (bias == nullptr || bias->type() == x->type()),
                   "Conv: inputs X, W and B must have the same element type");
    const int64_t N = xd[0], C = xd[1], M = wd[0], Cg = wd[1];
    ONYX_CHECK_ARG(C == Cg * attrs_.group, "Conv: input X ", ShapeToString(xd), " has ", C, " channels but weight W ",
                   ShapeToString(wd), " expects ", Cg * attrs_.group, " (group ", attrs_.group, ")");
    ONYX_CHECK_ARG(M % attrs_.group == 0, "Conv: weight W ", ShapeToString(wd), " has ", M,
                   " output channels, not a multiple of group ", attrs_.group);
    if (bias != nullptr)
      ONYX_CHECK_ARG(bias->rank() == 1 && bias->dims()[0] == M, "Conv: bias B ", ShapeToString(bias->dims()),
                     " must be [", M, "] to match weight W ", ShapeToString(wd));

    ConvGeom g;
    ONYX_RETURN_IF_ERROR(Resolve(xd, wd, &g));
    Dims yd{N, M};
    yd.insert(yd.end(), g.out.begin(), g.out.end());
    const Tensor* z = fused_ ? ctx.Input(3) : nullptr;
    if (z != nullptr)
      ONYX_CHECK_ARG(z->type() == x->type() && z->dims() == yd, "FusedConv: input Z ", ShapeToString(z->dims()),
                     " must have the type of X and the shape of the output ", ShapeToString(yd));
    // Where the plan lets Y take Z's bytes (nothing reads Z after this
    // node: a ResNet block's identity), the GEMM adds its product onto Z in
    // place (beta 1) instead of reading Z in its epilogue and writing a new
    // buffer: one stream of the block's activations fewer, and no fresh
    // output lines to fetch before writing them.
    Tensor* y = nullptr;
    if (z != nullptr && !nhwc_ && SumInPlaceApplies(*x, g)) {
      y = ctx.OutputInPlace(0, 3, yd, x->type());
      if (y != nullptr) return y->size() == 0 ? Status::OK() : RunFusedGemm(ctx, *x, *w, bias, nullptr, g, y, true);
    }
    y = output(yd);
    if (y == nullptr || y->size() == 0) return Status::OK();
    if (x->type() == ElemType::kFloat16) return ComputeThroughFloat<Float16>(ctx, *x, *w, bias, z, g, y);
    if (x->type() == ElemType::kBFloat16) return ComputeThroughFloat<BFloat16>(ctx, *x, *w, bias, z, g, y);
    return ComputeTyped(ctx, *x, *w, bias, z, g, y);
  }

  // Whether ComputeTyped would run this conv through RunFusedGemm's plain
  // product, which can take Z as its output's starting value.
  bool SumInPlaceApplies(const Tensor& x, const ConvGeom& g) const {
    return x.type() == ElemType::kFloat && wino_.empty() && strided_.empty() && !transposed_ &&
           FusedGemmApplies(x, g);
  }

  // 16-bit floats: widened to float, convolved with float accumulation,
  // rounded once on the way out.
  template <typename H>
  Status ComputeThroughFloat(KernelContext& ctx, const Tensor& x, const Tensor& w, const Tensor* bias,
                             const Tensor* z, const ConvGeom& g, Tensor* y) const {
    Tensor xf = WidenToFloat<H>(x), wf = WidenToFloat<H>(w);
    Tensor bf = bias ? WidenToFloat<H>(*bias) : Tensor();
    Tensor zf = z ? WidenToFloat<H>(*z) : Tensor();
    Tensor yf(ElemType::kFloat, y->dims());
    ONYX_RETURN_IF_ERROR(ComputeTyped(ctx, xf, wf, bias ? &bf : nullptr, z ? &zf : nullptr, g, &yf));
    NarrowFromFloat<H>(yf, y);
    return Status::OK();
  }

  Status ComputeTyped(KernelContext& ctx, const Tensor& x_in, const Tensor& w_in, const Tensor* bias,
                      const Tensor* z, const ConvGeom& g, Tensor* y) const {
    const Tensor* x = &x_in;
    const Tensor* w = &w_in;
    return DispatchFloat(x->type(), "Conv", [&](auto tag) -> Status {
      using T = typename decltype(tag)::type;
      if constexpr (std::is_same<T, float>::value) {
        if (!wino_.empty()) return RunWinograd(ctx, *x, bias, z, g, y);
        if (z == nullptr && SmallConvApplies(*x, *w, g)) return RunSmallConv(ctx, *x, *w, bias, g, y);
        if (!strided_.empty()) return RunStrided(ctx, *x, bias, z, g, y);
        if (FusedGemmApplies(*x, g)) return RunFusedGemm(ctx, *x, *w, bias, z, g, y);
      }
      if (z == nullptr) return Run<T>(ctx, *x, *w, bias, g, act_, y);
      // The sum comes between the bias and the activation, so the epilogue
      // stops at the bias and one more pass does the rest.
      ONYX_RETURN_IF_ERROR(Run<T>(ctx, *x, *w, bias, g, Activation{}, y));
      T* yv = y->data<T>();
      const T* zv = z->data<T>();
      ThreadPool::For(ctx.threads(), y->size(), 16384, [&](int64_t begin, int64_t end) {
        for (int64_t i = begin; i < end; ++i) yv[i] += zv[i];
        Epilogue<T>(yv + begin, end - begin, T(0), act_);
      });
      return Status::OK();
    });
  }

  // The direct conv of few input channels (depthwise_conv.h's small_conv):
  // 2-D, group 1, no dilation, at most kSmallConvChannels input channels.
  static constexpr int64_t kSmallConvChannels = 4;
  bool SmallConvShape(const Dims& wd) const {
    // 3x3 of stride 2 included (MobileNetV2's stem): against the AVX-512
    // SGEMM over its input's phase planes, batch 8, 2 threads, 1.2 -> 0.75 ms.
    return wd.size() == 4 && attrs_.group == 1 && wd[1] <= kSmallConvChannels && wd[3] <= small_conv::kMaxKernel &&
           (attrs_.dilations.empty() || (attrs_.dilations[0] == 1 && attrs_.dilations[1] == 1));
  }
  small_conv::Geom SmallGeom(const Tensor& x, const Tensor& w, const ConvGeom& g) const {
    small_conv::Geom sg;
    sg.C = x.dims()[1], sg.H = g.in[0], sg.W = g.in[1], sg.M = w.dims()[0], sg.OH = g.out[0], sg.OW = g.out[1];
    sg.KH = g.k[0], sg.KW = g.k[1], sg.sh = g.s[0], sg.sw = g.s[1], sg.ph = g.pb[0], sg.pw = g.pb[1];
    return sg;
  }
  bool SmallConvApplies(const Tensor& x, const Tensor& w, const ConvGeom& g) const {
    if (g.nd != 2 || !SmallConvShape(w.dims()) || g.d[0] != 1 || g.d[1] != 1) return false;
    return small_conv::Applies(SmallGeom(x, w, g));
  }

  Status RunSmallConv(KernelContext& ctx, const Tensor& x, const Tensor& w, const Tensor* bias, const ConvGeom& g,
                      Tensor* y) const {
    const small_conv::Geom sg = SmallGeom(x, w, g);
    const int64_t N = x.dims()[0], taps = sg.C * sg.KH * sg.KW;
    // A constant W was packed at construction (for the ISA then active);
    // else packed here: M * taps floats (9408 for ResNet's 7x7 stem), a
    // scalar transpose of about 8 us on one thread before the rows start
    // (1.5% of the stem at 2 threads).
    std::vector<float> packed;
    const float* wp = small_packed_.data();
    if (small_packed_.empty() || small_isa_ != sgemm::ActiveIsa() ||
        static_cast<int64_t>(small_packed_.size()) != small_conv::PackedSize(sg.M, taps)) {
      packed.resize(small_conv::PackedSize(sg.M, taps));
      small_conv::Pack(w.data<float>(), sg.M, taps, packed.data());
      wp = packed.data();
    }
    const bool clamp = act_.kind == Activation::Kind::kClamp;
    const bool act_pass = act_.kind != Activation::Kind::kNone && !clamp;
    const float* xv = x.data<float>();
    const float* bv = bias ? bias->data<float>() : nullptr;
    float* yv = y->data<float>();
    const int64_t in_size = sg.C * sg.H * sg.W, out_size = sg.M * sg.OH * sg.OW;
    const int64_t row_work = std::max<int64_t>(1, sg.OW * sg.M * taps);
    ThreadPool::For(ctx.threads(), N * sg.OH, std::max<int64_t>(1, 65536 / row_work), [&](int64_t begin, int64_t end) {
      // Runs of rows of one image.
      for (int64_t u = begin; u < end;) {
        const int64_t n = u / sg.OH, oh = u % sg.OH, stop = std::min(end - u, sg.OH - oh) + oh;
        small_conv::Rows(sg, xv + n * in_size, wp, bv, clamp, act_.lo, act_.hi, oh, stop, yv + n * out_size);
        if (act_pass) {
          for (int64_t m = 0; m < sg.M; ++m)
            Epilogue<float>(yv + n * out_size + (m * sg.OH + oh) * sg.OW, (stop - oh) * sg.OW, 0.f, act_);
        }
        u += stop - oh;
      }
    });
    return Status::OK();
  }

  // A constant float W [M, Cg, k...] is each group's GEMM left operand
  // [Mg, Cg*kvol]: packed once here (depthwise 2-D convs take their direct
  // path and need none). The packed copies add about W's size again.
  void PackConstantWeight(const KernelInfo& info) {
    const Tensor* w = info.ConstantInput(1);
    if (w == nullptr || w->type() != ElemType::kFloat || w->rank() < 3 || attrs_.group < 1) return;
    const Dims& wd = w->dims();
    const int64_t M = wd[0], Cg = wd[1], Kc = w->size() / std::max<int64_t>(M, 1);
    if (M == 0 || Kc == 0 || M % attrs_.group != 0 || !FitsBlasInt(M) || !FitsBlasInt(Kc)) return;
    if (wd.size() == 4 && Cg == 1 && attrs_.group > 1) return;
    // The direct conv of few channels: W packed for it once here, and kept
    // (a residual Z takes the GEMM over W).
    if (SmallConvShape(wd) && small_conv::PackedSize(M, Kc) > 0) {
      small_packed_.resize(small_conv::PackedSize(M, Kc));
      small_conv::Pack(w->data<float>(), M, Kc, small_packed_.data());
      small_isa_ = sgemm::ActiveIsa();
      return;
    }
    const int64_t Mg = M / attrs_.group;
    transposed_ = TransposedWins(info, wd, Mg);
    for (int64_t grp = 0; grp < attrs_.group; ++grp) {
      const float* wg = w->data<float>() + grp * Mg * Kc;
      packed_w_.push_back(transposed_ ? sgemm::PackB(true, Kc, Mg, wg, Kc) : sgemm::PackA(false, Mg, Kc, wg, Kc));
      if (packed_w_.back().empty()) {
        packed_w_.clear();
        transposed_ = false;
        return;
      }
    }
    // Every group's GEMM reads its packed copy only: the original may go.
    info.ReleaseConstantInput(1);
  }

  // A constant float W of a 2-D conv of stride 2, group 1, more than
  // kSmallConvChannels input channels, a kernel of 2 to kMaxTaps taps
  // (ResNet's stride-2 3x3 convs):
  // packed for the direct kernel of strided_conv.h, which then runs it
  // whatever the input size (in place of the GEMM over the input's phase
  // planes, or over its even rows and columns for a 1x1), and W released.
  bool PrepareStrided(const KernelInfo& info) {
    const Tensor* w = info.ConstantInput(1);
    if (w == nullptr || w->type() != ElemType::kFloat || w->rank() != 4 || attrs_.group != 1) return false;
    if (attrs_.strides != std::vector<int64_t>{2, 2}) return false;
    const Dims& wd = w->dims();
    // A 1x1 conv keeps the GEMM over its input's even rows and columns
    // (Subsampled), as fast there (ResNet-50's downsample convs).
    if (wd[1] <= kSmallConvChannels || wd[0] < 1 || wd[2] * wd[3] < 2 || wd[2] * wd[3] > strided_conv::kMaxTaps)
      return false;
    strided_ = strided_conv::Pack(w->data<float>(), wd[0], wd[1], wd[2] * wd[3]);
    if (strided_.empty()) return false;
    info.ReleaseConstantInput(1);
    return true;
  }
  strided_conv::Geom StridedGeom(const Tensor& x, const ConvGeom& g) const {
    strided_conv::Geom sg;
    if (g.nd != 2) return sg;
    sg.C = x.dims()[1], sg.H = g.in[0], sg.W = g.in[1], sg.M = strided_.M, sg.OH = g.out[0], sg.OW = g.out[1];
    sg.KH = g.k[0], sg.KW = g.k[1], sg.sh = g.s[0], sg.sw = g.s[1], sg.ph = g.pb[0], sg.pw = g.pb[1];
    sg.dh = g.d[0], sg.dw = g.d[1];
    return sg;
  }
  Status RunStrided(KernelContext& ctx, const Tensor& x, const Tensor* bias, const Tensor* z, const ConvGeom& g,
                    Tensor* y) const {
    const bool clamp = act_.kind == Activation::Kind::kClamp;
    const strided_conv::Geom sg = StridedGeom(x, g);
    if (!strided_conv::Usable(strided_, sg))
      return MakeError(ErrorCode::kFail, "Conv: weight W was packed for the direct stride-2 kernel of another CPU path (",
                       "the path changed after the session was created)");
    if (!strided_conv::Run(sg, x.dims()[0], x.data<float>(), strided_, bias ? bias->data<float>() : nullptr,
                           z ? z->data<float>() : nullptr, clamp, act_.lo, act_.hi, y->data<float>(), ctx.threads()))
      return MakeError(ErrorCode::kFail, "Conv: out of memory for the zeros of input X ", ShapeToString(x.dims()),
                       "'s padding");
    ActivationPass(ctx, y);
    return Status::OK();
  }

  // A constant float W of a 3x3 stride-1 conv (winograd_conv.h's kind) on a
  // shape where Winograd wins (winograd::TileFor; on the input size the graph
  // declares, or by channels alone where it declares none): its filters
  // transformed once, here, and W released. Every run then takes
  // RunWinograd (it handles any image size and batch); false otherwise.
  bool PrepareWinograd(const KernelInfo& info) {
    const Tensor* w = info.ConstantInput(1);
    if (w == nullptr || w->type() != ElemType::kFloat || w->rank() != 4 || attrs_.group != 1) return false;
    const Dims& wd = w->dims();
    if (!attrs_.kernel_shape.empty() && attrs_.kernel_shape != std::vector<int64_t>{wd[2], wd[3]}) return false;
    // auto_pad gives a 3x3 stride-1 conv pads of 1 (SAME_*) or 0 (VALID).
    const std::vector<int64_t> pads = attrs_.auto_pad == AutoPad::kNotSet ? attrs_.pads : std::vector<int64_t>{};
    if (!winograd::Supports({wd[2], wd[3]}, attrs_.strides, attrs_.dilations, pads, attrs_.group)) return false;
    if (attrs_.strides.size() > 2 || attrs_.dilations.size() > 2 || pads.size() > 4) return false;
    if (wd[0] == 0 || wd[1] == 0) return false;
    int64_t oh = 0, ow = 0;  // unknown
    const TypeInfo& xt = info.InputType(0);
    if (xt.has_shape && xt.dims.size() == 4 && xt.dims[2].known() && xt.dims[3].known()) {
      const int64_t pad_h = pads.empty() ? (attrs_.auto_pad == AutoPad::kValid ? 0 : 2) : pads[0] + pads[2];
      const int64_t pad_w = pads.empty() ? (attrs_.auto_pad == AutoPad::kValid ? 0 : 2) : pads[1] + pads[3];
      oh = xt.dims[2].value + pad_h - 2;
      ow = xt.dims[3].value + pad_w - 2;
    }
    const int tile = winograd::TileFor(wd[1], wd[0], oh, ow, info.allow_winograd_f4);
    if (tile == 0) return false;
    wino_ = winograd::TransformFilters(w->data<float>(), wd[0], wd[1], tile);
    info.ReleaseConstantInput(1);
    return true;
  }

  Status RunWinograd(KernelContext& ctx, const Tensor& x, const Tensor* bias, const Tensor* z, const ConvGeom& g,
                     Tensor* y) const {
    winograd::Geom wg;
    wg.N = x.dims()[0], wg.C = x.dims()[1], wg.H = g.in[0], wg.W = g.in[1];
    wg.M = wino_.M, wg.OH = g.out[0], wg.OW = g.out[1], wg.ph = g.pb[0], wg.pw = g.pb[1];
    const bool clamp = act_.kind == Activation::Kind::kClamp;
    winograd::Run(wg, wino_, x.data<float>(), bias ? bias->data<float>() : nullptr, z ? z->data<float>() : nullptr,
                  clamp, act_.lo, act_.hi, y->data<float>(), ctx.threads());
    ActivationPass(ctx, y);
    return Status::OK();
  }

  // The activation a direct kernel did not apply itself (all but a clamp),
  // as a pass over Y.
  void ActivationPass(KernelContext& ctx, Tensor* y) const {
    if (act_.kind == Activation::Kind::kNone || act_.kind == Activation::Kind::kClamp) return;
    float* yv = y->data<float>();
    ThreadPool::For(ctx.threads(), y->size(), 16384,
                    [&](int64_t begin, int64_t end) { Epilogue<float>(yv + begin, end - begin, 0.f, act_); });
  }

  // Float convs of 1 or 2 spatial dims (not depthwise) on a CPU with an
  // SGEMM micro-kernel: the GEMM packs its right operand straight from the
  // input (no im2col matrix) and finishes each tile with bias, Z and a clamp.
  bool FusedGemmApplies(const Tensor& x, const ConvGeom& g) const {
    const int64_t C = x.dims()[1], Cg = C / attrs_.group;
    if (!sgemm::Available() || g.nd > 2 || Cg == 0) return false;
    return !(g.nd == 2 && Cg == 1 && attrs_.group == C && attrs_.group > 1);
  }

  // The sgemm::Im2Col2D of the (image, group) at `image`: 1-D convs as
  // 2-D ones of height 1.
  static sgemm::Im2Col2D Im2ColOf(const float* image, int64_t Cg, const ConvGeom& g) {
    sgemm::Im2Col2D src;
    const bool two = g.nd == 2;
    const size_t wd = g.nd - 1;
    src.x = image;
    src.C = Cg;
    src.H = two ? g.in[0] : 1;
    src.OH = two ? g.out[0] : 1;
    src.KH = two ? g.k[0] : 1;
    src.sh = two ? g.s[0] : 1;
    src.ph = two ? g.pb[0] : 0;
    src.dh = two ? g.d[0] : 1;
    src.W = g.in[wd];
    src.OW = g.out[wd];
    src.KW = g.k[wd];
    src.sw = g.s[wd];
    src.pw = g.pb[wd];
    src.dw = g.d[wd];
    return src;
  }

  // The sgemm::Epilogue of a block of Y: `bias` per row, Z at `z` (rows
  // `ldz` apart), the clamp of a fused Relu / Clip.
  sgemm::Epilogue GemmEpilogue(const float* bias, const float* z, int64_t ldz) const {
    sgemm::Epilogue ep;
    ep.bias = bias;
    ep.z = z;
    ep.ldz = ldz;
    ep.clamp = act_.kind == Activation::Kind::kClamp;
    ep.lo = act_.lo;
    ep.hi = act_.hi;
    return ep;
  }
  static bool Needed(const sgemm::Epilogue& ep) { return ep.bias != nullptr || ep.z != nullptr || ep.clamp; }

  // A stride-2 conv (kernel up to 7x7) reads its input's four phase planes
  // instead (sgemm::Im2Col2D::phases), split from the (image, group) into a
  // per-thread scratch (over `pool`), where every tap fits them: its im2col
  // rows are then masked loads at a fixed offset (3x3: strips read in place
  // by the tiles), not gathered from every other element (the gather was a
  // fifth of ResNet-50's stride-2 3x3 convs).
  static void UsePhases(sgemm::Im2Col2D* src, ThreadPool* pool) {
    if (src->KH > sgemm::kMaxPhaseKernel || src->KW > sgemm::kMaxPhaseKernel || src->sh != 2 || src->sw != 2 ||
        !depthwise::Available() || !phases::Fits(src->KH, src->ph, src->dh, src->H, src->OH) ||
        !phases::Fits(src->KW, src->pw, src->dw, src->W, src->OW))
      return;
    const int64_t H = src->H, W = src->W, OH = src->OH, OW = src->OW, per = 4 * OH * OW;
    thread_local std::vector<float> split;
    if (static_cast<int64_t>(split.size()) < src->C * per) split.resize(src->C * per);
    const float* image = src->x;
    float* out = split.data();
    ThreadPool::For(pool, src->C, std::max<int64_t>(1, 16384 / std::max<int64_t>(per, 1)),
                    [&](int64_t begin, int64_t end) {
                      phases::Split(image + begin * H * W, end - begin, H * W, H, W, OH, OW, 0.f, out + begin * per);
                    });
    src->x = out;
    src->phases = true;
  }

  // A 1x1 conv of stride 2 without leading pads reads the even rows and
  // columns of its input alone: its product is the pointwise one of those,
  // [Cg, OS], made here (phases::Evens, over `pool`) into a per-thread
  // scratch and returned; null where this does not apply. ResNet-50's
  // downsample convs, batch 8, 1 thread: 9.2 / 8.7 / 7.6 ms gathering every
  // other element into packed panels, about 7.2 / 7.4 / 7.4 ms this way.
  static const float* Subsampled(const sgemm::Im2Col2D& src, ThreadPool* pool) {
    if (src.KH != 1 || src.KW != 1 || src.sh != 2 || src.sw != 2 || src.ph != 0 || src.pw != 0 ||
        !depthwise::Available())
      return nullptr;
    const int64_t H = src.H, W = src.W, OH = src.OH, OW = src.OW, per = OH * OW;
    thread_local std::vector<float> evens;
    if (static_cast<int64_t>(evens.size()) < src.C * per) evens.resize(src.C * per);
    float* out = evens.data();
    const float* image = src.x;
    ThreadPool::For(pool, src.C, std::max<int64_t>(1, 16384 / std::max<int64_t>(per, 1)),
                    [&](int64_t begin, int64_t end) {
                      phases::Evens(image + begin * H * W, end - begin, H * W, H, W, OH, OW, out + begin * per);
                    });
    return out;
  }

  // The matrix a 1x1 conv's GEMM reads in place: the image itself
  // (`pointwise`) or its subsampling (Subsampled); null for every other conv,
  // whose im2col `src` then reads the phase planes where they apply (UsePhases).
  static const float* PlainOrPhases(bool pointwise, const float* image, sgemm::Im2Col2D* src, ThreadPool* pool) {
    const float* plain = pointwise ? image : Subsampled(*src, pool);
    if (plain == nullptr) UsePhases(src, pool);
    return plain;
  }

  // One (image, group) of the transposed product: Y^T [OS, Mg] into a
  // per-thread scratch, then transposed into Y with bias, Z and the
  // activation (Y^T is small: this runs for small images only).
  void TransposedUnit(const Tensor& x, int64_t n, int64_t grp, const ConvGeom& g, const float* bv, const float* zv,
                      float* yv, ThreadPool* pool) const {
    const int64_t C = x.dims()[1], Cg = C / attrs_.group, Mg = packed_w_[grp].rows(), M = Mg * attrs_.group;
    const int64_t Kc = Cg * g.kvol, OS = g.out_size;
    const float* image = x.data<float>() + (n * C + grp * Cg) * g.in_size;
    const bool pointwise = IsPointwise(g);
    // Rows of Y^T a few lines more than Mg apart: at 2048 channels they
    // would be 8 KiB apart and a tile's rows would fight over one L1 set.
    const int64_t ldt = Mg + 16;
    thread_local std::vector<float> scratch;
    if (static_cast<int64_t>(scratch.size()) < OS * ldt) scratch.resize(OS * ldt);
    float* yt = scratch.data();
    sgemm::Im2Col2D src = Im2ColOf(image, Cg, g);
    src.transposed = true;
    // Pointwise: X_(n,grp) [Kc, OS] (or its subsampling) is itself the matrix; A = its transpose.
    const float* plain = PlainOrPhases(pointwise, image, &src, pool);
    const int64_t off = (n * M + grp * Mg) * OS;
    // Bias, Z and a clamp (Relu, Clip) finish Y inside the GEMM's tasks,
    // each moving its block of Y^T into Y (Epilogue::t_out): no pass, and no
    // fork-join, of its own; other activations take a pass after.
    const bool in_gemm = act_.kind == Activation::Kind::kNone || act_.kind == Activation::Kind::kClamp;
    sgemm::Epilogue ep = GemmEpilogue(bv ? bv + grp * Mg : nullptr, zv ? zv + off : nullptr, OS);
    ep.t_out = yv + off;
    ep.ldt = OS;
    sgemm::Gemm(true, false, OS, Mg, Kc, 1.f, plain ? plain : image, OS, nullptr, Mg, 0.f, yt, ldt, pool, nullptr,
                &packed_w_[grp], plain ? nullptr : &src, in_gemm ? &ep : nullptr);
    if (in_gemm) return;
    ThreadPool::For(pool, Mg, std::max<int64_t>(1, 8192 / std::max<int64_t>(OS, 1)), [&](int64_t begin, int64_t end) {
      sgemm::Transpose(OS, end - begin, yt + begin, ldt, yv + off + begin * OS, OS);
      for (int64_t m = begin; m < end; ++m) {
        float* yr = yv + off + m * OS;
        if (zv != nullptr) {
          const float* zr = zv + off + m * OS;
          for (int64_t j = 0; j < OS; ++j) yr[j] += zr[j];
        }
        Epilogue<float>(yr, OS, bv ? bv[grp * Mg + m] : 0.f, act_);
      }
    });
  }

  // `z_in_y`: Y already holds the sum Z (its bytes were Z's), so the GEMM
  // accumulates onto it.
  Status RunFusedGemm(KernelContext& ctx, const Tensor& x, const Tensor& w, const Tensor* bias, const Tensor* z,
                      const ConvGeom& g, Tensor* y, bool z_in_y = false) const {
    const int64_t N = x.dims()[0], C = x.dims()[1], M = w.dims()[0];
    const int64_t Cg = C / attrs_.group, Mg = M / attrs_.group, Kc = Cg * g.kvol, OS = g.out_size;
    ONYX_CHECK_ARG(FitsBlasInt(Mg) && FitsBlasInt(Kc) && FitsBlasInt(OS), "Conv: input X ", ShapeToString(x.dims()),
                   " and weight W ", ShapeToString(w.dims()), " are too large for one GEMM");
    const float* xv = x.data<float>();
    const float* wv = w.data<float>();
    const float* bv = bias ? bias->data<float>() : nullptr;
    const float* zv = z ? z->data<float>() : nullptr;
    float* yv = y->data<float>();
    const bool pointwise = IsPointwise(g);
    const bool clamp = act_.kind == Activation::Kind::kClamp;
    const bool act_pass = act_.kind != Activation::Kind::kNone && !clamp;
    const bool packed = static_cast<int64_t>(packed_w_.size()) == attrs_.group;

    // Y block of (n, grp) = W_grp [Mg, Kc] x im2col(X_(n,grp)) [Kc, OS].
    auto unit = [&](int64_t n, int64_t grp, ThreadPool* pool) {
      if (transposed_) return TransposedUnit(x, n, grp, g, bv, zv, yv, pool);
      const float* image = xv + (n * C + grp * Cg) * g.in_size;
      float* yb = yv + (n * M + grp * Mg) * OS;
      sgemm::Im2Col2D src = Im2ColOf(image, Cg, g);
      // A 1x1 conv reads its input (or its subsampling) as B, in place under the packed weights.
      const float* plain = PlainOrPhases(pointwise, image, &src, pool);
      const sgemm::Epilogue ep =
          GemmEpilogue(bv ? bv + grp * Mg : nullptr, zv ? zv + (n * M + grp * Mg) * OS : nullptr, OS);
      const bool use_ep = Needed(ep);
      sgemm::Gemm(false, false, Mg, OS, Kc, 1.f, wv + grp * Mg * Kc, Kc, plain, OS, z_in_y ? 1.f : 0.f, yb, OS, pool,
                  packed ? &packed_w_[grp] : nullptr, nullptr, plain ? nullptr : &src, use_ep ? &ep : nullptr);
      if (act_pass) {
        ThreadPool::For(pool, Mg, std::max<int64_t>(1, 16384 / std::max<int64_t>(OS, 1)),
                        [&](int64_t begin, int64_t end) {
                          for (int64_t m = begin; m < end; ++m) Epilogue<float>(yb + m * OS, OS, 0.f, act_);
                        });
      }
    };
    const double work = static_cast<double>(Mg) * OS * Kc;
    const int64_t units = N * attrs_.group;
    const int64_t threads = ctx.threads() ? ctx.threads()->NumThreads() : 1;
    // Whole units per thread: many small GEMMs (grouped convs, late small
    // feature maps), or enough images (batch 8 on 2 threads) that each
    // thread's share is even: one fork-join per conv instead of one per
    // image, and no GEMM split into uneven halves.
    const bool even_batch = threads > 1 && units >= threads && (units % threads == 0 || units >= 4 * threads);
    if ((work <= kBlasSingleThreadWork && units > 1) || even_batch) {
      const int64_t min_chunk = std::max<int64_t>(1, static_cast<int64_t>(65536.0 / std::max(work, 1.0)));
      ThreadPool::For(ctx.threads(), units, min_chunk, [&](int64_t begin, int64_t end) {
        for (int64_t u = begin; u < end; ++u) unit(u / attrs_.group, u % attrs_.group, nullptr);
      });
      return Status::OK();
    }
    for (int64_t n = 0; n < N; ++n) {
      for (int64_t grp = 0; grp < attrs_.group; ++grp) {
        if (ctx.terminate_requested()) return MakeError(ErrorCode::kFail, "Conv: run terminated on request");
        unit(n, grp, ctx.threads());
      }
    }
    return Status::OK();
  }

  // Whether this conv, on the input size the graph declares, runs better as
  // the transposed product Y^T [OS, Mg] = im2col(X)^T W^T: its tiles run
  // MR output positions by NR output channels, so a small image (7x7: 49
  // columns, three quarters of two 32-wide panels) wastes little, where the
  // plain product rounds OS up to half panels. A partial row tile counts as
  // at least a third of one (a short tile is latency-bound). Only for 1-D /
  // 2-D non-depthwise convs (RunFusedGemm's), and when the size is known.
  bool TransposedWins(const KernelInfo& info, const Dims& wd, int64_t Mg) const {
    const TypeInfo& xt = info.InputType(0);
    if (!sgemm::Available() || !xt.has_shape || xt.dims.size() != wd.size() || wd.size() > 4) return false;
    if (wd[1] == 1 && attrs_.group > 1 && wd.size() == 4) return false;  // depthwise
    Dims xd{1, wd[1] * attrs_.group};
    for (size_t j = 2; j < xt.dims.size(); ++j) {
      if (!xt.dims[j].known()) return false;
      xd.push_back(xt.dims[j].value);
    }
    ConvGeom g;
    if (!Resolve(xd, wd, &g).ok() || g.out_size <= 0) return false;
    const int64_t mr = sgemm::TileRows(), w = sgemm::TileCols() / 2;
    auto rows = [&](int64_t r) { return r / mr * mr + (r % mr ? std::max(r % mr, (mr + 2) / 3) : 0); };
    auto cols = [&](int64_t c) { return (c + w - 1) / w * w; };
    const double plain = static_cast<double>(rows(Mg)) * cols(g.out_size);
    const double trans = static_cast<double>(rows(g.out_size)) * cols(Mg);
    if (trans >= 0.9 * plain) return false;
    // A shallow 1x1 stride-1 conv stays plain: moving Y^T back costs about
    // as much per output as 70 multiply-adds, which a product of depth 160
    // does not earn back (1 thread, Zen 5, 4 images, MobileNetV2's 160 ->
    // 960 channels at 7x7, bias and Relu6: 146-160 GFLOP/s transposed,
    // 175-185 plain; at depth 320 and more, 1280 to 2048 output channels, the
    // transposed product is 5-25% faster).
    // At 14x14 the plain product stays: though the transposed one is 4-11%
    // faster on 1 thread with caches rinsed (ResNet-50's 1024 -> 256 and
    // 1024 -> 512 channels), in the model on 2 threads (one A/B run each)
    // 1024 -> 512 took 8-9% more time whether the tasks split positions or
    // channels, and 1024 -> 256 3% more (positions) or about the same.
    return !(IsPointwise(g) && wd[1] * g.kvol <= 192);
  }

  Status Resolve(const Dims& xd, const Dims& wd, ConvGeom* g) const {
    return conv::ResolveConv({"Conv", "input X", "weight W"}, xd, wd, attrs_, g);
  }

  template <typename T>
  Status Run(KernelContext& ctx, const Tensor& x, const Tensor& w, const Tensor* bias, const ConvGeom& g,
             const Activation& act, Tensor* y) const {
    const int64_t N = x.dims()[0], C = x.dims()[1], M = w.dims()[0];
    const int64_t Cg = C / attrs_.group, Mg = M / attrs_.group;
    const T* xv = x.data<T>();
    const T* wv = w.data<T>();
    const T* bv = bias ? bias->data<T>() : nullptr;
    T* yv = y->data<T>();

    if (g.nd == 2 && Cg == 1 && attrs_.group == C && attrs_.group > 1) {
      std::vector<int64_t> lo(g.k[1]), hi(g.k[1]);
      for (int64_t kw = 0; kw < g.k[1]; ++kw) ValidRange(kw * g.d[1] - g.pb[1], g.s[1], g.in[1], g.out[1], &lo[kw], &hi[kw]);
      const int64_t per_plane = g.out_size * g.kvol;
      const int64_t min_chunk = std::max<int64_t>(1, 32768 / std::max<int64_t>(per_plane, 1));
      if constexpr (std::is_same<T, float>::value) {
        if (depthwise::Available()) {
          depthwise::Plane2D pg;
          pg.H = g.in[0], pg.W = g.in[1], pg.OH = g.out[0], pg.OW = g.out[1], pg.KH = g.k[0], pg.KW = g.k[1];
          pg.sh = g.s[0], pg.sw = g.s[1], pg.ph = g.pb[0], pg.pw = g.pb[1], pg.dh = g.d[0], pg.dw = g.d[1];
          const bool clamp = act.kind == Activation::Kind::kClamp;
          const bool act_pass = act.kind != Activation::Kind::kNone && !clamp;
          ThreadPool::For(ctx.threads(), N * M, min_chunk, [&](int64_t begin, int64_t end) {
            // Runs of planes of one image; with one output per channel
            // (Mg == 1) plane m reads channel m, so a run is one call.
            for (int64_t p = begin; p < end;) {
              const int64_t n = p / M, m = p % M, c = m / Mg;
              const int64_t count = Mg == 1 ? std::min(end - p, M - m) : 1;
              depthwise::Run(pg, count, xv + (n * C + c) * g.in_size, g.in_size, wv + m * g.kvol, g.kvol,
                             bv ? bv + m : nullptr, clamp, act.lo, act.hi, yv + p * g.out_size, g.out_size);
              if (act_pass) Epilogue<float>(yv + p * g.out_size, count * g.out_size, 0.f, act);
              p += count;
            }
          });
          return Status::OK();
        }
        if (IsFastDepthwise(g)) {
          ThreadPool::For(ctx.threads(), N * M, min_chunk, [&](int64_t begin, int64_t end) {
            std::vector<float> scratch(Dw3x3ScratchSize(g));
            for (int64_t p = begin; p < end; ++p) {
              const int64_t n = p / M, m = p % M, c = m / Mg;
              Dw3x3Plane(xv + (n * C + c) * g.in_size, wv + m * 9, bv ? bv[m] : 0.f, g, act, scratch.data(),
                         yv + p * g.out_size);
            }
          });
          return Status::OK();
        }
      }
      ThreadPool::For(ctx.threads(), N * M, min_chunk, [&](int64_t begin, int64_t end) {
        for (int64_t p = begin; p < end; ++p) {
          const int64_t n = p / M, m = p % M, c = m / Mg;
          DepthwisePlane<T>(xv + (n * C + c) * g.in_size, wv + m * g.kvol, bv ? bv[m] : T(0), g, lo, hi, act,
                            yv + p * g.out_size);
        }
      });
      return Status::OK();
    }

    const int64_t Kc = Cg * g.kvol, OS = g.out_size;
    ONYX_CHECK_ARG(FitsBlasInt(Mg) && FitsBlasInt(Kc) && FitsBlasInt(OS), "Conv: input X ", ShapeToString(x.dims()),
                   " and weight W ", ShapeToString(w.dims()), " are too large for one GEMM");
    const bool pointwise = IsPointwise(g);

    // Y block of (n, grp) = W_grp [Mg, Kc] x cols [Kc, OS]; bias and activation
    // follow in `epilogue`, over output rows [m_begin, m_end) of the block.
    auto block = [&](int64_t n, int64_t grp) { return yv + (n * M + grp * Mg) * OS; };
    auto epilogue = [&](int64_t n, int64_t grp, int64_t m_begin, int64_t m_end) {
      if (bv == nullptr && act.kind == Activation::Kind::kNone) return;
      T* yb = block(n, grp);
      for (int64_t m = m_begin; m < m_end; ++m) Epilogue<T>(yb + m * OS, OS, bv ? bv[grp * Mg + m] : T(0), act);
    };
    // `pool`: null inside work already spread over the pool.
    auto gemm = [&](int64_t n, int64_t grp, const T* cols, ThreadPool* pool) {
      const sgemm::Packed* pw =
          std::is_same<T, float>::value && static_cast<int64_t>(packed_w_.size()) == attrs_.group ? &packed_w_[grp]
                                                                                                   : nullptr;
      BlasGemm<T>(false, false, Mg, OS, Kc, T(1), wv + grp * Mg * Kc, Kc, cols, OS, T(0), block(n, grp), OS, pool,
                  pw);
    };
    auto image = [&](int64_t n, int64_t grp) { return xv + (n * C + grp * Cg) * g.in_size; };

    const double work = static_cast<double>(Mg) * OS * Kc;
    const int64_t units = N * attrs_.group;
    if (work <= kBlasSingleThreadWork && units > 1) {
      // Many small GEMMs (grouped convs, late small feature maps): each thread
      // takes whole (image, group) units with its own column buffer.
      const int64_t min_chunk = std::max<int64_t>(1, static_cast<int64_t>(65536.0 / std::max(work, 1.0)));
      ThreadPool::For(ctx.threads(), units, min_chunk, [&](int64_t begin, int64_t end) {
        // Uninitialised scratch: im2col writes every element.
        Tensor cols(x.type(), {pointwise ? 0 : Kc * OS});
        for (int64_t u = begin; u < end; ++u) {
          const int64_t n = u / attrs_.group, grp = u % attrs_.group;
          if (pointwise) {
            gemm(n, grp, image(n, grp), nullptr);
          } else {
            conv::Im2Col<T>(image(n, grp), g, 0, Kc, cols.data<T>());
            gemm(n, grp, cols.data<T>(), nullptr);
          }
          epilogue(n, grp, 0, Mg);
        }
      });
      return Status::OK();
    }

    // Big GEMMs: each call is split over the pool (sgemm.h), as are im2col and the epilogue.
    Tensor cols(x.type(), {pointwise ? 0 : Kc * OS});
    for (int64_t n = 0; n < N; ++n) {
      for (int64_t grp = 0; grp < attrs_.group; ++grp) {
        if (ctx.terminate_requested()) return MakeError(ErrorCode::kFail, "Conv: run terminated on request");
        if (pointwise) {
          gemm(n, grp, image(n, grp), ctx.threads());
        } else {
          const T* src = image(n, grp);
          ThreadPool::For(ctx.threads(), Kc, std::max<int64_t>(1, 16384 / std::max<int64_t>(OS, 1)),
                          [&](int64_t begin, int64_t end) { conv::Im2Col<T>(src, g, begin, end, cols.data<T>()); });
          gemm(n, grp, cols.data<T>(), ctx.threads());
        }
        ThreadPool::For(ctx.threads(), Mg, std::max<int64_t>(1, 16384 / std::max<int64_t>(OS, 1)),
                        [&](int64_t begin, int64_t end) { epilogue(n, grp, begin, end); });
      }
    }
    return Status::OK();
  }

  conv::Attrs attrs_;
  bool fused_ = false;  // com.microsoft FusedConv: activation and input Z
  bool nhwc_ = false;   // com.microsoft NhwcConv: channels last
  // Per group, when W is a constant float: W_grp as the left operand, or
  // with transposed_ W_grp^T as the right one (TransposedWins).
  std::vector<sgemm::Packed> packed_w_;
  bool transposed_ = false;
  // A 3x3 stride-1 conv's filters for the Winograd path (PrepareWinograd), or empty.
  winograd::Filters wino_;
  // A stride-2 conv's weights for strided_conv.h's direct kernel, or empty.
  strided_conv::Packed strided_;
  // W packed for the direct conv of few channels (small_conv::Pack) with
  // the ISA active then; empty where W is not constant.
  std::vector<float> small_packed_;
  sgemm::Isa small_isa_ = sgemm::Isa::kBaseline;
  Activation act_;
};

}  // namespace

ONYX_REGISTER_KERNEL(ConvKernel, "", "Conv", 1, kMaxVersion, FloatOrHalfTypes());
ONYX_REGISTER_KERNEL(ConvKernel, "com.microsoft", "FusedConv", 1, kMaxVersion, FloatTypes());
ONYX_REGISTER_KERNEL(ConvKernel, "com.microsoft", "NhwcConv", 1, kMaxVersion, FloatOrHalfTypes());

}  // namespace onyx
