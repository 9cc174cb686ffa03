#include "providers/cuda/cuda_libs.h"

#include <dlfcn.h>
#include <glob.h>

#include <cstdlib>
#include <vector>

namespace onyx {
namespace cuda {
namespace {

std::vector<std::string> SearchFolders() {
  std::vector<std::string> dirs;
  if (const char* env = std::getenv("ONYX_CUDA_LIB_DIRS")) {
    std::string list = env;
    size_t begin = 0;
    while (begin <= list.size()) {
      size_t end = list.find(':', begin);
      if (end == std::string::npos) end = list.size();
      if (end > begin) dirs.push_back(list.substr(begin, end - begin));
      begin = end + 1;
    }
  }
  dirs.push_back("");  // the loader's own search
  // site-packages/onyxruntime/<this library> -> site-packages/nvidia/*/lib
  Dl_info info{};
  if (dladdr(reinterpret_cast<void*>(&SearchFolders), &info) != 0 && info.dli_fname) {
    std::string here = info.dli_fname;
    here = here.substr(0, here.rfind('/') + 1);
    glob_t g{};
    if (glob((here + "../nvidia/*/lib").c_str(), 0, nullptr, &g) == 0)
      for (size_t i = 0; i < g.gl_pathc; ++i) dirs.push_back(g.gl_pathv[i]);
    globfree(&g);
  }
  dirs.push_back("/usr/local/cuda/lib64");
  return dirs;
}

// Opens the first of `sonames` found in the search folders; RTLD_GLOBAL so a
// library opened first (cuBLASLt) satisfies the next one's dependency.
void* OpenFirst(const std::vector<const char*>& sonames, std::string* path, std::string* tried) {
  for (const std::string& dir : SearchFolders()) {
    for (const char* so : sonames) {
      std::string p = dir.empty() ? so : dir + "/" + so;
      void* h = dlopen(p.c_str(), RTLD_NOW | RTLD_GLOBAL);
      if (h) {
        *path = p;
        return h;
      }
      const char* err = dlerror();
      *tried += StrCat("\n  ", p, ": ", err ? err : "unknown error");
    }
  }
  return nullptr;
}

Status Load(Cublas* c) {
  std::string lt_path, path, tried;
  // Its dependency first, from the same kind of folder (pip packages have no
  // RPATH to each other).
  OpenFirst({"libcublasLt.so.13", "libcublasLt.so.12"}, &lt_path, &tried);
  void* h = OpenFirst({"libcublas.so.13", "libcublas.so.12"}, &path, &tried);
  if (!h)
    return MakeError(ErrorCode::kEpFail, "cannot load cuBLAS (libcublas.so.13 or .12); set ONYX_CUDA_LIB_DIRS to "
                     "its folder. Tried:", tried);
  c->path = path;
#define ONYX_CUBLAS_RESOLVE(name)                                                                       \
  c->name = reinterpret_cast<decltype(c->name)>(dlsym(h, #name));                                        \
  if (!c->name)                                                                                          \
    return MakeError(ErrorCode::kEpFail, "cuBLAS at ", path, " has no function " #name " (too old?)");
  ONYX_CUBLAS_FUNCTIONS(ONYX_CUBLAS_RESOLVE)
#undef ONYX_CUBLAS_RESOLVE
  return Status::OK();
}

Status LoadCudnn(Cudnn* c) {
  std::string path, tried;
  void* h = OpenFirst({"libcudnn.so.9"}, &path, &tried);
  if (!h)
    return MakeError(ErrorCode::kEpFail, "cannot load cuDNN (libcudnn.so.9); set ONYX_CUDA_LIB_DIRS to its folder. "
                     "Tried:", tried);
  c->path = path;
#define ONYX_CUDNN_RESOLVE(name)                                                                        \
  c->name = reinterpret_cast<decltype(c->name)>(dlsym(h, #name));                                        \
  if (!c->name)                                                                                          \
    return MakeError(ErrorCode::kEpFail, "cuDNN at ", path, " has no function " #name " (not cuDNN 9?)");
  ONYX_CUDNN_FUNCTIONS(ONYX_CUDNN_RESOLVE)
#undef ONYX_CUDNN_RESOLVE
  return Status::OK();
}

}  // namespace

Status GetCudnn(const Cudnn** out) {
  static Cudnn* lib = new Cudnn();
  static const Status* loaded = new Status(LoadCudnn(lib));
  if (!loaded->ok()) return *loaded;
  *out = lib;
  return Status::OK();
}

Status CudnnStatus(cudnnStatus_t s, const char* what) {
  if (s == CUDNN_STATUS_SUCCESS) return Status::OK();
  const Cudnn* c = nullptr;
  const char* text = GetCudnn(&c).ok() ? c->cudnnGetErrorString(s) : "";
  return MakeError(ErrorCode::kEpFail, "cuDNN error in ", what, ": ", static_cast<int>(s), " ", text);
}

Status GetCublas(const Cublas** out) {
  static Cublas* lib = new Cublas();
  static const Status* loaded = new Status(Load(lib));
  if (!loaded->ok()) return *loaded;
  *out = lib;
  return Status::OK();
}

Status CublasStatus(cublasStatus_t s, const char* what) {
  if (s == CUBLAS_STATUS_SUCCESS) return Status::OK();
  const Cublas* c = nullptr;
  const char* text = GetCublas(&c).ok() ? c->cublasGetStatusString(s) : "";
  return MakeError(ErrorCode::kEpFail, "cuBLAS error in ", what, ": ", static_cast<int>(s), " ", text);
}

}  // namespace cuda
}  // namespace onyx
