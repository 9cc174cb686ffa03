// Onyx Runtime from C++ (onyxruntime_cxx_api.h): loads a model, prints its
// inputs and outputs, runs it once and prints what it returned; the same
// arguments and output as bindings/c/example.c.
//
//   onyx_example_cxx MODEL [INPUT.bin ...]
#include <cstdint>
#include <cstdio>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "onyxruntime_cxx_api.h"

namespace {

const char* TypeName(OnyxElementType t) {
  switch (t) {
    case ONYX_TYPE_FLOAT: return "float";
    case ONYX_TYPE_DOUBLE: return "double";
    case ONYX_TYPE_INT8: return "int8";
    case ONYX_TYPE_UINT8: return "uint8";
    case ONYX_TYPE_INT16: return "int16";
    case ONYX_TYPE_UINT16: return "uint16";
    case ONYX_TYPE_INT32: return "int32";
    case ONYX_TYPE_UINT32: return "uint32";
    case ONYX_TYPE_INT64: return "int64";
    case ONYX_TYPE_UINT64: return "uint64";
    case ONYX_TYPE_BOOL: return "bool";
    default: return nullptr;
  }
}

template <typename T>
double At(const void* data, size_t i) {
  return static_cast<double>(static_cast<const T*>(data)[i]);
}

double Element(const void* data, OnyxElementType t, size_t i) {
  switch (t) {
    case ONYX_TYPE_FLOAT: return At<float>(data, i);
    case ONYX_TYPE_DOUBLE: return At<double>(data, i);
    case ONYX_TYPE_INT8: return At<int8_t>(data, i);
    case ONYX_TYPE_INT16: return At<int16_t>(data, i);
    case ONYX_TYPE_UINT16: return At<uint16_t>(data, i);
    case ONYX_TYPE_INT32: return At<int32_t>(data, i);
    case ONYX_TYPE_UINT32: return At<uint32_t>(data, i);
    case ONYX_TYPE_INT64: return At<int64_t>(data, i);
    case ONYX_TYPE_UINT64: return At<uint64_t>(data, i);
    default: return At<uint8_t>(data, i);
  }
}

template <typename T>
void Put(void* data, size_t i, T v) {
  static_cast<T*>(data)[i] = v;
}

// The C example's generator: seeded values in [-1, 1) (integers -8..7, bool 0/1).
void FillRandom(void* data, OnyxElementType t, size_t n, uint64_t* state) {
  for (size_t i = 0; i < n; ++i) {
    *state = *state * 6364136223846793005ULL + 1442695040888963407ULL;
    uint32_t r = static_cast<uint32_t>(*state >> 33);
    double v = r / 2147483648.0 * 2.0 - 1.0;
    int64_t k = static_cast<int64_t>(r % 16) - 8;
    switch (t) {
      case ONYX_TYPE_FLOAT: Put(data, i, static_cast<float>(v)); break;
      case ONYX_TYPE_DOUBLE: Put(data, i, v); break;
      case ONYX_TYPE_INT8: Put(data, i, static_cast<int8_t>(k)); break;
      case ONYX_TYPE_INT16: Put(data, i, static_cast<int16_t>(k)); break;
      case ONYX_TYPE_INT32: Put(data, i, static_cast<int32_t>(k)); break;
      case ONYX_TYPE_INT64: Put(data, i, k); break;
      case ONYX_TYPE_BOOL: Put(data, i, static_cast<uint8_t>(r & 1)); break;
      case ONYX_TYPE_UINT16: Put(data, i, static_cast<uint16_t>(r % 16)); break;
      case ONYX_TYPE_UINT32: Put(data, i, static_cast<uint32_t>(r % 16)); break;
      case ONYX_TYPE_UINT64: Put(data, i, static_cast<uint64_t>(r % 16)); break;
      default: Put(data, i, static_cast<uint8_t>(r % 16)); break;
    }
  }
}

std::string Shape(const std::vector<int64_t>& dims, const std::vector<std::string>& symbols = {}) {
  std::string s = "[";
  for (size_t d = 0; d < dims.size(); ++d) {
    if (d) s += ", ";
    s += d < symbols.size() && !symbols[d].empty() ? symbols[d] : std::to_string(dims[d]);
  }
  return s + "]";
}

void Describe(const onyx::TypeInfo& info, const char* kind, size_t i, const std::string& name) {
  std::printf("%s %zu: %s %s", kind, i, name.c_str(), info.GetTypeString().c_str());
  if (info.GetKind() == ONYX_VALUE_TENSOR) {
    onyx::TensorTypeAndShapeInfo t = info.GetTensorTypeAndShapeInfo();
    std::printf(" %s", Shape(t.GetShape(), t.GetSymbolicDimensions()).c_str());
  }
  std::printf("\n");
}

int Run(int argc, char** argv) {
  onyx::Env env(ONYX_LOG_WARNING, "onyx_example_cxx");
  onyx::Session session(env, argv[1]);
  std::printf("model: %s\n", argv[1]);
  onyx::MemoryInfo cpu = onyx::MemoryInfo::CreateCpu();
  std::vector<std::string> in_names = session.GetInputNames(), out_names = session.GetOutputNames();
  std::vector<std::vector<char>> buffers(in_names.size());
  std::vector<onyx::Value> inputs;
  uint64_t seed = 42;
  for (size_t i = 0; i < in_names.size(); ++i) {
    onyx::TypeInfo info = session.GetInputTypeInfo(i);
    Describe(info, "input", i, in_names[i]);
    if (info.GetKind() != ONYX_VALUE_TENSOR || TypeName(info.GetTensorTypeAndShapeInfo().GetElementType()) == nullptr) {
      std::fprintf(stderr, "onyx_example_cxx: input '%s' is not a numeric tensor\n", in_names[i].c_str());
      return 1;
    }
    onyx::TensorTypeAndShapeInfo tensor = info.GetTensorTypeAndShapeInfo();
    OnyxElementType type = tensor.GetElementType();
    std::vector<int64_t> dims = tensor.GetShape();
    size_t count = 1;
    for (int64_t& d : dims) {
      if (d < 0) d = 1;
      count *= static_cast<size_t>(d);
    }
    size_t bytes = count * onyx::ElementSize(type);
    buffers[i].resize(bytes ? bytes : 1);
    if (static_cast<int>(i) + 2 < argc) {
      std::ifstream f(argv[i + 2], std::ios::binary);
      std::vector<char> content((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
      if (!f.good() && !f.eof()) content.clear();
      if (content.size() != bytes) {
        std::fprintf(stderr, "onyx_example_cxx: input '%s' needs %zu bytes and %s does not hold exactly that\n",
                     in_names[i].c_str(), bytes, argv[i + 2]);
        return 1;
      }
      buffers[i] = content;
    } else {
      FillRandom(buffers[i].data(), type, count, &seed);
    }
    inputs.push_back(onyx::Value::CreateTensor(cpu, buffers[i].data(), bytes, dims, type));
  }
  for (size_t i = 0; i < out_names.size(); ++i) Describe(session.GetOutputTypeInfo(i), "output", i, out_names[i]);

  std::vector<onyx::Value> outputs = session.Run(in_names, inputs, out_names);
  for (size_t i = 0; i < outputs.size(); ++i) {
    onyx::Value& out = outputs[i];
    OnyxElementType type = out.GetElementType();
    if (TypeName(type) == nullptr) {
      std::printf("%s: element type %d (not printed)\n", out_names[i].c_str(), static_cast<int>(type));
      continue;
    }
    size_t count = out.GetElementCount();
    const void* data = out.GetTensorRawData();
    double sum = 0;
    for (size_t k = 0; k < count; ++k) sum += Element(data, type, k);
    std::printf("%s: %s %s sum=%.9g values:", out_names[i].c_str(), TypeName(type), Shape(out.GetShape()).c_str(), sum);
    for (size_t k = 0; k < count && k < 16; ++k) std::printf(" %.9g", Element(data, type, k));
    std::printf("%s\n", count > 16 ? " ..." : "");
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: %s MODEL [INPUT.bin ...]\n", argv[0]);
    return 1;
  }
  try {
    return Run(argc, argv);
  } catch (const onyx::Exception& e) {
    std::fprintf(stderr, "onyx_example_cxx: error %d: %s\n", static_cast<int>(e.code()), e.what());
    return 1;
  }
}
