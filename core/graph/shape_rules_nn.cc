// Shape rules: MatMul/Gemm and the convolution/pooling family.
#include <utility>

#include "core/graph/shape_inference.h"

namespace onyx {
namespace shape_inference {
namespace {

// `trans_a`/`trans_b` swap an operand's last two dims first (FusedMatMul).
Status MatMulShape(InferContext& ctx, ElemType out_elem, bool trans_a = false, bool trans_b = false) {
  if (!ctx.HasShape(0) || !ctx.HasShape(1)) {
    ctx.SetTensor(0, out_elem);
    return Status::OK();
  }
  std::vector<Dim> a = ctx.Dims(0), b = ctx.Dims(1);
  if (a.empty() || b.empty())
    return ctx.Fail(StrCat("inputs must have rank >= 1, got input shapes ", ctx.InputShapes()));
  if (trans_a && a.size() >= 2) std::swap(a[a.size() - 1], a[a.size() - 2]);
  if (trans_b && b.size() >= 2) std::swap(b[b.size() - 1], b[b.size() - 2]);
  bool a_vec = a.size() == 1, b_vec = b.size() == 1;
  if (a_vec) a.insert(a.begin(), Dim::Of(1));
  if (b_vec) b.push_back(Dim::Of(1));
  Dim k;
  if (!UnifyDim(a.back(), b[b.size() - 2], &k))
    return ctx.Fail(StrCat("inner dimensions ", a.back().value, " and ", b[b.size() - 2].value,
                           " do not match for input shapes ", ctx.InputShapes()));
  std::vector<Dim> batch;
  if (!BroadcastShapes(std::vector<Dim>(a.begin(), a.end() - 2), std::vector<Dim>(b.begin(), b.end() - 2), &batch))
    return ctx.Fail(StrCat("cannot broadcast the batch dimensions of input shapes ", ctx.InputShapes()));
  if (!a_vec) batch.push_back(a[a.size() - 2]);
  if (!b_vec) batch.push_back(b.back());
  ctx.SetTensor(0, out_elem, batch);
  return Status::OK();
}

Status MatMul(InferContext& ctx) {
  ElemType a = ctx.InputElem(0), b = ctx.InputElem(1);
  if (a != ElemType::kUndefined && b != ElemType::kUndefined && a != b)
    return ctx.Fail(StrCat("input element types ", ElemTypeName(a), " and ", ElemTypeName(b), " differ"));
  ElemType e = a != ElemType::kUndefined ? a : b;
  if (e == ElemType::kUndefined) return Status::OK();
  return MatMulShape(ctx, e);
}

Status MatMulInteger(InferContext& ctx) { return MatMulShape(ctx, ElemType::kInt32); }

Status Gemm(InferContext& ctx) {
  ElemType e = ctx.InputElem(0) != ElemType::kUndefined ? ctx.InputElem(0) : ctx.InputElem(1);
  if (ctx.InputElem(0) != ElemType::kUndefined && ctx.InputElem(1) != ElemType::kUndefined &&
      ctx.InputElem(0) != ctx.InputElem(1))
    return ctx.Fail(StrCat("input element types ", ElemTypeName(ctx.InputElem(0)), " and ",
                           ElemTypeName(ctx.InputElem(1)), " differ"));
  if (e == ElemType::kUndefined) return Status::OK();
  if (!ctx.HasShape(0) || !ctx.HasShape(1)) {
    ctx.SetTensor(0, e);
    return Status::OK();
  }
  const auto& a = ctx.Dims(0);
  const auto& b = ctx.Dims(1);
  if (a.size() != 2 || b.size() != 2)
    return ctx.Fail(StrCat("A and B must be 2-D, got input shapes ", ctx.InputShapes()));
  bool ta = ctx.node().AttrInt("transA", 0) != 0, tb = ctx.node().AttrInt("transB", 0) != 0;
  Dim m = ta ? a[1] : a[0], ka = ta ? a[0] : a[1];
  Dim kb = tb ? b[1] : b[0], n = tb ? b[0] : b[1];
  Dim k;
  if (!UnifyDim(ka, kb, &k))
    return ctx.Fail(StrCat("inner dimensions ", ka.value, " and ", kb.value, " do not match for input shapes ",
                           ctx.InputShapes(), " (transA=", ta, ", transB=", tb, ")"));
  std::vector<Dim> out{m, n};
  if (ctx.HasShape(2)) {
    const auto& c = ctx.Dims(2);
    std::vector<Dim> bc;
    // C broadcasts one way: to [M, N], never the other way.
    if (c.size() > 2 || !BroadcastShapes(out, c, &bc))
      return ctx.Fail(StrCat("C cannot be broadcast to [M,N] = ", DimsString(out), " (input shapes ",
                             ctx.InputShapes(), ")"));
    for (size_t i = 0; i < 2; ++i)
      if (!out[i].known() && bc[i].known() && bc[i].value != 1) out[i] = bc[i];
  }
  ctx.SetTensor(0, e, out);
  return Status::OK();
}

struct ConvAttrs {
  std::vector<int64_t> kernel, strides, dilations, pads;
  std::string auto_pad;
};

// Reads kernel/strides/dilations/pads for `n` spatial dims; false with `err`
// when an attribute is malformed, true with an empty kernel when unknown.
bool ReadConvAttrs(InferContext& ctx, size_t n, std::vector<int64_t> kernel, ConvAttrs* a, std::string* err) {
  const Node& node = ctx.node();
  a->kernel = std::move(kernel);
  a->strides = node.AttrInts("strides");
  a->dilations = node.AttrInts("dilations");
  a->pads = node.AttrInts("pads");
  a->auto_pad = node.AttrString("auto_pad", "NOTSET");
  if (a->strides.empty()) a->strides.assign(n, 1);
  if (a->dilations.empty()) a->dilations.assign(n, 1);
  if (a->pads.empty()) a->pads.assign(2 * n, 0);
  if (!a->kernel.empty() && a->kernel.size() != n) {
    *err = StrCat("kernel_shape has ", a->kernel.size(), " values for ", n, " spatial dims");
    return false;
  }
  if (a->strides.size() != n || a->dilations.size() != n || a->pads.size() != 2 * n) {
    *err = StrCat("strides/dilations need ", n, " values and pads ", 2 * n, " for ", n, " spatial dims");
    return false;
  }
  for (size_t i = 0; i < n; ++i) {
    if (a->strides[i] < 1 || a->dilations[i] < 1 || (!a->kernel.empty() && a->kernel[i] < 1) ||
        a->pads[i] < 0 || a->pads[i + n] < 0) {
      *err = "strides, dilations and kernel_shape must be positive and pads non-negative";
      return false;
    }
  }
  if (a->auto_pad != "NOTSET" && a->auto_pad != "VALID" && a->auto_pad != "SAME_UPPER" && a->auto_pad != "SAME_LOWER") {
    *err = StrCat("unknown auto_pad '", a->auto_pad, "'");
    return false;
  }
  return true;
}

// Spatial output dims of a convolution or pooling window.
Status SpatialOut(InferContext& ctx, const std::vector<Dim>& in, const ConvAttrs& a, bool ceil_mode,
                  std::vector<Dim>* out) {
  size_t n = in.size();
  out->assign(n, Dim{});
  for (size_t i = 0; i < n; ++i) {
    if (!in[i].known() || a.kernel.empty()) continue;
    int64_t x = in[i].value, s = a.strides[i];
    if (a.auto_pad == "SAME_UPPER" || a.auto_pad == "SAME_LOWER") {
      (*out)[i] = Dim::Of((x + s - 1) / s);
      continue;
    }
    int64_t pb = a.auto_pad == "VALID" ? 0 : a.pads[i], pe = a.auto_pad == "VALID" ? 0 : a.pads[i + n];
    int64_t dk, span;
    if (__builtin_mul_overflow(a.kernel[i] - 1, a.dilations[i], &dk) || __builtin_add_overflow(dk, 1, &dk) ||
        __builtin_add_overflow(x, pb + pe, &span))
      continue;
    if (span < dk)
      return ctx.Fail(StrCat("the kernel (", dk, " with dilation) is larger than padded spatial dim ", i, " (", span,
                             ") of input shapes ", ctx.InputShapes()));
    int64_t o = ceil_mode ? (span - dk + s - 1) / s + 1 : (span - dk) / s + 1;
    // With ceil_mode the last window must start inside the input or left pad.
    if (ceil_mode && (o - 1) * s >= x + pb) --o;
    (*out)[i] = Dim::Of(o);
  }
  return Status::OK();
}

Status Conv(InferContext& ctx) {
  ElemType e;
  if (!StartShapedRule(ctx, &e)) return Status::OK();
  const auto& x = ctx.Dims(0);
  if (x.size() < 3)
    return ctx.Fail(StrCat("input X must have rank >= 3 (N, C, spatial...), got input shapes ", ctx.InputShapes()));
  size_t n = x.size() - 2;
  std::vector<int64_t> kernel = ctx.node().AttrInts("kernel_shape");
  bool w_shape = ctx.HasShape(1);
  if (w_shape && ctx.Dims(1).size() != x.size())
    return ctx.Fail(StrCat("X and W must have the same rank, got input shapes ", ctx.InputShapes()));
  if (kernel.empty() && w_shape) {
    for (size_t i = 0; i < n; ++i) {
      const Dim& d = ctx.Dims(1)[i + 2];
      if (!d.known()) { kernel.clear(); break; }
      kernel.push_back(d.value);
    }
  }
  ConvAttrs a;
  std::string err;
  if (!ReadConvAttrs(ctx, n, kernel, &a, &err)) return ctx.Fail(err);
  int64_t group = ctx.node().AttrInt("group", 1);
  if (group < 1) return ctx.Fail(StrCat("group must be positive, got ", group));
  std::vector<Dim> out{x[0], Dim{}};
  if (w_shape) {
    const auto& w = ctx.Dims(1);
    out[1] = w[0];
    int64_t wc;
    if (x[1].known() && w[1].known() && !__builtin_mul_overflow(w[1].value, group, &wc) && wc != x[1].value)
      return ctx.Fail(StrCat("input channels ", x[1].value, " do not match W's ", w[1].value, " x group ", group,
                             " (input shapes ", ctx.InputShapes(), ")"));
    if (w[0].known() && w[0].value % group != 0)
      return ctx.Fail(StrCat("output channels ", w[0].value, " are not a multiple of group ", group));
  }
  std::vector<Dim> sp;
  ONYX_RETURN_IF_ERROR(SpatialOut(ctx, std::vector<Dim>(x.begin() + 2, x.end()), a, false, &sp));
  out.insert(out.end(), sp.begin(), sp.end());
  ctx.SetTensor(0, e, out);
  return Status::OK();
}

Status ConvTranspose(InferContext& ctx) {
  ElemType e = ctx.InputElem(0);
  if (e == ElemType::kUndefined) return Status::OK();
  if (!ctx.HasShape(0) || ctx.Dims(0).size() < 3) {
    ctx.SetTensor(0, e);
    return Status::OK();
  }
  const auto& x = ctx.Dims(0);
  size_t n = x.size() - 2;
  std::vector<int64_t> kernel = ctx.node().AttrInts("kernel_shape");
  bool w_shape = ctx.HasShape(1) && ctx.Dims(1).size() == x.size();
  if (kernel.empty() && w_shape) {
    for (size_t i = 0; i < n; ++i) {
      const Dim& d = ctx.Dims(1)[i + 2];
      if (!d.known()) { kernel.clear(); break; }
      kernel.push_back(d.value);
    }
  }
  int64_t group = ctx.node().AttrInt("group", 1);
  std::vector<Dim> out{x[0], Dim{}};
  if (w_shape && group >= 1) {
    const Dim& wo = ctx.Dims(1)[1];
    int64_t m;
    if (wo.known() && !__builtin_mul_overflow(wo.value, group, &m)) out[1] = Dim::Of(m);
  }
  ConvAttrs a;
  std::string err;
  std::vector<int64_t> out_pad = ctx.node().AttrInts("output_padding");
  std::vector<int64_t> out_shape = ctx.node().AttrInts("output_shape");
  if (!ReadConvAttrs(ctx, n, kernel, &a, &err) || (!out_pad.empty() && out_pad.size() != n)) {
    out.resize(x.size());  // odd attributes: leave spatial dims unknown
    ctx.SetTensor(0, e, out);
    return Status::OK();
  }
  for (size_t i = 0; i < n; ++i) {
    Dim d;
    if (out_shape.size() == n) {
      d = out_shape[i] >= 0 ? Dim::Of(out_shape[i]) : Dim{};
    } else if (out_shape.size() == n + 2) {
      d = out_shape[i + 2] >= 0 ? Dim::Of(out_shape[i + 2]) : Dim{};
    } else if (x[i + 2].known() && !a.kernel.empty()) {
      int64_t in = x[i + 2].value, s = a.strides[i];
      int64_t op = out_pad.empty() ? 0 : out_pad[i];
      if (a.auto_pad == "SAME_UPPER" || a.auto_pad == "SAME_LOWER") {
        d = Dim::Of(in * s);
      } else {
        int64_t pads = a.auto_pad == "VALID" ? 0 : a.pads[i] + a.pads[i + n];
        int64_t v = s * (in - 1) + op + (a.kernel[i] - 1) * a.dilations[i] + 1 - pads;
        if (v >= 0) d = Dim::Of(v);
      }
    }
    out.push_back(d);
  }
  ctx.SetTensor(0, e, out);
  return Status::OK();
}

// MaxPool, AveragePool and their quantized and channels-last forms:
// onnxruntime's com.microsoft NhwcMaxPool reads X [N, spatial..., C].
Status Pool(InferContext& ctx) {
  ElemType e = ctx.InputElem(0);
  if (e == ElemType::kUndefined) return Status::OK();
  const bool is_max = ctx.node().op_type == "MaxPool";
  const bool last = ctx.node().op_type == "NhwcMaxPool";
  auto set_unknown = [&]() {
    ctx.SetTensor(0, e);
    if (is_max && ctx.HasOutput(1)) ctx.SetTensor(1, ElemType::kInt64);
  };
  if (!ctx.HasShape(0)) {
    set_unknown();
    return Status::OK();
  }
  const auto& x = ctx.Dims(0);
  if (x.size() < 3)
    return ctx.Fail(StrCat("input X must have rank >= 3 (", last ? "N, spatial..., C" : "N, C, spatial...",
                           "), got input shapes ", ctx.InputShapes()));
  size_t n = x.size() - 2;
  std::vector<int64_t> kernel = ctx.node().AttrInts("kernel_shape");
  if (kernel.empty()) return ctx.Fail("attribute kernel_shape is required");
  ConvAttrs a;
  std::string err;
  if (!ReadConvAttrs(ctx, n, kernel, &a, &err)) return ctx.Fail(err);
  std::vector<Dim> out{x[0]};
  if (!last) out.push_back(x[1]);
  std::vector<Dim> sp;
  ONYX_RETURN_IF_ERROR(SpatialOut(ctx, std::vector<Dim>(x.begin() + (last ? 1 : 2), x.end() - (last ? 1 : 0)), a,
                                  ctx.node().AttrInt("ceil_mode", 0) != 0, &sp));
  out.insert(out.end(), sp.begin(), sp.end());
  if (last) out.push_back(x.back());
  ctx.SetTensor(0, e, out);
  if (is_max && ctx.HasOutput(1)) ctx.SetTensor(1, ElemType::kInt64, out);
  return Status::OK();
}

// onnxruntime's com.microsoft QLinearConv: ONNX QLinearConv's inputs (x,
// x_scale, x_zero_point, w, ..., y_zero_point, B); channels_last=1 makes x
// [N, spatial..., C] and y [N, out..., M]. y has y_zero_point's type.
Status QLinearConvContrib(InferContext& ctx) {
  const ElemType e = ctx.InputElem(7);
  if (e == ElemType::kUndefined) return Status::OK();
  if (!ctx.HasShape(0)) {
    ctx.SetTensor(0, e);
    return Status::OK();
  }
  const bool cl = ctx.node().AttrInt("channels_last", 0) != 0;
  const auto& x = ctx.Dims(0);
  if (x.size() < 3)
    return ctx.Fail(StrCat("input x must have rank >= 3 (", cl ? "N, spatial..., C" : "N, C, spatial...",
                           "), got input shapes ", ctx.InputShapes()));
  const size_t n = x.size() - 2;
  std::vector<int64_t> kernel = ctx.node().AttrInts("kernel_shape");
  const bool w_shape = ctx.HasShape(3) && ctx.Dims(3).size() == x.size();
  if (kernel.empty() && w_shape) {
    for (size_t i = 0; i < n; ++i) {
      const Dim& d = ctx.Dims(3)[i + 2];
      if (!d.known()) { kernel.clear(); break; }
      kernel.push_back(d.value);
    }
  }
  if (kernel.empty()) {
    ctx.SetTensor(0, e);
    return Status::OK();
  }
  ConvAttrs a;
  std::string err;
  if (!ReadConvAttrs(ctx, n, kernel, &a, &err)) return ctx.Fail(err);
  std::vector<Dim> sp;
  ONYX_RETURN_IF_ERROR(SpatialOut(ctx, std::vector<Dim>(x.begin() + (cl ? 1 : 2), x.end() - (cl ? 1 : 0)), a, false,
                                  &sp));
  const Dim m = w_shape ? ctx.Dims(3)[0] : Dim{};
  std::vector<Dim> out{x[0]};
  if (!cl) out.push_back(m);
  out.insert(out.end(), sp.begin(), sp.end());
  if (cl) out.push_back(m);
  ctx.SetTensor(0, e, out);
  return Status::OK();
}

Status GlobalPool(InferContext& ctx) {
  ElemType e;
  if (!StartShapedRule(ctx, &e)) return Status::OK();
  const auto& x = ctx.Dims(0);
  if (x.size() < 2)
    return ctx.Fail(StrCat("input X must have rank >= 2 (N, C, ...), got input shapes ", ctx.InputShapes()));
  std::vector<Dim> out{x[0], x[1]};
  out.resize(x.size(), Dim::Of(1));
  ctx.SetTensor(0, e, out);
  return Status::OK();
}

}  // namespace

void RegisterNnRules(RuleMap& m) {
  m["MatMul"] = MatMul;
  m["com.microsoft:GemmFastGelu"] = MatMul;  // FastGelu(X x W + bias): MatMul's shape and type
  m["MatMulInteger"] = MatMulInteger;
  // onnxruntime's quantized MatMuls with a float result.
  for (const char* op : {"com.microsoft:MatMulIntegerToFloat", "com.microsoft:DynamicQuantizeMatMul"})
    m[op] = [](InferContext& c) { return MatMulShape(c, ElemType::kFloat); };
  // onnxruntime's transformer optimizer: alpha * op(A) x op(B).
  m["com.microsoft:FusedMatMul"] = [](InferContext& c) {
    ElemType e = c.InputElem(0) != ElemType::kUndefined ? c.InputElem(0) : c.InputElem(1);
    if (e == ElemType::kUndefined) return Status::OK();
    return MatMulShape(c, e, c.node().AttrInt("transA", 0) != 0, c.node().AttrInt("transB", 0) != 0);
  };
  // onnxruntime's sparse A x dense B (A arrives densified): B's element type.
  m["com.microsoft:SparseToDenseMatMul"] = [](InferContext& c) {
    ElemType e = c.InputElem(1);
    if (e == ElemType::kUndefined) return Status::OK();
    return MatMulShape(c, e, c.node().AttrInt("transA", 0) != 0, c.node().AttrInt("transB", 0) != 0);
  };
  m["Gemm"] = Gemm;
  m["Conv"] = Conv;
  // onnxruntime's Conv + activation (+ sum): Conv's shapes.
  m["com.microsoft:FusedConv"] = Conv;
  m["com.microsoft:QLinearConv"] = QLinearConvContrib;
  m["ConvTranspose"] = ConvTranspose;
  m["MaxPool"] = Pool;
  m["AveragePool"] = Pool;
  m["LpPool"] = Pool;
  m["GlobalAveragePool"] = GlobalPool;
  m["GlobalMaxPool"] = GlobalPool;
  m["GlobalLpPool"] = GlobalPool;
  // onnxruntime's quantized pools: X (input 0) pooled, X's type.
  m["com.microsoft:QLinearAveragePool"] = Pool;
  m["com.microsoft:NhwcMaxPool"] = Pool;
  m["com.microsoft:QLinearGlobalAveragePool"] = [](InferContext& c) {
    if (c.node().AttrInt("channels_last", 0) == 0) return GlobalPool(c);
    ElemType e;
    if (!StartShapedRule(c, &e)) return Status::OK();
    std::vector<Dim> out = c.Dims(0);
    for (size_t i = 1; i + 1 < out.size(); ++i) out[i] = Dim::Of(1);
    c.SetTensor(0, e, out);
    return Status::OK();
  };
  // onnxruntime's fused self-attention: output [B, S, Dv], present [2, B, N, P + S, H].
  m["com.microsoft:Attention"] = [](InferContext& c) {
    if (!c.HasShape(0) || c.Rank(0) != 3) {
      c.SetTensor(0, ElemType::kFloat);
      return Status::OK();
    }
    const auto& x = c.Dims(0);
    const std::vector<int64_t> qkv = c.node().AttrInts("qkv_hidden_sizes");
    const int64_t heads = c.node().AttrInt("num_heads", 0);
    Dim dv, head;
    if (qkv.size() == 3) {
      dv = Dim::Of(qkv[2]);
      if (heads > 0) head = Dim::Of(qkv[1] / heads);
    } else if (c.HasShape(1) && c.Rank(1) == 2 && c.Dims(1)[1].known()) {
      dv = Dim::Of(c.Dims(1)[1].value / 3);
      if (heads > 0) head = Dim::Of(c.Dims(1)[1].value / 3 / heads);
    }
    c.SetTensor(0, ElemType::kFloat, {x[0], x[1], dv});
    if (c.HasOutput(1)) {
      Dim total;
      if (!c.HasInput(4) && x[1].known()) total = x[1];
      else if (c.HasInput(4) && c.HasShape(4) && c.Rank(4) == 5 && c.Dims(4)[3].known() && x[1].known())
        total = Dim::Of(c.Dims(4)[3].value + x[1].value);
      c.SetTensor(1, ElemType::kFloat, {Dim::Of(2), x[0], heads > 0 ? Dim::Of(heads) : Dim{}, total, head});
    }
    return Status::OK();
  };
  // onnxruntime's MultiHeadAttention: output [B, S, Dv] (Dv from a 3-D value,
  // else the query's hidden size when neither key nor value is 4-D), query's type.
  m["com.microsoft:MultiHeadAttention"] = [](InferContext& c) {
    const ElemType e = c.InputElem(0);
    if (e == ElemType::kUndefined) return Status::OK();
    if (!c.HasShape(0) || (c.Rank(0) != 3 && c.Rank(0) != 5)) {
      c.SetTensor(0, e);
      return Status::OK();
    }
    const auto& q = c.Dims(0);
    Dim dv;
    if (c.HasInput(2) && c.HasShape(2) && c.Rank(2) == 3) dv = c.Dims(2)[2];
    else if (!c.HasInput(2) && c.Rank(0) == 3 && (!c.HasInput(1) || (c.HasShape(1) && c.Rank(1) == 5))) dv = q[2];
    c.SetTensor(0, e, {q[0], q[1], dv});
    return Status::OK();
  };
  // onnxruntime's fused BERT embeddings: output and embedding_sum [B, S, H], mask_index [B] int32.
  m["com.microsoft:EmbedLayerNormalization"] = [](InferContext& c) {
    Dim b, s, h;
    if (c.HasShape(0) && c.Rank(0) == 2) {
      b = c.Dims(0)[0];
      s = c.Dims(0)[1];
    }
    if (c.HasShape(2) && c.Rank(2) == 2) h = c.Dims(2)[1];
    c.SetTensor(0, ElemType::kFloat, {b, s, h});
    if (c.HasOutput(1)) c.SetTensor(1, ElemType::kInt32, {b});
    if (c.HasOutput(2)) c.SetTensor(2, ElemType::kFloat, {b, s, h});
    return Status::OK();
  };
  // onnxruntime's blockwise-quantized MatMul: A's dims with the last one N, A's type.
  m["com.microsoft:MatMulNBits"] = [](InferContext& c) {
    ElemType e;
    if (!StartShapedRule(c, &e)) return Status::OK();
    std::vector<Dim> out = c.Dims(0);
    const int64_t n = c.node().AttrInt("N", -1);
    if (!out.empty()) out.back() = n > 0 ? Dim::Of(n) : Dim{};
    c.SetTensor(0, e, out);
    return Status::OK();
  };
  // onnxruntime's Gemm + activation: Gemm's shapes.
  m["com.microsoft:FusedGemm"] = Gemm;
  // onnxruntime's quantized Gemm: [M, N] of y_zero_point's type, float without it.
  m["com.microsoft:QGemm"] = [](InferContext& c) {
    ElemType e = ElemType::kFloat;
    if (c.HasInput(8)) {
      e = c.InputElem(8);
      if (e == ElemType::kUndefined) return Status::OK();
    }
    if (!c.HasShape(0) || !c.HasShape(3)) {
      c.SetTensor(0, e);
      return Status::OK();
    }
    const auto& a = c.Dims(0);
    const auto& b = c.Dims(3);
    if (a.size() != 2 || b.size() != 2)
      return c.Fail(StrCat("A and B must be 2-D, got input shapes ", c.InputShapes()));
    const bool ta = c.node().AttrInt("transA", 0) != 0, tb = c.node().AttrInt("transB", 0) != 0;
    Dim k;
    if (!UnifyDim(ta ? a[0] : a[1], tb ? b[1] : b[0], &k))
      return c.Fail(StrCat("inner dimensions of input 0 (A) and input 3 (B) do not match for input shapes ",
                           c.InputShapes(), " (transA=", ta, ", transB=", tb, ")"));
    c.SetTensor(0, e, {ta ? a[1] : a[0], tb ? b[0] : b[1]});
    return Status::OK();
  };
}

}  // namespace shape_inference
}  // namespace onyx
