// com.microsoft Tokenizer (onnxruntime's contrib op, emitted by skl2onnx for
// TfidfVectorizer / CountVectorizer): splits each string of X ([C] or [N, C])
// into tokens along a new last axis, padded with pad_value to the longest
// row: [C, D] or [N, C, D]. With mark, each row is framed by "\x02" ... "\x03"
// (the padding comes after the end mark), so D grows by 2.
//
// Three modes, as onnxruntime picks them:
//  - characters: separators == [""] (or tokenexp == "." without separators):
//    every UTF-8 character is a token;
//  - separators: each RE2 expression in turn splits every piece the previous
//    one left; the matches are dropped;
//  - tokenexp: the tokens are the leftmost-longest matches of one RE2
//    expression, scanned left to right.
// Separators win when both attributes are given (onnxruntime's order).
// tokenexpsplit = 1 (an attribute mlprodict's runtime defines; onnxruntime's
// schema has none) uses tokenexp as a separator instead.
// Tokens shorter than mincharnum characters are dropped. An expression that
// matches the empty string consumes one character and produces no token, so a
// scan always moves on. Rows with no tokens at all give a last axis of 0 (no
// marks either).
#include <re2/re2.h>

#include <algorithm>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "providers/kernel.h"

namespace onyx {

namespace {

constexpr char kStartText = '\x02';
constexpr char kEndText = '\x03';

// Bytes of the UTF-8 sequence that starts with `lead` (1 for a stray byte, so
// a scan that must move on still does).
size_t Utf8SeqLen(unsigned char lead) {
  if (lead < 0x80) return 1;
  if ((lead & 0xE0) == 0xC0) return 2;
  if ((lead & 0xF0) == 0xE0) return 3;
  if ((lead & 0xF8) == 0xF0) return 4;
  return 1;
}

// Whether s is well-formed UTF-8 (lead bytes with their continuation bytes);
// *bad gets the offset of the first bad byte.
bool ValidUtf8(const std::string& s, size_t* bad) {
  for (size_t i = 0; i < s.size();) {
    const auto lead = static_cast<unsigned char>(s[i]);
    const size_t n = Utf8SeqLen(lead);
    if (n == 1 && lead >= 0x80) {
      *bad = i;
      return false;
    }
    for (size_t k = 1; k < n; ++k) {
      if (i + k >= s.size() || (static_cast<unsigned char>(s[i + k]) & 0xC0) != 0x80) {
        *bad = i;
        return false;
      }
    }
    i += n;
  }
  return true;
}

// Characters in valid UTF-8 text: the bytes that are not continuation bytes.
size_t Utf8Chars(const char* p, size_t len) {
  size_t n = 0;
  for (size_t i = 0; i < len; ++i) n += (static_cast<unsigned char>(p[i]) & 0xC0) != 0x80;
  return n;
}

struct Span {
  size_t offset;
  size_t len;
};

class TokenizerKernel final : public OpKernel {
 public:
  Status Init(const KernelInfo& info) {
    const Attribute* mark = info.Attr("mark");
    const Attribute* pad = info.Attr("pad_value");
    const Attribute* minchars = info.Attr("mincharnum");
    ONYX_CHECK_ARG(mark != nullptr, "Tokenizer: attribute mark is required");
    ONYX_CHECK_ARG(pad != nullptr, "Tokenizer: attribute pad_value is required");
    ONYX_CHECK_ARG(minchars != nullptr, "Tokenizer: attribute mincharnum is required");
    mark_ = mark->i != 0;
    pad_value_ = pad->s;
    mincharnum_ = minchars->i;
    ONYX_CHECK_ARG(mincharnum_ > 0, "Tokenizer: attribute mincharnum must be positive, got ", mincharnum_);

    const Attribute* seps = info.Attr("separators");
    const Attribute* texp = info.Attr("tokenexp");
    const bool split = info.AttrInt("tokenexpsplit", 0) != 0;
    std::vector<std::string> separators;
    std::string tokenexp;
    if (seps != nullptr) {
      separators = seps->strings;
      ONYX_CHECK_ARG(!separators.empty(), "Tokenizer: attribute separators must not be empty");
      chars_ = separators.size() == 1 && separators[0].empty();
    } else {
      ONYX_CHECK_ARG(texp != nullptr, "Tokenizer: one of the attributes separators or tokenexp is required");
      tokenexp = texp->s;
      ONYX_CHECK_ARG(!tokenexp.empty(), "Tokenizer: attribute tokenexp must not be empty");
      if (split) separators.push_back(tokenexp);
      else chars_ = tokenexp == ".";
    }
    ONYX_CHECK_ARG(!chars_ || mincharnum_ < 2, "Tokenizer: attribute mincharnum is ", mincharnum_,
                   ", too big for character tokenization (at most 1)");
    if (chars_) return Status::OK();

    RE2::Options options;
    options.set_longest_match(true);
    options.set_log_errors(false);  // the error goes into our status instead
    const auto compile = [&](const std::string& pattern, const char* what, std::unique_ptr<RE2>* out) -> Status {
      *out = std::make_unique<RE2>(pattern, options);
      ONYX_CHECK_ARG((*out)->ok(), "Tokenizer: attribute ", what, " '", pattern,
                     "' is not a valid RE2 regular expression: ", (*out)->error());
      return Status::OK();
    };
    if (!separators.empty()) {
      for (const auto& sep : separators) {
        separators_.emplace_back();
        ONYX_RETURN_IF_ERROR(compile(sep, split ? "tokenexp" : "separators", &separators_.back()));
      }
    } else {
      ONYX_RETURN_IF_ERROR(compile(tokenexp, "tokenexp", &tokenexp_));
    }
    return Status::OK();
  }

