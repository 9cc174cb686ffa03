// ai.onnx.ml lookups between keys and values:
//   LabelEncoder (1; 2 with keys_*/values_*; 4 adds keys_tensor/values_tensor/
//     default_tensor and int32/int16/double): unknown keys get the default.
//   CategoryMapper (1): string <-> int64 through cats_strings/cats_int64s.
//   DictVectorizer (1): one map -> [1, V] in vocabulary order, 0 for absent keys.
//   CastMap (1): map(int64, string|float) -> [1, N] tensor, keys in order.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "providers/cpu/common/dispatch.h"
#include "providers/kernel.h"

namespace onyx {
namespace {

using LabelTypeSet = TypeSet<std::string, int64_t, float, double, int32_t, int16_t>;

// One attribute column (keys or values) of any label type, before it is typed.
struct Column {
  ElemType type = ElemType::kUndefined;
  std::vector<std::string> s;
  std::vector<int64_t> i;
  std::vector<double> d;
  // Only the vector of `type` is filled (a default column fills all three).
  size_t size() const { return s.size() + i.size() + d.size(); }
  template <typename T>
  T At(size_t k) const {
    if constexpr (std::is_same<T, std::string>::value) return s[k];
    else if constexpr (std::is_integral<T>::value) return static_cast<T>(i[k]);
    else return static_cast<T>(d[k]);
  }
};

Status ColumnFromTensor(const Tensor& t, const std::string& what, Column* c) {
  c->type = t.type();
  const int64_t n = t.size();
  switch (t.type()) {
    case ElemType::kString: c->s.assign(t.data<std::string>(), t.data<std::string>() + n); break;
    case ElemType::kInt64: c->i.assign(t.data<int64_t>(), t.data<int64_t>() + n); break;
    case ElemType::kInt32: c->i.assign(t.data<int32_t>(), t.data<int32_t>() + n); break;
    case ElemType::kInt16: c->i.assign(t.data<int16_t>(), t.data<int16_t>() + n); break;
    case ElemType::kFloat: c->d.assign(t.data<float>(), t.data<float>() + n); break;
    case ElemType::kDouble: c->d.assign(t.data<double>(), t.data<double>() + n); break;
    default:
      return MakeError(ErrorCode::kInvalidGraph, what, " must be string, int64, int32, int16, float or double, got ",
                       ElemTypeName(t.type()));
  }
  return Status::OK();
}

// NaN keys match NaN, as onnxruntime's LabelEncoder matches them.
template <typename K>
struct KeyHash {
  size_t operator()(const K& k) const {
    if constexpr (std::is_floating_point<K>::value)
      if (std::isnan(k)) return 0x7ff8;
    return std::hash<K>()(k);
  }
};
template <typename K>
struct KeyEq {
  bool operator()(const K& a, const K& b) const {
    if constexpr (std::is_floating_point<K>::value)
      if (std::isnan(a) && std::isnan(b)) return true;
    return a == b;
  }
};

class Encoder {
 public:
  virtual ~Encoder() = default;
  virtual void Run(const Tensor& x, Tensor* y) const = 0;
};

template <typename K, typename V>
class TypedEncoder final : public Encoder {
 public:
  TypedEncoder(const Column& keys, const Column& values, const Column& def) {
    for (size_t k = 0; k < keys.size(); ++k) map_.emplace(keys.At<K>(k), values.At<V>(k));
    default_ = def.At<V>(0);
  }
  void Run(const Tensor& x, Tensor* y) const override {
    const K* in = x.data<K>();
    V* out = y->data<V>();
    for (int64_t i = 0; i < x.size(); ++i) {
      auto it = map_.find(in[i]);
      out[i] = it == map_.end() ? default_ : it->second;
    }
  }

