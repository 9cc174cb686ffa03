// Memory patterns: which slots may come from one block (decided once, at
// Build), and each run's recording or replaying of the block's layout.
#include "core/session/execution_plan_mem_pattern.h"

#include <algorithm>
#include <numeric>
#include <unordered_set>

namespace onyx {

namespace {

void AppendSignature(const Value& v, std::vector<int64_t>* key) {
  key->push_back(static_cast<int64_t>(v.kind()));
  if (v.IsTensor()) {
    const Tensor& t = v.tensor();
    key->push_back(static_cast<int64_t>(t.type()));
    key->push_back(static_cast<int64_t>(t.rank()));
    key->insert(key->end(), t.dims().begin(), t.dims().end());
  } else if (v.kind() == Value::Kind::kSequence || v.kind() == Value::Kind::kMap ||
             v.kind() == Value::Kind::kOptional) {
    key->push_back(static_cast<int64_t>(v.items().size()));
    for (const Value& item : v.items()) AppendSignature(item, key);
  }
}

}  // namespace

MemPatternRun::MemPatternRun(const ExecutionPlan& plan, const std::vector<Value>& values) : plan_(plan) {
  for (int s : plan.input_slots_) AppendSignature(values[s], &key_);
  std::lock_guard<std::mutex> lock(plan.pattern_mu_);
  eligible_ = plan.pattern_eligible_;
  generation_ = plan.pattern_generation_;
  auto it = plan.patterns_.find(key_);
  if (it != plan.patterns_.end()) pattern_ = it->second;
}

std::shared_ptr<Tensor> MemPatternRun::Allocate(int slot, ElemType type, const Dims& dims) {
  // Strings need constructed storage; empty tensors and invalid shapes take
  // the ordinary path (which reports the latter).
  if (stopped_ || !(*eligible_)[slot] || type == ElemType::kString) return nullptr;
  const int64_t n = ShapeSize(dims);
  if (n <= 0) return nullptr;
  const size_t bytes = StorageBytes(type, static_cast<size_t>(n));
  if (bytes == 0) return nullptr;
  const size_t size = (bytes + kPatternAlign - 1) / kPatternAlign * kPatternAlign;
  if (!pattern_) {
    records_.push_back({slot, size, step_});
    return nullptr;
  }
  const size_t k = next_++;
  if (k >= pattern_->slots.size() || pattern_->slots[k] != slot || pattern_->sizes[k] != size) {
    // Shapes that depend on data, not only on the inputs' shapes: this
    // signature needs a new recording.
    stopped_ = true;
    DropPattern();
    return nullptr;
  }
  if (!block_) {
    Allocator* alloc = plan_.pattern_allocator_;
    void* p = alloc->Alloc(pattern_->total);
    block_ = std::shared_ptr<void>(p, [alloc](void* q) { alloc->Free(q); });
  }
  return std::make_shared<Tensor>(type, dims, block_, static_cast<char*>(block_.get()) + pattern_->offsets[k],
                                  plan_.pattern_allocator_->Info());
}

void MemPatternRun::Releasing(int slot, const Value& v) {
  if (!(*eligible_)[slot] || !v.IsTensor() || v.tensor_ptr().use_count() <= 1) return;
  // Something still holds the tensor (a sequence or optional built from it),
  // so its bytes must not be reused: never place this slot in a pattern.
  stopped_ = true;
  std::lock_guard<std::mutex> lock(plan_.pattern_mu_);
  // A view's bytes are its owner's: neither may be placed in a pattern.
  const int root = plan_.view_root_[slot];
  if ((*plan_.pattern_eligible_)[slot] || (*plan_.pattern_eligible_)[root]) {
    auto eligible = std::make_shared<std::vector<bool>>(*plan_.pattern_eligible_);
    (*eligible)[slot] = (*eligible)[root] = false;
    plan_.pattern_eligible_ = std::move(eligible);
    ++plan_.pattern_generation_;
    plan_.patterns_.clear();
  }
}

void MemPatternRun::DropPattern() {
  std::lock_guard<std::mutex> lock(plan_.pattern_mu_);
  auto it = plan_.patterns_.find(key_);
  if (it != plan_.patterns_.end() && it->second == pattern_) plan_.patterns_.erase(it);
}

std::shared_ptr<const MemPattern> MemPatternRun::Plan() const {
  // Largest first, each at the lowest offset free of every placed allocation
  // whose lifetime overlaps its own. Lifetimes are inclusive step ranges: a
  // tensor released after step i is still read by step i, so it must not
  // share bytes with an output of step i.
  const size_t n = records_.size();
  auto pattern = std::make_shared<MemPattern>();
  pattern->slots.resize(n);
  pattern->sizes.resize(n);
  pattern->offsets.assign(n, 0);
  std::vector<int> end(n);
  for (size_t k = 0; k < n; ++k) {
    pattern->slots[k] = records_[k].slot;
    pattern->sizes[k] = records_[k].size;
    end[k] = std::max(records_[k].start, plan_.slot_end_[records_[k].slot]);
  }
  std::vector<size_t> order(n);
  std::iota(order.begin(), order.end(), size_t{0});
  std::stable_sort(order.begin(), order.end(),
                   [&](size_t a, size_t b) { return records_[a].size > records_[b].size; });
  std::vector<size_t> placed;
  std::vector<std::pair<size_t, size_t>> busy;  // [offset, end) of overlapping placed allocations
  for (size_t k : order) {
    busy.clear();
    for (size_t j : placed)
      if (records_[k].start <= end[j] && records_[j].start <= end[k])
        busy.emplace_back(pattern->offsets[j], pattern->offsets[j] + pattern->sizes[j]);
    std::sort(busy.begin(), busy.end());
    size_t offset = 0;
    for (const auto& b : busy) {
      if (b.first >= offset + records_[k].size) break;
      offset = std::max(offset, b.second);
    }
    pattern->offsets[k] = offset;
    pattern->total = std::max(pattern->total, offset + records_[k].size);
    placed.push_back(k);
  }
  return pattern;
}

void MemPatternRun::Finish() {
  if (pattern_ || stopped_) return;
  std::shared_ptr<const MemPattern> planned = Plan();
  std::lock_guard<std::mutex> lock(plan_.pattern_mu_);
  // A slot found shared since this run started may be among the records.
  if (generation_ != plan_.pattern_generation_) return;
  if (plan_.patterns_.size() >= kMaxPatterns && !plan_.patterns_.count(key_)) plan_.patterns_.clear();
  plan_.patterns_[key_] = std::move(planned);
  plan_.patterns_recorded_.fetch_add(1);
}

void ExecutionPlan::PrepareMemPattern(const Graph& graph, const std::unordered_set<int>& keep) {
  const size_t n = slot_names_.size();
  slot_end_.assign(n, steps_.empty() ? 0 : static_cast<int>(steps_.size()) - 1);
  for (size_t i = 0; i < steps_.size(); ++i)
    for (int s : steps_[i].release) slot_end_[s] = static_cast<int>(i);
  // Slots whose declared or inferred type is not a tensor; unknown ones are
  // left to the run (only Output() tensors ever come from the block).
  auto non_tensor = [&](int s) {
    auto it = graph.value_types.find(slot_names_[s]);
    return it != graph.value_types.end() && it->second.kind != TypeInfo::Kind::kUnknown &&
           it->second.kind != TypeInfo::Kind::kTensor;
  };
  auto eligible = std::make_shared<std::vector<bool>>(n, false);
  for (const Step& st : steps_)
    for (int s : st.outputs)
      if (s >= 0 && !keep.count(s) && !non_tensor(s)) (*eligible)[s] = true;
  // Sequences, maps and optionals share the tensors they are built from, so
  // those tensors live past their last reader. (A run that finds one anyway
  // excludes it then; see MemPatternRun::Releasing.)
  for (const Step& st : steps_) {
    if (std::none_of(st.outputs.begin(), st.outputs.end(), [&](int s) { return s >= 0 && non_tensor(s); })) continue;
    // (A view's bytes are its owner's: that one is kept out too.)
    for (int s : st.inputs)
      if (s >= 0) (*eligible)[s] = (*eligible)[view_root_[s]] = false;
    for (const auto& implicit : st.node->implicit_inputs) {
      int s = SlotOf(implicit);
      if (s >= 0) (*eligible)[s] = (*eligible)[view_root_[s]] = false;
    }
  }
  // A graph output that views an intermediate hands its bytes to the caller:
  // that intermediate gets a buffer of its own, not a range of the block.
  for (size_t s = 0; s < n; ++s)
    if (view_root_[s] != static_cast<int>(s) && keep.count(static_cast<int>(s))) (*eligible)[view_root_[s]] = false;
  // One block comes from one allocator: with outputs spread over several,
  // patterns stay off.
  Allocator* alloc = nullptr;
  for (const Step& st : steps_)
    for (int s : st.outputs) {
      if (s < 0 || !(*eligible)[s]) continue;
      if (alloc && alloc != st.allocator) return;
      alloc = st.allocator;
    }
  pattern_allocator_ = alloc;
  pattern_eligible_ = std::move(eligible);
}

}  // namespace onyx
