// MaxPool, AveragePool (NCHW, 1 to 3 spatial dims), GlobalMaxPool and
// GlobalAveragePool (any rank); onnxruntime's quantized com.microsoft
// QLinearAveragePool and QLinearGlobalAveragePool (int8/uint8, per-tensor
// scales), which onnxruntime.quantization writes in QOperator format, and its
// com.microsoft NhwcMaxPool (int8/uint8, X [N, spatial..., C]; MaxPool's
// attributes less storage_order; optimizer/nhwc_transformer.cc writes it).
#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <type_traits>
#include <vector>

#include "providers/cpu/common/dispatch.h"
#include "providers/cpu/common/fast_math.h"
#include "providers/cpu/common/half_float.h"
#include "providers/cpu/nn/depthwise_conv.h"
#include "providers/cpu/nn/pool_geometry.h"
#include "providers/cpu/quantization/qlinear_common.h"
#include "providers/kernel.h"

namespace onyx {

namespace {

enum class PoolKind { kMax, kAverage };

const char* KindName(PoolKind k) { return k == PoolKind::kMax ? "MaxPool" : "AveragePool"; }

// float accumulates in float, double in double, integers in double.
template <typename T>
using AccumOf = std::conditional_t<std::is_same<T, float>::value, float, double>;

// One spatial dim of a pooling window walk: for output position o, the window
// starts at input coordinate start[o] and taps t in [lo[o], hi[o]) fall inside
// the input; incl[o] counts taps inside the padded extent (count_include_pad).
struct PoolAxis {
  int64_t in = 1, out = 1, dil = 1, k = 1, stride = 1, pad = 0;
  std::vector<int64_t> start, lo, hi, incl;
};

// The spatial dims padded to exactly three (leading dims of size 1), so one
// loop nest serves 1-D, 2-D and 3-D pools.
constexpr size_t kPoolDims = pool::kMaxSpatialDims;

template <PoolKind kKind>
class PoolKernel final : public OpKernel {
 public:
  Status Init(const KernelInfo& info) {
    pool::Attrs a;
    ONYX_RETURN_IF_ERROR(pool::ParseAttrs(info, KindName(kKind), &a));
    attrs_ = std::move(a);
    channels_last_ = info.node().op_type == "NhwcMaxPool";
    return Status::OK();
  }

  Status Compute(KernelContext& ctx) const override {
    // float16/bfloat16 run the float code, accumulating in float.
    if (const Tensor* in0 = ctx.Input(0); in0 != nullptr && IsHalfType(in0->type()))
      return ComputeThroughFloat(*this, ctx, {{0, 0}});
    const char* op = channels_last_ ? "NhwcMaxPool" : KindName(kKind);
    const Tensor* x = nullptr;
    ONYX_RETURN_IF_ERROR(ctx.RequiredInput(0, &x));
    const size_t nd = attrs_.kernel.size();
    ONYX_CHECK_ARG(x->dims().size() == nd + 2, op, ": input X ", ShapeToString(x->dims()), " must have rank ", nd + 2,
                   " to match kernel_shape ", ShapeToString(attrs_.kernel));
    if (channels_last_) return ComputeChannelsLast(ctx, *x);
    const Dims& xd = x->dims();

    // Axes [0, kPoolDims - nd) are dummies of size 1.
    PoolAxis axes[kPoolDims];
    Dims yd{xd[0], xd[1]};
    for (size_t j = 0; j < nd; ++j) {
      PoolAxis& a = axes[kPoolDims - nd + j];
      ONYX_RETURN_IF_ERROR(PlanAxis(xd, j, &a));
      yd.push_back(a.out);
    }
    for (size_t j = 0; j < kPoolDims - nd; ++j) PlanDummy(&axes[j]);

    Tensor* y = ctx.Output(0, yd, x->type());
    Tensor* indices = nullptr;
    if (kKind == PoolKind::kMax && ctx.OutputCount() > 1) indices = ctx.Output(1, yd, ElemType::kInt64);
    if (y == nullptr || y->size() == 0) return Status::OK();

    return DispatchNumeric(x->type(), op, [&](auto tag) -> Status {
      using T = typename decltype(tag)::type;
      if (indices) {
        RunWithIndices<T>(ctx, *x, axes, y->data<T>(), indices->data<int64_t>());
      } else {
        RunRows<T>(ctx, *x, axes, y->data<T>());
      }
      return Status::OK();
    });
  }

