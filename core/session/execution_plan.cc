// ExecutionPlan::Build: node order, kernel lookup and creation, value slots,
// and when each slot is released.
#include "core/session/execution_plan.h"

#include "core/session/execution_plan_placement.h"
#include "core/session/subgraph_runner.h"

#include <algorithm>
#include <numeric>
#include <unordered_set>

namespace onyx {

namespace {

// Estimated bytes of a value from its inferred type (symbolic dims count as 1).
size_t EstimatedBytes(const Graph& graph, const std::string& name) {
  auto it = graph.value_types.find(name);
  if (it == graph.value_types.end() || it->second.kind != TypeInfo::Kind::kTensor || !it->second.has_shape)
    return 0;
  size_t n = 1;
  for (const Dim& d : it->second.dims) n *= d.known() && d.value > 0 ? static_cast<size_t>(d.value) : 1;
  return StorageBytes(it->second.elem, n);
}

// The order nodes run in (see PlanOptions::execution_order). graph.nodes is
// already a topological order; the other orders re-sort with Kahn's algorithm
// and break ties by that order.
std::vector<size_t> OrderNodes(const Graph& graph, int execution_order) {
  const size_t n = graph.nodes.size();
  std::vector<size_t> order(n);
  for (size_t i = 0; i < n; ++i) order[i] = i;
  if (execution_order == 0 || n < 2) return order;

  std::unordered_map<std::string, size_t> producer;
  for (size_t i = 0; i < n; ++i)
    for (const auto& o : graph.nodes[i].outputs)
      if (!o.empty()) producer[o] = i;
  std::vector<std::vector<size_t>> consumers(n);
  std::vector<int> pending(n, 0);
  std::unordered_map<std::string, int> readers;  // remaining readers of each value
  for (size_t i = 0; i < n; ++i) {
    std::unordered_set<size_t> deps;
    std::unordered_set<std::string> read;
    auto add = [&](const std::string& in) {
      if (in.empty() || !read.insert(in).second) return;
      ++readers[in];
      auto p = producer.find(in);
      if (p != producer.end() && deps.insert(p->second).second) consumers[p->second].push_back(i);
    };
    for (const auto& in : graph.nodes[i].inputs) add(in);
    for (const auto& in : graph.nodes[i].implicit_inputs) add(in);
    pending[i] = static_cast<int>(deps.size());
  }
  // Shape computations first: they are cheap and unblock the rest.
  std::vector<bool> shape_like(n, false);
  for (size_t i = 0; i < n; ++i) {
    const Node& node = graph.nodes[i];
    bool from_shapes = !node.inputs.empty();
    for (const auto& in : node.inputs) {
      auto p = producer.find(in);
      from_shapes = from_shapes && !in.empty() && (graph.IsInitializer(in) || (p != producer.end() && shape_like[p->second]));
    }
    shape_like[i] = (node.domain.empty() && (node.op_type == "Shape" || node.op_type == "Size")) || from_shapes;
  }
  // Live bytes a node adds when run now: its outputs, less the inputs it is
  // the last reader of.
  auto delta = [&](size_t i) {
    long long d = 0;
    for (const auto& o : graph.nodes[i].outputs)
      if (!o.empty()) d += static_cast<long long>(EstimatedBytes(graph, o));
    std::unordered_set<std::string> seen;
    for (const auto& in : graph.nodes[i].inputs)
      if (!in.empty() && seen.insert(in).second && readers[in] == 1 && producer.count(in))
        d -= static_cast<long long>(EstimatedBytes(graph, in));
    return d;
  };

  std::vector<size_t> ready;
  for (size_t i = 0; i < n; ++i)
    if (pending[i] == 0) ready.push_back(i);
  order.clear();
  while (!ready.empty()) {
    size_t best = 0;
    for (size_t k = 1; k < ready.size(); ++k) {
      size_t a = ready[k], b = ready[best];
      bool better;
      if (execution_order == 1)
        better = shape_like[a] != shape_like[b] ? shape_like[a] : a < b;
      else {
        long long da = delta(a), db = delta(b);
        better = da != db ? da < db : a < b;
      }
      if (better) best = k;
    }
    size_t i = ready[best];
    ready.erase(ready.begin() + static_cast<long>(best));
    order.push_back(i);
    std::unordered_set<std::string> seen;
    for (const auto& in : graph.nodes[i].inputs)
      if (!in.empty() && seen.insert(in).second) --readers[in];
    for (const auto& in : graph.nodes[i].implicit_inputs)
      if (!in.empty() && seen.insert(in).second) --readers[in];
    for (size_t c : consumers[i])
      if (--pending[c] == 0) ready.push_back(c);
  }
  return order;
}

std::string DescribeDeclared(const Node& node, const Graph& graph) {
  std::string s;
  for (size_t i = 0; i < node.inputs.size(); ++i) {
    if (i) s += ", ";
    const std::string& n = node.inputs[i];
    if (n.empty()) { s += "<omitted>"; continue; }
    s += "'" + n + "'";
    auto init = graph.initializers.find(n);
    if (init != graph.initializers.end()) {
      s += ShapeToString(init->second->dims());
      continue;
    }
    auto it = graph.value_types.find(n);
    if (it != graph.value_types.end() && it->second.has_shape) {
      s += "[";
      for (size_t d = 0; d < it->second.dims.size(); ++d) {
        const Dim& dim = it->second.dims[d];
        s += (d ? "," : "") + (dim.known() ? std::to_string(dim.value) : dim.symbol.empty() ? "?" : dim.symbol);
      }
      s += "]";
    }
  }
  return s;
}

}  // namespace

Status ExecutionPlan::Build(const Graph& graph, const std::vector<ExecutionProvider*>& providers,
                            const PlanOptions& options, std::unique_ptr<ExecutionPlan>* out) {
  auto plan = std::unique_ptr<ExecutionPlan>(new ExecutionPlan());
  auto slot = [&](const std::string& name) {
    auto it = plan->slot_of_.find(name);
    if (it != plan->slot_of_.end()) return it->second;
    int s = static_cast<int>(plan->slot_names_.size());
    plan->slot_names_.push_back(name);
    plan->slot_of_[name] = s;
    return s;
  };
  for (const auto& in : graph.inputs) plan->input_slots_.push_back(slot(in.name));
  for (const auto& kv : graph.initializers) {
    // Filled before each run only where no feed (of an overridable
    // initializer) already took the slot.
    plan->constants_.emplace_back(slot(kv.first), kv.second);
  }

  // Constants whose every reader keeps a copy of its own (packed weights,
  // KernelInfo::ReleaseConstantInput): once the last has, the plan keeps a
  // tensor of the same type and dims without data (those readers read no
  // more than that) and the caller drops its copy (on_constant_released), so
  // the original goes before the next kernel packs.
  std::unordered_map<std::string, int> readers, released_by;
  for (const Node& node : graph.nodes) {
    for (const auto& in : node.inputs)
      if (!in.empty()) ++readers[in];
    for (const auto& in : node.implicit_inputs) readers[in] += 1000000;  // a subgraph reads it: keep
  }
  for (const auto& o : graph.outputs) readers[o.name] += 1000000;
  for (const auto& in : graph.inputs) readers[in.name] += 1000000;  // overridable
  auto release = [&](const std::string& name) {
    if (++released_by[name] != readers[name]) return;
    for (auto& c : plan->constants_) {
      if (plan->slot_names_[c.first] != name) continue;
      c.second = std::make_shared<Tensor>(c.second->type(), c.second->dims(), nullptr, c.second->location());
      if (options.on_constant_released) options.on_constant_released(name, c.second);
    }
  };
  // Subgraphs run on the host: their kernels read outer values by name.
  std::vector<ExecutionProvider*> host_providers;
  Allocator* host_alloc = options.cpu_allocator;
  for (ExecutionProvider* p : providers) {
    if (p->Device() != DeviceType::kCpu) {
      plan->device_providers_.push_back(p);
      continue;
    }
    host_providers.push_back(p);
    if (!host_alloc) host_alloc = p->GetAllocator();
  }
  std::unique_ptr<DevicePlacement> placement;
  if (!plan->device_providers_.empty())
    placement = std::make_unique<DevicePlacement>(plan.get(), graph, providers,
                                                  host_alloc ? host_alloc : GetCpuAllocator(), slot);
  for (size_t node_index : OrderNodes(graph, options.execution_order)) {
    const Node& node = graph.nodes[node_index];
    std::vector<TypeInfo> input_types;
    for (const auto& in : node.inputs) {
      TypeInfo t;
      auto init = graph.initializers.find(in);
      if (init != graph.initializers.end()) {
        t = TypeInfo::Tensor(init->second->type());
      } else {
        auto it = graph.value_types.find(in);
        if (it != graph.value_types.end()) t = it->second;
      }
      input_types.push_back(std::move(t));
    }
    const KernelDef* def = nullptr;
    ExecutionProvider* chosen = nullptr;
    std::string why;
    Step step;
    std::unique_ptr<KernelInfo> info;
    // Providers in priority order. With device providers, a device kernel may
    // decline a node at creation (NOT_IMPLEMENTED, e.g. an attribute value it
    // lacks) and some nodes stay on the host (DevicePlacement::DeviceMayRun):
    // the next provider with a kernel takes them.
    for (size_t next = 0;;) {
      def = nullptr;
      for (; next < providers.size() && !def; ++next) {
        ExecutionProvider* p = providers[next];
        if (placement && p->Device() != DeviceType::kCpu && !placement->DeviceMayRun(node, input_types)) continue;
        def = p->Kernels().Find(node, input_types, &why);
        chosen = p;
      }
      if (!def)
        return MakeError(ErrorCode::kNotImplemented, "Could not find an implementation for ", node.op_type, "(",
                         node.since_version, ") node with name '", node.name, "' (domain '",
                         node.domain.empty() ? "ai.onnx" : node.domain, "', opset ", node.since_version,
                         ", inputs: ", DescribeDeclared(node, graph), "): ", why);
      step = Step();
      step.node = &node;
      step.allocator = chosen->GetAllocator();
      if (options.cpu_allocator && chosen->Name() == kCpuProviderName) step.allocator = options.cpu_allocator;
      step.provider = &chosen->Name();
      info = std::make_unique<KernelInfo>(node, graph, input_types);
      info->constants_may_be_overridden = true;
      info->allow_winograd_f4 = options.winograd_f4;
      // Subgraphs are planned once, here, with the same providers and options;
      // each run of the node then only fills slots.
      for (const auto& kv : node.attrs) {
        std::vector<const Graph*> subs;
        if (kv.second.g) subs.push_back(kv.second.g.get());
        for (const auto& sg : kv.second.graphs) subs.push_back(sg.get());
        if (subs.size() != 1) continue;  // only single-graph attributes are run by kernels
        std::unique_ptr<PlanSubgraphRunner> runner;
        Status sub = PlanSubgraphRunner::Create(*subs[0], placement ? host_providers : providers, options, &runner);
        if (!sub.ok()) return sub.WithContext(StrCat(node.Describe(), ", subgraph '", kv.first, "': "));
        info->SetSubgraph(kv.first, runner.get());
        step.subgraphs.push_back(std::move(runner));
      }
      Status s = def->create(*info, &step.kernel);
      if (!s.ok() && s.code() == ErrorCode::kNotImplemented && chosen->Device() != DeviceType::kCpu) {
        why = s.message();
        continue;
      }
      if (!s.ok())
        return Status(s.code(), StrCat("Failed to create kernel for ", node.op_type, " node with name '", node.name,
                                       "' (inputs: ", DescribeDeclared(node, graph), "): ", s.message()));
      break;
    }
    for (int i : info->ReleasedConstantInputs()) release(node.inputs[i]);
    // The (output, input) pairs a kernel said (views, in-place writes), per
    // output; the plan decides later which are safe.
    auto per_output = [&](const std::vector<std::pair<int, int>>& pairs, std::vector<int>* dst) {
      for (const auto& v : pairs) {
        if (v.first < 0 || v.first >= static_cast<int>(node.outputs.size()) || v.second < 0 ||
            v.second >= static_cast<int>(node.inputs.size()))
          continue;
        dst->resize(node.outputs.size(), -1);
        (*dst)[v.first] = v.second;
      }
    };
    per_output(info->OutputViews(), &step.views);
    per_output(info->OutputsInPlace(), &step.in_place);
    if (!placement) {
      for (const auto& in : node.inputs) step.inputs.push_back(in.empty() ? -1 : slot(in));
      for (const auto& o : node.outputs) step.outputs.push_back(o.empty() ? -1 : slot(o));
    } else {
      for (size_t i = 0; i < node.inputs.size(); ++i) {
        int s = -1;
        if (!node.inputs[i].empty()) {
          Status placed = placement->Input(node.inputs[i], chosen, *def, static_cast<int>(i), &s);
          if (!placed.ok()) return placed.WithContext(node.Describe() + ": ");
        }
        step.inputs.push_back(s);
      }
      for (size_t i = 0; i < node.outputs.size(); ++i) {
        Allocator* alloc = nullptr;
        step.outputs.push_back(node.outputs[i].empty()
                                   ? -1
                                   : placement->Output(node.outputs[i], chosen, *def, static_cast<int>(i), &alloc));
        if (alloc) {
          step.output_allocators.resize(node.outputs.size(), step.allocator);
          step.output_allocators[i] = alloc;
        }
      }
      for (const auto& in : node.implicit_inputs) placement->Implicit(in);
    }
    // Values the node's subgraphs read from this graph (or from enclosing
    // ones) need slots here to be found through the node's context.
    for (const auto& in : node.implicit_inputs) slot(in);
    plan->steps_.push_back(std::move(step));
  }
  if (placement) placement->Finish();

  // Free each intermediate right after its last reader; graph outputs, inputs
  // and constants are never freed by the plan.
  size_t n = plan->slot_names_.size();
  plan->is_node_output_.assign(n, false);
  for (const Step& st : plan->steps_)
    for (int s : st.outputs)
      if (s >= 0) plan->is_node_output_[s] = true;
  std::vector<int> last_use(n, -1);
  for (size_t i = 0; i < plan->steps_.size(); ++i) {
    const Step& st = plan->steps_[i];
    for (int s : st.inputs)
      if (s >= 0) last_use[s] = static_cast<int>(i);
    for (const auto& implicit : st.node->implicit_inputs) {
      int s = plan->SlotOf(implicit);
      if (s >= 0) last_use[s] = static_cast<int>(i);
    }
    for (int s : st.outputs)
      if (s >= 0 && last_use[s] < static_cast<int>(i)) last_use[s] = static_cast<int>(i);
  }
  plan->PlanViews(graph, &last_use);
  std::unordered_set<int> keep;
  for (const auto& o : graph.outputs) keep.insert(plan->SlotOf(o.name));
  for (const auto& in : graph.inputs) keep.insert(plan->SlotOf(in.name));
  for (const auto& c : plan->constants_) keep.insert(c.first);
  if (placement) keep.insert(placement->device_kept().begin(), placement->device_kept().end());
  // A parallel plan's last reader by step order need not be the last in
  // time: its steps keep their inputs.
  const bool parallel = options.parallel && plan->device_providers_.empty();
  if (parallel)
    for (Step& st : plan->steps_) st.in_place.clear();
  else
    plan->PlanInPlace(keep, &last_use);
  if (options.release_intermediates) {
    for (size_t s = 0; s < n; ++s)
      if (last_use[s] >= 0 && !keep.count(static_cast<int>(s)))
        plan->steps_[last_use[s]].release.push_back(static_cast<int>(s));
  }
  // A pattern's one block would come from one allocator; with device
  // providers the device arena already reuses its blocks. Device kernels run
  // on the thread whose device is current and in their stream's order, so a
  // plan with device providers stays sequential.
  if (parallel) plan->BuildDependencies(keep, options.release_intermediates);
  if (options.mem_pattern && !options.parallel && plan->device_providers_.empty()) plan->PrepareMemPattern(graph, keep);
  *out = std::move(plan);
  return Status::OK();
}

void ExecutionPlan::PlanViews(const Graph& graph, std::vector<int>* last_use) {
  // A view shares its input's bytes for as long as either is read. That is
  // safe because no kernel writes into its inputs (KernelContext hands them
  // out const) and a buffer goes back to its allocator only when the last
  // tensor sharing it is gone, so what stays to decide is who may see the
  // bytes after the run: a graph output handed to the caller may view only
  // memory this run allocated (never a caller's feed, which the caller may
  // change or free, nor an initializer, which the caller could change
  // through the output), and no two graph outputs share bytes.
  const size_t n = slot_names_.size();
  view_root_.resize(n);
  std::iota(view_root_.begin(), view_root_.end(), 0);
  std::vector<bool> graph_output(n, false), produced(n, false), exposed(n, false);
  for (const auto& o : graph.outputs) {
    const int s = SlotOf(o.name);
    if (s >= 0) graph_output[s] = exposed[s] = true;
  }
  for (Step& st : steps_) {
    for (size_t k = 0; k < st.views.size(); ++k) {
      const int j = st.views[k];
      if (j < 0) continue;
      const int in = j < static_cast<int>(st.inputs.size()) ? st.inputs[j] : -1;
      const int out = st.outputs[k];
      bool ok = in >= 0 && out >= 0 && in != out && view_root_[out] == out;
      const int root = ok ? view_root_[in] : -1;
      if (ok && graph_output[out]) ok = produced[root] && !exposed[root];
      if (!ok) {
        st.views[k] = -1;
        continue;
      }
      view_root_[out] = root;
      if (graph_output[out]) exposed[root] = true;
    }
    if (std::all_of(st.views.begin(), st.views.end(), [](int j) { return j < 0; })) st.views.clear();
    for (int s : st.outputs)
      if (s >= 0) produced[s] = true;
  }
  // The bytes are freed (or their pattern range reused) after the last read
  // of the owner or any of its views.
  for (size_t s = 0; s < n; ++s) {
    const int root = view_root_[s];
    if (root != static_cast<int>(s)) (*last_use)[root] = std::max((*last_use)[root], (*last_use)[s]);
  }
}

void ExecutionPlan::PlanInPlace(const std::unordered_set<int>& keep, std::vector<int>* last_use) {
  const size_t n = slot_names_.size();
  // Byte owners that a view (Reshape, ...) shares: a view may have gone where
  // the plan does not follow it (into a sequence), so such bytes are never
  // written over. Outputs written in place share their input's owner too,
  // and may be written over in turn (a chain of residual sums).
  std::vector<bool> viewed(n, false);
  for (size_t s = 0; s < n; ++s)
    if (view_root_[s] != static_cast<int>(s)) viewed[view_root_[s]] = true;
  for (size_t i = 0; i < steps_.size(); ++i) {
    Step& st = steps_[i];
    for (size_t k = 0; k < st.in_place.size(); ++k) {
      const int j = st.in_place[k];
      if (j < 0) continue;
      const int in = j < static_cast<int>(st.inputs.size()) ? st.inputs[j] : -1;
      const int out = st.outputs[k];
      const int root = in >= 0 ? view_root_[in] : -1;
      // Nothing that shares the bytes is read after this step, handed to the
      // caller, fed or constant; this step reads them once, as `in`.
      bool ok = in >= 0 && out >= 0 && in != out && view_root_[out] == out && !viewed[root] &&
                is_node_output_[root] && (*last_use)[root] == static_cast<int>(i);
      for (size_t s = 0; ok && s < n; ++s)
        if (view_root_[s] == root) ok = !keep.count(static_cast<int>(s));
      for (int r : st.inputs) ok = ok && (r == in || r < 0 || view_root_[r] != root);
      ok = ok && std::count(st.inputs.begin(), st.inputs.end(), in) == 1;
      for (const auto& implicit : st.node->implicit_inputs) {
        const int r = SlotOf(implicit);
        ok = ok && (r < 0 || view_root_[r] != root);
      }
      ok = ok && !keep.count(out);
      if (!ok) {
        st.in_place[k] = -1;
        continue;
      }
      // The output (and any view of it) now shares the owner's bytes, which
      // live until the last of them is read.
      for (size_t s = 0; s < n; ++s)
        if (view_root_[s] == out) view_root_[s] = root;
      if (viewed[out]) viewed[root] = true;
      (*last_use)[root] = std::max((*last_use)[root], (*last_use)[out]);
    }
    if (std::all_of(st.in_place.begin(), st.in_place.end(), [](int j) { return j < 0; })) st.in_place.clear();
  }
}

std::vector<std::pair<const std::string*, const Node*>> ExecutionPlan::NodeAssignments() const {
  std::vector<std::pair<const std::string*, const Node*>> out;
  for (const Step& st : steps_) out.emplace_back(st.provider, st.node);
  return out;
}

std::vector<std::string> ExecutionPlan::NodeOrder() const {
  std::vector<std::string> names;
  for (const Step& st : steps_) names.push_back(st.node->name);
  return names;
}

}  // namespace onyx
