// DFT (opset 17: axis attribute; opset 20: axis input, default -2) and STFT
// (opset 17). Signals are real ([..., 1]) or complex ([..., 2]); transforms run
// in double through signal::FftPlan (any length in O(n log n)).
//  DFT forward: each line along `axis`, cut or zero-padded to dft_length
//    (default: its length), transformed; onesided keeps bins [0, n/2].
//  DFT inverse: the same, normalized by 1/n; inverse with onesided is numpy's
//    irfft: the first n/2 + 1 bins (default n = 2 * (bins - 1)) stand for a
//    Hermitian spectrum and the real signal [..., n, 1] comes out.
//  STFT: frames of frame_length every frame_step samples, times the window,
//    transformed; onesided (default) keeps bins [0, frame_length/2].
// float16/bfloat16 are read into double and rounded once on the way out.
#include <algorithm>
#include <cstdint>
#include <vector>

#include "providers/cpu/common/dispatch.h"
#include "providers/cpu/common/indexing.h"
#include "providers/cpu/signal/fft.h"
#include "providers/kernel.h"

namespace onyx {

namespace {

using signal::Complex;
using SignalTypeSet = FloatOrHalfTypeSet;

// An optional int32/int64 scalar input (shape [] or [1]); `*given` says whether it was there.
Status OptionalScalar(const Tensor* t, const char* op, const char* what, bool* given, int64_t* out) {
  *given = t != nullptr;
  if (t == nullptr) return Status::OK();
  return ReadIndexScalar(*t, op, what, out);
}

class DftKernel final : public OpKernel {
 public:
  Status Init(const KernelInfo& info) {
    opset_ = info.opset();
    axis_attr_ = info.AttrInt("axis", 1);
    inverse_ = info.AttrInt("inverse", 0) != 0;
    onesided_ = info.AttrInt("onesided", 0) != 0;
    return Status::OK();
  }

  Status Compute(KernelContext& ctx) const override {
    const Tensor* x = nullptr;
    ONYX_RETURN_IF_ERROR(ctx.RequiredInput(0, &x));
    const Dims& xd = x->dims();
    const int64_t r = static_cast<int64_t>(xd.size());
    ONYX_CHECK_ARG(r >= 2 && (xd.back() == 1 || xd.back() == 2), "DFT: input 0 (input) of shape ", ShapeToString(xd),
                   " must have rank >= 2 and a last dim of 1 (real) or 2 (complex)");
    int64_t axis = axis_attr_;
    bool given = false;
    if (opset_ >= 20) {
      axis = -2;
      int64_t a = 0;
      ONYX_RETURN_IF_ERROR(OptionalScalar(ctx.Input(2), "DFT", "input 2 (axis)", &given, &a));
      if (given) axis = a;
    }
    const char* axis_name = opset_ >= 20 ? "input 2 (axis)" : "attribute axis";
    ONYX_CHECK_ARG(axis >= -r && axis < r - 1 && axis != -1, "DFT: ", axis_name, " ", axis,
                   " is out of range for input 0 (input) of shape ", ShapeToString(xd),
                   " (the last dim holds real/imaginary parts)");
    if (axis < 0) axis += r;
    const int64_t n_in = xd[axis];
    int64_t n = 0;
    ONYX_RETURN_IF_ERROR(OptionalScalar(ctx.Input(1), "DFT", "input 1 (dft_length)", &given, &n));
    const bool irfft = inverse_ && onesided_;
    if (!given) n = irfft ? 2 * (n_in - 1) : n_in;
    ONYX_CHECK_ARG(n > 0, "DFT: ", given ? "input 1 (dft_length) " : "the transform length ", n,
                   " must be positive (input 0 (input) has shape ", ShapeToString(xd), ", axis ", axis, ")");
    ONYX_CHECK_ARG(signal::FftWorkLength(n) <= signal::kMaxFftWorkLength, "DFT: ", given ? "input 1 (dft_length) " : "the transform length ", n,
                   " works in ", signal::FftWorkLength(n),
                   " points, above this engine's limit of ", signal::kMaxFftWorkLength);
    const bool complex_in = xd.back() == 2;
    int64_t outer = 1, inner = 1;
    for (int64_t d = 0; d < axis; ++d) outer *= xd[d];
    for (int64_t d = axis + 1; d < r - 1; ++d) inner *= xd[d];
    Dims yd = xd;
    yd[axis] = irfft ? n : (onesided_ ? n / 2 + 1 : n);
    yd.back() = irfft ? 1 : 2;
    Tensor* Y = ctx.Output(0, yd, x->type());
    if (Y == nullptr || Y->size() == 0) return Status::OK();
    const int64_t out_len = yd[axis];
    // irfft: bins [0, n/2] of the input, mirrored to a Hermitian spectrum.
    const int64_t take = irfft ? std::min(n_in, n / 2 + 1) : std::min(n_in, n);
    const double scale = inverse_ ? 1.0 / static_cast<double>(n) : 1.0;
    const int64_t c = complex_in ? 2 : 1;
    signal::FftPlan plan(n);
    return DispatchOver(SignalTypeSet{}, x->type(), "DFT", [&](auto tag) -> Status {
      using T = typename decltype(tag)::type;
      const T* xv = x->data<T>();
      T* yv = Y->data<T>();
      auto at = [&](int64_t line, int64_t j) {  // flat index of element j of a line, before the complex dim
        return ((line / inner) * n_in + j) * inner + line % inner;
      };
      auto load = [&](int64_t line, Complex* buf) {
        std::fill(buf, buf + n, Complex(0, 0));
        for (int64_t j = 0; j < take; ++j) {
          const int64_t p = at(line, j) * c;
          buf[j] = Complex(static_cast<double>(xv[p]), complex_in ? static_cast<double>(xv[p + 1]) : 0.0);
        }
        if (irfft)
          for (int64_t k = n / 2 + 1; k < n; ++k) buf[k] = std::conj(buf[n - k]);
      };
      auto store = [&](int64_t line, const Complex* spec) {
        const int64_t base = (line / inner) * out_len * inner + line % inner;
        for (int64_t k = 0; k < out_len; ++k) {
          const int64_t p = base + k * inner;
          if (irfft) {
            yv[p] = static_cast<T>(spec[k].real() * scale);
          } else {
            yv[2 * p] = static_cast<T>(spec[k].real() * scale);
            yv[2 * p + 1] = static_cast<T>(spec[k].imag() * scale);
          }
        }
      };
      signal::TransformLines(ctx.threads(), plan, outer * inner, !complex_in && !irfft, inverse_, load, store,
                             [&] { return ctx.terminate_requested(); });
      if (ctx.terminate_requested()) return MakeError(ErrorCode::kFail, "DFT: run terminated on request");
      return Status::OK();
    });
  }