 private:
  // NhwcMaxPool: each output position's C channels are the elementwise
  // maximum of the rows of C the window's taps read.
  Status ComputeChannelsLast(KernelContext& ctx, const Tensor& x) const {
    const Dims& xd = x.dims();
    const size_t nd = attrs_.kernel.size();
    Dims first{xd[0], xd.back()};  // [N, C, spatial...] for PlanAxis
    first.insert(first.end(), xd.begin() + 1, xd.end() - 1);
    PoolAxis axes[kPoolDims];
    Dims yd{xd[0]};
    for (size_t j = 0; j < nd; ++j) {
      PoolAxis& a = axes[kPoolDims - nd + j];
      ONYX_RETURN_IF_ERROR(PlanAxis(first, j, &a));
      yd.push_back(a.out);
    }
    for (size_t j = 0; j < kPoolDims - nd; ++j) PlanDummy(&axes[j]);
    yd.push_back(xd.back());
    Tensor* y = ctx.Output(0, yd, x.type());
    if (y == nullptr || y->size() == 0) return Status::OK();
    return DispatchOver(qlinear::Int8TypeSet{}, x.type(), "NhwcMaxPool", [&](auto tag) -> Status {
      using T = typename decltype(tag)::type;
      RunChannelsLast<T>(ctx, x.data<T>(), xd[0], xd.back(), axes, y->data<T>());
      return Status::OK();
    });
  }

  template <typename T>
  static void MaxInto(const T* __restrict src, int64_t n, T* __restrict dst) {
    for (int64_t c = 0; c < n; ++c) dst[c] = src[c] > dst[c] ? src[c] : dst[c];
  }

  template <typename T>
  void RunChannelsLast(KernelContext& ctx, const T* xv, int64_t N, int64_t C, const PoolAxis* ax, T* y) const {
    const int64_t D = ax[0].in, H = ax[1].in, W = ax[2].in, OD = ax[0].out, OH = ax[1].out, OW = ax[2].out;
    const int64_t rows = N * OD * OH;  // rows of OW output positions
    ThreadPool::For(ctx.threads(), rows, std::max<int64_t>(1, 16384 / std::max<int64_t>(OW * C * ShapeSize(attrs_.kernel), 1)),
                    [&](int64_t begin, int64_t end) {
      for (int64_t r = begin; r < end; ++r) {
        const int64_t n = r / (OD * OH), od = (r / OH) % OD, oh = r % OH;
        const T* in = xv + n * D * H * W * C;
        for (int64_t ow = 0; ow < OW; ++ow) {
          T* out = y + (r * OW + ow) * C;
          std::fill(out, out + C, std::numeric_limits<T>::lowest());
          for (int64_t td = ax[0].lo[od]; td < ax[0].hi[od]; ++td) {
            const int64_t id = ax[0].start[od] + td * ax[0].dil;
            for (int64_t th = ax[1].lo[oh]; th < ax[1].hi[oh]; ++th) {
              const int64_t ih = ax[1].start[oh] + th * ax[1].dil;
              for (int64_t tw = ax[2].lo[ow]; tw < ax[2].hi[ow]; ++tw)
                MaxInto(in + ((id * H + ih) * W + ax[2].start[ow] + tw * ax[2].dil) * C, C, out);
            }
          }
        }
      }
    });
  }

