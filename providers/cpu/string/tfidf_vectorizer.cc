// TfIdfVectorizer (opset 9+): counts the n-grams of the pool (pool_int64s or
// pool_strings, grouped by length through ngram_counts) in each row of a [C]
// or [N, C] tensor, skipping up to max_skip_count items between the items of
// an n-gram, and writes TF (counts), IDF (weight where present) or TFIDF
// (count * weight) into the column ngram_indexes gives each pool n-gram.
//
// As onnxruntime and onnx's reference do, unigrams are counted once (skips do
// not apply to them). `weights` holds one weight per pool n-gram, as the spec
// and onnxruntime say (onnx's reference reads it by output column instead:
// the same where ngram_indexes is 0, 1, 2, ...).
#include <algorithm>
#include <cstdint>
#include <string>
#include <type_traits>
#include <unordered_map>
#include <vector>

#include "providers/cpu/common/dispatch.h"
#include "providers/kernel.h"

namespace onyx {

namespace {

enum class Mode { kTF, kIDF, kTFIDF };

class TfIdfVectorizerKernel final : public OpKernel {
 public:
  Status Init(const KernelInfo& info) {
    const std::string mode = info.AttrString("mode", "");
    if (mode == "TF") {
      mode_ = Mode::kTF;
    } else if (mode == "IDF") {
      mode_ = Mode::kIDF;
    } else {
      ONYX_CHECK_ARG(mode == "TFIDF", "TfIdfVectorizer: attribute mode must be TF, IDF or TFIDF, got '", mode, "'");
      mode_ = Mode::kTFIDF;
    }
    min_n_ = info.AttrInt("min_gram_length", 0);
    max_n_ = info.AttrInt("max_gram_length", 0);
    max_skip_ = info.AttrInt("max_skip_count", 0);
    ONYX_CHECK_ARG(min_n_ >= 1 && max_n_ >= min_n_, "TfIdfVectorizer: attributes min_gram_length (", min_n_,
                   ") and max_gram_length (", max_n_, ") must satisfy 1 <= min_gram_length <= max_gram_length");
    ONYX_CHECK_ARG(max_skip_ >= 0, "TfIdfVectorizer: attribute max_skip_count must be >= 0, got ", max_skip_);

    const Attribute* ints = info.Attr("pool_int64s");
    const Attribute* strs = info.Attr("pool_strings");
    ONYX_CHECK_ARG((ints != nullptr) != (strs != nullptr),
                   "TfIdfVectorizer: exactly one of the attributes pool_int64s and pool_strings must be given");
    string_pool_ = strs != nullptr;
    const int64_t pool_size = string_pool_ ? static_cast<int64_t>(strs->strings.size())
                                           : static_cast<int64_t>(ints->ints.size());
    const std::vector<int64_t> counts = info.AttrInts("ngram_counts");
    const std::vector<int64_t> indexes = info.AttrInts("ngram_indexes");
    ONYX_CHECK_ARG(!indexes.empty(), "TfIdfVectorizer: attribute ngram_indexes must not be empty");
    for (size_t i = 0; i < indexes.size(); ++i)
      ONYX_CHECK_ARG(indexes[i] >= 0, "TfIdfVectorizer: ngram_indexes[", i, "] is ", indexes[i], ", must be >= 0");
    output_size_ = *std::max_element(indexes.begin(), indexes.end()) + 1;
    if (const Attribute* w = info.Attr("weights")) weights_ = w->floats;

    // Pool items become dense token ids; the n-grams of the lengths asked for
    // become paths of a trie over those ids.
    nodes_.push_back(-1);
    int64_t ngram = 0;  // number of the pool n-gram, across lengths
    for (size_t level = 0; level < counts.size(); ++level) {
      const int64_t n = static_cast<int64_t>(level) + 1;
      const int64_t begin = counts[level];
      const int64_t end = level + 1 < counts.size() ? counts[level + 1] : pool_size;
      ONYX_CHECK_ARG(begin >= 0 && begin <= end && end <= pool_size, "TfIdfVectorizer: ngram_counts ",
                     ShapeToString(counts), " must be non-decreasing start offsets within the pool of ", pool_size,
                     " items");
      ONYX_CHECK_ARG((end - begin) % n == 0, "TfIdfVectorizer: the ", n, "-grams of the pool (items ", begin, " to ",
                     end, ") do not divide into groups of ", n);
      for (int64_t start = begin; start < end; start += n, ++ngram) {
        ONYX_CHECK_ARG(ngram < static_cast<int64_t>(indexes.size()), "TfIdfVectorizer: the pool holds more n-grams ",
                       "than ngram_indexes has entries (", indexes.size(), ")");
        if (n < min_n_ || n > max_n_) continue;
        int32_t node = 0;
        for (int64_t k = start; k < start + n; ++k) {
          const int32_t id = string_pool_ ? TokenId(strs->strings[static_cast<size_t>(k)], &string_ids_)
                                          : TokenId(ints->ints[static_cast<size_t>(k)], &int_ids_);
          node = Child(node, id);
        }
        nodes_[static_cast<size_t>(node)] = static_cast<int32_t>(ngram);
      }
    }
    num_ngrams_ = ngram;
    columns_.assign(indexes.begin(), indexes.begin() + std::min<int64_t>(ngram, indexes.size()));
    ONYX_CHECK_ARG(weights_.empty() || static_cast<int64_t>(weights_.size()) >= num_ngrams_,
                   "TfIdfVectorizer: attribute weights has ", weights_.size(), " values, but the pool holds ",
                   num_ngrams_, " n-grams (one weight each)");
    return Status::OK();
  }

