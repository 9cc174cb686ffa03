#include "core/graph/onnx_schema.h"

#include <algorithm>
#include <atomic>
#include <cctype>
#include <exception>
#include <unordered_map>
#include <utility>

#include "core/graph/proto_convert.h"
#include "core/graph/shape_inference.h"
#include "onnx/defs/shape_inference.h"
#include "onnx/common/version.h"
#include "onnx/defs/schema.h"
#include "onnx/inliner/inliner.h"

namespace onyx {
namespace {

// Set once a schema lookup has returned: ONNX's registry is filled.
std::atomic<bool> g_schemas_registered{false};

const onnx::OpSchema* SchemaOf(const Node& node) {
  const onnx::OpSchema* s = onnx::OpSchemaRegistry::Schema(node.op_type, node.since_version, node.domain);
  g_schemas_registered.store(true, std::memory_order_relaxed);
  return s;
}

std::string DomainName(const std::string& d) { return d.empty() ? "ai.onnx" : d; }

// ONNX's domain -> opset range map. Registering the schemas (SchemaPreload's
// thread) writes to it, so it is read only after a schema lookup, which waits
// for that registration (a thread-safe static inside ONNX) and so orders the
// writes before our reads (ThreadSanitizer found the race).
const std::unordered_map<std::string, std::pair<int, int>>& DomainRanges() {
  (void)onnx::OpSchemaRegistry::Schema("Identity", 1, "");
  return onnx::OpSchemaRegistry::DomainToVersionRange::Instance().Map();
}

// The newest opset ONNX's library knows for `domain` ("" = ai.onnx), 0 if none.
int LatestOpset(const std::string& domain) {
  const auto& ranges = DomainRanges();
  auto it = ranges.find(domain);
  return it == ranges.end() ? 0 : it->second.second;
}

// "tensor(float)", as schema type constraints spell types; empty when the
// type is not complete.
std::string TypeString(const TypeInfo& t) {
  onnx::TypeProto tp;
  if (!t.IsComplete() || !proto::TypeToProto(t, &tp).ok()) return "";
  try {
    return *onnx::Utils::DataTypeUtils::ToType(tp);
  } catch (const std::exception&) {
    return "";
  }
}

}  // namespace

void RegisterSchemasNow() {
  // The first lookup registers every schema.
  if (g_schemas_registered.load(std::memory_order_relaxed)) return;
  (void)onnx::OpSchemaRegistry::Schema("Identity", 1, "");
  g_schemas_registered.store(true, std::memory_order_relaxed);
}

SchemaPreload::SchemaPreload() {
  if (g_schemas_registered.load(std::memory_order_relaxed)) return;
  try {
    // A lookup elsewhere meanwhile waits for it (a thread-safe static inside ONNX).
    thread_ = std::thread(RegisterSchemasNow);
  } catch (const std::exception&) {
    // No thread to be had: the first lookup registers them instead.
  }
}

SchemaPreload::~SchemaPreload() {
  if (thread_.joinable()) thread_.join();
}

Status CheckOpsetImports(const std::map<std::string, int>& opsets) {
  const auto& ranges = DomainRanges();
  for (const auto& kv : opsets) {
    const std::string& domain = kv.first;
    auto it = ranges.find(domain);
    if (it == ranges.end()) continue;
    if (kv.second > it->second.second)
      return MakeError(ErrorCode::kInvalidGraph, "the model imports opset ", kv.second, " of domain '",
                       DomainName(domain), "', but this build knows opsets up to ", it->second.second,
                       " (ONNX ", ONNX_VERSION_STRING, "): the model needs a newer runtime");
    if (kv.second < 1)
      return MakeError(ErrorCode::kInvalidGraph, "the model imports opset ", kv.second, " of domain '",
                       DomainName(domain), "', which does not exist");
  }
  return Status::OK();
}


bool HasFunctionBody(const Node& node) {
  const onnx::OpSchema* s = SchemaOf(node);
  if (s == nullptr) return false;
  if (s->HasFunction() && s->GetFunction(node.since_version, false) != nullptr) return true;
  return s->HasContextDependentFunction();
}

Status CheckNodeInputTypes(const Node& node, const std::vector<TypeInfo>& input_types) {
  const onnx::OpSchema* s = SchemaOf(node);
  if (s == nullptr) return Status::OK();
  const auto& formals = s->inputs();
  const auto& constraints = s->typeConstraintMap();
  for (size_t i = 0; i < node.inputs.size() && i < input_types.size(); ++i) {
    if (node.inputs[i].empty() || !input_types[i].IsComplete()) continue;
    if (formals.empty()) break;
    const auto& formal = formals[std::min(i, formals.size() - 1)];
    if (i >= formals.size() && formal.GetOption() != onnx::OpSchema::Variadic) break;
    std::string type = TypeString(input_types[i]);
    if (type.empty()) continue;
    auto c = constraints.find(formal.GetTypeStr());
    if (c == constraints.end()) {
      // A literal type such as "tensor(int64)" in place of a constraint name.
      if (formal.GetTypeStr() != type &&
          formal.GetTypes().find(onnx::Utils::DataTypeUtils::ToType(type)) == formal.GetTypes().end()) {
        return MakeError(ErrorCode::kInvalidGraph, node.Describe(), ", domain '", DomainName(node.domain),
                         "', opset ", node.since_version, ": input ", i, " ('", node.inputs[i], "') is ", type,
                         " but the operator takes ", formal.GetTypeStr());
      }
      continue;
    }
    const auto& allowed = c->second.first;
    if (allowed.count(onnx::Utils::DataTypeUtils::ToType(type))) continue;
    std::vector<std::string> sorted;
    for (const auto* t : allowed) sorted.push_back(*t);
    std::sort(sorted.begin(), sorted.end());
    std::string list;
    for (const auto& t : sorted) list += (list.empty() ? "" : ", ") + t;
    return MakeError(ErrorCode::kInvalidGraph, node.Describe(), ", domain '", DomainName(node.domain), "', opset ",
                     node.since_version, ": input ", i, " ('", node.inputs[i], "') has type ", type,
                     ", which type constraint ", formal.GetTypeStr(), " does not allow (allowed: ", list, ")");
  }
  return Status::OK();
}

Status ExpandFunctionBody(const Node& node, const std::vector<TypeInfo>& input_types,
                          const std::map<std::string, int>& opsets, const std::unordered_set<std::string>& reserved,
                          const Graph* owner, std::vector<Node>* out) {
  const std::string where = StrCat(node.Describe(), ", domain '", DomainName(node.domain), "', opset ",
                                   node.since_version, ": ");
  // A one-node model for ONNX's inliner: it binds attributes (ref_attr_name),
  // builds context-dependent bodies from the inputs' types, and renames every
  // value the body defines apart from the names it sees. The enclosing graphs'
  // names are handed to it as the inputs of a placeholder node it leaves alone.
  onnx::ModelProto m;
  m.set_ir_version(onnx::IR_VERSION);
  std::map<std::string, int> imports = opsets;
  imports[node.domain] = node.since_version;
  for (const auto& kv : imports) {
    auto* op = m.add_opset_import();
    op->set_domain(kv.first);
    op->set_version(kv.second);
  }
  auto* g = m.mutable_graph();
  g->set_name("expansion");
  onnx::NodeProto* call = g->add_node();
  ONYX_RETURN_IF_ERROR(proto::NodeToProto(node, call).WithContext(where));
  // Bodies refer to attributes by ref_attr_name; one the node leaves out
  // takes the schema's default, which the inliner does not know.
  if (const onnx::OpSchema* schema = SchemaOf(node)) {
    for (const auto& kv : schema->attributes()) {
      const auto& attr = kv.second;
      if (node.attrs.count(kv.first) || attr.default_value.type() == onnx::AttributeProto::UNDEFINED) continue;
      onnx::AttributeProto* a = call->add_attribute();
      *a = attr.default_value;
      a->set_name(kv.first);
    }
  }
  std::unordered_set<std::string> seen;
  bool omitted = false;
  for (size_t i = 0; i < node.inputs.size(); ++i) {
    const std::string& name = node.inputs[i];
    if (name.empty()) omitted = true;
    if (name.empty() || !seen.insert(name).second) continue;
    auto* vi = g->add_input();
    vi->set_name(name);
    if (i < input_types.size() && input_types[i].IsComplete())
      ONYX_RETURN_IF_ERROR(proto::TypeToProto(input_types[i], vi->mutable_type()));
  }
  // A context-dependent body asks the type of every input, omitted ones ("") too.
  if (omitted) g->add_input()->set_name("");
  for (const auto& name : node.outputs)
    if (!name.empty()) g->add_output()->set_name(name);
  static const char* kReservedDomain = "onyx.internal.reserved";
  auto* hold = g->add_node();
  hold->set_op_type("ReservedNames");
  hold->set_domain(kReservedDomain);
  for (const auto& name : reserved) hold->add_input(name);
  try {
    auto ids = onnx::inliner::FunctionIdSet::Create({{node.domain, node.op_type}});
    onnx::inliner::InlineSelectedFunctions(m, *ids, onnx::OpSchemaRegistry::Instance());
  } catch (const std::exception& e) {
    return MakeError(ErrorCode::kInvalidGraph, where, "cannot build its function body: ", e.what());
  }
  std::map<std::string, int> body_opsets = opsets;
  for (const auto& op : m.opset_import()) body_opsets.emplace(op.domain() == "ai.onnx" ? "" : op.domain(), op.version());
  int index = 0;
  std::vector<Node> nodes;
  for (auto& np : *g->mutable_node()) {
    if (np.domain() == kReservedDomain) continue;
    if (np.op_type() == node.op_type && np.domain() == node.domain)
      return MakeError(ErrorCode::kInvalidGraph, where, "ONNX defines no function body for it at this opset");
    std::string d = np.domain() == "ai.onnx" ? "" : np.domain();
    if (!body_opsets.count(d)) {
      int latest = LatestOpset(d);
      if (latest == 0)
        return MakeError(ErrorCode::kInvalidGraph, where, "its function body uses domain '", d,
                         "', which neither the model nor ONNX defines");
      body_opsets[d] = latest;
    }
    Node n;
    ONYX_RETURN_IF_ERROR(proto::NodeFromProto(np, owner, body_opsets, index++, &n).WithContext(where));
    n.name = node.name + "/" + n.name;
    nodes.push_back(std::move(n));
  }
  *out = std::move(nodes);
  return Status::OK();
}

namespace {

// ONNX's view of one node of our IR during inference: attributes and input
// types converted to protobuf, small integer inputs known at load (constants,
// shapes) as tensors, so that data-propagating rules (Reshape, Range, ...) see
// them; symbolic dims pass through as dim_param.
class SchemaInferenceContext final : public onnx::InferenceContext {
 public:
  explicit SchemaInferenceContext(shape_inference::InferContext& ctx) : ctx_(ctx) {
    const Node& n = ctx.node();
    ok_ = proto::NodeToProto(n, &node_).ok();
    for (const auto& a : node_.attribute()) attrs_[a.name()] = &a;
    inputs_.resize(n.inputs.size());
    has_input_type_.resize(n.inputs.size(), false);
    data_.resize(n.inputs.size());
    has_data_.resize(n.inputs.size(), false);
    for (size_t i = 0; i < n.inputs.size(); ++i) {
      if (!ctx.HasInput(i)) continue;
      const TypeInfo& t = ctx.Input(i);
      if (t.IsComplete())
        has_input_type_[i] = proto::TypeToProto(t, &inputs_[i]).ok();
      const shape_inference::IntData* d = ctx.Data(i);
      if (d != nullptr && d->AllKnown() && t.kind == TypeInfo::Kind::kTensor &&
          (t.elem == ElemType::kInt64 || t.elem == ElemType::kInt32)) {
        auto& tp = data_[i];
        tp.set_data_type(static_cast<int32_t>(t.elem));
        if (!d->scalar) tp.add_dims(static_cast<int64_t>(d->size()));
        for (int64_t v : d->v) {
          if (t.elem == ElemType::kInt64) tp.add_int64_data(v);
          else tp.add_int32_data(static_cast<int32_t>(v));
        }
        has_data_[i] = true;
      }
    }
    outputs_.resize(n.outputs.size());
  }