  Status PlanAxis(const Dims& xd, size_t j, PoolAxis* a) const {
    const int64_t in = xd[j + 2], k = attrs_.kernel[j], s = attrs_.strides[j], d = attrs_.dilations[j];
    int64_t pb = 0, pe = 0, out = 0;
    ONYX_RETURN_IF_ERROR(pool::AxisExtent(attrs_, KindName(kKind), xd, j, &out, &pb, &pe));
    a->in = in;
    a->out = out;
    a->dil = d;
    a->k = k;
    a->stride = s;
    a->pad = pb;
    a->start.resize(out);
    a->lo.resize(out);
    a->hi.resize(out);
    a->incl.resize(out);
    for (int64_t o = 0; o < out; ++o) {
      const int64_t st = o * s - pb;
      int64_t lo = st >= 0 ? 0 : (-st + d - 1) / d;
      int64_t hi = in - st > 0 ? std::min(k, (in - st + d - 1) / d) : 0;
      int64_t incl = std::min(k, (in + pe - st + d - 1) / d);
      a->start[o] = st;
      a->lo[o] = std::min(lo, k);
      a->hi[o] = std::max(a->lo[o], hi);
      a->incl[o] = std::max<int64_t>(incl, 0);
    }
    return Status::OK();
  }

  static void PlanDummy(PoolAxis* a) {
    a->in = a->out = a->dil = a->k = a->stride = 1;
    a->pad = 0;
    a->start = {0};
    a->lo = {0};
    a->hi = {1};
    a->incl = {1};
  }

