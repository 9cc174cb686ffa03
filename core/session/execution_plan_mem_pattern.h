// The memory pattern (PlanOptions::mem_pattern): the layout of one run's
// intermediates in one block, and one run's side of it (recording or
// replaying). Internal to core/session/execution_plan*.
#pragma once

#include <memory>
#include <vector>

#include "core/session/execution_plan.h"

namespace onyx {

// Offsets and sizes in a pattern block are multiples of this (the CPU
// allocator's alignment, and a cache line).
constexpr size_t kPatternAlign = 64;
// Input signatures a plan keeps patterns for; a model fed ever new shapes
// starts over rather than grow without bound.
constexpr size_t kMaxPatterns = 8;

struct MemPattern {
  // The k-th allocation the run makes from the block: its slot, its bytes
  // (rounded up to kPatternAlign) and where it lies.
  std::vector<int> slots;
  std::vector<size_t> sizes;
  std::vector<size_t> offsets;
  size_t total = 0;
};

// With a pattern for the run's input signature, hands out the intermediates'
// memory from one block; without, records the allocations and, when the run
// succeeds, lays them out into a pattern for the next run.
class MemPatternRun {
 public:
  // `values` holds the feeds only (constants not yet placed).
  MemPatternRun(const ExecutionPlan& plan, const std::vector<Value>& values);
  void BeginStep(int step) { step_ = step; }
  // Memory for output `slot` from the block, or null to allocate it the
  // ordinary way (not eligible, recording, or the run left the pattern).
  std::shared_ptr<Tensor> Allocate(int slot, ElemType type, const Dims& dims);
  // Called before `slot` is released after its last reader.
  void Releasing(int slot, const Value& v);
  // After a successful run: stores what was recorded.
  void Finish();

 private:
  struct Record {
    int slot;
    size_t size;
    int start;  // the step that produced it
  };
  void DropPattern();
  std::shared_ptr<const MemPattern> Plan() const;

  const ExecutionPlan& plan_;
  std::vector<int64_t> key_;
  std::shared_ptr<const std::vector<bool>> eligible_;
  uint64_t generation_ = 0;
  std::shared_ptr<const MemPattern> pattern_;  // null while recording
  std::shared_ptr<void> block_;                // allocated on first use
  size_t next_ = 0;
  std::vector<Record> records_;
  int step_ = 0;
  // Set when the run stops following (or recording) a pattern: its
  // allocations no longer match, or a tensor outlived its planned lifetime.
  // Later allocations are ordinary, so nothing placed after that point can
  // overlap memory still in use.
  bool stopped_ = false;
};

}  // namespace onyx
