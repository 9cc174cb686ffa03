#include <thread>

#include "capi/src/api_table.h"
#include "capi/src/handles.h"

namespace onyx {
namespace capi {
namespace {

// The engine's options for a session made from `env`: the env's shared
// allocator joins them when the options ask for it, as in onnxruntime.
SessionOptions EffectiveOptions(const OnyxEnv* env, const OnyxSessionOptions* options) {
  SessionOptions o = options ? options->options : SessionOptions();
  auto it = o.config.find("session.use_env_allocators");
  if (it != o.config.end() && it->second == "1" && env->cpu_allocator) o.cpu_allocator = env->cpu_allocator;
  if (!o.use_per_session_threads) {
    if (!env->global_intra_pool)
      ONYX_THROW(ErrorCode::kFail, "When the session is not configured to use per session threadpools, the env must "
                 "be created with global thread pools (EnvCreateGlobalThreadPools; Python: "
                 "set_global_thread_pool_sizes)");
    o.shared_thread_pool = env->global_intra_pool;
  }
  return o;
}

// A creation that failed while its options' cancel flag is set was canceled
// (SessionOptionsSetLoadCancellation): ONYX_MODEL_LOAD_CANCELED.
OnyxStatus* CreationStatus(const OnyxSessionOptions* options, const Status& s) {
  if (s.ok()) return nullptr;
  if (options && options->options.load_cancel && options->options.load_cancel->load())
    return NewStatus(ONYX_MODEL_LOAD_CANCELED, s.message());
  return ToOnyxStatus(s);
}

// Inputs and outputs live in CPU memory, from the session's arena unless the
// options turned it off (onnxruntime then reports the device allocator).
void SetIoMemory(OnyxSession* s) {
  MemoryInfo& m = s->io_memory.info;
  m = MemoryInfo();
  m.alloc_type = s->session->options().enable_cpu_mem_arena || s->session->options().cpu_allocator ? 1 : 0;
}

// Set while an async run's callback is running on this thread: a session
// released from there must not wait for (or join) the thread it runs on.
thread_local int tls_in_async_callback = 0;

OnyxStatus* SessionCreate(const OnyxEnv* env, const char* path, const OnyxSessionOptions* options, OnyxSession** out) {
  API_BEGIN
  API_CHECK_NOT_NULL(env);
  API_CHECK_NOT_NULL(path);
  API_CHECK_NOT_NULL(out);
  auto s = std::make_unique<OnyxSession>();
  std::unique_ptr<Session> session;
  if (OnyxStatus* st = CreationStatus(options, Session::Create(EffectiveOptions(env, options), path, &session)))
    return st;
  s->session = std::move(session);
  SetIoMemory(s.get());
  *out = s.release();
  API_END
}

OnyxStatus* SessionCreateFromBytes(const OnyxEnv* env, const void* data, size_t length,
                                   const OnyxSessionOptions* options, OnyxSession** out) {
  API_BEGIN
  API_CHECK_NOT_NULL(env);
  API_CHECK_NOT_NULL(data);
  API_CHECK_NOT_NULL(out);
  auto s = std::make_unique<OnyxSession>();
  std::unique_ptr<Session> session;
  if (OnyxStatus* st =
          CreationStatus(options, Session::CreateFromBytes(EffectiveOptions(env, options), data, length, &session)))
    return st;
  s->session = std::move(session);
  SetIoMemory(s.get());
  *out = s.release();
  API_END
}

void WaitForAsyncRuns(OnyxSession* session) {
  std::unique_lock<std::mutex> lock(session->async_mu);
  session->async_done.wait(lock, [session] { return session->async_pending == 0; });
}

void SessionRelease(OnyxSession* session) {
  if (session == nullptr) return;
  if (tls_in_async_callback) {
    // This thread is one of a pool's workers (maybe this session's): free the
    // session from another thread once its runs are done, so the pool is never
    // joined from one of its own threads.
    std::thread([session] {
      WaitForAsyncRuns(session);
      delete session;
    }).detach();
    return;
  }
  WaitForAsyncRuns(session);
  delete session;
}

enum class Which { kInput, kOutput, kOverridable };

const std::vector<ValueInfo>& List(const OnyxSession* s, Which w) {
  switch (w) {
    case Which::kInput: return s->session->inputs();
    case Which::kOutput: return s->session->outputs();
    default: return s->session->overridable_initializers();
  }
}

const char* WhichName(Which w) {
  return w == Which::kInput ? "input" : w == Which::kOutput ? "output" : "overridable initializer";
}

template <Which W>
OnyxStatus* GetCount(const OnyxSession* session, size_t* out) {
  API_BEGIN
  API_CHECK_NOT_NULL(session);
  API_CHECK_NOT_NULL(out);
  *out = List(session, W).size();
  API_END
}

template <Which W>
OnyxStatus* GetName(const OnyxSession* session, size_t index, const char** out) {
  API_BEGIN
  API_CHECK_NOT_NULL(session);
  API_CHECK_NOT_NULL(out);
  const auto& list = List(session, W);
  if (index >= list.size())
    return NewStatus(ONYX_INVALID_ARGUMENT, StrCat(WhichName(W), " index ", index, " is out of range (the model has ",
                                                   list.size(), ")"));
  *out = list[index].name.c_str();
  API_END
}

template <Which W>
OnyxStatus* GetTypeInfo(const OnyxSession* session, size_t index, OnyxTypeInfo** out) {
  API_BEGIN
  API_CHECK_NOT_NULL(session);
  API_CHECK_NOT_NULL(out);
  const auto& list = List(session, W);
  if (index >= list.size())
    return NewStatus(ONYX_INVALID_ARGUMENT, StrCat(WhichName(W), " index ", index, " is out of range (the model has ",
                                                   list.size(), ")"));
  *out = NewTypeInfo(list[index].type);
  API_END
}

OnyxStatus* SessionGetModelMetadata(const OnyxSession* session, OnyxModelMetadata** out) {
  API_BEGIN
  API_CHECK_NOT_NULL(session);
  API_CHECK_NOT_NULL(out);
  const Model& m = session->session->model();
  auto md = std::make_unique<OnyxModelMetadata>();
  md->producer = m.producer_name;
  md->graph_name = m.graph->name;
  md->domain = m.domain;
  md->description = m.doc_string;
  md->graph_description = m.graph->doc;
  md->version = m.model_version;
  md->custom = m.metadata;
  *out = md.release();
  API_END
}

OnyxStatus* SessionGetProviderCount(const OnyxSession* session, size_t* out) {
  API_BEGIN
  API_CHECK_NOT_NULL(session);
  API_CHECK_NOT_NULL(out);
  *out = session->session->provider_names().size();
  API_END
}

OnyxStatus* SessionGetProviderName(const OnyxSession* session, size_t index, const char** out) {
  API_BEGIN
  API_CHECK_NOT_NULL(session);
  API_CHECK_NOT_NULL(out);
  const auto& names = session->session->provider_names();
  if (index >= names.size())
    return NewStatus(ONYX_INVALID_ARGUMENT, StrCat("provider index ", index, " is out of range (", names.size(), ")"));
  *out = names[index].c_str();
  API_END
}

OnyxStatus* SessionRun(OnyxSession* session, const OnyxRunOptions* run_options, const char* const* input_names,
                       const OnyxValue* const* inputs, size_t input_count, const char* const* output_names,
                       size_t output_count, OnyxValue** outputs) {
  API_BEGIN
  API_CHECK_NOT_NULL(session);
  if (input_count > 0) {
    API_CHECK_NOT_NULL(input_names);
    API_CHECK_NOT_NULL(inputs);
  }
  if (output_count > 0) API_CHECK_NOT_NULL(outputs);
  std::vector<std::string> in_names;
  std::vector<const Value*> feeds;
  for (size_t i = 0; i < input_count; ++i) {
    if (!input_names[i]) return NewStatus(ONYX_INVALID_ARGUMENT, StrCat("SessionRun: input_names[", i, "] is NULL"));
    if (!inputs[i]) return NewStatus(ONYX_INVALID_ARGUMENT, StrCat("SessionRun: value for input '", input_names[i], "' is NULL"));
    in_names.emplace_back(input_names[i]);
    feeds.push_back(&inputs[i]->value);
  }
  std::vector<std::string> out_names;
  if (output_names) {
    for (size_t i = 0; i < output_count; ++i) {
      if (!output_names[i]) return NewStatus(ONYX_INVALID_ARGUMENT, StrCat("SessionRun: output_names[", i, "] is NULL"));
      out_names.emplace_back(output_names[i]);
    }
    if (output_count == 0)
      return NewStatus(ONYX_INVALID_ARGUMENT, "SessionRun: output_names given but output_count is 0");
  } else if (output_count != session->session->outputs().size()) {
    return NewStatus(ONYX_INVALID_ARGUMENT, StrCat("SessionRun: output_names is NULL (all outputs) but output_count is ",
                                                   output_count, " while the model has ",
                                                   session->session->outputs().size(), " outputs"));
  }
  std::vector<Value> results;
  API_RETURN_IF_ERROR(session->session->Run(run_options ? &run_options->options : nullptr, in_names, feeds,
                                            out_names, &results));
  // Allocate every handle first so a failure leaves the caller's slots untouched.
  std::vector<std::unique_ptr<OnyxValue>> handles;
  for (auto& v : results) handles.push_back(std::make_unique<OnyxValue>(OnyxValue{std::move(v)}));
  for (size_t i = 0; i < handles.size(); ++i) outputs[i] = handles[i].release();
  API_END
}

// Collects SessionRun-style arguments into owned names and shared values.
OnyxStatus* CollectRunArgs(const char* fn, const char* const* input_names, const OnyxValue* const* inputs,
                           size_t input_count, const char* const* output_names, size_t output_count,
                           size_t model_outputs, std::vector<std::string>* in_names, std::vector<Value>* feeds,
                           std::vector<std::string>* out_names) {
  if (input_count > 0 && (!input_names || !inputs))
    return NewStatus(ONYX_INVALID_ARGUMENT, StrCat(fn, ": input_names and inputs must not be NULL when input_count is ",
                                                   input_count));
  for (size_t i = 0; i < input_count; ++i) {
    if (!input_names[i]) return NewStatus(ONYX_INVALID_ARGUMENT, StrCat(fn, ": input_names[", i, "] is NULL"));
    if (!inputs[i])
      return NewStatus(ONYX_INVALID_ARGUMENT, StrCat(fn, ": value for input '", input_names[i], "' is NULL"));
    in_names->emplace_back(input_names[i]);
    feeds->push_back(inputs[i]->value);
  }
  if (output_names) {
    if (output_count == 0) return NewStatus(ONYX_INVALID_ARGUMENT, StrCat(fn, ": output_names given but output_count is 0"));
    for (size_t i = 0; i < output_count; ++i) {
      if (!output_names[i]) return NewStatus(ONYX_INVALID_ARGUMENT, StrCat(fn, ": output_names[", i, "] is NULL"));
      out_names->emplace_back(output_names[i]);
    }
  } else if (output_count != model_outputs) {
    return NewStatus(ONYX_INVALID_ARGUMENT, StrCat(fn, ": output_names is NULL (all outputs) but output_count is ",
                                                   output_count, " while the model has ", model_outputs, " outputs"));
  }
  return nullptr;
}

OnyxStatus* SessionRunAsync(OnyxSession* session, const OnyxRunOptions* run_options, const char* const* input_names,
                            const OnyxValue* const* inputs, size_t input_count, const char* const* output_names,
                            size_t output_count, OnyxRunAsyncCallback callback, void* user_data) {
  API_BEGIN
  API_CHECK_NOT_NULL(session);
  API_CHECK_NOT_NULL(callback);
  struct Job {
    OnyxSession* session;
    const RunOptions* run_options;
    std::vector<std::string> in_names, out_names;
    std::vector<Value> feeds;
    OnyxRunAsyncCallback callback;
    void* user_data;
  };
  auto job = std::make_shared<Job>();
  job->session = session;
  job->run_options = run_options ? &run_options->options : nullptr;
  job->callback = callback;
  job->user_data = user_data;
  if (OnyxStatus* bad = CollectRunArgs("SessionRunAsync", input_names, inputs, input_count, output_names,
                                       output_count, session->session->outputs().size(), &job->in_names,
                                       &job->feeds, &job->out_names))
    return bad;
  ThreadPool* pool = session->session->thread_pool();
  {
    std::lock_guard<std::mutex> lock(session->async_mu);
    ++session->async_pending;
  }
  auto task = [job] {
    OnyxSession* s = job->session;
    std::vector<OnyxValue*> handles;
    OnyxStatus* status = nullptr;
    try {
      std::vector<const Value*> feed_ptrs;
      for (const Value& v : job->feeds) feed_ptrs.push_back(&v);
      std::vector<Value> results;
      Status st = s->session->Run(job->run_options, job->in_names, feed_ptrs, job->out_names, &results);
      if (st.ok()) {
        for (auto& v : results) handles.push_back(new OnyxValue{std::move(v)});
      } else {
        status = ToOnyxStatus(st);
      }
    } catch (const std::exception& e) {
      status = NewStatus(ONYX_RUNTIME_EXCEPTION, e.what());
    } catch (...) {
      status = NewStatus(ONYX_RUNTIME_EXCEPTION, "unknown exception");
    }
    if (status) {
      for (OnyxValue* h : handles) delete h;
      handles.clear();
    }
    // The inputs are no longer needed; drop them before the callback so the
    // caller may reuse their buffers from there.
    job->feeds.clear();
    ++tls_in_async_callback;
    job->callback(job->user_data, handles.empty() ? nullptr : handles.data(), handles.size(), status);
    --tls_in_async_callback;
    std::lock_guard<std::mutex> lock(s->async_mu);
    if (--s->async_pending == 0) s->async_done.notify_all();
  };
  if (pool == nullptr || !pool->Schedule(task)) {
    std::lock_guard<std::mutex> lock(session->async_mu);
    --session->async_pending;
    // onnxruntime's wording for the same refusal.
    return NewStatus(ONYX_INVALID_ARGUMENT, "intra op thread pool must have at least one thread for RunAsync");
  }
  API_END
}

template <bool kInput>
OnyxStatus* GetIoMemoryInfo(const OnyxSession* session, size_t index, const OnyxMemoryInfo** out) {
  API_BEGIN
  API_CHECK_NOT_NULL(session);
  API_CHECK_NOT_NULL(out);
  const size_t count = kInput ? session->session->inputs().size() : session->session->outputs().size();
  if (index >= count)
    return NewStatus(ONYX_INVALID_ARGUMENT, StrCat(kInput ? "input" : "output", " index ", index,
                                                   " is out of range (the model has ", count, ")"));
  *out = &session->io_memory;
  API_END
}

OnyxStatus* SessionRunTensors(OnyxSession* session, const OnyxRunOptions* run_options, const size_t* input_indices,
                              const OnyxTensorArg* inputs, size_t input_count, const size_t* output_indices,
                              size_t output_count, OnyxTensorResult* outputs) {
  API_BEGIN
  API_CHECK_NOT_NULL(session);
  if (input_count > 0) {
    API_CHECK_NOT_NULL(input_indices);
    API_CHECK_NOT_NULL(inputs);
  }
  if (output_count > 0) API_CHECK_NOT_NULL(outputs);
  const Session& sess = *session->session;
  const size_t n_inputs = sess.inputs().size();
  const size_t n_feedable = n_inputs + sess.overridable_initializers().size();
  static const MemoryInfo kCpu;
  std::vector<Value> feeds;
  feeds.reserve(input_count);
  std::vector<const Value*> feed_ptrs(input_count);
  for (size_t i = 0; i < input_count; ++i) {
    const size_t index = input_indices[i];
    if (index >= n_feedable)
      return NewStatus(ONYX_INVALID_ARGUMENT, StrCat("SessionRunTensors: input_indices[", i, "] = ", index,
                                                     " is out of range (the model has ", n_inputs, " inputs and ",
                                                     n_feedable - n_inputs, " overridable initializers)"));
    const OnyxTensorArg& arg = inputs[i];
    const std::string& name =
        index < n_inputs ? sess.inputs()[index].name : sess.overridable_initializers()[index - n_inputs].name;
    Dims dims;
    const int type = EnumArg(arg.type);
    Status st = CheckTensorArg(arg.data, arg.data_bytes, arg.shape, arg.rank, type, &dims);
    if (!st.ok())
      return NewStatus(ONYX_INVALID_ARGUMENT, StrCat("SessionRunTensors: input '", name, "': ", st.message()));
    // The engine never writes its inputs; the tensor type is shared with outputs, hence the cast.
    feeds.emplace_back(Tensor(static_cast<ElemType>(type), std::move(dims), const_cast<void*>(arg.data), kCpu));
    feed_ptrs[i] = &feeds.back();
  }
  std::vector<Value> results;
  API_RETURN_IF_ERROR(sess.RunIndexed(run_options ? &run_options->options : nullptr, input_indices, feed_ptrs.data(),
                                      input_count, output_indices, output_count, &results));
  // Allocate every handle first so a failure leaves the caller's slots untouched.
  std::vector<std::unique_ptr<OnyxValue>> handles;
  handles.reserve(results.size());
  for (auto& v : results) handles.push_back(std::make_unique<OnyxValue>(OnyxValue{std::move(v)}));
  for (size_t i = 0; i < handles.size(); ++i) {
    OnyxTensorResult& r = outputs[i];
    Value& v = handles[i]->value;
    r = OnyxTensorResult{};
    r.kind = static_cast<OnyxValueKind>(v.kind());
    if (v.IsTensor()) {
      Tensor& t = v.tensor();
      r.type = static_cast<OnyxElementType>(t.type());
      r.rank = t.dims().size();
      r.shape = t.dims().data();
      r.data = t.type() == ElemType::kString || t.size() == 0 ? nullptr : t.raw();
    }
    r.value = handles[i].release();
  }
  API_END
}

OnyxStatus* SessionEndProfiling(OnyxSession* session, const char** out) {
  API_BEGIN
  API_CHECK_NOT_NULL(session);
  API_CHECK_NOT_NULL(out);
  std::string path;
  API_RETURN_IF_ERROR(session->session->EndProfiling(&path));
  session->last_profile_path = std::move(path);
  *out = session->last_profile_path.c_str();
  API_END
}

OnyxStatus* SessionGetProfilingStartTimeNs(const OnyxSession* session, uint64_t* out) {
  API_BEGIN
  API_CHECK_NOT_NULL(session);
  API_CHECK_NOT_NULL(out);
  *out = static_cast<uint64_t>(session->session->profiling_start_time_ns());
  API_END
}

Status CheckAssignmentRecorded(const OnyxSession* session) {
  const auto& cfg = session->session->options().config;
  auto it = cfg.find("session.record_ep_graph_assignment_info");
  if (it == cfg.end() || it->second != "1")
    return MakeError(ErrorCode::kFail, "Session configuration entry 'session.record_ep_graph_assignment_info' must be "
                     "set to \"1\" to retrieve EP graph assignment information.");
  return Status::OK();
}

OnyxStatus* SessionGetAssignedNodeCount(const OnyxSession* session, size_t* out) {
  API_BEGIN
  API_CHECK_NOT_NULL(session);
  API_CHECK_NOT_NULL(out);
  API_RETURN_IF_ERROR(CheckAssignmentRecorded(session));
  *out = session->session->NodeAssignments().size();
  API_END
}

OnyxStatus* SessionGetAssignedNode(const OnyxSession* session, size_t index, const char** provider,
                                   const char** node_name, const char** op_type, const char** domain) {
  API_BEGIN
  API_CHECK_NOT_NULL(session);
  API_CHECK_NOT_NULL(provider);
  API_CHECK_NOT_NULL(node_name);
  API_CHECK_NOT_NULL(op_type);
  API_CHECK_NOT_NULL(domain);
  API_RETURN_IF_ERROR(CheckAssignmentRecorded(session));
  const auto nodes = session->session->NodeAssignments();
  if (index >= nodes.size())
    return NewStatus(ONYX_INVALID_ARGUMENT, StrCat("SessionGetAssignedNode: index ", index, " is out of range (",
                                                   nodes.size(), " nodes)"));
  *provider = nodes[index].first ? nodes[index].first->c_str() : "";
  *node_name = nodes[index].second->name.c_str();
  *op_type = nodes[index].second->op_type.c_str();
  *domain = nodes[index].second->domain.c_str();
  API_END
}

}  // namespace

void FillSessionApi(OnyxApi& a) {
  a.SessionCreate = SessionCreate;
  a.SessionCreateFromBytes = SessionCreateFromBytes;
  a.SessionRelease = SessionRelease;
  a.SessionGetInputCount = GetCount<Which::kInput>;
  a.SessionGetOutputCount = GetCount<Which::kOutput>;
  a.SessionGetOverridableInitializerCount = GetCount<Which::kOverridable>;
  a.SessionGetInputName = GetName<Which::kInput>;
  a.SessionGetOutputName = GetName<Which::kOutput>;
  a.SessionGetOverridableInitializerName = GetName<Which::kOverridable>;
  a.SessionGetInputTypeInfo = GetTypeInfo<Which::kInput>;
  a.SessionGetOutputTypeInfo = GetTypeInfo<Which::kOutput>;
  a.SessionGetOverridableInitializerTypeInfo = GetTypeInfo<Which::kOverridable>;
  a.SessionGetModelMetadata = SessionGetModelMetadata;
  a.SessionGetProviderCount = SessionGetProviderCount;
  a.SessionGetProviderName = SessionGetProviderName;
  a.SessionRun = SessionRun;
  a.SessionEndProfiling = SessionEndProfiling;
  a.SessionRunTensors = SessionRunTensors;
  a.SessionGetProfilingStartTimeNs = SessionGetProfilingStartTimeNs;
  a.SessionRunAsync = SessionRunAsync;
  a.SessionGetInputMemoryInfo = GetIoMemoryInfo<true>;
  a.SessionGetOutputMemoryInfo = GetIoMemoryInfo<false>;
  a.SessionGetAssignedNodeCount = SessionGetAssignedNodeCount;
  a.SessionGetAssignedNode = SessionGetAssignedNode;
}

}  // namespace capi
}  // namespace onyx
