#include "core/framework/thread_pool.h"

#include "core/framework/blas_threads.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <memory>

#include <pthread.h>
#include <sched.h>

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#define ONYX_X86 1
#endif

namespace onyx {

namespace {
thread_local int t_blas_budget = 1;
// 1, 2, ... on a pool's worker threads (their place in workers_ plus one),
// 0 on every other thread: which share of a ParallelFor a thread takes first.
thread_local int t_worker_slot = 0;

// How long ParallelFor's caller polls for its helpers' chunks before it
// sleeps (at most; never longer than the pool's spin_duration_us).
constexpr int64_t kMaxJoinSpinUs = 200;

inline void CpuRelax() {
#ifdef ONYX_X86
  _mm_pause();
#else
  std::this_thread::yield();
#endif
}
}  // namespace

int BlasThreadBudget() { return t_blas_budget; }
ScopedBlasThreadBudget::ScopedBlasThreadBudget(int threads) : saved_(t_blas_budget) {
  t_blas_budget = std::max(1, threads);
}
ScopedBlasThreadBudget::~ScopedBlasThreadBudget() { t_blas_budget = saved_; }

ScopedDenormalAsZero::ScopedDenormalAsZero(bool on) : on_(on) {
#ifdef ONYX_X86
  if (!on_) return;
  saved_ = _mm_getcsr();
  _mm_setcsr(saved_ | 0x8040u);  // FTZ (bit 15) and DAZ (bit 6)
#endif
}
ScopedDenormalAsZero::~ScopedDenormalAsZero() {
#ifdef ONYX_X86
  if (on_) _mm_setcsr(saved_);
#endif
}

int DefaultThreadCount() {
  unsigned n = std::thread::hardware_concurrency();
  return n == 0 ? 1 : static_cast<int>(n);
}

ThreadPool::ThreadPool(int num_threads, const ThreadPoolOptions& options) : options_(options) {
  int n = num_threads <= 0 ? DefaultThreadCount() : num_threads;
  for (int i = 1; i < n; ++i) {
    workers_.emplace_back([this, i] { WorkerLoop(i); });
    pthread_setname_np(workers_.back().native_handle(), options_.name.substr(0, 15).c_str());
    const size_t w = static_cast<size_t>(i - 1);
    if (w < options_.affinities.size() && !options_.affinities[w].empty()) {
      cpu_set_t set;
      CPU_ZERO(&set);
      for (int c : options_.affinities[w])
        if (c >= 0 && c < CPU_SETSIZE) CPU_SET(c, &set);
      // Best effort: a CPU outside the process's allowed set leaves the thread unpinned.
      pthread_setaffinity_np(workers_.back().native_handle(), sizeof(set), &set);
    }
  }
}

ThreadPool::~ThreadPool() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = true;
  }
  spin_stopped_.store(true);
  cv_.notify_all();
  for (auto& t : workers_) t.join();
}

void ThreadPool::StopSpinning() { spin_stopped_.store(true, std::memory_order_relaxed); }
void ThreadPool::StartSpinning() { spin_stopped_.store(false, std::memory_order_relaxed); }

bool ThreadPool::SpinForWork() {
  using Clock = std::chrono::steady_clock;
  const auto deadline = Clock::now() + std::chrono::microseconds(options_.spin_duration_us);
  int pauses = 1;
  for (unsigned polls = 1;; ++polls) {
    if (queued_.load(std::memory_order_acquire) > 0) return true;
    if (spin_stopped_.load(std::memory_order_relaxed) || Clock::now() >= deadline) return false;
    for (int i = 0; i < pauses; ++i) CpuRelax();
    pauses = std::min(pauses * 2, std::max(1, options_.spin_backoff_max));
    // With more threads than free cores, a spinning worker would keep one
    // that has work off its core for a whole time slice: now and then it
    // offers the core to any runnable thread (a no-op when none waits).
    if (polls % 64 == 0) std::this_thread::yield();
  }
}

