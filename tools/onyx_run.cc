// onyx_run: load a model, feed it random or .npy inputs, print the outputs and
// the latency. Uses only the public C++ header.
//
//   onyx_run model.onnx [--dim name=value ...] [--input name=file.npy ...]
//            [--repeat N] [--warmup N] [--threads N] [--save-outputs DIR] [--seed S]
#include <algorithm>
#include <chrono>
#include <cctype>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <random>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "onyxruntime_cxx_api.h"

namespace {

/// Errors that end the program with a message and exit code 1.
struct UsageError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

const char kUsage[] =
    "usage: onyx_run model.onnx [--dim name=value ...] [--input name=file.npy ...]\n"
    "                [--repeat N] [--warmup N] [--threads N] [--save-outputs DIR] [--seed S]\n"
    "  --dim name=value     value of a symbolic dimension (default 1)\n"
    "  --input name=file    feed input `name` from a .npy file (else random data)\n"
    "  --repeat N           timed runs (default 10)\n"
    "  --warmup N           untimed runs first (default 1)\n"
    "  --threads N          intra-op threads (default 0: one per core)\n"
    "  --save-outputs DIR   write each output of the last run as DIR/<name>.npy\n"
    "  --seed S             seed of the random inputs (default 0)\n";

struct Options {
  std::string model;
  std::map<std::string, int64_t> dims;
  std::map<std::string, std::string> inputs;
  int repeat = 10;
  int warmup = 1;
  int threads = 0;
  std::string save_dir;
  uint64_t seed = 0;
};

int64_t ParseInt(const std::string& text, const std::string& what, int64_t min_value) {
  size_t used = 0;
  long long v = 0;
  try {
    v = std::stoll(text, &used, 10);
  } catch (const std::exception&) {
    used = 0;
  }
  if (used == 0 || used != text.size()) throw UsageError(what + ": '" + text + "' is not an integer");
  if (v < min_value) throw UsageError(what + ": " + text + " must be >= " + std::to_string(min_value));
  return v;
}

std::pair<std::string, std::string> SplitAssign(const std::string& text, const std::string& flag) {
  size_t eq = text.find('=');
  if (eq == std::string::npos || eq == 0 || eq + 1 == text.size())
    throw UsageError(flag + " expects name=value, got '" + text + "'");
  return {text.substr(0, eq), text.substr(eq + 1)};
}

Options ParseArgs(int argc, char** argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    auto value = [&](const char* flag) -> std::string {
      if (i + 1 >= argc) throw UsageError(std::string(flag) + " needs a value");
      return argv[++i];
    };
    if (a == "-h" || a == "--help") {
      std::cout << kUsage;
      std::exit(0);
    } else if (a == "--dim") {
      auto kv = SplitAssign(value("--dim"), "--dim");
      o.dims[kv.first] = ParseInt(kv.second, "--dim " + kv.first, 0);
    } else if (a == "--input") {
      auto kv = SplitAssign(value("--input"), "--input");
      o.inputs[kv.first] = kv.second;
    } else if (a == "--repeat") {
      o.repeat = static_cast<int>(ParseInt(value("--repeat"), "--repeat", 1));
    } else if (a == "--warmup") {
      o.warmup = static_cast<int>(ParseInt(value("--warmup"), "--warmup", 0));
    } else if (a == "--threads") {
      o.threads = static_cast<int>(ParseInt(value("--threads"), "--threads", 0));
    } else if (a == "--save-outputs") {
      o.save_dir = value("--save-outputs");
    } else if (a == "--seed") {
      o.seed = static_cast<uint64_t>(ParseInt(value("--seed"), "--seed", 0));
    } else if (!a.empty() && a[0] == '-') {
      throw UsageError("unknown option " + a);
    } else if (o.model.empty()) {
      o.model = a;
    } else {
      throw UsageError("unexpected argument '" + a + "' (one model only)");
    }
  }
  if (o.model.empty()) throw UsageError("no model given");
  return o;
}

// ---- element types ---------------------------------------------------------

