// Session and run config keys (string-keyed options): the table of every key
// onnxruntime defines (onnxruntime_session_options_config_keys.h,
// onnxruntime_run_options_config_keys.h) and the engine's own, each either
// honoured, accepted only at the value that says what the engine does, or
// refused with the reason; keys in neither list are refused by name
// (onnxruntime ignores them). Readers of values check their grammar here.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "core/framework/status.h"
#include "core/framework/thread_pool.h"

namespace onyx {

enum class ConfigScope { kSession, kRun };

enum class ConfigHandling {
  kHonoured,     // the engine reads it and acts on it
  kValuesOnly,   // accepted with the listed values (what the engine does), refused otherwise
  kRefused,      // any value refused: the engine cannot do what it asks
};

struct ConfigKey {
  const char* key;
  ConfigScope scope;
  ConfigHandling handling;
  // kValuesOnly: '|'-separated accepted values.
  const char* values;
  // Why a value is refused (kValuesOnly, kRefused), or what the engine does (kHonoured).
  const char* why;
};

// Every key known, onnxruntime's and the engine's.
const std::vector<ConfigKey>& ConfigKeys();

// Refuses (INVALID_ARGUMENT, or NOT_IMPLEMENTED for what onnxruntime can do
// and this engine cannot) the first entry that is unknown, refused, or set
// to a value outside its accepted list. Honoured keys' values are checked by
// their readers.
Status CheckConfigKeys(const std::map<std::string, std::string>& config, ConfigScope scope);

// "0" or "1" (absent: `dflt`); anything else is an error naming key and value.
Status ConfigBool(const std::map<std::string, std::string>& config, const char* key, bool dflt, bool* out);
// A decimal integer in [lo, hi] (absent: `dflt`).
Status ConfigInt(const std::map<std::string, std::string>& config, const char* key, int64_t lo, int64_t hi,
                 int64_t dflt, int64_t* out);

// `list` split at each `sep` (empty items kept: "a;;b" is 3 items, "" is 1).
std::vector<std::string> SplitConfigList(const std::string& list, char sep);

// onnxruntime's session.intra_op_thread_affinities grammar: ';' between
// threads, ',' between processors, "a-b" ranges; processors count from 1.
// One set of 0-based CPU numbers per thread.
Status ParseThreadAffinities(const std::string& value, std::vector<std::vector<int>>* out);

// The intra-op (`intra` true) or inter-op pool's options from the session's
// config entries: session.{intra,inter}_op.allow_spinning, .spin_duration_us,
// .spin_backoff_max, session.set_denormal_as_zero and, for the intra-op pool
// of `threads` threads, session.intra_op_thread_affinities (one entry per
// worker: threads - 1).
Status ThreadPoolOptionsFromConfig(const std::map<std::string, std::string>& config, bool intra, int threads,
                                   ThreadPoolOptions* out);

}  // namespace onyx
