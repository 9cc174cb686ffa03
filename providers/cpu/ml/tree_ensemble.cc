// ai.onnx.ml tree ensembles on the engine of tree_ensemble_common.h:
//   TreeEnsembleRegressor (1, 3) and TreeEnsembleClassifier (1, 3): nodes
//     named by (tree id, node id), LEAF nodes carrying target/class weights;
//     opset 3 adds the *_as_tensor (double) attributes. Output float.
//   TreeEnsemble (5): nodes and leaves by position, BRANCH_MEMBER sets,
//     integer-coded modes and transforms; output of the input's type.
// Thresholds and sums are double for double input, float otherwise, as in
// onnxruntime. Where the spec leaves the outputs open (one-target
// transforms, binary classifiers) we write what onnxruntime writes, so
// converted models keep the outputs they were checked against.
#include <algorithm>
#include <cmath>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "providers/cpu/ml/ml_common.h"
#include "providers/cpu/ml/tree_ensemble_common.h"
#include "providers/kernel.h"

namespace onyx {
namespace {

using ml::Aggregate;
using ml::BranchMode;
using ml::PostTransform;
using ml::TreeRef;
using ml::TreeSource;

Status ParseAggregate(const std::string& s, const std::string& node, Aggregate* out) {
  if (s == "SUM") *out = Aggregate::kSum;
  else if (s == "AVERAGE") *out = Aggregate::kAverage;
  else if (s == "MIN") *out = Aggregate::kMin;
  else if (s == "MAX") *out = Aggregate::kMax;
  else
    return MakeError(ErrorCode::kInvalidGraph, node, ": attribute aggregate_function '", s,
                     "' is not one of SUM, AVERAGE, MIN, MAX");
  return Status::OK();
}

// The trees with float and with double thresholds: double input runs the
// double ones. Only the one the declared input type needs is built (both
// when the type is not known at load).
struct Models {
  ml::TreeEnsembleModel<float> f;
  ml::TreeEnsembleModel<double> d;
  Status Build(const KernelInfo& info, const TreeSource& src, const std::string& node) {
    const TypeInfo& t = info.InputType(0);
    const bool known = t.kind == TypeInfo::Kind::kTensor && t.elem != ElemType::kUndefined;
    if (!known || t.elem != ElemType::kDouble) ONYX_RETURN_IF_ERROR(f.Build(src, node));
    if (!known || t.elem == ElemType::kDouble) ONYX_RETURN_IF_ERROR(d.Build(src, node));
    built_f = !known || t.elem != ElemType::kDouble;
    built_d = !known || t.elem == ElemType::kDouble;
    return Status::OK();
  }
  // The input of type `t` has its trees (it has unless the input's type
  // changed from the declared one).
  Status Ready(ElemType t, const std::string& node) const {
    ONYX_CHECK_ARG(t == ElemType::kDouble ? built_d : built_f, node, ": input 0 is ", ElemTypeName(t),
                   " but the model declared another type");
    return Status::OK();
  }
  bool built_f = false, built_d = false;
};

// Per-run working memory kept by each thread between runs, so a run at batch
// 1 allocates nothing but its outputs. A kernel's Compute never re-enters
// itself on one thread. A lease gives back what a big batch grew.
template <typename T>
struct Scratch {
  std::vector<T> acc;
  std::vector<uint8_t> has;
  std::vector<float> row;
};

template <typename T>
class ScratchLease {
 public:
  ScratchLease() : s_(Get()) {}
  ~ScratchLease() {
    constexpr size_t kKeep = 1 << 16;  // elements kept between runs
    if (s_.acc.capacity() > kKeep) std::vector<T>().swap(s_.acc);
    if (s_.has.capacity() > kKeep) std::vector<uint8_t>().swap(s_.has);
  }
  Scratch<T>& operator*() { return s_; }

