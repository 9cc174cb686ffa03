#include <climits>
#include <string>
#include <vector>

#include "providers/cpu/common/broadcast.h"
#include "providers/cpu/common/dispatch.h"
#include "providers/kernel.h"

namespace onyx {

namespace {

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
