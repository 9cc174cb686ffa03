// Session profiler: collects events and writes them as Chrome-trace JSON
// (chrome://tracing, Perfetto). Recording is thread-safe; when disabled the
// session never calls it.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <mutex>
#include <string>
#include <vector>

#include "core/framework/status.h"

namespace onyx {

struct ProfileEvent {
  std::string category;  // "Session" or "Node"
  std::string name;
  int64_t start_us = 0;  // since profiling started
  int64_t duration_us = 0;
  int thread_id = 0;
  std::vector<std::pair<std::string, std::string>> args;  // values are raw JSON
};

class Profiler {
 public:
  using Clock = std::chrono::steady_clock;

  // Starts a profile whose file will be "<prefix><date-time>_<pid>.json";
  // event times count from `origin`.
  void Start(const std::string& file_prefix, Clock::time_point origin);
  bool enabled() const { return enabled_.load(std::memory_order_relaxed); }
  int64_t start_time_ns() const { return start_ns_since_epoch_; }
  int64_t MicrosSinceStart(Clock::time_point t) const {
    return std::chrono::duration_cast<std::chrono::microseconds>(t - start_).count();
  }
  void Record(ProfileEvent event);
  // Writes the file, stops recording and returns its path.
  Status End(std::string* path);

  static std::string JsonString(const std::string& s);

 private:
  std::atomic<bool> enabled_{false};
  std::string file_;
  Clock::time_point start_;
  int64_t start_ns_since_epoch_ = 0;
  std::mutex mu_;
  std::vector<ProfileEvent> events_;
};

}  // namespace onyx