 private:
  static Scratch<T>& Get() {
    thread_local Scratch<T> s;
    return s;
  }
  Scratch<T>& s_;
};

// Runs the trees over input X (any feature type), in T, into acc/has [N, E].
template <typename T>
Status RunModel(const ml::TreeEnsembleModel<T>& model, const Tensor& X, const std::string& node, Aggregate agg,
                ThreadPool* pool, std::vector<T>* acc, std::vector<uint8_t>* has, int64_t* rows) {
  std::vector<T> storage;
  const T* x = nullptr;
  int64_t n = 0, f = 0;
  ONYX_RETURN_IF_ERROR(ml::FeatureMatrix<T>(X, node, &storage, &x, &n, &f));
  ONYX_CHECK_ARG(model.max_feature() < f, node, ": input 0 has ", f, " features (shape ", ShapeToString(X.dims()),
                 ") but a tree node reads feature ", model.max_feature());
  acc->assign(static_cast<size_t>(n * model.n_targets()), T(0));
  if (has != nullptr) has->assign(acc->size(), 0);
  model.Run(x, n, f, agg, acc->data(), has == nullptr ? nullptr : has->data(), pool);
  *rows = n;
  return Status::OK();
}

// One row of regression scores: base values, then the transform. One
// target: onnxruntime adds a single base value and applies PROBIT only.
// Several: a target no leaf gave a weight to stays 0, without its base
// value, as onnxruntime writes it.
template <typename T, typename Out>
void FinishRegression(const T* acc, const uint8_t* has, int64_t E, const std::vector<double>& base,
                      PostTransform post, Out* y, std::vector<float>& row) {
  if (E == 1) {
    const T v = acc[0] + (base.size() == 1 ? static_cast<T>(base[0]) : T(0));
    if (post == PostTransform::kProbit) y[0] = static_cast<Out>(ml::Probit(static_cast<float>(v)));
    else y[0] = static_cast<Out>(v);
    return;
  }
  const bool use_base = static_cast<int64_t>(base.size()) == E;
  row.resize(static_cast<size_t>(E));
  for (int64_t k = 0; k < E; ++k)
    row[k] = has[k] ? static_cast<float>(acc[k] + (use_base ? static_cast<T>(base[k]) : T(0))) : 0.f;
  ml::TransformRow(post, row.data(), E);
  for (int64_t k = 0; k < E; ++k) y[k] = static_cast<Out>(row[k]);
}

// The (tree id, node id) encoding of TreeEnsembleRegressor/Classifier.
// A regression ensemble over X into output 0, [N, E] of type Out: the
// trees' aggregate plus `base`, then the post-transform. Shared by
// TreeEnsembleRegressor (float out) and TreeEnsemble (X's type out).
template <typename T, typename Out>
Status RunRegression(const ml::TreeEnsembleModel<T>& model, const Tensor& X, const std::string& node, Aggregate agg,
                     const std::vector<double>& base, PostTransform post, ElemType out_type, KernelContext& ctx) {
  ScratchLease<T> lease;
  Scratch<T>& scratch = *lease;
  int64_t n = 0;
  const int64_t E = model.n_targets();
  ONYX_RETURN_IF_ERROR(RunModel(model, X, node, agg, ctx.threads(), &scratch.acc, E > 1 ? &scratch.has : nullptr, &n));
  Tensor* Y = ctx.Output(0, {n, E}, out_type);
  if (Y == nullptr) return Status::OK();
  for (int64_t r = 0; r < n; ++r)
    FinishRegression(scratch.acc.data() + r * E, E > 1 ? scratch.has.data() + r * E : nullptr, E, base, post,
                     Y->data<Out>() + r * E, scratch.row);
  return Status::OK();
}

// Input 0, checked against the trees the session built (float or double).
inline Status TreeInput(KernelContext& ctx, const Models& models, const std::string& node, const Tensor** X) {
  ONYX_RETURN_IF_ERROR(ctx.RequiredInput(0, X));
  return models.Ready((*X)->type(), node);
}

class LegacyTrees {
 public:
  // Reads the nodes_* attributes and the weights (`prefix` "target" or
  // "class") into `src`.
  Status Read(const KernelInfo& info, const std::string& node, const std::string& prefix, TreeSource* src) {
    node_ = node;
    tree_ids_ = info.AttrInts("nodes_treeids");
    node_ids_ = info.AttrInts("nodes_nodeids");
    const std::vector<int64_t> features = info.AttrInts("nodes_featureids");
    const std::vector<int64_t> trues = info.AttrInts("nodes_truenodeids");
    const std::vector<int64_t> falses = info.AttrInts("nodes_falsenodeids");
    const std::vector<int64_t> missing = info.AttrInts("nodes_missing_value_tracks_true");
    const Attribute* modes_attr = info.Attr("nodes_modes");
    const std::vector<std::string> modes = modes_attr ? modes_attr->strings : std::vector<std::string>{};
    std::vector<double> values;
    ONYX_RETURN_IF_ERROR(ml::ReadReals(info, "nodes_values", node, &values));
    const size_t n = tree_ids_.size();
    ONYX_CHECK(n > 0, ErrorCode::kInvalidGraph, node, ": attribute nodes_treeids is required and must not be empty");
    auto same = [&](size_t size, const char* name) -> Status {
      ONYX_CHECK(size == n, ErrorCode::kInvalidGraph, node, ": attribute ", name, " has ", size,
                 " entries but nodes_treeids has ", n);
      return Status::OK();
    };
    ONYX_RETURN_IF_ERROR(same(node_ids_.size(), "nodes_nodeids"));
    ONYX_RETURN_IF_ERROR(same(features.size(), "nodes_featureids"));
    ONYX_RETURN_IF_ERROR(same(trues.size(), "nodes_truenodeids"));
    ONYX_RETURN_IF_ERROR(same(falses.size(), "nodes_falsenodeids"));
    ONYX_RETURN_IF_ERROR(same(modes.size(), "nodes_modes"));
    ONYX_RETURN_IF_ERROR(same(values.size(), "nodes_values"));
    if (!missing.empty()) ONYX_RETURN_IF_ERROR(same(missing.size(), "nodes_missing_value_tracks_true"));

    std::map<std::pair<int64_t, int64_t>, size_t> pos;
    std::vector<BranchMode> mode(n);
    for (size_t i = 0; i < n; ++i) {
      ONYX_RETURN_IF_ERROR(ml::ParseBranchMode(modes[i], StrCat(node, ": ", Describe(i), " nodes_modes"), &mode[i]));
      ONYX_CHECK(pos.emplace(std::make_pair(tree_ids_[i], node_ids_[i]), i).second, ErrorCode::kInvalidGraph, node,
                 ": ", Describe(i), " appears twice (nodes_treeids, nodes_nodeids)");
    }
    // Interior nodes and leaves get their own positions.
    std::vector<int64_t> index(n);
    int64_t n_interior = 0, n_leaves = 0;
    for (size_t i = 0; i < n; ++i) {
      if (mode[i] == BranchMode::kLeaf) {
        index[i] = n_leaves++;
      } else {
        index[i] = n_interior++;
        interior_.push_back(i);
      }
    }
    auto ref = [&](size_t i, int64_t child, const char* attr, TreeRef* out) -> Status {
      auto it = pos.find({tree_ids_[i], child});
      ONYX_CHECK(it != pos.end(), ErrorCode::kInvalidGraph, node, ": ", Describe(i), " has ", attr, " ", child,
                 ", which is not a node of tree ", tree_ids_[i], " (pointing outside the node array)");
      ONYX_CHECK(it->second != i, ErrorCode::kInvalidGraph, node, ": ", Describe(i), " has ", attr,
                 " pointing to itself (the tree has a cycle)");
      out->leaf = mode[it->second] == BranchMode::kLeaf;
      out->index = index[it->second];
      return Status::OK();
    };
    src->leaves.assign(static_cast<size_t>(n_leaves), {});
    for (size_t i = 0; i < n; ++i) {
      if (mode[i] == BranchMode::kLeaf) continue;
      src->modes.push_back(mode[i]);
      src->features.push_back(features[i]);
      src->splits.push_back(values[i]);
      src->missing_true.push_back(missing.empty() ? 0 : static_cast<uint8_t>(missing[i] != 0));
      src->members.emplace_back();
      TreeRef t, f;
      ONYX_RETURN_IF_ERROR(ref(i, trues[i], "nodes_truenodeids", &t));
      ONYX_RETURN_IF_ERROR(ref(i, falses[i], "nodes_falsenodeids", &f));
      src->true_refs.push_back(t);
      src->false_refs.push_back(f);
    }
    // A tree's root is its first node in the list.
    std::map<int64_t, bool> seen;
    for (size_t i = 0; i < n; ++i) {
      if (!seen.emplace(tree_ids_[i], true).second) continue;
      src->roots.push_back(TreeRef{index[i], mode[i] == BranchMode::kLeaf});
    }
    // Weights, attached to the leaves (onnxruntime ignores weights on
    // interior nodes, which no row ever ends at).
    const std::vector<int64_t> w_trees = info.AttrInts(prefix + "_treeids");
    const std::vector<int64_t> w_nodes = info.AttrInts(prefix + "_nodeids");
    const std::vector<int64_t> w_ids = info.AttrInts(prefix + "_ids");
    std::vector<double> weights;
    ONYX_RETURN_IF_ERROR(ml::ReadReals(info, prefix + "_weights", node, &weights));
    const size_t nw = w_trees.size();
    ONYX_CHECK(w_nodes.size() == nw && w_ids.size() == nw && weights.size() == nw, ErrorCode::kInvalidGraph, node,
               ": attributes ", prefix, "_treeids, ", prefix, "_nodeids, ", prefix, "_ids and ", prefix,
               "_weights must have the same length, got ", nw, ", ", w_nodes.size(), ", ", w_ids.size(), ", ",
               weights.size());
    for (size_t k = 0; k < nw; ++k) {
      auto it = pos.find({w_trees[k], w_nodes[k]});
      ONYX_CHECK(it != pos.end(), ErrorCode::kInvalidGraph, node, ": weight ", k, " (", prefix, "_treeids ",
                 w_trees[k], ", ", prefix, "_nodeids ", w_nodes[k], ") names a node that does not exist");
      ONYX_CHECK(w_ids[k] >= 0 && w_ids[k] < src->n_targets, ErrorCode::kInvalidGraph, node, ": ", prefix, "_ids[",
                 k, "] is ", w_ids[k], ", outside [0, ", src->n_targets, ")");
      if (mode[it->second] == BranchMode::kLeaf) src->leaves[index[it->second]].emplace_back(w_ids[k], weights[k]);
    }
    src->describe = [this](int64_t i) { return Describe(interior_[i]); };
    src->target_attr = prefix + "_ids";
    return Status::OK();
  }

