#include "core/session/providers_query.h"

#include <algorithm>
#include <cstring>
#include <map>
#include <mutex>
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

namespace {

// One CUDA provider per device for values made outside sessions.
Status CudaProviderForDevice(int device_id, ExecutionProvider** out) {
  static std::mutex* mu = new std::mutex();
  static auto* providers = new std::map<int, ExecutionProvider*>();
  std::lock_guard<std::mutex> lock(*mu);
  auto it = providers->find(device_id);
  if (it == providers->end()) {
    std::unique_ptr<ExecutionProvider> p;
    ONYX_RETURN_IF_ERROR(CreateProvider(kCudaProviderName, {{"device_id", std::to_string(device_id)}}, &p));
    it = providers->emplace(device_id, p.release()).first;  // never destroyed: its values may outlive everything
  }
  *out = it->second;
  return Status::OK();
}

}  // namespace

Status DeviceAllocator(DeviceType device, int device_id, Allocator** out) {
  if (device == DeviceType::kCpu) {
    *out = GetCpuAllocator();
    return Status::OK();
  }
  ExecutionProvider* p = nullptr;
  ONYX_RETURN_IF_ERROR(CudaProviderForDevice(device_id, &p));
  *out = p->GetAllocator();
  return Status::OK();
}

Status CopyTensorData(const Tensor& src, Tensor* dst) {
  ONYX_CHECK_ARG(src.type() == dst->type() && src.bytes() == dst->bytes(), "copy between tensors of different types "
                 "or sizes (", ElemTypeName(src.type()), ShapeToString(src.dims()), " into ", ElemTypeName(dst->type()),
                 ShapeToString(dst->dims()), ")");
  ONYX_CHECK_ARG(src.type() != ElemType::kString, "string tensors cannot be copied this way");
  const Tensor* device_side = src.location().device != DeviceType::kCpu ? &src : dst;
  if (device_side->location().device == DeviceType::kCpu) {
    if (src.bytes() > 0) std::memcpy(dst->raw(), src.raw(), src.bytes());
    return Status::OK();
  }
  ExecutionProvider* p = nullptr;
  ONYX_RETURN_IF_ERROR(CudaProviderForDevice(device_side->location().device_id, &p));
  ONYX_RETURN_IF_ERROR(p->CopyTensor(src, dst));
  return p->Synchronize();
}

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
