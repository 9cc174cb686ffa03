// ConvInteger (opset 10+) and QLinearConv (opset 10+): Conv's geometry
// (providers/cpu/nn/conv_geometry.h) over int8/uint8 data less its zero
// points; x's zero point is per tensor, w's per tensor or per output channel.
// Padding reads as the zero point (zero once it is subtracted), as in the
// reference and onnxruntime. The sums come exactly from an integer GEMM per
// (image, group) over im2col columns (int8gemm::Gemm, int8_gemm.h);
// ConvInteger returns them as int32, QLinearConv adds the int32 bias and
// requantizes each output channel with x_scale * w_scale[m] / y_scale in
// float, as onnxruntime does (int8gemm::RequantizeFloat; why not the
// reference's double: see qlinear_matmul.cc).
#include <algorithm>
#include <cstdint>
#include <functional>
#include <vector>

#include "providers/cpu/math/blas.h"
#include "providers/cpu/nn/conv_geometry.h"
#include "providers/cpu/quantization/int8_gemm.h"
#include "providers/cpu/quantization/qlinear_common.h"
#include "providers/kernel.h"

namespace onyx {

namespace {

using qlinear::Int8TypeSet;

Status ParseConvAttrs(const KernelInfo& info, const char* op, conv::Attrs* a) {
  ONYX_RETURN_IF_ERROR(conv::ParseAttrs(info, op, a));
  ONYX_RETURN_IF_ERROR(conv::CheckAttrValues(a->kernel_shape, 1, op, "kernel_shape"));
  ONYX_RETURN_IF_ERROR(conv::CheckAttrValues(a->strides, 1, op, "strides"));
  ONYX_RETURN_IF_ERROR(conv::CheckAttrValues(a->dilations, 1, op, "dilations"));
  ONYX_RETURN_IF_ERROR(conv::CheckAttrValues(a->pads, 0, op, "pads"));
  return conv::CheckPadsCount(a->pads, op);
}

// Checks x and w against each other and the attributes; fills the geometry
// and the output dims [N, M, out...].
Status ResolveShapes(const conv::Names& nm, const conv::Attrs& a, const Tensor& x, const Tensor& w, conv::Geom* g,
                     Dims* yd) {
  const Dims& xd = x.dims();
  const Dims& wd = w.dims();
  ONYX_CHECK_ARG(xd.size() >= 3, nm.op, ": ", nm.x, " ", ShapeToString(xd), " must have rank >= 3 (N, C, spatial...)");
  ONYX_CHECK_ARG(wd.size() == xd.size(), nm.op, ": ", nm.w, " ", ShapeToString(wd), " must have the rank of ", nm.x,
                 " ", ShapeToString(xd));
  const int64_t C = xd[1], M = wd[0];
  ONYX_CHECK_ARG(C == wd[1] * a.group, nm.op, ": ", nm.x, " ", ShapeToString(xd), " has ", C, " channels but ", nm.w,
                 " ", ShapeToString(wd), " expects ", wd[1] * a.group, " (group ", a.group, ")");
  ONYX_CHECK_ARG(M % a.group == 0, nm.op, ": ", nm.w, " ", ShapeToString(wd), " has ", M,
                 " output channels, not a multiple of group ", a.group);
  ONYX_RETURN_IF_ERROR(conv::ResolveConv(nm, xd, wd, a, g));
  *yd = {xd[0], M};
  yd->insert(yd->end(), g->out.begin(), g->out.end());
  return Status::OK();
}

// Receives output channels [m0, m1) and output positions [p0, p1) of image
// n: acc(m, p) = c[(m - m0) * ldc + (p - p0)].
using ConvEpilogue = std::function<void(int64_t n, int64_t m0, int64_t m1, int64_t p0, int64_t p1, const int32_t* c,
                                        int64_t ldc)>;

// acc[n, m, :] = sum over channels of the group and kernel taps of
// (x - zx) * (w[m] - zw[m]), exact: per (image, group) one int8gemm::Gemm of
// w [Mg, Kc] by the im2col columns of x [Kc, out] (x itself for a 1x1,
// stride-1, unpadded kernel), whose padding reads as zx.
Status Accumulate(KernelContext& ctx, const conv::Names& nm, int64_t group, const Tensor& x, int32_t zx,
                  const Tensor& w, const std::vector<int32_t>& zw, const conv::Geom& g, const ConvEpilogue& emit) {
  const int64_t N = x.dims()[0], C = x.dims()[1], M = w.dims()[0];
  const int64_t Cg = C / group, Mg = M / group, Kc = Cg * g.kvol, OS = g.out_size;
  ONYX_CHECK_ARG(FitsBlasInt(Mg) && FitsBlasInt(Kc) && FitsBlasInt(OS), nm.op, ": ", nm.x, " ",
                 ShapeToString(x.dims()), " and ", nm.w, " ", ShapeToString(w.dims()), " are too large for one GEMM");
  if (N * M * OS == 0) return Status::OK();
  for (const Tensor* t : {&x, &w})
    ONYX_RETURN_IF_ERROR(DispatchOver(Int8TypeSet{}, t->type(), nm.op, [](auto) { return Status::OK(); }));
  bool pointwise = true;
  for (size_t j = 0; j < g.nd; ++j)
    pointwise = pointwise && g.k[j] == 1 && g.s[j] == 1 && g.pb[j] == 0 && g.out[j] == g.in[j];
  const bool x_signed = x.type() == ElemType::kInt8;
  const uint8_t pad = static_cast<uint8_t>(zx);  // zx's own bit pattern in x's type
  const uint8_t* xv = static_cast<const uint8_t*>(x.raw());
  const uint8_t* wv = static_cast<const uint8_t*>(w.raw());
  // One (image, group); `pool` (may be null) parallelises inside it.
  auto unit = [&](int64_t u, std::vector<uint8_t>* cols, ThreadPool* pool) {
    const int64_t n = u / group, grp = u % group;
    const uint8_t* src = xv + (n * C + grp * Cg) * g.in_size;
    if (!pointwise) {
      cols->resize(static_cast<size_t>(Kc * OS));
      ThreadPool::For(pool, Kc, std::max<int64_t>(1, 16384 / std::max<int64_t>(OS, 1)),
                      [&](int64_t begin, int64_t end) { conv::Im2Col<uint8_t>(src, g, begin, end, cols->data(), pad); });
      src = cols->data();
    }
    thread_local int8gemm::PackedB packed;  // storage reused across runs
    packed.Repack(src, x_signed, Kc, OS, OS, pool);
    int8gemm::GemmArgs args;
    args.M = Mg;
    args.a = wv + grp * Mg * Kc;
    args.a_signed = w.type() == ElemType::kInt8;
    args.lda = Kc;
    args.za = zw.data() + grp * Mg;
    args.za_per_row = true;
    args.zb = &zx;
    args.epilogue = [&](int64_t m0, int64_t m1, int64_t p0, int64_t p1, const int32_t* c, int64_t ldc) {
      emit(n, grp * Mg + m0, grp * Mg + m1, p0, p1, c, ldc);
    };
    int8gemm::Gemm(args, packed, pool);
  };
  const int64_t units = N * group;
  const double work = static_cast<double>(Mg) * OS * Kc;
  if (work <= kBlasSingleThreadWork && units > 1) {
    ThreadPool::For(ctx.threads(), units, std::max<int64_t>(1, static_cast<int64_t>(65536.0 / std::max(work, 1.0))),
                    [&](int64_t begin, int64_t end) {
                      thread_local std::vector<uint8_t> cols;
                      for (int64_t u = begin; u < end; ++u) unit(u, &cols, nullptr);
                    });
  } else {
    thread_local std::vector<uint8_t> cols;
    for (int64_t u = 0; u < units; ++u) {
      if (ctx.terminate_requested()) return MakeError(ErrorCode::kFail, nm.op, ": run terminated on request");
      unit(u, &cols, ctx.threads());
    }
  }
  return Status::OK();
}

class ConvIntegerKernel final : public OpKernel {
 public:
  Status Init(const KernelInfo& info) { return ParseConvAttrs(info, "ConvInteger", &attrs_); }

