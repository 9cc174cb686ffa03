// Inlines nodes that no kernel implements but ONNX defines as a function.
#pragma once

#include <functional>
#include <string>
#include <unordered_set>
#include <vector>

#include "core/graph/graph.h"

namespace onyx {

// Whether some provider has a kernel for `node` given its input types.
using KernelQuery = std::function<bool(const Node& node, const std::vector<TypeInfo>& input_types)>;

// Replaces, in `model`'s graph and its subgraphs, every node that `has_kernel`
// refuses and whose schema defines a function body with that body (built for
// the node's input types), recursively, re-running type inference between
// rounds so context-dependent bodies see the types of values earlier
// expansions made. A hand-written kernel wins over the expansion. `expanded`
// (may be null) receives the number of nodes replaced. Expansion that does not
// settle within a bound of rounds is INVALID_GRAPH.
Status ExpandFunctions(Model& model, const KernelQuery& has_kernel, int* expanded);

// Checks every node's input types (where known) against its ONNX schema's
// type constraints, subgraphs included: INVALID_GRAPH naming node, op, domain,
// opset, input and the allowed types.
Status CheckInputTypesAgainstSchemas(const Graph& graph);

// Adds every name `g` uses (values, nodes, its subgraphs' names) to `names`:
// what a rewrite must not reuse for the values it adds.
void CollectNames(const Graph& g, std::unordered_set<std::string>* names);

// The input types of `node` in `graph` (outer scopes included).
std::vector<TypeInfo> NodeInputTypes(const Graph& graph, const Node& node);

}  // namespace onyx
