// The tree-ensemble engine behind TreeEnsemble (ai.onnx.ml 5),
// TreeEnsembleRegressor and TreeEnsembleClassifier (1 and 3).
//
// Each op reads its attributes into a TreeSource (nodes and leaves by
// position, whatever the op's encoding); TreeEnsembleModel checks it and
// compiles it once, at session creation, into one flat node array:
//   - nodes renumbered in depth-first order (the true child of a node
//     usually follows it), 16 bytes each for float thresholds: split,
//     feature (top bit: a NaN goes the true way; next bit: a leaf), and two
//     children;
//   - leaves are nodes too, placed next to their parent, whose two children
//     are themselves: a walk may take more steps than a tree is deep and stay
//     on its leaf, so trees of known depth walk a fixed number of steps
//     without a branch. A leaf holds its weight in `split` when every leaf
//     gives one weight to one target (no lookup at the end), else its leaf
//     index (bit copy), into dense weights (every leaf gives the same
//     targets: the usual random forest and boosting layouts) or a sparse list.
// Evaluation walks several trees at once for one row, or one tree for
// several rows at once (independent walks overlap their memory latency),
// a block of rows per tree (one tree stays in cache for the whole block),
// rows spread over the thread pool; a single row with many trees spreads the
// trees instead. Models whose nodes all compare the same way walk with that
// comparison compiled in; others (mixed modes, BRANCH_MEMBER) look it up.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "core/framework/status.h"
#include "core/framework/thread_pool.h"

namespace onyx {
namespace ml {

// Node comparisons, numbered as TreeEnsemble (opset 5) numbers them. kLeaf
// marks the leaf nodes of the older ops' encoding.
enum class BranchMode : uint8_t { kLeq = 0, kLt = 1, kGte = 2, kGt = 3, kEq = 4, kNeq = 5, kMember = 6, kLeaf = 7 };

// "BRANCH_LEQ" ... "LEAF"; INVALID_GRAPH naming `where` when unknown.
Status ParseBranchMode(const std::string& s, const std::string& where, BranchMode* out);

enum class Aggregate { kSum, kAverage, kMin, kMax };

// A child or a root: a position among the interior nodes, or among the leaves.
struct TreeRef {
  int64_t index = 0;
  bool leaf = false;
};

// The trees of one node, in the op-independent form the engine compiles.
struct TreeSource {
  // Interior nodes, by position.
  std::vector<BranchMode> modes;
  std::vector<int64_t> features;
  std::vector<double> splits;
  std::vector<uint8_t> missing_true;          // empty: none
  std::vector<std::vector<double>> members;   // per node; used by kMember nodes
  std::vector<TreeRef> true_refs, false_refs;
  // Leaves, by position: (target, weight) pairs.
  std::vector<std::vector<std::pair<int64_t, double>>> leaves;
  std::vector<TreeRef> roots;
  int64_t n_targets = 1;
  // Names interior node `i` in messages ("node 3 (tree 0, id 5)"); the
  // attributes holding the children, and what the leaves' targets are called.
  std::function<std::string(int64_t)> describe;
  std::string true_attr = "nodes_truenodeids";
  std::string false_attr = "nodes_falsenodeids";
  std::string target_attr = "target_ids";
};

template <typename T>
class TreeEnsembleModel {
 public:
  // Checks `src` (children and roots inside the arrays, no cycles, targets in
  // range) and compiles it; INVALID_GRAPH naming `node` and the node at fault.
  Status Build(const TreeSource& src, const std::string& node);

  int64_t n_targets() const { return n_targets_; }
  int64_t n_trees() const { return static_cast<int64_t>(roots_.size()); }
  // Largest feature index any node reads (-1 when no node reads one).
  int64_t max_feature() const { return max_feature_; }

  // For rows x[r * stride ...], r in [0, n): out[r * n_targets + t] gets the
  // aggregate of the weights the trees' leaves give target t (AVERAGE divides
  // the sum by the number of trees; MIN/MAX of no weight is 0), and has (when
  // not null) 1 where at least one leaf gave target t a weight.
  void Run(const T* x, int64_t n, int64_t stride, Aggregate agg, T* out, uint8_t* has, ThreadPool* pool) const;

  struct Node {
    T split;           // leaves: the weight (kOne) or the leaf index's bits
    uint32_t feature;  // top bit: a NaN feature takes the true branch; next: a leaf
    int32_t child[2];  // [true, false]; a leaf's are itself
  };

 private:
  enum class LeafKind { kOne, kDense, kSparse };
  template <typename Fn>
  void Dispatch(Aggregate agg, Fn&& fn) const;
  template <BranchMode M, Aggregate A, LeafKind L>
  void RunTrees(const T* x, int64_t r0, int64_t r1, int64_t stride, int64_t t0, int64_t t1, T* acc,
                uint8_t* has) const;
  int32_t WalkGeneral(int32_t idx, const T* row) const;
  template <Aggregate A, LeafKind L>
  void AddLeaf(const Node& leaf, T* acc, uint8_t* has) const;

  int64_t n_targets_ = 1;
  int64_t max_feature_ = -1;
  std::vector<Node> nodes_;
  std::vector<int32_t> roots_;
  std::vector<int32_t> depth_;                   // per tree: interior nodes on its longest path
  BranchMode uniform_mode_ = BranchMode::kLeaf;  // kLeaf: modes differ (or a kMember)
  std::vector<BranchMode> modes_;                // by packed index, for mixed modes
  std::vector<int32_t> member_set_;              // by packed index: set of a kMember node
  std::vector<std::vector<T>> sets_;             // sorted members
  LeafKind leaf_kind_ = LeafKind::kSparse;
  // kOne: every leaf one weight (in its node) for target one_target_;
  // kDense: every leaf n_targets_ weights in target order.
  int64_t one_target_ = 0;
  std::vector<T> dense_;
  std::vector<int64_t> leaf_begin_;  // kSparse: leaf l's pairs are [begin[l], begin[l+1])
  std::vector<int32_t> sparse_target_;
  std::vector<T> sparse_weight_;
};

extern template class TreeEnsembleModel<float>;
extern template class TreeEnsembleModel<double>;

}  // namespace ml
}  // namespace onyx
