// RegexFullMatch (opset 20+): whether each string of X matches `pattern` (RE2
// syntax, as the spec says) as a whole. The pattern is compiled once, when the
// session is created, by Debian's RE2: linear-time matching, so no input can
// make a match run away.
#include <re2/re2.h>

#include <memory>
#include <string>

#include "providers/kernel.h"

namespace onyx {

namespace {

class RegexFullMatchKernel final : public OpKernel {
 public:
  Status Init(const KernelInfo& info) {
    const Attribute* a = info.Attr("pattern");
    ONYX_CHECK_ARG(a != nullptr, "RegexFullMatch: attribute pattern is required");
    RE2::Options options;
    options.set_log_errors(false);  // the error goes into our status instead
    re_ = std::make_unique<RE2>(a->s, options);
    ONYX_CHECK_ARG(re_->ok(), "RegexFullMatch: attribute pattern '", a->s, "' is not a valid RE2 regular expression: ",
                   re_->error());
    return Status::OK();
  }

  Status Compute(KernelContext& ctx) const override {
    const Tensor* X = nullptr;
    ONYX_RETURN_IF_ERROR(ctx.RequiredInput(0, &X));
    Tensor* Y = ctx.Output(0, X->dims(), ElemType::kBool);
    if (Y == nullptr || Y->size() == 0) return Status::OK();
    const std::string* x = X->data<std::string>();
    bool* y = Y->data<bool>();
    // RE2 objects are safe to match from many threads at once.
    ThreadPool::For(ctx.threads(), X->size(), 64, [&](int64_t begin, int64_t end) {
      for (int64_t i = begin; i < end; ++i) y[i] = RE2::FullMatch(x[i], *re_);
    });
    return Status::OK();
  }

 private:
  std::unique_ptr<RE2> re_;
};

}  // namespace

ONYX_REGISTER_KERNEL(RegexFullMatchKernel, "", "RegexFullMatch", 20, kMaxVersion, {ElemType::kString});

}  // namespace onyx
