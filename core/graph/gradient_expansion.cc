#include "core/graph/gradient_expansion.h"

#include <algorithm>
#include <functional>
#include <map>
#include <numeric>
#include <unordered_map>
#include <unordered_set>

#include "core/graph/function_expansion.h"
#include "core/graph/shape_inference.h"

namespace onyx {
namespace {

constexpr const char* kTrainingDomain = "ai.onnx.preview.training";

bool IsFloatType(ElemType t) {
  return t == ElemType::kFloat || t == ElemType::kDouble || t == ElemType::kFloat16 || t == ElemType::kBFloat16;
}

bool FullyKnown(const TypeInfo& t) {
  if (t.kind != TypeInfo::Kind::kTensor || !t.has_shape) return false;
  return std::all_of(t.dims.begin(), t.dims.end(), [](const Dim& d) { return d.known(); });
}

// What the backward pass knows of a forward value: its element type and, where
// inference found it, its shape (a rank alone is enough for most rules).
struct ValueShape {
  ElemType elem = ElemType::kUndefined;
  bool has_rank = false;
  bool static_dims = false;
  std::vector<int64_t> dims;  // when static_dims
  size_t rank = 0;            // when has_rank
};

// Writes the backward nodes of one Gradient node.
class GradientBuilder {
 public:
  GradientBuilder(Graph& g, const Node& grad, int opset, std::unordered_set<std::string>& names)
      : g_(g), grad_(grad), opset_(opset), names_(names) {}

  Status Build(std::vector<Node>* out);

 private:
  // ---- naming and emission
  std::string Fresh(const std::string& base) {
    std::string stem = grad_.name.empty() ? "Gradient" : grad_.name;
    std::string candidate = stem + "/" + base;
    for (int k = 1; names_.count(candidate); ++k) candidate = stem + "/" + base + "_" + std::to_string(k);
    names_.insert(candidate);
    return candidate;
  }
  // Emits `op` and returns its single output (named `out` when given).
  std::string Op(const std::string& op, std::vector<std::string> inputs, std::map<std::string, Attribute> attrs = {},
                 const std::string& out = "") {
    Node n;
    n.op_type = op;
    n.since_version = opset_;
    n.name = Fresh(op);
    n.inputs = std::move(inputs);
    n.attrs = std::move(attrs);
    n.outputs.push_back(out.empty() ? Fresh(op + "_out") : out);
    emitted_.push_back(std::move(n));
    return emitted_.back().outputs[0];
  }
  static Attribute IntAttr(int64_t v) {
    Attribute a;
    a.type = Attribute::Type::kInt;
    a.i = v;
    return a;
  }
  static Attribute IntsAttr(std::vector<int64_t> v) {
    Attribute a;
    a.type = Attribute::Type::kInts;
    a.ints = std::move(v);
    return a;
  }
  static Attribute FloatAttr(float v) {
    Attribute a;
    a.type = Attribute::Type::kFloat;
    a.f = v;
    return a;
  }
  // A scalar initializer of element type `t` (float types only).
  std::string Scalar(ElemType t, double v) {
    auto key = std::make_pair(static_cast<int>(t), v);
    auto it = scalars_.find(key);
    if (it != scalars_.end()) return it->second;
    auto tensor = std::make_shared<Tensor>(t, Dims{});
    switch (t) {
      case ElemType::kFloat: *tensor->data<float>() = static_cast<float>(v); break;
      case ElemType::kDouble: *tensor->data<double>() = v; break;
      case ElemType::kFloat16: *tensor->data<Float16>() = Float16(static_cast<float>(v)); break;
      default: *tensor->data<BFloat16>() = BFloat16(static_cast<float>(v)); break;
    }
    std::string name = Fresh("const");
    g_.initializers[name] = std::move(tensor);
    created_initializers_.push_back(name);
    scalars_[key] = name;
    return name;
  }
  std::string Ints(const std::vector<int64_t>& v) {
    auto tensor = std::make_shared<Tensor>(ElemType::kInt64, Dims{static_cast<int64_t>(v.size())});
    std::copy(v.begin(), v.end(), tensor->data<int64_t>());
    std::string name = Fresh("ints");
    g_.initializers[name] = std::move(tensor);
    created_initializers_.push_back(name);
    return name;
  }
  // ReduceSum over `axes` in the form the model's opset reads (attribute before 13).
  std::string ReduceSumAxes(const std::string& x, const std::vector<int64_t>& axes, bool keepdims) {
    std::map<std::string, Attribute> attrs{{"keepdims", IntAttr(keepdims ? 1 : 0)}};
    if (opset_ < 13) {
      attrs["axes"] = IntsAttr(axes);
      return Op("ReduceSum", {x}, attrs);
    }
    return Op("ReduceSum", {x, Ints(axes)}, attrs);
  }
  std::string UnsqueezeAxes(const std::string& x, const std::vector<int64_t>& axes) {
    if (opset_ < 13) return Op("Unsqueeze", {x}, {{"axes", IntsAttr(axes)}});
    return Op("Unsqueeze", {x, Ints(axes)});
  }
  std::string SwapLastTwo(const std::string& x, size_t rank) {
    std::vector<int64_t> perm(rank);
    std::iota(perm.begin(), perm.end(), 0);
    std::swap(perm[rank - 1], perm[rank - 2]);
    return Op("Transpose", {x}, {{"perm", IntsAttr(perm)}});
  }