  bool ok() const { return ok_; }
  const onnx::AttributeProto* getAttribute(const std::string& name) const override {
    auto it = attrs_.find(name);
    return it == attrs_.end() ? nullptr : it->second;
  }
  size_t getNumInputs() const override { return inputs_.size(); }
  const onnx::TypeProto* getInputType(size_t i) const override {
    return i < inputs_.size() && has_input_type_[i] ? &inputs_[i] : nullptr;
  }
  bool hasInput(size_t i) const override { return ctx_.HasInput(i); }
  const onnx::TensorProto* getInputData(size_t i) const override {
    return i < data_.size() && has_data_[i] ? &data_[i] : nullptr;
  }
  size_t getNumOutputs() const override { return outputs_.size(); }
  onnx::TypeProto* getOutputType(size_t i) override { return i < outputs_.size() ? &outputs_[i] : nullptr; }
  bool hasOutput(size_t i) override { return ctx_.HasOutput(i); }
  onnx::GraphInferencer* getGraphAttributeInferencer(const std::string&) override { return nullptr; }
  const onnx::SparseTensorProto* getInputSparseData(size_t) const override { return nullptr; }
  const onnx::TensorShapeProto* getSymbolicInput(size_t) const override { return nullptr; }
  std::string getDisplayName() const override { return ctx_.node().Describe(); }