 private:
  std::unordered_map<K, V, KeyHash<K>, KeyEq<K>> map_;
  V default_{};
};

// Builds the encoder for keys of type keys.type and values of type values.type.
Status MakeEncoder(const Column& keys, const Column& values, const Column& def, const std::string& node,
                   std::unique_ptr<Encoder>* out) {
  return DispatchOver(LabelTypeSet{}, keys.type, node.c_str(), [&](auto ktag) -> Status {
    return DispatchOver(LabelTypeSet{}, values.type, node.c_str(), [&](auto vtag) -> Status {
      using K = typename decltype(ktag)::type;
      using V = typename decltype(vtag)::type;
      *out = std::make_unique<TypedEncoder<K, V>>(keys, values, def);
      return Status::OK();
    });
  });
}

class LabelEncoderKernel final : public OpKernel {
 public:
  Status Init(const KernelInfo& info) {
    node_ = info.node().Describe();
    Column keys, values, def;
    const std::string default_string = info.AttrString("default_string", "_Unused");
    const int64_t default_int = info.AttrInt("default_int64", -1);
    if (info.opset() < 2) {
      // classes_strings: string -> its index, int64 -> the string at it; the
      // direction follows the input.
      const Attribute* a = info.Attr("classes_strings");
      classes_ = a ? a->strings : std::vector<std::string>{};
      default_string_ = default_string;
      default_int_ = default_int;
      legacy_ = true;
      return Status::OK();
    }
    auto read = [&](const char* prefix, Column* c) -> Status {
      const std::string p = prefix;
      int given = 0;
      if (const Attribute* a = info.Attr(p + "_strings"); a && !a->strings.empty()) {
        c->type = ElemType::kString;
        c->s = a->strings;
        ++given;
      }
      if (const Attribute* a = info.Attr(p + "_int64s"); a && !a->ints.empty()) {
        c->type = ElemType::kInt64;
        c->i = a->ints;
        ++given;
      }
      if (const Attribute* a = info.Attr(p + "_floats"); a && !a->floats.empty()) {
        c->type = ElemType::kFloat;
        c->d.assign(a->floats.begin(), a->floats.end());
        ++given;
      }
      if (const Attribute* a = info.Attr(p + "_tensor"); a && a->t) {
        ONYX_RETURN_IF_ERROR(ColumnFromTensor(*a->t, StrCat(node_, ": attribute ", p, "_tensor"), c));
        ++given;
      }
      ONYX_CHECK(given == 1, ErrorCode::kInvalidGraph, node_, ": exactly one of the attributes ", p, "_strings, ", p,
                 "_int64s, ", p, "_floats", info.opset() >= 4 ? StrCat(", ", p, "_tensor") : std::string(),
                 " must be given, got ", given);
      return Status::OK();
    };
    ONYX_RETURN_IF_ERROR(read("keys", &keys));
    ONYX_RETURN_IF_ERROR(read("values", &values));
    ONYX_CHECK(keys.size() == values.size(), ErrorCode::kInvalidGraph, node_, ": ", keys.size(), " keys but ",
               values.size(), " values");
    // The default: default_tensor, else the default_* attribute of the values' type.
    const Attribute* dt = info.Attr("default_tensor");
    if (dt != nullptr && dt->t != nullptr) {
      ONYX_RETURN_IF_ERROR(ColumnFromTensor(*dt->t, StrCat(node_, ": attribute default_tensor"), &def));
      ONYX_CHECK(def.type == values.type && def.size() == 1, ErrorCode::kInvalidGraph, node_,
                 ": attribute default_tensor must hold one ", ElemTypeName(values.type), " value, got ", def.size(),
                 " of ", ElemTypeName(def.type));
    } else {
      def.type = values.type;
      def.s = {default_string};
      def.i = {default_int};
      def.d = {static_cast<double>(info.AttrFloat("default_float", -0.f))};
    }
    key_type_ = keys.type;
    value_type_ = values.type;
    return MakeEncoder(keys, values, def, node_, &encoder_);
  }

  Status Compute(KernelContext& ctx) const override {
    const Tensor* X = nullptr;
    ONYX_RETURN_IF_ERROR(ctx.RequiredInput(0, &X));
    if (legacy_) return ComputeLegacy(*X, ctx);
    ONYX_CHECK_ARG(X->type() == key_type_, node_, ": input 0 is ", ElemTypeName(X->type()), " but the keys are ",
                   ElemTypeName(key_type_));
    Tensor* Y = ctx.Output(0, X->dims(), value_type_);
    if (Y != nullptr) encoder_->Run(*X, Y);
    return Status::OK();
  }