 private:
  int opset_ = 17;
  int64_t axis_attr_ = 1;
  bool inverse_ = false, onesided_ = false;
};

class StftKernel final : public OpKernel {
 public:
  Status Init(const KernelInfo& info) {
    onesided_ = info.AttrInt("onesided", 1) != 0;
    return Status::OK();
  }

  Status Compute(KernelContext& ctx) const override {
    const Tensor* x = nullptr;
    const Tensor* step_t = nullptr;
    ONYX_RETURN_IF_ERROR(ctx.RequiredInput(0, &x));
    ONYX_RETURN_IF_ERROR(ctx.RequiredInput(1, &step_t));
    const Dims& xd = x->dims();
    ONYX_CHECK_ARG(xd.size() == 3 && (xd[2] == 1 || xd[2] == 2), "STFT: input 0 (signal) of shape ", ShapeToString(xd),
                   " must be [batch_size, signal_length, 1 or 2]");
    int64_t step = 0;
    ONYX_RETURN_IF_ERROR(ReadIndexScalar(*step_t, "STFT", "input 1 (frame_step)", &step));
    ONYX_CHECK_ARG(step > 0, "STFT: input 1 (frame_step) must be positive, got ", step);
    const Tensor* window = ctx.Input(2);
    bool given = false;
    int64_t fl = 0;
    ONYX_RETURN_IF_ERROR(OptionalScalar(ctx.Input(3), "STFT", "input 3 (frame_length)", &given, &fl));
    if (window != nullptr) {
      ONYX_CHECK_ARG(window->rank() == 1 && window->type() == x->type(), "STFT: input 2 (window) of shape ",
                     ShapeToString(window->dims()), " and type ", ElemTypeName(window->type()),
                     " must be 1-D of the signal's type ", ElemTypeName(x->type()));
      if (given)
        ONYX_CHECK_ARG(window->dims()[0] == fl, "STFT: input 2 (window) has length ", window->dims()[0],
                       " but input 3 (frame_length) is ", fl);
      fl = window->dims()[0];
    } else if (!given) {
      fl = xd[1];
    }
    const int64_t L = xd[1];
    ONYX_CHECK_ARG(fl > 0 && fl <= L, "STFT: the frame length ", fl, " must be in [1, ", L,
                   "] (the signal length of input 0 (signal), shape ", ShapeToString(xd), ")");
    const int64_t frames = 1 + (L - fl) / step, bins = onesided_ ? fl / 2 + 1 : fl;
    const bool complex_in = xd[2] == 2;
    const int64_t batch = xd[0], c = complex_in ? 2 : 1;
    Tensor* Y = ctx.Output(0, {batch, frames, bins, 2}, x->type());
    if (Y == nullptr || Y->size() == 0) return Status::OK();
    signal::FftPlan plan(fl);
    return DispatchOver(SignalTypeSet{}, x->type(), "STFT", [&](auto tag) -> Status {
      using T = typename decltype(tag)::type;
      const T* xv = x->data<T>();
      const T* wv = window ? window->data<T>() : nullptr;
      T* yv = Y->data<T>();
      auto load = [&](int64_t line, Complex* buf) {
        const int64_t b = line / frames, f = line % frames;
        const T* src = xv + (b * L + f * step) * c;
        for (int64_t j = 0; j < fl; ++j) {
          const double w = wv ? static_cast<double>(wv[j]) : 1.0;
          buf[j] = Complex(static_cast<double>(src[j * c]) * w, complex_in ? static_cast<double>(src[j * c + 1]) * w
                                                                            : 0.0);
        }
      };
      auto store = [&](int64_t line, const Complex* spec) {
        T* dst = yv + line * bins * 2;
        for (int64_t k = 0; k < bins; ++k) {
          dst[2 * k] = static_cast<T>(spec[k].real());
          dst[2 * k + 1] = static_cast<T>(spec[k].imag());
        }
      };
      signal::TransformLines(ctx.threads(), plan, batch * frames, !complex_in, false, load, store,
                             [&] { return ctx.terminate_requested(); });
      if (ctx.terminate_requested()) return MakeError(ErrorCode::kFail, "STFT: run terminated on request");
      return Status::OK();
    });
  }

 private:
  bool onesided_ = true;
};

}  // namespace

ONYX_REGISTER_KERNEL(DftKernel, "", "DFT", 17, kMaxVersion, SignalTypeSet::ElemTypes());
ONYX_REGISTER_KERNEL(StftKernel, "", "STFT", 17, kMaxVersion, SignalTypeSet::ElemTypes());

}  // namespace onyx
