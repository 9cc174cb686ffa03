#include "core/session/session.h"

#include "core/graph/onnx_schema.h"

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <unordered_map>

#include "core/framework/blas_threads.h"
#include "core/framework/limited_allocator.h"
#include "core/framework/logging.h"
#include "core/graph/function_expansion.h"
#include "core/graph/gradient_expansion.h"
#include "core/session/providers_query.h"
#include "core/graph/shape_inference.h"
#include "core/optimizer/optimizer.h"
#include "core/session/execution_plan.h"
#include "core/session/model_config.h"
#include "core/session/session_config.h"

namespace onyx {
namespace {

// Checks a fed value against the declared input type; the messages follow
// onnxruntime's so users (and tests written for it) recognise them.
Status CheckFeed(const ValueInfo& decl, const Value& v) {
  const TypeInfo& t = decl.type;
  if (t.kind == TypeInfo::Kind::kUnknown) return Status::OK();
  if (t.kind == TypeInfo::Kind::kSequence) {
    if (!v.IsSequence())
      return MakeError(ErrorCode::kInvalidArgument, "Input '", decl.name, "' expects a sequence (", t.ToString(), ")");
    for (size_t i = 0; i < v.items().size(); ++i) {
      const Value& item = v.items()[i];
      if (t.inner && t.inner->kind == TypeInfo::Kind::kTensor &&
          (!item.IsTensor() || item.tensor().type() != t.inner->elem))
        return MakeError(ErrorCode::kInvalidArgument, "Input '", decl.name, "' expects ", t.ToString(),
                         " but element ", i, " is not a ", t.inner->ToString());
    }
    return Status::OK();
  }
  if (t.kind == TypeInfo::Kind::kMap) {
    if (v.kind() != Value::Kind::kMap)
      return MakeError(ErrorCode::kInvalidArgument, "Input '", decl.name, "' expects a map (", t.ToString(), ")");
    return Status::OK();
  }
  if (t.kind == TypeInfo::Kind::kOptional) {
    if (v.kind() == Value::Kind::kOptional) return Status::OK();
    if (!t.inner) return Status::OK();
    ValueInfo inner = decl;
    inner.type = *t.inner;
    return CheckFeed(inner, v);
  }
  if (t.kind == TypeInfo::Kind::kSparseTensor) {
    // Kernels take dense tensors: the feed is checked here and densified by RunIndexed.
    if (!v.IsSparse())
      return MakeError(ErrorCode::kInvalidArgument, "Input '", decl.name, "' expects a sparse tensor (",
                       t.ToString(), ")");
    const SparseTensor& sp = v.sparse();
    if (sp.values->type() != t.elem)
      return MakeError(ErrorCode::kInvalidArgument, "Unexpected input data type. Actual: (sparse_tensor(",
                       ElemTypeName(sp.values->type()), ")) , expected: (", t.ToString(), ") for input '", decl.name,
                       "'");
    if (!t.has_shape) return Status::OK();
    bool same = sp.dense_dims.size() == t.dims.size();
    for (size_t i = 0; same && i < t.dims.size(); ++i) same = !t.dims[i].known() || t.dims[i].value == sp.dense_dims[i];
    if (!same)
      return MakeError(ErrorCode::kInvalidArgument, "Got invalid dimensions for input: ", decl.name, ": dense shape ",
                       ShapeToString(sp.dense_dims), " does not match the declared ", t.ToString());
    return Status::OK();
  }
  if (t.kind != TypeInfo::Kind::kTensor)
    return MakeError(ErrorCode::kNotImplemented, "input '", decl.name, "' has type ", t.ToString(),
                     ", which is not supported yet");
  if (!v.IsTensor())
    return MakeError(ErrorCode::kInvalidArgument, "Input '", decl.name, "' expects a tensor (", t.ToString(), ")");
  const Tensor& x = v.tensor();
  if (x.type() != t.elem)
    return MakeError(ErrorCode::kInvalidArgument, "Unexpected input data type. Actual: (tensor(",
                     ElemTypeName(x.type()), ")) , expected: (", t.ToString(), ") for input '", decl.name, "'");
  if (x.type() == ElemType::kBool && x.location().device == DeviceType::kCpu) {
    // Kernels read these bytes as C++ bool: anything but 0 or 1 is undefined there.
    const auto* b = static_cast<const uint8_t*>(x.raw());
    for (int64_t i = 0; i < x.size(); ++i)
      if (b[i] > 1)
        return MakeError(ErrorCode::kInvalidArgument, "input '", decl.name, "' is a bool tensor whose element ", i,
                         " has byte value ", static_cast<int>(b[i]), "; a bool must be 0 or 1");
  }
  if (!t.has_shape) return Status::OK();
  if (x.rank() != t.dims.size())
    return MakeError(ErrorCode::kInvalidArgument, "Invalid rank for input: ", decl.name, " Got: ", x.rank(),
                     " Expected: ", t.dims.size(), " Please fix either the inputs or the model.");
  std::string bad;
  for (size_t i = 0; i < t.dims.size(); ++i) {
    if (t.dims[i].known() && t.dims[i].value != x.dims()[i])
      bad += StrCat(" index: ", i, " Got: ", x.dims()[i], " Expected: ", t.dims[i].value, "\n");
  }
  if (!bad.empty())
    return MakeError(ErrorCode::kInvalidArgument, "Got invalid dimensions for input: ", decl.name,
                     " for the following indices\n", bad, " Please fix either the inputs or the model.");
  return Status::OK();
}

// A copy sharing no memory with the session: the items of a sequence, map or
// optional output may be the session's initializers or a caller's feed.
Value DeepCopy(const Value& v) {
  switch (v.kind()) {
    case Value::Kind::kTensor:
      return Value(v.tensor().Clone());
    case Value::Kind::kSequence: {
      std::vector<Value> items;
      for (const Value& item : v.items()) items.push_back(DeepCopy(item));
      return Value::Sequence(std::move(items));
    }
    case Value::Kind::kMap:
      return Value::Map(std::make_shared<Tensor>(v.items()[0].tensor().Clone()),
                        std::make_shared<Tensor>(v.items()[1].tensor().Clone()));
    case Value::Kind::kOptional:
      return Value::Optional(v.items().empty() ? Value() : DeepCopy(v.items()[0]));
    default:
      return v;
  }
}

// Copies a value the run did not write in place (a graph output that is an
// input or initializer) into the caller's bound buffer.
// `device` (null in host-only sessions) copies when either side is in its memory.
Status CopyIntoBound(const std::string& name, const Value& v, Tensor* bound, const ExecutionProvider* device) {
  ONYX_CHECK_ARG(v.IsTensor(), "output '", name, "' is bound to a tensor buffer but is not a tensor");
  const Tensor& t = v.tensor();
  ONYX_CHECK_ARG(t.type() == bound->type() && t.dims() == bound->dims(), "output '", name, "' is bound to a ",
                 ElemTypeName(bound->type()), ShapeToString(bound->dims()), " buffer but the model produces ",
                 ElemTypeName(t.type()), ShapeToString(t.dims()));
  if (&t == bound) return Status::OK();
  if (t.location().device != DeviceType::kCpu || bound->location().device != DeviceType::kCpu) {
    ONYX_CHECK_ARG(device != nullptr, "output '", name, "' is bound to ", bound->location().name,
                   " memory but this session runs on the host only");
    return device->CopyTensor(t, bound);
  }
  if (t.type() == ElemType::kString) {
    for (int64_t i = 0; i < t.size(); ++i) bound->data<std::string>()[i] = t.data<std::string>()[i];
  } else if (t.bytes() > 0) {
    std::memcpy(bound->raw(), t.raw(), t.bytes());
  }
  return Status::OK();
}

// Output `name` (host slot `slot` of the run's `values`) in the memory of
// `device`: the device version a device kernel made (its copy to the host
// was skipped, or kept alongside it), else a copy of the host value.
Status OutputOnDevice(const std::string& name, const std::vector<Value>& values, int slot, const ExecutionPlan& plan,
                      const ExecutionProvider& device, Value* out) {
  const Value* v = &values[slot];
  const int twin = plan.DeviceTwin(slot);
  if (twin >= 0 && values[twin].HasValue() && !(v->IsTensor() && v->tensor().location().device == device.Device()))
    v = &values[twin];
  const MemoryInfo& where = device.GetAllocator()->Info();
  ONYX_CHECK_ARG(v->IsTensor(), "output '", name, "' is bound to ", where.name,
                 " memory but is not a tensor (only tensors live in device memory)");
  const Tensor& t = v->tensor();
  if (t.location().device == where.device && t.location().device_id == where.device_id) {
    *out = *v;
    return Status::OK();
  }
  ONYX_CHECK_ARG(t.type() != ElemType::kString, "output '", name, "' is bound to ", where.name,
                 " memory but is a string tensor, which device memory cannot hold");
  auto copy = std::make_shared<Tensor>(t.type(), t.dims(), device.GetAllocator());
  Status st = device.CopyTensor(t, copy.get());
  if (st.ok()) st = device.Synchronize();  // the host value goes with the run's slots
  if (!st.ok()) return st.WithContext("copying output '" + name + "' to " + where.name + " memory: ");
  *out = Value(std::move(copy));
  return Status::OK();
}

// Marks `slot` as handed out to the caller; true when it already was. The
// flags are allocated on first use (one per slot).
bool HandedOutBefore(std::vector<char>* flags, int slot, size_t num_slots) {
  if (flags->empty()) flags->resize(num_slots, 0);
  if ((*flags)[slot]) return true;
  (*flags)[slot] = 1;
  return false;
}

}  // namespace

Session::~Session() {
  plan_.reset();
  // Deletes itself once the last output a caller still holds is freed.
  if (limited_alloc_) limited_alloc_->Release();
  // Hand cached buffers back to the OS once a session is gone, so a process
  // that drops its sessions does not keep their peak working set.
  GetCpuAllocator()->Trim();
}

namespace {

// Stops a session creation whose options' cancel flag is set (the C API
// reports it as MODEL_LOAD_CANCELED).
Status CheckCanceled(const SessionOptions& options, const char* stage) {
  if (options.load_cancel && options.load_cancel->load())
    return MakeError(ErrorCode::kFail, "Session creation canceled due to user request (", stage, ")");
  return Status::OK();
}

// What the options say about external data: files in memory, and the
// initializers the caller supplies (whose external data is never read).
ExternalFiles ExternalSources(const SessionOptions& options) {
  ExternalFiles f;
  f.in_memory = options.external_files_in_memory;
  for (const auto& kv : options.initializers) f.supplied.insert(kv.first);
  return f;
}

}  // namespace

void Session::PrepareProcess() { RegisterSchemasNow(); }

Status Session::CreateWith(const SessionOptions& options,
                           const std::function<Status(Model*, const ExternalFiles*)>& load,
                           std::unique_ptr<Session>* out) {
  auto start = Profiler::Clock::now();
  SchemaPreload preload;  // registers ONNX's schemas while the model loads, once per process
  std::unique_ptr<Session> s(new Session());
  const ExternalFiles sources = ExternalSources(options);
  ONYX_RETURN_IF_ERROR(CheckCanceled(options, "before loading the model"));
  ONYX_RETURN_IF_ERROR(load(&s->model_, &sources));
  ONYX_RETURN_IF_ERROR(CheckCanceled(options, "after loading the model"));
  if (LoadConfigFromModelRequested()) {
    SessionOptions from_model = options;
    ONYX_RETURN_IF_ERROR(ApplyModelConfig(s->model_, &from_model));
    ONYX_RETURN_IF_ERROR(s->Initialize(from_model, start));
  } else {
    ONYX_RETURN_IF_ERROR(s->Initialize(options, start));
  }
  *out = std::move(s);
  return Status::OK();
}

Status Session::Create(const SessionOptions& options, const std::string& path, std::unique_ptr<Session>* out) {
  return CreateWith(
      options, [&](Model* m, const ExternalFiles* sources) { return LoadModelFromFile(path, m, sources); }, out);
}

Status Session::CreateFromBytes(const SessionOptions& options, const void* data, size_t size,
                                std::unique_ptr<Session>* out) {
  // onnxruntime's key: where a model loaded from bytes finds its external data.
  auto folder = options.config.find("session.model_external_initializers_file_folder_path");
  const std::string dir = folder == options.config.end() ? std::string() : folder->second;
  return CreateWith(
      options, [&](Model* m, const ExternalFiles* sources) { return LoadModelFromBytes(data, size, dir, m, sources); },
      out);
}

// SessionOptions::initializers: the caller's tensors replace the model's.
Status Session::ApplyUserInitializers(const SessionOptions& options) {
  Graph& g = *model_.graph;
  for (const auto& kv : options.initializers) {
    const std::string& name = kv.first;
    auto it = g.initializers.find(name);
    if (it == g.initializers.end())
      return MakeError(ErrorCode::kInvalidArgument, "add_initializer: the model has no initializer named '", name, "'");
    const Tensor& mine = *it->second;
    const Tensor& theirs = *kv.second;
    if (mine.type() != theirs.type() || mine.dims() != theirs.dims())
      return MakeError(ErrorCode::kInvalidArgument, "add_initializer: '", name, "' is ", ElemTypeName(theirs.type()),
                       ShapeToString(theirs.dims()), " but the model's initializer is ", ElemTypeName(mine.type()),
                       ShapeToString(mine.dims()));
    it->second = kv.second;
    logger_->Logf(Severity::kInfo, "initializer '", name, "' supplied by the caller");
  }
  return Status::OK();
}

// SessionOptions::free_dim_overrides_*: fixes symbolic dims of graph inputs.
void Session::ApplyFreeDimensionOverrides(const SessionOptions& options) {
  if (options.free_dim_overrides_by_name.empty() && options.free_dim_overrides_by_denotation.empty()) return;
  std::map<std::string, int> used;
  for (auto& in : model_.graph->inputs) {
    if (in.type.kind != TypeInfo::Kind::kTensor || !in.type.has_shape) continue;
    for (Dim& d : in.type.dims) {
      if (d.known()) continue;
      auto by_den = options.free_dim_overrides_by_denotation.find(d.denotation);
      auto by_name = options.free_dim_overrides_by_name.find(d.symbol);
      if (!d.denotation.empty() && by_den != options.free_dim_overrides_by_denotation.end()) {
        ++used["denotation " + d.denotation];
        d = Dim::Of(by_den->second);
      } else if (!d.symbol.empty() && by_name != options.free_dim_overrides_by_name.end()) {
        ++used["dimension " + d.symbol];
        d = Dim::Of(by_name->second);
      }
    }
  }
  for (const auto& kv : options.free_dim_overrides_by_name)
    if (!used.count("dimension " + kv.first))
      logger_->Logf(Severity::kWarning, "free dimension override '", kv.first, "' matches no input dimension");
  for (const auto& kv : options.free_dim_overrides_by_denotation)
    if (!used.count("denotation " + kv.first))
      logger_->Logf(Severity::kWarning, "free dimension override for denotation '", kv.first,
                    "' matches no input dimension");
}

// Options this engine would otherwise accept and then not act on are refused,
// naming them (issue 12: no silent options), config keys by the table in
// session_config.cc.
static Status CheckHonouredOptions(const SessionOptions& options) {
  // Provider options are checked by the provider's factory (CreateProvider):
  // the CPU provider takes none, CUDA's are parsed and validated by name.
  ONYX_RETURN_IF_ERROR(CheckConfigKeys(options.config, ConfigScope::kSession));
  if (options.shared_thread_pool) {
    for (const char* key : {"session.intra_op.allow_spinning", "session.intra_op.spin_duration_us",
                            "session.intra_op.spin_backoff_max", "session.intra_op_thread_affinities",
                            "session.force_spinning_stop"})
      if (options.config.count(key))
        return MakeError(ErrorCode::kInvalidArgument, "session config entry '", key,
                         "' applies to the session's own intra-op pool, but this session uses the environment's "
                         "global thread pool (use_per_session_threads off), which is configured when it is created");
  }
  return Status::OK();
}

Status Session::Initialize(const SessionOptions& options, Profiler::Clock::time_point load_start) {
  ONYX_RETURN_IF_ERROR(CheckCpuIsaRequest());
  ONYX_RETURN_IF_ERROR(CheckHonouredOptions(options));
  options_ = options;
  logger_ = std::make_unique<Logger>(options.log_id, options.log_severity, options.log_verbosity);
  if (options.enable_profiling) profiler_.Start(options.profile_file_prefix, load_start);
  auto loaded = Profiler::Clock::now();
  const Graph& g = *model_.graph;
  logger_->Logf(Severity::kInfo, "loaded model '", g.name, "': ", g.nodes.size(), " nodes, ", g.initializers.size(),
                " initializers, ir_version ", model_.ir_version);
  ONYX_RETURN_IF_ERROR(ApplyUserInitializers(options));
  ApplyFreeDimensionOverrides(options);
  for (const auto& in : g.inputs) {
    if (g.IsInitializer(in.name)) overridable_.push_back(in);
    else inputs_.push_back(in);
  }
  // As onnxruntime does, every initializer also listed as an input counts as
  // overridable, IR < 4 models included (they list all initializers).

  bool has_cpu = false;
  for (const auto& req : options.providers) {
    std::unique_ptr<ExecutionProvider> p;
    ONYX_RETURN_IF_ERROR(CreateProvider(req.name, req.options, &p));
    has_device_ = has_device_ || p->Device() != DeviceType::kCpu;
    has_cpu = has_cpu || req.name == kCpuProviderName;
    provider_names_.push_back(req.name);
    providers_.push_back(std::move(p));
  }
  if (!has_cpu) {
    std::unique_ptr<ExecutionProvider> p;
    ONYX_RETURN_IF_ERROR(CreateProvider(kCpuProviderName, &p));
    provider_names_.push_back(kCpuProviderName);
    providers_.push_back(std::move(p));
  }
  // Types and shapes first, so kernel lookup and error messages see them.
  ONYX_RETURN_IF_ERROR(InferTypesAndShapes(*model_.graph));
  ONYX_RETURN_IF_ERROR(CheckCanceled(options, "after type and shape inference"));
  // Gradient nodes become their backward pass, in ordinary operators.
  int gradients = 0;
  ONYX_RETURN_IF_ERROR(ExpandGradients(model_, &gradients));
  if (gradients > 0) logger_->Logf(Severity::kInfo, "expanded ", gradients, " Gradient node(s) into their backward pass");
  // Operators no provider implements but ONNX defines as functions run as
  // their bodies; a hand-written kernel, where one exists, wins, unless the
  // session asks for the bodies ("session.expand_function_ops" = "1": the
  // body is the oracle a kernel written for speed is tested against).
  auto expand_all = options.config.find("session.expand_function_ops");
  const bool bodies_first = expand_all != options.config.end() && expand_all->second == "1";
  if (expand_all != options.config.end() && !bodies_first && expand_all->second != "0")
    return MakeError(ErrorCode::kInvalidArgument, "session config entry 'session.expand_function_ops' must be '0' or '1', got '",
                     expand_all->second, "'");
  auto has_kernel = [this, bodies_first](const Node& n, const std::vector<TypeInfo>& types) {
    if (bodies_first) return false;
    std::string why;
    for (const auto& p : providers_)
      if (p->Kernels().Find(n, types, &why) != nullptr) return true;
    return false;
  };
  int expanded = 0;
  ONYX_RETURN_IF_ERROR(ExpandFunctions(model_, has_kernel, &expanded));
  if (expanded > 0) logger_->Logf(Severity::kInfo, "expanded ", expanded, " function node(s) into their ONNX bodies");
  ONYX_RETURN_IF_ERROR(CheckInputTypesAgainstSchemas(*model_.graph));
  // What the model bends and we run anyway (as onnxruntime does) is said
  // once, or fails the session with session.strict_shape_type_inference.
  bool strict_inference = false;
  ONYX_RETURN_IF_ERROR(ConfigBool(options.config, "session.strict_shape_type_inference", false, &strict_inference));
  if (strict_inference && !model_.graph->warnings.empty())
    return MakeError(ErrorCode::kInvalidGraph, model_.graph->warnings.front(),
                     " (session config entry 'session.strict_shape_type_inference' is '1')");
  for (const auto& w : model_.graph->warnings) logger_->Log(Severity::kWarning, w);
  model_.graph->warnings.clear();
  // onnxruntime's config key: a comma-separated list of transformer names.
  std::vector<std::string> disabled;
  auto dis = options.config.find("optimization.disable_specified_optimizers");
  if (dis != options.config.end()) {
    for (std::string name : SplitConfigList(dis->second, ',')) {
      name.erase(0, name.find_first_not_of(" \t"));
      name.erase(name.find_last_not_of(" \t") + 1);
      if (!name.empty()) disabled.push_back(name);
    }
  }
  // onnxruntime's switch for its QDQ transformers: '1' leaves QDQ groups as
  // written (this engine's qdq_fusion).
  bool no_qdq = false;
  ONYX_RETURN_IF_ERROR(ConfigBool(options.config, "session.disable_quant_qdq", false, &no_qdq));
  if (no_qdq) disabled.push_back("qdq_fusion");
  // The layout level writes CPU kernels' forms (channels-last quantized
  // chains, our QLinearBatchNormalization): only where the CPU provider
  // comes first, as onnxruntime applies its NHWC layout to CPU nodes only.
  if (provider_names_.empty() || provider_names_[0] != kCpuProviderName)
    for (const TransformerInfo& t : GraphTransformers())
      if (t.level >= kOptimizeLayout) disabled.push_back(t.name);
  const size_t nodes_before = g.nodes.size();
  const auto optimize_start = Profiler::Clock::now();
  // Constant folding evaluates nodes with the CPU provider's kernels.
  OptimizerContext optimizer_ctx;
  for (size_t i = 0; i < providers_.size(); ++i)
    if (provider_names_[i] == kCpuProviderName) optimizer_ctx.fold_kernels = &providers_[i]->Kernels();
  ONYX_RETURN_IF_ERROR(OptimizeGraph(*model_.graph, options.graph_optimization_level, disabled, optimizer_ctx));
  ONYX_RETURN_IF_ERROR(CheckCanceled(options, "after graph optimization"));
  if (profiler_.enabled()) {
    profiler_.Record({"Session", "graph_optimization", profiler_.MicrosSinceStart(optimize_start),
                      std::chrono::duration_cast<std::chrono::microseconds>(Profiler::Clock::now() - optimize_start)
                          .count(),
                      0,
                      {{"nodes_before", std::to_string(nodes_before)}, {"nodes_after", std::to_string(g.nodes.size())}}});
  }
  logger_->Logf(Severity::kInfo, "graph optimization level ", options.graph_optimization_level, ": ", nodes_before,
                " nodes -> ", g.nodes.size());
  // What will run, before partitioning: onnxruntime's optimized_model_filepath.
  if (!options.optimized_model_filepath.empty()) {
    // onnxruntime's keys: initializers of at least min_size bytes (default
    // 1024) go to the named file beside the model.
    std::string external_file;
    size_t min_bytes = 1024;
    auto f = options.config.find("session.optimized_model_external_initializers_file_name");
    if (f != options.config.end()) external_file = f->second;
    auto m = options.config.find("session.optimized_model_external_initializers_min_size_in_bytes");
    if (m != options.config.end()) {
      char* end = nullptr;
      errno = 0;
      const long long v = std::strtoll(m->second.c_str(), &end, 10);
      if (m->second.empty() || *end != '\0' || errno != 0 || v < 0)
        return MakeError(ErrorCode::kInvalidArgument, "session config entry "
                         "'session.optimized_model_external_initializers_min_size_in_bytes' must be a non-negative "
                         "integer, got '", m->second, "'");
      min_bytes = static_cast<size_t>(v);
    }
    ONYX_RETURN_IF_ERROR(SaveModel(model_, options.optimized_model_filepath, external_file, min_bytes));
  }
  std::vector<ExecutionProvider*> raw;
  for (auto& p : providers_) raw.push_back(p.get());
  PlanOptions plan_options;
  plan_options.release_intermediates = options.enable_mem_reuse;
  plan_options.execution_order = options.execution_order;
  plan_options.mem_pattern = options.enable_mem_pattern;
  // ORT_PARALLEL: independent nodes run at once on the inter-op pool.
  // Memory patterns lay buffers out by the sequential order's lifetimes, so
  // they are off there, as in onnxruntime; intermediates are still freed
  // after their last reader (whichever thread finishes it).
  plan_options.parallel = options.execution_mode == 1;
  if (plan_options.parallel && options.enable_mem_pattern) {
    logger_->Log(Severity::kWarning, "Parallel execution mode does not support memory pattern planning; memory "
                                     "patterns are disabled for this session");
    plan_options.mem_pattern = false;
  }
  if (!plan_options.parallel && options.inter_op_threads > 1)
    logger_->Logf(Severity::kWarning, "inter_op_num_threads=", options.inter_op_threads,
                  " is ignored with execution_mode ORT_SEQUENTIAL (as in onnxruntime: nodes run one at a time)");
  ONYX_RETURN_IF_ERROR(ConfigBool(options.config, "session.conv.winograd_f4", true, &plan_options.winograd_f4));
  if (options.cpu_allocator) plan_options.cpu_allocator = options.cpu_allocator.get();
  else if (!options.enable_cpu_mem_arena) plan_options.cpu_allocator = GetUncachedCpuAllocator();
  cpu_arena_ = options.cpu_allocator ? options.cpu_allocator.get()
                                     : options.enable_cpu_mem_arena ? GetCpuAllocator() : nullptr;
  // Weights the kernels packed into copies of their own: each original goes
  // as soon as its last reader has packed it.
  plan_options.on_constant_released = [this](const std::string& name, const std::shared_ptr<Tensor>& dataless) {
    auto it = model_.graph->initializers.find(name);
    if (it != model_.graph->initializers.end()) it->second = dataless;
  };
  size_t memory_limit = 0;
  ONYX_RETURN_IF_ERROR(MemoryLimit(options, &memory_limit));
  if (memory_limit > 0) {
    limited_alloc_ = LimitedAllocator::Create(plan_options.cpu_allocator ? plan_options.cpu_allocator : GetCpuAllocator(),
                                              memory_limit);
    plan_options.cpu_allocator = limited_alloc_;
  }
  ONYX_RETURN_IF_ERROR(ExecutionPlan::Build(g, raw, plan_options, &plan_));
  // Tensors the optimizer made (fused weights, folded constants) and the
  // kernels then packed and released sit idle in the CPU allocator's cache:
  // hand them back (BERT's 12 concatenated QKV weights, 85 MB, stayed
  // resident for the session's life).
  GetCpuAllocator()->Trim();
  ONYX_RETURN_IF_ERROR(CheckCanceled(options, "after planning"));
  ONYX_RETURN_IF_ERROR(CheckCpuFallback(options));
  IndexInputsAndOutputs();
  if (logger_->Enabled(Severity::kVerbose)) {
    std::string order;
    for (const auto& name : plan_->NodeOrder()) order += (order.empty() ? "" : ", ") + name;
    logger_->Log(Severity::kVerbose, "execution order: " + order);
  }

  int threads = options.intra_op_threads > 0 ? options.intra_op_threads : DefaultThreadCount();
  if (options.shared_thread_pool) {
    if (options.intra_op_threads > 0)
      logger_->Log(Severity::kWarning, "session option intra_op_num_threads is ignored when using a global thread "
                                       "pool");
    thread_pool_ = options.shared_thread_pool;
    threads = thread_pool_->NumThreads();
  } else {
    ThreadPoolOptions pool_options;
    ONYX_RETURN_IF_ERROR(ThreadPoolOptionsFromConfig(options.config, true, threads, &pool_options));
    thread_pool_ = std::make_shared<ThreadPool>(threads, pool_options);
  }
  {
    // The inter-op keys are checked in either mode (code written for
    // onnxruntime sets both pools' keys); the pool exists in ORT_PARALLEL.
    const int inter = options.inter_op_threads > 0 ? options.inter_op_threads : DefaultThreadCount();
    ThreadPoolOptions pool_options;
    ONYX_RETURN_IF_ERROR(ThreadPoolOptionsFromConfig(options.config, false, inter, &pool_options));
    if (plan_options.parallel) inter_op_pool_ = std::make_shared<ThreadPool>(inter, pool_options);
  }
  ONYX_RETURN_IF_ERROR(ConfigBool(options.config, "session.force_spinning_stop", false, &force_spinning_stop_));
  ONYX_RETURN_IF_ERROR(ConfigBool(options.config, "session.set_denormal_as_zero", false, &denormal_as_zero_));
  if (force_spinning_stop_) {
    thread_pool_->StopSpinning();
    if (inter_op_pool_) inter_op_pool_->StopSpinning();
  }
  // OpenBLAS runs inside our kernels' calls with the same budget (set per
  // call from the running session's, see RunIndexed), rather than both
  // claiming every core.
  if (profiler_.enabled()) {
    int64_t load_us = profiler_.MicrosSinceStart(loaded);
    profiler_.Record({"Session", "model_loading", 0, load_us, 0, {}});
    profiler_.Record({"Session", "session_initialization", load_us,
                      profiler_.MicrosSinceStart(Profiler::Clock::now()) - load_us, 0, {}});
  }
  return Status::OK();
}

Status Session::CheckCpuFallback(const SessionOptions& options) const {
  bool disabled = false;
  ONYX_RETURN_IF_ERROR(ConfigBool(options.config, "session.disable_cpu_ep_fallback", false, &disabled));
  if (!disabled) return Status::OK();
  for (const auto& req : options.providers)
    if (req.name == kCpuProviderName)
      return MakeError(ErrorCode::kInvalidArgument, "session config entry 'session.disable_cpu_ep_fallback' is '1' "
                       "but CPUExecutionProvider was added explicitly; the two cannot be combined");
  for (const auto& a : plan_->NodeAssignments())
    if (*a.first == kCpuProviderName)
      return MakeError(ErrorCode::kFail, "This session contains graph nodes that are assigned to the default CPU "
                       "EP, but fallback to CPU EP has been explicitly disabled by the user (session config entry "
                       "'session.disable_cpu_ep_fallback'): ", a.second->Describe(), " has no kernel in ",
                       options.providers.empty() ? std::string("any requested provider") : options.providers[0].name);
  return Status::OK();
}

Status Session::MemoryLimit(const SessionOptions& options, size_t* out) {
  *out = 0;
  auto it = options.config.find(kSessionMemoryLimitKey);
  if (it == options.config.end()) return Status::OK();
  const std::string& v = it->second;
  errno = 0;
  char* end = nullptr;
  unsigned long long n = v.empty() || v[0] < '0' || v[0] > '9' ? 0 : std::strtoull(v.c_str(), &end, 10);
  if (v.empty() || !end || *end != '\0' || errno == ERANGE || n == 0 || n > (SIZE_MAX >> 1))
    return MakeError(ErrorCode::kInvalidArgument, "session config entry '", kSessionMemoryLimitKey,
                     "' must be a positive number of bytes, got '", v, "'");
  *out = static_cast<size_t>(n);
  return Status::OK();
}

void Session::IndexInputsAndOutputs() {
  const Graph& g = *model_.graph;
  std::unordered_map<std::string, int> decl_of;
  for (size_t i = 0; i < g.inputs.size(); ++i) decl_of.emplace(g.inputs[i].name, static_cast<int>(i));
  const size_t n_feeds = inputs_.size() + overridable_.size();
  feed_slots_.assign(n_feeds, FeedSlot());
  for (size_t i = 0; i < n_feeds; ++i) {
    const std::string& name = FeedName(i);
    feed_index_.emplace(name, i);
    auto it = decl_of.find(name);
    if (it == decl_of.end()) continue;
    feed_slots_[i].decl = it->second;
    feed_slots_[i].slot = plan_->SlotOf(name);
    if (feed_slots_[i].slot < 0) feed_slots_[i].decl = -1;
  }
  output_slots_.clear();
  for (size_t i = 0; i < g.outputs.size(); ++i) {
    output_index_.emplace(g.outputs[i].name, i);
    output_slots_.push_back(plan_->SlotOf(g.outputs[i].name));
  }
}

Status Session::Run(const RunOptions* run_options, const std::vector<std::string>& input_names,
                    const std::vector<const Value*>& feeds, const std::vector<std::string>& output_names,
                    std::vector<Value>* outputs, const std::vector<std::shared_ptr<Tensor>>* bound_outputs,
                    const std::vector<MemoryInfo>* output_devices) const {
  ONYX_CHECK_ARG(input_names.size() == feeds.size(), "got ", input_names.size(), " input names but ", feeds.size(),
                 " input values");
  std::vector<size_t> feed_indices(input_names.size());
  for (size_t i = 0; i < input_names.size(); ++i) {
    auto it = feed_index_.find(input_names[i]);
    if (it == feed_index_.end() || feed_slots_[it->second].decl < 0)
      return MakeError(ErrorCode::kInvalidArgument, "Invalid input name: ", input_names[i]);
    feed_indices[i] = it->second;
  }
  std::vector<size_t> output_indices(output_names.size());
  for (size_t i = 0; i < output_names.size(); ++i) {
    auto it = output_index_.find(output_names[i]);
    if (it == output_index_.end()) return MakeError(ErrorCode::kInvalidArgument, "Invalid output name: ", output_names[i]);
    output_indices[i] = it->second;
  }
  return RunIndexed(run_options, feed_indices.data(), feeds.data(), feeds.size(),
                    output_names.empty() ? nullptr : output_indices.data(),
                    output_names.empty() ? output_slots_.size() : output_names.size(), outputs, bound_outputs,
                    output_devices);
}

const ExecutionProvider* Session::DeviceProvider(const MemoryInfo& memory) const {
  if (memory.device == DeviceType::kCpu) return nullptr;
  for (const auto& p : providers_)
    if (p->Device() == memory.device && p->GetAllocator()->Info().device_id == memory.device_id) return p.get();
  return nullptr;
}

Status Session::CheckOutputDevice(const std::string& output, const MemoryInfo& memory) const {
  if (memory.device == DeviceType::kCpu || DeviceProvider(memory)) return Status::OK();
  std::string runs_on;
  for (const auto& p : providers_) {
    runs_on += (runs_on.empty() ? "" : ", ") + p->Name();
    if (p->Device() == memory.device)
      return MakeError(ErrorCode::kInvalidArgument, "output '", output, "' is bound to ", memory.name, " device ",
                       memory.device_id, " but this session's ", p->Name(), " runs on device ",
                       p->GetAllocator()->Info().device_id);
  }
  return MakeError(ErrorCode::kInvalidArgument, "output '", output, "' cannot be allocated in ", memory.name,
                   " memory: no provider of this session runs on that device (it runs on: ", runs_on,
                   "); create the session with that device's execution provider, or bind the output to 'cpu'");
}

Status Session::RunIndexed(const RunOptions* run_options, const size_t* feed_indices, const Value* const* feeds,
                           size_t feed_count, const size_t* output_indices, size_t output_count,
                           std::vector<Value>* outputs,
                           const std::vector<std::shared_ptr<Tensor>>* bound_outputs,
                           const std::vector<MemoryInfo>* output_devices) const {
  const size_t n_feedable = feed_slots_.size();
  ONYX_CHECK_ARG(feed_count == 0 || (feed_indices && feeds), "feed indices or values are NULL");
  std::vector<Value> values(plan_->num_slots());
  // One flag per feedable value: fed already?
  std::vector<char> fed(n_feedable, 0);
  std::vector<std::pair<int, const Value*>> sparse_feeds;
  for (size_t i = 0; i < feed_count; ++i) {
    const size_t index = feed_indices[i];
    ONYX_CHECK_ARG(index < n_feedable, "input index ", index, " is out of range (the model has ", inputs_.size(),
                   " inputs and ", overridable_.size(), " overridable initializers)");
    const std::string& name = FeedName(index);
    const FeedSlot& fs = feed_slots_[index];
    if (fs.decl < 0) return MakeError(ErrorCode::kInvalidArgument, "Invalid input name: ", name);
    ONYX_CHECK_ARG(feeds[i] != nullptr, "input '", name, "' is NULL");
    ONYX_CHECK_ARG(!fed[index], "input '", name, "' is fed more than once");
    fed[index] = 1;
    ONYX_RETURN_IF_ERROR(CheckFeed(model_.graph->inputs[fs.decl], *feeds[i]));
    if (!has_device_ && feeds[i]->IsTensor() && feeds[i]->tensor().location().device != DeviceType::kCpu)
      return MakeError(ErrorCode::kInvalidArgument, "input '", name, "' is in ", feeds[i]->tensor().location().name,
                       " memory but this session runs on the host only (add CUDAExecutionProvider to its providers, "
                       "or feed a CPU value)");
    if (feeds[i]->IsSparse()) {
      Tensor dense;
      ONYX_RETURN_IF_ERROR(Densify(feeds[i]->sparse(), &dense));
      values[fs.slot] = Value(std::move(dense));
      // A graph output that is this input comes back sparse, as fed.
      sparse_feeds.emplace_back(fs.slot, feeds[i]);
    } else {
      values[fs.slot] = *feeds[i];
    }
  }
  // Active LoRA adapters feed their parameters to the inputs (or overridable
  // initializers) of the same names, for this run only; an explicit feed wins.
  if (run_options) {
    for (const auto& adapter : run_options->active_adapters) {
      for (const auto& kv : *adapter) {
        auto it = feed_index_.find(kv.first);
        if (it == feed_index_.end() || feed_slots_[it->second].decl < 0)
          return MakeError(ErrorCode::kInvalidArgument, "LoRA adapter parameter '", kv.first,
                           "' names no input or overridable initializer of the model");
        if (fed[it->second]) continue;
        Value param(kv.second);
        const FeedSlot& fs = feed_slots_[it->second];
        Status st = CheckFeed(model_.graph->inputs[fs.decl], param);
        if (!st.ok()) return st.WithContext("LoRA adapter parameter '" + kv.first + "': ");
        fed[it->second] = 1;
        values[fs.slot] = std::move(param);
      }
    }
  }
  std::string missing;
  for (size_t i = 0; i < inputs_.size(); ++i)
    if (!fed[i]) missing += (missing.empty() ? "" : ", ") + inputs_[i].name;
  if (!missing.empty()) return MakeError(ErrorCode::kInvalidArgument, "Missing Input: ", missing);

  ONYX_CHECK_ARG(output_indices || output_count == output_slots_.size(), "output indices are NULL (all outputs) but ",
                 output_count, " outputs are asked for while the model has ", output_slots_.size());
  ONYX_CHECK_ARG(!bound_outputs || bound_outputs->size() == output_count, "got ", output_count,
                 " output names but ", bound_outputs ? bound_outputs->size() : 0, " bound outputs");
  const auto& graph_outputs = model_.graph->outputs;
  auto wanted = [&](size_t i) -> size_t { return output_indices ? output_indices[i] : i; };
  std::vector<std::shared_ptr<Tensor>> presets;
  for (size_t i = 0; i < output_count; ++i) {
    const size_t index = wanted(i);
    ONYX_CHECK_ARG(index < output_slots_.size(), "output index ", index, " is out of range (the model has ",
                   output_slots_.size(), " outputs)");
    const int slot = output_slots_[index];
    if (bound_outputs && (*bound_outputs)[i]) {
      if (presets.empty()) presets.resize(plan_->num_slots());
      ONYX_CHECK_ARG(!presets[slot], "output '", graph_outputs[index].name, "' is bound more than once");
      // Only node outputs are written in place; others are copied in after the run.
      if (plan_->IsNodeOutput(slot)) presets[slot] = (*bound_outputs)[i];
    }
  }
  // Outputs to return in device memory: their copies to the host are skipped.
  ONYX_CHECK_ARG(!output_devices || output_devices->size() == output_count, "got ", output_count,
                 " output names but ", output_devices ? output_devices->size() : 0, " output devices");
  auto device_of = [&](size_t i) -> const MemoryInfo* {
    if (!output_devices || (bound_outputs && (*bound_outputs)[i])) return nullptr;
    const MemoryInfo& m = (*output_devices)[i];
    return m.device == DeviceType::kCpu ? nullptr : &m;
  };
  std::vector<char> on_device;
  for (size_t i = 0; i < output_count; ++i) {
    const MemoryInfo* m = device_of(i);
    if (!m) continue;
    ONYX_RETURN_IF_ERROR(CheckOutputDevice(graph_outputs[wanted(i)].name, *m));
    if (on_device.empty()) on_device.resize(plan_->num_slots(), 0);
    on_device[output_slots_[wanted(i)]] = 1;
  }

  if (run_options && !run_options->config.empty())
    ONYX_RETURN_IF_ERROR(CheckConfigKeys(run_options->config, ConfigScope::kRun));
  bool shrink_cpu = false;
  ONYX_RETURN_IF_ERROR(ArenasToShrink(run_options, &shrink_cpu));

  Profiler* profiler = profiler_.enabled() ? &profiler_ : nullptr;
  auto run_start = profiler ? Profiler::Clock::now() : Profiler::Clock::time_point();
  const uint64_t patterns_before = plan_->PatternsRecorded();
  Status run_status;
  {
    ScopedBlasThreadBudget blas_threads(thread_pool_->NumThreads());
    ScopedDenormalAsZero daz(denormal_as_zero_);
    RunningScope running(*this);
    run_status = plan_->Execute(values, presets.empty() ? nullptr : &presets, run_options, thread_pool_.get(), profiler,
                                nullptr, inter_op_pool_.get(), on_device.empty() ? nullptr : &on_device);
  }
  // The run's intermediates are back in the arena by now; shrink even when
  // the run failed, as onnxruntime does. A run that recorded a memory pattern
  // shrinks too: later runs take their intermediates from the pattern's one
  // block, and the arena's cache of this run's would double the footprint.
  if (cpu_arena_ && (shrink_cpu || plan_->PatternsRecorded() != patterns_before)) cpu_arena_->Trim();
  ONYX_RETURN_IF_ERROR(run_status);
  if (profiler) {
    profiler->Record({"Session", "model_run", profiler->MicrosSinceStart(run_start),
                      std::chrono::duration_cast<std::chrono::microseconds>(Profiler::Clock::now() - run_start).count(),
                      0, {}});
  }

  std::vector<Value> result;
  result.reserve(output_count);
  std::vector<char> handed_out;
  for (size_t i = 0; i < output_count; ++i) {
    const size_t index = wanted(i);
    const std::string& name = graph_outputs[index].name;
    const int s = output_slots_[index];
    Value& v = values[s];
    if (!v.HasValue()) return MakeError(ErrorCode::kEngineError, "output '", name, "' has no value after the run");
    auto sparse = std::find_if(sparse_feeds.begin(), sparse_feeds.end(),
                               [s](const std::pair<int, const Value*>& f) { return f.first == s; });
    if (sparse != sparse_feeds.end()) {
      if (bound_outputs && (*bound_outputs)[i])
        return MakeError(ErrorCode::kInvalidArgument, "output '", name, "' is a sparse tensor and cannot be written into a bound dense buffer");
      result.push_back(*sparse->second);
      continue;
    }
    if (const MemoryInfo* m = device_of(i)) {
      Value out;
      ONYX_RETURN_IF_ERROR(OutputOnDevice(name, values, s, *plan_, *DeviceProvider(*m), &out));
      result.push_back(std::move(out));
      continue;
    }
    if (bound_outputs && (*bound_outputs)[i]) {
      const std::shared_ptr<Tensor>& bound = (*bound_outputs)[i];
      const ExecutionProvider* device = nullptr;
      for (const auto& p : providers_)
        if (!device && p->Device() != DeviceType::kCpu) device = p.get();
      ONYX_RETURN_IF_ERROR(CopyIntoBound(name, v, bound.get(), device));
      result.emplace_back(bound);
      continue;
    }
    if (!on_device.empty() && on_device[s] && v.IsTensor() && v.tensor().location().device != DeviceType::kCpu &&
        plan_->DeviceTwin(s) >= 0) {
      // Asked for twice, once on the device: the host's copy was skipped.
      const Tensor& t = v.tensor();
      Tensor host(t.type(), t.dims());
      ONYX_RETURN_IF_ERROR(DeviceProvider(t.location())->CopyTensor(t, &host));
      result.emplace_back(std::move(host));
      continue;
    }
    // Only tensors this run produced can be handed over without a copy;
    // feeds and initializers stay with their owners, and a name asked for
    // twice gets a copy the second time. Non-tensor values are copied
    // whole: their items may be initializers or feeds.
    if (!v.IsTensor()) {
      result.push_back(DeepCopy(v));
    } else if (v.tensor().location().device != DeviceType::kCpu) {
      result.push_back(v);  // a device feed passed through: shared, as the host cannot copy it
    } else if (plan_->IsNodeOutput(s) && !(output_count > 1 && HandedOutBefore(&handed_out, s, plan_->num_slots()))) {
      result.push_back(v);
    } else {
      result.emplace_back(v.tensor().Clone());
    }
  }
  *outputs = std::move(result);
  return Status::OK();
}

std::vector<std::pair<const std::string*, const Node*>> Session::NodeAssignments() const {
  return plan_->NodeAssignments();
}

Status Session::ArenasToShrink(const RunOptions* run_options, bool* shrink_cpu) const {
  *shrink_cpu = false;
  if (!run_options) return Status::OK();
  auto it = run_options->config.find(kRunArenaShrinkKey);
  if (it == run_options->config.end()) return Status::OK();
  // onnxruntime's grammar: "device:id" items separated by ';'; an item
  // without ':' is skipped.
  for (const std::string& item : SplitConfigList(it->second, ';')) {
    const size_t colon = item.find(':');
    if (colon == std::string::npos) continue;
    const std::string device = item.substr(0, colon);
    const std::string id = item.substr(colon + 1);
    if (device != "cpu" && device != "gpu")
      return MakeError(ErrorCode::kInvalidArgument, "Unsupported device specified in the memory arena shrink list: ",
                       device);
    // Only the CPU arena of device 0 exists in this engine.
    if (device != "cpu" || id != "0" || cpu_arena_ == nullptr)
      return MakeError(ErrorCode::kInvalidArgument,
                       "Did not find an arena based allocator registered for device-id combination in the memory "
                       "arena shrink list: ",
                       item);
    *shrink_cpu = true;
  }
  return Status::OK();
}

Session::RunningScope::RunningScope(const Session& s) : s_(s) {
  if (!s_.force_spinning_stop_) return;
  std::lock_guard<std::mutex> lock(s_.running_mu_);
  if (s_.running_++ > 0) return;
  s_.thread_pool_->StartSpinning();
  if (s_.inter_op_pool_) s_.inter_op_pool_->StartSpinning();
}

Session::RunningScope::~RunningScope() {
  if (!s_.force_spinning_stop_) return;
  std::lock_guard<std::mutex> lock(s_.running_mu_);
  if (--s_.running_ > 0) return;
  s_.thread_pool_->StopSpinning();
  if (s_.inter_op_pool_) s_.inter_op_pool_->StopSpinning();
}

std::vector<std::string> Session::ExecutionOrder() const { return plan_->NodeOrder(); }

Status Session::EndProfiling(std::string* path) const {
  std::lock_guard<std::mutex> lock(profile_mu_);
  return profiler_.End(path);
}

}  // namespace onyx
