// Split, every opset: the sizes come from the optional second input (opset 1,
// and 13+), the `split` attribute (1-12), `num_outputs` (18+, the last chunk
// may be smaller) or, with none of these, equal parts over the outputs.
#include <algorithm>
#include <string>
#include <vector>

#include "providers/cpu/common/indexing.h"
#include "providers/kernel.h"

namespace onyx {

namespace {

class SplitKernel final : public OpKernel {
 public:
  Status Init(const KernelInfo& info) {
    opset_ = info.opset();
    axis_ = info.AttrInt("axis", 0);
    if (opset_ < 13 && info.Attr("split") != nullptr) {
      has_split_attr_ = true;
      split_attr_ = info.AttrInts("split");
    }
    if (opset_ >= 18 && info.Attr("num_outputs") != nullptr) num_outputs_ = info.AttrInt("num_outputs", 0);
    return Status::OK();
  }

  Status Compute(KernelContext& ctx) const override {
    const Tensor* X = nullptr;
    ONYX_RETURN_IF_ERROR(ctx.RequiredInput(0, &X));
    const int64_t rank = static_cast<int64_t>(X->rank());
    ONYX_CHECK_ARG(rank >= 1, "Split: input 0 (input) must have rank >= 1, got a scalar");
    int64_t axis = 0;
    ONYX_RETURN_IF_ERROR(NormalizeAxis(axis_, rank, "Split", "attribute axis", &axis));
    const int64_t dim = X->dims()[axis];
    const int64_t n_out = ctx.OutputCount();
    std::vector<int64_t> split;
    const Tensor* S = (opset_ < 2 || opset_ >= 13) ? ctx.Input(1) : nullptr;
    if (S != nullptr) {
      ONYX_CHECK_ARG(S->rank() <= 1, "Split: input 1 (split) must be 1-D, got shape ", ShapeToString(S->dims()));
      ONYX_RETURN_IF_ERROR(ReadIndexTensor(*S, "Split", "input 1 (split)", &split));
    } else if (has_split_attr_) {
      split = split_attr_;
    }
    if (!split.empty()) {  // an empty split input counts as absent
      ONYX_CHECK_ARG(num_outputs_ < 0, "Split: input 1 (split) and attribute num_outputs cannot both be given");
      ONYX_CHECK_ARG(static_cast<int64_t>(split.size()) == n_out, "Split: ", split.size(),
                     " split sizes given for ", n_out, " outputs");
      for (int64_t s : split) ONYX_CHECK_ARG(s >= 0, "Split: split sizes must be >= 0, got ", ShapeToString(split));
      int64_t sum = 0;
      for (int64_t s : split) {
        // Bounded before adding: sizes that wrap around to `dim` would copy out of bounds.
        ONYX_CHECK_ARG(s <= dim - sum, "Split: split sizes ", ShapeToString(split), " exceed axis ", axis,
                       " of input 0 (input) shape ", ShapeToString(X->dims()));
        sum += s;
      }
      ONYX_CHECK_ARG(sum == dim, "Split: split sizes ", ShapeToString(split), " sum to ", sum, " but axis ", axis,
                     " of input 0 (input) shape ", ShapeToString(X->dims()), " has ", dim);
    } else {
      const int64_t n = num_outputs_ >= 0 ? num_outputs_ : n_out;
      ONYX_CHECK_ARG(n >= 1, "Split: attribute num_outputs must be >= 1, got ", n);
      ONYX_CHECK_ARG(n == n_out, "Split: attribute num_outputs ", n, " does not match the node's ", n_out,
                     " outputs");
      const int64_t chunk = (dim + n - 1) / n;
      const int64_t last = dim - chunk * (n - 1);
      ONYX_CHECK_ARG(last >= 0, "Split: axis ", axis, " of size ", dim, " of input 0 (input) shape ",
                     ShapeToString(X->dims()), " cannot be split into ", n, " chunks of ", chunk);
      split.assign(static_cast<size_t>(n), chunk);
      split.back() = last;
    }
    const int64_t outer = DimProduct(X->dims(), 0, axis);
    const int64_t inner = DimProduct(X->dims(), axis + 1, rank);
    return DispatchByStorage(X->type(), "Split", [&](auto tag) -> Status {
      using T = typename decltype(tag)::type;
      const T* x = X->data<T>();
      int64_t pos = 0;
      for (int64_t i = 0; i < n_out; ++i) {
        Dims od = X->dims();
        od[axis] = split[i];
        Tensor* Y = ctx.Output(static_cast<int>(i), od, X->type());
        const int64_t block = split[i] * inner;
        if (Y != nullptr && Y->size() > 0) {
          T* y = Y->data<T>();
          const T* src = x + pos * inner;
          ThreadPool::For(ctx.threads(), outer, std::max<int64_t>(1, (1 << 15) / std::max<int64_t>(1, block)),
                          [&](int64_t b, int64_t e) {
                            for (int64_t o = b; o < e; ++o)
                              std::copy(src + o * dim * inner, src + o * dim * inner + block, y + o * block);
                          });
        }
        pos += split[i];
      }
      return Status::OK();
    });
  }

 private:
  int opset_ = 0;
  int64_t axis_ = 0;
  bool has_split_attr_ = false;
  std::vector<int64_t> split_attr_;
  int64_t num_outputs_ = -1;
};

}  // namespace

ONYX_REGISTER_KERNEL(SplitKernel, "", "Split", 1, kMaxVersion, MovableTypes());

}  // namespace onyx
