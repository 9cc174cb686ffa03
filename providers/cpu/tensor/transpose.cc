#include <climits>
#include <string>
#include <vector>

#include "providers/cpu/common/broadcast.h"
#include "providers/cpu/common/dispatch.h"
#include "providers/cpu/common/transpose_bytes.h"
#include "providers/kernel.h"

namespace onyx {

namespace {

// The transpose as [batch, rows, cols] -> [batch, cols, rows] when it is one
// (dims of size 1 dropped, input axes that stay neighbours in order merged:
// NCHW <-> NHWC is [N, C, HW] <-> [N, HW, C]); false otherwise.
bool AsBatchedMatrix(const Dims& in, const std::vector<int64_t>& perm, int64_t* batch, int64_t* rows,
                     int64_t* cols) {
  std::vector<int64_t> p;  // perm over the axes of size > 1
  for (int64_t a : perm)
    if (in[a] != 1) p.push_back(a);
  // Runs of consecutive input axes in output order: (first axis, size).
  std::vector<std::pair<int64_t, int64_t>> runs;
  for (size_t k = 0; k < p.size(); ++k) {
    if (k > 0 && p[k] > p[k - 1] && [&] {
          for (int64_t a = p[k - 1] + 1; a < p[k]; ++a)
            if (in[a] != 1) return false;
          return true;
        }())
      runs.back().second *= in[p[k]];
    else
      runs.emplace_back(p[k], in[p[k]]);
  }
  if (runs.size() == 2 && runs[0].first > runs[1].first) {
    *batch = 1;
    *rows = runs[1].second;
    *cols = runs[0].second;
    return true;
  }
  if (runs.size() == 3 && runs[0].first < runs[2].first && runs[2].first < runs[1].first) {
    *batch = runs[0].second;
    *rows = runs[2].second;
    *cols = runs[1].second;
    return true;
  }
  return false;
}

class TransposeKernel final : public OpKernel {
 public:
  Status Init(const KernelInfo& info) {
    has_perm_ = info.Attr("perm") != nullptr;
    perm_ = info.AttrInts("perm");
    return Status::OK();
  }

  Status Compute(KernelContext& ctx) const override {
    const Tensor* X = nullptr;
    ONYX_RETURN_IF_ERROR(ctx.RequiredInput(0, &X));
    const Dims& in = X->dims();
    const size_t rank = in.size();
    std::vector<int64_t> perm = perm_;
    if (!has_perm_) {
      perm.resize(rank);
      for (size_t k = 0; k < rank; ++k) perm[k] = static_cast<int64_t>(rank - 1 - k);
    }
    ONYX_CHECK_ARG(perm.size() == rank, "Transpose: attribute perm ", ShapeToString(perm),
                   " does not match the rank of input 0 shape ", ShapeToString(in));
    std::vector<bool> used(rank, false);
    for (int64_t p : perm) {
      ONYX_CHECK_ARG(p >= 0 && p < static_cast<int64_t>(rank) && !used[p], "Transpose: attribute perm ",
                     ShapeToString(perm), " is not a permutation of 0..", rank - 1);
      used[p] = true;
    }
    Dims in_strides(rank);
    int64_t acc = 1;
    for (size_t k = rank; k-- > 0;) {
      in_strides[k] = acc;
      acc *= in[k];
    }
    Dims out(rank), strides(rank);
    for (size_t k = 0; k < rank; ++k) {
      out[k] = in[perm[k]];
      strides[k] = in_strides[perm[k]];
    }
    int64_t batch = 0, rows = 0, cols = 0;
    if (ElemSize(X->type()) == 1 && AsBatchedMatrix(in, perm, &batch, &rows, &cols)) {
      Tensor* Y = ctx.Output(0, out, X->type());
      if (Y == nullptr || Y->size() == 0) return Status::OK();
      const uint8_t* src = static_cast<const uint8_t*>(X->raw());
      uint8_t* dst = static_cast<uint8_t*>(Y->raw());
      for (int64_t b = 0; b < batch; ++b)
        TransposeBytes(src + b * rows * cols, rows, cols, dst + b * rows * cols, rows, ctx.threads());
      return Status::OK();
    }
    return DispatchAll(X->type(), "Transpose", [&](auto tag) -> Status {
      using T = typename decltype(tag)::type;
      Tensor* Y = ctx.Output(0, out, X->type());
      if (Y == nullptr || Y->size() == 0) return Status::OK();
      CopyStrided(X->data<T>(), 0, out, strides, Y->data<T>(), ctx.threads());
      return Status::OK();
    });
  }

 private:
  bool has_perm_ = false;
  std::vector<int64_t> perm_;
};

}  // namespace

ONYX_REGISTER_KERNEL(TransposeKernel, "", "Transpose", 1, kMaxVersion, AnyType());

}  // namespace onyx
