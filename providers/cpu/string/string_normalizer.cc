// StringNormalizer (opset 10+): drops the elements of a [C] or [1, C] string
// tensor that equal a stopword, then lower- or upper-cases what is left.
//
// Case mapping is Unicode's, done by ICU (Debian's libicu) on UTF-8 text, not
// by std::locale: std::locale needs the named locale installed on the machine
// (onnxruntime's kernel fails at session creation where en_US.UTF-8 is
// missing), while ICU carries its own case tables and locale rules in
// libicudata, so the `locale` attribute works on a machine with no system
// locales at all. ICU applies the full mappings (German sharp s upper-cases
// to "SS", final sigma lower-cases to "ς") and the language rules of the
// locale (Turkish and Azeri dotted/dotless i, Lithuanian, Greek, Dutch "IJ"),
// as Python's str.upper/str.lower do for the root locale. Case-insensitive
// stopword matching compares Unicode case folds.
#include <unicode/uchar.h>
#include <unicode/ustring.h>
#include <unicode/utypes.h>

#include <string>
#include <unordered_set>
#include <vector>

#include "providers/kernel.h"

namespace onyx {

namespace {

enum class CaseAction { kNone, kLower, kUpper, kFold };

bool IsAscii(const std::string& s) {
  for (unsigned char c : s)
    if (c >= 0x80) return false;
  return true;
}

// `s` with ASCII letters mapped; the exact Unicode result for ASCII text in
// every locale except Turkish/Azeri ('i' <-> dotted capital I), which the
// caller sends through ICU instead.
std::string MapAscii(const std::string& s, CaseAction action) {
  std::string out = s;
  for (char& c : out) {
    if (action == CaseAction::kUpper) {
      if (c >= 'a' && c <= 'z') c = static_cast<char>(c - 'a' + 'A');
    } else if (c >= 'A' && c <= 'Z') {
      c = static_cast<char>(c - 'A' + 'a');
    }
  }
  return out;
}

// Maps UTF-8 text through ICU (UTF-16 inside). `what` names the element for
// the error on text that is not valid UTF-8.
Status MapUnicode(const std::string& s, CaseAction action, const char* locale, const std::string& what,
                  std::string* out) {
  UErrorCode err = U_ZERO_ERROR;
  int32_t n16 = 0;
  u_strFromUTF8(nullptr, 0, &n16, s.data(), static_cast<int32_t>(s.size()), &err);
  if (err == U_BUFFER_OVERFLOW_ERROR) err = U_ZERO_ERROR;
  ONYX_CHECK_ARG(U_SUCCESS(err), what, " is not valid UTF-8 (", u_errorName(err), ")");
  std::u16string src(static_cast<size_t>(n16), u'\0');
  u_strFromUTF8(reinterpret_cast<UChar*>(&src[0]), n16, nullptr, s.data(), static_cast<int32_t>(s.size()), &err);
  ONYX_CHECK_ARG(U_SUCCESS(err), what, " is not valid UTF-8 (", u_errorName(err), ")");

  // Full case mappings can lengthen text (3x at most per code unit); retry
  // once with the exact size ICU reports if the first guess is short.
  std::u16string dst(src.size() * 3 + 1, u'\0');
  int32_t n = 0;
  for (int attempt = 0; attempt < 2; ++attempt) {
    err = U_ZERO_ERROR;
    UChar* d = reinterpret_cast<UChar*>(&dst[0]);
    const UChar* p = reinterpret_cast<const UChar*>(src.data());
    const int32_t cap = static_cast<int32_t>(dst.size()), len = static_cast<int32_t>(src.size());
    if (action == CaseAction::kUpper) {
      n = u_strToUpper(d, cap, p, len, locale, &err);
    } else if (action == CaseAction::kLower) {
      n = u_strToLower(d, cap, p, len, locale, &err);
    } else {
      n = u_strFoldCase(d, cap, p, len, U_FOLD_CASE_DEFAULT, &err);
    }
    if (err != U_BUFFER_OVERFLOW_ERROR) break;
    dst.assign(static_cast<size_t>(n) + 1, u'\0');
  }
  if (U_FAILURE(err)) return MakeError(ErrorCode::kFail, "case mapping of ", what, " failed: ", u_errorName(err));

  err = U_ZERO_ERROR;
  int32_t n8 = 0;
  u_strToUTF8(nullptr, 0, &n8, reinterpret_cast<const UChar*>(dst.data()), n, &err);
  if (err == U_BUFFER_OVERFLOW_ERROR) err = U_ZERO_ERROR;
  out->assign(static_cast<size_t>(n8), '\0');
  u_strToUTF8(&(*out)[0], n8, nullptr, reinterpret_cast<const UChar*>(dst.data()), n, &err);
  if (U_FAILURE(err)) return MakeError(ErrorCode::kFail, "case mapping of ", what, " failed: ", u_errorName(err));
  return Status::OK();
}

class StringNormalizerKernel final : public OpKernel {
 public:
  Status Init(const KernelInfo& info) {
    const std::string action = info.AttrString("case_change_action", "NONE");
    if (action == "LOWER") {
      action_ = CaseAction::kLower;
    } else if (action == "UPPER") {
      action_ = CaseAction::kUpper;
    } else {
      ONYX_CHECK_ARG(action == "NONE", "StringNormalizer: attribute case_change_action must be LOWER, UPPER or NONE, got '",
                     action, "'");
    }
    case_sensitive_ = info.AttrInt("is_case_sensitive", 0) != 0;
    locale_ = info.AttrString("locale", "en_US");
    // ICU reads the language subtag ("tr" of "tr_TR.UTF-8"); only Turkish and
    // Azeri change how ASCII letters map, so only they leave the fast path.
    const std::string lang = locale_.substr(0, locale_.find_first_of("_-.@"));
    ascii_fast_ = lang != "tr" && lang != "az";
    if (const Attribute* a = info.Attr("stopwords")) {
      for (size_t i = 0; i < a->strings.size(); ++i) {
        std::string key;
        ONYX_RETURN_IF_ERROR(Key(a->strings[i], StrCat("stopword ", i, " ('", a->strings[i], "')"), &key));
        stopwords_.insert(std::move(key));
      }
    }
    return Status::OK();
  }

