#include "core/session/session.h"

#include <cblas.h>

#include <algorithm>
#include <unordered_map>
#include <unordered_set>

#include "core/graph/shape_inference.h"
#include "core/optimizer/optimizer.h"
#include "core/session/execution_plan.h"

namespace onyx {
namespace {

// Checks a fed tensor against the declared input type; the messages follow
// onnxruntime's so users (and tests written for it) recognise them.
Status CheckFeed(const ValueInfo& decl, const Value& v) {
  const TypeInfo& t = decl.type;
  if (t.kind == TypeInfo::Kind::kUnknown) return Status::OK();
  if (t.kind != TypeInfo::Kind::kTensor)
    return MakeError(ErrorCode::kNotImplemented, "input '", decl.name, "' has type ", t.ToString(),
                     ", which is not supported yet");
  if (!v.IsTensor())
    return MakeError(ErrorCode::kInvalidArgument, "Input '", decl.name, "' expects a tensor (", t.ToString(), ")");
  const Tensor& x = v.tensor();
  if (x.type() != t.elem)
    return MakeError(ErrorCode::kInvalidArgument, "Unexpected input data type. Actual: (tensor(",
                     ElemTypeName(x.type()), ")) , expected: (", t.ToString(), ") for input '", decl.name, "'");
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

}  // namespace

Session::~Session() {
  plan_.reset();
  // Hand cached buffers back to the OS once a session is gone, so a process
  // that drops its sessions does not keep their peak working set.
  GetCpuAllocator()->Trim();
}

Status Session::Create(const SessionOptions& options, const std::string& path, std::unique_ptr<Session>* out) {
  auto start = Profiler::Clock::now();
  std::unique_ptr<Session> s(new Session());
  ONYX_RETURN_IF_ERROR(LoadModelFromFile(path, &s->model_));
  ONYX_RETURN_IF_ERROR(s->Initialize(options, start));
  *out = std::move(s);
  return Status::OK();
}

Status Session::CreateFromBytes(const SessionOptions& options, const void* data, size_t size,
                                std::unique_ptr<Session>* out) {
  auto start = Profiler::Clock::now();
  std::unique_ptr<Session> s(new Session());
  ONYX_RETURN_IF_ERROR(LoadModelFromBytes(data, size, "", &s->model_));
  ONYX_RETURN_IF_ERROR(s->Initialize(options, start));
  *out = std::move(s);
  return Status::OK();
}

Status Session::Initialize(const SessionOptions& options, Profiler::Clock::time_point load_start) {
  options_ = options;
  if (options.enable_profiling) profiler_.Start(options.profile_file_prefix, load_start);
  auto loaded = Profiler::Clock::now();
  const Graph& g = *model_.graph;
  for (const auto& in : g.inputs) {
    if (g.IsInitializer(in.name)) overridable_.push_back(in);
    else inputs_.push_back(in);
  }
  // As onnxruntime does, every initializer also listed as an input counts as
  // overridable, IR < 4 models included (they list all initializers).

  bool has_cpu = false;
  for (const auto& req : options.providers) {
    std::unique_ptr<ExecutionProvider> p;
    ONYX_RETURN_IF_ERROR(CreateProvider(req.name, &p));
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
  // onnxruntime's config key: a comma-separated list of transformer names.
  std::vector<std::string> disabled;
  auto dis = options.config.find("optimization.disable_specified_optimizers");
  if (dis != options.config.end()) {
    size_t start = 0;
    while (start <= dis->second.size()) {
      size_t end = std::min(dis->second.find(',', start), dis->second.size());
      std::string name = dis->second.substr(start, end - start);
      name.erase(0, name.find_first_not_of(" \t"));
      name.erase(name.find_last_not_of(" \t") + 1);
      if (!name.empty()) disabled.push_back(name);
      start = end + 1;
    }
  }
  ONYX_RETURN_IF_ERROR(OptimizeGraph(*model_.graph, options.graph_optimization_level, disabled));
  // What will run, before partitioning: onnxruntime's optimized_model_filepath.
  if (!options.optimized_model_filepath.empty())
    ONYX_RETURN_IF_ERROR(SaveModel(model_, options.optimized_model_filepath));
  std::vector<ExecutionProvider*> raw;
  for (auto& p : providers_) raw.push_back(p.get());
  ONYX_RETURN_IF_ERROR(ExecutionPlan::Build(g, raw, &plan_));

  int threads = options.intra_op_threads > 0 ? options.intra_op_threads : DefaultThreadCount();
  thread_pool_ = std::make_unique<ThreadPool>(threads);
  // OpenBLAS keeps one process-wide pool; it runs inside our kernels' calls, so
  // give it the same budget rather than letting both claim every core.
  openblas_set_num_threads(threads);
  if (profiler_.enabled()) {
    int64_t load_us = profiler_.MicrosSinceStart(loaded);
    profiler_.Record({"Session", "model_loading", 0, load_us, 0, {}});
    profiler_.Record({"Session", "session_initialization", load_us,
                      profiler_.MicrosSinceStart(Profiler::Clock::now()) - load_us, 0, {}});
  }
  return Status::OK();
}

Status Session::Run(const RunOptions* run_options, const std::vector<std::string>& input_names,
                    const std::vector<const Value*>& feeds, const std::vector<std::string>& output_names,
                    std::vector<Value>* outputs) const {
  ONYX_CHECK_ARG(input_names.size() == feeds.size(), "got ", input_names.size(), " input names but ", feeds.size(),
                 " input values");
  std::vector<std::shared_ptr<Tensor>> values(plan_->num_slots());
  std::unordered_set<std::string> fed;
  for (size_t i = 0; i < feeds.size(); ++i) {
    const std::string& name = input_names[i];
    const ValueInfo* decl = nullptr;
    for (const auto& in : model_.graph->inputs)
      if (in.name == name) decl = &in;
    if (!decl) return MakeError(ErrorCode::kInvalidArgument, "Invalid input name: ", name);
    ONYX_CHECK_ARG(feeds[i] != nullptr, "input '", name, "' is NULL");
    ONYX_CHECK_ARG(fed.insert(name).second, "input '", name, "' is fed more than once");
    ONYX_RETURN_IF_ERROR(CheckFeed(*decl, *feeds[i]));
    values[plan_->SlotOf(name)] = feeds[i]->tensor_ptr();
  }
  std::string missing;
  for (const auto& in : inputs_)
    if (!fed.count(in.name)) missing += (missing.empty() ? "" : ", ") + in.name;
  if (!missing.empty()) return MakeError(ErrorCode::kInvalidArgument, "Missing Input: ", missing);

  std::vector<std::string> wanted = output_names;
  if (wanted.empty())
    for (const auto& o : model_.graph->outputs) wanted.push_back(o.name);
  std::vector<int> out_slots;
  for (const auto& name : wanted) {
    bool is_output = false;
    for (const auto& o : model_.graph->outputs) is_output = is_output || o.name == name;
    if (!is_output) return MakeError(ErrorCode::kInvalidArgument, "Invalid output name: ", name);
    out_slots.push_back(plan_->SlotOf(name));
  }

  Profiler* profiler = profiler_.enabled() ? &profiler_ : nullptr;
  auto run_start = Profiler::Clock::now();
  ONYX_RETURN_IF_ERROR(plan_->Execute(values, run_options, thread_pool_.get(), profiler));
  if (profiler) {
    profiler->Record({"Session", "model_run", profiler->MicrosSinceStart(run_start),
                      std::chrono::duration_cast<std::chrono::microseconds>(Profiler::Clock::now() - run_start).count(),
                      0, {}});
  }

  std::vector<Value> result;
  result.reserve(out_slots.size());
  std::unordered_set<int> handed_out;
  for (int s : out_slots) {
    const auto& t = values[s];
    if (!t) return MakeError(ErrorCode::kEngineError, "output slot ", s, " has no value after the run");
    // Only values this run produced can be handed over without a copy; feeds
    // and initializers stay with their owners, and a name asked for twice
    // gets a copy the second time.
    if (plan_->IsNodeOutput(s) && handed_out.insert(s).second) result.emplace_back(t);
    else result.emplace_back(t->Clone());
  }
  *outputs = std::move(result);
  return Status::OK();
}

Status Session::EndProfiling(std::string* path) const {
  std::lock_guard<std::mutex> lock(profile_mu_);
  return profiler_.End(path);
}

}  // namespace onyx