 private:
  std::string Describe(size_t i) const {
    return StrCat("node ", i, " (tree ", tree_ids_[i], ", node id ", node_ids_[i], ")");
  }
  std::string node_;
  std::vector<int64_t> tree_ids_, node_ids_;
  std::vector<size_t> interior_;  // list position of each interior node
};

class TreeEnsembleRegressorKernel final : public OpKernel {
 public:
  Status Init(const KernelInfo& info) {
    node_ = info.node().Describe();
    TreeSource src;
    src.n_targets = info.AttrInt("n_targets", 1);
    ONYX_CHECK(src.n_targets > 0, ErrorCode::kInvalidGraph, node_, ": attribute n_targets must be positive, got ",
               src.n_targets);
    LegacyTrees trees;
    ONYX_RETURN_IF_ERROR(trees.Read(info, node_, "target", &src));
    ONYX_RETURN_IF_ERROR(ml::ReadReals(info, "base_values", node_, &base_));
    ONYX_RETURN_IF_ERROR(ParseAggregate(info.AttrString("aggregate_function", "SUM"), node_, &agg_));
    ONYX_RETURN_IF_ERROR(ml::ParsePostTransform(info.AttrString("post_transform", "NONE"), node_, &post_));
    return models_.Build(info, src, node_);
  }

