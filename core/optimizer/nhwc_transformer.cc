// nhwc_transformer (layout): runs chains of 8-bit quantized operators
// channels-last, as onnxruntime's NhwcTransformer does. A QLinearConv packs
// its input channels-last whatever the layout (qlinear_conv.cc), so a chain
// of them in [N, C, H, W] pays two transposes per conv; channels-last, only
// where the chain is entered and left:
//
//   QLinearConv                 -> com.microsoft QLinearConv, channels_last=1
//                                  (onnxruntime's contrib op)
//   QLinearGlobalAveragePool    -> the same with channels_last=1
//   MaxPool (int8/uint8)        -> com.microsoft NhwcMaxPool (onnxruntime's)
//   com.onyxruntime QLinearBatchNormalization -> channels_last=1
//   DequantizeLinear, QuantizeLinear (one scale), Relu,
//   com.microsoft QLinearAdd/QLinearMul (inputs of one shape, or B one
//   element), QLinearLeakyRelu, QLinearSigmoid   -> unchanged: they do not
//                                  care about the layout
//
// Which nodes go channels-last: every QLinearConv (and pool) next to
// another node that does (a conv alone keeps its own layout: explicit
// transposes would cost what its internal ones do), and the
// layout-indifferent nodes whose data inputs all come from channels-last
// nodes and whose output is 8-bit or read by channels-last nodes only (a
// Transpose back to [N, C, ...] for an outside reader then moves no more
// than those of the inputs would; a float output would move 4 bytes a value
// where the conv's own transposes move one). Each value entering the set gets one
// Transpose to [N, H, W, C], each value a reader outside the set (or the
// graph's output) needs gets one Transpose back; the node outputs keep their
// names on the [N, C, ...] side, so readers outside see no change.
// Results are unchanged bit for bit: the kernels compute the same sums and
// roundings in either layout.
#include <algorithm>
#include <string>
#include <unordered_map>
#include <unordered_set>

#include "core/optimizer/transformer_util.h"