struct TypeDesc {
  OnyxElementType type;
  const char* npy;   // numpy descr on a little-endian machine
  const char* name;  // onnxruntime-style element name
  size_t size;
};

const TypeDesc kTypes[] = {
    {ONYX_TYPE_FLOAT, "<f4", "float", 4},     {ONYX_TYPE_DOUBLE, "<f8", "double", 8},
    {ONYX_TYPE_FLOAT16, "<f2", "float16", 2}, {ONYX_TYPE_INT8, "|i1", "int8", 1},
    {ONYX_TYPE_UINT8, "|u1", "uint8", 1},     {ONYX_TYPE_INT16, "<i2", "int16", 2},
    {ONYX_TYPE_UINT16, "<u2", "uint16", 2},   {ONYX_TYPE_INT32, "<i4", "int32", 4},
    {ONYX_TYPE_UINT32, "<u4", "uint32", 4},   {ONYX_TYPE_INT64, "<i8", "int64", 8},
    {ONYX_TYPE_UINT64, "<u8", "uint64", 8},   {ONYX_TYPE_BOOL, "|b1", "bool", 1},
};

const TypeDesc* FindType(OnyxElementType t) {
  for (const auto& d : kTypes)
    if (d.type == t) return &d;
  return nullptr;
}

const TypeDesc* FindNpy(const std::string& descr) {
  std::string key = descr;
  // numpy writes single-byte types with '|', but '<' or '=' mean the same there.
  if (key.size() == 3 && key[2] == '1' && (key[0] == '<' || key[0] == '=')) key[0] = '|';
  if (key.size() == 3 && key[0] == '=') key[0] = '<';
  for (const auto& d : kTypes)
    if (key == d.npy) return &d;
  return nullptr;
}

float HalfToFloat(uint16_t h) {
  uint32_t sign = static_cast<uint32_t>(h & 0x8000u) << 16;
  uint32_t exp = (h >> 10) & 0x1fu;
  uint32_t mant = h & 0x3ffu;
  float f;
  if (exp == 0) {
    f = std::ldexp(static_cast<float>(mant), -24);
  } else if (exp == 31) {
    f = mant ? NAN : INFINITY;
  } else {
    f = std::ldexp(static_cast<float>(mant | 0x400u), static_cast<int>(exp) - 25);
  }
  return sign ? -f : f;
}

uint16_t FloatToHalf(float f) {
  // Round-to-nearest through the exponent range we generate ([-1, 1)).
  uint16_t sign = std::signbit(f) ? 0x8000u : 0;
  float a = std::fabs(f);
  if (a == 0.0f) return sign;
  int e = 0;
  float m = std::frexp(a, &e);  // a = m * 2^e, m in [0.5, 1)
  int exp = e + 14;             // biased exponent of 1.m form
  if (exp <= 0) return static_cast<uint16_t>(sign | static_cast<uint16_t>(std::lround(std::ldexp(a, 24))));
  if (exp >= 31) return static_cast<uint16_t>(sign | 0x7c00u);
  uint32_t mant = static_cast<uint32_t>(std::lround((m * 2.0f - 1.0f) * 1024.0f));
  if (mant == 1024) {
    mant = 0;
    ++exp;
  }
  return static_cast<uint16_t>(sign | (exp << 10) | mant);
}