  Status Compute(KernelContext& ctx) const override {
    const Tensor* X = nullptr;
    ONYX_RETURN_IF_ERROR(TreeInput(ctx, models_, node_, &X));
    if (X->type() == ElemType::kDouble)
      return RunRegression<double, float>(models_.d, *X, node_, agg_, base_, post_, ElemType::kFloat, ctx);
    return RunRegression<float, float>(models_.f, *X, node_, agg_, base_, post_, ElemType::kFloat, ctx);
  }

 private:

  std::string node_;
  Models models_;
  std::vector<double> base_;
  Aggregate agg_ = Aggregate::kSum;
  PostTransform post_ = PostTransform::kNone;
};

class TreeEnsembleClassifierKernel final : public OpKernel {
 public:
  Status Init(const KernelInfo& info) {
    node_ = info.node().Describe();
    ONYX_RETURN_IF_ERROR(ml::ReadClassLabels(info, "classlabels_int64s", node_, &int_labels_, &string_labels_));
    TreeSource src;
    src.n_targets = static_cast<int64_t>(int_labels_.empty() ? string_labels_.size() : int_labels_.size());
    LegacyTrees trees;
    ONYX_RETURN_IF_ERROR(trees.Read(info, node_, "class", &src));
    ONYX_RETURN_IF_ERROR(ml::ReadReals(info, "base_values", node_, &base_));
    ONYX_RETURN_IF_ERROR(ml::ParsePostTransform(info.AttrString("post_transform", "NONE"), node_, &post_));
    // Two labels and weights for one class only: one score per row, the
    // other column derived from it (how converters write binary models).
    std::vector<bool> used(static_cast<size_t>(src.n_targets), false);
    int64_t n_used = 0;
    for (const auto& leaf : src.leaves)
      for (const auto& tw : leaf) {
        if (!used[tw.first]) ++n_used;
        used[tw.first] = true;
        if (tw.second < 0) all_positive_ = false;
      }
    binary_one_score_ = src.n_targets == 2 && n_used == 1;
    return models_.Build(info, src, node_);
  }