  Status Compute(KernelContext& ctx) const override {
    const conv::Names nm{"ConvInteger", "input 0 (x)", "input 1 (w)"};
    const Tensor* x = nullptr;
    const Tensor* w = nullptr;
    ONYX_RETURN_IF_ERROR(ctx.RequiredInput(0, &x));
    ONYX_RETURN_IF_ERROR(ctx.RequiredInput(1, &w));
    conv::Geom g;
    Dims yd;
    ONYX_RETURN_IF_ERROR(ResolveShapes(nm, attrs_, *x, *w, &g, &yd));
    std::vector<int32_t> zx, zw;
    ONYX_RETURN_IF_ERROR(qlinear::ReadZeroPoints(ctx.Input(2), x, nm.op, 2, "x_zero_point", -1, "", 1, &zx));
    ONYX_RETURN_IF_ERROR(qlinear::ReadZeroPoints(ctx.Input(3), w, nm.op, 3, "w_zero_point", yd[1],
                                                 " (one per output channel)", yd[1], &zw));
    Tensor* y = ctx.Output(0, yd, ElemType::kInt32);
    if (y == nullptr) return Status::OK();
    int32_t* yv = y->data<int32_t>();
    const int64_t M = yd[1], OS = g.out_size;
    return Accumulate(ctx, nm, attrs_.group, *x, zx[0], *w, zw, g,
                      [&](int64_t n, int64_t m0, int64_t m1, int64_t p0, int64_t p1, const int32_t* c, int64_t ldc) {
                        for (int64_t m = m0; m < m1; ++m)
                          std::copy(c + (m - m0) * ldc, c + (m - m0) * ldc + (p1 - p0), yv + (n * M + m) * OS + p0);
                      });
  }

