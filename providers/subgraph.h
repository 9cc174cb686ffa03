// What a control-flow kernel (If, Loop, Scan) sees of its subgraphs: a prepared
// plan it can run many times. The session builds one per graph attribute when
// it creates the kernel (providers never build plans themselves) and keeps it
// for the kernel's life; running it is thread-safe, like OpKernel::Compute.
#pragma once

#include <vector>

#include "core/framework/status.h"
#include "core/framework/value.h"
#include "core/graph/graph.h"

namespace onyx {

class KernelContext;

class SubgraphRunner {
 public:
  virtual ~SubgraphRunner() = default;
  virtual const Graph& graph() const = 0;
  // Runs the subgraph once. `feeds` are bound to the subgraph's inputs in
  // order (fewer feeds than inputs is INVALID_ARGUMENT); values it reads from
  // enclosing graphs come from `ctx`, the running node's context. `outputs`
  // receives one value per subgraph output.
  virtual Status Run(const KernelContext& ctx, std::vector<Value> feeds, std::vector<Value>* outputs) const = 0;
};

}  // namespace onyx
