// ExecutionPlan for execution_mode ORT_PARALLEL: the dependency DAG of the
// steps (built once) and a run that executes every step whose producers are
// done, independent ones at once on the inter-op pool. The calling thread
// takes part, so a run progresses however busy the pool is; helper tasks
// never wait, they leave when no step is ready.
#include <atomic>
#include <deque>
#include <memory>
#include <mutex>
#include <algorithm>
#include <condition_variable>

#include "core/session/execution_plan.h"

namespace onyx {

void ExecutionPlan::BuildDependencies(const std::unordered_set<int>& keep, bool release_intermediates) {
  parallel_ = true;
  const size_t n = steps_.size();
  const size_t slots = slot_names_.size();
  std::vector<int> producer(slots, -1);
  for (size_t i = 0; i < n; ++i)
    for (int s : steps_[i].outputs)
      if (s >= 0) producer[s] = static_cast<int>(i);
  successors_.assign(n, {});
  predecessor_count_.assign(n, 0);
  reads_.assign(n, {});
  reader_count_.assign(slots, 0);
  for (size_t i = 0; i < n; ++i) {
    std::vector<int>& reads = reads_[i];
    auto read = [&](int s) {
      if (s < 0 || std::find(reads.begin(), reads.end(), s) != reads.end()) return;
      reads.push_back(s);
      ++reader_count_[s];
    };
    for (int s : steps_[i].inputs) read(s);
    for (const auto& implicit : steps_[i].node->implicit_inputs) read(SlotOf(implicit));
    std::vector<int> preds;
    for (int s : reads) {
      const int p = producer[s];
      if (p >= 0 && p != static_cast<int>(i) && std::find(preds.begin(), preds.end(), p) == preds.end())
        preds.push_back(p);
    }
    predecessor_count_[i] = static_cast<int>(preds.size());
    for (int p : preds) successors_[p].push_back(static_cast<int>(i));
  }
  releasable_.assign(slots, false);
  if (release_intermediates)
    for (size_t s = 0; s < slots; ++s)
      releasable_[s] = producer[s] >= 0 && !keep.count(static_cast<int>(s));
}

// One parallel run's shared state. The caller's frame (values, options) is
// reached only through a step that is running, and the caller returns only
// when none is and none can start, so a helper that starts late (or a pool
// that runs its queue at destruction) finds the run finished and touches
// nothing but this state, which its task keeps alive.
struct ExecutionPlan::ParallelRun {
  const ExecutionPlan* plan = nullptr;
  std::vector<Value>* values = nullptr;
  const std::vector<std::shared_ptr<Tensor>>* presets = nullptr;
  const RunOptions* run_options = nullptr;
  ThreadPool* threads = nullptr;
  Profiler* profiler = nullptr;
  const KernelContext* outer = nullptr;
  ThreadPool* inter_op = nullptr;
  int max_helpers = 0;

  std::mutex mu;
  std::condition_variable cv;
  std::deque<int> ready;
  int remaining = 0;  // steps not yet done
  int running = 0;    // steps executing now
  int helpers = 0;    // helper tasks queued or draining
  Status error;       // the first failure; no step starts after it
  std::unique_ptr<std::atomic<int>[]> waiting;  // per step: producers not done
  std::unique_ptr<std::atomic<int>[]> readers;  // per slot: readers not done
  bool Finished() const { return error.ok() ? remaining == 0 : running == 0; }
};

Status ExecutionPlan::RunParallelStep(ParallelRun& r, int i, std::vector<int>* now_ready) const {
  const Step& step = steps_[i];
  std::vector<Value>& values = *r.values;
  ONYX_RETURN_IF_ERROR(RunStep(step, values, r.presets, r.run_options, r.threads, r.profiler, r.outer, nullptr));
  // A slot goes when its last reader is done, whichever thread ran it;
  // outputs nobody reads go at once.
  for (int slot : reads_[i])
    if (r.readers[slot].fetch_sub(1, std::memory_order_acq_rel) == 1 && releasable_[slot]) values[slot] = Value();
  for (int slot : step.outputs)
    if (slot >= 0 && reader_count_[slot] == 0 && releasable_[slot]) values[slot] = Value();
  for (int next : successors_[i])
    if (r.waiting[next].fetch_sub(1, std::memory_order_acq_rel) == 1) now_ready->push_back(next);
  return Status::OK();
}

void ExecutionPlan::SpawnHelpers(const std::shared_ptr<ParallelRun>& run) {
  // The thread that made them ready takes one itself.
  int want = static_cast<int>(run->ready.size()) - 1;
  while (want-- > 0 && run->helpers < run->max_helpers) {
    ++run->helpers;
    std::shared_ptr<ParallelRun> keep = run;
    if (!run->inter_op->Schedule([keep] { DrainParallel(keep, false); })) {
      --run->helpers;
      return;
    }
  }
}

void ExecutionPlan::DrainParallel(const std::shared_ptr<ParallelRun>& run, bool is_caller) {
  ParallelRun& r = *run;
  std::unique_lock<std::mutex> lock(r.mu);
  std::vector<int> now_ready;
  for (;;) {
    if (r.error.ok() && !r.ready.empty()) {
      const int i = r.ready.front();
      r.ready.pop_front();
      ++r.running;
      lock.unlock();
      now_ready.clear();
      Status s = r.plan->RunParallelStep(r, i, &now_ready);
      lock.lock();
      --r.running;
      if (!s.ok()) {
        if (r.error.ok()) r.error = std::move(s);
      } else {
        --r.remaining;
        r.ready.insert(r.ready.end(), now_ready.begin(), now_ready.end());
        SpawnHelpers(run);
      }
      if (r.Finished() || !r.ready.empty()) r.cv.notify_all();
      continue;
    }
    if (!is_caller) {
      --r.helpers;
      return;
    }
    if (r.Finished()) return;
    // Another thread runs the last steps in flight; one of them may make
    // more ready, and this thread takes part again.
    r.cv.wait(lock, [&] { return r.Finished() || (r.error.ok() && !r.ready.empty()); });
  }
}

Status ExecutionPlan::ExecuteParallel(std::vector<Value>& values, const std::vector<std::shared_ptr<Tensor>>* presets,
                                      const RunOptions* run_options, ThreadPool* threads, Profiler* profiler,
                                      const KernelContext* outer, ThreadPool* inter_op) const {
  const int n = static_cast<int>(steps_.size());
  if (n == 0) return Status::OK();
  auto run = std::make_shared<ParallelRun>();
  run->plan = this;
  run->values = &values;
  run->presets = presets;
  run->run_options = run_options;
  run->threads = threads;
  run->profiler = profiler;
  run->outer = outer;
  run->inter_op = inter_op;
  run->max_helpers = inter_op->NumThreads() - 1;
  run->remaining = n;
  run->waiting.reset(new std::atomic<int>[n]);
  run->readers.reset(new std::atomic<int>[reader_count_.size()]);
  for (int i = 0; i < n; ++i) {
    run->waiting[i].store(predecessor_count_[i], std::memory_order_relaxed);
    if (predecessor_count_[i] == 0) run->ready.push_back(i);
  }
  for (size_t s = 0; s < reader_count_.size(); ++s) run->readers[s].store(reader_count_[s], std::memory_order_relaxed);
  {
    std::lock_guard<std::mutex> lock(run->mu);
    SpawnHelpers(run);
  }
  DrainParallel(run, true);
  std::lock_guard<std::mutex> lock(run->mu);
  return run->error;
}

}  // namespace onyx