void ThreadPool::WorkerLoop(int slot) {
  t_worker_slot = slot;
  ScopedDenormalAsZero daz(options_.denormal_as_zero);
  const bool may_spin = options_.allow_spinning && options_.spin_duration_us > 0;
  for (;;) {
    std::function<void()> task;
    {
      std::unique_lock<std::mutex> lock(mu_);
      // One spin per idle period: after it, sleep until woken.
      bool spun = false;
      while (tasks_.empty()) {
        if (stop_) return;
        if (may_spin && !spun && !spin_stopped_.load(std::memory_order_relaxed)) {
          spun = true;
          lock.unlock();
          SpinForWork();
          lock.lock();
          continue;
        }
        ++sleepers_;
        cv_.wait(lock);
        --sleepers_;
      }
      task = std::move(tasks_.front());
      tasks_.pop_front();
      queued_.fetch_sub(1, std::memory_order_relaxed);
    }
    task();
  }
}

void ThreadPool::Push(std::function<void()> task, int copies) {
  int wake;
  {
    std::lock_guard<std::mutex> lock(mu_);
    for (int i = 1; i < copies; ++i) tasks_.push_back(task);
    tasks_.push_back(std::move(task));
    queued_.fetch_add(copies, std::memory_order_release);
    // Spinning workers see queued_; only sleeping ones need the wake-up call.
    wake = std::min(sleepers_, copies);
  }
  for (int i = 0; i < wake; ++i) cv_.notify_one();
}

bool ThreadPool::Schedule(std::function<void()> task) {
  if (workers_.empty()) return false;
  Push(std::move(task), 1);
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

  int helpers = static_cast<int>(std::min<int64_t>(static_cast<int64_t>(workers_.size()), num_chunks - 1));
  // One share per participant, up to kMaxShares (more participants start on
  // a share in turn): the counters live inside Shared, no allocation of
  // their own on a path that runs per kernel.
  constexpr int kMaxShares = 16;
  const int parts = std::min(helpers + 1, kMaxShares);

  // The chunks form one contiguous share per participant (the caller's
  // first), each claimed from its own counter: a thread takes its own share
  // in order, then what is left of the others'. Worker i always starts on
  // share i, so consecutive loops over the same data (a conv's images, the
  // next conv's images) give each core the part it wrote before, still in
  // its L2, where one shared counter dealt the chunks out alternately.
  struct Shared {
    std::atomic<int64_t> next[kMaxShares];
    int64_t end[kMaxShares];
    std::atomic<int64_t> done{0};
    std::mutex mu;
    std::condition_variable cv;
  };
  auto shared = std::make_shared<Shared>();
  for (int r = 0; r < parts; ++r) {
    shared->next[r].store(r * num_chunks / parts, std::memory_order_relaxed);
    shared->end[r] = (r + 1) * num_chunks / parts;
  }
  auto run_chunks = [shared, n, chunk, num_chunks, parts, &fn](int first) {
    ScopedBlasThreadBudget one(1);
    for (int k = 0; k < parts; ++k) {
      const int r = (first + k) % parts;
      for (;;) {
        const int64_t c = shared->next[r].fetch_add(1);
        if (c >= shared->end[r]) break;
        const int64_t b = c * chunk;
        fn(b, std::min(n, b + chunk));
        if (shared->done.fetch_add(1) + 1 == num_chunks) {
          std::lock_guard<std::mutex> lock(shared->mu);
          shared->cv.notify_all();
        }
      }
    }
  };
  if (helpers > 0)
    Push([run_chunks, parts] { run_chunks(t_worker_slot > 0 ? (t_worker_slot - 1) % (parts - 1) + 1 : 0); }, helpers);
  run_chunks(0);
  // The helpers' last chunks usually end within microseconds of the
  // caller's: poll for them a while (as spinning workers poll for work)
  // before sleeping on the condition variable, whose futex wake-up costs
  // more than a short kernel (MobileNetV2 at 2 threads runs ~100 of these).
  if (options_.allow_spinning && options_.spin_duration_us > 0 && !spin_stopped_.load(std::memory_order_relaxed)) {
    using Clock = std::chrono::steady_clock;
    const auto deadline =
        Clock::now() + std::chrono::microseconds(std::min<int64_t>(options_.spin_duration_us, kMaxJoinSpinUs));
    for (unsigned polls = 1; shared->done.load(std::memory_order_acquire) != num_chunks; ++polls) {
      CpuRelax();
      if (polls % 64 == 0) {
        if (Clock::now() >= deadline) break;
        std::this_thread::yield();
      }
    }
  }
  if (shared->done.load(std::memory_order_acquire) == num_chunks) return;
  std::unique_lock<std::mutex> lock(shared->mu);
  shared->cv.wait(lock, [&] { return shared->done.load() == num_chunks; });
}

}  // namespace onyx
