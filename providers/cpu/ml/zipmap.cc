// ai.onnx.ml ZipMap (opset 1): each row of a float [N, C] (or [C]) tensor
// becomes a map from the C class labels to that row's values, as classifiers
// converted by skl2onnx emit their probabilities.
#include <climits>
#include <cstring>

#include "providers/cpu/ml/ml_common.h"
#include "providers/kernel.h"

namespace onyx {
namespace {

class ZipMapKernel final : public OpKernel {
 public:
  Status Init(const KernelInfo& info) {
    node_ = info.node().Describe();
    std::vector<int64_t> ints;
    std::vector<std::string> strs;
    ONYX_RETURN_IF_ERROR(ml::ReadClassLabels(info, "classlabels_int64s", node_, &ints, &strs));
    if (!ints.empty()) {
      keys_ = std::make_shared<Tensor>(ElemType::kInt64, Dims{static_cast<int64_t>(ints.size())});
      std::memcpy(keys_->raw(), ints.data(), ints.size() * sizeof(int64_t));
    } else {
      keys_ = std::make_shared<Tensor>(ElemType::kString, Dims{static_cast<int64_t>(strs.size())});
      for (size_t i = 0; i < strs.size(); ++i) keys_->data<std::string>()[i] = strs[i];
    }
    return Status::OK();
  }

  Status Compute(KernelContext& ctx) const override {
    const Tensor* X = ctx.Input(0);
    if (X == nullptr) {
      const Value* v = ctx.InputValue(0);
      return MakeError(ErrorCode::kInvalidArgument, node_, ": input 0 ",
                       v ? "must be a tensor of float" : "is required but missing");
    }
    ONYX_CHECK_ARG(X->type() == ElemType::kFloat, node_, ": input 0 must be float, got ", ElemTypeName(X->type()));
    ONYX_CHECK_ARG(X->rank() == 1 || X->rank() == 2, node_, ": input 0 must have shape [N, C] or [C], got ",
                   ShapeToString(X->dims()));
    const int64_t rows = X->rank() == 2 ? X->dims()[0] : 1;
    const int64_t cols = X->dims().back();
    ONYX_CHECK_ARG(cols == keys_->size(), node_, ": input 0 has ", cols, " columns (shape ", ShapeToString(X->dims()),
                   ") but there are ", keys_->size(), " class labels");
    // One copy of the input that the rows' value tensors point into, so N
    // maps cost one allocation; the input itself may be a caller's buffer
    // that does not outlive the run.
    auto all = std::make_shared<Tensor>(ElemType::kFloat, Dims{rows * cols});
    if (X->bytes() > 0) std::memcpy(all->raw(), X->raw(), X->bytes());
    // One keys tensor per run serves every row's map; the kernel keeps its
    // own, so nothing a caller does with an output reaches later runs.
    auto keys = std::make_shared<Tensor>(keys_->Clone());
    std::vector<Value> maps;
    maps.reserve(static_cast<size_t>(rows));
    for (int64_t r = 0; r < rows; ++r) {
      float* row = all->data<float>() + r * cols;
      auto values = std::make_shared<Tensor>(ElemType::kFloat, Dims{cols}, std::shared_ptr<void>(all, row), row,
                                             all->location());
      maps.push_back(Value::Map(keys, std::move(values)));
    }
    return ctx.SetOutputValue(0, Value::Sequence(std::move(maps)));
  }

 private:
  std::string node_;
  std::shared_ptr<Tensor> keys_;
};

}  // namespace

ONYX_REGISTER_KERNEL(ZipMapKernel, "ai.onnx.ml", "ZipMap", 1, kMaxVersion, AnyType());

}  // namespace onyx