  // ---- what is known of values
  ValueShape ShapeOf(const std::string& forward_value) const;
  Status Error(ErrorCode code, const std::string& what) const {
    return MakeError(code, grad_.Describe(), ": ", what);
  }

  // Sums `g` (whose shape is `g_shape`) down to the shape of `target` (a
  // broadcast operand): the adjoint of numpy broadcasting.
  Status Unbroadcast(const std::string& gname, const ValueShape& g_shape, const std::string& target, const Node& at,
                     std::string* out);
  // The gradient contributions of one forward node to its inputs.
  Status Backprop(const Node& n, const std::vector<std::string>& gy, std::map<size_t, std::string>* gx);

  std::string Renamed(const std::string& v) const {
    auto it = rename_.find(v);
    return it == rename_.end() ? v : it->second;
  }

  Graph& g_;
  const Node& grad_;
  int opset_;
  std::unordered_set<std::string>& names_;
  std::vector<Node> emitted_;
  std::vector<std::string> created_initializers_;
  std::map<std::pair<int, double>, std::string> scalars_;
  // Forward value -> the value computed at the Gradient node's inputs (itself
  // when the forward pass is reused).
  std::unordered_map<std::string, std::string> rename_;
  bool shapes_trusted_ = true;
};

ValueShape GradientBuilder::ShapeOf(const std::string& v) const {
  ValueShape s;
  TypeInfo t;
  bool found = false;
  for (const Graph* gr = &g_; gr != nullptr && !found; gr = gr->parent) found = gr->LocalType(v, &t);
  if (!found || t.kind != TypeInfo::Kind::kTensor) return s;
  s.elem = t.elem;
  if (!t.has_shape) return s;
  s.has_rank = true;
  s.rank = t.dims.size();
  // Cloned onto inputs of other shapes, the forward values keep their ranks
  // but not their dims.
  if (shapes_trusted_ && FullyKnown(t)) {
    s.static_dims = true;
    for (const Dim& d : t.dims) s.dims.push_back(d.value);
  }
  return s;
}

Status GradientBuilder::Unbroadcast(const std::string& gname, const ValueShape& gs, const std::string& target,
                                    const Node& at, std::string* out) {
  ValueShape ts = ShapeOf(target);
  if (gs.static_dims && ts.static_dims) {
    if (gs.dims == ts.dims) {
      *out = gname;
      return Status::OK();
    }
    const size_t r = gs.dims.size(), rt = ts.dims.size();
    if (rt > r) return Error(ErrorCode::kInvalidGraph, "operand '" + target + "' of " + at.Describe() +
                                                           " has a higher rank than the result");
    std::vector<int64_t> axes;
    for (size_t i = 0; i < r; ++i) {
      const bool leading = i < r - rt;
      if (leading || (ts.dims[i - (r - rt)] == 1 && gs.dims[i] != 1)) axes.push_back(static_cast<int64_t>(i));
    }
    std::string summed = axes.empty() ? gname : ReduceSumAxes(gname, axes, true);
    *out = r == rt ? summed : Op("Reshape", {summed, Ints(ts.dims)});
    return Status::OK();
  }
  if (!gs.has_rank || !ts.has_rank)
    return Error(ErrorCode::kNotImplemented, "the rank of operand '" + target + "' of " + at.Describe() +
                                                 " or of its result is unknown, so its broadcast cannot be undone");
  if (opset_ < 13)
    return Error(ErrorCode::kNotImplemented, "operand '" + target + "' of " + at.Describe() +
                                                 " has a dynamic shape; undoing its broadcast needs ReduceSum's "
                                                 "axes input (opset 13 or later), the model imports opset " +
                                                 std::to_string(opset_));
  // Axes where the operand (left-padded with ones to the result's rank) is 1
  // are summed, keeping dims; then the sum takes the operand's shape.
  const std::string tshape = Op("Shape", {Renamed(target)});
  std::string padded = tshape;
  if (gs.rank > ts.rank)
    padded = Op("Concat", {Ints(std::vector<int64_t>(gs.rank - ts.rank, 1)), tshape}, {{"axis", IntAttr(0)}});
  const std::string ones = Op("Equal", {padded, Ints({1})});
  const std::string axes = Op("Reshape", {Op("NonZero", {ones}), Ints({-1})});
  const std::string summed =
      Op("ReduceSum", {gname, axes}, {{"keepdims", IntAttr(1)}, {"noop_with_empty_axes", IntAttr(1)}});
  *out = Op("Reshape", {summed, tshape});
  return Status::OK();
}

Status GradientBuilder::Backprop(const Node& n, const std::vector<std::string>& gy,
                                 std::map<size_t, std::string>* gx) {
  const std::string& op = n.op_type;
  auto in = [&](size_t i) { return Renamed(n.inputs[i]); };
  auto y = [&]() { return Renamed(n.outputs[0]); };
  const std::string g = gy[0];
  const ValueShape ys = ShapeOf(n.outputs[0]);
  const ElemType t = ys.elem;
  auto unb = [&](size_t i, const std::string& v, const ValueShape& vs) -> Status {
    std::string r;
    ONYX_RETURN_IF_ERROR(Unbroadcast(v, vs, n.inputs[i], n, &r));
    (*gx)[i] = r;
    return Status::OK();
  };
  for (size_t k = 1; k < n.outputs.size(); ++k)
    if (!gy[k].empty())
      return Error(ErrorCode::kNotImplemented, "output '" + n.outputs[k] + "' of " + n.Describe() +
                                                   " is differentiated, but only its first output has a rule");

  if (op == "Add" || op == "Sub" || op == "Sum") {
    for (size_t i = 0; i < n.inputs.size(); ++i)
      ONYX_RETURN_IF_ERROR(unb(i, op == "Sub" && i == 1 ? Op("Neg", {g}) : g, ys));
  } else if (op == "Mul") {
    ONYX_RETURN_IF_ERROR(unb(0, Op("Mul", {g, in(1)}), ys));
    ONYX_RETURN_IF_ERROR(unb(1, Op("Mul", {g, in(0)}), ys));
  } else if (op == "Div") {
    ONYX_RETURN_IF_ERROR(unb(0, Op("Div", {g, in(1)}), ys));
    // d(a/b)/db = -(a/b)/b
    ONYX_RETURN_IF_ERROR(unb(1, Op("Neg", {Op("Mul", {g, Op("Div", {y(), in(1)})})}), ys));
  } else if (op == "Pow") {
    std::string b = in(1);
    if (ShapeOf(n.inputs[1]).elem != t) b = Op("Cast", {b}, {{"to", IntAttr(static_cast<int64_t>(t))}});
    const std::string da = Op("Mul", {b, Op("Pow", {in(0), Op("Sub", {b, Scalar(t, 1)})})});
    ONYX_RETURN_IF_ERROR(unb(0, Op("Mul", {g, da}), ys));
    const std::string db = Op("Mul", {g, Op("Mul", {y(), Op("Log", {in(0)})})});
    if (ShapeOf(n.inputs[1]).elem == t) ONYX_RETURN_IF_ERROR(unb(1, db, ys));
  } else if (op == "Neg") {
    (*gx)[0] = Op("Neg", {g});
  } else if (op == "Identity") {
    (*gx)[0] = g;
  } else if (op == "Abs") {
    (*gx)[0] = Op("Mul", {g, Op("Sign", {in(0)})});
  } else if (op == "Relu") {
    (*gx)[0] = Op("Where", {Op("Greater", {in(0), Scalar(t, 0)}), g, Scalar(t, 0)});
  } else if (op == "LeakyRelu") {
    const std::string slope = Scalar(t, n.AttrFloat("alpha", 0.01f));
    (*gx)[0] = Op("Where", {Op("Greater", {in(0), Scalar(t, 0)}), g, Op("Mul", {g, slope})});
  } else if (op == "Sigmoid") {
    (*gx)[0] = Op("Mul", {g, Op("Mul", {y(), Op("Sub", {Scalar(t, 1), y()})})});
  } else if (op == "Tanh") {
    (*gx)[0] = Op("Mul", {g, Op("Sub", {Scalar(t, 1), Op("Mul", {y(), y()})})});
  } else if (op == "Exp") {
    (*gx)[0] = Op("Mul", {g, y()});
  } else if (op == "Log") {
    (*gx)[0] = Op("Div", {g, in(0)});
  } else if (op == "Sqrt") {
    (*gx)[0] = Op("Div", {g, Op("Mul", {y(), Scalar(t, 2)})});
  } else if (op == "Reciprocal") {
    (*gx)[0] = Op("Neg", {Op("Mul", {g, Op("Mul", {y(), y()})})});
  } else if (op == "Sin") {
    (*gx)[0] = Op("Mul", {g, Op("Cos", {in(0)})});
  } else if (op == "Cos") {
    (*gx)[0] = Op("Neg", {Op("Mul", {g, Op("Sin", {in(0)})})});
  } else if (op == "Erf") {
    // d erf(x)/dx = 2/sqrt(pi) * exp(-x^2)
    const std::string e = Op("Exp", {Op("Neg", {Op("Mul", {in(0), in(0)})})});
    (*gx)[0] = Op("Mul", {g, Op("Mul", {e, Scalar(t, 1.1283791670955126)})});
  } else if (op == "MatMul") {
    const ValueShape as = ShapeOf(n.inputs[0]), bs = ShapeOf(n.inputs[1]);
    if (!as.has_rank || !bs.has_rank || as.rank < 2 || bs.rank < 2)
      return Error(ErrorCode::kNotImplemented, n.Describe() + " has an operand of unknown rank or of rank 1; "
                                                              "its gradient is written for matrices and batches of them");
    // The products have the result's batch dims and the operand's matrix dims.
    auto product_shape = [&](const ValueShape& operand) {
      ValueShape s = ys;
      if (s.static_dims && operand.static_dims) {
        s.dims.resize(s.dims.size() - 2);
        s.dims.push_back(operand.dims[operand.rank - 2]);
        s.dims.push_back(operand.dims[operand.rank - 1]);
      } else {
        s.static_dims = false;
      }
      return s;
    };
    ONYX_RETURN_IF_ERROR(unb(0, Op("MatMul", {g, SwapLastTwo(in(1), bs.rank)}), product_shape(as)));
    ONYX_RETURN_IF_ERROR(unb(1, Op("MatMul", {SwapLastTwo(in(0), as.rank), g}), product_shape(bs)));
  } else if (op == "Gemm") {
    const bool ta = n.AttrInt("transA", 0) != 0, tb = n.AttrInt("transB", 0) != 0;
    const double alpha = n.AttrFloat("alpha", 1.f), beta = n.AttrFloat("beta", 1.f);
    auto scaled = [&](const std::string& v, double s) { return s == 1.0 ? v : Op("Mul", {v, Scalar(t, s)}); };
    // Y = alpha * op(A) op(B) + beta * C
    const std::string op_b_t = tb ? in(1) : SwapLastTwo(in(1), 2);
    const std::string op_a_t = ta ? in(0) : SwapLastTwo(in(0), 2);
    const std::string d_op_a = Op("MatMul", {g, op_b_t});
    const std::string d_op_b = Op("MatMul", {op_a_t, g});
    (*gx)[0] = scaled(ta ? SwapLastTwo(d_op_a, 2) : d_op_a, alpha);
    (*gx)[1] = scaled(tb ? SwapLastTwo(d_op_b, 2) : d_op_b, alpha);
    if (n.inputs.size() > 2 && !n.inputs[2].empty()) ONYX_RETURN_IF_ERROR(unb(2, scaled(g, beta), ys));
  } else if (op == "Softmax" || op == "LogSoftmax") {
    if (!ys.has_rank) return Error(ErrorCode::kNotImplemented, "the rank of " + n.Describe() + "'s input is unknown");
    const int64_t rank = static_cast<int64_t>(ys.rank);
    int64_t axis = n.AttrInt("axis", opset_ < 13 ? 1 : -1);
    if (axis < 0) axis += rank;
    // Before opset 13 the input is flattened to 2-D at `axis`: the softmax
    // runs over every axis from there on.
    std::vector<int64_t> axes;
    for (int64_t a = axis; a < (opset_ < 13 ? rank : axis + 1); ++a) axes.push_back(a);
    if (op == "Softmax") {
      const std::string dot = ReduceSumAxes(Op("Mul", {g, y()}), axes, true);
      (*gx)[0] = Op("Mul", {y(), Op("Sub", {g, dot})});
    } else {
      const std::string total = ReduceSumAxes(g, axes, true);
      (*gx)[0] = Op("Sub", {g, Op("Mul", {Op("Exp", {y()}), total})});
    }
  } else if (op == "ReduceSum" || op == "ReduceMean") {
    const ValueShape xs = ShapeOf(n.inputs[0]);
    const bool axes_input = (op == "ReduceSum" && opset_ >= 13) || (op == "ReduceMean" && opset_ >= 18);
    std::vector<int64_t> axes;
    if (axes_input) {
      if (n.inputs.size() > 1 && !n.inputs[1].empty()) {
        auto it = g_.initializers.find(n.inputs[1]);
        if (it == g_.initializers.end())
          return Error(ErrorCode::kNotImplemented, "the axes of " + n.Describe() + " are computed at run time; "
                                                                                   "its gradient needs constant axes");
        const Tensor& a = *it->second;
        axes.assign(a.data<int64_t>(), a.data<int64_t>() + a.size());
      }
    } else {
      axes = n.AttrInts("axes");
    }
    const bool keepdims = n.AttrInt("keepdims", 1) != 0;
    std::string expanded = g;
    if (axes.empty() && n.AttrInt("noop_with_empty_axes", 0) != 0) {
      (*gx)[0] = g;
      return Status::OK();
    }
    if (!keepdims) {
      if (!xs.has_rank) return Error(ErrorCode::kNotImplemented, "the rank of " + n.Describe() + "'s input is unknown");
      const int64_t rank = static_cast<int64_t>(xs.rank);
      if (axes.empty()) {
        axes.resize(rank);
        std::iota(axes.begin(), axes.end(), 0);
      }
      for (auto& a : axes)
        if (a < 0) a += rank;
      std::sort(axes.begin(), axes.end());
      expanded = UnsqueezeAxes(g, axes);
    }
    std::string gxv = Op("Expand", {expanded, Op("Shape", {in(0)})});
    if (op == "ReduceMean") {
      const std::string count = Op("Div", {Op("Size", {in(0)}), Op("Size", {y()})});
      gxv = Op("Div", {gxv, Op("Cast", {count}, {{"to", IntAttr(static_cast<int64_t>(t))}})});
    }
    (*gx)[0] = gxv;
  } else if (op == "Reshape" || op == "Flatten" || op == "Squeeze" || op == "Unsqueeze") {
    (*gx)[0] = Op("Reshape", {g, Op("Shape", {in(0)})});
  } else if (op == "Expand") {
    ONYX_RETURN_IF_ERROR(unb(0, g, ys));
  } else if (op == "Transpose") {
    std::vector<int64_t> perm = n.AttrInts("perm");
    if (perm.empty()) {
      if (!ys.has_rank) return Error(ErrorCode::kNotImplemented, "the rank of " + n.Describe() + "'s input is unknown");
      perm.resize(ys.rank);
      for (size_t i = 0; i < ys.rank; ++i) perm[i] = static_cast<int64_t>(ys.rank - 1 - i);
    }
    std::vector<int64_t> inverse(perm.size());
    for (size_t i = 0; i < perm.size(); ++i) inverse[perm[i]] = static_cast<int64_t>(i);
    (*gx)[0] = Op("Transpose", {g}, {{"perm", IntsAttr(inverse)}});
  } else if (op == "Cast") {
    const ElemType from = ShapeOf(n.inputs[0]).elem;
    if (IsFloatType(from) && IsFloatType(t)) (*gx)[0] = Op("Cast", {g}, {{"to", IntAttr(static_cast<int64_t>(from))}});
  } else if (op == "Where") {
    ONYX_RETURN_IF_ERROR(unb(1, Op("Where", {in(0), g, Scalar(t, 0)}), ys));
    ONYX_RETURN_IF_ERROR(unb(2, Op("Where", {in(0), Scalar(t, 0), g}), ys));
  } else {
    return Error(ErrorCode::kNotImplemented, "cannot differentiate through " + n.Describe() + ": no derivative rule for " +
                                                 op + " (y '" + grad_.AttrString("y", "") + "' depends on it)");
  }
  return Status::OK();
}

Status GradientBuilder::Build(std::vector<Node>* out) {
  auto strings = [&](const char* key) {
    const Attribute* a = grad_.Attr(key);
    return a ? a->strings : std::vector<std::string>{};
  };
  const std::vector<std::string> xs = strings("xs"), zs = strings("zs");
  const std::string y = grad_.AttrString("y", "");
  if (xs.empty()) return Error(ErrorCode::kInvalidGraph, "attribute 'xs' is missing or empty");
  if (y.empty()) return Error(ErrorCode::kInvalidGraph, "attribute 'y' is missing");
  std::vector<std::string> sources = xs;
  sources.insert(sources.end(), zs.begin(), zs.end());
  if (grad_.inputs.size() != sources.size())
    return Error(ErrorCode::kInvalidGraph, "has " + std::to_string(grad_.inputs.size()) + " input(s) but xs and zs name " +
                                               std::to_string(sources.size()));
  if (grad_.outputs.size() > xs.size())
    return Error(ErrorCode::kInvalidGraph, "has " + std::to_string(grad_.outputs.size()) +
                                               " output(s) but xs names " + std::to_string(xs.size()));
  const std::unordered_set<std::string> source_set(sources.begin(), sources.end());
  const std::unordered_set<std::string> x_set(xs.begin(), xs.end());

  std::unordered_map<std::string, size_t> producer;
  for (size_t i = 0; i < g_.nodes.size(); ++i)
    for (const auto& o : g_.nodes[i].outputs)
      if (!o.empty()) producer[o] = i;
  for (const auto& x : xs) {
    const ValueShape s = ShapeOf(x);
    if (s.elem != ElemType::kUndefined && !IsFloatType(s.elem))
      return Error(ErrorCode::kInvalidGraph, "xs names '" + x + "' of type " + ElemTypeName(s.elem) +
                                                 ": only floating-point tensors can be differentiated");
  }
  // The forward nodes y needs, found from y back to xs, zs and constants.
  std::vector<bool> needed(g_.nodes.size(), false);
  std::vector<std::string> stack{y};
  std::unordered_set<std::string> seen;
  while (!stack.empty()) {
    std::string v = stack.back();
    stack.pop_back();
    if (v.empty() || !seen.insert(v).second || source_set.count(v)) continue;
    auto it = producer.find(v);
    if (it == producer.end()) {
      if (g_.IsInitializer(v)) continue;
      bool graph_input = false;
      for (const auto& in : g_.inputs) graph_input = graph_input || in.name == v;
      if (graph_input)
        return Error(ErrorCode::kInvalidGraph, "y '" + y + "' depends on graph input '" + v +
                                                   "', which is named neither in xs nor in zs");
      if (v == y) return Error(ErrorCode::kInvalidGraph, "y '" + y + "' is not a value of the graph");
      continue;  // outer scope: a constant here
    }
    const Node& n = g_.nodes[it->second];
    if (&n == &grad_) return Error(ErrorCode::kInvalidGraph, "y '" + y + "' depends on the Gradient node itself");
    needed[it->second] = true;
    for (const auto& i : n.inputs) stack.push_back(i);
    for (const auto& i : n.implicit_inputs) stack.push_back(i);
  }

  // Evaluated at the very values xs and zs name, the forward pass is reused;
  // otherwise the needed nodes are cloned onto the Gradient's inputs.
  bool reuse = true;
  for (size_t i = 0; i < sources.size(); ++i) reuse = reuse && grad_.inputs[i] == sources[i];
  std::vector<Node> forward;
  for (size_t i = 0; i < g_.nodes.size(); ++i)
    if (needed[i]) forward.push_back(g_.nodes[i]);
  if (!reuse) {
    for (size_t i = 0; i < sources.size(); ++i) {
      const ValueShape a = ShapeOf(sources[i]), b = ShapeOf(grad_.inputs[i]);
      if (!a.static_dims || !b.static_dims || a.dims != b.dims) shapes_trusted_ = false;
      rename_[sources[i]] = grad_.inputs[i];
    }
    for (const Node& n : forward) {
      if (!n.implicit_inputs.empty())
        return Error(ErrorCode::kNotImplemented, "evaluating y at other inputs would clone " + n.Describe() +
                                                     ", which holds a subgraph");
      Node c = n;
      c.name = Fresh("forward/" + n.name);
      for (auto& i : c.inputs) i = Renamed(i);
      for (auto& o : c.outputs) {
        if (o.empty()) continue;
        rename_[o] = Fresh("forward/" + o);
        o = rename_[o];
      }
      emitted_.push_back(std::move(c));
    }
  }

  // Which forward values depend on some x (only their gradients are needed).
  std::unordered_set<std::string> varies(xs.begin(), xs.end());
  for (const Node& n : forward) {
    bool v = false;
    for (const auto& i : n.inputs) v = v || varies.count(i);
    for (const auto& i : n.implicit_inputs) v = v || varies.count(i);
    if (v)
      for (const auto& o : n.outputs) varies.insert(o);
  }

  std::unordered_map<std::string, std::vector<std::string>> contributions;
  auto total = [&](const std::string& v, const std::string& out_name) -> std::string {
    auto it = contributions.find(v);
    if (it == contributions.end() || it->second.empty()) return "";
    if (it->second.size() == 1 && out_name.empty()) return it->second[0];
    return Op(it->second.size() == 1 ? "Identity" : "Sum", it->second, {}, out_name);
  };
  const ValueShape y_shape = ShapeOf(y);
  const ElemType t = y_shape.elem;
  if (!IsFloatType(t))
    return Error(ErrorCode::kInvalidGraph, "y '" + y + "' must be a floating-point tensor, it is " +
                                               (t == ElemType::kUndefined ? std::string("of unknown type")
                                                                          : std::string(ElemTypeName(t))));
  // d sum(y) / dy = 1 everywhere.
  contributions[y].push_back(Op("Expand", {Scalar(t, 1), Op("Shape", {Renamed(y)})}));
  for (auto it = forward.rbegin(); it != forward.rend(); ++it) {
    const Node& n = *it;
    std::vector<std::string> gy;
    bool any = false;
    for (const auto& o : n.outputs) {
      gy.push_back(o.empty() || !varies.count(o) ? "" : total(o, ""));
      any = any || !gy.back().empty();
    }
    if (!any) continue;
    std::map<size_t, std::string> gx;
    ONYX_RETURN_IF_ERROR(Backprop(n, gy, &gx));
    for (const auto& kv : gx)
      if (varies.count(n.inputs[kv.first])) contributions[n.inputs[kv.first]].push_back(kv.second);
  }
  for (size_t i = 0; i < grad_.outputs.size(); ++i) {
    const std::string& out_name = grad_.outputs[i];
    if (out_name.empty()) continue;
    if (total(xs[i], out_name).empty()) {
      // y does not depend on this x: its gradient is zero.
      const ElemType xt = ShapeOf(xs[i]).elem == ElemType::kUndefined ? t : ShapeOf(xs[i]).elem;
      Op("Expand", {Scalar(xt, 0), Op("Shape", {grad_.inputs[i]})}, {}, out_name);
    }
  }
  // Rules write the gradient of every operand, constants' too: keep only the
  // nodes the outputs need, and the constants those read.
  std::unordered_set<std::string> live(grad_.outputs.begin(), grad_.outputs.end());
  std::vector<bool> keep(emitted_.size(), false);
  for (size_t k = emitted_.size(); k-- > 0;) {
    for (const auto& o : emitted_[k].outputs) keep[k] = keep[k] || live.count(o);
    if (keep[k]) live.insert(emitted_[k].inputs.begin(), emitted_[k].inputs.end());
  }
  for (size_t k = 0; k < emitted_.size(); ++k)
    if (keep[k]) out->push_back(std::move(emitted_[k]));
  for (const auto& name : created_initializers_)
    if (!live.count(name)) g_.initializers.erase(name);
  return Status::OK();
}

}  // namespace

const std::vector<RewrittenOperator>& GraphRewrittenOperators() {
  static const std::vector<RewrittenOperator> kOps = {{kTrainingDomain, "Gradient", 1, 1}};
  return kOps;
}

Status ExpandGradients(Model& model, int* expanded) {
  int count = 0;
  Graph& g = *model.graph;
  std::function<Status(const Graph&, bool)> refuse_nested = [&](const Graph& graph, bool nested) -> Status {
    for (const Node& n : graph.nodes) {
      if (nested && n.domain == kTrainingDomain && n.op_type == "Gradient")
        return MakeError(ErrorCode::kNotImplemented, n.Describe(),
                         ": Gradient runs in the main graph only, not inside a subgraph");
      for (const auto& kv : n.attrs) {
        if (kv.second.g) ONYX_RETURN_IF_ERROR(refuse_nested(*kv.second.g, true));
        for (const auto& sg : kv.second.graphs) ONYX_RETURN_IF_ERROR(refuse_nested(*sg, true));
      }
    }
    return Status::OK();
  };
  ONYX_RETURN_IF_ERROR(refuse_nested(g, false));
  auto it = model.opsets.find("");
  const int opset = it == model.opsets.end() ? 1 : it->second;
  std::unordered_set<std::string> names;
  for (;;) {
    // One at a time: a later Gradient may differentiate an earlier one's
    // output (second derivatives), which then must be ordinary nodes.
    size_t at = g.nodes.size();
    for (size_t i = 0; i < g.nodes.size() && at == g.nodes.size(); ++i)
      if (g.nodes[i].domain == kTrainingDomain && g.nodes[i].op_type == "Gradient") at = i;
    if (at == g.nodes.size()) break;
    if (names.empty()) CollectNames(g, &names);
    std::vector<Node> backward;
    ONYX_RETURN_IF_ERROR(GradientBuilder(g, g.nodes[at], opset, names).Build(&backward));
    g.nodes.erase(g.nodes.begin() + static_cast<std::ptrdiff_t>(at));
    for (Node& n : backward) g.nodes.push_back(std::move(n));
    ONYX_RETURN_IF_ERROR(g.Finalize());
    ONYX_RETURN_IF_ERROR(InferTypesAndShapes(g));
    ++count;
  }
  if (expanded) *expanded = count;
  return Status::OK();
}

}  // namespace onyx