// Element i of a raw buffer as double (for summaries and random fill).
double ElementAsDouble(const uint8_t* p, OnyxElementType t, size_t i) {
  switch (t) {
    case ONYX_TYPE_FLOAT: { float v; std::memcpy(&v, p + 4 * i, 4); return v; }
    case ONYX_TYPE_DOUBLE: { double v; std::memcpy(&v, p + 8 * i, 8); return v; }
    case ONYX_TYPE_FLOAT16: { uint16_t v; std::memcpy(&v, p + 2 * i, 2); return HalfToFloat(v); }
    case ONYX_TYPE_INT8: return static_cast<int8_t>(p[i]);
    case ONYX_TYPE_UINT8: return p[i];
    case ONYX_TYPE_BOOL: return p[i] != 0;
    case ONYX_TYPE_INT16: { int16_t v; std::memcpy(&v, p + 2 * i, 2); return v; }
    case ONYX_TYPE_UINT16: { uint16_t v; std::memcpy(&v, p + 2 * i, 2); return v; }
    case ONYX_TYPE_INT32: { int32_t v; std::memcpy(&v, p + 4 * i, 4); return v; }
    case ONYX_TYPE_UINT32: { uint32_t v; std::memcpy(&v, p + 4 * i, 4); return v; }
    case ONYX_TYPE_INT64: { int64_t v; std::memcpy(&v, p + 8 * i, 8); return static_cast<double>(v); }
    case ONYX_TYPE_UINT64: { uint64_t v; std::memcpy(&v, p + 8 * i, 8); return static_cast<double>(v); }
    default: return 0.0;
  }
}

// ---- .npy ------------------------------------------------------------------

struct Array {
  const TypeDesc* type = nullptr;
  std::vector<int64_t> shape;
  std::vector<uint8_t> data;
};

size_t ElementCount(const std::vector<int64_t>& shape) {
  size_t n = 1;
  for (int64_t d : shape) n *= static_cast<size_t>(d);
  return n;
}

std::string ShapeText(const std::vector<int64_t>& shape) {
  std::string s = "[";
  for (size_t i = 0; i < shape.size(); ++i) s += (i ? ", " : "") + std::to_string(shape[i]);
  return s + "]";
}

// Value of `key` in the header dict, e.g. 'descr': '<f4' -> "'<f4'".
std::string HeaderField(const std::string& header, const std::string& key, const std::string& path) {
  size_t k = header.find("'" + key + "'");
  if (k == std::string::npos) throw UsageError(path + ": .npy header has no '" + key + "'");
  size_t colon = header.find(':', k);
  if (colon == std::string::npos) throw UsageError(path + ": malformed .npy header");
  size_t start = header.find_first_not_of(' ', colon + 1);
  if (start == std::string::npos) throw UsageError(path + ": malformed .npy header");
  size_t end;
  if (header[start] == '(') {
    end = header.find(')', start);
    if (end == std::string::npos) throw UsageError(path + ": malformed shape in .npy header");
    return header.substr(start, end - start + 1);
  }
  if (header[start] == '\'') {
    end = header.find('\'', start + 1);
    if (end == std::string::npos) throw UsageError(path + ": malformed .npy header");
    return header.substr(start, end - start + 1);
  }
  end = header.find_first_of(",}", start);
  return header.substr(start, end - start);
}

