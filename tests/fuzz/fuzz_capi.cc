// The C API sequence a binding performs, through the public header and the
// shared library only: create a session from a small model, inspect it,
// create tensors of fuzzed types, shapes and values (caller-owned or library
// allocated), run with a fuzzed choice of outputs (unknown and repeated names
// included), maybe through an IoBinding, read the outputs, and release every
// handle in a fuzzed order. Every call must return a status, never crash.
#include <fuzzer/FuzzedDataProvider.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "onyxruntime/onyxruntime_c_api.h"

namespace {

// Protobuf wire format, enough for a small ModelProto.
struct Pb {
  std::string b;
  Pb& Varint(int field, uint64_t v) {
    Key(field, 0);
    Raw(v);
    return *this;
  }
  Pb& Bytes(int field, const std::string& s) {
    Key(field, 2);
    Raw(s.size());
    b += s;
    return *this;
  }
  Pb& Msg(int field, const Pb& m) { return Bytes(field, m.b); }
  void Key(int field, int wire) { Raw(static_cast<uint64_t>(field) << 3 | wire); }
  void Raw(uint64_t v) {
    while (v >= 0x80) {
      b.push_back(static_cast<char>(v | 0x80));
      v >>= 7;
    }
    b.push_back(static_cast<char>(v));
  }
};

Pb ValueInfo(const std::string& name, int elem, const std::vector<std::string>& dims) {
  Pb shape;
  for (const auto& d : dims) {
    Pb dim;
    if (!d.empty() && d[0] >= '0' && d[0] <= '9') dim.Varint(1, std::stoull(d));
    else dim.Bytes(2, d);
    shape.Msg(1, dim);
  }
  Pb tensor;
  tensor.Varint(1, elem).Msg(2, shape);
  Pb type;
  type.Msg(1, tensor);
  Pb vi;
  vi.Bytes(1, name).Msg(2, type);
  return vi;
}

Pb Node(const std::string& op, const std::vector<std::string>& in, const std::vector<std::string>& out,
        const std::vector<std::pair<std::string, int64_t>>& int_attrs = {}) {
  Pb n;
  for (const auto& i : in) n.Bytes(1, i);
  for (const auto& o : out) n.Bytes(2, o);
  n.Bytes(3, op + "_node").Bytes(4, op);
  for (const auto& a : int_attrs) {
    Pb attr;
    attr.Bytes(1, a.first).Varint(3, static_cast<uint64_t>(a.second)).Varint(20, 2);
    n.Msg(5, attr);
  }
  return n;
}

// x float [N,4], shape int64 [2] -> r = Relu(x @ w), reshaped = Reshape(r, shape),
// total = ReduceSum(x @ w, keepdims 0), cast = Cast(r, to int32).
const std::string& ModelBytes() {
  static const std::string bytes = [] {
    Pb w;
    std::string raw;
    for (int i = 0; i < 12; ++i) {
      float f = 0.25f * static_cast<float>(i - 6);
      raw.append(reinterpret_cast<const char*>(&f), 4);
    }
    w.Varint(1, 4).Varint(1, 3).Varint(2, 1).Bytes(8, "w").Bytes(9, raw);
    Pb g;
    g.Msg(1, Node("MatMul", {"x", "w"}, {"m"}))
        .Msg(1, Node("Relu", {"m"}, {"r"}))
        .Msg(1, Node("Reshape", {"r", "shape"}, {"reshaped"}))
        .Msg(1, Node("ReduceSum", {"m"}, {"total"}, {{"keepdims", 0}}))
        .Msg(1, Node("Cast", {"r"}, {"cast"}, {{"to", 6}}))
        .Bytes(2, "capi_fuzz")
        .Msg(5, w)
        .Msg(11, ValueInfo("x", 1, {"N", "4"}))
        .Msg(11, ValueInfo("shape", 7, {"2"}))
        .Msg(12, ValueInfo("reshaped", 1, {}))
        .Msg(12, ValueInfo("total", 1, {}))
        .Msg(12, ValueInfo("cast", 6, {"N", "3"}));
    Pb opset;
    opset.Bytes(1, "").Varint(2, 13);
    Pb m;
    m.Varint(1, 8).Msg(8, opset).Msg(7, g);
    return m.b;
  }();
  return bytes;
}

const OnyxApi* Api() {
  static const OnyxApi* api = OnyxGetApiBase()->GetApi(ONYX_API_VERSION);
  return api;
}

// Reads the status (code and message must be valid) and releases it.
bool Ok(OnyxStatus* st) {
  if (!st) return true;
  volatile size_t n = std::strlen(Api()->StatusGetMessage(st)) + static_cast<size_t>(Api()->StatusGetCode(st));
  (void)n;
  Api()->StatusRelease(st);
  return false;
}

const OnyxElementType kTypes[] = {ONYX_TYPE_FLOAT, ONYX_TYPE_INT64,
                                  ONYX_TYPE_INT32, ONYX_TYPE_DOUBLE,
                                  ONYX_TYPE_UINT8, ONYX_TYPE_STRING};
size_t ElemBytes(OnyxElementType t) {
  switch (t) {
    case ONYX_TYPE_FLOAT: case ONYX_TYPE_INT32: return 4;
    case ONYX_TYPE_INT64: case ONYX_TYPE_DOUBLE: return 8;
    case ONYX_TYPE_UINT8: return 1;
    default: return 0;
  }
}

void ReadTypeInfo(OnyxTypeInfo* info) {
  if (!info) return;
  const char* s = nullptr;
  Ok(Api()->TypeInfoGetTypeString(info, &s));
  const OnyxTensorTypeAndShapeInfo* ti = nullptr;
  if (Ok(Api()->TypeInfoGetTensorInfo(info, &ti)) && ti) {
    size_t rank = 0;
    Ok(Api()->TensorInfoGetDimCount(ti, &rank));
    std::vector<int64_t> dims(rank + 1);
    std::vector<const char*> names(rank + 1);
    Ok(Api()->TensorInfoGetDims(ti, dims.data(), rank));
    Ok(Api()->TensorInfoGetSymbolicDims(ti, names.data(), rank));
  }
  Api()->TypeInfoRelease(info);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  FuzzedDataProvider fdp(data, size);
  const OnyxApi* api = Api();
  OnyxEnv* env = nullptr;
  if (!Ok(api->EnvCreate(ONYX_LOG_FATAL, "fuzz", &env))) return 0;
  OnyxSessionOptions* so = nullptr;
  Ok(api->SessionOptionsCreate(&so));
  Ok(api->SessionOptionsSetIntraOpThreads(so, fdp.ConsumeIntegralInRange(0, 2)));
  Ok(api->SessionOptionsSetGraphOptimizationLevel(so, fdp.ConsumeBool() ? ONYX_DISABLE_ALL : ONYX_ENABLE_ALL));
  Ok(api->SessionOptionsAddConfigEntry(so, "session.memory_limit_bytes", "67108864"));
  OnyxSession* session = nullptr;
  const std::string& model = ModelBytes();
  Ok(api->SessionCreateFromBytes(env, model.data(), model.size(), so, &session));
  if (fdp.ConsumeBool()) {
    api->SessionOptionsRelease(so);  // options may go before the session
    so = nullptr;
  }
  if (!session) {
    api->SessionOptionsRelease(so);
    api->EnvRelease(env);
    return 0;
  }

  size_t n_in = 0, n_out = 0;
  Ok(api->SessionGetInputCount(session, &n_in));
  Ok(api->SessionGetOutputCount(session, &n_out));
  for (size_t i = 0; i < n_in + 1; ++i) {  // one past the end: an error, not a crash
    const char* name = nullptr;
    Ok(api->SessionGetInputName(session, i, &name));
    OnyxTypeInfo* info = nullptr;
    Ok(api->SessionGetInputTypeInfo(session, i, &info));
    ReadTypeInfo(info);
  }
  for (size_t i = 0; i < n_out + 1; ++i) {
    OnyxTypeInfo* info = nullptr;
    Ok(api->SessionGetOutputTypeInfo(session, i, &info));
    ReadTypeInfo(info);
  }

  // Inputs: x and shape, each of a fuzzed type and shape.
  std::vector<OnyxValue*> inputs;
  std::vector<std::vector<uint8_t>> buffers;
  OnyxMemoryInfo* cpu = nullptr;
  Ok(api->MemoryInfoCreateCpu(ONYX_DEVICE_ALLOCATOR, ONYX_MEM_DEFAULT, &cpu));
  const char* names[] = {"x", "shape", "nope"};
  size_t feed_count = fdp.ConsumeIntegralInRange<size_t>(0, 3);
  std::vector<const char*> feed_names;
  for (size_t i = 0; i < feed_count; ++i) {
    OnyxElementType type = fdp.ConsumeIntegralInRange(0, 4) ? (i == 1 ? ONYX_TYPE_INT64 : ONYX_TYPE_FLOAT)
                                                           : kTypes[fdp.ConsumeIntegralInRange<size_t>(0, 5)];
    size_t rank = fdp.ConsumeIntegralInRange<size_t>(0, 3);
    std::vector<int64_t> shape;
    size_t count = 1;
    for (size_t r = 0; r < rank; ++r) {
      shape.push_back(fdp.ConsumeIntegralInRange<int64_t>(fdp.ConsumeIntegralInRange(0, 9) ? 0 : -2, 6));
      count *= shape.back() < 0 ? 0 : static_cast<size_t>(shape.back());
    }
    OnyxValue* v = nullptr;
    size_t eb = ElemBytes(type);
    if (eb && fdp.ConsumeBool()) {  // caller-owned memory, sometimes of the wrong size
      buffers.emplace_back(count * eb + (fdp.ConsumeIntegralInRange(0, 7) == 0 ? 1 : 0));
      for (auto& byte : buffers.back()) byte = fdp.ConsumeIntegral<uint8_t>();
      if (type == ONYX_TYPE_INT64 && count == buffers.back().size() / 8) {
        for (size_t k = 0; k < count; ++k) {  // reshape targets: small values mostly
          int64_t s = fdp.ConsumeIntegralInRange<int64_t>(-2, 8);
          std::memcpy(buffers.back().data() + 8 * k, &s, 8);
        }
      }
      Ok(api->ValueCreateTensorWithData(cpu, buffers.back().data(), buffers.back().size(), shape.data(), rank, type, &v));
    } else {
      if (Ok(api->ValueCreateTensor(nullptr, shape.data(), rank, type, &v)) && v && eb) {
        void* p = nullptr;
        if (Ok(api->ValueGetTensorData(v, &p)) && p) {
          for (size_t k = 0; k < count * eb; ++k) static_cast<uint8_t*>(p)[k] = fdp.ConsumeIntegral<uint8_t>();
        }
      }
    }
    if (!v) continue;
    inputs.push_back(v);
    feed_names.push_back(names[fdp.ConsumeIntegralInRange(0, 9) ? std::min<size_t>(i, 2) : fdp.ConsumeIntegralInRange(0, 2)]);
  }

  OnyxRunOptions* ro = nullptr;
  Ok(api->RunOptionsCreate(&ro));
  if (fdp.ConsumeIntegralInRange(0, 15) == 0) Ok(api->RunOptionsSetTerminate(ro, 1));
  const char* out_names[] = {"reshaped", "total", "cast", "missing"};
  size_t want = fdp.ConsumeIntegralInRange<size_t>(0, 4);
  std::vector<const char*> wanted;
  for (size_t i = 0; i < want; ++i)
    wanted.push_back(out_names[fdp.ConsumeIntegralInRange(0, 7) ? std::min<size_t>(i, 2) : fdp.ConsumeIntegralInRange(0, 3)]);
  std::vector<OnyxValue*> outputs(std::max<size_t>(want, n_out), nullptr);
  std::vector<const OnyxValue*> in_ptrs(inputs.begin(), inputs.end());
  const bool all = fdp.ConsumeIntegralInRange(0, 3) == 0;
  OnyxIoBinding* binding = nullptr;
  if (fdp.ConsumeIntegralInRange(0, 3) == 0 && Ok(api->SessionCreateIoBinding(session, &binding))) {
    for (size_t i = 0; i < inputs.size(); ++i) Ok(api->IoBindingBindInput(binding, feed_names[i], inputs[i]));
    for (const char* n : wanted) Ok(api->IoBindingBindOutputToDevice(binding, n, cpu));
    Ok(api->SessionRunWithBinding(session, ro, binding));
    size_t bound = 0;
    Ok(api->IoBindingGetBoundOutputCount(binding, &bound));
    for (size_t i = 0; i < bound + 1; ++i) {
      OnyxValue* v = nullptr;
      if (Ok(api->IoBindingGetBoundOutputValue(binding, i, &v)) && v) api->ValueRelease(v);
    }
  } else {
    Ok(api->SessionRun(session, ro, feed_names.data(), in_ptrs.data(), inputs.size(), all ? nullptr : wanted.data(),
                       all ? n_out : wanted.size(), outputs.data()));
  }
  for (OnyxValue* out : outputs) {
    if (!out) continue;
    OnyxTensorTypeAndShapeInfo* info = nullptr;
    if (Ok(api->ValueGetTensorTypeAndShape(out, &info)) && info) {
      int64_t count = 0;
      Ok(api->TensorInfoGetElementCount(info, &count));
      void* p = nullptr;
      if (Ok(api->ValueGetTensorData(out, &p)) && p && count > 0) {
        volatile uint8_t sink = static_cast<uint8_t*>(p)[count - 1];  // the last byte is readable
        (void)sink;
      }
      api->TensorTypeAndShapeInfoRelease(info);
    }
  }

  // Release in a fuzzed order: the session, binding and options may go
  // before the values they produced or read.
  std::vector<int> order = {0, 1, 2, 3, 4, 5};
  for (size_t i = order.size(); i > 1; --i) std::swap(order[i - 1], order[fdp.ConsumeIntegralInRange<size_t>(0, i - 1)]);
  for (int k : order) {
    switch (k) {
      case 0: api->SessionRelease(session); break;
      case 1: api->IoBindingRelease(binding); break;
      case 2: api->RunOptionsRelease(ro); break;
      case 3: for (OnyxValue* v : outputs) api->ValueRelease(v); break;
      case 4: for (OnyxValue* v : inputs) api->ValueRelease(v); break;
      case 5: api->SessionOptionsRelease(so); api->MemoryInfoRelease(cpu); break;
    }
  }
  api->EnvRelease(env);
  return 0;
}
