// Driver of load-time type/shape inference: walks the topologically sorted
// nodes, runs the rule of each op (shape_rules_*.cc), merges the result into
// the declared types and recurses into control-flow subgraphs.
#include "core/graph/shape_inference.h"

#include <limits>

#include "core/graph/onnx_schema.h"

namespace onyx {

std::string DimsString(const std::vector<Dim>& dims) {
  std::string s = "[";
  for (size_t i = 0; i < dims.size(); ++i) {
    if (i) s += ",";
    s += shape_inference::DimString(dims[i]);
  }
  return s + "]";
}

std::string ShapeString(const TypeInfo& t) {
  if (t.kind != TypeInfo::Kind::kTensor && t.kind != TypeInfo::Kind::kSparseTensor) return "?";
  if (!t.has_shape) return "?";
  return DimsString(t.dims);
}

namespace shape_inference {

std::string DimString(const Dim& d) {
  if (d.known()) return std::to_string(d.value);
  return d.symbol.empty() ? "?" : d.symbol;
}

bool BroadcastDim(const Dim& a, const Dim& b, Dim* out) {
  if (a.known() && b.known()) {
    if (a.value == b.value || b.value == 1) { *out = a; return true; }
    if (a.value == 1) { *out = b; return true; }
    return false;
  }
  if (a.known()) {  // b symbolic or unknown: it is either 1 or equal to a (unless a is 1)
    *out = a.value == 1 ? b : a;
    return true;
  }
  if (b.known()) {
    *out = b.value == 1 ? a : b;
    return true;
  }
  if (!a.symbol.empty() && a.symbol == b.symbol) { *out = a; return true; }
  *out = Dim{};
  return true;
}

bool BroadcastShapes(const std::vector<Dim>& a, const std::vector<Dim>& b, std::vector<Dim>* out) {
  size_t r = std::max(a.size(), b.size());
  std::vector<Dim> res(r);
  for (size_t i = 0; i < r; ++i) {
    const Dim one = Dim::Of(1);
    const Dim& da = i < r - a.size() ? one : a[i - (r - a.size())];
    const Dim& db = i < r - b.size() ? one : b[i - (r - b.size())];
    if (!BroadcastDim(da, db, &res[i])) return false;
  }
  *out = std::move(res);
  return true;
}

bool UnifyDim(const Dim& a, const Dim& b, Dim* out) {
  if (a.known() && b.known() && a.value != b.value) return false;
  if (a.known()) *out = a;
  else if (b.known()) *out = b;
  else if (!a.symbol.empty()) *out = a;
  else *out = b;
  return true;
}

Dim DimProduct(const std::vector<Dim>& dims, size_t begin, size_t end) {
  int64_t p = 1;
  for (size_t i = begin; i < end && i < dims.size(); ++i) {
    if (!dims[i].known()) return Dim{};
    if (__builtin_mul_overflow(p, dims[i].value, &p)) return Dim{};
  }
  return Dim::Of(p);
}

bool NormalizeAxis(int64_t axis, int64_t rank, int64_t* out) {
  if (rank < 0) return false;
  if (axis < -rank || axis >= rank) return false;
  *out = axis < 0 ? axis + rank : axis;
  return true;
}

// Per-graph inference state: load-time integer data of values, and the
// enclosing graph's state for outer-scope names.
struct GraphState {
  Graph* graph = nullptr;
  GraphState* parent = nullptr;
  std::unordered_map<std::string, IntData> data;

  // Type of `name` as visible from this graph; false when not found.
  bool LookupType(const std::string& name, TypeInfo* out) const {
    for (const GraphState* s = this; s; s = s->parent)
      if (s->graph->LocalType(name, out)) return true;
    return false;
  }

  static bool IsGraphInput(const Graph& g, const std::string& name) {
    for (const auto& in : g.inputs)
      if (in.name == name) return true;
    return false;
  }

