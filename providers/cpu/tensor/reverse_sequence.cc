// ReverseSequence (opset 10+): for each batch entry b, reverses the first
// sequence_lens[b] steps along time_axis; later steps are copied as they are.
#include <algorithm>
#include <string>
#include <vector>

#include "providers/cpu/common/indexing.h"
#include "providers/kernel.h"

namespace onyx {

namespace {

class ReverseSequenceKernel final : public OpKernel {
 public:
  Status Init(const KernelInfo& info) {
    batch_axis_ = info.AttrInt("batch_axis", 1);
    time_axis_ = info.AttrInt("time_axis", 0);
    ONYX_CHECK_ARG((batch_axis_ == 0 && time_axis_ == 1) || (batch_axis_ == 1 && time_axis_ == 0),
                   "ReverseSequence: attributes batch_axis ", batch_axis_, " and time_axis ", time_axis_,
                   " must be 0 and 1 in some order");
    return Status::OK();
  }

  Status Compute(KernelContext& ctx) const override {
    const Tensor* X = nullptr;
    const Tensor* L = nullptr;
    ONYX_RETURN_IF_ERROR(ctx.RequiredInput(0, &X));
    ONYX_RETURN_IF_ERROR(ctx.RequiredInput(1, &L));
    ONYX_CHECK_ARG(X->rank() >= 2, "ReverseSequence: input 0 (input) must have rank >= 2, got shape ",
                   ShapeToString(X->dims()));
    const int64_t batch = X->dims()[batch_axis_], time = X->dims()[time_axis_];
    ONYX_CHECK_ARG(L->rank() == 1 && L->dims()[0] == batch, "ReverseSequence: input 1 (sequence_lens) shape ",
                   ShapeToString(L->dims()), " must be [", batch, "] for input 0 (input) shape ",
                   ShapeToString(X->dims()));
    std::vector<int64_t> lens;
    ONYX_RETURN_IF_ERROR(ReadIndexTensor(*L, "ReverseSequence", "input 1 (sequence_lens)", &lens));
    for (int64_t v : lens)
      ONYX_CHECK_ARG(v >= 0 && v <= time, "ReverseSequence: input 1 (sequence_lens) value ", v,
                     " is out of range [0, ", time, "] for input 0 (input) shape ", ShapeToString(X->dims()));
    Tensor* Y = ctx.Output(0, X->dims(), X->type());
    if (Y == nullptr || Y->size() == 0) return Status::OK();
    const int64_t inner = DimProduct(X->dims(), 2, X->rank());
    const int64_t bs = batch_axis_ == 0 ? time * inner : inner;  // element strides
    const int64_t ts = time_axis_ == 0 ? batch * inner : inner;
    return DispatchByStorage(X->type(), "ReverseSequence", [&](auto tag) -> Status {
      using T = typename decltype(tag)::type;
      const T* x = X->data<T>();
      T* y = Y->data<T>();
      ThreadPool::For(ctx.threads(), batch * time, std::max<int64_t>(1, (1 << 14) / std::max<int64_t>(1, inner)),
                      [&](int64_t b, int64_t e) {
                        for (int64_t r = b; r < e; ++r) {
                          const int64_t bi = r / time, t = r % time;
                          const int64_t src_t = t < lens[bi] ? lens[bi] - 1 - t : t;
                          const T* sp = x + bi * bs + src_t * ts;
                          std::copy(sp, sp + inner, y + bi * bs + t * ts);
                        }
                      });
      return Status::OK();
    });
  }

 private:
  int64_t batch_axis_ = 1;
  int64_t time_axis_ = 0;
};

}  // namespace

ONYX_REGISTER_KERNEL(ReverseSequenceKernel, "", "ReverseSequence", 10, kMaxVersion, MovableTypes());

}  // namespace onyx
