#include "core/framework/logging.h"

#include <atomic>
#include <chrono>
#include <cstdio>
#include <ctime>
#include <mutex>

namespace onyx {
namespace {

std::atomic<int> g_severity{static_cast<int>(Severity::kWarning)};
std::atomic<int> g_verbosity{0};

}  // namespace

void SetDefaultLogSeverity(int severity) { g_severity.store(severity); }
int DefaultLogSeverity() { return g_severity.load(); }
void SetDefaultLogVerbosity(int level) { g_verbosity.store(level); }
int DefaultLogVerbosity() { return g_verbosity.load(); }

bool Logger::Enabled(Severity s, int verbosity_level) const {
  const int threshold = severity_ >= 0 ? severity_ : DefaultLogSeverity();
  if (static_cast<int>(s) < threshold) return false;
  if (s != Severity::kVerbose) return true;
  return verbosity_level <= (verbosity_ > 0 ? verbosity_ : DefaultLogVerbosity());
}

void Logger::Log(Severity s, const std::string& message) const {
  static const char kLetters[] = {'V', 'I', 'W', 'E', 'F'};
  static std::mutex mu;
  const auto now = std::chrono::system_clock::now();
  const std::time_t secs = std::chrono::system_clock::to_time_t(now);
  const long long micros =
      std::chrono::duration_cast<std::chrono::microseconds>(now.time_since_epoch()).count() % 1000000;
  std::tm tm_buf;
  localtime_r(&secs, &tm_buf);
  char when[32];
  std::strftime(when, sizeof(when), "%Y-%m-%d %H:%M:%S", &tm_buf);
  std::lock_guard<std::mutex> lock(mu);
  std::fprintf(stderr, "%s.%06lld [%c:onyxruntime:%s] %s\n", when, micros, kLetters[static_cast<int>(s)],
               id_.c_str(), message.c_str());
  std::fflush(stderr);
}

}  // namespace onyx
