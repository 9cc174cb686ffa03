// One operator at a time: the fuzzer's bytes choose an ONNX schema (any
// version of any ai.onnx / ai.onnx.ml operator), input types allowed by its
// type constraints, ranks, dims, attribute values and which inputs are
// constants (initializers, which shape inference and constant folding read).
// The node becomes a one-node model -> session (loader, ONNX's and our shape
// inference, optimizer, kernel creation) -> one run on fuzzed values. This
// reaches the shape rules and kernels with attribute and shape combinations
// no exporter writes.
#include <fuzzer/FuzzedDataProvider.h>

#include <algorithm>
#include <iterator>
#include <map>
#include <string>
#include <vector>

#include "onnx-ml.pb.h"
#include "onnx/defs/schema.h"
#include "tests/fuzz/fuzz_engine_util.h"

namespace {

struct ElemInfo {
  const char* name;
  int type;
  int bytes;  // 0: sub-byte or string
};
const ElemInfo kElems[] = {
    {"float", 1, 4},  {"uint8", 2, 1},   {"int8", 3, 1},   {"uint16", 4, 2},    {"int16", 5, 2},
    {"int32", 6, 4},  {"int64", 7, 8},   {"string", 8, 0}, {"bool", 9, 1},      {"float16", 10, 2},
    {"double", 11, 8}, {"uint32", 12, 4}, {"uint64", 13, 8}, {"bfloat16", 16, 2},
};

// "tensor(float)" -> element type, 0 when not a plain tensor type we feed.
int TensorTypeOf(const std::string& s) {
  if (s.rfind("tensor(", 0) != 0 || s.back() != ')') return 0;
  std::string inner = s.substr(7, s.size() - 8);
  for (const auto& e : kElems)
    if (inner == e.name) return e.type;
  return 0;
}

const std::vector<onnx::OpSchema>& Schemas() {
  static const auto* all = [] {
    auto* v = new std::vector<onnx::OpSchema>();
    for (auto& s : onnx::OpSchemaRegistry::get_all_schemas_with_history()) {
      if (s.deprecated() || (s.domain() != "" && s.domain() != "ai.onnx.ml")) continue;
      v->push_back(s);
    }
    std::sort(v->begin(), v->end(), [](const onnx::OpSchema& a, const onnx::OpSchema& b) {
      if (a.domain() != b.domain()) return a.domain() < b.domain();
      if (a.Name() != b.Name()) return a.Name() < b.Name();
      return a.since_version() < b.since_version();
    });
    return v;
  }();
  return *all;
}

void FillValues(FuzzedDataProvider& fdp, int type, int64_t count, onnx::TensorProto* t) {
  std::string raw;
  for (int64_t i = 0; i < count; ++i) {
    switch (type) {
      case 1: {  // small floats mostly, sometimes anything (NaN, inf)
        float f = fdp.ConsumeBool() ? static_cast<float>(fdp.ConsumeIntegralInRange<int>(-8, 8)) / 2
                                    : fdp.ConsumeFloatingPoint<float>();
        raw.append(reinterpret_cast<const char*>(&f), 4);
        break;
      }
      case 7: {  // indices, axes, shapes: small mostly
        int64_t v = fdp.ConsumeBool() ? fdp.ConsumeIntegralInRange<int64_t>(-4, 6) : fdp.ConsumeIntegral<int64_t>();
        raw.append(reinterpret_cast<const char*>(&v), 8);
        break;
      }
      case 6: {
        int32_t v = fdp.ConsumeBool() ? fdp.ConsumeIntegralInRange<int32_t>(-4, 6) : fdp.ConsumeIntegral<int32_t>();
        raw.append(reinterpret_cast<const char*>(&v), 4);
        break;
      }
      case 8:
        t->add_string_data(fdp.ConsumeRandomLengthString(8));
        break;
      default: {
        int bytes = 1;
        for (const auto& e : kElems)
          if (e.type == type) bytes = e.bytes;
        for (int b = 0; b < bytes; ++b) raw.push_back(static_cast<char>(fdp.ConsumeIntegral<uint8_t>()));
      }
    }
  }
  if (type != 8) t->set_raw_data(raw);
}

void FuzzAttribute(FuzzedDataProvider& fdp, const onnx::OpSchema::Attribute& a, onnx::NodeProto* node) {
  using AP = onnx::AttributeProto;
  AP* out = node->add_attribute();
  out->set_name(a.name);
  out->set_type(a.type);
  auto small_int = [&] { return fdp.ConsumeBool() ? fdp.ConsumeIntegralInRange<int64_t>(-3, 5) : fdp.ConsumeIntegral<int64_t>(); };
  switch (a.type) {
    case AP::INT: out->set_i(small_int()); break;
    case AP::FLOAT: out->set_f(fdp.ConsumeFloatingPoint<float>()); break;
    case AP::STRING: out->set_s(fdp.ConsumeRandomLengthString(16)); break;
    case AP::INTS: {
      int n = fdp.ConsumeIntegralInRange(0, 6);
      for (int i = 0; i < n; ++i) out->add_ints(small_int());
      break;
    }
    case AP::FLOATS: {
      int n = fdp.ConsumeIntegralInRange(0, 6);
      for (int i = 0; i < n; ++i) out->add_floats(fdp.ConsumeFloatingPoint<float>());
      break;
    }
    case AP::STRINGS: {
      int n = fdp.ConsumeIntegralInRange(0, 4);
      for (int i = 0; i < n; ++i) out->add_strings(fdp.ConsumeRandomLengthString(8));
      break;
    }
    case AP::TENSOR: {
      onnx::TensorProto* t = out->mutable_t();
      int type = kElems[fdp.ConsumeIntegralInRange<size_t>(0, std::size(kElems) - 1)].type;
      t->set_data_type(type);
      int rank = fdp.ConsumeIntegralInRange(0, 2);
      int64_t count = 1;
      for (int i = 0; i < rank; ++i) {
        int64_t d = fdp.ConsumeIntegralInRange<int64_t>(0, 4);
        t->add_dims(d);
        count *= d;
      }
      FillValues(fdp, type, count, t);
      break;
    }
    default:
      // Graphs and type protos are left out: the attribute is dropped.
      node->mutable_attribute()->RemoveLast();
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  FuzzedDataProvider fdp(data, size);
  const auto& schemas = Schemas();
  const onnx::OpSchema& schema = schemas[fdp.ConsumeIntegralInRange<size_t>(0, schemas.size() - 1)];

  onnx::ModelProto model;
  model.set_ir_version(10);
  auto* opset = model.add_opset_import();
  opset->set_domain(schema.domain());
  opset->set_version(schema.since_version());
  if (!schema.domain().empty()) {
    auto* onnx_opset = model.add_opset_import();
    onnx_opset->set_domain("");
    onnx_opset->set_version(21);
  }
  onnx::GraphProto* g = model.mutable_graph();
  g->set_name("fuzz");
  onnx::NodeProto* node = g->add_node();
  node->set_op_type(schema.Name());
  node->set_domain(schema.domain());
  node->set_name("n");

  // Inputs: one element type per type parameter, as the schema constrains.
  const auto& formals = schema.inputs();
  int max_in = std::min(schema.max_input(), static_cast<int>(formals.size()) + 2);
  int n_in = fdp.ConsumeIntegralInRange(schema.min_input(), std::max(schema.min_input(), max_in));
  std::map<std::string, int> chosen;
  for (int i = 0; i < n_in; ++i) {
    if (formals.empty()) break;
    const auto& f = formals[std::min<size_t>(i, formals.size() - 1)];
    if (f.GetOption() == onnx::OpSchema::Optional && fdp.ConsumeIntegralInRange(0, 3) == 0) {
      node->add_input("");
      continue;
    }
    auto it = chosen.find(f.GetTypeStr());
    if (it == chosen.end()) {
      std::vector<std::string> allowed;
      for (const auto* t : f.GetTypes())
        if (TensorTypeOf(*t)) allowed.push_back(*t);
      if (allowed.empty()) return 0;
      std::sort(allowed.begin(), allowed.end());
      int type = TensorTypeOf(allowed[fdp.ConsumeIntegralInRange<size_t>(0, allowed.size() - 1)]);
      it = chosen.emplace(f.GetTypeStr(), type).first;
    }
    const int type = it->second;
    const std::string name = "x" + std::to_string(i);
    node->add_input(name);
    int rank = fdp.ConsumeIntegralInRange(0, 4);
    std::vector<int64_t> dims;
    int64_t count = 1;
    for (int r = 0; r < rank; ++r) {
      dims.push_back(fdp.ConsumeIntegralInRange<int64_t>(0, 4));
      count *= dims.back();
    }
    if (fdp.ConsumeBool()) {  // a constant: inference and folding see its values
      onnx::TensorProto* t = g->add_initializer();
      t->set_name(name);
      t->set_data_type(type);
      for (int64_t d : dims) t->add_dims(d);
      FillValues(fdp, type, count, t);
    } else {
      onnx::ValueInfoProto* vi = g->add_input();
      vi->set_name(name);
      auto* tt = vi->mutable_type()->mutable_tensor_type();
      tt->set_elem_type(type);
      auto* shape = tt->mutable_shape();
      for (int64_t d : dims) {
        if (fdp.ConsumeIntegralInRange(0, 4) == 0) shape->add_dim()->set_dim_param("N" + std::to_string(d));
        else shape->add_dim()->set_dim_value(d);
      }
    }
  }
  for (const auto& kv : schema.attributes())
    if (kv.second.required || fdp.ConsumeBool()) FuzzAttribute(fdp, kv.second, node);
  int n_out = std::max(1, std::min(schema.max_output(), fdp.ConsumeIntegralInRange(schema.min_output(), schema.min_output() + 1)));
  for (int i = 0; i < n_out; ++i) {
    node->add_output("y" + std::to_string(i));
    g->add_output()->set_name("y" + std::to_string(i));
  }

  std::string bytes;
  if (!model.SerializeToString(&bytes)) return 0;
  std::unique_ptr<onyx::Session> s;
  try {
    if (!onyx::Session::CreateFromBytes(onyx::fuzz::BoundedOptions(), bytes.data(), bytes.size(), &s).ok()) return 0;
  } catch (const std::exception&) {
    return 0;
  }
  std::vector<uint8_t> rest = fdp.ConsumeRemainingBytes<uint8_t>();
  onyx::fuzz::RunOnce(*s, rest.data(), rest.size());
  return 0;
}