  const IntData* LookupData(const std::string& name) {
    for (GraphState* s = this; s; s = s->parent) {
      auto it = s->data.find(name);
      if (it != s->data.end()) return &it->second;
      // A node output of this graph shadows nothing in initializers (Finalize
      // forbids it), so check initializers next.
      auto init = s->graph->initializers.find(name);
      if (init != s->graph->initializers.end()) {
        const Tensor* t = init->second.get();
        if (!t || (t->type() != ElemType::kInt64 && t->type() != ElemType::kInt32) || t->rank() > 1 ||
            t->size() > 4096 || t->raw() == nullptr)
          return nullptr;
        // An initializer that is also a graph input can be overridden by a feed.
        if (IsGraphInput(*s->graph, name)) return nullptr;
        IntData d;
        d.scalar = t->rank() == 0;
        if (t->type() == ElemType::kInt64) {
          for (int64_t i = 0; i < t->size(); ++i) d.Push(t->data<int64_t>()[i]);
        } else if (t->type() == ElemType::kInt32) {
          for (int64_t i = 0; i < t->size(); ++i) d.Push(t->data<int32_t>()[i]);
        } else {
          return nullptr;
        }
        return &(s->data[name] = std::move(d));
      }
      if (s->graph->value_types.count(name)) return nullptr;  // a runtime input of this scope
    }
    return nullptr;
  }
};

InferContext::InferContext(Graph& graph, GraphState& state, const Node& node)
    : graph_(graph), state_(state), node_(node) {
  inputs_.resize(node.inputs.size());
  for (size_t i = 0; i < node.inputs.size(); ++i) {
    if (node.inputs[i].empty()) continue;
    TypeInfo t;
    if (state.LookupType(node.inputs[i], &t)) inputs_[i] = std::move(t);
  }
  outputs.resize(node.outputs.size());
}

const TypeInfo& InferContext::Input(size_t i) const {
  static const TypeInfo kUnknown;
  return i < inputs_.size() ? inputs_[i] : kUnknown;
}

ElemType InferContext::InputElem(size_t i) const {
  const TypeInfo& t = Input(i);
  return t.kind == TypeInfo::Kind::kTensor ? t.elem : ElemType::kUndefined;
}

bool InferContext::HasShape(size_t i) const {
  const TypeInfo& t = Input(i);
  return t.kind == TypeInfo::Kind::kTensor && t.has_shape;
}

const IntData* InferContext::Data(size_t i) const {
  if (!HasInput(i)) return nullptr;
  return state_.LookupData(node_.inputs[i]);
}

bool InferContext::Ints(size_t i, std::vector<int64_t>* out) const {
  const IntData* d = Data(i);
  if (!d || !d->AllKnown()) return false;
  *out = d->v;
  return true;
}

TypeInfo& InferContext::Output(size_t i) {
  if (i < outputs.size()) return outputs[i];
  scratch_ = TypeInfo();
  return scratch_;
}

void InferContext::SetOutputData(size_t i, IntData d) {
  if (i < node_.outputs.size()) output_data.emplace_back(i, std::move(d));
}

Status InferContext::Fail(const std::string& what) const {
  return MakeError(ErrorCode::kInvalidGraph, node_.Describe(), ": ", what);
}

std::string InferContext::InputShapes() const {
  std::vector<std::string> parts;
  for (size_t i = 0; i < inputs_.size(); ++i)
    if (HasInput(i)) parts.push_back(ShapeString(inputs_[i]));
  std::string s;
  for (size_t i = 0; i < parts.size(); ++i) {
    if (i) s += i + 1 == parts.size() ? " and " : ", ";
    s += parts[i];
  }
  return s;
}

namespace {

std::string Key(const Node& n) { return n.domain.empty() ? n.op_type : n.domain + ":" + n.op_type; }

const RuleMap& Rules() {
  static const RuleMap* rules = [] {
    auto* m = new RuleMap();
    RegisterElementwiseRules(*m);
    RegisterNnRules(*m);
    RegisterTensorRules(*m);
    RegisterReduceRules(*m);
    RegisterConstantRules(*m);
    RegisterRandomRules(*m);
    RegisterSequenceRules(*m);
    RegisterMlRules(*m);
    return m;
  }();
  return *rules;
}

// Merges `inferred` into `declared`. Returns false (with `why`) on a conflict.
bool MergeType(const TypeInfo& inferred, TypeInfo* declared, std::string* why) {
  if (inferred.kind == TypeInfo::Kind::kUnknown) return true;
  if (declared->kind == TypeInfo::Kind::kUnknown) {
    *declared = inferred;
    return true;
  }
  if (declared->kind != inferred.kind) {
    *why = StrCat("type ", inferred.ToString(), " conflicts with its declared type ", declared->ToString());
    return false;
  }
  switch (inferred.kind) {
    case TypeInfo::Kind::kTensor:
    case TypeInfo::Kind::kSparseTensor: {
      if (declared->elem == ElemType::kUndefined) {
        declared->elem = inferred.elem;
      } else if (inferred.elem != ElemType::kUndefined && inferred.elem != declared->elem) {
        *why = StrCat("type ", inferred.ToString(), " conflicts with its declared type ", declared->ToString());
        return false;
      }
      if (!inferred.has_shape) return true;
      if (!declared->has_shape) {
        declared->has_shape = true;
        declared->dims = inferred.dims;
        return true;
      }
      if (declared->dims.size() != inferred.dims.size()) {
        *why = StrCat("shape ", DimsString(inferred.dims), " conflicts with its declared shape ",
                      DimsString(declared->dims));
        return false;
      }
      for (size_t i = 0; i < inferred.dims.size(); ++i) {
        const Dim& in = inferred.dims[i];
        Dim& de = declared->dims[i];
        if (de.known()) {
          if (in.known() && in.value != de.value) {
            *why = StrCat("shape ", DimsString(inferred.dims), " conflicts with its declared shape ",
                          DimsString(declared->dims));
            return false;
          }
        } else if (in.known()) {
          de = in;
        } else if (de.symbol.empty() && !in.symbol.empty()) {
          de = in;
        }
      }
      return true;
    }
    case TypeInfo::Kind::kSequence:
    case TypeInfo::Kind::kOptional:
    case TypeInfo::Kind::kMap:
      if (inferred.inner) {
        if (!declared->inner) declared->inner = std::make_shared<TypeInfo>();
        else declared->inner = std::make_shared<TypeInfo>(*declared->inner);  // never mutate a shared inner
        return MergeType(*inferred.inner, declared->inner.get(), why);
      }
      return true;
    default:
      return true;
  }
}

// Common type of two values that may each be either (If branches, loop-carried
// values): equal dims stay, differing dims become unknown, differing ranks drop the shape.
TypeInfo JoinTypes(const TypeInfo& a, const TypeInfo& b) {
  if (a.kind == TypeInfo::Kind::kUnknown) return b;
  if (b.kind == TypeInfo::Kind::kUnknown) return a;
  if (a.kind != b.kind) return TypeInfo();
  TypeInfo r = a;
  if (a.kind != TypeInfo::Kind::kTensor) return r;
  if (a.elem != b.elem) r.elem = ElemType::kUndefined;
  if (!a.has_shape || !b.has_shape || a.dims.size() != b.dims.size()) {
    r.has_shape = false;
    r.dims.clear();
    return r;
  }
  for (size_t i = 0; i < a.dims.size(); ++i)
    if (!(a.dims[i] == b.dims[i])) r.dims[i] = Dim{};
  return r;
}

Status InferGraph(Graph& g, GraphState* parent);

Status InferIf(InferContext& ctx) {
  const Attribute* then_a = ctx.node().Attr("then_branch");
  const Attribute* else_a = ctx.node().Attr("else_branch");
  Graph* then_g = then_a ? then_a->g.get() : nullptr;
  Graph* else_g = else_a ? else_a->g.get() : nullptr;
  if (then_g) ONYX_RETURN_IF_ERROR(ctx.InferSubgraph(*then_g, {}));
  if (else_g) ONYX_RETURN_IF_ERROR(ctx.InferSubgraph(*else_g, {}));
  if (!then_g || !else_g) return Status::OK();
  for (size_t i = 0; i < ctx.num_outputs(); ++i) {
    TypeInfo a = InferContext::SubgraphOutput(*then_g, i);
    TypeInfo b = InferContext::SubgraphOutput(*else_g, i);
    if (a.kind == TypeInfo::Kind::kTensor && b.kind == TypeInfo::Kind::kTensor && a.elem != ElemType::kUndefined &&
        b.elem != ElemType::kUndefined && a.elem != b.elem)
      return ctx.Fail(StrCat("output ", i, " is ", a.ToString(), " in then_branch but ", b.ToString(),
                             " in else_branch"));
    if (a.kind == TypeInfo::Kind::kUnknown || b.kind == TypeInfo::Kind::kUnknown) continue;
    ctx.Output(i) = JoinTypes(a, b);
  }
  return Status::OK();
}

Status InferLoop(InferContext& ctx) {
  // inputs: M, cond, v_initial...; body: (iter_num, cond, v...) -> (cond, v..., scan...)
  const Attribute* body_a = ctx.node().Attr("body");
  Graph* body = body_a ? body_a->g.get() : nullptr;
  if (!body) return Status::OK();
  size_t n_carried = ctx.num_inputs() > 2 ? ctx.num_inputs() - 2 : 0;
  std::vector<TypeInfo> body_in;
  body_in.push_back(TypeInfo::Tensor(ElemType::kInt64, {}));
  body_in.push_back(TypeInfo::Tensor(ElemType::kBool, {}));
  for (size_t i = 0; i < n_carried; ++i) {
    TypeInfo t = ctx.Input(2 + i);
    // Carried values may change shape between iterations.
    if (t.kind == TypeInfo::Kind::kTensor) { t.has_shape = false; t.dims.clear(); }
    body_in.push_back(t);
  }
  ONYX_RETURN_IF_ERROR(ctx.InferSubgraph(*body, body_in));
  Dim trip;
  std::vector<int64_t> m;
  if (!ctx.HasInput(1) && ctx.Ints(0, &m) && m.size() == 1 && m[0] >= 0) trip = Dim::Of(m[0]);
  for (size_t i = 0; i < ctx.num_outputs(); ++i) {
    TypeInfo bo = InferContext::SubgraphOutput(*body, i + 1);
    if (i < n_carried) {
      TypeInfo init = ctx.Input(2 + i);
      if (bo.kind == TypeInfo::Kind::kUnknown) { ctx.Output(i) = init; continue; }
      ctx.Output(i) = init.kind == TypeInfo::Kind::kUnknown ? bo : JoinTypes(init, bo);
      if (init.kind == TypeInfo::Kind::kUnknown && bo.kind == TypeInfo::Kind::kTensor) {
        ctx.Output(i).has_shape = false;  // shape after zero iterations is the initial one, unknown here
        ctx.Output(i).dims.clear();
      }
    } else if (bo.kind == TypeInfo::Kind::kTensor && bo.elem != ElemType::kUndefined) {
      if (bo.has_shape) {
        std::vector<Dim> dims{trip};
        dims.insert(dims.end(), bo.dims.begin(), bo.dims.end());
        ctx.SetTensor(i, bo.elem, dims);
      } else {
        ctx.SetTensor(i, bo.elem);
      }
    }
  }
  return Status::OK();
}

Status InferScan(InferContext& ctx) {
  if (ctx.opset() < 9) return Status::OK();  // Scan-8 has a batch axis and sequence_lens; not derived
  const Attribute* body_a = ctx.node().Attr("body");
  Graph* body = body_a ? body_a->g.get() : nullptr;
  if (!body) return Status::OK();
  int64_t n_scan = ctx.node().AttrInt("num_scan_inputs", -1);
  int64_t n_in = static_cast<int64_t>(ctx.num_inputs());
  if (n_scan < 1 || n_scan > n_in) return Status::OK();
  int64_t n_state = n_in - n_scan;
  std::vector<int64_t> in_axes = ctx.node().AttrInts("scan_input_axes");
  std::vector<int64_t> out_axes = ctx.node().AttrInts("scan_output_axes");
  std::vector<TypeInfo> body_in;
  Dim seq_len;
  bool seq_set = false;
  for (int64_t i = 0; i < n_in; ++i) {
    TypeInfo t = ctx.Input(static_cast<size_t>(i));
    if (i >= n_state && t.kind == TypeInfo::Kind::kTensor && t.has_shape) {
      int64_t k = i - n_state;
      int64_t axis = static_cast<size_t>(k) < in_axes.size() ? in_axes[static_cast<size_t>(k)] : 0;
      int64_t a;
      if (NormalizeAxis(axis, static_cast<int64_t>(t.dims.size()), &a)) {
        Dim d = t.dims[static_cast<size_t>(a)];
        if (!seq_set) { seq_len = d; seq_set = true; }
        else if (!UnifyDim(seq_len, d, &seq_len))
          return ctx.Fail(StrCat("scan inputs have different sequence lengths (input shapes ", ctx.InputShapes(), ")"));
        t.dims.erase(t.dims.begin() + a);
      } else {
        t.has_shape = false;
        t.dims.clear();
      }
    }
    body_in.push_back(t);
  }
  ONYX_RETURN_IF_ERROR(ctx.InferSubgraph(*body, body_in));
  for (size_t i = 0; i < ctx.num_outputs(); ++i) {
    TypeInfo bo = InferContext::SubgraphOutput(*body, i);
    if (bo.kind == TypeInfo::Kind::kUnknown) continue;
    if (static_cast<int64_t>(i) < n_state) {
      ctx.Output(i) = bo;
      continue;
    }
    if (bo.kind != TypeInfo::Kind::kTensor || bo.elem == ElemType::kUndefined) continue;
    if (!bo.has_shape) { ctx.SetTensor(i, bo.elem); continue; }
    size_t k = i - static_cast<size_t>(n_state);
    int64_t axis = k < out_axes.size() ? out_axes[k] : 0;
    int64_t a;
    if (!NormalizeAxis(axis, static_cast<int64_t>(bo.dims.size()) + 1, &a)) { ctx.SetTensor(i, bo.elem); continue; }
    std::vector<Dim> dims = bo.dims;
    dims.insert(dims.begin() + a, seq_len);
    ctx.SetTensor(i, bo.elem, dims);
  }
  return Status::OK();
}

// A type with its shape, for messages: "tensor(float) [2,3]".
std::string TypeText(const TypeInfo& t) {
  if (t.kind != TypeInfo::Kind::kTensor || !t.has_shape) return t.ToString();
  return StrCat(t.ToString(), " ", DimsString(t.dims));
}

Status InferNode(Graph& g, GraphState& state, const Node& node) {
  InferContext ctx(g, state, node);
  Status st;
  bool from_schema = false;
  if (node.domain.empty() && node.op_type == "If") {
    st = InferIf(ctx);
  } else if (node.domain.empty() && node.op_type == "Loop") {
    st = InferLoop(ctx);
  } else if (node.domain.empty() && node.op_type == "Scan") {
    st = InferScan(ctx);
  } else {
    // Subgraphs of other ops still get their own inference.
    for (const auto& kv : node.attrs) {
      if (kv.second.g) ONYX_RETURN_IF_ERROR(ctx.InferSubgraph(*kv.second.g, {}));
      for (const auto& sg : kv.second.graphs)
        if (sg) ONYX_RETURN_IF_ERROR(ctx.InferSubgraph(*sg, {}));
    }
    auto it = Rules().find(Key(node));
    if (it != Rules().end()) st = it->second(ctx);
    else from_schema = InferWithSchema(ctx);
  }
  ONYX_RETURN_IF_ERROR(st);

  for (size_t i = 0; i < node.outputs.size() && i < ctx.outputs.size(); ++i) {
    const std::string& name = node.outputs[i];
    if (name.empty() || ctx.outputs[i].kind == TypeInfo::Kind::kUnknown) continue;
    TypeInfo& declared = g.value_types[name];
    std::string why;
    TypeInfo before = declared;
    if (!MergeType(ctx.outputs[i], &declared, &why)) {
      // ONNX's generic rules may disagree with what an exporter declared and
      // onnxruntime runs: keep the declaration rather than refuse the model.
      if (from_schema) {
        declared = before;
        g.Warn(StrCat(node.Describe(), ": output '", name, "' is declared ", TypeText(before),
                      " but ONNX's inference gives ", TypeText(ctx.outputs[i]), "; the declaration is kept"));
        continue;
      }
      // Exporters also declare wrong shapes that our own rules disprove (ddddocr's
      // common.onnx declares its [T,1,C] logits as [1,T]); onnxruntime runs such
      // models by default, keeping only what both shapes agree on (its lenient
      // merge). So do we: equal dims stay, others become unknown, another rank
      // drops the shape. An element type that conflicts is still refused.
      if (ctx.outputs[i].kind == TypeInfo::Kind::kTensor && before.kind == TypeInfo::Kind::kTensor &&
          (ctx.outputs[i].elem == before.elem || ctx.outputs[i].elem == ElemType::kUndefined ||
           before.elem == ElemType::kUndefined)) {
        declared = JoinTypes(ctx.outputs[i], before);
        if (declared.elem == ElemType::kUndefined)
          declared.elem = before.elem != ElemType::kUndefined ? before.elem : ctx.outputs[i].elem;
        g.Warn(StrCat(node.Describe(), ": output '", name, "' is declared ", TypeText(before), " but inferred ",
                      TypeText(ctx.outputs[i]), "; only what both agree on is kept (", TypeText(declared), ")"));
        continue;
      }
      return ctx.Fail(StrCat("output '", name, "': inferred ", why, " (input shapes ", ctx.InputShapes(), ")"));
    }
  }
  for (auto& od : ctx.output_data) {
    const std::string& name = node.outputs[od.first];
    if (!name.empty()) state.data[name] = std::move(od.second);
  }
  return Status::OK();
}

Status InferGraph(Graph& g, GraphState* parent) {
  GraphState state;
  state.graph = &g;
  state.parent = parent;
  for (const Node& node : g.nodes) ONYX_RETURN_IF_ERROR(InferNode(g, state, node));
  return Status::OK();
}

}  // namespace

Status InferContext::InferSubgraph(Graph& sub, const std::vector<TypeInfo>& input_types) {
  for (size_t i = 0; i < sub.inputs.size() && i < input_types.size(); ++i) {
    const TypeInfo& given = input_types[i];
    if (given.kind == TypeInfo::Kind::kUnknown) continue;
    TypeInfo& declared = sub.value_types[sub.inputs[i].name];
    // The subgraph's own declaration wins; the outer type only fills gaps.
    if (declared.kind == TypeInfo::Kind::kUnknown) {
      declared = given;
    } else if (declared.kind == TypeInfo::Kind::kTensor && given.kind == TypeInfo::Kind::kTensor) {
      if (declared.elem == ElemType::kUndefined) declared.elem = given.elem;
      if (!declared.has_shape && given.has_shape) {
        declared.has_shape = true;
        declared.dims = given.dims;
      }
    }
  }
  Status st = InferGraph(sub, &state_);
  if (!st.ok()) return st.WithContext(StrCat(node_.Describe(), ", subgraph '", sub.name, "': "));
  return Status::OK();
}

TypeInfo InferContext::SubgraphOutput(const Graph& sub, size_t i) {
  if (i >= sub.outputs.size()) return TypeInfo();
  TypeInfo t;
  if (sub.LocalType(sub.outputs[i].name, &t) && t.kind != TypeInfo::Kind::kUnknown) return t;
  return sub.outputs[i].type;
}

bool StartShapedRule(InferContext& ctx, ElemType* elem) {
  *elem = ctx.InputElem(0);
  if (*elem == ElemType::kUndefined) return false;
  if (!ctx.HasShape(0)) {
    ctx.SetTensor(0, *elem);
    return false;
  }
  return true;
}

// Rank-only output: `rank` unknown dims (or unknown rank when rank < 0).
void SetRankOnly(InferContext& ctx, size_t o, ElemType e, int64_t rank) {
  if (rank >= 0 && rank < (1 << 20)) ctx.SetTensor(o, e, std::vector<Dim>(static_cast<size_t>(rank)));
  else ctx.SetTensor(o, e);
}

// Length of a 1-D input whose shape is declared, -1 if unknown.
int64_t Len1D(InferContext& ctx, size_t i) {
  if (!ctx.HasShape(i) || ctx.Dims(i).size() != 1 || !ctx.Dims(i)[0].known()) return -1;
  return ctx.Dims(i)[0].value;
}

}  // namespace shape_inference

Status InferTypesAndShapes(Graph& graph) {
  Status st = shape_inference::InferGraph(graph, nullptr);
  if (!st.ok()) return st;
  // Graph outputs carry their own copy of the type; keep it in step.
  for (auto& out : graph.outputs) {
    auto it = graph.value_types.find(out.name);
    if (it != graph.value_types.end()) out.type = it->second;
  }
  return Status::OK();
}

}  // namespace onyx
