// Intra-op parallelism. One pool per session; the calling thread takes part in
// every ParallelFor, so a pool of size 1 has no worker threads at all.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace onyx {

// How idle workers wait for work (onnxruntime's session.{intra,inter}_op.*
// config keys). Spinning keeps a worker on its core for a while after its
// last task, so the next ParallelFor of the same run starts without a
// futex wake-up (tens of microseconds); the cost is CPU time burnt while
// nothing runs.
struct ThreadPoolOptions {
  bool allow_spinning = true;
  // How long an idle worker polls before it sleeps.
  int64_t spin_duration_us = 10000;
  // Between polls a spinning worker pauses 1, 2, 4, ... up to this many
  // times (1: poll after every pause).
  int spin_backoff_max = 1;
  // Flush denormals to zero (FTZ+DAZ) on the worker threads.
  bool denormal_as_zero = false;
  // 0-based CPU numbers for each worker thread in turn (empty: no pinning;
  // a worker beyond the list is not pinned).
  std::vector<std::vector<int>> affinities;
  // The workers' thread name (at most 15 characters; what top -H shows).
  std::string name = "onyx-pool";
};

class ThreadPool {
 public:
  // `num_threads` counts the caller; 0 means one per core.
  explicit ThreadPool(int num_threads, const ThreadPoolOptions& options = ThreadPoolOptions());
  ~ThreadPool();
  ThreadPool(const ThreadPool&) = delete;
  ThreadPool& operator=(const ThreadPool&) = delete;

  int NumThreads() const { return static_cast<int>(workers_.size()) + 1; }
  const ThreadPoolOptions& options() const { return options_; }

  // Calls fn(begin, end) over [0, n) in chunks of at least `min_chunk`
  // iterations, returning when all are done. Safe to call from many threads;
  // fn must not throw.
  void ParallelFor(int64_t n, int64_t min_chunk, const std::function<void(int64_t, int64_t)>& fn);

  // Queues `task` to run on one of the worker threads and returns at once;
  // false (task not queued) when the pool has no worker threads. The task must
  // not throw. Tasks still queued when the pool is destroyed are run first.
  bool Schedule(std::function<void()> task);

  // Spinning workers go to sleep at once (StopSpinning) and later ones sleep
  // without spinning until StartSpinning (onnxruntime's
  // session.force_spinning_stop between runs). No effect without
  // allow_spinning.
  void StopSpinning();
  void StartSpinning();

  // Same, with `pool` possibly null (then runs inline).
  static void For(ThreadPool* pool, int64_t n, int64_t min_chunk,
                  const std::function<void(int64_t, int64_t)>& fn) {
    if (pool == nullptr || n <= min_chunk || pool->NumThreads() == 1) {
      if (n > 0) fn(0, n);
    } else {
      pool->ParallelFor(n, min_chunk, fn);
    }
  }

 private:
  void WorkerLoop(int slot);
  // Polls the queue for up to spin_duration_us; true when work arrived.
  bool SpinForWork();
  void Push(std::function<void()> task, int copies);

  const ThreadPoolOptions options_;
  std::vector<std::thread> workers_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<std::function<void()>> tasks_;
  // Tasks queued (read by spinning workers without the lock) and workers
  // asleep on cv_ (so Schedule skips the wake-up call while all spin).
  std::atomic<int64_t> queued_{0};
  int sleepers_ = 0;
  std::atomic<bool> spin_stopped_{false};
  bool stop_ = false;
};

int DefaultThreadCount();

// Sets FTZ and DAZ on the calling thread while alive (when `on`), restoring
// the previous floating-point control state after.
class ScopedDenormalAsZero {
 public:
  explicit ScopedDenormalAsZero(bool on);
  ~ScopedDenormalAsZero();
  ScopedDenormalAsZero(const ScopedDenormalAsZero&) = delete;
  ScopedDenormalAsZero& operator=(const ScopedDenormalAsZero&) = delete;

 private:
  bool on_;
  unsigned saved_ = 0;
};

}  // namespace onyx
