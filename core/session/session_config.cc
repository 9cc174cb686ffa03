#include "core/session/session_config.h"

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstdlib>
#include <cstring>

#include <unistd.h>

namespace onyx {

namespace {

constexpr ConfigScope S = ConfigScope::kSession;
constexpr ConfigScope R = ConfigScope::kRun;
constexpr ConfigHandling H = ConfigHandling::kHonoured;
constexpr ConfigHandling V = ConfigHandling::kValuesOnly;
constexpr ConfigHandling X = ConfigHandling::kRefused;

const char* const kNoOrtFormat = "this engine loads and saves ONNX models only, not onnxruntime's ORT format";
const char* const kNoQdqFusion = "QDQ groups are fused into quantized kernels (qdq_fusion, which also drops equal DQ/Q "
                                 "pairs around data movement); there is no separate clean-up or double-QDQ pass";
const char* const kNoEpContext = "no provider of this engine compiles graphs into EP context nodes";
const char* const kNoMlasKnob = "a tuning switch of onnxruntime's MLAS kernels, which this engine does not use";
const char* const kNoMoe = "no mixture-of-experts statistics are collected by this engine";

}  // namespace

const std::vector<ConfigKey>& ConfigKeys() {
  static const std::vector<ConfigKey> keys = {
      // Threads (core/framework/thread_pool.h).
      {"session.intra_op.allow_spinning", S, H, "", "idle intra-op workers spin before they sleep ('1', default) or sleep at once ('0')"},
      {"session.inter_op.allow_spinning", S, H, "", "the same for the inter-op pool of execution_mode ORT_PARALLEL"},
      {"session.intra_op.spin_duration_us", S, H, "", "how long an idle intra-op worker spins (microseconds)"},
      {"session.inter_op.spin_duration_us", S, H, "", "how long an idle inter-op worker spins (microseconds)"},
      {"session.intra_op.spin_backoff_max", S, H, "", "the most pause instructions between two polls of a spinning intra-op worker"},
      {"session.inter_op.spin_backoff_max", S, H, "", "the same for inter-op workers"},
      {"session.force_spinning_stop", S, H, "", "'1': workers stop spinning when the last concurrent run returns"},
      {"session.intra_op_thread_affinities", S, H, "", "pins each intra-op worker thread to the listed processors"},
      {"session.set_denormal_as_zero", S, H, "", "'1': FTZ and DAZ on the pool threads and on the caller during runs"},
      {"session.dynamic_block_base", S, V, "0", "ParallelFor splits work into fixed chunks; dynamic block sizing is not implemented"},
      // Memory.
      {"session.use_env_allocators", S, H, "", "'1': the environment's registered CPU allocator serves the session"},
      {"session.memory_limit_bytes", S, H, "", "this engine's: the most bytes a session's runs may hold at once"},
      {"session.use_device_allocator_for_initializers", S, V, "1",
       "initializers always stay in the loaded model's own memory (never the arena), which is what '1' asks"},
      {"session.conv.winograd_f4", S, H, "", "'1' (default): float 3x3 convs on 28x28 and larger images may take Winograd F(4x4, 3x3), a few 1e-6 of the output's range from the direct conv; '0' keeps F(2x2, 3x3), whose error is the direct conv's"},
      {"session.disable_prepacking", S, V, "0", "kernels that pre-pack their weights always do (at session creation)"},
      {"session.save_external_prepacked_constant_initializers", S, V, "0", "pre-packed weights are kept in memory only"},
      {"session.prepack.enable_parallel", S, V, "0", "weights are pre-packed one kernel after another"},
      {"session.collect_node_memory_stats_to_file", S, X, "", "per-node memory statistics are not collected"},
      {"session.resource_cuda_partitioning_settings", S, X, "", "capacity-aware partitioning is not implemented"},
      // Model loading and saving.
      {"session.load_model_format", S, V, "ONNX", kNoOrtFormat},
      {"session.save_model_format", S, V, "ONNX", kNoOrtFormat},
      {"session.use_ort_model_bytes_directly", S, V, "0", kNoOrtFormat},
      {"session.use_ort_model_bytes_for_initializers", S, V, "0", kNoOrtFormat},
      {"session.qdqisint8allowed", S, X, "", kNoOrtFormat},
      {"optimization.minimal_build_optimizations", S, X, "", kNoOrtFormat},
      {"session.model_external_initializers_file_folder_path", S, H, "",
       "the folder external data files are read from for a model loaded from bytes"},
      {"session.use_external_initializer_file_buffers_directly", S, X, "",
       "external data given in memory is always copied or mapped by the loader"},
      {"session.optimized_model_external_initializers_file_name", S, H, "",
       "optimized_model_filepath writes large initializers to this file"},
      {"session.optimized_model_external_initializers_min_size_in_bytes", S, H, "",
       "the size from which initializers go to that file"},
      {"session.strict_shape_type_inference", S, H, "", "'1': what type and shape inference warns about fails the session"},
      {"session.allow_released_opsets_only", S, V, "1", "models with opsets newer than ONNX's released ones are always refused"},
      {"session.disable_aot_function_inlining", S, V, "0",
       "function nodes without a kernel are inlined at load: they could not run otherwise"},
      {"session.expand_function_ops", S, H, "", "this engine's: '1' runs every function node as its ONNX body"},
      {"session.debug_layout_transformation", S, V, "0", "the layout level (nhwc_transformer: 8-bit conv chains channels-last) writes no debug models"},
      // Graph optimization.
      {"optimization.disable_specified_optimizers", S, H, "", "the named graph transformers do not run"},
      {"optimization.enable_gelu_approximation", S, V, "0", "GELU is never replaced by its tanh approximation"},
      {"optimization.enable_cast_chain_elimination", S, V, "0",
       "Cast chains that may change a value are kept; cast_elimination shortens only chains that cannot"},
      {"optimization.constant_folding_max_output_size_in_bytes", S, X, "", "constant folding has no output size setting"},
      {"session.graph_optimizations_loop_level", S, X, "", "the optimizer's passes have no loop level setting"},
      {"session.disable_quant_qdq", S, H, "", "'1': QDQ groups are not fused into quantized kernels (qdq_fusion does not run)"},
      {"session.disable_double_qdq_remover", S, V, "1", kNoQdqFusion},
      {"session.enable_quant_qdq_cleanup", S, V, "0", kNoQdqFusion},
      {"session.disable_qdq_constant_folding", S, X, "", kNoQdqFusion},
      {"session.enable_dq_matmulnbits_fusion", S, V, "0", "DequantizeLinear+MatMul is not fused into MatMulNBits"},
      {"session.qdq_matmulnbits_accuracy_level", S, X, "", "DequantizeLinear+MatMul is not fused into MatMulNBits"},
      {"session.qdq_matmulnbits_block_size", S, X, "", "DequantizeLinear+MatMul is not fused into MatMulNBits"},
      {"session.x64quantprecision", S, X, "", "the int8 GEMM kernels choose their own arithmetic"},
      {"session.gqa_value_layout", S, X, "", "GroupQueryAttention has no alternative value layout here"},
      {"session.max_shape_override", S, X, "", "not implemented by this engine"},
      {"session.function_expansion_node_limit", S, X, "", "function inlining has no node limit setting"},
      {"session.function_expansion_byte_limit", S, X, "", "function inlining has no byte limit setting"},
      // Providers and partitioning.
      {"session.disable_cpu_ep_fallback", S, H, "", "'1': a node that only the CPU provider can run fails the session"},
      {"session.record_ep_graph_assignment_info", S, H, "", "'1': the session keeps which provider runs each node"},
      {"session.node_partition_config_file", S, X, "", "nodes are not partitioned into streams"},
      {"session.layer_assignment_settings", S, X, "", "nodes are assigned to providers by kernel availability only"},
      {"session.name_based_layer_assignment", S, X, "", "nodes are assigned to providers by kernel availability only"},
      {"session.strict_workspace_verification", S, X, "", "not implemented by this engine"},
      {"session.compile_only", S, V, "0", kNoEpContext},
      {"session.disable_model_compile", S, V, "0", kNoEpContext},
      {"session.fail_on_suboptimal_compiled_model", S, V, "0", kNoEpContext},
      {"ep.context_enable", S, V, "0", kNoEpContext},
      {"ep.context_file_path", S, X, "", kNoEpContext},
      {"ep.context_embed_mode", S, X, "", kNoEpContext},
      {"ep.context_node_name_prefix", S, X, "", kNoEpContext},
      {"ep.share_ep_contexts", S, V, "0", kNoEpContext},
      {"ep.context_model_external_initializers_file_name", S, X, "", kNoEpContext},
      {"ep.enable_weightless", S, V, "0", kNoEpContext},
      {"ep.nnapi.partitioning_stop_ops", S, X, "", "this engine has no NNAPI provider"},
      {"ep.dynamic.workload_type", S, X, "", "providers take no dynamic options"},
      {"mlas.enable_gemm_fastmath_arm64_bfloat16", S, V, "0", kNoMlasKnob},
      {"mlas.disable_kleidiai", S, X, "", kNoMlasKnob},
      {"mlas.kleidiai.conv_igemm_max_work", S, X, "", kNoMlasKnob},
      {"mlas.nchwc_depthwise_sliding", S, X, "", kNoMlasKnob},
      {"mlas.nchwc_pointwise_conv_max_input_channel_batch", S, X, "", kNoMlasKnob},
      {"mlas.qnbit.force_fp32", S, X, "", kNoMlasKnob},
      {"mlas.use_lut_gemm", S, X, "", kNoMlasKnob},
      {"session.enable_moe_expert_counting", S, V, "0", kNoMoe},
      {"session.enable_moe_expert_statistics", S, V, "0", kNoMoe},
      {"session.moe_expert_counter_alpha", S, X, "", kNoMoe},
      {"session.moe_expert_counter_beta", S, X, "", kNoMoe},
      {"session.moe_expert_counter_state_file", S, X, "", kNoMoe},
      // Run options.
      {"memory.enable_memory_arena_shrinkage", R, H, "", "the named arenas return idle memory after the run"},
      {"disable_synchronize_execution_providers", R, V, "0",
       "every run waits for its providers before it returns"},
      {"gpu_graph_id", R, X, "", "no provider of this engine captures CUDA graphs"},
      {"qnn.htp_perf_mode", R, X, "", "this engine has no QNN provider"},
      {"qnn.htp_perf_mode_post_run", R, X, "", "this engine has no QNN provider"},
      {"qnn.rpc_control_latency", R, X, "", "this engine has no QNN provider"},
      {"qnn.lora_config", R, X, "", "this engine has no QNN provider"},
  };
  return keys;
}

Status CheckConfigKeys(const std::map<std::string, std::string>& config, ConfigScope scope) {
  const char* what = scope == ConfigScope::kSession ? "session" : "run";
  for (const auto& kv : config) {
    const ConfigKey* found = nullptr;
    for (const ConfigKey& k : ConfigKeys())
      if (k.scope == scope && kv.first == k.key) found = &k;
    if (!found)
      return MakeError(ErrorCode::kInvalidArgument, what, " config entry '", kv.first,
                       "' is not a key onnxruntime or this engine defines (onnxruntime ignores unknown keys; this "
                       "engine refuses them so that a misspelt key is not silently dropped)");
    if (found->handling == ConfigHandling::kRefused)
      return MakeError(ErrorCode::kNotImplemented, what, " config entry '", kv.first, "' = '", kv.second,
                       "' is not supported: ", found->why);
    if (found->handling == ConfigHandling::kValuesOnly) {
      const std::vector<std::string> values = SplitConfigList(found->values, '|');
      if (std::find(values.begin(), values.end(), kv.second) == values.end())
        return MakeError(ErrorCode::kNotImplemented, what, " config entry '", kv.first, "' = '", kv.second,
                         "' is not supported (accepted: '", found->values, "'): ", found->why);
    }
  }
  return Status::OK();
}

Status ConfigBool(const std::map<std::string, std::string>& config, const char* key, bool dflt, bool* out) {
  *out = dflt;
  auto it = config.find(key);
  if (it == config.end()) return Status::OK();
  if (it->second != "0" && it->second != "1")
    return MakeError(ErrorCode::kInvalidArgument, "session config entry '", key, "' must be '0' or '1', got '",
                     it->second, "'");
  *out = it->second == "1";
  return Status::OK();
}

Status ConfigInt(const std::map<std::string, std::string>& config, const char* key, int64_t lo, int64_t hi,
                 int64_t dflt, int64_t* out) {
  *out = dflt;
  auto it = config.find(key);
  if (it == config.end()) return Status::OK();
  const std::string& v = it->second;
  char* end = nullptr;
  errno = 0;
  const long long n = v.empty() || std::isspace(static_cast<unsigned char>(v[0])) ? 0 : std::strtoll(v.c_str(), &end, 10);
  if (v.empty() || !end || *end != '\0' || errno == ERANGE || n < lo || n > hi)
    return MakeError(ErrorCode::kInvalidArgument, "session config entry '", key, "' must be an integer in [", lo, ", ",
                     hi, "], got '", v, "'");
  *out = n;
  return Status::OK();
}

std::vector<std::string> SplitConfigList(const std::string& list, char sep) {
  std::vector<std::string> items;
  size_t b = 0;
  for (;;) {
    const size_t e = list.find(sep, b);
    items.push_back(list.substr(b, e == std::string::npos ? std::string::npos : e - b));
    if (e == std::string::npos) return items;
    b = e + 1;
  }
}

Status ParseThreadAffinities(const std::string& value, std::vector<std::vector<int>>* out) {
  out->clear();
  auto bad = [&](const std::string& why) {
    return MakeError(ErrorCode::kInvalidArgument, "session config entry 'session.intra_op_thread_affinities' = '",
                     value, "': ", why);
  };
  auto number = [&](const std::string& s, int* n) {
    if (s.empty() || s.size() > 6 || s.find_first_not_of("0123456789") != std::string::npos) return false;
    *n = std::atoi(s.c_str());
    return *n >= 1;
  };
  for (const std::string& thread : SplitConfigList(value, ';')) {
    std::vector<int> cpus;
    for (const std::string& item : SplitConfigList(thread, ',')) {
      const size_t dash = item.find('-');
      int first = 0, last = 0;
      if (dash == std::string::npos) {
        if (!number(item, &first)) return bad("'" + item + "' is not a processor number (they count from 1)");
        last = first;
      } else if (!number(item.substr(0, dash), &first) || !number(item.substr(dash + 1), &last) || last < first) {
        return bad("'" + item + "' is not a range of processor numbers (from-to, counting from 1)");
      }
      for (int c = first; c <= last; ++c) cpus.push_back(c - 1);
    }
    out->push_back(std::move(cpus));
  }
  return Status::OK();
}

}  // namespace onyx

