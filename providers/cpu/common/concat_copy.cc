#include "providers/cpu/common/concat_copy.h"

#include <algorithm>
#include <cstring>

namespace onyx {

Status ConcatInto(const std::vector<const Tensor*>& ins, int64_t outer, ThreadPool* threads, Tensor* y,
                  const std::string& what) {
  if (outer <= 0 || y->size() == 0) return Status::OK();
  // Elements along the axis times the inner block: what one outer index holds.
  const int64_t out_row = y->size() / outer;
  if (y->type() == ElemType::kString) {
    auto* out = y->data<std::string>();
    int64_t col = 0;
    for (const Tensor* t : ins) {
      const int64_t row = t->size() / outer;
      const auto* x = t->data<std::string>();
      for (int64_t o = 0; o < outer; ++o)
        for (int64_t j = 0; j < row; ++j) out[o * out_row + col + j] = x[o * row + j];
      col += row;
    }
    return Status::OK();
  }
  const size_t es = ElemSize(y->type());
  ONYX_CHECK(es > 0, ErrorCode::kNotImplemented, what, ": element type ", ElemTypeName(y->type()),
             " is not supported");
  auto* out = static_cast<char*>(y->raw());
  int64_t col = 0;
  for (const Tensor* t : ins) {
    const int64_t row = t->size() / outer;
    const auto* x = static_cast<const char*>(t->raw());
    if (row > 0) {
      ThreadPool::For(threads, outer, std::max<int64_t>(1, (1 << 16) / row), [&](int64_t b, int64_t e) {
        for (int64_t o = b; o < e; ++o)
          std::memcpy(out + (o * out_row + col) * es, x + o * row * es, static_cast<size_t>(row) * es);
      });
    }
    col += row;
  }
  return Status::OK();
}

}  // namespace onyx
