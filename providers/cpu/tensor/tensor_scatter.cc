// TensorScatter (opset 24): a KV-cache update. present = past_cache with, for
// each batch b and every index before `axis`, the update's `sequence_length`
// rows written at write_indices[b] + s along `axis` (wrapping modulo the
// cache length in mode "circular"; in "linear" they must fit).
#include <algorithm>
#include <string>
#include <vector>

#include "providers/cpu/common/indexing.h"
#include "providers/kernel.h"

namespace onyx {

namespace {

class TensorScatterKernel final : public OpKernel {
 public:
  Status Init(const KernelInfo& info) {
    const std::string mode = info.AttrString("mode", "linear");
    ONYX_CHECK_ARG(mode == "linear" || mode == "circular", "TensorScatter: attribute mode must be 'linear' or ",
                   "'circular', got '", mode, "'");
    circular_ = mode == "circular";
    axis_ = info.AttrInt("axis", -2);
    return Status::OK();
  }

  Status Compute(KernelContext& ctx) const override {
    const Tensor* past = nullptr;
    const Tensor* upd = nullptr;
    ONYX_RETURN_IF_ERROR(ctx.RequiredInput(0, &past));
    ONYX_RETURN_IF_ERROR(ctx.RequiredInput(1, &upd));
    const Dims& pd = past->dims();
    const Dims& ud = upd->dims();
    const int64_t rank = static_cast<int64_t>(pd.size());
    ONYX_CHECK_ARG(upd->type() == past->type(), "TensorScatter: input 1 (update) has type ", ElemTypeName(upd->type()),
                   " but input 0 (past_cache) has type ", ElemTypeName(past->type()));
    ONYX_CHECK_ARG(rank >= 2 && ud.size() == pd.size(), "TensorScatter: input 0 (past_cache) of shape ",
                   ShapeToString(pd), " and input 1 (update) of shape ", ShapeToString(ud),
                   " must have one rank, at least 2");
    int64_t axis = 0;
    ONYX_RETURN_IF_ERROR(NormalizeAxis(axis_, rank, "TensorScatter", "attribute axis", &axis));
    ONYX_CHECK_ARG(axis != 0, "TensorScatter: attribute axis ", axis_, " names the batch dimension");
    for (int64_t d = 0; d < rank; ++d)
      ONYX_CHECK_ARG(d == axis ? ud[d] <= pd[d] : ud[d] == pd[d], "TensorScatter: input 1 (update) of shape ",
                     ShapeToString(ud), " does not fit input 0 (past_cache) of shape ", ShapeToString(pd),
                     " (dims must match except along axis ", axis, ", where the update may be shorter)");
    const int64_t batch = pd[0], max_len = pd[axis], seq = ud[axis];
    std::vector<int64_t> wi(static_cast<size_t>(batch), 0);
    const Tensor* w = ctx.Input(2);
    if (w != nullptr) {
      ONYX_CHECK_ARG(w->rank() == 1 && w->dims()[0] == batch, "TensorScatter: input 2 (write_indices) of shape ",
                     ShapeToString(w->dims()), " must be [", batch, "] (the batch of input 0 (past_cache))");
      ONYX_RETURN_IF_ERROR(ReadIndexTensor(*w, "TensorScatter", "input 2 (write_indices)", &wi));
      for (int64_t b = 0; b < batch; ++b) {
        ONYX_CHECK_ARG(wi[b] >= 0, "TensorScatter: input 2 (write_indices) holds ", wi[b], " at index ", b,
                       "; write indices must be >= 0");
        ONYX_CHECK_ARG(circular_ || wi[b] + seq <= max_len, "TensorScatter: input 2 (write_indices) holds ", wi[b],
                       " at index ", b, ": writing ", seq, " rows there passes the cache length ", max_len,
                       " (mode 'linear')");
      }
    }
    Tensor* Y = ctx.Output(0, pd, past->type());
    if (Y == nullptr || Y->size() == 0) return Status::OK();
    int64_t outer = 1, inner = 1;
    for (int64_t d = 1; d < axis; ++d) outer *= pd[d];
    for (int64_t d = axis + 1; d < rank; ++d) inner *= pd[d];
    return DispatchByStorage(past->type(), "TensorScatter", [&](auto tag) -> Status {
      using S = typename decltype(tag)::type;
      const S* p = past->data<S>();
      const S* u = upd->data<S>();
      S* y = Y->data<S>();
      std::copy(p, p + past->size(), y);
      for (int64_t b = 0; b < batch; ++b)
        for (int64_t o = 0; o < outer; ++o) {
          const int64_t row = b * outer + o;
          for (int64_t s = 0; s < seq; ++s) {
            const int64_t at = circular_ ? (wi[b] + s) % max_len : wi[b] + s;
            const S* src = u + (row * seq + s) * inner;
            std::copy(src, src + inner, y + (row * max_len + at) * inner);
          }
        }
      return Status::OK();
    });
  }

 private:
  bool circular_ = false;
  int64_t axis_ = -2;
};

}  // namespace

ONYX_REGISTER_KERNEL(TensorScatterKernel, "", "TensorScatter", 24, kMaxVersion, MovableTypes());

}  // namespace onyx