namespace onyx {

Status ThreadPoolOptionsFromConfig(const std::map<std::string, std::string>& config, bool intra, int threads,
                                   ThreadPoolOptions* out) {
  *out = ThreadPoolOptions();
  out->name = intra ? "onyx-intra-op" : "onyx-inter-op";
  const std::string pool = intra ? "session.intra_op." : "session.inter_op.";
  ONYX_RETURN_IF_ERROR(ConfigBool(config, (pool + "allow_spinning").c_str(), true, &out->allow_spinning));
  int64_t v = 0;
  ONYX_RETURN_IF_ERROR(
      ConfigInt(config, (pool + "spin_duration_us").c_str(), 0, 10000000, out->spin_duration_us, &v));
  out->spin_duration_us = v;
  ONYX_RETURN_IF_ERROR(ConfigInt(config, (pool + "spin_backoff_max").c_str(), 1, 64, out->spin_backoff_max, &v));
  out->spin_backoff_max = static_cast<int>(v);
  ONYX_RETURN_IF_ERROR(ConfigBool(config, "session.set_denormal_as_zero", false, &out->denormal_as_zero));
  auto aff = config.find("session.intra_op_thread_affinities");
  if (intra && aff != config.end()) {
    ONYX_RETURN_IF_ERROR(ParseThreadAffinities(aff->second, &out->affinities));
    if (static_cast<int>(out->affinities.size()) != threads - 1)
      return MakeError(ErrorCode::kInvalidArgument, "session config entry 'session.intra_op_thread_affinities' = '",
                       aff->second, "' lists ", out->affinities.size(), " thread(s) but the intra-op pool of ",
                       threads, " threads has ", threads - 1,
                       " worker threads (the caller's thread is never pinned; set intra_op_num_threads to one more "
                       "than the number of ';'-separated entries)");
    const long cpus = sysconf(_SC_NPROCESSORS_CONF);
    for (const auto& set : out->affinities)
      for (int c : set)
        if (c >= cpus)
          return MakeError(ErrorCode::kInvalidArgument,
                           "session config entry 'session.intra_op_thread_affinities' = '", aff->second,
                           "' names processor ", c + 1, " but this machine has ", cpus);
  }
  return Status::OK();
}

}  // namespace onyx
