// Conversions between the engine's IR and ONNX protobuf messages, shared by the
// loader, the saver and the ONNX-library glue (schemas, function bodies). Only
// core/graph includes this header: nothing above it sees protobuf.
#pragma once

#include <map>
#include <memory>
#include <string>

#include "core/graph/graph.h"
#include "onnx-ml.pb.h"

namespace onyx {
namespace proto {

// model_loader.cc. `opsets` gives each node's since_version by its domain;
// `np` may be moved from (its tensors' bytes are taken over).
Status NodeFromProto(onnx::NodeProto& np, const Graph* owner, const std::map<std::string, int>& opsets, int index,
                     Node* out);
Status TypeFromProto(const onnx::TypeProto& tp, TypeInfo* out);

// model_saver.cc.
Status NodeToProto(const Node& n, onnx::NodeProto* out);
Status TypeToProto(const TypeInfo& t, onnx::TypeProto* out);

// onnx_schema.cc: inlines every call of a model-local function
// (ModelProto.functions, attributes passed by ref_attr_name, nested calls,
// bodies importing another default-domain opset converted to the model's),
// subgraphs included, and removes the inlined functions. A function that
// calls itself, or one that cannot be inlined, is INVALID_GRAPH naming it.
Status InlineLocalFunctions(onnx::ModelProto& mp);

}  // namespace proto
}  // namespace onyx
