// Load-time graph transformations (DESIGN.md, "Life of a session", step 3).
#pragma once

#include <string>
#include <vector>

#include "core/framework/status.h"
#include "core/graph/graph.h"

namespace onyx {

class KernelRegistry;

// Levels as in SessionOptions::graph_optimization_level (onnxruntime's numbering).
constexpr int kOptimizeDisabled = 0;
constexpr int kOptimizeBasic = 1;
constexpr int kOptimizeExtended = 2;
constexpr int kOptimizeLayout = 3;
constexpr int kOptimizeAll = 99;

// Runs every transformer whose level is <= `level` until none changes the
// graph, in `graph` and in every subgraph. `disabled` names transformers to
// skip, by our name ("conv_bn_fusion") or onnxruntime's ("ConvBNFusion").
// Expects types and shapes inferred; keeps the nodes topologically sorted and
// drops initializers nothing reads any more. Results change by float rounding
// at most.
// What the transformers use from the layers above them, given by the session.
struct OptimizerContext {
  // The kernels constant folding evaluates nodes with (the session's CPU
  // provider's); null folds nothing.
  const KernelRegistry* fold_kernels = nullptr;
};

Status OptimizeGraph(Graph& graph, int level, const std::vector<std::string>& disabled, const OptimizerContext& ctx);

// Name, onnxruntime alias and level of each transformer, in the order they run.
struct TransformerInfo {
  const char* name;
  const char* ort_name;
  int level;
};
const std::vector<TransformerInfo>& GraphTransformers();

}  // namespace onyx
