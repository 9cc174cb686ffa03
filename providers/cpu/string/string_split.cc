// StringSplit (opset 20+): splits every string of X at `delimiter` (at most
// `maxsplit` times, from the left) into X.shape + [longest count], padded
// with empty strings, and returns the number of pieces of each string.
// Without a delimiter (or with an empty one) it splits at runs of whitespace
// and drops leading and trailing whitespace, as Python's str.split() does.
#include <algorithm>
#include <limits>
#include <string>
#include <vector>

#include "providers/kernel.h"

namespace onyx {

namespace {

// Byte length of the whitespace character at s[i], 0 when there is none.
// Whitespace is what Python's str.split() splits at (str.isspace(), onnx's
// reference): ASCII \t-\r, \x1c-\x1f and space, and in UTF-8 U+0085, U+00A0,
// U+1680, U+2000-U+200A, U+2028, U+2029, U+202F, U+205F, U+3000.
size_t SpaceLen(const std::string& s, size_t i) {
  const auto b = [&](size_t k) { return i + k < s.size() ? static_cast<unsigned char>(s[i + k]) : 0u; };
  const unsigned c = b(0);
  if (c == ' ' || (c >= '\t' && c <= '\r') || (c >= 0x1c && c <= 0x1f)) return 1;
  if (c == 0xc2) return (b(1) == 0x85 || b(1) == 0xa0) ? 2 : 0;
  if (c == 0xe1) return (b(1) == 0x9a && b(2) == 0x80) ? 3 : 0;
  if (c == 0xe2 && b(1) == 0x80) {
    const unsigned d = b(2);
    return ((d >= 0x80 && d <= 0x8a) || d == 0xa8 || d == 0xa9 || d == 0xaf) ? 3 : 0;
  }
  if (c == 0xe2) return (b(1) == 0x81 && b(2) == 0x9f) ? 3 : 0;
  if (c == 0xe3) return (b(1) == 0x80 && b(2) == 0x80) ? 3 : 0;
  return 0;
}

class StringSplitKernel final : public OpKernel {
 public:
  Status Init(const KernelInfo& info) {
    delimiter_ = info.AttrString("delimiter", "");
    // A negative maxsplit (Python's -1) means no limit, as does its absence.
    const int64_t m = info.AttrInt("maxsplit", -1);
    maxsplit_ = m < 0 ? std::numeric_limits<int64_t>::max() : m;
    return Status::OK();
  }

  Status Compute(KernelContext& ctx) const override {
    const Tensor* X = nullptr;
    ONYX_RETURN_IF_ERROR(ctx.RequiredInput(0, &X));
    const std::string* x = X->data<std::string>();
    const int64_t n = X->size();
    // Pieces as (offset, length) into their source string, all strings at once.
    std::vector<std::vector<std::pair<size_t, size_t>>> pieces(static_cast<size_t>(n));
    size_t widest = 0;
    for (int64_t i = 0; i < n; ++i) {
      auto& p = pieces[static_cast<size_t>(i)];
      if (delimiter_.empty()) {
        SplitWhitespace(x[i], &p);
      } else {
        SplitAt(x[i], &p);
      }
      widest = std::max(widest, p.size());
    }
    Dims y_dims = X->dims();
    y_dims.push_back(static_cast<int64_t>(widest));
    Tensor* Y = ctx.Output(0, y_dims, ElemType::kString);
    Tensor* Z = ctx.Output(1, X->dims(), ElemType::kInt64);
    for (int64_t i = 0; i < n; ++i) {
      const auto& p = pieces[static_cast<size_t>(i)];
      if (Y != nullptr) {
        std::string* y = Y->data<std::string>() + i * static_cast<int64_t>(widest);
        for (size_t k = 0; k < p.size(); ++k) y[k].assign(x[i], p[k].first, p[k].second);
      }
      if (Z != nullptr) Z->data<int64_t>()[i] = static_cast<int64_t>(p.size());
    }
    return Status::OK();
  }

 private:
  void SplitAt(const std::string& s, std::vector<std::pair<size_t, size_t>>* out) const {
    size_t start = 0;
    for (int64_t splits = 0; splits < maxsplit_; ++splits) {
      const size_t at = s.find(delimiter_, start);
      if (at == std::string::npos) break;
      out->emplace_back(start, at - start);
      start = at + delimiter_.size();
    }
    out->emplace_back(start, s.size() - start);
  }

  void SplitWhitespace(const std::string& s, std::vector<std::pair<size_t, size_t>>* out) const {
    size_t i = 0;
    const size_t len = s.size();
    int64_t splits = 0;
    while (true) {
      for (size_t w; i < len && (w = SpaceLen(s, i)) > 0;) i += w;
      if (i == len) return;
      const size_t start = i;
      if (splits == maxsplit_) {
        // The last piece keeps the rest, trailing whitespace included.
        out->emplace_back(start, len - start);
        return;
      }
      while (i < len && SpaceLen(s, i) == 0) ++i;
      out->emplace_back(start, i - start);
      ++splits;
    }
  }

  std::string delimiter_;
  int64_t maxsplit_ = 0;
};

}  // namespace

ONYX_REGISTER_KERNEL(StringSplitKernel, "", "StringSplit", 20, kMaxVersion, {ElemType::kString});

}  // namespace onyx