  // Walks the kernel taps outermost so that the innermost loop runs along a
  // whole output row with one input offset: contiguous for stride 1, and
  // vectorizable either way.
  template <typename T>
  void RunRows(KernelContext& ctx, const Tensor& x, const PoolAxis* ax, T* y) const {
    using Acc = AccumOf<T>;
    const PoolAxis& aw = ax[2];
    const int64_t H = ax[1].in, W = aw.in, OD = ax[0].out, OH = ax[1].out, OW = aw.out;
    const int64_t in_plane = ax[0].in * H * W, out_plane = OD * OH * OW;
    const int64_t planes = x.dims()[0] * x.dims()[1];
    // Output columns [wlo[t], whi[t]) read an in-range input column with tap t.
    std::vector<int64_t> wlo(aw.k), whi(aw.k);
    for (int64_t t = 0; t < aw.k; ++t) {
      const int64_t off = t * aw.dil - aw.pad;
      wlo[t] = std::min(OW, std::max<int64_t>(0, off >= 0 ? 0 : (-off + aw.stride - 1) / aw.stride));
      whi[t] = std::max(wlo[t], std::min(OW, W - off > 0 ? (W - off + aw.stride - 1) / aw.stride : 0));
    }
    std::vector<Acc> wcount(OW);
    for (int64_t ow = 0; ow < OW; ++ow)
      wcount[ow] = static_cast<Acc>(attrs_.count_include_pad ? aw.incl[ow] : aw.hi[ow] - aw.lo[ow]);
    const T* xv = x.data<T>();
    const int64_t sw = aw.stride, dw = aw.dil, pw = aw.pad;
    // Float 1-D / 2-D pools at width strides 1 and 2: the vector planes.
    bool vector_planes = false;
    if constexpr (std::is_same<T, float>::value)
      vector_planes = OD == 1 && aw.dil == 1 && (sw == 1 || sw == 2) && aw.k <= pool_planes::kMaxTaps &&
                      pool_planes::Available();
    // Averages: the window's count per output row (times wcount per column).
    std::vector<Acc> hcount(kKind == PoolKind::kAverage ? OH : 0);
    for (size_t oh = 0; oh < hcount.size(); ++oh)
      hcount[oh] = static_cast<Acc>(attrs_.count_include_pad ? ax[0].incl[0] * ax[1].incl[oh]
                                                       : (ax[0].hi[0] - ax[0].lo[0]) * (ax[1].hi[oh] - ax[1].lo[oh]));
    pool_planes::Geom pg;
    pg.W = W, pg.OW = OW, pg.KW = aw.k, pg.sw = sw, pg.pw = pw, pg.OH = OH, pg.dh = ax[1].dil;
    pg.H = H, pg.KH = ax[1].k, pg.sh = ax[1].stride, pg.ph = ax[1].pad;
    pg.hstart = ax[1].start.data(), pg.hlo = ax[1].lo.data(), pg.hhi = ax[1].hi.data();
    if constexpr (kKind == PoolKind::kAverage && std::is_same<T, float>::value)
      pg.div_rows = hcount.data(), pg.div_cols = wcount.data();
    ThreadPool::For(ctx.threads(), planes, std::max<int64_t>(1, 16384 / std::max<int64_t>(out_plane * ShapeSize(attrs_.kernel), 1)),
                    [&](int64_t begin, int64_t end) {
      if constexpr (std::is_same<T, float>::value) {
        if (vector_planes) {
          pool_planes::Run(pg, kKind == PoolKind::kMax, end - begin, xv + begin * in_plane, in_plane,
                           y + begin * out_plane, out_plane);
          return;
        }
      }
      std::vector<Acc> acc(kKind == PoolKind::kAverage ? OW : 0);
      for (int64_t p = begin; p < end; ++p) {
        const T* in = xv + p * in_plane;
        for (int64_t od = 0; od < OD; ++od) {
          for (int64_t oh = 0; oh < OH; ++oh) {
            T* orow = y + p * out_plane + (od * OH + oh) * OW;
            if constexpr (kKind == PoolKind::kMax) {
              std::fill(orow, orow + OW, std::numeric_limits<T>::lowest());
            } else {
              std::fill(acc.begin(), acc.end(), Acc(0));
            }
            for (int64_t td = ax[0].lo[od]; td < ax[0].hi[od]; ++td) {
              const int64_t id = ax[0].start[od] + td * ax[0].dil;
              for (int64_t th = ax[1].lo[oh]; th < ax[1].hi[oh]; ++th) {
                const T* irow = in + (id * H + ax[1].start[oh] + th * ax[1].dil) * W;
                for (int64_t t = 0; t < aw.k; ++t) {
                  const int64_t off = t * dw - pw;
                  if constexpr (kKind == PoolKind::kMax) {
                    for (int64_t ow = wlo[t]; ow < whi[t]; ++ow) {
                      const T v = irow[ow * sw + off];
                      orow[ow] = v > orow[ow] ? v : orow[ow];
                    }
                  } else {
                    for (int64_t ow = wlo[t]; ow < whi[t]; ++ow) acc[ow] += irow[ow * sw + off];
                  }
                }
              }
            }
            if constexpr (kKind == PoolKind::kAverage) {
              const Acc dh = static_cast<Acc>(
                  attrs_.count_include_pad ? ax[0].incl[od] * ax[1].incl[oh]
                                     : (ax[0].hi[od] - ax[0].lo[od]) * (ax[1].hi[oh] - ax[1].lo[oh]));
              for (int64_t ow = 0; ow < OW; ++ow) {
                const Acc c = dh * wcount[ow];
                orow[ow] = c > 0 ? static_cast<T>(acc[ow] / c) : T(0);
              }
            }
          }
        }
      }
    });
  }

