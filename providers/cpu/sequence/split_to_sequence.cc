// SplitToSequence (opset 11, 24): splits a tensor along `axis` into a
// sequence. `split` is a scalar chunk length (the last chunk may be shorter)
// or a 1-D list of lengths summing to the axis; without it every chunk has
// length 1 and keepdims=0 drops the axis.
#include <algorithm>
#include <climits>
#include <cstring>

#include "providers/kernel.h"
#include "providers/cpu/sequence/sequence_common.h"

namespace onyx {
namespace {

class SplitToSequenceKernel final : public sequence::NodeKernel {
 public:
  Status Init(const KernelInfo& info) {
    ONYX_RETURN_IF_ERROR(NodeKernel::Init(info));
    axis_ = info.AttrInt("axis", 0);
    keepdims_ = info.AttrInt("keepdims", 1) != 0;
    return Status::OK();
  }

  Status Compute(KernelContext& ctx) const override {
    const Tensor* X = nullptr;
    ONYX_RETURN_IF_ERROR(TensorInput(ctx, 0, &X));
    const int64_t rank = static_cast<int64_t>(X->rank());
    ONYX_CHECK_ARG(rank >= 1, node(), ": input 0 must have rank >= 1, got a scalar");
    ONYX_CHECK_ARG(axis_ >= -rank && axis_ < rank, node(), ": attribute axis ", axis_, " is out of range [", -rank, ", ",
                   rank - 1, "] for input shape ", ShapeToString(X->dims()));
    const int64_t axis = axis_ < 0 ? axis_ + rank : axis_;
    const int64_t dim = X->dims()[axis];

    std::vector<int64_t> lengths;
    bool split_given = false;
    ONYX_RETURN_IF_ERROR(Lengths(ctx, dim, &lengths, &split_given));

    int64_t outer = 1, inner = 1;
    for (int64_t k = 0; k < axis; ++k) outer *= X->dims()[k];
    for (int64_t k = axis + 1; k < rank; ++k) inner *= X->dims()[k];
    const bool squeeze = !split_given && !keepdims_;
    const bool is_string = X->type() == ElemType::kString;
    const size_t es = ElemSize(X->type());
    ONYX_CHECK(is_string || es > 0, ErrorCode::kNotImplemented, node(), ": element type ", ElemTypeName(X->type()),
               " is not supported");

    std::vector<Value> items;
    items.reserve(lengths.size());
    int64_t offset = 0;
    for (int64_t len : lengths) {
      Dims d = X->dims();
      d[axis] = len;
      if (squeeze) d.erase(d.begin() + axis);
      auto piece = std::make_shared<Tensor>(X->type(), d);
      const int64_t block = len * inner;  // elements one outer index contributes
      if (block > 0) {
        if (is_string) {
          const auto* x = X->data<std::string>();
          auto* y = piece->data<std::string>();
          for (int64_t o = 0; o < outer; ++o)
            for (int64_t j = 0; j < block; ++j) y[o * block + j] = x[(o * dim + offset) * inner + j];
        } else {
          const auto* x = static_cast<const char*>(X->raw());
          auto* y = static_cast<char*>(piece->raw());
          ThreadPool::For(ctx.threads(), outer, std::max<int64_t>(1, (1 << 16) / block), [&](int64_t b, int64_t e) {
            for (int64_t o = b; o < e; ++o)
              std::memcpy(y + o * block * es, x + (o * dim + offset) * inner * es, static_cast<size_t>(block) * es);
          });
        }
      }
      offset += len;
      items.emplace_back(std::move(piece));
    }
    return ctx.SetOutputValue(0, Value::Sequence(std::move(items)));
  }

 private:
  // Chunk lengths along an axis of length `dim`.
  Status Lengths(const KernelContext& ctx, int64_t dim, std::vector<int64_t>* out, bool* split_given) const {
    const Tensor* s = ctx.Input(1);
    *split_given = s != nullptr;
    if (s == nullptr) {
      const Value* v = ctx.InputValue(1);
      ONYX_CHECK_ARG(v == nullptr, node(), ": ", InputName(1), " (split) must be a tensor, got ",
                     sequence::KindName(*v));
      out->assign(static_cast<size_t>(dim), 1);
      return Status::OK();
    }
    ONYX_CHECK_ARG(s->type() == ElemType::kInt64 || s->type() == ElemType::kInt32, node(), ": ", InputName(1),
                   " (split) must be int32 or int64, got ", ElemTypeName(s->type()));
    ONYX_CHECK_ARG(s->rank() <= 1, node(), ": ", InputName(1), " (split) must be a scalar or 1-D, got shape ",
                   ShapeToString(s->dims()));
    std::vector<int64_t> v(static_cast<size_t>(s->size()));
    for (int64_t i = 0; i < s->size(); ++i)
      v[i] = s->type() == ElemType::kInt64 ? s->data<int64_t>()[i] : s->data<int32_t>()[i];
    // A 1-D split may hold empty parts (onnx's test_sequence_model8 splits an
    // empty tensor into three); a scalar split is a part length, so positive.
    for (size_t i = 0; i < v.size(); ++i)
      ONYX_CHECK_ARG(s->rank() == 0 ? v[i] > 0 : v[i] >= 0, node(), ": ", InputName(1), " (split) must hold ",
                     s->rank() == 0 ? "a positive length" : "non-negative lengths", ", got ", v[i],
                     s->rank() == 0 ? "" : StrCat(" at index ", i));
    if (s->rank() == 0) {
      for (int64_t at = 0; at < dim; at += v[0]) out->push_back(std::min(v[0], dim - at));
      return Status::OK();
    }
    int64_t sum = 0;
    bool overflow = false;
    for (int64_t x : v) overflow |= __builtin_add_overflow(sum, x, &sum);
    ONYX_CHECK_ARG(!overflow && sum == dim, node(), ": ", InputName(1), " (split) lengths ", ShapeToString(v), " sum to ", sum,
                   " but the axis has length ", dim);
    *out = std::move(v);
    return Status::OK();
  }

  int64_t axis_ = 0;
  bool keepdims_ = true;
};

}  // namespace

ONYX_REGISTER_KERNEL(SplitToSequenceKernel, "", "SplitToSequence", 11, kMaxVersion, AnyType());

}  // namespace onyx
