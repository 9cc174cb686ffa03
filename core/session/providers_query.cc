#include "core/session/providers_query.h"

#include <algorithm>
#include <memory>
#include <tuple>

#include "core/graph/gradient_expansion.h"
#include "providers/cpu/common/fast_math.h"
#include "providers/cpu/math/blas.h"
#include "providers/provider.h"

namespace onyx {

const std::vector<std::string>& AvailableProviderNames() { return AvailableProviders(); }

const std::vector<std::string>& AllProviderNames() { return AllProviders(); }

Status CheckProviderName(const std::string& name) { return CheckProviderAvailable(name); }

std::string CpuPathDescription() { return CpuCodePath(); }

Status CheckCpuIsaRequest() {
  const std::string why = fastmath::IsaRequestError();
  return why.empty() ? Status::OK() : MakeError(ErrorCode::kInvalidArgument, why);
}

Status SupportedOperators(const std::string& name, std::vector<SupportedOperator>* out) {
  std::unique_ptr<ExecutionProvider> provider;
  ONYX_RETURN_IF_ERROR(CreateProvider(name, &provider));
  out->clear();
  for (const KernelDef* def : provider->Kernels().Defs())
    out->push_back({def->domain, def->op_type, def->since_version, def->end_version});
  // Every session rewrites these into ordinary operators before partitioning,
  // so whatever provider runs the rest runs them.
  for (const RewrittenOperator& op : GraphRewrittenOperators())
    out->push_back({op.domain, op.op_type, op.since_version, op.end_version});
  std::sort(out->begin(), out->end(), [](const SupportedOperator& a, const SupportedOperator& b) {
    return std::tie(a.domain, a.op_type, a.since_version) < std::tie(b.domain, b.op_type, b.since_version);
  });
  return Status::OK();
}

}  // namespace onyx
