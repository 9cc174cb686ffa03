// The engine's own model IR, built once from the ONNX protobuf so that nothing
// past the loader depends on protobuf.
#pragma once

#include <cstdint>
#include <map>
#include <set>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "core/framework/status.h"
#include "core/framework/tensor.h"

namespace onyx {

class Graph;

// One dimension: a known value, a symbol ("batch"), or unknown.
struct Dim {
  int64_t value = -1;
  std::string symbol;
  // ONNX dimension denotation ("DATA_BATCH", ...), kept for free-dimension overrides.
  std::string denotation;
  bool known() const { return value >= 0; }
  static Dim Of(int64_t v) { return Dim{v, {}, {}}; }
  static Dim Symbol(std::string s) { return Dim{-1, std::move(s), {}}; }
  bool operator==(const Dim& o) const { return value == o.value && symbol == o.symbol; }
};

// Type of a value as declared or inferred. For tensors, `has_shape` is false
// when the rank itself is unknown.
struct TypeInfo {
  enum class Kind { kUnknown, kTensor, kSequence, kMap, kOptional, kSparseTensor };
  Kind kind = Kind::kUnknown;
  ElemType elem = ElemType::kUndefined;
  bool has_shape = false;
  std::vector<Dim> dims;
  // Element type for sequence/optional, value type for map.
  std::shared_ptr<TypeInfo> inner;
  ElemType map_key = ElemType::kUndefined;

  static TypeInfo Tensor(ElemType e) {
    TypeInfo t;
    t.kind = Kind::kTensor;
    t.elem = e;
    return t;
  }
  static TypeInfo Tensor(ElemType e, std::vector<Dim> dims) {
    TypeInfo t = Tensor(e);
    t.has_shape = true;
    t.dims = std::move(dims);
    return t;
  }
  // onnxruntime's spelling: "tensor(float)", "seq(tensor(float))", "map(int64,tensor(float))".
  std::string ToString() const;
  // Every element type known, down to the innermost (shapes may be unknown):
  // what a TypeProto needs to be valid.
  bool IsComplete() const;
};

struct Attribute {
  enum class Type { kUndefined = 0, kFloat = 1, kInt = 2, kString = 3, kTensor = 4, kGraph = 5,
                    kFloats = 6, kInts = 7, kStrings = 8, kTensors = 9, kGraphs = 10, kTypeProto = 13 };
  Type type = Type::kUndefined;
  float f = 0.f;
  int64_t i = 0;
  std::string s;
  std::vector<float> floats;
  std::vector<int64_t> ints;
  std::vector<std::string> strings;
  std::shared_ptr<Tensor> t;
  std::vector<std::shared_ptr<Tensor>> tensors;
  std::shared_ptr<Graph> g;
  std::vector<std::shared_ptr<Graph>> graphs;
  std::shared_ptr<TypeInfo> tp;  // kTypeProto (Optional's `type`)
};

struct Node {
  std::string name;
  std::string op_type;
  std::string domain;  // "" is the default ONNX domain
  int since_version = 0;  // opset of `domain` the model imports
  std::vector<std::string> inputs;   // "" marks an omitted optional input
  std::vector<std::string> outputs;  // "" marks an omitted optional output
  std::map<std::string, Attribute> attrs;
  // Outer-scope values its subgraphs read; ordered like inputs by Finalize().
  std::vector<std::string> implicit_inputs;

  const Attribute* Attr(const std::string& key) const {
    auto it = attrs.find(key);
    return it == attrs.end() ? nullptr : &it->second;
  }
  int64_t AttrInt(const std::string& key, int64_t dflt) const;
  float AttrFloat(const std::string& key, float dflt) const;
  std::string AttrString(const std::string& key, const std::string& dflt) const;
  std::vector<int64_t> AttrInts(const std::string& key) const;
  // "node 'conv1' (Conv)": the prefix for every error about this node.
  std::string Describe() const;
};

struct ValueInfo {
  std::string name;
  TypeInfo type;
  std::string doc;
};

class Graph {
 public:
  std::string name;
  std::string doc;
  std::vector<Node> nodes;  // topologically sorted after Finalize()
  std::vector<ValueInfo> inputs;   // as declared, initializers included
  std::vector<ValueInfo> outputs;
  std::unordered_map<std::string, std::shared_ptr<Tensor>> initializers;
  std::unordered_map<std::string, TypeInfo> value_types;  // declared value_info + inferred
  // What loading let pass but a user should hear of (a declared shape our
  // inference disproves, ...): kept on the root graph, each once, for the
  // session to log as warnings (this layer has no logger).
  std::vector<std::string> warnings;
  void Warn(std::string message);
  const Graph* parent = nullptr;

  bool IsInitializer(const std::string& n) const { return initializers.count(n) != 0; }
  // Type of `name` in this graph alone (not its enclosing graphs): declared or
  // inferred, with an initializer's own dims where the declaration is vague.
  // False when the graph neither types nor holds it.
  bool LocalType(const std::string& name, TypeInfo* out) const;
  // Sorts nodes topologically and checks every value has one producer:
  // a cycle, a dangling input or an unproduced output is INVALID_GRAPH.
  // `outer_scope` holds names visible from enclosing graphs (for subgraphs).
  Status Finalize(const std::vector<std::string>& outer_scope = {});
};

struct Model {
  int64_t ir_version = 0;
  std::map<std::string, int> opsets;  // domain -> version ("" = ai.onnx)
  std::string producer_name, producer_version, domain, doc_string;
  int64_t model_version = 0;
  std::vector<std::pair<std::string, std::string>> metadata;
  std::shared_ptr<Graph> graph;
};

// Where external data may come from besides the model's folder.
struct ExternalFiles {
  // Files held in memory, by the location tensors name: read instead of the
  // file system (the buffers are borrowed, kept alive by the caller).
  std::map<std::string, std::pair<const void*, size_t>> in_memory;
  // Initializers the caller supplies (add_external_initializers): their
  // external data is not read; they load as placeholders of their type and
  // shape, without data, which the caller's tensors must replace.
  std::set<std::string> supplied;
};

// Parses an ONNX ModelProto. `model_dir` resolves external data (never outside
// it); `files`, when given, is looked up first.
Status LoadModelFromBytes(const void* data, size_t size, const std::string& model_dir, Model* out,
                          const ExternalFiles* files = nullptr);
Status LoadModelFromFile(const std::string& path, Model* out, const ExternalFiles* files = nullptr);

// Writes `model` as an ONNX ModelProto (model_saver.cc), everything the loader
// reads included; initializers are written inline, external or not. Models
// over protobuf's 2 GiB limit and the ".ort" format are NOT_IMPLEMENTED.
// The file appears complete or not at all (written beside it, then renamed).
// With `external_file` set, each initializer of at least `min_external_bytes`
// bytes (strings excepted) is written to that file (beside `path`, replaced)
// and referenced as external data.
Status SaveModel(const Model& model, const std::string& path, const std::string& external_file = "",
                 size_t min_external_bytes = 0);
Status SaveModelToString(const Model& model, std::string* bytes);

}  // namespace onyx
