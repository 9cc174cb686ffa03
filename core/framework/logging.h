// Logging to stderr, filtered by severity (0 verbose, 1 info, 2 warning,
// 3 error, 4 fatal) and, for verbose messages, by verbosity level.
//
// The process default (onnxruntime's set_default_logger_severity /
// set_default_logger_verbosity) applies wherever a session or run leaves its
// own setting at -1.
#pragma once

#include <string>

#include "core/framework/status.h"

namespace onyx {

enum class Severity : int { kVerbose = 0, kInfo = 1, kWarning = 2, kError = 3, kFatal = 4 };

void SetDefaultLogSeverity(int severity);
int DefaultLogSeverity();
void SetDefaultLogVerbosity(int level);
int DefaultLogVerbosity();

// A named logging scope (a session, or one run of it).
class Logger {
 public:
  // severity -1 follows the process default at each call.
  Logger(std::string id, int severity, int verbosity) : id_(std::move(id)), severity_(severity), verbosity_(verbosity) {}

  // Verbose messages also need `verbosity_level` <= the logger's verbosity.
  bool Enabled(Severity s, int verbosity_level = 0) const;
  void Log(Severity s, const std::string& message) const;
  template <typename... Args>
  void Logf(Severity s, const Args&... args) const {
    if (Enabled(s)) Log(s, StrCat(args...));
  }

  const std::string& id() const { return id_; }

 private:
  std::string id_;
  int severity_;
  int verbosity_;
};

}  // namespace onyx
