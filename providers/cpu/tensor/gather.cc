#include <algorithm>
#include <climits>
#include <cstring>
#include <string>
#include <vector>

#include "providers/cpu/common/dispatch.h"
#include "providers/cpu/common/indexing.h"
#include "providers/kernel.h"

namespace onyx {

namespace {

class GatherKernel final : public OpKernel {
 public:
  Status Init(const KernelInfo& info) {
    axis_ = info.AttrInt("axis", 0);
    return Status::OK();
  }

  Status Compute(KernelContext& ctx) const override {
    const Tensor* X = nullptr;
    const Tensor* Ind = nullptr;
    ONYX_RETURN_IF_ERROR(ctx.RequiredInput(0, &X));
    ONYX_RETURN_IF_ERROR(ctx.RequiredInput(1, &Ind));
    const int64_t rank = static_cast<int64_t>(X->rank());
    ONYX_CHECK_ARG(rank >= 1, "Gather: input 0 (data) must have rank >= 1, got a scalar");
    const int64_t axis = axis_ < 0 ? axis_ + rank : axis_;
    ONYX_CHECK_ARG(axis >= 0 && axis < rank, "Gather: attribute axis ", axis_, " is out of range for data shape ",
                   ShapeToString(X->dims()));
    const int64_t dim = X->dims()[axis];
    std::vector<int64_t> idx;
    ONYX_RETURN_IF_ERROR(ReadIndexTensor(*Ind, "Gather", "input 1 (indices)", &idx));
    ONYX_RETURN_IF_ERROR(NormalizeIndexValues(&idx, X->dims(), axis, "Gather", "indices", "data"));
    Dims out;
    out.insert(out.end(), X->dims().begin(), X->dims().begin() + axis);
    out.insert(out.end(), Ind->dims().begin(), Ind->dims().end());
    out.insert(out.end(), X->dims().begin() + axis + 1, X->dims().end());
    int64_t outer = 1, inner = 1;
    for (int64_t k = 0; k < axis; ++k) outer *= X->dims()[k];
    for (int64_t k = axis + 1; k < rank; ++k) inner *= X->dims()[k];
    const int64_t n = static_cast<int64_t>(idx.size());
    Tensor* Y = ctx.Output(0, out, X->type());
    if (Y == nullptr || Y->size() == 0) return Status::OK();
    if (X->type() == ElemType::kString) {
      const auto* x = X->data<std::string>();
      auto* y = Y->data<std::string>();
      for (int64_t o = 0; o < outer; ++o)
        for (int64_t j = 0; j < n; ++j)
          for (int64_t k = 0; k < inner; ++k) y[(o * n + j) * inner + k] = x[(o * dim + idx[j]) * inner + k];
      return Status::OK();
    }
    const size_t es = ElemSize(X->type());
    ONYX_CHECK(es > 0, ErrorCode::kNotImplemented, "Gather: element type ", ElemTypeName(X->type()),
               " is not supported");
    const auto* x = static_cast<const char*>(X->raw());
    auto* y = static_cast<char*>(Y->raw());
    const size_t block = static_cast<size_t>(inner) * es;
    ThreadPool::For(ctx.threads(), outer * n, std::max<int64_t>(1, (1 << 16) / std::max<int64_t>(1, inner)),
                    [&](int64_t b, int64_t e) {
                      for (int64_t r = b; r < e; ++r) {
                        const int64_t o = r / n, j = r - o * n;
                        std::memcpy(y + r * block, x + (o * dim + idx[j]) * block, block);
                      }
                    });
    return Status::OK();
  }

 private:
  int64_t axis_ = 0;
};

}  // namespace

ONYX_REGISTER_KERNEL(GatherKernel, "", "Gather", 1, kMaxVersion, AnyType());

}  // namespace onyx