  Status Compute(KernelContext& ctx) const override {
    const Tensor* X = nullptr;
    ONYX_RETURN_IF_ERROR(TreeInput(ctx, models_, node_, &X));
    if (X->type() == ElemType::kDouble) return Run(models_.d, *X, ctx);
    return Run(models_.f, *X, ctx);
  }

 private:
  template <typename T>
  Status Run(const ml::TreeEnsembleModel<T>& model, const Tensor& X, KernelContext& ctx) const {
    ScratchLease<T> lease;
    Scratch<T>& scratch = *lease;
    std::vector<T>& acc = scratch.acc;
    std::vector<uint8_t>& has = scratch.has;
    int64_t n = 0;
    ONYX_RETURN_IF_ERROR(RunModel(model, X, node_, Aggregate::kSum, ctx.threads(), &acc, &has, &n));
    const int64_t E = model.n_targets();
    const bool strings = !string_labels_.empty();
    Tensor* Y = ctx.Output(0, {n}, strings ? ElemType::kString : ElemType::kInt64);
    Tensor* Z = ctx.Output(1, {n, E}, ElemType::kFloat);
    std::vector<float>& z = scratch.row;
    z.resize(static_cast<size_t>(E));
    for (int64_t r = 0; r < n; ++r) {
      const int64_t label = FinishRow(acc.data() + r * E, has.data() + r * E, E, z.data());
      if (Y != nullptr) {
        if (strings) Y->data<std::string>()[r] = string_labels_[label];
        else Y->data<int64_t>()[r] = int_labels_[label];
      }
      if (Z != nullptr) std::copy(z.begin(), z.end(), Z->data<float>() + r * E);
    }
    return Status::OK();
  }

