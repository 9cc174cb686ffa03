// What the engine asks of ONNX's own C++ library (onnx/defs): opset ranges,
// operator schemas, their type constraints and their function bodies. The one
// place that includes onnx's schema headers; nothing here knows providers.
#pragma once

#include <map>
#include <string>
#include <thread>
#include <unordered_set>
#include <vector>

#include "core/framework/status.h"
#include "core/graph/graph.h"

namespace onyx {

namespace shape_inference {
class InferContext;
}

// ONNX registers all its operator schemas on first use, once per process
// (about 9 ms of one core: most of a small model's first session). A
// SchemaPreload made before a model is read starts that registration on a
// second thread, so it overlaps reading and parsing the model; whatever
// needs a schema first waits for it. Its destructor joins the thread, so no
// thread outlives the call that made it (nothing runs at process exit).
class SchemaPreload {
 public:
  SchemaPreload();
  ~SchemaPreload();
  SchemaPreload(const SchemaPreload&) = delete;
  SchemaPreload& operator=(const SchemaPreload&) = delete;

 private:
  std::thread thread_;
};

// Registers ONNX's schemas now, on this thread (a no-op once done).
void RegisterSchemasNow();

// Refuses an opset import newer than the ONNX library knows, for the domains it
// knows (ai.onnx, ai.onnx.ml, ai.onnx.training, ai.onnx.preview.training), as
// onnxruntime refuses it. Other domains (com.microsoft, a model's own) pass.
Status CheckOpsetImports(const std::map<std::string, int>& opsets);

// Whether ONNX defines `node` (at its opset) with a function body, plain or
// built for the node's types and attributes (context-dependent).
bool HasFunctionBody(const Node& node);

// Checks the types of the node's inputs against its schema's type constraints:
// INVALID_GRAPH naming node, input and the allowed types. Unknown types, nodes
// without a schema and variadic inputs of mixed types pass.
Status CheckNodeInputTypes(const Node& node, const std::vector<TypeInfo>& input_types);

// The nodes of `node`'s function body, built for `input_types` (one per input,
// kind kUnknown where not known), with the node's attributes bound and every
// value it defines renamed apart from `reserved` (names of the enclosing
// graphs). Body nodes are named "<node name>/<their own name or op_k>" and
// resolve their opset against `opsets` (the latest known for a domain the
// model does not import). `owner` becomes the parent of their subgraphs.
Status ExpandFunctionBody(const Node& node, const std::vector<TypeInfo>& input_types,
                          const std::map<std::string, int>& opsets, const std::unordered_set<std::string>& reserved,
                          const Graph* owner, std::vector<Node>* out);

// Runs the node's ONNX schema inference function over our IR (for operators
// without a rule of our own) and fills ctx's outputs. False when there is no
// schema or function, or when ONNX's rule gave up (the outputs stay unknown).
bool InferWithSchema(shape_inference::InferContext& ctx);

}  // namespace onyx
