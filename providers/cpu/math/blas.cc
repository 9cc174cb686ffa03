#include "providers/cpu/math/blas.h"

#include <condition_variable>
#include <mutex>

namespace onyx {
namespace {

struct BlasThreadsState {
  std::mutex mu;
  std::condition_variable idle;
  int current = 0;  // 0: not set by us yet
  int active = 0;   // calls inside OpenBLAS now
};

BlasThreadsState& State() {
  static BlasThreadsState* s = new BlasThreadsState();  // outlives every session
  return *s;
}

}  // namespace

BlasThreadsLease::BlasThreadsLease(int threads) {
  BlasThreadsState& s = State();
  std::unique_lock<std::mutex> lock(s.mu);
  s.idle.wait(lock, [&] { return s.current == threads || s.active == 0; });
  if (s.current != threads) {
    openblas_set_num_threads(threads);
    s.current = threads;
  }
  ++s.active;
}

BlasThreadsLease::~BlasThreadsLease() {
  BlasThreadsState& s = State();
  std::lock_guard<std::mutex> lock(s.mu);
  if (--s.active == 0) s.idle.notify_all();
}

}  // namespace onyx