  // Scores of one row into z[E]; returns the index of its label.
  template <typename T>
  int64_t FinishRow(T* s, uint8_t* has, int64_t E, float* z) const {
    if (E != 2) {
      for (size_t k = 0; k < base_.size() && static_cast<int64_t>(k) < E; ++k) {
        s[k] += static_cast<T>(base_[k]);
        has[k] = 1;
      }
      int64_t best = -1;
      for (int64_t k = 0; k < E; ++k)
        if (has[k] && (best < 0 || s[k] > s[best])) best = k;
      for (int64_t k = 0; k < E; ++k) z[k] = static_cast<float>(s[k]);
      ml::TransformRow(post_, z, E);
      return best < 0 ? 0 : best;
    }
    // Two classes, as onnxruntime reads them.
    bool two_scores = true;
    int second = -1;  // how the one score becomes two columns (-1: it does not)
    if (base_.size() == 2) {
      if (has[1]) {
        s[1] = static_cast<T>(base_[1]) + s[0];
        s[0] = -s[1];
      } else {
        s[1] += static_cast<T>(base_[1]);
        s[0] += static_cast<T>(base_[0]);
      }
    } else {
      if (base_.size() == 1) s[0] += static_cast<T>(base_[0]);
      else if (base_.empty()) second = 3;
      if (!has[1]) two_scores = false;
    }
    const T pos = (two_scores && has[1]) ? s[1] : (has[0] ? s[0] : T(0));
    int64_t label;
    if (binary_one_score_) {
      if (all_positive_) {
        label = pos > T(0.5) ? 1 : 0;
        second = label == 1 ? 0 : 1;
      } else {
        label = pos > T(0) ? 1 : 0;
        second = label == 1 ? 2 : 3;
      }
    } else {
      label = pos > T(0) ? 1 : 0;
    }
    if (two_scores) {
      z[0] = static_cast<float>(s[0]);
      z[1] = static_cast<float>(s[1]);
      ml::TransformRow(post_, z, 2);
      return label;
    }
    const float v = static_cast<float>(s[0]);
    if (post_ == PostTransform::kProbit) {
      z[0] = ml::Probit(v);
      z[1] = 0.f;
    } else if (second == 0 || second == 1) {
      z[0] = 1.f - v;
      z[1] = v;
    } else if (post_ == PostTransform::kLogistic && (second == 2 || second == 3)) {
      z[0] = ml::Logistic(-v);
      z[1] = ml::Logistic(v);
    } else if (second == 2) {
      z[0] = -v;
      z[1] = v;
    } else if (second == 3) {
      z[0] = v;
      z[1] = -v;
    } else {
      z[0] = v;
      z[1] = 0.f;
    }
    return label;
  }

