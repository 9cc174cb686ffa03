// Pad, every opset: pads and value as attributes (1: `paddings`, 2-10:
// `pads`), as inputs from 11, the `axes` input from 18 and `wrap` mode from 19.
// Negative pads crop. Each output dim gets a table mapping its coordinates to
// input coordinates (or "constant"), so every mode is the same copy loop.
#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <string>
#include <type_traits>
#include <vector>

#include "providers/cpu/common/indexing.h"
#include "providers/kernel.h"

namespace onyx {

namespace {

enum class PadMode { kConstant, kReflect, kEdge, kWrap };

class PadKernel final : public OpKernel {
 public:
  Status Init(const KernelInfo& info) {
    opset_ = info.opset();
    const std::string mode = info.AttrString("mode", "constant");
    if (mode == "constant") {
      mode_ = PadMode::kConstant;
    } else if (mode == "reflect") {
      mode_ = PadMode::kReflect;
    } else if (mode == "edge") {
      mode_ = PadMode::kEdge;
    } else if (mode == "wrap" && opset_ >= 19) {
      mode_ = PadMode::kWrap;
    } else {
      return MakeError(ErrorCode::kInvalidArgument, "Pad: attribute mode '", mode, "' is not supported at opset ",
                       opset_);
    }
    if (opset_ < 11) {
      pads_attr_ = info.AttrInts(opset_ < 2 ? "paddings" : "pads");
      value_attr_ = info.AttrFloat("value", 0.0f);
    }
    return Status::OK();
  }

