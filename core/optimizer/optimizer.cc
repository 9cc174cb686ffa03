#include "core/optimizer/optimizer.h"

#include <algorithm>

#include "core/optimizer/transformer_util.h"

namespace onyx {
namespace {

struct Entry {
  TransformerInfo info;
  optimizer::TransformFn fn;
};

// Order matters only for speed to fixpoint: removing copies and folding
// constants first exposes the Conv -> BN -> activation chains to the fusions;
// LayerNorm before SkipLayerNorm and Gelu before BiasGelu, which build on them.
const std::vector<Entry>& Entries() {
  static const std::vector<Entry> kEntries = {
      // First: constant folding would turn a quantized weight's
      // DequantizeLinear into a float initializer before the fusion saw the
      // group; the DequantizeLinears left unfused fold as usual.
      {{"qdq_fusion", "QDQSelectorActionTransformer", kOptimizeExtended}, optimizer::FuseQdq},
      {{"identity_elimination", "EliminateIdentity", kOptimizeBasic}, optimizer::EliminateIdentities},
      {{"shape_folding", "ShapeToInitializer", kOptimizeBasic}, optimizer::FoldShapes},
      {{"constant_folding", "ConstantFolding", kOptimizeBasic}, optimizer::FoldConstants},
      {{"cast_elimination", "CastElimination", kOptimizeBasic}, optimizer::EliminateCasts},
      {{"reshape_fusion", "ReshapeFusion", kOptimizeBasic}, optimizer::FuseReshapes},
      {{"transpose_optimizer", "TransposeOptimizer", kOptimizeBasic}, optimizer::OptimizeTransposes},
      {{"conv_bn_fusion", "ConvBNFusion", kOptimizeExtended}, optimizer::FuseConvBatchNorm},
      {{"conv_add_fusion", "ConvAddFusion", kOptimizeExtended}, optimizer::FuseConvAdd},
      {{"conv_activation_fusion", "ConvActivationFusion", kOptimizeExtended}, optimizer::FuseConvActivation},
      {{"matmul_add_fusion", "MatMulAddFusion", kOptimizeExtended}, optimizer::FuseMatMulAdd},
      {{"matmul_integer_to_float_fusion", "MatMulIntegerToFloatFusion", kOptimizeExtended},
       optimizer::FuseMatMulIntegerToFloat},
      {{"gemm_activation_fusion", "GemmActivationFusion", kOptimizeExtended}, optimizer::FuseGemmActivation},
      {{"layer_norm_fusion", "LayerNormFusion", kOptimizeExtended}, optimizer::FuseLayerNorm},
      {{"skip_layer_norm_fusion", "SkipLayerNormFusion", kOptimizeExtended}, optimizer::FuseSkipLayerNorm},
      {{"gelu_fusion", "GeluFusion", kOptimizeExtended}, optimizer::FuseGelu},
      {{"bias_gelu_fusion", "BiasGeluFusion", kOptimizeExtended}, optimizer::FuseBiasGelu},
      {{"attention_fusion", "AttentionFusion", kOptimizeExtended}, optimizer::FuseAttention},
      // After attention_fusion, which takes the scaled scores' Div in whole.
      {{"matmul_scale_fusion", "MatMulScaleFusion", kOptimizeExtended}, optimizer::FuseMatMulScale},
      // Layout level, once each after the others' fixpoint, in this order:
      // operators of our own (onnxruntime cannot run a model saved with
      // them, as with its own layout level's), then the layout itself, which
      // looks for the operators in their [N, C, ...] form.
      {{"qdq_batch_norm_fusion", "QdqBatchNormFusion", kOptimizeLayout}, optimizer::FuseQdqBatchNorm},
      {{"nhwc_transformer", "NhwcTransformer", kOptimizeLayout}, optimizer::TransformNhwc},
  };
  return kEntries;
}

// Each pass removes at least one node, so this only guards against a
// transformer that keeps reporting changes it did not make.
constexpr int kMaxRounds = 16;

Status OptimizeOne(Graph& graph, const std::vector<const Entry*>& active, const OptimizerContext& ctx) {
  // Subgraphs first: their own constants may fold before the outer graph looks
  // at the node that owns them.
  for (Node& n : graph.nodes) {
    for (auto& kv : n.attrs) {
      if (kv.second.g) ONYX_RETURN_IF_ERROR(OptimizeOne(*kv.second.g, active, ctx));
      for (auto& sg : kv.second.graphs)
        if (sg) ONYX_RETURN_IF_ERROR(OptimizeOne(*sg, active, ctx));
    }
  }
  auto run = [&](const Entry* e, bool* changed) -> Status {
    bool c = false;
    Status s = e->fn(graph, ctx, &c);
    if (!s.ok())
      return Status(s.code(), StrCat("graph optimizer '", e->info.name, "' on graph '", graph.name, "': ", s.message()));
    *changed = *changed || c;
    return Status::OK();
  };
  // The others to their fixpoint first, then each layout transformer once
  // (they rewrite the operators the others look for), then the others again
  // on what the layout left (Transposes to merge, ...).
  auto rounds = [&]() -> Status {
    for (int round = 0; round < kMaxRounds; ++round) {
      bool changed = false;
      for (const Entry* e : active)
        if (e->info.level < kOptimizeLayout) ONYX_RETURN_IF_ERROR(run(e, &changed));
      if (!changed) break;
    }
    return Status::OK();
  };
  ONYX_RETURN_IF_ERROR(rounds());
  bool layout_changed = false;
  for (const Entry* e : active)
    if (e->info.level >= kOptimizeLayout) ONYX_RETURN_IF_ERROR(run(e, &layout_changed));
  if (layout_changed) ONYX_RETURN_IF_ERROR(rounds());
  optimizer::RemoveUnusedInitializers(graph);
  return Status::OK();
}

}  // namespace

const std::vector<TransformerInfo>& GraphTransformers() {
  static const std::vector<TransformerInfo> kInfos = [] {
    std::vector<TransformerInfo> v;
    for (const auto& e : Entries()) v.push_back(e.info);
    return v;
  }();
  return kInfos;
}

Status OptimizeGraph(Graph& graph, int level, const std::vector<std::string>& disabled, const OptimizerContext& ctx) {
  std::vector<const Entry*> active;
  for (const auto& e : Entries()) {
    if (e.info.level > level) continue;
    const bool off = std::any_of(disabled.begin(), disabled.end(), [&](const std::string& d) {
      return d == e.info.name || d == e.info.ort_name;
    });
    if (!off) active.push_back(&e);
  }
  if (active.empty()) return Status::OK();
  ONYX_RETURN_IF_ERROR(OptimizeOne(graph, active, ctx));
  // A broken rewrite must fail the load here, not give wrong answers later.
  if (graph.parent == nullptr) {
    Status s = graph.Finalize();
    if (!s.ok())
      return Status(ErrorCode::kEngineError, StrCat("graph optimizer left an invalid graph: ", s.message()));
  }
  return Status::OK();
}

}  // namespace onyx