  Status Compute(KernelContext& ctx) const override {
    const Tensor* X = nullptr;
    ONYX_RETURN_IF_ERROR(ctx.RequiredInput(0, &X));
    const Dims& d = X->dims();
    ONYX_CHECK_ARG(d.size() == 1 || (d.size() == 2 && d[0] == 1),
                   "StringNormalizer: input 0 (X) must have shape [C] or [1, C], got ", ShapeToString(d));
    const std::string* x = X->data<std::string>();
    std::vector<std::string> kept;
    kept.reserve(static_cast<size_t>(X->size()));
    std::string key;
    for (int64_t i = 0; i < X->size(); ++i) {
      const std::string what = StrCat("input 0 (X) element ", i);
      if (!stopwords_.empty()) {
        ONYX_RETURN_IF_ERROR(Key(x[i], what, &key));
        if (stopwords_.count(key)) continue;
      }
      kept.emplace_back();
      ONYX_RETURN_IF_ERROR(Map(x[i], action_, what, &kept.back()));
    }
    // Every element dropped: one empty string, as the spec asks.
    if (kept.empty()) kept.emplace_back();
    const int64_t c = static_cast<int64_t>(kept.size());
    Tensor* Y = ctx.Output(0, d.size() == 1 ? Dims{c} : Dims{1, c}, ElemType::kString);
    if (Y == nullptr) return Status::OK();
    std::string* y = Y->data<std::string>();
    for (int64_t i = 0; i < c; ++i) y[i] = std::move(kept[static_cast<size_t>(i)]);
    return Status::OK();
  }

 private:
  Status Map(const std::string& s, CaseAction action, const std::string& what, std::string* out) const {
    if (action == CaseAction::kNone) {
      *out = s;
      return Status::OK();
    }
    // ASCII folds the way it lowers.
    if (ascii_fast_ && IsAscii(s)) {
      *out = MapAscii(s, action == CaseAction::kUpper ? action : CaseAction::kLower);
      return Status::OK();
    }
    return MapUnicode(s, action, locale_.c_str(), what, out);
  }

  // What a string is compared with the stopwords as.
  Status Key(const std::string& s, const std::string& what, std::string* out) const {
    if (case_sensitive_) {
      *out = s;
      return Status::OK();
    }
    return Map(s, CaseAction::kFold, what, out);
  }

  CaseAction action_ = CaseAction::kNone;
  bool case_sensitive_ = false;
  bool ascii_fast_ = true;
  std::string locale_;
  std::unordered_set<std::string> stopwords_;
};

}  // namespace

ONYX_REGISTER_KERNEL(StringNormalizerKernel, "", "StringNormalizer", 10, kMaxVersion, {ElemType::kString});

}  // namespace onyx
