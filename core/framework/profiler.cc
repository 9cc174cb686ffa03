#include "core/framework/profiler.h"

#include <unistd.h>

#include <cstdio>
#include <ctime>
#include <fstream>

namespace onyx {

void Profiler::Start(const std::string& file_prefix, Clock::time_point origin) {
  start_ = origin;
  auto now = std::chrono::system_clock::now();
  start_ns_since_epoch_ = std::chrono::duration_cast<std::chrono::nanoseconds>(now.time_since_epoch()).count();
  std::time_t tt = std::chrono::system_clock::to_time_t(now);
  std::tm tm{};
  localtime_r(&tt, &tm);
  char stamp[64];
  std::strftime(stamp, sizeof(stamp), "%Y-%m-%d_%H-%M-%S", &tm);
  file_ = StrCat(file_prefix, stamp, "_", getpid(), ".json");
  enabled_ = true;
}

void Profiler::Record(ProfileEvent event) {
  std::lock_guard<std::mutex> lock(mu_);
  events_.push_back(std::move(event));
}

std::string Profiler::JsonString(const std::string& s) {
  std::string out = "\"";
  for (char c : s) {
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '\t': out += "\\t"; break;
      default:
        if (static_cast<unsigned char>(c) < 0x20) {
          char buf[8];
          std::snprintf(buf, sizeof(buf), "\\u%04x", c);
          out += buf;
        } else {
          out += c;
        }
    }
  }
  return out + "\"";
}

Status Profiler::End(std::string* path) {
  if (!enabled_) return MakeError(ErrorCode::kFail, "profiling is not enabled for this session");
  std::vector<ProfileEvent> events;
  {
    std::lock_guard<std::mutex> lock(mu_);
    events.swap(events_);
  }
  std::ofstream f(file_);
  if (!f) return MakeError(ErrorCode::kFail, "cannot write profile file '", file_, "'");
  f << "[\n";
  for (size_t i = 0; i < events.size(); ++i) {
    const ProfileEvent& e = events[i];
    f << "{\"cat\":" << JsonString(e.category) << ",\"pid\":" << getpid() << ",\"tid\":" << e.thread_id
      << ",\"dur\":" << e.duration_us << ",\"ts\":" << e.start_us << ",\"ph\":\"X\",\"name\":" << JsonString(e.name)
      << ",\"args\":{";
    for (size_t a = 0; a < e.args.size(); ++a)
      f << (a ? "," : "") << JsonString(e.args[a].first) << ":" << e.args[a].second;
    f << "}}" << (i + 1 < events.size() ? ",\n" : "\n");
  }
  f << "]\n";
  f.close();
  if (!f) return MakeError(ErrorCode::kFail, "error writing profile file '", file_, "'");
  enabled_ = false;
  *path = file_;
  return Status::OK();
}

}  // namespace onyx