  Status Compute(KernelContext& ctx) const override {
    const Tensor* X = nullptr;
    ONYX_RETURN_IF_ERROR(ctx.RequiredInput(0, &X));
    const Dims& d = X->dims();
    ONYX_CHECK_ARG(d.size() <= 2, "TfIdfVectorizer: input 0 (X) must have shape [C] or [N, C], got ",
                   ShapeToString(d));
    const bool is_string = X->type() == ElemType::kString;
    ONYX_CHECK_ARG(is_string == string_pool_, "TfIdfVectorizer: input 0 (X) is ", ElemTypeName(X->type()),
                   " but the pool is ", string_pool_ ? "pool_strings" : "pool_int64s");
    const int64_t rows = d.size() == 2 ? d[0] : 1;
    const int64_t cols = d.empty() ? 1 : d.back();
    Tensor* Y = ctx.Output(0, d.size() == 2 ? Dims{rows, output_size_} : Dims{output_size_}, ElemType::kFloat);
    if (Y == nullptr) return Status::OK();
    float* y = Y->data<float>();
    std::fill(y, y + Y->size(), 0.0f);
    if (Y->size() == 0) return Status::OK();
    using Types = TypeSet<int32_t, int64_t, std::string>;
    return DispatchOver(Types{}, X->type(), "TfIdfVectorizer", [&](auto tag) -> Status {
      using T = typename decltype(tag)::type;
      const T* x = X->data<T>();
      ThreadPool::For(ctx.threads(), rows, 16, [&](int64_t begin, int64_t end) {
        std::vector<int32_t> ids(static_cast<size_t>(cols));
        std::vector<int64_t> counts(static_cast<size_t>(num_ngrams_));
        for (int64_t r = begin; r < end; ++r) {
          for (int64_t c = 0; c < cols; ++c) ids[static_cast<size_t>(c)] = Lookup(x[r * cols + c]);
          CountRow(ids, &counts, y + r * output_size_);
        }
      });
      return Status::OK();
    });
  }

 private:
  template <typename K>
  static int32_t TokenId(const K& v, std::unordered_map<K, int32_t>* ids) {
    return ids->emplace(v, static_cast<int32_t>(ids->size())).first->second;
  }

  int32_t Lookup(const std::string& v) const {
    auto it = string_ids_.find(v);
    return it == string_ids_.end() ? -1 : it->second;
  }
  template <typename I, typename = std::enable_if_t<std::is_integral<I>::value>>
  int32_t Lookup(I v) const {
    auto it = int_ids_.find(static_cast<int64_t>(v));
    return it == int_ids_.end() ? -1 : it->second;
  }

  static uint64_t EdgeKey(int32_t node, int32_t id) {
    return (static_cast<uint64_t>(static_cast<uint32_t>(node)) << 32) | static_cast<uint32_t>(id);
  }
  int32_t Child(int32_t node, int32_t id) {
    auto it = edges_.emplace(EdgeKey(node, id), static_cast<int32_t>(nodes_.size()));
    if (it.second) nodes_.push_back(-1);
    return it.first->second;
  }
  int32_t Next(int32_t node, int32_t id) const {
    if (id < 0) return -1;
    auto it = edges_.find(EdgeKey(node, id));
    return it == edges_.end() ? -1 : it->second;
  }

  // Counts the pool n-grams of one row into `counts`, then adds their
  // weighted values into `out` (the row's zeroed output).
  void CountRow(const std::vector<int32_t>& ids, std::vector<int64_t>* counts, float* out) const {
    std::fill(counts->begin(), counts->end(), 0);
    const int64_t len = static_cast<int64_t>(ids.size());
    int64_t first_n = min_n_;
    for (int64_t skip = 1; skip <= max_skip_ + 1; ++skip) {
      for (int64_t start = 0; start + skip * (first_n - 1) < len; ++start) {
        int32_t node = 0;
        int64_t n = 1;
        for (int64_t pos = start; n <= max_n_ && pos < len; pos += skip, ++n) {
          node = Next(node, ids[static_cast<size_t>(pos)]);
          if (node < 0) break;
          const int32_t ngram = nodes_[static_cast<size_t>(node)];
          if (n >= first_n && ngram >= 0) ++(*counts)[static_cast<size_t>(ngram)];
        }
      }
      // Unigrams do not depend on the skip: count them in the first pass only.
      if (first_n == 1 && ++first_n > max_n_) break;
    }
    for (size_t i = 0; i < counts->size(); ++i) {
      const int64_t count = (*counts)[i];
      if (count == 0) continue;
      const float w = weights_.empty() || mode_ == Mode::kTF ? 1.0f : weights_[i];
      out[columns_[i]] += mode_ == Mode::kIDF ? w : static_cast<float>(count) * w;
    }
  }

  Mode mode_ = Mode::kTF;
  int64_t min_n_ = 1, max_n_ = 1, max_skip_ = 0;
  int64_t output_size_ = 0;
  bool string_pool_ = false;
  std::vector<float> weights_;
  int64_t num_ngrams_ = 0;         // pool n-grams, of every length
  std::vector<int64_t> columns_;   // output column of each pool n-gram
  std::unordered_map<int64_t, int32_t> int_ids_;
  std::unordered_map<std::string, int32_t> string_ids_;
  // Trie over token ids: node 0 is the root; nodes_[i] is the number of the
  // pool n-gram ending at node i, -1 where none ends there.
  std::vector<int32_t> nodes_;
  std::unordered_map<uint64_t, int32_t> edges_;
};

}  // namespace

ONYX_REGISTER_KERNEL(TfIdfVectorizerKernel, "", "TfIdfVectorizer", 9, kMaxVersion,
                     (TypeSet<int32_t, int64_t, std::string>::ElemTypes()));

}  // namespace onyx