  // MaxPool with Indices: one output at a time, tracking where each maximum came from.
  template <typename T>
  void RunWithIndices(KernelContext& ctx, const Tensor& x, const PoolAxis* ax, T* y, int64_t* indices) const {
    const int64_t D = ax[0].in, H = ax[1].in, W = ax[2].in;
    const int64_t OD = ax[0].out, OH = ax[1].out, OW = ax[2].out;
    const int64_t dd = ax[0].dil, dh = ax[1].dil, dw = ax[2].dil;
    const int64_t in_plane = D * H * W, out_plane = OD * OH * OW;
    const int64_t planes = x.dims()[0] * x.dims()[1];
    int64_t window = 1;
    for (int64_t k : attrs_.kernel) window *= k;
    const T* xv = x.data<T>();
    const bool column_major = attrs_.storage_order == 1;

    ThreadPool::For(ctx.threads(), planes, std::max<int64_t>(1, 16384 / std::max<int64_t>(out_plane * window, 1)),
                    [&](int64_t begin, int64_t end) {
      for (int64_t p = begin; p < end; ++p) {
        const T* in = xv + p * in_plane;
        T* out = y + p * out_plane;
        int64_t* idx = indices ? indices + p * out_plane : nullptr;
        for (int64_t od = 0; od < OD; ++od) {
          for (int64_t oh = 0; oh < OH; ++oh) {
            for (int64_t ow = 0; ow < OW; ++ow) {
              const int64_t o = (od * OH + oh) * OW + ow;
              const int64_t sd = ax[0].start[od], sh = ax[1].start[oh], sw = ax[2].start[ow];
              T best = std::numeric_limits<T>::lowest();
              int64_t best_at = -1;
              for (int64_t td = ax[0].lo[od]; td < ax[0].hi[od]; ++td) {
                const int64_t id = sd + td * dd;
                for (int64_t th = ax[1].lo[oh]; th < ax[1].hi[oh]; ++th) {
                  const int64_t ih = sh + th * dh;
                  const T* row = in + (id * H + ih) * W;
                  for (int64_t tw = ax[2].lo[ow]; tw < ax[2].hi[ow]; ++tw) {
                    const int64_t iw = sw + tw * dw;
                    if (row[iw] > best || best_at < 0) {
                      best = row[iw];
                      best_at = column_major ? id + D * (ih + H * iw) : (id * H + ih) * W + iw;
                    }
                  }
                }
              }
              out[o] = best;
              if (idx) idx[o] = best_at < 0 ? -1 : p * in_plane + best_at;
            }
          }
        }
      }
    });
  }

  pool::Attrs attrs_;
  bool channels_last_ = false;  // NhwcMaxPool
};

template <PoolKind kKind>
class GlobalPoolKernel final : public OpKernel {
 public:
  Status Init(const KernelInfo&) { return Status::OK(); }

