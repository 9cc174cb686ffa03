// onnxruntime's ORT_LOAD_CONFIG_FROM_MODEL=1: session options stored in the
// model's metadata under "ort_config", a JSON object whose "session_options"
// object may set intra_op_num_threads, inter_op_num_threads, execution_mode,
// graph_optimization_level and enable_profiling (integers); other keys are
// ignored, as onnxruntime ignores them.
#pragma once

#include "core/graph/graph.h"
#include "core/session/options.h"

namespace onyx {

// True when the environment asks for it (ORT_LOAD_CONFIG_FROM_MODEL == "1").
bool LoadConfigFromModelRequested();
// Applies the model's "ort_config" to *options (model values win). Bad JSON
// or a bad value is INVALID_ARGUMENT naming the key.
Status ApplyModelConfig(const Model& model, SessionOptions* options);

}  // namespace onyx