 private:
  Status ComputeLegacy(const Tensor& X, KernelContext& ctx) const {
    if (X.type() == ElemType::kString) {
      std::unordered_map<std::string, int64_t> index;
      for (size_t i = 0; i < classes_.size(); ++i) index.emplace(classes_[i], static_cast<int64_t>(i));
      Tensor* Y = ctx.Output(0, X.dims(), ElemType::kInt64);
      if (Y == nullptr) return Status::OK();
      for (int64_t i = 0; i < X.size(); ++i) {
        auto it = index.find(X.data<std::string>()[i]);
        Y->data<int64_t>()[i] = it == index.end() ? default_int_ : it->second;
      }
      return Status::OK();
    }
    ONYX_CHECK_ARG(X.type() == ElemType::kInt64, node_, ": input 0 must be string or int64, got ",
                   ElemTypeName(X.type()));
    Tensor* Y = ctx.Output(0, X.dims(), ElemType::kString);
    if (Y == nullptr) return Status::OK();
    const int64_t n = static_cast<int64_t>(classes_.size());
    for (int64_t i = 0; i < X.size(); ++i) {
      const int64_t k = X.data<int64_t>()[i];
      Y->data<std::string>()[i] = k >= 0 && k < n ? classes_[k] : default_string_;
    }
    return Status::OK();
  }

  std::string node_;
  bool legacy_ = false;
  std::vector<std::string> classes_;
  std::string default_string_;
  int64_t default_int_ = -1;
  ElemType key_type_ = ElemType::kUndefined, value_type_ = ElemType::kUndefined;
  std::unique_ptr<Encoder> encoder_;
};

class CategoryMapperKernel final : public OpKernel {
 public:
  Status Init(const KernelInfo& info) {
    node_ = info.node().Describe();
    const Attribute* ints = info.Attr("cats_int64s");
    const Attribute* strs = info.Attr("cats_strings");
    const std::vector<int64_t> i = ints ? ints->ints : std::vector<int64_t>{};
    const std::vector<std::string> s = strs ? strs->strings : std::vector<std::string>{};
    ONYX_CHECK(i.size() == s.size(), ErrorCode::kInvalidGraph, node_, ": attributes cats_int64s (", i.size(),
               ") and cats_strings (", s.size(), ") must have the same length");
    for (size_t k = 0; k < i.size(); ++k) {
      to_int_.emplace(s[k], i[k]);
      to_string_.emplace(i[k], s[k]);
    }
    default_int_ = info.AttrInt("default_int64", -1);
    default_string_ = info.AttrString("default_string", "_Unused");
    return Status::OK();
  }

  Status Compute(KernelContext& ctx) const override {
    const Tensor* X = nullptr;
    ONYX_RETURN_IF_ERROR(ctx.RequiredInput(0, &X));
    if (X->type() == ElemType::kString) {
      Tensor* Y = ctx.Output(0, X->dims(), ElemType::kInt64);
      if (Y == nullptr) return Status::OK();
      for (int64_t k = 0; k < X->size(); ++k) {
        auto it = to_int_.find(X->data<std::string>()[k]);
        Y->data<int64_t>()[k] = it == to_int_.end() ? default_int_ : it->second;
      }
      return Status::OK();
    }
    ONYX_CHECK_ARG(X->type() == ElemType::kInt64, node_, ": input 0 must be string or int64, got ",
                   ElemTypeName(X->type()));
    Tensor* Y = ctx.Output(0, X->dims(), ElemType::kString);
    if (Y == nullptr) return Status::OK();
    for (int64_t k = 0; k < X->size(); ++k) {
      auto it = to_string_.find(X->data<int64_t>()[k]);
      Y->data<std::string>()[k] = it == to_string_.end() ? default_string_ : it->second;
    }
    return Status::OK();
  }

