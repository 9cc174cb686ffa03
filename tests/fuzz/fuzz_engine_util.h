// Shared by the engine-level fuzz targets: bounded sessions (one thread, a
// memory limit, no logging) and a bounded run with inputs made from the
// fuzzer's bytes and a watchdog that sets RunOptions.terminate.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "core/session/session.h"

namespace onyx {
namespace fuzz {

// What a fuzzed model may make the engine hold at once; libFuzzer's own
// -rss_limit_mb (2048 by default) stays above it.
constexpr const char* kMemoryLimit = "268435456";
// Runs longer than this are cancelled through RunOptions.terminate.
constexpr int kRunMillis = 2000;
// Inputs larger than this are not fed (the run is skipped).
constexpr int64_t kMaxFeedElements = int64_t{1} << 16;

inline SessionOptions BoundedOptions() {
  SessionOptions o;
  o.intra_op_threads = 1;
  o.log_severity = 4;
  o.config["session.memory_limit_bytes"] = kMemoryLimit;
  return o;
}

// Sets `terminate` on the armed run options once their deadline passes; one
// thread for the whole process.
class Watchdog {
 public:
  static Watchdog& Get() {
    static Watchdog* w = new Watchdog();  // never destroyed: the thread runs to exit
    return *w;
  }
  void Arm(RunOptions* ro) {
    std::lock_guard<std::mutex> lock(mu_);
    deadline_ = Now() + kRunMillis;
    target_ = ro;
  }
  // After it returns the watchdog no longer touches the run options.
  void Disarm() {
    std::lock_guard<std::mutex> lock(mu_);
    target_ = nullptr;
  }

 private:
  Watchdog() {
    std::thread([this] {
      for (;;) {
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
        std::lock_guard<std::mutex> lock(mu_);
        if (target_ && Now() > deadline_) target_->terminate.store(true);
      }
    }).detach();
  }
  static int64_t Now() {
    return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now().time_since_epoch())
        .count();
  }
  std::mutex mu_;
  RunOptions* target_ = nullptr;
  int64_t deadline_ = 0;
};

// Fills a tensor of `type` from `bytes` (cycled; zeros when empty).
inline bool FillTensor(Tensor* t, const uint8_t* bytes, size_t n) {
  if (t->type() == ElemType::kString) {
    for (int64_t i = 0; i < t->size(); ++i)
      t->data<std::string>()[i] = n ? std::string(reinterpret_cast<const char*>(bytes), (i * 7) % (n + 1)) : "";
    return true;
  }
  auto* p = static_cast<uint8_t*>(t->raw());
  for (size_t i = 0; i < t->bytes(); ++i) p[i] = n ? bytes[(i * 131) % n] : 0;
  return true;
}

// Feeds for every tensor input (unknown dims become 1..3), or false when an
// input cannot be fed within kMaxFeedElements.
inline bool MakeFeeds(const Session& s, const uint8_t* bytes, size_t n, std::vector<std::string>* names,
                      std::vector<Value>* values) {
  for (const auto& in : s.inputs()) {
    if (in.type.kind != TypeInfo::Kind::kTensor) return false;
    Dims dims;
    for (size_t i = 0; i < in.type.dims.size(); ++i) {
      const Dim& d = in.type.dims[i];
      int64_t v = d.known() ? d.value : 1 + static_cast<int64_t>(n ? bytes[i % n] % 3 : 0);
      if (v < 0 || v > kMaxFeedElements) return false;
      dims.push_back(v);
    }
    int64_t count = 1;
    for (int64_t d : dims) {
      count *= d;
      if (count > kMaxFeedElements) return false;
    }
    if (StorageBytes(in.type.elem, 2) == 0 && in.type.elem != ElemType::kString) return false;
    Tensor t(in.type.elem, dims);
    FillTensor(&t, bytes, n);
    names->push_back(in.name);
    values->emplace_back(std::move(t));
  }
  return true;
}

// Runs `s` once on inputs made from `bytes`, under the watchdog. Errors are
// fine (a fuzzed model may be refused at run time); crashes are what count.
inline void RunOnce(const Session& s, const uint8_t* bytes, size_t n) {
  std::vector<std::string> names;
  std::vector<Value> values;
  if (!MakeFeeds(s, bytes, n, &names, &values)) return;
  std::vector<const Value*> feeds;
  for (const auto& v : values) feeds.push_back(&v);
  RunOptions ro;
  std::vector<Value> outputs;
  Watchdog::Get().Arm(&ro);
  try {
    Status st = s.Run(&ro, names, feeds, {}, &outputs);
    (void)st;
  } catch (const std::exception&) {
    // The C API turns these into a status; only crashes count here.
  }
  Watchdog::Get().Disarm();
}

}  // namespace fuzz
}  // namespace onyx
