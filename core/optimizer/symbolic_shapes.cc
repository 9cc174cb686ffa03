#include "core/optimizer/symbolic_shapes.h"

#include <algorithm>
#include <unordered_set>

#include "core/optimizer/transformer_util.h"

namespace onyx {
namespace optimizer {
namespace {

// Shape vectors longer than this are not tracked.
constexpr size_t kMaxData = 8;

bool IsSameShapeOp(const Node& n) {
  static const std::unordered_set<std::string> kOnnx = {
      "Identity", "Cast", "CastLike", "Relu", "LeakyRelu", "Sigmoid", "Tanh", "Erf", "Sqrt", "Reciprocal", "Neg",
      "Exp", "Log", "Abs", "Softmax", "LogSoftmax", "Dropout", "LayerNormalization", "SimplifiedLayerNormalization",
      "Gelu", "Clip", "HardSigmoid", "Elu", "Selu", "Softplus", "Softsign", "Not", "IsNaN", "Floor", "Ceil", "Round",
      "QuantizeLinear", "DequantizeLinear", "DynamicQuantizeLinear"};
  static const std::unordered_set<std::string> kMs = {"Gelu", "FastGelu", "BiasGelu", "QuickGelu",
                                                      "SkipLayerNormalization", "SkipSimplifiedLayerNormalization",
                                                      "BiasAdd", "RotaryEmbedding", "GroupNorm"};
  return n.domain.empty() ? kOnnx.count(n.op_type) != 0 : n.domain == kMsDomain && kMs.count(n.op_type) != 0;
}

// Shaped as MatMul of inputs 0 and 1 (the integer forms that quantize_dynamic
// writes and the optimizer fuses them into).
bool IsMatMulShapeOp(const Node& n) {
  if (n.domain.empty()) return n.op_type == "MatMul" || n.op_type == "MatMulInteger";
  return n.domain == kMsDomain && (n.op_type == "MatMulIntegerToFloat" || n.op_type == "DynamicQuantizeMatMul");
}

bool IsBroadcastOp(const Node& n) {
  static const std::unordered_set<std::string> kOps = {
      "Add", "Sub", "Mul", "Div", "Pow", "Equal", "Less", "Greater", "LessOrEqual", "GreaterOrEqual", "And", "Or",
      "Xor", "Where", "Max", "Min", "Sum", "Mean", "PRelu", "Mod", "BitShift"};
  return n.domain.empty() && kOps.count(n.op_type) != 0;
}

// Constant int64 contents of an initializer (at most kMaxData elements).
bool ConstInts(const Graph& graph, const std::string& name, std::vector<int64_t>* out) {
  const Tensor* t = name.empty() ? nullptr : ConstantInitializer(graph, name);
  if (t == nullptr || t->type() != ElemType::kInt64 || t->size() > static_cast<int64_t>(kMaxData)) return false;
  out->assign(t->data<int64_t>(), t->data<int64_t>() + t->size());
  return true;
}

// Axes of Unsqueeze/Squeeze: attribute before opset 13, constant input from 13.
bool AxesOf(const Graph& graph, const Node& n, std::vector<int64_t>* axes) {
  if (n.since_version < 13) {
    *axes = n.AttrInts("axes");
    return true;
  }
  return n.inputs.size() > 1 && ConstInts(graph, n.inputs[1], axes);
}

}  // namespace

SymbolicShapes::SymbolicShapes(const Graph& graph) : graph_(graph) {
  for (const auto& in : graph.inputs) {
    std::vector<Sym> d;
    bool known = false;
    FromType(in.name, &d, &known);
    if (known) dims_[in.name] = std::move(d);
  }
  for (const auto& kv : graph.initializers) {
    const Tensor* t = ConstantInitializer(graph, kv.first);
    if (t == nullptr) continue;
    dims_[kv.first] = std::vector<Sym>(t->dims().begin(), t->dims().end());
    std::vector<int64_t> v;
    if (t->rank() <= 1 && ConstInts(graph, kv.first, &v)) data_[kv.first] = v;
  }
  for (const Node& n : graph.nodes) Visit(n);
}

SymbolicShapes::Sym SymbolicShapes::Named(const std::string& symbol) {
  auto it = named_.find(symbol);
  if (it != named_.end()) return it->second;
  return named_[symbol] = Fresh();
}

void SymbolicShapes::FromType(const std::string& value, std::vector<Sym>* dims, bool* known) {
  TypeInfo t;
  *known = TensorType(graph_, value, &t) && t.has_shape;
  dims->clear();
  if (!*known) return;
  for (const Dim& d : t.dims) dims->push_back(d.known() ? d.value : !d.symbol.empty() ? Named(d.symbol) : Fresh());
}

bool SymbolicShapes::Dims(const std::string& value, std::vector<Sym>* out) const {
  auto it = dims_.find(value);
  if (it == dims_.end()) return false;
  *out = it->second;
  return true;
}

bool SymbolicShapes::SameShape(const std::string& a, const std::string& b) const {
  std::vector<Sym> da, db;
  return Dims(a, &da) && Dims(b, &db) && da == db;
}

const std::vector<SymbolicShapes::Sym>* SymbolicShapes::Data(const std::string& value) const {
  auto it = data_.find(value);
  return it == data_.end() ? nullptr : &it->second;
}

// Numpy broadcasting of the inputs' dims. A position where a known size
// other than 1 appears has that size (any other operand is 1 or equal to it
// in a run that succeeds); where only one symbol appears besides 1s, that
// symbol; otherwise a fresh symbol.
bool SymbolicShapes::Broadcast(const std::vector<const std::vector<Sym>*>& in, std::vector<Sym>* out) {
  size_t rank = 0;
  for (const auto* d : in) {
    if (d == nullptr) return false;
    rank = std::max(rank, d->size());
  }
  out->assign(rank, 1);
  for (size_t back = 0; back < rank; ++back) {
    Sym known = -1, sym = 0;
    bool several = false;
    for (const auto* d : in) {
      if (back >= d->size()) continue;
      const Sym v = (*d)[d->size() - 1 - back];
      if (v < 0 && !IsSym(v)) return false;
      if (v == 1) continue;
      if (v >= 0) {
        known = v;
      } else if (sym == 0) {
        sym = v;
      } else if (sym != v) {
        several = true;
      }
    }
    Sym& o = (*out)[rank - 1 - back];
    o = known >= 0 ? known : sym == 0 ? 1 : several ? Fresh() : sym;
  }
  return true;
}

void SymbolicShapes::Visit(const Node& n) {
  auto dims = [&](size_t k) -> const std::vector<Sym>* {
    if (k >= n.inputs.size() || n.inputs[k].empty()) return nullptr;
    auto it = dims_.find(n.inputs[k]);
    return it == dims_.end() ? nullptr : &it->second;
  };
  auto data = [&](size_t k) -> const std::vector<Sym>* {
    return k < n.inputs.size() && !n.inputs[k].empty() ? Data(n.inputs[k]) : nullptr;
  };
  const std::string& op = n.op_type;
  const bool onnx = n.domain.empty();
  std::vector<Sym> rule;
  bool have = false;

  if (IsSameShapeOp(n) && dims(0)) {
    rule = *dims(0);
    have = true;
  } else if (IsBroadcastOp(n)) {
    std::vector<const std::vector<Sym>*> in;
    for (size_t k = 0; k < n.inputs.size(); ++k) in.push_back(dims(k));
    have = Broadcast(in, &rule);
  } else if (IsMatMulShapeOp(n) && dims(0) && dims(1) && dims(0)->size() >= 2 && dims(1)->size() >= 2) {
    const auto& a = *dims(0);
    const auto& b = *dims(1);
    std::vector<Sym> ba(a.begin(), a.end() - 2), bb(b.begin(), b.end() - 2);
    have = Broadcast({&ba, &bb}, &rule);
    rule.push_back(a[a.size() - 2]);
    rule.push_back(b.back());
  } else if (onnx && op == "Transpose" && dims(0)) {
    const auto& a = *dims(0);
    std::vector<int64_t> perm = n.AttrInts("perm");
    if (!n.Attr("perm"))
      for (size_t k = a.size(); k-- > 0;) perm.push_back(static_cast<int64_t>(k));
    have = perm.size() == a.size();
    for (size_t k = 0; have && k < perm.size(); ++k) {
      have = perm[k] >= 0 && perm[k] < static_cast<int64_t>(a.size());
      if (have) rule.push_back(a[perm[k]]);
    }
  } else if (onnx && op == "Reshape" && data(1)) {
    const bool allow_zero = n.since_version >= 14 && n.AttrInt("allowzero", 0) != 0;
    const auto* in = dims(0);
    have = true;
    for (size_t k = 0; have && k < data(1)->size(); ++k) {
      const Sym v = (*data(1))[k];
      if (v == 0 && !allow_zero) {
        have = in != nullptr && k < in->size();
        if (have) rule.push_back((*in)[k]);
      } else {
        have = v >= 0 || v == -1 || IsSym(v);
        rule.push_back(v == -1 ? Fresh() : v);
      }
    }
    have = have && std::count(data(1)->begin(), data(1)->end(), -1) <= 1;
  } else if (onnx && op == "Expand" && data(1)) {
    have = Broadcast({dims(0), data(1)}, &rule);
  } else if (onnx && op == "Gather" && dims(0) && dims(1)) {
    const auto& t = *dims(0);
    int64_t axis = n.AttrInt("axis", 0);
    if (axis < 0) axis += static_cast<int64_t>(t.size());
    if (axis >= 0 && axis < static_cast<int64_t>(t.size())) {
      rule.assign(t.begin(), t.begin() + axis);
      rule.insert(rule.end(), dims(1)->begin(), dims(1)->end());
      rule.insert(rule.end(), t.begin() + axis + 1, t.end());
      have = true;
    }
  } else if (onnx && op == "Unsqueeze" && dims(0)) {
    std::vector<int64_t> axes;
    if (AxesOf(graph_, n, &axes)) {
      const int64_t r = static_cast<int64_t>(dims(0)->size() + axes.size());
      std::vector<bool> one(r, false);
      have = true;
      for (int64_t a : axes) {
        a = a < 0 ? a + r : a;
        have = have && a >= 0 && a < r && !one[a];
        if (have) one[a] = true;
      }
      for (int64_t k = 0, j = 0; have && k < r; ++k) rule.push_back(one[k] ? 1 : (*dims(0))[j++]);
    }
  } else if (onnx && op == "Concat" && dims(0)) {
    rule = *dims(0);
    int64_t axis = n.AttrInt("axis", 0);
    if (axis < 0) axis += static_cast<int64_t>(rule.size());
    have = axis >= 0 && axis < static_cast<int64_t>(rule.size());
    Sym total = 0;
    for (size_t k = 0; have && k < n.inputs.size(); ++k) {
      have = dims(k) != nullptr && dims(k)->size() == rule.size();
      if (have && total >= 0) total = (*dims(k))[axis] >= 0 ? total + (*dims(k))[axis] : -1;
    }
    if (have) rule[axis] = total >= 0 ? total : Fresh();
  } else if (onnx && op == "Shape" && dims(0) && !n.Attr("start") && !n.Attr("end")) {
    rule = {static_cast<Sym>(dims(0)->size())};
    have = true;
  } else if (n.domain == kMsDomain && (op == "Attention" || op == "MultiHeadAttention") && dims(0) &&
             dims(0)->size() == 3) {
    // [batch, sequence, v hidden]: the last from the type.
    rule = *dims(0);
    rule.back() = Fresh();
    have = true;
  }

  for (size_t k = 0; k < n.outputs.size(); ++k) {
    const std::string& out = n.outputs[k];
    if (out.empty()) continue;
    std::vector<Sym> typed;
    bool known = false;
    FromType(out, &typed, &known);
    // SkipLayerNormalization's output 3 is its input sum, shaped like output 0.
    const bool ruled = have && (k == 0 || (n.domain == kMsDomain && k == 3 && IsSameShapeOp(n)));
    if (ruled && (!known || typed.size() == rule.size())) {
      for (size_t d = 0; known && d < rule.size(); ++d)
        if (rule[d] < 0 && typed[d] >= 0) rule[d] = typed[d];
      dims_[out] = rule;
    } else if (known) {
      dims_[out] = typed;
    }
  }

  // Contents of shape vectors.
  if (n.outputs.empty() || n.outputs[0].empty()) return;
  std::vector<Sym> v;
  bool ok = false;
  if (onnx && op == "Shape" && dims(0) && !n.Attr("start") && !n.Attr("end")) {
    v = *dims(0);
    ok = v.size() <= kMaxData;
  } else if (onnx && (op == "Identity" || op == "Unsqueeze" || op == "Squeeze" ||
                      (op == "Cast" && n.AttrInt("to", 0) == static_cast<int64_t>(ElemType::kInt64))) && data(0)) {
    v = *data(0);
    ok = true;
  } else if (onnx && op == "Gather" && n.AttrInt("axis", 0) == 0 && data(0)) {
    std::vector<int64_t> picks;
    ok = ConstInts(graph_, n.inputs[1], &picks);
    const int64_t size = static_cast<int64_t>(data(0)->size());
    for (int64_t p : picks) {
      p = p < 0 ? p + size : p;
      ok = ok && p >= 0 && p < size;
      if (ok) v.push_back((*data(0))[p]);
    }
  } else if (onnx && op == "Concat" && n.AttrInt("axis", 0) == 0) {
    ok = true;
    for (size_t k = 0; ok && k < n.inputs.size(); ++k) {
      ok = data(k) != nullptr;
      if (ok) v.insert(v.end(), data(k)->begin(), data(k)->end());
    }
    ok = ok && v.size() <= kMaxData;
  } else if (onnx && op == "ConstantOfShape" && data(0)) {
    const Attribute* value = n.Attr("value");
    const Tensor* t = value != nullptr ? value->t.get() : nullptr;
    int64_t count = 1;
    ok = t != nullptr && t->type() == ElemType::kInt64 && t->size() == 1;
    for (Sym d : *data(0)) {
      ok = ok && d >= 0;
      if (ok) count *= d;
      ok = ok && count <= static_cast<int64_t>(kMaxData);
    }
    if (ok) v.assign(count, t->data<int64_t>()[0]);
  } else if (onnx && (op == "Mul" || op == "Equal") && data(0) && data(1)) {
    const auto& a = *data(0);
    const auto& b = *data(1);
    const size_t len = std::max(a.size(), b.size());
    ok = (a.size() == len || a.size() == 1) && (b.size() == len || b.size() == 1);
    for (size_t k = 0; ok && k < len; ++k) {
      const Sym x = a[a.size() == 1 ? 0 : k], y = b[b.size() == 1 ? 0 : k];
      if (op == "Mul") {
        // Known products, and symbol * 1.
        ok = (!IsSym(x) && !IsSym(y)) || (IsSym(x) && y == 1) || (IsSym(y) && x == 1);
        if (ok) v.push_back(IsSym(x) ? x : IsSym(y) ? y : x * y);
      } else if (x == y) {
        v.push_back(1);
      } else {
        // Distinct constants differ; a symbol (a size) never equals a negative constant.
        ok = (!IsSym(x) && !IsSym(y)) || (IsSym(x) && !IsSym(y) && y < 0) || (IsSym(y) && !IsSym(x) && x < 0);
        if (ok) v.push_back(0);
      }
    }
  } else if (onnx && op == "Where" && data(0) && data(1) && data(2)) {
    const auto& c = *data(0);
    const auto& a = *data(1);
    const auto& b = *data(2);
    const size_t len = std::max({c.size(), a.size(), b.size()});
    ok = (c.size() == len || c.size() == 1) && (a.size() == len || a.size() == 1) && (b.size() == len || b.size() == 1);
    for (size_t k = 0; ok && k < len; ++k) {
      const Sym cond = c[c.size() == 1 ? 0 : k];
      ok = cond == 0 || cond == 1;
      if (ok) v.push_back(cond ? a[a.size() == 1 ? 0 : k] : b[b.size() == 1 ? 0 : k]);
    }
  }
  if (ok) data_[n.outputs[0]] = std::move(v);
}

}  // namespace optimizer
}  // namespace onyx