 private:
  shape_inference::InferContext& ctx_;
  bool ok_ = false;
  onnx::NodeProto node_;
  std::unordered_map<std::string, const onnx::AttributeProto*> attrs_;
  std::vector<onnx::TypeProto> inputs_;
  std::vector<bool> has_input_type_;
  std::vector<onnx::TensorProto> data_;
  std::vector<bool> has_data_;
  std::vector<onnx::TypeProto> outputs_;

 public:
  const std::vector<onnx::TypeProto>& outputs() const { return outputs_; }
};

}  // namespace

namespace {

// ONNX 1.23's Einsum inference never returns on some malformed equations
// ("a..b", "a-b", "a...b...->": found by fuzz_node), so a model could hang
// session creation. Only equations of the grammar reach it: letters, ','
// between terms, one "->", at most one "..." per term, spaces.
bool WellFormedEinsumEquation(const std::string& eq) {
  const size_t arrow = eq.find("->");
  if (arrow != std::string::npos && eq.find("->", arrow + 2) != std::string::npos) return false;
  size_t dots_in_term = 0;
  for (size_t i = 0; i < eq.size(); ++i) {
    const char c = eq[i];
    if (i == arrow) {
      ++i;  // the '>'
      dots_in_term = 0;
    } else if (c == ',') {
      if (arrow != std::string::npos && i > arrow) return false;
      dots_in_term = 0;
    } else if (c == '.') {
      if (eq.compare(i, 3, "...") != 0 || ++dots_in_term > 1) return false;
      i += 2;
    } else if (!std::isalpha(static_cast<unsigned char>(c)) && c != ' ') {
      return false;
    }
  }
  return true;
}

}  // namespace

bool InferWithSchema(shape_inference::InferContext& ctx) {
  const Node& node = ctx.node();
  const onnx::OpSchema* s = SchemaOf(node);
  if (s == nullptr || !s->has_type_and_shape_inference_function()) return false;
  // Left unknown; the kernel refuses the equation with its own message.
  if (node.domain.empty() && node.op_type == "Einsum" &&
      !WellFormedEinsumEquation(node.AttrString("equation", "")))
    return false;
  SchemaInferenceContext ictx(ctx);
  if (!ictx.ok()) return false;
  try {
    s->GetTypeAndShapeInferenceFunction()(ictx);
  } catch (const std::exception&) {
    // ONNX's rules are stricter than what exporters write and onnxruntime
    // runs; a rule that gives up leaves the outputs unknown, not the model refused.
    return false;
  }
  bool any = false;
  for (size_t i = 0; i < ictx.outputs().size(); ++i) {
    const onnx::TypeProto& tp = ictx.outputs()[i];
    if (tp.value_case() == onnx::TypeProto::VALUE_NOT_SET || !ctx.HasOutput(i)) continue;
    TypeInfo t;
    if (!proto::TypeFromProto(tp, &t).ok() || t.kind == TypeInfo::Kind::kUnknown) continue;
    if (t.kind == TypeInfo::Kind::kTensor && t.elem == ElemType::kUndefined) continue;
    // ONNX leaves a dim with neither value nor param for "unknown"; ours is the same.
    ctx.Output(i) = std::move(t);
    any = true;
  }
  return any;
}

namespace proto {

Status InlineLocalFunctions(onnx::ModelProto& mp) {
  if (mp.functions_size() == 0) return Status::OK();
  try {
    onnx::inliner::InlineLocalFunctions(mp, /*convert_version=*/true);
  } catch (const std::exception& e) {
    return MakeError(ErrorCode::kInvalidGraph, "cannot inline the model's local functions: ", e.what());
  }
  if (mp.functions_size() > 0) {
    const auto& f = mp.functions(0);
    return MakeError(ErrorCode::kNotImplemented, "model-local function '", f.name(), "' (domain '", f.domain(),
                     "') imports opsets that differ from the model's in a domain other than ai.onnx, so it "
                     "cannot be inlined (", mp.functions_size(), " such function(s))");
  }
  return Status::OK();
}

}  // namespace proto
}  // namespace onyx