  Status Compute(KernelContext& ctx) const override {
    // float16/bfloat16 run the float code, accumulating in float.
    if (const Tensor* in0 = ctx.Input(0); in0 != nullptr && IsHalfType(in0->type()))
      return ComputeThroughFloat(*this, ctx, {{0, 0}});
    const char* op = kKind == PoolKind::kMax ? "GlobalMaxPool" : "GlobalAveragePool";
    const Tensor* x = nullptr;
    ONYX_RETURN_IF_ERROR(ctx.RequiredInput(0, &x));
    const Dims& xd = x->dims();
    ONYX_CHECK_ARG(xd.size() >= 2, op, ": input X ", ShapeToString(xd), " must have rank >= 2 (N, C, spatial...)");
    Dims yd(xd.size(), 1);
    yd[0] = xd[0];
    yd[1] = xd[1];
    int64_t inner = 1;
    for (size_t j = 2; j < xd.size(); ++j) inner *= xd[j];
    ONYX_CHECK_ARG(inner > 0 || xd[0] * xd[1] == 0, op, ": input X ", ShapeToString(xd), " has an empty spatial extent");
    Tensor* y = ctx.Output(0, yd, x->type());
    if (y == nullptr || y->size() == 0) return Status::OK();
    return DispatchFloat(x->type(), op, [&](auto tag) -> Status {
      using T = typename decltype(tag)::type;
      const T* xv = x->data<T>();
      T* yv = y->data<T>();
      if constexpr (kKind == PoolKind::kAverage && std::is_same<T, float>::value) {
        // Vector sums reduced a vector of planes at a time (ResNet-50's 2048
        // x 7x7 alone, batch 8, 2 threads, busy machine: 32 -> 21 us);
        // chunks of whole vectors of planes.
        if (pool_planes::Available() && inner > 0) {
          ThreadPool::For(ctx.threads(), (y->size() + 15) / 16, std::max<int64_t>(1, 16384 / (16 * inner)),
                          [&](int64_t begin, int64_t end) {
            const int64_t p0 = begin * 16, p1 = std::min(y->size(), end * 16);
            pool_planes::Means(xv + p0 * inner, p1 - p0, inner, yv + p0);
          });
          return Status::OK();
        }
      }
      ThreadPool::For(ctx.threads(), y->size(), std::max<int64_t>(1, 16384 / inner), [&](int64_t begin, int64_t end) {
        for (int64_t p = begin; p < end; ++p) {
          const T* in = xv + p * inner;
          if constexpr (kKind == PoolKind::kMax) {
            yv[p] = *std::max_element(in, in + inner);
          } else if constexpr (std::is_same<T, float>::value) {
            // SIMD partial sums (a serial chain of adds was half the time of
            // MobileNetV2's 1280 x 7x7 pool).
            yv[p] = fastmath::SumArray(in, inner) / static_cast<float>(inner);
          } else {
            T sum = 0;
            for (int64_t i = 0; i < inner; ++i) sum += in[i];
            yv[p] = sum / static_cast<T>(inner);
          }
        }
      });
      return Status::OK();
    });
  }
};

// The scales and zero points of the quantized pools: x's (inputs 1, 2), y's (3, 4).
const char* const kPoolQNames[4] = {"x_scale", "x_zero_point", "y_scale", "y_zero_point"};

// Hands the float AveragePool one dequantized input and takes its float
// output, for QLinearAveragePool.
class FloatPoolContext final : public KernelContext {
 public:
  FloatPoolContext(KernelContext& outer, const Tensor* x) : outer_(outer), x_(x) {}
  int InputCount() const override { return 1; }
  const Tensor* Input(int i) const override { return i == 0 ? x_ : nullptr; }
  int OutputCount() const override { return 1; }
  Tensor* Output(int i, const Dims& dims, ElemType type) override {
    if (i != 0) return nullptr;
    y_ = Tensor(type, dims);
    return &y_;
  }
  ThreadPool* threads() const override { return outer_.threads(); }
  bool terminate_requested() const override { return outer_.terminate_requested(); }
  const Tensor& y() const { return y_; }

 private:
  KernelContext& outer_;
  const Tensor* x_;
  Tensor y_;
};

// onnxruntime's QLinearAveragePool: X dequantized to float, AveragePool in
// float (its attributes), y = saturate(round_half_even(avg / y_scale + y_zp)).
// Inputs X, x_scale, x_zero_point?, y_scale, y_zero_point?.
class QLinearAveragePoolKernel final : public OpKernel {
  // Plain loops over arguments, not captures (a store through an 8-bit
  // pointer may alias a capture and stop vectorization).
  template <typename T>
  static void Dequantize(const T* __restrict x, int64_t n, float s, int32_t z, float* __restrict y) {
    for (int64_t i = 0; i < n; ++i) y[i] = s * static_cast<float>(static_cast<int32_t>(x[i]) - z);
  }
  // y = saturate(round_half_even(v / ys + yz)): clamped first, then rounded by
  // adding and taking away 1.5 * 2^23 (the same values); NaN gives yz.
  template <typename T>
  static void Requantize(const float* __restrict v, int64_t n, float ys, int32_t yz, T* __restrict y) {
    const float lo = std::numeric_limits<T>::min(), hi = std::numeric_limits<T>::max(), z = static_cast<float>(yz);
    for (int64_t i = 0; i < n; ++i) {
      float q = v[i] / ys + z;
      q = q == q ? q : z;
      q = q < lo ? lo : (q > hi ? hi : q);
      y[i] = static_cast<T>(static_cast<int32_t>((q + 12582912.f) - 12582912.f));
    }
  }

 public:
  Status Init(const KernelInfo& info) {
    ONYX_CHECK(info.AttrInt("channels_last", 0) == 0, ErrorCode::kNotImplemented,
               "QLinearAveragePool: attribute channels_last=1 (NHWC) is not supported");
    return pool_.Init(info);
  }