 private:
  conv::Attrs attrs_;
};

class QLinearConvKernel final : public OpKernel {
 public:
  Status Init(const KernelInfo& info) { return ParseConvAttrs(info, "QLinearConv", &attrs_); }

  Status Compute(KernelContext& ctx) const override {
    const conv::Names nm{"QLinearConv", "input 0 (x)", "input 3 (w)"};
    const Tensor* x = nullptr;
    const Tensor* w = nullptr;
    const Tensor* yz = nullptr;
    ONYX_RETURN_IF_ERROR(ctx.RequiredInput(0, &x));
    ONYX_RETURN_IF_ERROR(ctx.RequiredInput(3, &w));
    ONYX_RETURN_IF_ERROR(ctx.RequiredInput(7, &yz));
    conv::Geom g;
    Dims yd;
    ONYX_RETURN_IF_ERROR(ResolveShapes(nm, attrs_, *x, *w, &g, &yd));
    const int64_t M = yd[1];
    const char* per_m = " (one per output channel)";
    std::vector<float> xs, ws, ys;
    std::vector<int32_t> zx, zw, zy;
    ONYX_RETURN_IF_ERROR(qlinear::ReadScales(ctx.Input(1), nm.op, 1, "x_scale", -1, "", 1, false, &xs));
    ONYX_RETURN_IF_ERROR(qlinear::ReadZeroPoints(ctx.Input(2), x, nm.op, 2, "x_zero_point", -1, "", 1, &zx));
    ONYX_RETURN_IF_ERROR(qlinear::ReadScales(ctx.Input(4), nm.op, 4, "w_scale", M, per_m, M, false, &ws));
    ONYX_RETURN_IF_ERROR(qlinear::ReadZeroPoints(ctx.Input(5), w, nm.op, 5, "w_zero_point", M, per_m, M, &zw));
    ONYX_RETURN_IF_ERROR(qlinear::ReadScales(ctx.Input(6), nm.op, 6, "y_scale", -1, "", 1, true, &ys));
    ONYX_RETURN_IF_ERROR(qlinear::ReadZeroPoints(yz, nullptr, nm.op, 7, "y_zero_point", -1, "", 1, &zy));
    ONYX_CHECK_ARG(ctx.Input(1)->type() == ElemType::kFloat && ctx.Input(4)->type() == ElemType::kFloat &&
                       ctx.Input(6)->type() == ElemType::kFloat,
                   "QLinearConv: inputs 1 (x_scale), 4 (w_scale) and 6 (y_scale) must be float");
    const Tensor* bias = ctx.Input(8);
    if (bias != nullptr) {
      ONYX_CHECK_ARG(bias->type() == ElemType::kInt32, "QLinearConv: input 8 (B) must be int32, got ",
                     ElemTypeName(bias->type()));
      ONYX_CHECK_ARG(bias->rank() == 1 && bias->dims()[0] == M, "QLinearConv: input 8 (B) of shape ",
                     ShapeToString(bias->dims()), " must be [", M, "] to match ", nm.w, " ",
                     ShapeToString(w->dims()));
    }
    Tensor* y = ctx.Output(0, yd, yz->type());
    if (y == nullptr || y->size() == 0) return Status::OK();
    std::vector<float> mult(static_cast<size_t>(M));
    for (int64_t m = 0; m < M; ++m) mult[m] = xs[0] * ws[m] / ys[0];
    const int32_t* bv = bias ? bias->data<int32_t>() : nullptr;
    const int64_t OS = g.out_size;
    return DispatchOver(Int8TypeSet{}, yz->type(), nm.op, [&](auto tag) -> Status {
      using TY = typename decltype(tag)::type;
      TY* yv = y->data<TY>();
      return Accumulate(ctx, nm, attrs_.group, *x, zx[0], *w, zw, g,
                        [&](int64_t n, int64_t m0, int64_t m1, int64_t p0, int64_t p1, const int32_t* c, int64_t ldc) {
                          for (int64_t m = m0; m < m1; ++m)
                            int8gemm::RequantizeFloat<TY>(c + (m - m0) * ldc, p1 - p0, bv ? bv[m] : 0, &mult[m],
                                                          false, zy[0], yv + (n * M + m) * OS + p0);
                        });
    });
  }

 private:
  conv::Attrs attrs_;
};

}  // namespace

ONYX_REGISTER_KERNEL(ConvIntegerKernel, "", "ConvInteger", 10, kMaxVersion, Int8TypeSet::ElemTypes());
ONYX_REGISTER_KERNEL(QLinearConvKernel, "", "QLinearConv", 10, kMaxVersion, Int8TypeSet::ElemTypes());

}  // namespace onyx