 private:
  std::string node_;
  std::unordered_map<std::string, int64_t> to_int_;
  std::unordered_map<int64_t, std::string> to_string_;
  int64_t default_int_ = -1;
  std::string default_string_;
};

// The keys and values tensors of map input 0, or an error naming the input.
Status MapInput(const KernelContext& ctx, const std::string& node, const Tensor** keys, const Tensor** values) {
  const Value* v = ctx.InputValue(0);
  ONYX_CHECK_ARG(v != nullptr && v->kind() == Value::Kind::kMap && v->items().size() == 2, node,
                 ": input 0 must be a map");
  *keys = &v->items()[0].tensor();
  *values = &v->items()[1].tensor();
  ONYX_CHECK_ARG((*keys)->size() == (*values)->size(), node, ": input 0 map has ", (*keys)->size(), " keys but ",
                 (*values)->size(), " values");
  return Status::OK();
}

class DictVectorizerKernel final : public OpKernel {
 public:
  Status Init(const KernelInfo& info) {
    node_ = info.node().Describe();
    const Attribute* ints = info.Attr("int64_vocabulary");
    const Attribute* strs = info.Attr("string_vocabulary");
    const bool has_ints = ints != nullptr && !ints->ints.empty();
    const bool has_strs = strs != nullptr && !strs->strings.empty();
    ONYX_CHECK(has_ints != has_strs, ErrorCode::kInvalidGraph, node_,
               ": exactly one of the attributes int64_vocabulary and string_vocabulary must be given");
    if (has_ints)
      for (size_t k = 0; k < ints->ints.size(); ++k) int_vocab_.emplace(ints->ints[k], static_cast<int64_t>(k));
    else
      for (size_t k = 0; k < strs->strings.size(); ++k) str_vocab_.emplace(strs->strings[k], static_cast<int64_t>(k));
    size_ = has_ints ? static_cast<int64_t>(ints->ints.size()) : static_cast<int64_t>(strs->strings.size());
    return Status::OK();
  }

  Status Compute(KernelContext& ctx) const override {
    const Tensor* keys = nullptr;
    const Tensor* values = nullptr;
    ONYX_RETURN_IF_ERROR(MapInput(ctx, node_, &keys, &values));
    const bool want_strings = !str_vocab_.empty();
    ONYX_CHECK_ARG(keys->type() == (want_strings ? ElemType::kString : ElemType::kInt64), node_,
                   ": input 0 is a map with ", ElemTypeName(keys->type()), " keys but the vocabulary holds ",
                   want_strings ? "strings (string_vocabulary)" : "int64s (int64_vocabulary)");
    std::vector<int64_t> col(static_cast<size_t>(keys->size()), -1);
    for (int64_t k = 0; k < keys->size(); ++k) {
      if (want_strings) {
        auto it = str_vocab_.find(keys->data<std::string>()[k]);
        if (it != str_vocab_.end()) col[k] = it->second;
      } else {
        auto it = int_vocab_.find(keys->data<int64_t>()[k]);
        if (it != int_vocab_.end()) col[k] = it->second;
      }
    }
    return DispatchOver(TypeSet<float, double, int64_t, std::string>{}, values->type(), node_.c_str(),
                        [&](auto tag) -> Status {
                          using V = typename decltype(tag)::type;
                          Tensor* Y = ctx.Output(0, {1, size_}, values->type());
                          if (Y == nullptr) return Status::OK();
                          V* y = Y->data<V>();
                          std::fill(y, y + size_, V{});
                          for (int64_t k = 0; k < keys->size(); ++k)
                            if (col[k] >= 0) y[col[k]] = values->data<V>()[k];
                          return Status::OK();
                        });
  }

 private:
  std::string node_;
  std::unordered_map<int64_t, int64_t> int_vocab_;
  std::unordered_map<std::string, int64_t> str_vocab_;
  int64_t size_ = 0;
};

class CastMapKernel final : public OpKernel {
 public:
  Status Init(const KernelInfo& info) {
    node_ = info.node().Describe();
    const std::string to = info.AttrString("cast_to", "TO_FLOAT");
    if (to == "TO_FLOAT") to_ = ElemType::kFloat;
    else if (to == "TO_STRING") to_ = ElemType::kString;
    else if (to == "TO_INT64") to_ = ElemType::kInt64;
    else return MakeError(ErrorCode::kInvalidGraph, node_, ": attribute cast_to '", to,
                          "' is not one of TO_FLOAT, TO_STRING, TO_INT64");
    const std::string form = info.AttrString("map_form", "DENSE");
    ONYX_CHECK(form == "DENSE" || form == "SPARSE", ErrorCode::kInvalidGraph, node_, ": attribute map_form '", form,
               "' is not one of DENSE, SPARSE");
    sparse_ = form == "SPARSE";
    max_map_ = info.AttrInt("max_map", 1);
    ONYX_CHECK(!sparse_ || max_map_ > 0, ErrorCode::kInvalidGraph, node_, ": attribute max_map must be positive, got ",
               max_map_);
    return Status::OK();
  }