  Status Compute(KernelContext& ctx) const override {
    const char* op = "QLinearAveragePool";
    const Tensor* x = nullptr;
    qlinear::QParam qx, qy;
    ONYX_RETURN_IF_ERROR(qlinear::ReadUnaryQParams(ctx, op, kPoolQNames, &x, &qx, &qy));
    const float xs = qx.scale, ys = qy.scale;
    const int32_t xz = qx.zp, yz = qy.zp;
    return DispatchOver(qlinear::Int8TypeSet{}, x->type(), op, [&](auto tag) -> Status {
      using T = typename decltype(tag)::type;
      // The float copy of x in a buffer kept per thread (no fresh pages per run).
      thread_local std::vector<float> xbuf;
      xbuf.resize(static_cast<size_t>(x->size()));
      Tensor xf(ElemType::kFloat, x->dims(), xbuf.data(), GetCpuAllocator()->Info());
      const T* xv = x->data<T>();
      float* xfv = xbuf.data();
      ThreadPool::For(ctx.threads(), x->size(), 1 << 15,
                      [&](int64_t b, int64_t e) { Dequantize(xv + b, e - b, xs, xz, xfv + b); });
      FloatPoolContext fctx(ctx, &xf);
      ONYX_RETURN_IF_ERROR(pool_.Compute(fctx));
      const Tensor& yf = fctx.y();
      Tensor* y = ctx.Output(0, yf.dims(), x->type());
      if (y == nullptr) return Status::OK();
      const float* yfv = yf.data<float>();
      T* yv = y->data<T>();
      ThreadPool::For(ctx.threads(), y->size(), 1 << 15,
                      [&](int64_t b, int64_t e) { Requantize(yfv + b, e - b, ys, yz, yv + b); });
      return Status::OK();
    });
  }

 private:
  PoolKernel<PoolKind::kAverage> pool_;
};

// onnxruntime's QLinearGlobalAveragePool (MLAS): an exact integer sum over
// each channel's image, then
//   y = saturate(round_half_even(float(sum - x_zp * n) * (x_scale / (y_scale * n))) + y_zp).
// channels_last=1 reads NHWC ([N, spatial..., C]).
class QLinearGlobalAveragePoolKernel final : public OpKernel {
 public:
  Status Init(const KernelInfo& info) {
    channels_last_ = info.AttrInt("channels_last", 0) != 0;
    return Status::OK();
  }

