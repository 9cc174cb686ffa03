// Where each value of a plan lives when some of its nodes run on a device
// provider, and the copy steps between host and device memory. Internal to
// ExecutionPlan::Build; a plan without device providers never makes one.
//
// Slots: value "x" always names its host version (what feeds, graph outputs,
// CPU kernels and subgraphs read by name); a device's version is the slot
// "x@<provider name>". A device kernel's output goes to its device slot; a
// copy step fills "x" when the host reads it (a CPU node, a graph output, a
// subgraph). Host values a device kernel reads are copied into its device
// slot once: constants at plan time, the rest by a copy step before their
// first device reader. Feeds may arrive in either memory, so their copy steps
// pass a value through when it is already where it is needed.
#pragma once

#include <map>
#include <set>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <utility>

#include "core/session/execution_plan.h"

namespace onyx {

class DevicePlacement {
 public:
  // `slot` numbers a name (adding it when new). `host_alloc` allocates host
  // copies.
  DevicePlacement(ExecutionPlan* plan, const Graph& graph, const std::vector<ExecutionProvider*>& providers,
                  Allocator* host_alloc, std::function<int(const std::string&)> slot);

  // Whether a device provider may take `node`: not when an input is a
  // string or not a tensor (device memory holds neither), nor for integer
  // arithmetic on host values (shape computations: a device would add a copy
  // each way and a synchronization for a few integers).
  bool DeviceMayRun(const Node& node, const std::vector<TypeInfo>& input_types) const;
  // The slot input `i` of a node run by `p` with `def` reads, after adding
  // what copies it needs to the plan.
  Status Input(const std::string& name, ExecutionProvider* p, const KernelDef& def, int i, int* out);
  // The slot output `i` goes to; sets *alloc to the host allocator when a
  // device kernel writes it in host memory (else leaves it).
  int Output(const std::string& name, ExecutionProvider* p, const KernelDef& def, int i, Allocator** alloc);
  // A value a node's subgraph reads by name from this graph: on the host.
  void Implicit(const std::string& name) { ToHost(name); }
  // Copies of graph outputs held on a device into their host slots.
  void Finish();
  // Device slots of graph outputs that a host node also reads (their copy
  // step is shared): never released by the plan, so a run can hand the
  // device version out (ExecutionPlan::DeviceTwin). Valid after Finish.
  const std::vector<int>& device_kept() const { return device_kept_; }

 private:
  bool IsFeed(const std::string& name) const { return feeds_.count(name) != 0; }
  bool IsConstant(const std::string& name) const { return graph_.IsInitializer(name) && !IsFeed(name); }
  // Adds a step copying slot `from` into `to` (`to_device` null: host), run
  // by device provider `copier`; with `pass_through` a value already in the
  // target memory is passed on uncopied.
  void AddCopy(int from, int to, ExecutionProvider* copier, ExecutionProvider* to_device, bool pass_through);
  // Makes "name" hold the host version (copying from its device slot).
  void ToHost(const std::string& name);

  ExecutionPlan* plan_;
  const Graph& graph_;
  Allocator* host_alloc_;
  ExecutionProvider* first_device_ = nullptr;
  std::function<int(const std::string&)> slot_;
  std::unordered_set<std::string> feeds_;
  // Values written by a device kernel, and the provider that wrote them.
  std::unordered_map<std::string, ExecutionProvider*> produced_on_;
  // Values whose host slot holds their host version already.
  std::unordered_set<std::string> on_host_;
  // Copy slots made so far: (name, device or null for host) -> slot.
  std::map<std::pair<std::string, ExecutionProvider*>, int> copies_;
  std::vector<int> device_kept_;
};

}  // namespace onyx
