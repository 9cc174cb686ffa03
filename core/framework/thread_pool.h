// Intra-op parallelism. One pool per session; the calling thread takes part in
// every ParallelFor, so a pool of size 1 has no worker threads at all.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace onyx {

class ThreadPool {
 public:
  // `num_threads` counts the caller; 0 means one per core.
  explicit ThreadPool(int num_threads);
  ~ThreadPool();
  ThreadPool(const ThreadPool&) = delete;
  ThreadPool& operator=(const ThreadPool&) = delete;

  int NumThreads() const { return static_cast<int>(workers_.size()) + 1; }

  // Calls fn(begin, end) over [0, n) in chunks of at least `min_chunk`
  // iterations, returning when all are done. Safe to call from many threads;
  // fn must not throw.
  void ParallelFor(int64_t n, int64_t min_chunk, const std::function<void(int64_t, int64_t)>& fn);

  // Queues `task` to run on one of the worker threads and returns at once;
  // false (task not queued) when the pool has no worker threads. The task must
  // not throw. Tasks still queued when the pool is destroyed are run first.
  bool Schedule(std::function<void()> task);

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
  void WorkerLoop();
  std::vector<std::thread> workers_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<std::function<void()>> tasks_;
  bool stop_ = false;
};

int DefaultThreadCount();

}  // namespace onyx