  Status Compute(KernelContext& ctx) const override {
    const Tensor* X = nullptr;
    ONYX_RETURN_IF_ERROR(ctx.RequiredInput(0, &X));
    const int64_t rank = static_cast<int64_t>(X->rank());
    const Dims& in = X->dims();
    std::vector<int64_t> pads;
    std::vector<int64_t> axes;
    const Tensor* C = nullptr;
    if (opset_ < 11) {
      pads = pads_attr_;
    } else {
      const Tensor* P = nullptr;
      ONYX_RETURN_IF_ERROR(ctx.RequiredInput(1, &P));
      ONYX_CHECK_ARG(P->rank() <= 1, "Pad: input 1 (pads) must be 1-D, got shape ", ShapeToString(P->dims()));
      ONYX_RETURN_IF_ERROR(ReadIndexTensor(*P, "Pad", "input 1 (pads)", &pads));
      C = ctx.Input(2);
      if (C != nullptr && C->size() == 0) C = nullptr;
      if (C != nullptr) {
        ONYX_CHECK_ARG(C->size() == 1, "Pad: input 2 (constant_value) must hold one value, got shape ",
                       ShapeToString(C->dims()));
        ONYX_CHECK_ARG(C->type() == X->type(), "Pad: input 2 (constant_value) has type ", ElemTypeName(C->type()),
                       " but input 0 (data) has type ", ElemTypeName(X->type()));
      }
      const Tensor* A = opset_ >= 18 ? ctx.Input(3) : nullptr;
      if (A != nullptr) {
        ONYX_CHECK_ARG(A->rank() <= 1, "Pad: input 3 (axes) must be 1-D, got shape ", ShapeToString(A->dims()));
        ONYX_RETURN_IF_ERROR(ReadIndexTensor(*A, "Pad", "input 3 (axes)", &axes));
      }
    }
    bool has_axes = !axes.empty() || (opset_ >= 18 && ctx.Input(3) != nullptr);
    if (!has_axes) {
      axes.resize(static_cast<size_t>(rank));
      for (int64_t k = 0; k < rank; ++k) axes[k] = k;
    }
    const int64_t na = static_cast<int64_t>(axes.size());
    ONYX_CHECK_ARG(static_cast<int64_t>(pads.size()) == 2 * na, "Pad: ", opset_ < 11 ? "attribute pads" : "input 1 (pads)",
                   " has ", pads.size(), " values but needs ", 2 * na, " (2 per axis) for input 0 (data) shape ",
                   ShapeToString(in));
    std::vector<int64_t> begin(static_cast<size_t>(rank), 0), end(static_cast<size_t>(rank), 0);
    std::vector<bool> seen(static_cast<size_t>(rank), false);
    for (int64_t i = 0; i < na; ++i) {
      int64_t a = 0;
      ONYX_RETURN_IF_ERROR(NormalizeAxis(axes[i], rank, "Pad", "input 3 (axes) value", &a));
      ONYX_CHECK_ARG(!seen[a], "Pad: input 3 (axes) repeats axis ", axes[i]);
      seen[a] = true;
      begin[a] = pads[i];
      end[a] = pads[na + i];
    }
    Dims out(static_cast<size_t>(rank));
    for (int64_t d = 0; d < rank; ++d) {
      ONYX_CHECK_ARG(std::abs(begin[d]) <= (int64_t{1} << 40) && std::abs(end[d]) <= (int64_t{1} << 40), "Pad: pads ",
                     begin[d], " and ", end[d], " for axis ", d, " are too large");
      out[d] = in[d] + begin[d] + end[d];
      ONYX_CHECK_ARG(out[d] >= 0, "Pad: pads ", begin[d], " and ", end[d], " crop more than axis ", d,
                     " of input 0 (data) shape ", ShapeToString(in), " holds");
    }
    ONYX_CHECK_ARG(ShapeFits(out), "Pad: output shape ", ShapeToString(out), " is too large");
    Tensor* Y = ctx.Output(0, out, X->type());
    if (Y == nullptr || Y->size() == 0) return Status::OK();
    // maps[d][o]: input coordinate read by output coordinate o of dim d, -1 = constant.
    std::vector<std::vector<int64_t>> maps(static_cast<size_t>(rank));
    for (int64_t d = 0; d < rank; ++d) {
      const int64_t n = in[d];
      const int64_t lo = std::max<int64_t>(0, -begin[d]);
      const int64_t hi = n - std::max<int64_t>(0, -end[d]);
      const int64_t m = hi - lo;
      const bool pads_out = begin[d] > 0 || end[d] > 0;
      ONYX_CHECK_ARG(mode_ == PadMode::kConstant || m > 0 || !pads_out || out[d] == 0, "Pad: axis ", d,
                     " of input 0 (data) shape ", ShapeToString(in), " is empty and cannot be padded in ",
                     mode_ == PadMode::kReflect ? "reflect" : mode_ == PadMode::kEdge ? "edge" : "wrap", " mode");
      auto& map = maps[d];
      map.resize(static_cast<size_t>(out[d]));
      for (int64_t o = 0; o < out[d]; ++o) {
        const int64_t c = o - begin[d];
        if (c >= lo && c < hi) {
          map[o] = c;
          continue;
        }
        int64_t t = c - lo;
        switch (mode_) {
          case PadMode::kConstant:
            map[o] = -1;
            continue;
          case PadMode::kEdge:
            t = std::min(std::max<int64_t>(t, 0), m - 1);
            break;
          case PadMode::kWrap:
            t = ((t % m) + m) % m;
            break;
          case PadMode::kReflect:
            if (m == 1) {
              t = 0;
            } else {
              const int64_t p = 2 * (m - 1);
              t = ((t % p) + p) % p;
              if (t >= m) t = p - t;
            }
            break;
        }
        map[o] = lo + t;
      }
    }
    // The constant, as bytes of the element type (attributes are floats).
    alignas(16) unsigned char cbytes[16] = {0};
    if (mode_ == PadMode::kConstant && X->type() != ElemType::kString) {
      if (C != nullptr) {
        std::memcpy(cbytes, C->raw(), ElemSize(X->type()));
      } else if (opset_ < 11 && value_attr_ != 0.0f) {
        ONYX_RETURN_IF_ERROR(DispatchOver(TypeSet<float, double, Float16, BFloat16>{}, X->type(), "Pad",
                                          [&](auto tag) -> Status {
                                            using V = typename decltype(tag)::type;
                                            const V v = static_cast<V>(value_attr_);
                                            std::memcpy(cbytes, &v, sizeof(V));
                                            return Status::OK();
                                          }));
      }
    }
    const Dims xs = RowMajorStrides(in);
    return DispatchByStorage(X->type(), "Pad", [&](auto tag) -> Status {
      using T = typename decltype(tag)::type;
      T cval{};
      if constexpr (std::is_same_v<T, std::string>) {
        if (C != nullptr) cval = *C->data<std::string>();
      } else {
        std::memcpy(&cval, cbytes, sizeof(T));
      }
      const T* x = X->data<T>();
      T* y = Y->data<T>();
      if (rank == 0) {
        y[0] = x[0];
        return Status::OK();
      }
      const int64_t inner = out[rank - 1];
      const int64_t rows = Y->size() / inner;
      const int64_t* last = maps[rank - 1].data();
      const int64_t sl = xs[rank - 1];
      ThreadPool::For(ctx.threads(), rows, std::max<int64_t>(1, (1 << 14) / inner), [&](int64_t b, int64_t e) {
        for (int64_t r = b; r < e; ++r) {
          int64_t rem = r, base = 0;
          bool constant = false;
          for (int64_t d = rank - 2; d >= 0; --d) {
            const int64_t c = maps[d][rem % out[d]];
            rem /= out[d];
            if (c < 0) constant = true;
            base += c * xs[d];
          }
          T* yp = y + r * inner;
          if (constant) {
            std::fill(yp, yp + inner, cval);
            continue;
          }
          for (int64_t j = 0; j < inner; ++j) {
            const int64_t c = last[j];
            yp[j] = c < 0 ? cval : x[base + c * sl];
          }
        }
      });
      return Status::OK();
    });
  }

 private:
  int opset_ = 0;
  PadMode mode_ = PadMode::kConstant;
  std::vector<int64_t> pads_attr_;
  float value_attr_ = 0.0f;
};

}  // namespace

ONYX_REGISTER_KERNEL(PadKernel, "", "Pad", 1, kMaxVersion, MovableTypes());

}  // namespace onyx