  Status Compute(KernelContext& ctx) const override {
    const char* op = "QLinearGlobalAveragePool";
    const Tensor* x = nullptr;
    qlinear::QParam qx, qy;
    ONYX_RETURN_IF_ERROR(qlinear::ReadUnaryQParams(ctx, op, kPoolQNames, &x, &qx, &qy));
    const float xs = qx.scale, ys = qy.scale;
    const int32_t xz = qx.zp, yz = qy.zp;
    const Dims& xd = x->dims();
    ONYX_CHECK_ARG(xd.size() >= 3, op, ": input 0 (X) ", ShapeToString(xd), " must have rank >= 3 (N, C, spatial...)");
    const size_t c_axis = channels_last_ ? xd.size() - 1 : 1;
    const int64_t N = xd[0], C = xd[c_axis];
    int64_t image = 1;
    Dims yd = xd;
    for (size_t j = 1; j < xd.size(); ++j) {
      if (j == c_axis) continue;
      image *= xd[j];
      yd[j] = 1;
    }
    ONYX_CHECK_ARG(image > 0 || N * C == 0, op, ": input 0 (X) ", ShapeToString(xd), " has an empty spatial extent");
    Tensor* y = ctx.Output(0, yd, x->type());
    if (y == nullptr || y->size() == 0) return Status::OK();
    const float scale = xs / (ys * static_cast<float>(image));
    const int64_t bias = -static_cast<int64_t>(xz) * image;
    return DispatchOver(qlinear::Int8TypeSet{}, x->type(), op, [&](auto tag) -> Status {
      using T = typename decltype(tag)::type;
      const T* xv = x->data<T>();
      T* yv = y->data<T>();
      const float lo = static_cast<float>(std::numeric_limits<T>::min() - yz);
      const float hi = static_cast<float>(std::numeric_limits<T>::max() - yz);
      auto requant = [&](int64_t sum) {
        float v = static_cast<float>(sum + bias) * scale;
        if (std::isnan(v)) v = 0.f;
        v = std::nearbyint(v < lo ? lo : (v > hi ? hi : v));
        return static_cast<T>(static_cast<int32_t>(v) + yz);
      };
      const int64_t grain = std::max<int64_t>(1, 16384 / image);
      if (!channels_last_) {
        ThreadPool::For(ctx.threads(), N * C, grain, [&](int64_t begin, int64_t end) {
          for (int64_t p = begin; p < end; ++p) {
            int64_t sum = 0;
            for (int64_t i = 0; i < image; ++i) sum += xv[p * image + i];
            yv[p] = requant(sum);
          }
        });
      } else {
        // Blocks of 256 channels per image; int32 sums (which vectorize)
        // while 255 * image fits, else int64.
        constexpr int64_t kBlock = 256;
        const int64_t blocks = (C + kBlock - 1) / kBlock;
        auto sum_blocks = [&](auto zero) {
          using Acc = decltype(zero);
          ThreadPool::For(ctx.threads(), N * blocks, std::max<int64_t>(1, 16384 / (image * kBlock)),
                          [&](int64_t begin, int64_t end) {
            Acc sums[kBlock];
            for (int64_t u = begin; u < end; ++u) {
              const int64_t n = u / blocks, c0 = (u % blocks) * kBlock, cn = std::min(kBlock, C - c0);
              std::fill(sums, sums + cn, Acc(0));
              const T* in = xv + n * image * C + c0;
              for (int64_t i = 0; i < image; ++i)
                for (int64_t c = 0; c < cn; ++c) sums[c] += static_cast<Acc>(in[i * C + c]);
              for (int64_t c = 0; c < cn; ++c) yv[n * C + c0 + c] = requant(static_cast<int64_t>(sums[c]));
            }
          });
        };
        if (image <= std::numeric_limits<int32_t>::max() / 255)
          sum_blocks(int32_t{0});
        else
          sum_blocks(int64_t{0});
      }
      return Status::OK();
    });
  }

 private:
  bool channels_last_ = false;
};

}  // namespace

ONYX_REGISTER_KERNEL(PoolKernel<PoolKind::kMax>, "", "MaxPool", 1, kMaxVersion,
                     {ElemType::kFloat, ElemType::kDouble, ElemType::kInt8, ElemType::kUint8, ElemType::kFloat16,
                      ElemType::kBFloat16});
ONYX_REGISTER_KERNEL(PoolKernel<PoolKind::kAverage>, "", "AveragePool", 1, kMaxVersion, FloatOrHalfTypes());
ONYX_REGISTER_KERNEL(GlobalPoolKernel<PoolKind::kMax>, "", "GlobalMaxPool", 1, kMaxVersion, FloatOrHalfTypes());
ONYX_REGISTER_KERNEL(GlobalPoolKernel<PoolKind::kAverage>, "", "GlobalAveragePool", 1, kMaxVersion,
                     FloatOrHalfTypes());
ONYX_REGISTER_KERNEL(PoolKernel<PoolKind::kMax>, "com.microsoft", "NhwcMaxPool", 1, kMaxVersion,
                     qlinear::Int8TypeSet::ElemTypes());
ONYX_REGISTER_KERNEL(QLinearAveragePoolKernel, "com.microsoft", "QLinearAveragePool", 1, kMaxVersion,
                     qlinear::Int8TypeSet::ElemTypes());
ONYX_REGISTER_KERNEL(QLinearGlobalAveragePoolKernel, "com.microsoft", "QLinearGlobalAveragePool", 1, kMaxVersion,
                     qlinear::Int8TypeSet::ElemTypes());

}  // namespace onyx
