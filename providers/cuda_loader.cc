#include "providers/cuda_loader.h"

#include <dlfcn.h>

#include <cstdlib>
#include <mutex>

#include "providers/cuda_provider_abi.h"

namespace onyx {
namespace {

struct Loaded {
  const CudaProviderApi* api = nullptr;
  std::string why;  // empty when usable
};

// The folder this library (libonyxruntime.so, or the executable it is linked
// into) was loaded from, with a trailing '/'.
std::string OwnFolder() {
  Dl_info info{};
  if (dladdr(reinterpret_cast<void*>(&OwnFolder), &info) == 0 || info.dli_fname == nullptr) return "";
  std::string path = info.dli_fname;
  size_t slash = path.rfind('/');
  return slash == std::string::npos ? "" : path.substr(0, slash + 1);
}

Loaded Load() {
  Loaded out;
  const char* env = std::getenv(kCudaProviderPathEnv);
  const std::string path = env && *env ? std::string(env) : OwnFolder() + kCudaProviderLibrary;
  // Never closed: kernels and allocators of the library live as long as the
  // process may hold providers.
  void* handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!handle) {
    const char* err = dlerror();
    out.why = StrCat("cannot load ", path, env && *env ? StrCat(" (from ", kCudaProviderPathEnv, ")") : "", ": ",
                     err ? err : "unknown error");
    return out;
  }
  auto get = reinterpret_cast<CudaProviderGetApiFn>(dlsym(handle, kCudaProviderEntrySymbol));
  if (!get) {
    out.why = StrCat(path, " has no symbol ", kCudaProviderEntrySymbol, ": not an Onyx CUDA provider library");
    return out;
  }
  const CudaProviderApi* api = get(kCudaProviderAbi);
  if (!api) {
    out.why = StrCat(path, " was built from another version of Onyx Runtime (its interface differs from this "
                     "library's); use the provider library built with this one");
    return out;
  }
  int count = 0;
  Status st = api->DeviceCount(&count);
  if (!st.ok()) {
    out.why = StrCat("no usable CUDA device: ", st.message());
    return out;
  }
  if (count <= 0) {
    out.why = "no CUDA device found";
    return out;
  }
  out.api = api;
  return out;
}

const Loaded& Get() {
  static const Loaded* loaded = new Loaded(Load());
  return *loaded;
}

}  // namespace

bool CudaProviderUsable(std::string* why) {
  const Loaded& l = Get();
  if (why) *why = l.why;
  return l.api != nullptr;
}

Status CreateCudaProvider(const CudaProviderOptions& options, std::unique_ptr<ExecutionProvider>* out) {
  const Loaded& l = Get();
  if (!l.api)
    return MakeError(ErrorCode::kInvalidArgument, "execution provider '", kCudaProviderName,
                     "' is not available: ", l.why);
  int count = 0;
  ONYX_RETURN_IF_ERROR(l.api->DeviceCount(&count));
  if (options.device_id >= count)
    return MakeError(ErrorCode::kInvalidArgument, kCudaProviderName, " option 'device_id' is ", options.device_id,
                     " but this machine has ", count, " CUDA device", count == 1 ? "" : "s");
  return l.api->Create(options, out);
}

}  // namespace onyx
