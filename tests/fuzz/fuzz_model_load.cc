// Model bytes -> session (parse, graph checks, shape inference, optimization,
// planning, kernel creation) -> one run on small inputs made from the same
// bytes. Seeds: tests/fuzz/make_seeds.py (the project's generated models and
// onnx's backend test models).
#include <cstddef>
#include <cstdint>
#include <exception>

#include "tests/fuzz/fuzz_engine_util.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace onyx;
  std::unique_ptr<Session> s;
  try {
    if (!Session::CreateFromBytes(fuzz::BoundedOptions(), data, size, &s).ok()) return 0;
  } catch (const std::exception&) {
    return 0;  // the C API's firewall turns these into a status
  }
  fuzz::RunOnce(*s, data, size);
  return 0;
}