  Status Compute(KernelContext& ctx) const override {
    const Tensor* X = nullptr;
    ONYX_RETURN_IF_ERROR(ctx.RequiredInput(0, &X));
    const Dims& x_dims = X->dims();
    ONYX_CHECK_ARG(x_dims.size() == 1 || x_dims.size() == 2, "input 0 (X) must have shape [C] or [N, C], got rank ",
                   x_dims.size());
    const int64_t n = X->size();
    Dims y_dims = x_dims;
    if (n == 0) {
      // onnxruntime: [0] -> [0], [N, 0] and [0, C] -> [N, 0].
      if (y_dims.size() == 2) y_dims.pop_back();
      else y_dims.clear();
      y_dims.push_back(0);
      ctx.Output(0, y_dims, ElemType::kString);
      return Status::OK();
    }
    const std::string* x = X->data<std::string>();
    for (int64_t i = 0; i < n; ++i) {
      size_t bad = 0;
      ONYX_CHECK_ARG(ValidUtf8(x[i], &bad), "input 0 (X): string ", i, " is not valid UTF-8 (byte ", bad, " of ",
                     x[i].size(), ")");
    }

    std::vector<std::vector<Span>> rows(static_cast<size_t>(n));
    ThreadPool::For(ctx.threads(), n, 64, [&](int64_t begin, int64_t end) {
      for (int64_t i = begin; i < end; ++i) Tokenize(x[i], &rows[static_cast<size_t>(i)]);
    });
    size_t widest = 0;
    for (const auto& r : rows) widest = std::max(widest, r.size());
    const size_t marks = mark_ && widest > 0 ? 2 : 0;
    const size_t d = widest + marks;
    y_dims.push_back(static_cast<int64_t>(d));
    Tensor* Y = ctx.Output(0, y_dims, ElemType::kString);
    if (Y == nullptr || d == 0) return Status::OK();
    std::string* y = Y->data<std::string>();
    for (int64_t i = 0; i < n; ++i) {
      const auto& r = rows[static_cast<size_t>(i)];
      std::string* out = y + static_cast<size_t>(i) * d;
      if (marks) out++->assign(1, kStartText);
      for (const Span& t : r) out++->assign(x[i], t.offset, t.len);
      if (marks) out++->assign(1, kEndText);
      for (size_t p = r.size(); p < widest; ++p) *out++ = pad_value_;
    }
    return Status::OK();
  }

 private:
  bool LongEnough(const char* p, size_t len) const {
    return len > 0 && static_cast<int64_t>(Utf8Chars(p, len)) >= mincharnum_;
  }

  void Tokenize(const std::string& s, std::vector<Span>* row) const {
    if (chars_) {
      for (size_t i = 0; i < s.size();) {
        const size_t len = std::min(Utf8SeqLen(static_cast<unsigned char>(s[i])), s.size() - i);
        row->push_back({i, len});
        i += len;
      }
    } else if (tokenexp_) {
      Scan(s, {0, s.size()}, *tokenexp_, false, row);
    } else {
      row->push_back({0, s.size()});
      std::vector<Span> next;
      for (const auto& sep : separators_) {
        next.clear();
        for (const Span& piece : *row) Scan(s, piece, *sep, true, &next);
        row->swap(next);
      }
    }
  }

  // Scans `piece` of s with `re`. As separators (`split`), the text between
  // matches (and after the last) becomes tokens; otherwise the matches do.
  void Scan(const std::string& s, Span piece, const RE2& re, bool split, std::vector<Span>* out) const {
    const re2::StringPiece text(s.data() + piece.offset, piece.len);
    size_t start = 0;
    re2::StringPiece m;
    while (start <= piece.len && re.Match(text, start, piece.len, RE2::UNANCHORED, &m, 1)) {
      const size_t at = static_cast<size_t>(m.data() - text.data());
      if (split) {
        if (LongEnough(text.data() + start, at - start)) out->push_back({piece.offset + start, at - start});
      } else if (LongEnough(m.data(), m.size())) {
        out->push_back({piece.offset + at, m.size()});
        start = at + m.size();
        continue;
      }
      // A separator resumes after itself; an empty match, or a token too
      // short to keep, gives up one character.
      if (split && !m.empty()) start = at + m.size();
      else start = at + (at < piece.len ? Utf8SeqLen(static_cast<unsigned char>(text[at])) : 1);
    }
    if (split && start < piece.len && LongEnough(text.data() + start, piece.len - start))
      out->push_back({piece.offset + start, piece.len - start});
  }

  bool mark_ = false;
  std::string pad_value_;
  int64_t mincharnum_ = 1;
  bool chars_ = false;
  std::vector<std::unique_ptr<RE2>> separators_;
  std::unique_ptr<RE2> tokenexp_;
};

}  // namespace

ONYX_REGISTER_KERNEL(TokenizerKernel, "com.microsoft", "Tokenizer", 1, kMaxVersion, {ElemType::kString});

}  // namespace onyx