Array ReadNpy(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  if (!f) throw UsageError("cannot open " + path);
  std::vector<uint8_t> file((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  static const uint8_t kMagic[6] = {0x93, 'N', 'U', 'M', 'P', 'Y'};
  if (file.size() < 10 || std::memcmp(file.data(), kMagic, 6) != 0) throw UsageError(path + ": not a .npy file");
  uint8_t major = file[6];
  size_t header_len, offset;
  if (major == 1) {
    header_len = file[8] | (static_cast<size_t>(file[9]) << 8);
    offset = 10;
  } else if (major == 2 || major == 3) {
    if (file.size() < 12) throw UsageError(path + ": truncated .npy header");
    header_len = file[8] | (static_cast<size_t>(file[9]) << 8) | (static_cast<size_t>(file[10]) << 16) |
                 (static_cast<size_t>(file[11]) << 24);
    offset = 12;
  } else {
    throw UsageError(path + ": unsupported .npy version " + std::to_string(major));
  }
  if (offset + header_len > file.size()) throw UsageError(path + ": truncated .npy header");
  std::string header(file.begin() + static_cast<std::ptrdiff_t>(offset),
                     file.begin() + static_cast<std::ptrdiff_t>(offset + header_len));
  Array a;
  std::string descr = HeaderField(header, "descr", path);
  descr = descr.size() >= 2 ? descr.substr(1, descr.size() - 2) : descr;
  a.type = FindNpy(descr);
  if (a.type == nullptr)
    throw UsageError(path + ": unsupported dtype '" + descr +
                     "' (supported: little-endian float16/32/64, int8..64, uint8..64, bool)");
  if (HeaderField(header, "fortran_order", path) != "False")
    throw UsageError(path + ": Fortran-order arrays are not supported (save a C-contiguous array)");
  std::string shape_text = HeaderField(header, "shape", path);
  std::string inner = shape_text.substr(1, shape_text.size() - 2);
  std::stringstream ss(inner);
  std::string item;
  while (std::getline(ss, item, ',')) {
    size_t b = item.find_first_not_of(" L");
    if (b == std::string::npos) continue;  // trailing comma of a 1-tuple
    size_t e = item.find_last_not_of(" L");
    a.shape.push_back(ParseInt(item.substr(b, e - b + 1), path + ": shape", 0));
  }
  size_t bytes = ElementCount(a.shape) * a.type->size;
  size_t data_start = offset + header_len;
  if (file.size() - data_start != bytes)
    throw UsageError(path + ": expected " + std::to_string(bytes) + " data bytes for shape " + ShapeText(a.shape) +
                     ", found " + std::to_string(file.size() - data_start));
  a.data.assign(file.begin() + static_cast<std::ptrdiff_t>(data_start), file.end());
  return a;
}

void WriteNpy(const std::string& path, const TypeDesc& type, const std::vector<int64_t>& shape, const void* data,
              size_t bytes) {
  std::string shape_text = "(";
  for (size_t i = 0; i < shape.size(); ++i) shape_text += std::to_string(shape[i]) + ", ";
  if (shape.size() > 1) shape_text.resize(shape_text.size() - 2);
  else if (shape.size() == 1) shape_text.resize(shape_text.size() - 1);  // "(3,)"
  shape_text += ")";
  std::string header = std::string("{'descr': '") + type.npy + "', 'fortran_order': False, 'shape': " + shape_text +
                       ", }";
  // numpy pads the header with spaces so the data starts on a 64-byte boundary.
  size_t total = 10 + header.size() + 1;
  header.append((64 - total % 64) % 64, ' ');
  header += '\n';
  std::ofstream f(path, std::ios::binary);
  if (!f) throw UsageError("cannot create " + path);
  const char magic[8] = {'\x93', 'N', 'U', 'M', 'P', 'Y', 1, 0};
  f.write(magic, 8);
  char len[2] = {static_cast<char>(header.size() & 0xff), static_cast<char>(header.size() >> 8)};
  f.write(len, 2);
  f.write(header.data(), static_cast<std::streamsize>(header.size()));
  f.write(static_cast<const char*>(data), static_cast<std::streamsize>(bytes));
  if (!f) throw UsageError("cannot write " + path);
}

// ---- inputs ----------------------------------------------------------------

Array RandomInput(const std::string& name, const onyx::TensorTypeAndShapeInfo& info, const Options& opt,
                  std::mt19937_64& rng, std::vector<std::string>& notes) {
  Array a;
  a.type = FindType(info.GetElementType());
  if (a.type == nullptr)
    throw UsageError("input '" + name + "': element type " + std::to_string(info.GetElementType()) +
                     " is not supported by onyx_run (numeric and bool tensors only)");
  if (!info.HasShape())
    throw UsageError("input '" + name + "' has no declared shape; give it with --input " + name + "=file.npy");
  std::vector<int64_t> dims = info.GetShape();
  std::vector<std::string> syms = info.GetSymbolicDimensions();
  for (size_t i = 0; i < dims.size(); ++i) {
    if (dims[i] >= 0) continue;
    auto it = syms[i].empty() ? opt.dims.end() : opt.dims.find(syms[i]);
    if (it != opt.dims.end()) {
      dims[i] = it->second;
    } else {
      dims[i] = 1;
      notes.push_back(syms[i].empty() ? "input '" + name + "': unnamed dim " + std::to_string(i) + " set to 1"
                                      : "dim '" + syms[i] + "' not set with --dim; using 1");
    }
  }
  a.shape = dims;
  size_t n = ElementCount(dims);
  a.data.resize(n * a.type->size);
  std::uniform_real_distribution<double> real(-1.0, 1.0);
  // Small non-negative integers stay valid as indices, ids and counts.
  std::uniform_int_distribution<int> small(0, 9);
  uint8_t* p = a.data.data();
  for (size_t i = 0; i < n; ++i) {
    switch (a.type->type) {
      case ONYX_TYPE_FLOAT: { float v = static_cast<float>(real(rng)); std::memcpy(p + 4 * i, &v, 4); break; }
      case ONYX_TYPE_DOUBLE: { double v = real(rng); std::memcpy(p + 8 * i, &v, 8); break; }
      case ONYX_TYPE_FLOAT16: {
        uint16_t v = FloatToHalf(static_cast<float>(real(rng)));
        std::memcpy(p + 2 * i, &v, 2);
        break;
      }
      case ONYX_TYPE_BOOL: p[i] = static_cast<uint8_t>(small(rng) & 1); break;
      default: {
        int v = small(rng);
        int64_t v64 = v;
        // Little-endian: the low bytes of an int64 hold the value for every width.
        std::memcpy(p + a.type->size * i, &v64, a.type->size);
        break;
      }
    }
  }
  return a;
}

// ---- output summary --------------------------------------------------------

std::string Summarize(onyx::Value& v) {
  std::ostringstream os;
  OnyxElementType t = v.GetElementType();
  size_t n = v.GetElementCount();
  const size_t show = std::min<size_t>(n, 5);
  if (t == ONYX_TYPE_STRING) {
    os << "first:";
    for (size_t i = 0; i < show; ++i) os << " \"" << v.GetStringTensorElement(i) << "\"";
    return os.str();
  }
  if (FindType(t) == nullptr) return "(element type " + std::to_string(t) + ": no summary)";
  if (n == 0) return "(empty)";
  const uint8_t* p = static_cast<const uint8_t*>(v.GetTensorRawData());
  double lo = INFINITY, hi = -INFINITY, sum = 0.0;
  size_t nan = 0;
  for (size_t i = 0; i < n; ++i) {
    double x = ElementAsDouble(p, t, i);
    if (std::isnan(x)) {
      ++nan;
      continue;
    }
    lo = std::min(lo, x);
    hi = std::max(hi, x);
    sum += x;
  }
  os.precision(6);
  os << "min " << lo << "  max " << hi << "  mean " << (n > nan ? sum / static_cast<double>(n - nan) : NAN);
  if (nan) os << "  NaN " << nan;
  os << "  first:";
  for (size_t i = 0; i < show; ++i) os << " " << ElementAsDouble(p, t, i);
  return os.str();
}

std::string SafeFileName(const std::string& name) {
  std::string s = name;
  for (char& c : s)
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-' || c == '.')) c = '_';
  if (s.empty() || s[0] == '.') s = "_" + s;
  return s;
}

double Percentile(std::vector<double> v, double q) {
  std::sort(v.begin(), v.end());
  size_t rank = static_cast<size_t>(std::ceil(q * static_cast<double>(v.size())));
  return v[std::min(v.size() - 1, rank == 0 ? 0 : rank - 1)];
}

int Main(int argc, char** argv) {
  Options opt = ParseArgs(argc, argv);
  onyx::Env env(ONYX_LOG_WARNING, "onyx_run");
  onyx::SessionOptions so;
  so.SetIntraOpNumThreads(opt.threads);
  onyx::Session session(env, opt.model, so);

  std::vector<std::string> names = session.GetInputNames();
  for (const auto& kv : opt.inputs)
    if (std::find(names.begin(), names.end(), kv.first) == names.end())
      throw UsageError("--input " + kv.first + ": the model has no input named '" + kv.first + "'");

  std::mt19937_64 rng(opt.seed);
  std::vector<std::string> notes;
  std::vector<Array> arrays;
  onyx::MemoryInfo mem = onyx::MemoryInfo::CreateCpu();
  std::vector<onyx::Value> values;
  for (size_t i = 0; i < names.size(); ++i) {
    onyx::TypeInfo ti = session.GetInputTypeInfo(i);
    if (ti.GetKind() != ONYX_VALUE_TENSOR)
      throw UsageError("input '" + names[i] + "' is " + ti.GetTypeString() + "; only tensors are supported");
    auto it = opt.inputs.find(names[i]);
    if (it != opt.inputs.end()) {
      arrays.push_back(ReadNpy(it->second));
    } else {
      arrays.push_back(RandomInput(names[i], ti.GetTensorTypeAndShapeInfo(), opt, rng, notes));
    }
    Array& a = arrays.back();
    std::cout << "input  " << names[i] << ": " << ti.GetTypeString() << " fed as " << a.type->name << " "
              << ShapeText(a.shape) << (it != opt.inputs.end() ? " from " + it->second : " random") << "\n";
    values.push_back(onyx::Value::CreateTensor(mem, a.data.data(), a.data.size(), a.shape, a.type->type));
  }
  for (const auto& n : notes) std::cout << "note: " << n << "\n";

  onyx::RunOptions ro;
  std::vector<onyx::Value> outputs;
  for (int i = 0; i < opt.warmup; ++i) outputs = session.Run(ro, names, values, {});
  std::vector<double> ms;
  ms.reserve(static_cast<size_t>(opt.repeat));
  for (int i = 0; i < opt.repeat; ++i) {
    auto t0 = std::chrono::steady_clock::now();
    outputs = session.Run(ro, names, values, {});
    auto t1 = std::chrono::steady_clock::now();
    ms.push_back(std::chrono::duration<double, std::milli>(t1 - t0).count());
  }

  std::vector<std::string> out_names = session.GetOutputNames();
  if (!opt.save_dir.empty()) std::filesystem::create_directories(opt.save_dir);
  for (size_t i = 0; i < outputs.size(); ++i) {
    onyx::Value& v = outputs[i];
    if (!v.IsTensor()) {
      std::cout << "output " << out_names[i] << ": " << session.GetOutputTypeInfo(i).GetTypeString()
                << " (not a tensor; no summary)\n";
      continue;
    }
    const TypeDesc* td = FindType(v.GetElementType());
    std::string type_name = td ? td->name : (v.GetElementType() == ONYX_TYPE_STRING ? "string" : "other");
    std::cout << "output " << out_names[i] << ": tensor(" << type_name << ") " << ShapeText(v.GetShape()) << "  "
              << Summarize(v) << "\n";
    if (!opt.save_dir.empty()) {
      if (td == nullptr) {
        std::cout << "  not saved: element type " << type_name << " has no .npy writer here\n";
        continue;
      }
      std::string path = (std::filesystem::path(opt.save_dir) / (SafeFileName(out_names[i]) + ".npy")).string();
      size_t bytes = v.GetElementCount() * td->size;
      WriteNpy(path, *td, v.GetShape(), bytes ? v.GetTensorRawData() : nullptr, bytes);
      std::cout << "  saved " << path << "\n";
    }
  }
  double mean = 0.0;
  for (double x : ms) mean += x;
  mean /= static_cast<double>(ms.size());
  std::printf("latency over %d runs (after %d warmup): p50 %.3f ms  p90 %.3f ms  p99 %.3f ms  mean %.3f ms\n",
              opt.repeat, opt.warmup, Percentile(ms, 0.50), Percentile(ms, 0.90), Percentile(ms, 0.99), mean);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    return Main(argc, argv);
  } catch (const UsageError& e) {
    std::cerr << "onyx_run: error: " << e.what() << "\n";
    if (argc < 2) std::cerr << kUsage;
    return 1;
  } catch (const onyx::Exception& e) {
    std::cerr << "onyx_run: error (code " << e.code() << "): " << e.what() << "\n";
    return 1;
  } catch (const std::exception& e) {
    std::cerr << "onyx_run: error: " << e.what() << "\n";
    return 1;
  }
}
