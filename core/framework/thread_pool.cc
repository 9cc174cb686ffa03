#include "core/framework/thread_pool.h"

#include "core/framework/blas_threads.h"

#include <algorithm>
#include <atomic>
#include <memory>

namespace onyx {

namespace {
thread_local int t_blas_budget = 1;
}  // namespace

int BlasThreadBudget() { return t_blas_budget; }
ScopedBlasThreadBudget::ScopedBlasThreadBudget(int threads) : saved_(t_blas_budget) {
  t_blas_budget = std::max(1, threads);
}
ScopedBlasThreadBudget::~ScopedBlasThreadBudget() { t_blas_budget = saved_; }

int DefaultThreadCount() {
  unsigned n = std::thread::hardware_concurrency();
  return n == 0 ? 1 : static_cast<int>(n);
}

ThreadPool::ThreadPool(int num_threads) {
  int n = num_threads <= 0 ? DefaultThreadCount() : num_threads;
  for (int i = 1; i < n; ++i) workers_.emplace_back([this] { WorkerLoop(); });
}

ThreadPool::~ThreadPool() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = true;
  }
  cv_.notify_all();
  for (auto& t : workers_) t.join();
}

void ThreadPool::WorkerLoop() {
  for (;;) {
    std::function<void()> task;
    {
      std::unique_lock<std::mutex> lock(mu_);
      cv_.wait(lock, [this] { return stop_ || !tasks_.empty(); });
      if (stop_ && tasks_.empty()) return;
      task = std::move(tasks_.front());
      tasks_.pop_front();
    }
    task();
  }
}

bool ThreadPool::Schedule(std::function<void()> task) {
  if (workers_.empty()) return false;
  {
    std::lock_guard<std::mutex> lock(mu_);
    tasks_.emplace_back(std::move(task));
  }
  cv_.notify_one();
  return true;
}

void ThreadPool::ParallelFor(int64_t n, int64_t min_chunk, const std::function<void(int64_t, int64_t)>& fn) {
  if (n <= 0) return;
  min_chunk = std::max<int64_t>(1, min_chunk);
  int64_t max_chunks = std::min<int64_t>(NumThreads() * 4, (n + min_chunk - 1) / min_chunk);
  if (max_chunks <= 1) {
    fn(0, n);
    return;
  }
  int64_t chunk = (n + max_chunks - 1) / max_chunks;
  int64_t num_chunks = (n + chunk - 1) / chunk;

  // Chunks are claimed from a shared counter, by workers and by the caller.
  struct Shared {
    std::atomic<int64_t> next{0};
    std::atomic<int64_t> done{0};
    std::mutex mu;
    std::condition_variable cv;
  };
  auto shared = std::make_shared<Shared>();
  auto run_chunks = [shared, n, chunk, num_chunks, &fn]() {
    ScopedBlasThreadBudget one(1);
    for (;;) {
      int64_t c = shared->next.fetch_add(1);
      if (c >= num_chunks) return;
      int64_t b = c * chunk;
      fn(b, std::min(n, b + chunk));
      if (shared->done.fetch_add(1) + 1 == num_chunks) {
        std::lock_guard<std::mutex> lock(shared->mu);
        shared->cv.notify_all();
      }
    }
  };
  int helpers = static_cast<int>(std::min<int64_t>(static_cast<int64_t>(workers_.size()), num_chunks - 1));
  {
    std::lock_guard<std::mutex> lock(mu_);
    for (int i = 0; i < helpers; ++i) tasks_.emplace_back(run_chunks);
  }
  cv_.notify_all();
  run_chunks();
  std::unique_lock<std::mutex> lock(shared->mu);
  shared->cv.wait(lock, [&] { return shared->done.load() == num_chunks; });
}

}  // namespace onyx