  Status Compute(KernelContext& ctx) const override {
    const Tensor* keys = nullptr;
    const Tensor* values = nullptr;
    ONYX_RETURN_IF_ERROR(MapInput(ctx, node_, &keys, &values));
    ONYX_CHECK_ARG(keys->type() == ElemType::kInt64, node_, ": input 0 must be a map with int64 keys, got ",
                   ElemTypeName(keys->type()), " keys");
    ONYX_CHECK_ARG(values->type() == ElemType::kFloat || values->type() == ElemType::kString, node_,
                   ": input 0 must be a map with float or string values, got ", ElemTypeName(values->type()));
    // Keys in ascending order, as the map type orders them.
    std::map<int64_t, int64_t> order;
    for (int64_t k = 0; k < keys->size(); ++k) order[keys->data<int64_t>()[k]] = k;
    const int64_t n = sparse_ ? max_map_ : static_cast<int64_t>(order.size());
    Tensor* Y = ctx.Output(0, {1, n}, to_);
    if (Y == nullptr) return Status::OK();
    for (int64_t j = 0; j < n; ++j) WriteDefault(Y, j);
    int64_t j = 0;
    for (const auto& kv : order) {
      const int64_t slot = sparse_ ? kv.first : j++;
      if (slot < 0 || slot >= n) continue;
      ONYX_RETURN_IF_ERROR(Convert(*values, kv.second, Y, slot));
    }
    return Status::OK();
  }

 private:
  void WriteDefault(Tensor* y, int64_t j) const {
    if (to_ == ElemType::kFloat) y->data<float>()[j] = 0.f;
    else if (to_ == ElemType::kInt64) y->data<int64_t>()[j] = 0;
    else y->data<std::string>()[j] = "0";
  }

  Status Convert(const Tensor& values, int64_t k, Tensor* y, int64_t j) const {
    if (values.type() == ElemType::kFloat) {
      const float v = values.data<float>()[k];
      if (to_ == ElemType::kFloat) y->data<float>()[j] = v;
      else if (to_ == ElemType::kInt64) y->data<int64_t>()[j] = static_cast<int64_t>(v);
      else y->data<std::string>()[j] = std::to_string(v);
      return Status::OK();
    }
    const std::string& s = values.data<std::string>()[k];
    if (to_ == ElemType::kString) {
      y->data<std::string>()[j] = s;
      return Status::OK();
    }
    char* end = nullptr;
    if (to_ == ElemType::kFloat) {
      const float v = std::strtof(s.c_str(), &end);
      ONYX_CHECK_ARG(end != s.c_str(), node_, ": input 0 value '", s, "' (map entry ", k, ") is not a number");
      y->data<float>()[j] = v;
    } else {
      const long long v = std::strtoll(s.c_str(), &end, 10);
      ONYX_CHECK_ARG(end != s.c_str(), node_, ": input 0 value '", s, "' (map entry ", k, ") is not an integer");
      y->data<int64_t>()[j] = static_cast<int64_t>(v);
    }
    return Status::OK();
  }

  std::string node_;
  ElemType to_ = ElemType::kFloat;
  bool sparse_ = false;
  int64_t max_map_ = 1;
};

}  // namespace

ONYX_REGISTER_KERNEL(LabelEncoderKernel, "ai.onnx.ml", "LabelEncoder", 1, kMaxVersion, LabelTypeSet::ElemTypes());
ONYX_REGISTER_KERNEL(CategoryMapperKernel, "ai.onnx.ml", "CategoryMapper", 1, kMaxVersion,
                     TypeSet<std::string, int64_t>::ElemTypes());
ONYX_REGISTER_KERNEL(DictVectorizerKernel, "ai.onnx.ml", "DictVectorizer", 1, kMaxVersion, AnyType());
ONYX_REGISTER_KERNEL(CastMapKernel, "ai.onnx.ml", "CastMap", 1, kMaxVersion, AnyType());

}  // namespace onyx