  std::string node_;
  Models models_;
  std::vector<int64_t> int_labels_;
  std::vector<std::string> string_labels_;
  std::vector<double> base_;
  PostTransform post_ = PostTransform::kNone;
  bool binary_one_score_ = false;
  bool all_positive_ = true;
};

// TreeEnsemble (opset 5).
class TreeEnsembleKernel final : public OpKernel {
 public:
  Status Init(const KernelInfo& info) {
    node_ = info.node().Describe();
    TreeSource src;
    src.n_targets = info.AttrInt("n_targets", 0);
    ONYX_CHECK(src.n_targets > 0, ErrorCode::kInvalidGraph, node_, ": attribute n_targets must be positive, got ",
               src.n_targets);
    const std::vector<int64_t> features = info.AttrInts("nodes_featureids");
    const std::vector<int64_t> trues = info.AttrInts("nodes_truenodeids");
    const std::vector<int64_t> falses = info.AttrInts("nodes_falsenodeids");
    const std::vector<int64_t> true_leafs = info.AttrInts("nodes_trueleafs");
    const std::vector<int64_t> false_leafs = info.AttrInts("nodes_falseleafs");
    const std::vector<int64_t> missing = info.AttrInts("nodes_missing_value_tracks_true");
    const std::vector<int64_t> targets = info.AttrInts("leaf_targetids");
    const std::vector<int64_t> roots = info.AttrInts("tree_roots");
    std::vector<double> splits, weights, members;
    ONYX_RETURN_IF_ERROR(TensorAttr(info, "nodes_splits", true, &splits));
    ONYX_RETURN_IF_ERROR(TensorAttr(info, "leaf_weights", true, &weights));
    ONYX_RETURN_IF_ERROR(TensorAttr(info, "membership_values", false, &members));
    const Attribute* modes_attr = info.Attr("nodes_modes");
    ONYX_CHECK(modes_attr != nullptr && modes_attr->t != nullptr && modes_attr->t->type() == ElemType::kUint8,
               ErrorCode::kInvalidGraph, node_, ": attribute nodes_modes is required (a uint8 tensor)");
    const size_t n = features.size();
    auto same = [&](size_t size, const char* name) -> Status {
      ONYX_CHECK(size == n, ErrorCode::kInvalidGraph, node_, ": attribute ", name, " has ", size,
                 " entries but nodes_featureids has ", n);
      return Status::OK();
    };
    ONYX_RETURN_IF_ERROR(same(trues.size(), "nodes_truenodeids"));
    ONYX_RETURN_IF_ERROR(same(falses.size(), "nodes_falsenodeids"));
    ONYX_RETURN_IF_ERROR(same(true_leafs.size(), "nodes_trueleafs"));
    ONYX_RETURN_IF_ERROR(same(false_leafs.size(), "nodes_falseleafs"));
    ONYX_RETURN_IF_ERROR(same(splits.size(), "nodes_splits"));
    ONYX_RETURN_IF_ERROR(same(static_cast<size_t>(modes_attr->t->size()), "nodes_modes"));
    if (!missing.empty()) ONYX_RETURN_IF_ERROR(same(missing.size(), "nodes_missing_value_tracks_true"));
    ONYX_CHECK(targets.size() == weights.size(), ErrorCode::kInvalidGraph, node_, ": attribute leaf_targetids has ",
               targets.size(), " entries but leaf_weights has ", weights.size());
    const uint8_t* modes = modes_attr->t->data<uint8_t>();
    size_t member_pos = 0;
    for (size_t i = 0; i < n; ++i) {
      ONYX_CHECK(modes[i] <= 6, ErrorCode::kInvalidGraph, node_, ": node ", i, " has nodes_modes ",
                 static_cast<int>(modes[i]), ", not one of 0 (BRANCH_LEQ) ... 6 (BRANCH_MEMBER)");
      const BranchMode m = static_cast<BranchMode>(modes[i]);
      src.modes.push_back(m);
      src.features.push_back(features[i]);
      src.splits.push_back(splits[i]);
      src.missing_true.push_back(missing.empty() ? 0 : static_cast<uint8_t>(missing[i] != 0));
      src.true_refs.push_back(TreeRef{trues[i], true_leafs[i] != 0});
      src.false_refs.push_back(TreeRef{falses[i], false_leafs[i] != 0});
      std::vector<double> set;
      if (m == BranchMode::kMember) {
        // The sets follow one another in membership_values, each ended by a NaN.
        ONYX_CHECK(member_pos < members.size(), ErrorCode::kInvalidGraph, node_, ": node ", i,
                   " is a BRANCH_MEMBER node but membership_values has no set left for it");
        while (member_pos < members.size() && !std::isnan(members[member_pos])) set.push_back(members[member_pos++]);
        ++member_pos;
      }
      src.members.push_back(std::move(set));
    }
    for (size_t l = 0; l < targets.size(); ++l) src.leaves.push_back({{targets[l], weights[l]}});
    for (int64_t r : roots) {
      ONYX_CHECK(r >= 0 && static_cast<size_t>(r) < n, ErrorCode::kInvalidGraph, node_, ": tree_roots entry ", r,
                 " points outside the ", n, " nodes");
      // A one-leaf tree: a root whose both branches are the same leaf.
      if (true_leafs[r] && false_leafs[r] && trues[r] == falses[r]) src.roots.push_back(TreeRef{trues[r], true});
      else src.roots.push_back(TreeRef{r, false});
    }
    src.describe = [](int64_t i) { return StrCat("node ", i); };
    src.target_attr = "leaf_targetids";
    const int64_t agg = info.AttrInt("aggregate_function", 1);
    ONYX_CHECK(agg >= 0 && agg <= 3, ErrorCode::kInvalidGraph, node_, ": attribute aggregate_function ", agg,
               " is not one of 0 (AVERAGE), 1 (SUM), 2 (MIN), 3 (MAX)");
    agg_ = agg == 0 ? Aggregate::kAverage : agg == 1 ? Aggregate::kSum : agg == 2 ? Aggregate::kMin : Aggregate::kMax;
    const int64_t post = info.AttrInt("post_transform", 0);
    ONYX_CHECK(post >= 0 && post <= 4, ErrorCode::kInvalidGraph, node_, ": attribute post_transform ", post,
               " is not one of 0 (NONE), 1 (SOFTMAX), 2 (LOGISTIC), 3 (SOFTMAX_ZERO), 4 (PROBIT)");
    static const PostTransform kPost[] = {PostTransform::kNone, PostTransform::kSoftmax, PostTransform::kLogistic,
                                          PostTransform::kSoftmaxZero, PostTransform::kProbit};
    post_ = kPost[post];
    return models_.Build(info, src, node_);
  }

