// Shape rules: element-wise unary ops, broadcasting binary/variadic ops,
// comparisons and logic, Where, Cast, and the normalisations whose main output
// has the input's shape.
#include "core/graph/shape_inference.h"

namespace onyx {
namespace shape_inference {
namespace {

// Output 0 = input 0 (type and shape).
Status SameAsInput0(InferContext& ctx) {
  if (ctx.InputElem(0) == ElemType::kUndefined) return Status::OK();
  ctx.Output(0) = ctx.Input(0);
  ctx.Output(0).inner.reset();
  return Status::OK();
}

Status SameShapeAs0(InferContext& ctx, ElemType elem) {
  if (ctx.HasShape(0)) ctx.SetTensor(0, elem, ctx.Dims(0));
  else ctx.SetTensor(0, elem);
  return Status::OK();
}

// Identity and friends also pass their load-time integer value through.
Status PassThrough(InferContext& ctx) {
  if (ctx.Input(0).kind != TypeInfo::Kind::kUnknown && ctx.Input(0).kind != TypeInfo::Kind::kTensor) {
    ctx.Output(0) = ctx.Input(0);  // Identity of a sequence/optional
    return Status::OK();
  }
  ONYX_RETURN_IF_ERROR(SameAsInput0(ctx));
  if (const IntData* d = ctx.Data(0)) ctx.SetOutputData(0, *d);
  return Status::OK();
}

bool IsIntegerType(ElemType e) {
  switch (e) {
    case ElemType::kInt8: case ElemType::kInt16: case ElemType::kInt32: case ElemType::kInt64:
    case ElemType::kUint8: case ElemType::kUint16: case ElemType::kUint32: case ElemType::kUint64:
      return true;
    default:
      return false;
  }
}

// Element type shared by inputs [first, last) that the op's type constraint
// binds together; a provable mismatch is an error.
Status CommonElem(InferContext& ctx, size_t first, size_t last, ElemType* out) {
  *out = ElemType::kUndefined;
  for (size_t i = first; i < last && i < ctx.num_inputs(); ++i) {
    ElemType e = ctx.InputElem(i);
    if (e == ElemType::kUndefined) continue;
    if (*out == ElemType::kUndefined) *out = e;
    else if (*out != e)
      return ctx.Fail(StrCat("input element types ", ElemTypeName(*out), " and ", ElemTypeName(e),
                             " differ (input types must match)"));
  }
  return Status::OK();
}

// Broadcast shape of inputs [first, last); has_shape false when any rank is unknown.
Status BroadcastInputs(InferContext& ctx, size_t first, size_t last, bool* has_shape, std::vector<Dim>* dims) {
  *has_shape = false;
  std::vector<Dim> acc;
  bool any = false;
  for (size_t i = first; i < last && i < ctx.num_inputs(); ++i) {
    if (!ctx.HasInput(i)) continue;
    if (!ctx.HasShape(i)) return Status::OK();
    if (!any) {
      acc = ctx.Dims(i);
      any = true;
      continue;
    }
    std::vector<Dim> next;
    if (!BroadcastShapes(acc, ctx.Dims(i), &next))
      return ctx.Fail(StrCat("cannot broadcast input shapes ", ctx.InputShapes()));
    acc = std::move(next);
  }
  *has_shape = any;
  *dims = std::move(acc);
  return Status::OK();
}

// Folds small integer arithmetic (shape computations) when both sides are known.
void FoldArith(InferContext& ctx) {
  const std::string& op = ctx.node().op_type;
  const IntData* a = ctx.Data(0);
  const IntData* b = ctx.Data(1);
  if (!a || !b || ctx.num_inputs() != 2) return;
  size_t n = std::max(a->size(), b->size());
  if ((a->size() != n && a->size() != 1) || (b->size() != n && b->size() != 1)) return;
  IntData r;
  r.scalar = a->scalar && b->scalar;
  for (size_t i = 0; i < n; ++i) {
    size_t ia = a->size() == 1 ? 0 : i, ib = b->size() == 1 ? 0 : i;
    bool ka = a->known[ia], kb = b->known[ib];
    int64_t x = a->v[ia], y = b->v[ib];
    if (ka && kb) {
      int64_t z = 0;
      bool ok = true;
      if (op == "Add") ok = !__builtin_add_overflow(x, y, &z);
      else if (op == "Sub") ok = !__builtin_sub_overflow(x, y, &z);
      else if (op == "Mul") ok = !__builtin_mul_overflow(x, y, &z);
      else if (op == "Div") {
        ok = y != 0 && !(x == INT64_MIN && y == -1);
        if (ok) z = x / y;  // integer Div truncates, like the kernel
      } else ok = false;
      if (ok) r.Push(z);
      else r.PushDim(Dim{});
    } else if (op == "Mul" && ka && x == 1) {
      r.PushDim(b->sym[ib]);
    } else if ((op == "Mul" || op == "Div") && kb && y == 1) {
      r.PushDim(a->sym[ia]);
    } else if ((op == "Add" || op == "Sub") && kb && y == 0) {
      r.PushDim(a->sym[ia]);
    } else {
      r.PushDim(Dim{});
    }
  }
  ctx.SetOutputData(0, std::move(r));
}

// Add, Sub, ... (all inputs share T) -> T or bool.
Status Broadcast(InferContext& ctx, bool to_bool, bool same_type) {
  ElemType e = ElemType::kUndefined;
  if (same_type) ONYX_RETURN_IF_ERROR(CommonElem(ctx, 0, ctx.num_inputs(), &e));
  else e = ctx.InputElem(0);
  bool has_shape;
  std::vector<Dim> dims;
  ONYX_RETURN_IF_ERROR(BroadcastInputs(ctx, 0, ctx.num_inputs(), &has_shape, &dims));
  ElemType out = to_bool ? ElemType::kBool : e;
  if (has_shape) ctx.SetTensor(0, out, dims);
  else ctx.SetTensor(0, out);
  if (IsIntegerType(e) && !to_bool) FoldArith(ctx);
  return Status::OK();
}

Status Where(InferContext& ctx) {
  ElemType e;
  ONYX_RETURN_IF_ERROR(CommonElem(ctx, 1, 3, &e));
  bool has_shape;
  std::vector<Dim> dims;
  ONYX_RETURN_IF_ERROR(BroadcastInputs(ctx, 0, 3, &has_shape, &dims));
  if (has_shape) ctx.SetTensor(0, e, dims);
  else ctx.SetTensor(0, e);
  return Status::OK();
}

bool CastTarget(InferContext& ctx, ElemType* out) {
  const Attribute* to = ctx.node().Attr("to");
  if (!to || to->type != Attribute::Type::kInt || to->i > INT32_MAX || !IsKnownElemType(static_cast<int32_t>(to->i)))
    return false;
  *out = static_cast<ElemType>(to->i);
  return true;
}

Status Cast(InferContext& ctx) {
  ElemType to;
  if (!CastTarget(ctx, &to)) return Status::OK();
  ONYX_RETURN_IF_ERROR(SameShapeAs0(ctx, to));
  const IntData* d = ctx.Data(0);
  if (d && (to == ElemType::kInt64 || to == ElemType::kInt32)) ctx.SetOutputData(0, *d);
  return Status::OK();
}

Status CastLike(InferContext& ctx) {
  ElemType to = ctx.InputElem(1);
  if (to == ElemType::kUndefined) return Status::OK();
  return SameShapeAs0(ctx, to);
}

Status ToBool(InferContext& ctx) { return SameShapeAs0(ctx, ElemType::kBool); }

// Dropout: output, optional bool mask of the same shape.
Status Dropout(InferContext& ctx) {
  ONYX_RETURN_IF_ERROR(SameAsInput0(ctx));
  if (ctx.HasOutput(1)) {
    TypeInfo mask = ctx.Output(0);
    if (mask.kind == TypeInfo::Kind::kTensor) {
      // Dropout-1..9 typed the mask like the input; bool since opset 10.
      mask.elem = ctx.opset() >= 10 ? ElemType::kBool : mask.elem;
      ctx.Output(1) = mask;
    } else if (ctx.opset() >= 10) {
      ctx.SetTensor(1, ElemType::kBool);
    }
  }
  return Status::OK();
}

// LayerNormalization: Y like X; Mean/InvStdDev of stash_type with the
// normalised axes kept as 1.
Status LayerNorm(InferContext& ctx) {
  ONYX_RETURN_IF_ERROR(SameAsInput0(ctx));
  int64_t stash = ctx.node().AttrInt("stash_type", 1);
  if (stash > INT32_MAX || !IsKnownElemType(static_cast<int32_t>(stash))) return Status::OK();
  ElemType se = static_cast<ElemType>(stash);
  for (size_t o = 1; o < 3; ++o) {
    if (!ctx.HasOutput(o)) continue;
    int64_t axis;
    if (ctx.HasShape(0) && NormalizeAxis(ctx.node().AttrInt("axis", -1), ctx.Rank(0), &axis)) {
      std::vector<Dim> dims = ctx.Dims(0);
      for (size_t i = static_cast<size_t>(axis); i < dims.size(); ++i) dims[i] = Dim::Of(1);
      ctx.SetTensor(o, se, dims);
    } else {
      ctx.SetTensor(o, se);
    }
  }
  return Status::OK();
}

// com.microsoft SkipLayerNormalization: output and input_skip_bias_sum like
// input; mean and inv_std_var float with input's dims, the last one 1.
Status SkipLayerNorm(InferContext& ctx) {
  ONYX_RETURN_IF_ERROR(SameAsInput0(ctx));
  if (ctx.HasOutput(3) && ctx.InputElem(0) != ElemType::kUndefined) ctx.Output(3) = ctx.Output(0);
  for (size_t o = 1; o < 3; ++o) {
    if (!ctx.HasOutput(o)) continue;
    if (ctx.HasShape(0) && ctx.Rank(0) >= 1) {
      std::vector<Dim> dims = ctx.Dims(0);
      dims.back() = Dim::Of(1);
      ctx.SetTensor(o, ElemType::kFloat, dims);
    } else {
      ctx.SetTensor(o, ElemType::kFloat);
    }
  }
  return Status::OK();
}

// BatchNormalization: Y like X; training-mode extras typed like mean/var.
Status BatchNorm(InferContext& ctx) {
  ONYX_RETURN_IF_ERROR(SameAsInput0(ctx));
  for (size_t o = 1; o < ctx.num_outputs(); ++o) {
    size_t src = o <= 2 ? 2 + o : 1;  // running mean/var like inputs 3/4; saved stats like scale
    if (src >= ctx.num_inputs() || ctx.InputElem(src) == ElemType::kUndefined) continue;
    if (ctx.HasShape(src)) ctx.SetTensor(o, ctx.InputElem(src), ctx.Dims(src));
    else ctx.SetTensor(o, ctx.InputElem(src));
  }
  return Status::OK();
}

}  // namespace

void RegisterElementwiseRules(RuleMap& m) {
  // Default-domain operators whose output is shaped like input 0 (Relu,
  // Softmax, Trilu, ...) take ONNX's own schema inference; only operators
  // ONNX's library has no schema for keep a rule here.
  for (const char* op : {"com.microsoft:Gelu", "com.microsoft:FastGelu", "com.microsoft:QuickGelu",
                         "com.microsoft:BiasGelu", "com.microsoft:BiasAdd", "com.microsoft:RotaryEmbedding"})
    m[op] = SameAsInput0;
  // onnxruntime's BiasSplitGelu: X [N, S, D] -> [N, S, D / 2].
  m["com.microsoft:BiasSplitGelu"] = [](InferContext& c) {
    if (c.InputElem(0) == ElemType::kUndefined) return Status::OK();
    if (!c.HasShape(0) || c.Rank(0) != 3) {
      c.SetTensor(0, c.InputElem(0));
      return Status::OK();
    }
    std::vector<Dim> dims = c.Dims(0);
    dims[2] = dims[2].known() ? Dim::Of(dims[2].value / 2) : Dim{};
    c.SetTensor(0, c.InputElem(0), dims);
    return Status::OK();
  };
  for (const char* op : {"Identity", "Dropout"}) m[op] = PassThrough;
  m["Dropout"] = Dropout;
  // (PRelu is left to ONNX's rule: before opset 7 its slope broadcast per
  // channel, not numpy-style.)
  for (const char* op : {"Add", "Sub", "Mul", "Div", "Mod", "Max", "Min", "Sum", "Mean", "BitwiseAnd", "BitwiseOr",
                         "BitwiseXor"})
    m[op] = [](InferContext& c) { return Broadcast(c, false, true); };
  m["Pow"] = [](InferContext& c) { return Broadcast(c, false, false); };
  m["BitShift"] = [](InferContext& c) { return Broadcast(c, false, true); };
  for (const char* op : {"Equal", "Greater", "Less", "GreaterOrEqual", "LessOrEqual", "And", "Or", "Xor"})
    m[op] = [](InferContext& c) { return Broadcast(c, true, true); };
  m["Not"] = ToBool;
  m["IsNaN"] = ToBool;
  m["IsInf"] = ToBool;
  m["Where"] = Where;
  m["Cast"] = Cast;
  m["CastLike"] = CastLike;
  m["LayerNormalization"] = LayerNorm;
  m["com.microsoft:SkipLayerNormalization"] = SkipLayerNorm;
  m["com.microsoft:SkipSimplifiedLayerNormalization"] = SkipLayerNorm;
  // onnxruntime's GroupNorm: Y like X; SkipGroupNorm's sum S (output 1) too.
  m["com.microsoft:GroupNorm"] = SameAsInput0;
  m["com.microsoft:SkipGroupNorm"] = [](InferContext& c) {
    ONYX_RETURN_IF_ERROR(SameAsInput0(c));
    if (c.HasOutput(1) && c.InputElem(0) != ElemType::kUndefined) c.Output(1) = c.Output(0);
    return Status::OK();
  };
  // onnxruntime's RMS norm, in the default domain: Y like X, inv_std_var (output 1) like LayerNorm's stats.
  m["SimplifiedLayerNormalization"] = LayerNorm;
  // onnxruntime's quantized elementwise ops: A (input 0) and B (input 3) broadcast, A's type.
  for (const char* op : {"com.microsoft:QLinearAdd", "com.microsoft:QLinearMul"})
    m[op] = [](InferContext& c) {
      if (c.InputElem(0) == ElemType::kUndefined) return Status::OK();
      if (!c.HasShape(0) || !c.HasShape(3)) {
        c.SetTensor(0, c.InputElem(0));
        return Status::OK();
      }
      std::vector<Dim> dims;
      if (!BroadcastShapes(c.Dims(0), c.Dims(3), &dims))
        return c.Fail(StrCat("cannot broadcast input shapes ", c.InputShapes()));
      c.SetTensor(0, c.InputElem(0), dims);
      return Status::OK();
    };
  for (const char* op : {"com.microsoft:QLinearSigmoid", "com.microsoft:QLinearLeakyRelu",
                         "com.microsoft:QLinearSoftmax"})
    m[op] = SameAsInput0;
  m["BatchNormalization"] = BatchNorm;
  // Our quantized BatchNormalization (providers/cpu/quantization/qlinear_batch_norm.cc):
  // X's shape, Y_zero_point's (input 8) type.
  m["com.onyxruntime:QLinearBatchNormalization"] = [](InferContext& c) {
    const ElemType e = c.InputElem(8);
    if (e == ElemType::kUndefined) return Status::OK();
    if (c.HasShape(0))
      c.SetTensor(0, e, c.Dims(0));
    else
      c.SetTensor(0, e);
    return Status::OK();
  };
}

}  // namespace shape_inference
}  // namespace onyx
