#include "providers/kernel.h"

namespace onyx {

const Tensor* KernelInfo::ConstantInput(int i) const {
  if (!HasInput(i)) return nullptr;
  auto it = graph_.initializers.find(node_.inputs[i]);
  if (it == graph_.initializers.end()) return nullptr;
  if (constants_may_be_overridden) {
    for (const auto& in : graph_.inputs)
      if (in.name == node_.inputs[i]) return nullptr;
  }
  return it->second.get();
}

const TypeInfo& KernelInfo::InputType(int i) const {
  static const TypeInfo kUnknown;
  return i >= 0 && i < static_cast<int>(input_types_.size()) ? input_types_[i] : kUnknown;
}

std::vector<KernelDef>& StaticCpuKernelDefs() {
  // Constructed on first use: registrars in other files run before main in
  // an unspecified order.
  static std::vector<KernelDef>* defs = new std::vector<KernelDef>();
  return *defs;
}

void KernelRegistry::Register(KernelDef def) {
  defs_[{def.domain, def.op_type}].push_back(std::move(def));
}

size_t KernelRegistry::size() const {
  size_t n = 0;
  for (const auto& kv : defs_) n += kv.second.size();
  return n;
}

std::vector<const KernelDef*> KernelRegistry::Defs() const {
  std::vector<const KernelDef*> out;
  for (const auto& kv : defs_)
    for (const auto& d : kv.second) out.push_back(&d);
  return out;
}

const KernelDef* KernelRegistry::Find(const Node& node, const std::vector<TypeInfo>& input_types,
                                      std::string* why) const {
  auto it = defs_.find({node.domain, node.op_type});
  if (it == defs_.end()) {
    *why = "no kernel is registered for this operator";
    return nullptr;
  }
  bool version_matched = false;
  for (const auto& def : it->second) {
    if (node.since_version < def.since_version || node.since_version > def.end_version) continue;
    version_matched = true;
    if (def.types.empty()) return &def;
    ElemType t = ElemType::kUndefined;
    if (def.type_input < static_cast<int>(input_types.size())) {
      const TypeInfo& in = input_types[def.type_input];
      // A kernel constrained to element types takes tensors only.
      if (in.kind == TypeInfo::Kind::kSequence || in.kind == TypeInfo::Kind::kMap ||
          in.kind == TypeInfo::Kind::kOptional) {
        *why = StrCat("no kernel accepts ", in.ToString(), " for input ", def.type_input);
        continue;
      }
      if (in.kind == TypeInfo::Kind::kTensor) t = in.elem;
    }
    if (t == ElemType::kUndefined) return &def;  // decided at run time by the kernel
    for (ElemType ok : def.types)
      if (ok == t) return &def;
    *why = StrCat("no kernel accepts element type ", ElemTypeName(t), " for input ", def.type_input);
  }
  if (!version_matched) *why = StrCat("no kernel supports opset ", node.since_version, " of this operator");
  return nullptr;
}

}  // namespace onyx
