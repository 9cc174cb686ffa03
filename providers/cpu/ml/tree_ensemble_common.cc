#include "providers/cpu/ml/tree_ensemble_common.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstring>
#include <limits>
#include <type_traits>

namespace onyx {
namespace ml {

Status ParseBranchMode(const std::string& s, const std::string& where, BranchMode* out) {
  static const std::pair<const char*, BranchMode> kNames[] = {
      {"BRANCH_LEQ", BranchMode::kLeq}, {"BRANCH_LT", BranchMode::kLt},   {"BRANCH_GTE", BranchMode::kGte},
      {"BRANCH_GT", BranchMode::kGt},   {"BRANCH_EQ", BranchMode::kEq},   {"BRANCH_NEQ", BranchMode::kNeq},
      {"BRANCH_MEMBER", BranchMode::kMember}, {"LEAF", BranchMode::kLeaf}};
  for (const auto& kv : kNames) {
    if (s == kv.first) {
      *out = kv.second;
      return Status::OK();
    }
  }
  return MakeError(ErrorCode::kInvalidGraph, where, ": mode '", s,
                   "' is not one of BRANCH_LEQ, BRANCH_LT, BRANCH_GTE, BRANCH_GT, BRANCH_EQ, BRANCH_NEQ, "
                   "BRANCH_MEMBER, LEAF");
}

namespace {

constexpr uint32_t kNanTrue = 0x80000000u;
constexpr uint32_t kLeafBit = 0x40000000u;
constexpr uint32_t kFeatureMask = 0x3fffffffu;
// Walks advanced together: trees of one row, or rows of one tree.
constexpr int kLanes = 8;
// Trees deeper than this walk with a leaf test per step instead of a fixed
// number of steps (a lopsided tree would make every walk take its longest
// path).
constexpr int32_t kFixedDepthLimit = 40;
// Rows walked together through one tree before moving to the next tree.
constexpr int64_t kRowBlock = 128;
// A single row spreads its trees over the pool from this many trees on;
// fewer finish before the pool would have woken up.
constexpr int64_t kParallelTrees = 512;

template <BranchMode M, typename T>
inline bool Compare(T x, T split) {
  if constexpr (M == BranchMode::kLeq) return x <= split;
  else if constexpr (M == BranchMode::kLt) return x < split;
  else if constexpr (M == BranchMode::kGte) return x >= split;
  else if constexpr (M == BranchMode::kGt) return x > split;
  else if constexpr (M == BranchMode::kEq) return x == split;
  else return x != split;
}

// One step from node `idx` when every node compares with M (a leaf steps to itself).
template <BranchMode M, typename T>
inline int32_t Step(const typename TreeEnsembleModel<T>::Node* nodes, int32_t idx, const T* row) {
  const auto& n = nodes[idx];
  const T x = row[n.feature & kFeatureMask];
  const bool go_true = Compare<M>(x, n.split) | (static_cast<bool>(n.feature & kNanTrue) & std::isnan(x));
  return n.child[go_true ? 0 : 1];
}

// The leaf that `row` reaches from node `idx` when every node compares with M.
template <BranchMode M, typename T>
inline int32_t Walk(const typename TreeEnsembleModel<T>::Node* nodes, int32_t idx, const T* row) {
  while ((nodes[idx].feature & kLeafBit) == 0) idx = Step<M, T>(nodes, idx, row);
  return idx;
}

template <Aggregate A, typename T>
inline void Combine(T w, T* a, uint8_t* h) {
  if constexpr (A == Aggregate::kMin) {
    if (!*h || w < *a) *a = w;
    *h = 1;
  } else if constexpr (A == Aggregate::kMax) {
    if (!*h || w > *a) *a = w;
    *h = 1;
  } else {
    *a += w;
    if (h != nullptr) *h = 1;
  }
}

}  // namespace

template <typename T>
Status TreeEnsembleModel<T>::Build(const TreeSource& src, const std::string& node) {
  const int64_t n_nodes = static_cast<int64_t>(src.modes.size());
  const int64_t n_leaves = static_cast<int64_t>(src.leaves.size());
  n_targets_ = src.n_targets;
  ONYX_CHECK(n_targets_ > 0, ErrorCode::kInvalidGraph, node, ": the number of targets must be positive, got ",
             n_targets_);
  ONYX_CHECK(n_nodes < (int64_t{1} << 30) && n_leaves < (int64_t{1} << 30), ErrorCode::kInvalidGraph, node,
             ": too many nodes (", n_nodes, ") or leaves (", n_leaves, ")");
  auto ref_ok = [&](const TreeRef& r) { return r.index >= 0 && r.index < (r.leaf ? n_leaves : n_nodes); };
  auto where = [&](const TreeRef& r) {
    return r.leaf ? StrCat("leaf ", r.index, " (there are ", n_leaves, " leaves)")
                  : StrCat("node ", r.index, " (there are ", n_nodes, " nodes)");
  };
  for (int64_t i = 0; i < n_nodes; ++i) {
    ONYX_CHECK(src.features[i] >= 0 && src.features[i] <= static_cast<int64_t>(kFeatureMask),
               ErrorCode::kInvalidGraph, node, ": ", src.describe(i), " reads feature ", src.features[i],
               " (nodes_featureids must be in [0, 2^30))");
    ONYX_CHECK(ref_ok(src.true_refs[i]), ErrorCode::kInvalidGraph, node, ": ", src.describe(i), " has ",
               src.true_attr, " pointing outside the tree: ", where(src.true_refs[i]));
    ONYX_CHECK(ref_ok(src.false_refs[i]), ErrorCode::kInvalidGraph, node, ": ", src.describe(i), " has ",
               src.false_attr, " pointing outside the tree: ", where(src.false_refs[i]));
  }
  for (size_t r = 0; r < src.roots.size(); ++r)
    ONYX_CHECK(ref_ok(src.roots[r]), ErrorCode::kInvalidGraph, node, ": the root of tree ", r,
               " points outside the node array: ", where(src.roots[r]));
  for (int64_t l = 0; l < n_leaves; ++l)
    for (const auto& tw : src.leaves[l])
      ONYX_CHECK(tw.first >= 0 && tw.first < n_targets_, ErrorCode::kInvalidGraph, node, ": ", src.target_attr,
                 " of leaf ", l, " is ", tw.first, ", outside [0, ", n_targets_, ")");

  // Depth-first renumbering from every root; a node met again while still on
  // the path is a cycle. Nodes that no root reaches are dropped. Each
  // reference to a leaf gets a leaf node of its own, right after its parent's
  // other descendants (the true child's, when the true child is a leaf).
  struct Slot {
    int64_t index;  // interior node, or leaf
    bool leaf;
  };
  std::vector<int32_t> packed(static_cast<size_t>(n_nodes), -1);
  std::vector<uint8_t> color(static_cast<size_t>(n_nodes), 0);  // 0 new, 1 on the path, 2 done
  std::vector<Slot> order;
  std::vector<std::array<int32_t, 2>> kids;  // by packed index: the children's packed indices
  std::vector<int32_t> post;                 // interior nodes, children before parents
  std::vector<std::pair<int64_t, int>> stack;
  auto add = [&](int64_t index, bool leaf) {
    const auto p = static_cast<int32_t>(order.size());
    order.push_back(Slot{index, leaf});
    kids.push_back({p, p});
    return p;
  };
  roots_.clear();
  for (const TreeRef& root : src.roots) {
    if (root.leaf) {
      roots_.push_back(add(root.index, true));
      continue;
    }
    if (color[root.index] != 0) {
      roots_.push_back(packed[root.index]);
      continue;
    }
    color[root.index] = 1;
    packed[root.index] = add(root.index, false);
    roots_.push_back(packed[root.index]);
    stack.emplace_back(root.index, 0);
    while (!stack.empty()) {
      const int64_t v = stack.back().first;
      const int k = stack.back().second;
      if (k == 2) {
        color[v] = 2;
        post.push_back(packed[v]);
        stack.pop_back();
        continue;
      }
      stack.back().second = k + 1;
      const TreeRef& c = k == 0 ? src.true_refs[v] : src.false_refs[v];
      if (c.leaf) {
        const int32_t p = add(c.index, true);
        kids[packed[v]][k] = p;
        continue;
      }
      ONYX_CHECK(color[c.index] != 1, ErrorCode::kInvalidGraph, node, ": ", src.describe(v), " has ",
                 k == 0 ? src.true_attr : src.false_attr, " leading back to ", src.describe(c.index),
                 ", an ancestor (the tree has a cycle)");
      if (color[c.index] == 0) {
        color[c.index] = 1;
        packed[c.index] = add(c.index, false);
        stack.emplace_back(c.index, 0);
      }
      kids[packed[v]][k] = packed[c.index];
    }
  }
  ONYX_CHECK(order.size() < (size_t{1} << 31), ErrorCode::kInvalidGraph, node, ": too many nodes after expanding ",
             "the leaves (", order.size(), ")");

  nodes_.assign(order.size(), Node{});
  modes_.assign(order.size(), BranchMode::kLeaf);
  member_set_.assign(order.size(), -1);
  sets_.clear();
  uniform_mode_ = BranchMode::kLeaf;
  bool mixed = false, first = true;
  max_feature_ = -1;
  for (size_t p = 0; p < order.size(); ++p) {
    Node& n = nodes_[p];
    n.child[0] = kids[p][0];
    n.child[1] = kids[p][1];
    if (order[p].leaf) {
      // Feature 0 is only read, never used: a walk only reaches a leaf of a
      // model with features (a lone-leaf tree takes no step).
      n.feature = kLeafBit;
      continue;
    }
    const int64_t i = order[p].index;
    const BranchMode m = src.modes[i];
    ONYX_CHECK(m != BranchMode::kLeaf, ErrorCode::kInvalidGraph, node, ": ", src.describe(i),
               " is a LEAF but another node branches to it as to an interior node");
    n.split = static_cast<T>(src.splits[i]);
    n.feature = static_cast<uint32_t>(src.features[i]);
    if (!src.missing_true.empty() && src.missing_true[i]) n.feature |= kNanTrue;
    modes_[p] = m;
    max_feature_ = std::max(max_feature_, src.features[i]);
    if (m == BranchMode::kMember) {
      std::vector<T> set;
      for (double v : src.members[i]) set.push_back(static_cast<T>(v));
      std::sort(set.begin(), set.end());
      member_set_[p] = static_cast<int32_t>(sets_.size());
      sets_.push_back(std::move(set));
      mixed = true;
    }
    if (first) uniform_mode_ = m;
    else if (m != uniform_mode_) mixed = true;
    first = false;
  }
  if (mixed) uniform_mode_ = BranchMode::kLeaf;
  // Depths: children come before their parents in `post`.
  std::vector<int32_t> depth(order.size(), 0);
  for (int32_t p : post)
    depth[p] = 1 + std::max(order[kids[p][0]].leaf ? 0 : depth[kids[p][0]], order[kids[p][1]].leaf ? 0 : depth[kids[p][1]]);
  depth_.clear();
  for (int32_t r : roots_) depth_.push_back(order[r].leaf ? 0 : depth[r]);

  // Leaves: one weight for one fixed target, the same full target list on
  // every leaf, or the general list.
  leaf_kind_ = LeafKind::kSparse;
  if (n_leaves > 0) {
    bool one = true, dense = true;
    const int64_t t0 = src.leaves[0].empty() ? -1 : src.leaves[0][0].first;
    for (const auto& leaf : src.leaves) {
      one = one && leaf.size() == 1 && leaf[0].first == t0;
      dense = dense && static_cast<int64_t>(leaf.size()) == n_targets_;
      for (size_t k = 0; dense && k < leaf.size(); ++k) dense = leaf[k].first == static_cast<int64_t>(k);
    }
    if (one) {
      leaf_kind_ = LeafKind::kOne;
      one_target_ = t0;
    } else if (dense) {
      leaf_kind_ = LeafKind::kDense;
      dense_.resize(static_cast<size_t>(n_leaves * n_targets_));
      for (int64_t l = 0; l < n_leaves; ++l)
        for (int64_t k = 0; k < n_targets_; ++k) dense_[l * n_targets_ + k] = static_cast<T>(src.leaves[l][k].second);
    }
  }
  if (leaf_kind_ == LeafKind::kSparse) {
    leaf_begin_.assign(1, 0);
    sparse_target_.clear();
    sparse_weight_.clear();
    for (const auto& leaf : src.leaves) {
      for (const auto& tw : leaf) {
        sparse_target_.push_back(static_cast<int32_t>(tw.first));
        sparse_weight_.push_back(static_cast<T>(tw.second));
      }
      leaf_begin_.push_back(static_cast<int64_t>(sparse_target_.size()));
    }
  }
  for (size_t p = 0; p < order.size(); ++p) {
    if (!order[p].leaf) continue;
    const int64_t l = order[p].index;
    if (leaf_kind_ == LeafKind::kOne) {
      nodes_[p].split = static_cast<T>(src.leaves[l][0].second);
    } else {
      // The leaf index, bit for bit, in the split's bytes.
      typename std::conditional<sizeof(T) == 8, int64_t, int32_t>::type bits = l;
      std::memcpy(&nodes_[p].split, &bits, sizeof(T));
    }
  }
  return Status::OK();
}

template <typename T>
int32_t TreeEnsembleModel<T>::WalkGeneral(int32_t idx, const T* row) const {
  while ((nodes_[idx].feature & kLeafBit) == 0) {
    const Node& n = nodes_[idx];
    const T x = row[n.feature & kFeatureMask];
    bool t = false;
    switch (modes_[idx]) {
      case BranchMode::kLeq: t = x <= n.split; break;
      case BranchMode::kLt: t = x < n.split; break;
      case BranchMode::kGte: t = x >= n.split; break;
      case BranchMode::kGt: t = x > n.split; break;
      case BranchMode::kEq: t = x == n.split; break;
      case BranchMode::kNeq: t = x != n.split; break;
      case BranchMode::kMember: {
        const std::vector<T>& s = sets_[member_set_[idx]];
        t = std::binary_search(s.begin(), s.end(), x);
        break;
      }
      case BranchMode::kLeaf: break;
    }
    if (!t && (n.feature & kNanTrue) != 0 && std::isnan(x)) t = true;
    idx = n.child[t ? 0 : 1];
  }
  return idx;
}

template <typename T>
template <Aggregate A, typename TreeEnsembleModel<T>::LeafKind L>
inline void TreeEnsembleModel<T>::AddLeaf(const Node& leaf, T* a, uint8_t* h) const {
  if constexpr (L == LeafKind::kOne) {
    Combine<A>(leaf.split, a + one_target_, h ? h + one_target_ : nullptr);
  } else {
    typename std::conditional<sizeof(T) == 8, int64_t, int32_t>::type l;
    std::memcpy(&l, &leaf.split, sizeof(T));
    if constexpr (L == LeafKind::kDense) {
      const int64_t E = n_targets_;
      const T* w = dense_.data() + static_cast<int64_t>(l) * E;
      for (int64_t k = 0; k < E; ++k) Combine<A>(w[k], a + k, h ? h + k : nullptr);
    } else {
      for (int64_t p = leaf_begin_[l]; p < leaf_begin_[l + 1]; ++p)
        Combine<A>(sparse_weight_[p], a + sparse_target_[p], h + sparse_target_[p]);
    }
  }
}

template <typename T>
template <BranchMode M, Aggregate A, typename TreeEnsembleModel<T>::LeafKind L>
void TreeEnsembleModel<T>::RunTrees(const T* x, int64_t r0, int64_t r1, int64_t stride, int64_t t0, int64_t t1,
                                    T* acc, uint8_t* has) const {
  const int64_t E = n_targets_;
  const int64_t rows = r1 - r0;
  constexpr bool kTrack = A == Aggregate::kMin || A == Aggregate::kMax || L == LeafKind::kSparse;
  std::fill(acc, acc + rows * E, T(0));
  std::vector<uint8_t> local;
  uint8_t* h = has;
  if (kTrack && h == nullptr) {
    local.assign(static_cast<size_t>(rows * E), 0);
    h = local.data();
  } else if (h != nullptr) {
    std::fill(h, h + rows * E, uint8_t{0});
  }
  const Node* nodes = nodes_.data();
  // Fixed-step walks need one comparison for all nodes and a row with the
  // features a leaf node reads (any model with an interior node has them).
  constexpr bool kFixed = M != BranchMode::kLeaf;
  auto walk = [&](int32_t idx, const T* row) {
    if constexpr (kFixed) return Walk<M, T>(nodes, idx, row);
    else return WalkGeneral(idx, row);
  };
  if (rows == 1) {
    // Several trees at once.
    const T* row = x + r0 * stride;
    uint8_t* hr = kTrack ? h : nullptr;
    int64_t t = t0;
    if constexpr (kFixed) {
      for (; t + kLanes <= t1; t += kLanes) {
        int32_t idx[kLanes];
        int32_t d = 0;
        for (int j = 0; j < kLanes; ++j) {
          idx[j] = roots_[t + j];
          d = std::max(d, depth_[t + j]);
        }
        if (d <= kFixedDepthLimit) {
          for (int32_t step = 0; step < d; ++step)
            for (int j = 0; j < kLanes; ++j) idx[j] = Step<M, T>(nodes, idx[j], row);
        } else {
          for (int j = 0; j < kLanes; ++j) idx[j] = Walk<M, T>(nodes, idx[j], row);
        }
        for (int j = 0; j < kLanes; ++j) AddLeaf<A, L>(nodes[idx[j]], acc, hr);
      }
    }
    for (; t < t1; ++t) AddLeaf<A, L>(nodes[walk(roots_[t], row)], acc, hr);
  } else {
    // Several rows at once through one tree, a block of rows per tree.
    for (int64_t b = r0; b < r1; b += kRowBlock) {
      const int64_t be = std::min(r1, b + kRowBlock);
      for (int64_t t = t0; t < t1; ++t) {
        const int32_t root = roots_[t];
        int64_t r = b;
        if (kFixed && depth_[t] <= kFixedDepthLimit) {
          const int32_t d = depth_[t];
          for (; r + kLanes <= be; r += kLanes) {
            int32_t idx[kLanes];
            for (int j = 0; j < kLanes; ++j) idx[j] = root;
            for (int32_t step = 0; step < d; ++step)
              for (int j = 0; j < kLanes; ++j) idx[j] = Step<M, T>(nodes, idx[j], x + (r + j) * stride);
            for (int j = 0; j < kLanes; ++j)
              AddLeaf<A, L>(nodes[idx[j]], acc + (r + j - r0) * E, kTrack ? h + (r + j - r0) * E : nullptr);
          }
        }
        for (; r < be; ++r)
          AddLeaf<A, L>(nodes[walk(root, x + r * stride)], acc + (r - r0) * E, kTrack ? h + (r - r0) * E : nullptr);
      }
    }
  }
  if (!kTrack && has != nullptr && t1 > t0) {
    // Every leaf gives the same targets, so every row has them.
    for (int64_t r = 0; r < rows; ++r) {
      if (L == LeafKind::kOne) has[r * E + one_target_] = 1;
      else std::fill(has + r * E, has + (r + 1) * E, uint8_t{1});
    }
  }
}

template <typename T>
template <typename Fn>
void TreeEnsembleModel<T>::Dispatch(Aggregate agg, Fn&& fn) const {
  auto with_leaf = [&](auto m, auto a) {
    switch (leaf_kind_) {
      case LeafKind::kOne: fn(m, a, std::integral_constant<LeafKind, LeafKind::kOne>{}); break;
      case LeafKind::kDense: fn(m, a, std::integral_constant<LeafKind, LeafKind::kDense>{}); break;
      case LeafKind::kSparse: fn(m, a, std::integral_constant<LeafKind, LeafKind::kSparse>{}); break;
    }
  };
  auto with_agg = [&](auto m) {
    switch (agg) {
      case Aggregate::kMin: with_leaf(m, std::integral_constant<Aggregate, Aggregate::kMin>{}); break;
      case Aggregate::kMax: with_leaf(m, std::integral_constant<Aggregate, Aggregate::kMax>{}); break;
      default: with_leaf(m, std::integral_constant<Aggregate, Aggregate::kSum>{}); break;
    }
  };
  using BM = BranchMode;
  switch (uniform_mode_) {
    case BM::kLeq: with_agg(std::integral_constant<BM, BM::kLeq>{}); break;
    case BM::kLt: with_agg(std::integral_constant<BM, BM::kLt>{}); break;
    case BM::kGte: with_agg(std::integral_constant<BM, BM::kGte>{}); break;
    case BM::kGt: with_agg(std::integral_constant<BM, BM::kGt>{}); break;
    case BM::kEq: with_agg(std::integral_constant<BM, BM::kEq>{}); break;
    case BM::kNeq: with_agg(std::integral_constant<BM, BM::kNeq>{}); break;
    default: with_agg(std::integral_constant<BM, BM::kLeaf>{}); break;
  }
}

template <typename T>
void TreeEnsembleModel<T>::Run(const T* x, int64_t n, int64_t stride, Aggregate agg, T* out, uint8_t* has,
                               ThreadPool* pool) const {
  if (n <= 0) return;
  const int64_t E = n_targets_;
  const int64_t n_trees = this->n_trees();
  Dispatch(agg, [&](auto m, auto a, auto l) {
    constexpr BranchMode M = decltype(m)::value;
    constexpr Aggregate A = decltype(a)::value;
    constexpr LeafKind L = decltype(l)::value;
    const int threads = pool == nullptr ? 1 : pool->NumThreads();
    if (n == 1 && threads > 1 && n_trees >= kParallelTrees) {
      // Trees in chunks, one partial result each, merged in chunk order.
      const int64_t chunks = std::min<int64_t>(threads, n_trees / (kParallelTrees / 4));
      std::vector<T> part(static_cast<size_t>(chunks * E));
      std::vector<uint8_t> part_has(static_cast<size_t>(chunks * E));
      ThreadPool::For(pool, chunks, 1, [&](int64_t c0, int64_t c1) {
        for (int64_t c = c0; c < c1; ++c)
          RunTrees<M, A, L>(x, 0, 1, stride, n_trees * c / chunks, n_trees * (c + 1) / chunks, part.data() + c * E,
                            part_has.data() + c * E);
      });
      std::fill(out, out + E, T(0));
      std::vector<uint8_t> h(static_cast<size_t>(E), 0);
      for (int64_t c = 0; c < chunks; ++c)
        for (int64_t k = 0; k < E; ++k)
          if (part_has[c * E + k]) Combine<A>(part[c * E + k], out + k, h.data() + k);
      if (has != nullptr) std::copy(h.begin(), h.end(), has);
    } else {
      // Enough rows per chunk that a chunk is worth a wake-up.
      const int64_t min_rows = std::max<int64_t>(1, 16384 / std::max<int64_t>(1, n_trees));
      ThreadPool::For(pool, n, min_rows, [&](int64_t r0, int64_t r1) {
        RunTrees<M, A, L>(x, r0, r1, stride, 0, n_trees, out + r0 * E, has == nullptr ? nullptr : has + r0 * E);
      });
    }
  });
  if (agg == Aggregate::kAverage && n_trees > 0)
    for (int64_t i = 0; i < n * E; ++i) out[i] /= static_cast<T>(n_trees);
}

template class TreeEnsembleModel<float>;
template class TreeEnsembleModel<double>;

}  // namespace ml
}  // namespace onyx