  Status Compute(KernelContext& ctx) const override {
    const Tensor* X = nullptr;
    ONYX_RETURN_IF_ERROR(TreeInput(ctx, models_, node_, &X));
    // TreeEnsemble (opset 5) has no base_values attribute.
    static const std::vector<double> kNoBase;
    switch (X->type()) {
      case ElemType::kFloat:
        return RunRegression<float, float>(models_.f, *X, node_, agg_, kNoBase, post_, X->type(), ctx);
      case ElemType::kDouble:
        return RunRegression<double, double>(models_.d, *X, node_, agg_, kNoBase, post_, X->type(), ctx);
      case ElemType::kFloat16:
        return RunRegression<float, Float16>(models_.f, *X, node_, agg_, kNoBase, post_, X->type(), ctx);
      default:
        return MakeError(ErrorCode::kInvalidArgument, node_, ": input 0 must be float, double or float16, got ",
                         ElemTypeName(X->type()));
    }
  }

 private:
  Status TensorAttr(const KernelInfo& info, const char* name, bool required, std::vector<double>* out) const {
    const Attribute* a = info.Attr(name);
    if (a == nullptr || a->t == nullptr) {
      ONYX_CHECK(!required, ErrorCode::kInvalidGraph, node_, ": attribute ", name, " is required");
      out->clear();
      return Status::OK();
    }
    return ml::TensorToDoubles(*a->t, StrCat(node_, ": attribute ", name), out);
  }

  std::string node_;
  Models models_;
  Aggregate agg_ = Aggregate::kSum;
  PostTransform post_ = PostTransform::kNone;
};

}  // namespace

ONYX_REGISTER_KERNEL(TreeEnsembleRegressorKernel, "ai.onnx.ml", "TreeEnsembleRegressor", 1, kMaxVersion,
                     ml::FeatureTypes());
ONYX_REGISTER_KERNEL(TreeEnsembleClassifierKernel, "ai.onnx.ml", "TreeEnsembleClassifier", 1, kMaxVersion,
                     ml::FeatureTypes());
ONYX_REGISTER_KERNEL(TreeEnsembleKernel, "ai.onnx.ml", "TreeEnsemble", 5, kMaxVersion,
                     {ElemType::kFloat, ElemType::kDouble, ElemType::kFloat16});

}  // namespace onyx