namespace onyx {
namespace optimizer {
namespace {

enum class Role {
  kNone,
  kLayout,   // has a channels-last form (QLinearConv, the 8-bit pools)
  kAnyLayout // elementwise or per channel with an attribute for it
};

// Input `name` holds one value (scalar or [1]) as far as the graph knows.
bool OneElement(const Graph& graph, const std::string& name) {
  TypeInfo t;
  if (!TensorType(graph, name, &t) || !t.has_shape || t.dims.size() > 1) return false;
  return t.dims.empty() || (t.dims[0].known() && t.dims[0].value == 1);
}

// The role of `n` and the slots of its data inputs (those with the layout).
Role Classify(const Graph& graph, const Node& n, std::vector<int>* data) {
  data->clear();
  if (n.outputs.size() != 1 || n.inputs.empty() || n.inputs[0].empty()) return Role::kNone;
  const std::string& d = n.domain;
  const std::string& op = n.op_type;
  Role role = Role::kNone;
  if ((d.empty() && op == "QLinearConv") ||
      (d == kMsDomain && op == "QLinearConv" && n.AttrInt("channels_last", 0) == 0)) {
    if (n.inputs.size() < 8) return Role::kNone;
    role = Role::kLayout;
  } else if (d == kMsDomain && op == "QLinearGlobalAveragePool" && n.AttrInt("channels_last", 0) == 0) {
    role = Role::kLayout;
  } else if (d.empty() && op == "MaxPool") {  // 8-bit (checked below), no Indices output
    if (n.inputs.size() != 1 || !n.Attr("kernel_shape")) return Role::kNone;
    role = Role::kLayout;
  } else if (d == kOnyxDomain && op == "QLinearBatchNormalization" && n.AttrInt("channels_last", 0) == 0) {
    role = Role::kAnyLayout;
  } else if (d.empty() && (op == "DequantizeLinear" || op == "QuantizeLinear")) {
    if (n.inputs.size() < 2 || !OneElement(graph, n.inputs[1])) return Role::kNone;
    if (n.inputs.size() > 2 && !n.inputs[2].empty() && !OneElement(graph, n.inputs[2])) return Role::kNone;
    role = Role::kAnyLayout;
  } else if (d.empty() && op == "Relu") {
    role = Role::kAnyLayout;
  } else if (d == kMsDomain && (op == "QLinearLeakyRelu" || op == "QLinearSigmoid")) {
    role = Role::kAnyLayout;
  } else if (d == kMsDomain && (op == "QLinearAdd" || op == "QLinearMul")) {
    if (n.inputs.size() < 7 || n.inputs[3].empty()) return Role::kNone;
    if (!OneElement(graph, n.inputs[3])) {
      if (!SameShape(graph, n.inputs[0], n.inputs[3])) return Role::kNone;
      data->push_back(3);
    }
    role = Role::kAnyLayout;
  } else {
    return Role::kNone;
  }
  data->insert(data->begin(), 0);
  // Data of rank >= 3 ([N, C, spatial...]) of one rank, and 8-bit where the
  // node is a quantized one (a float Relu or DequantizeLinear output is fine).
  const int rank = TensorRank(graph, n.inputs[0]);
  if (rank < 3) return Role::kNone;
  for (int s : *data)
    if (TensorRank(graph, n.inputs[s]) != rank) return Role::kNone;
  if (role == Role::kLayout && !Is8Bit(TensorElemType(graph, n.inputs[0]))) return Role::kNone;
  if (TensorRank(graph, n.outputs[0]) != rank) return Role::kNone;
  return role;
}

std::vector<int64_t> ToLast(int rank) {  // [N, C, s...] -> [N, s..., C]
  std::vector<int64_t> p{0};
  for (int i = 2; i < rank; ++i) p.push_back(i);
  p.push_back(1);
  return p;
}

std::vector<int64_t> ToFirst(int rank) {  // [N, s..., C] -> [N, C, s...]
  std::vector<int64_t> p{0, rank - 1};
  for (int i = 1; i < rank - 1; ++i) p.push_back(i);
  return p;
}

Node MakeTranspose(const std::string& name, const std::string& in, const std::string& out,
                   std::vector<int64_t> perm, int opset) {
  Node t;
  t.name = name;
  t.op_type = "Transpose";
  t.inputs = {in};
  t.outputs = {out};
  Attribute a;
  a.type = Attribute::Type::kInts;
  a.ints = std::move(perm);
  t.attrs["perm"] = std::move(a);
  t.since_version = opset;
  return t;
}

// Records the type of `to`, `from`'s with its dims permuted by `perm`.
void PermutedType(Graph& graph, const std::string& from, const std::string& to, const std::vector<int64_t>& perm) {
  TypeInfo t;
  if (!TensorType(graph, from, &t)) return;
  if (t.has_shape && t.dims.size() == perm.size()) {
    std::vector<Dim> d;
    for (int64_t p : perm) d.push_back(t.dims[p]);
    t.dims = std::move(d);
  } else {
    t.has_shape = false;
    t.dims.clear();
  }
  graph.value_types[to] = t;
}

}  // namespace

Status TransformNhwc(Graph& graph, const OptimizerContext&, bool* changed) {
  const GraphIndex idx(graph);
  const size_t count = graph.nodes.size();
  std::vector<Role> role(count);
  std::vector<std::vector<int>> data(count);
  std::vector<char> in_set(count, 0);
  bool any_layout = false;
  for (size_t i = 0; i < count; ++i) {
    role[i] = Classify(graph, graph.nodes[i], &data[i]);
    in_set[i] = role[i] != Role::kNone;
    any_layout = any_layout || role[i] == Role::kLayout;
  }
  if (!any_layout) return Status::OK();
  auto producer_in = [&](const std::string& v) {
    const int p = idx.Producer(v);
    return p >= 0 && in_set[p];
  };
  // Every reader of the node's output is in the set, and nothing else sees it.
  auto readers_in = [&](size_t i) {
    const std::string& o = graph.nodes[i].outputs[0];
    if (idx.IsGraphOutput(o) || idx.IsImplicitInput(o)) return false;
    for (const auto& c : idx.Consumers(o))
      if (!in_set[c.first]) return false;
    return !idx.Consumers(o).empty();
  };
  auto any_reader_in = [&](size_t i) {
    for (const auto& c : idx.Consumers(graph.nodes[i].outputs[0]))
      if (in_set[c.first]) return true;
    return false;
  };
  // Shrink to the fixpoint: removing one node can strand its neighbours.
  for (bool again = true; again;) {
    again = false;
    for (size_t i = 0; i < count; ++i) {
      if (!in_set[i]) continue;
      bool keep;
      if (role[i] == Role::kLayout) {
        keep = producer_in(graph.nodes[i].inputs[0]) || any_reader_in(i);
      } else {
        // A reader outside costs a Transpose back of the output: no worse
        // than those of the inputs when the output is 8-bit.
        keep = readers_in(i) || Is8Bit(TensorElemType(graph, graph.nodes[i].outputs[0]));
        for (int s : data[i]) keep = keep && producer_in(graph.nodes[i].inputs[s]);
      }
      if (!keep) {
        in_set[i] = 0;
        again = true;
      }
    }
  }
  if (std::find(in_set.begin(), in_set.end(), 1) == in_set.end()) return Status::OK();
  // The Transposes take the opset the graph's ONNX nodes were read at.
  int opset = 13;
  for (const Node& n : graph.nodes)
    if (n.domain.empty() && n.since_version > 0) {
      opset = n.since_version;
      break;
    }

  // Rebuild the node list with the converted nodes and their transposes.
  std::unordered_map<std::string, std::string> last;  // [N, C, ...] value -> its channels-last copy
  // New value names: unused in the graph as indexed, and among themselves.
  std::unordered_set<std::string> made;
  auto fresh = [&](const std::string& base) {
    std::string name = UniqueValueName(graph, idx, base);
    for (int k = 2; made.count(name) != 0; ++k) name = UniqueValueName(graph, idx, base + "_" + std::to_string(k));
    made.insert(name);
    return name;
  };
  std::vector<Node> out;
  out.reserve(count + 8);
  for (size_t i = 0; i < count; ++i) {
    if (!in_set[i]) {
      out.push_back(std::move(graph.nodes[i]));
      continue;
    }
    Node n = std::move(graph.nodes[i]);
    const int rank = TensorRank(graph, n.inputs[0]);
    for (int s : data[i]) {
      const std::string v = n.inputs[s];
      auto it = last.find(v);
      if (it == last.end()) {
        const std::string t = fresh(v + "_nhwc");
        out.push_back(MakeTranspose(t + "/Transpose", v, t, ToLast(rank), opset));
        PermutedType(graph, v, t, ToLast(rank));
        it = last.emplace(v, t).first;
      }
      n.inputs[s] = it->second;
    }
    if (n.op_type == "QLinearConv") {
      n.domain = kMsDomain;
      n.since_version = kMsOpset;
      n.attrs["channels_last"] = IntAttr(1);
    } else if (n.op_type == "MaxPool") {
      n.op_type = "NhwcMaxPool";
      n.domain = kMsDomain;
      n.since_version = kMsOpset;
      n.attrs.erase("storage_order");  // orders Indices only, which it has none of
    } else if (n.op_type == "QLinearGlobalAveragePool" || n.op_type == "QLinearBatchNormalization") {
      n.attrs["channels_last"] = IntAttr(1);
    }
    const std::string y = n.outputs[0];
    const std::string t = fresh(y + "_nhwc");
    PermutedType(graph, y, t, ToLast(rank));
    n.outputs[0] = t;
    last.emplace(y, t);
    const std::string name = n.name;
    out.push_back(std::move(n));
    // The [N, C, ...] value under its own name, for readers outside the set
    // (dropped below when there are none).
    out.push_back(MakeTranspose(name + "/TransposeBack", t, y, ToFirst(rank), opset));
  }
  graph.nodes = std::move(out);
  RemoveDeadNodes(graph);
  *changed = true;
  return Status::OK();
}

}  // namespace optimizer
}  // namespace onyx
