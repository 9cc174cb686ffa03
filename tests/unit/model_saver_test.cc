// SaveModel / SaveModelToString (core/graph/model_saver.cc): everything the
// loader reads survives load -> save -> load, the session writes its optimized
// graph when asked, and bad paths fail with errors that name them.
#include <dirent.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <random>

#include "core/graph/shape_inference.h"
#include "core/session/session.h"
#include "onnx-ml.pb.h"

namespace onyx {
namespace {

// A fresh directory under $TMPDIR, removed with its files at the end.
class TempDir {
 public:
  TempDir() {
    const char* base = std::getenv("TMPDIR");
    std::string tmpl = std::string(base && *base ? base : "/tmp") + "/onyx_saver_XXXXXX";
    std::vector<char> buf(tmpl.begin(), tmpl.end());
    buf.push_back('\0');
    if (mkdtemp(buf.data()) != nullptr) path_ = buf.data();
  }
  ~TempDir() {
    if (!path_.empty()) std::system(("rm -rf '" + path_ + "'").c_str());
  }
  const std::string& path() const { return path_; }
  std::string File(const std::string& name) const { return path_ + "/" + name; }

 private:
  std::string path_;
};

int CountEntries(const std::string& dir) {
  DIR* d = opendir(dir.c_str());
  if (d == nullptr) return -1;
  int n = 0;
  while (const dirent* e = readdir(d)) n += std::strcmp(e->d_name, ".") != 0 && std::strcmp(e->d_name, "..") != 0;
  closedir(d);
  return n;
}

bool FileExists(const std::string& p) {
  struct stat st;
  return stat(p.c_str(), &st) == 0;
}

// ---- building the ONNX protobuf ---------------------------------------------

void SetType(onnx::TypeProto* t, int elem, const std::vector<std::string>& dims) {
  auto* tt = t->mutable_tensor_type();
  tt->set_elem_type(elem);
  auto* shape = tt->mutable_shape();
  for (const auto& d : dims) {
    auto* dp = shape->add_dim();
    if (d == "?") continue;  // neither value nor symbol
    if (std::isdigit(static_cast<unsigned char>(d[0]))) dp->set_dim_value(std::stoll(d));
    else dp->set_dim_param(d);
  }
}

onnx::ValueInfoProto* AddValue(google::protobuf::RepeatedPtrField<onnx::ValueInfoProto>* list, const std::string& name,
                               int elem, const std::vector<std::string>& dims) {
  auto* vi = list->Add();
  vi->set_name(name);
  SetType(vi->mutable_type(), elem, dims);
  return vi;
}

onnx::NodeProto* AddNode(onnx::GraphProto* g, const std::string& op, std::vector<std::string> in,
                         std::vector<std::string> out, const std::string& name, const std::string& domain = "") {
  auto* n = g->add_node();
  n->set_op_type(op);
  n->set_name(name);
  if (!domain.empty()) n->set_domain(domain);
  for (auto& s : in) n->add_input(s);
  for (auto& s : out) n->add_output(s);
  return n;
}

onnx::AttributeProto* AddAttr(onnx::NodeProto* n, const std::string& name, onnx::AttributeProto::AttributeType t) {
  auto* a = n->add_attribute();
  a->set_name(name);
  a->set_type(t);
  return a;
}

void Dims(onnx::TensorProto* t, std::vector<int64_t> dims) {
  for (int64_t d : dims) t->add_dims(d);
}

// One initializer of each storage form the loader knows.
void AddInitializers(onnx::GraphProto* g) {
  auto add = [&](const std::string& name, int type, std::vector<int64_t> dims) {
    auto* t = g->add_initializer();
    t->set_name(name);
    t->set_data_type(type);
    Dims(t, dims);
    return t;
  };
  auto* f = add("w_float", onnx::TensorProto::FLOAT, {2, 3});
  for (float v : {1.5f, -2.f, 0.f, 3.25f, -0.125f, 1e-30f}) f->add_float_data(v);
  auto* d = add("w_double", onnx::TensorProto::DOUBLE, {2});
  for (double v : {3.141592653589793, -1e300}) d->add_double_data(v);
  auto* i64 = add("w_int64", onnx::TensorProto::INT64, {3});
  for (int64_t v : {INT64_MIN, int64_t{0}, INT64_MAX}) i64->add_int64_data(v);
  auto* i8 = add("w_int8", onnx::TensorProto::INT8, {4});
  for (int v : {-128, -1, 0, 127}) i8->add_int32_data(v);
  auto* u16 = add("w_uint16", onnx::TensorProto::UINT16, {2});
  for (int v : {0, 65535}) u16->add_int32_data(v);
  auto* u64 = add("w_uint64", onnx::TensorProto::UINT64, {2});
  for (uint64_t v : {uint64_t{1}, UINT64_MAX}) u64->add_uint64_data(v);
  auto* b = add("w_bool", onnx::TensorProto::BOOL, {3});
  for (int v : {1, 0, 1}) b->add_int32_data(v);
  // float16 as raw bytes, bfloat16 through int32_data.
  auto* h = add("w_float16", onnx::TensorProto::FLOAT16, {3});
  const uint16_t halves[3] = {0x3c00, 0xc000, 0x7bff};
  h->set_raw_data(std::string(reinterpret_cast<const char*>(halves), sizeof(halves)));
  auto* bf = add("w_bfloat16", onnx::TensorProto::BFLOAT16, {2});
  for (int v : {0x3f80, 0xbfc0}) bf->add_int32_data(v);
  auto* i4 = add("w_int4", onnx::TensorProto::INT4, {3});  // two per byte, odd count
  for (int v : {0x7f, 0x08}) i4->add_int32_data(v);
  auto* s = add("w_string", onnx::TensorProto::STRING, {3});
  for (const char* v : {"", "hello", "with\0nul"}) s->add_string_data(v);
  s->mutable_string_data(2)->assign("with\0nul", 8);
  add("w_empty", onnx::TensorProto::FLOAT, {0, 3})->set_raw_data("");
  auto* sc = add("w_scalar", onnx::TensorProto::INT32, {});
  sc->add_int32_data(-7);
}

onnx::GraphProto Branch(const std::string& name, const std::string& op) {
  onnx::GraphProto g;
  g.set_name(name);
  g.set_doc_string(name + " doc");
  auto* k = g.add_initializer();
  k->set_name(name + "_k");
  k->set_data_type(onnx::TensorProto::FLOAT);
  k->add_float_data(2.f);
  // Reads X from the enclosing graph.
  AddNode(&g, op, {"X", name + "_k"}, {name + "_out"}, name + "_node");
  AddValue(g.mutable_output(), name + "_out", onnx::TensorProto::FLOAT, {"batch", "3", "4"});
  return g;
}

// Every construct the loader reads: model fields, typed inputs and outputs
// (tensor with fixed/symbolic/unknown dims, sequence, map, optional), each
// initializer form, value_info, a node with every attribute type (in a domain
// of its own, never run), and If with subgraphs that read outer values.
onnx::ModelProto FullModel() {
  onnx::ModelProto m;
  m.set_ir_version(9);
  m.set_producer_name("saver_test");
  m.set_producer_version("1.2.3");
  m.set_domain("org.test");
  m.set_model_version(42);
  m.set_doc_string("model doc");
  for (auto kv : {std::make_pair("author", "me"), std::make_pair("note", "two\nlines")}) {
    auto* p = m.add_metadata_props();
    p->set_key(kv.first);
    p->set_value(kv.second);
  }
  for (auto op : {std::make_pair("", 17), std::make_pair("ai.onnx.ml", 3), std::make_pair("test.custom", 5)}) {
    auto* o = m.add_opset_import();
    o->set_domain(op.first);
    o->set_version(op.second);
  }
  auto* g = m.mutable_graph();
  g->set_name("full");
  g->set_doc_string("graph doc");
  AddValue(g->mutable_input(), "X", onnx::TensorProto::FLOAT, {"batch", "3", "4"})->set_doc_string("the input");
  AddValue(g->mutable_input(), "C", onnx::TensorProto::BOOL, {});
  AddValue(g->mutable_input(), "U", onnx::TensorProto::INT64, {"?", "n"});
  auto* seq = g->add_input();
  seq->set_name("Q");
  SetType(seq->mutable_type()->mutable_sequence_type()->mutable_elem_type(), onnx::TensorProto::FLOAT, {"k"});
  auto* map = g->add_input();
  map->set_name("M");
  map->mutable_type()->mutable_map_type()->set_key_type(onnx::TensorProto::INT64);
  SetType(map->mutable_type()->mutable_map_type()->mutable_value_type(), onnx::TensorProto::FLOAT, {});
  auto* opt = g->add_input();
  opt->set_name("O");
  SetType(opt->mutable_type()->mutable_optional_type()->mutable_elem_type(), onnx::TensorProto::INT32, {"2"});
  // An initializer also listed as an input: overridable.
  AddValue(g->mutable_input(), "w_float", onnx::TensorProto::FLOAT, {"2", "3"});
  AddInitializers(g);

  AddNode(g, "Relu", {"X"}, {"r"}, "relu");
  AddValue(g->mutable_value_info(), "r", onnx::TensorProto::FLOAT, {"batch", "3", "4"});
  auto* iff = AddNode(g, "If", {"C"}, {"branch"}, "if");
  *AddAttr(iff, "then_branch", onnx::AttributeProto::GRAPH)->mutable_g() = Branch("then", "Add");
  *AddAttr(iff, "else_branch", onnx::AttributeProto::GRAPH)->mutable_g() = Branch("else", "Mul");
  AddNode(g, "Add", {"r", "branch"}, {"Y"}, "sum");

  auto* c = AddNode(g, "AllAttrs", {"X", "", "w_int64"}, {"Z", ""}, "custom", "test.custom");
  AddAttr(c, "f", onnx::AttributeProto::FLOAT)->set_f(-0.375f);
  AddAttr(c, "i", onnx::AttributeProto::INT)->set_i(-9000000000LL);
  AddAttr(c, "s", onnx::AttributeProto::STRING)->set_s(std::string("bytes\0\xff", 7));
  auto* fs = AddAttr(c, "floats", onnx::AttributeProto::FLOATS);
  for (float v : {1.f, -0.f, 1e38f}) fs->add_floats(v);
  auto* is = AddAttr(c, "ints", onnx::AttributeProto::INTS);
  for (int64_t v : {int64_t{1}, INT64_MIN}) is->add_ints(v);
  auto* ss = AddAttr(c, "strings", onnx::AttributeProto::STRINGS);
  for (const char* v : {"a", "", "ccc"}) ss->add_strings(v);
  auto* t = AddAttr(c, "t", onnx::AttributeProto::TENSOR)->mutable_t();
  t->set_data_type(onnx::TensorProto::INT32);
  Dims(t, {2});
  for (int v : {5, -6}) t->add_int32_data(v);
  auto* ts = AddAttr(c, "tensors", onnx::AttributeProto::TENSORS);
  auto* t0 = ts->add_tensors();
  t0->set_data_type(onnx::TensorProto::STRING);
  t0->add_string_data("x");
  auto* t1 = ts->add_tensors();
  t1->set_data_type(onnx::TensorProto::DOUBLE);
  Dims(t1, {1, 1});
  t1->add_double_data(0.5);
  auto* tp = AddAttr(c, "tp", onnx::AttributeProto::TYPE_PROTO)->mutable_tp();
  SetType(tp->mutable_optional_type()->mutable_elem_type()->mutable_sequence_type()->mutable_elem_type(),
          onnx::TensorProto::FLOAT16, {"s", "?", "3"});
  *AddAttr(c, "g", onnx::AttributeProto::GRAPH)->mutable_g() = Branch("attr_g", "Sub");
  auto* gs = AddAttr(c, "graphs", onnx::AttributeProto::GRAPHS);
  *gs->add_graphs() = Branch("attr_g0", "Div");
  *gs->add_graphs() = Branch("attr_g1", "Pow");

  AddValue(g->mutable_output(), "Y", onnx::TensorProto::FLOAT, {"batch", "3", "4"})->set_doc_string("the output");
  auto* z = g->add_output();
  z->set_name("Z");  // no type: as declared
  return m;
}

Status Load(const onnx::ModelProto& mp, Model* m) {
  std::string bytes = mp.SerializeAsString();
  return LoadModelFromBytes(bytes.data(), bytes.size(), "", m);
}

// ---- comparing IR ---------------------------------------------------------

void ExpectSameGraph(const Graph& a, const Graph& b, const std::string& where);

void ExpectSameType(const TypeInfo& a, const TypeInfo& b, const std::string& where) {
  EXPECT_EQ(a.ToString(), b.ToString()) << where;
  EXPECT_EQ(a.kind, b.kind) << where;
  EXPECT_EQ(a.has_shape, b.has_shape) << where;
  EXPECT_EQ(a.dims, b.dims) << where << ": " << DimsString(a.dims) << " vs " << DimsString(b.dims);
  EXPECT_EQ(a.map_key, b.map_key) << where;
  ASSERT_EQ(a.inner == nullptr, b.inner == nullptr) << where;
  if (a.inner) ExpectSameType(*a.inner, *b.inner, where + " inner");
}

void ExpectSameTensor(const Tensor& a, const Tensor& b, const std::string& where) {
  ASSERT_EQ(a.type(), b.type()) << where;
  ASSERT_EQ(a.dims(), b.dims()) << where;
  if (a.type() == ElemType::kString) {
    for (int64_t i = 0; i < a.size(); ++i) EXPECT_EQ(a.data<std::string>()[i], b.data<std::string>()[i]) << where;
    return;
  }
  ASSERT_EQ(a.bytes(), b.bytes()) << where;
  if (a.bytes() > 0) {
    EXPECT_EQ(std::memcmp(a.raw(), b.raw(), a.bytes()), 0) << where << ": bytes differ";
  }
}

void ExpectSameAttr(const Attribute& a, const Attribute& b, const std::string& where) {
  EXPECT_EQ(a.type, b.type) << where;
  EXPECT_EQ(std::memcmp(&a.f, &b.f, sizeof(float)), 0) << where;  // bitwise: -0.f stays
  EXPECT_EQ(a.i, b.i) << where;
  EXPECT_EQ(a.s, b.s) << where;
  EXPECT_EQ(a.floats, b.floats) << where;
  EXPECT_EQ(a.ints, b.ints) << where;
  EXPECT_EQ(a.strings, b.strings) << where;
  ASSERT_EQ(a.t == nullptr, b.t == nullptr) << where;
  if (a.t) ExpectSameTensor(*a.t, *b.t, where + ".t");
  ASSERT_EQ(a.tensors.size(), b.tensors.size()) << where;
  for (size_t k = 0; k < a.tensors.size(); ++k) ExpectSameTensor(*a.tensors[k], *b.tensors[k], where + ".tensors");
  ASSERT_EQ(a.tp == nullptr, b.tp == nullptr) << where;
  if (a.tp) ExpectSameType(*a.tp, *b.tp, where + ".tp");
  ASSERT_EQ(a.g == nullptr, b.g == nullptr) << where;
  if (a.g) ExpectSameGraph(*a.g, *b.g, where + ".g");
  ASSERT_EQ(a.graphs.size(), b.graphs.size()) << where;
  for (size_t k = 0; k < a.graphs.size(); ++k) ExpectSameGraph(*a.graphs[k], *b.graphs[k], where + ".graphs");
}

void ExpectSameValues(const std::vector<ValueInfo>& a, const std::vector<ValueInfo>& b, const std::string& where) {
  ASSERT_EQ(a.size(), b.size()) << where;
  for (size_t k = 0; k < a.size(); ++k) {
    EXPECT_EQ(a[k].name, b[k].name) << where;
    EXPECT_EQ(a[k].doc, b[k].doc) << where;
    ExpectSameType(a[k].type, b[k].type, where + " '" + a[k].name + "'");
  }
}

void ExpectSameGraph(const Graph& a, const Graph& b, const std::string& where) {
  const std::string w = where + " graph '" + a.name + "'";
  EXPECT_EQ(a.name, b.name) << w;
  EXPECT_EQ(a.doc, b.doc) << w;
  ExpectSameValues(a.inputs, b.inputs, w + " inputs");
  ExpectSameValues(a.outputs, b.outputs, w + " outputs");
  ASSERT_EQ(a.nodes.size(), b.nodes.size()) << w;
  for (size_t k = 0; k < a.nodes.size(); ++k) {
    const Node& x = a.nodes[k];
    const Node& y = b.nodes[k];
    const std::string nw = w + " " + x.Describe();
    EXPECT_EQ(x.name, y.name) << nw;
    EXPECT_EQ(x.op_type, y.op_type) << nw;
    EXPECT_EQ(x.domain, y.domain) << nw;
    EXPECT_EQ(x.since_version, y.since_version) << nw;
    EXPECT_EQ(x.inputs, y.inputs) << nw;
    EXPECT_EQ(x.outputs, y.outputs) << nw;
    EXPECT_EQ(x.implicit_inputs, y.implicit_inputs) << nw;
    ASSERT_EQ(x.attrs.size(), y.attrs.size()) << nw;
    for (const auto& kv : x.attrs) {
      auto it = y.attrs.find(kv.first);
      ASSERT_NE(it, y.attrs.end()) << nw << " lost attribute " << kv.first;
      ExpectSameAttr(kv.second, it->second, nw + " attribute '" + kv.first + "'");
    }
  }
  ASSERT_EQ(a.initializers.size(), b.initializers.size()) << w;
  for (const auto& kv : a.initializers) {
    auto it = b.initializers.find(kv.first);
    ASSERT_NE(it, b.initializers.end()) << w << " lost initializer " << kv.first;
    ExpectSameTensor(*kv.second, *it->second, w + " initializer '" + kv.first + "'");
  }
  // Types of node outputs (value_info): all that a graph declares or infers.
  for (const Node& n : a.nodes) {
    for (const auto& o : n.outputs) {
      auto ia = a.value_types.find(o);
      if (o.empty() || ia == a.value_types.end() || ia->second.kind == TypeInfo::Kind::kUnknown) continue;
      auto ib = b.value_types.find(o);
      ASSERT_NE(ib, b.value_types.end()) << w << " lost the type of '" << o << "'";
      ExpectSameType(ia->second, ib->second, w + " value '" + o + "'");
    }
  }
}

void ExpectSameModel(const Model& a, const Model& b) {
  EXPECT_EQ(a.ir_version, b.ir_version);
  EXPECT_EQ(a.opsets, b.opsets);
  EXPECT_EQ(a.producer_name, b.producer_name);
  EXPECT_EQ(a.producer_version, b.producer_version);
  EXPECT_EQ(a.domain, b.domain);
  EXPECT_EQ(a.doc_string, b.doc_string);
  EXPECT_EQ(a.model_version, b.model_version);
  EXPECT_EQ(a.metadata, b.metadata);
  ExpectSameGraph(*a.graph, *b.graph, "model");
}

// ---- tests -----------------------------------------------------------------

TEST(ModelSaver, RoundTripKeepsEverythingTheLoaderReads) {
  Model first;
  Status s = Load(FullModel(), &first);
  ASSERT_TRUE(s.ok()) << s.message();
  // The test's own premise: the loader read what was put in.
  ASSERT_EQ(first.graph->initializers.size(), 13u);
  ASSERT_EQ(first.graph->nodes.size(), 4u);
  const Node* custom = nullptr;
  for (const Node& n : first.graph->nodes)
    if (n.name == "custom") custom = &n;
  ASSERT_NE(custom, nullptr);
  ASSERT_EQ(custom->attrs.size(), 11u);  // every attribute type
  ASSERT_NE(custom->attrs.at("tp").tp, nullptr);
  EXPECT_EQ(custom->attrs.at("tp").tp->ToString(), "optional(seq(tensor(float16)))");
  ASSERT_EQ(first.graph->inputs.size(), 7u);

  std::string bytes;
  s = SaveModelToString(first, &bytes);
  ASSERT_TRUE(s.ok()) << s.message();
  Model second;
  s = LoadModelFromBytes(bytes.data(), bytes.size(), "", &second);
  ASSERT_TRUE(s.ok()) << s.message();
  ExpectSameModel(first, second);

  // A fixed point: saving what was read back gives the same bytes.
  std::string again;
  ASSERT_TRUE(SaveModelToString(second, &again).ok());
  EXPECT_EQ(bytes, again);
}

TEST(ModelSaver, WritesValidProtobufFields) {
  Model m;
  ASSERT_TRUE(Load(FullModel(), &m).ok());
  std::string bytes;
  ASSERT_TRUE(SaveModelToString(m, &bytes).ok());
  onnx::ModelProto mp;
  ASSERT_TRUE(mp.ParseFromString(bytes));
  EXPECT_EQ(mp.ir_version(), 9);
  EXPECT_EQ(mp.model_version(), 42);
  // Every non-string initializer as raw_data, never the typed repeated fields.
  for (const auto& t : mp.graph().initializer()) {
    if (t.data_type() == onnx::TensorProto::STRING) {
      EXPECT_FALSE(t.has_raw_data()) << t.name();
    } else {
      EXPECT_TRUE(t.has_raw_data()) << t.name();
      EXPECT_EQ(t.float_data_size() + t.int32_data_size() + t.int64_data_size() + t.double_data_size() +
                    t.uint64_data_size(),
                0)
          << t.name();
    }
  }
  // Sorted initializers: the same model always gives the same bytes.
  for (int k = 1; k < mp.graph().initializer_size(); ++k)
    EXPECT_LT(mp.graph().initializer(k - 1).name(), mp.graph().initializer(k).name());
  // An unset model_version stays unset (the loader reads it as INT64_MAX).
  onnx::ModelProto noversion = FullModel();
  noversion.clear_model_version();
  ASSERT_TRUE(Load(noversion, &m).ok());
  ASSERT_TRUE(SaveModelToString(m, &bytes).ok());
  ASSERT_TRUE(mp.ParseFromString(bytes));
  EXPECT_FALSE(mp.has_model_version());
}

// Conv -> BN -> Relu, which the optimizer turns into one FusedConv.
onnx::ModelProto ConvBnReluModel() {
  onnx::ModelProto m;
  m.set_ir_version(8);
  auto* op = m.add_opset_import();
  op->set_domain("");
  op->set_version(17);
  auto* g = m.mutable_graph();
  g->set_name("conv_bn_relu");
  AddValue(g->mutable_input(), "X", onnx::TensorProto::FLOAT, {"N", "3", "8", "8"});
  AddValue(g->mutable_output(), "Y", onnx::TensorProto::FLOAT, {"N", "4", "8", "8"});
  std::mt19937 rng(7);
  std::uniform_real_distribution<float> u(-1.f, 1.f);
  auto init = [&](const std::string& name, std::vector<int64_t> dims, float offset) {
    auto* t = g->add_initializer();
    t->set_name(name);
    t->set_data_type(onnx::TensorProto::FLOAT);
    int64_t n = 1;
    for (int64_t d : dims) {
      t->add_dims(d);
      n *= d;
    }
    for (int64_t i = 0; i < n; ++i) t->add_float_data(offset + 0.5f * u(rng));
  };
  init("W", {4, 3, 3, 3}, 0.f);
  init("scale", {4}, 1.f);
  init("bias", {4}, 0.f);
  init("mean", {4}, 0.f);
  init("var", {4}, 1.f);
  auto* c = AddNode(g, "Conv", {"X", "W"}, {"c"}, "conv");
  auto* pads = AddAttr(c, "pads", onnx::AttributeProto::INTS);
  for (int k = 0; k < 4; ++k) pads->add_ints(1);
  AddNode(g, "BatchNormalization", {"c", "scale", "bias", "mean", "var"}, {"bn"}, "bn");
  AddNode(g, "Relu", {"bn"}, {"Y"}, "relu");
  return m;
}

std::vector<float> RunOnce(const Session& s, const Tensor& x) {
  Value v(std::make_shared<Tensor>(x.Clone()));
  std::vector<Value> out;
  Status st = s.Run(nullptr, {"X"}, {&v}, {}, &out);
  EXPECT_TRUE(st.ok()) << st.message();
  if (!st.ok() || out.empty()) return {};
  const Tensor& y = out[0].tensor();
  return std::vector<float>(y.data<float>(), y.data<float>() + y.size());
}

TEST(ModelSaver, SessionWritesTheOptimizedGraph) {
  TempDir dir;
  ASSERT_FALSE(dir.path().empty());
  const std::string path = dir.File("optimized.onnx");
  std::string bytes = ConvBnReluModel().SerializeAsString();
  SessionOptions opts;
  opts.optimized_model_filepath = path;
  std::unique_ptr<Session> original;
  Status s = Session::CreateFromBytes(opts, bytes.data(), bytes.size(), &original);
  ASSERT_TRUE(s.ok()) << s.message();
  ASSERT_TRUE(FileExists(path));
  // Nothing left beside it from the write.
  EXPECT_EQ(CountEntries(dir.path()), 1);

  Model saved;
  s = LoadModelFromFile(path, &saved);
  ASSERT_TRUE(s.ok()) << s.message();
  ASSERT_EQ(saved.graph->nodes.size(), 1u);
  const Node& n = saved.graph->nodes[0];
  EXPECT_EQ(n.op_type, "FusedConv");
  EXPECT_EQ(n.domain, "com.microsoft");
  EXPECT_EQ(n.AttrString("activation", ""), "Relu");
  EXPECT_EQ(n.AttrInts("pads"), (std::vector<int64_t>{1, 1, 1, 1}));
  ASSERT_EQ(saved.opsets.count("com.microsoft"), 1u);
  EXPECT_EQ(saved.opsets.at("com.microsoft"), 1);
  EXPECT_EQ(saved.opsets.at(""), 17);
  EXPECT_EQ(saved.graph->initializers.size(), 2u);  // folded weights and bias
  ExpectSameValues(original->model().graph->inputs, saved.graph->inputs, "inputs");

  // The saved file runs to the same results, optimized again or not.
  Tensor x(ElemType::kFloat, {2, 3, 8, 8});
  std::mt19937 rng(3);
  std::normal_distribution<float> nd;
  for (int64_t i = 0; i < x.size(); ++i) x.data<float>()[i] = nd(rng);
  const std::vector<float> want = RunOnce(*original, x);
  ASSERT_EQ(want.size(), 2u * 4 * 8 * 8);
  for (int level : {0, 99}) {
    SessionOptions o;
    o.graph_optimization_level = level;
    std::unique_ptr<Session> reloaded;
    s = Session::Create(o, path, &reloaded);
    ASSERT_TRUE(s.ok()) << s.message();
    const std::vector<float> got = RunOnce(*reloaded, x);
    ASSERT_EQ(got.size(), want.size());
    for (size_t i = 0; i < got.size(); ++i)
      ASSERT_NEAR(got[i], want[i], 1e-6f * (1.f + std::fabs(want[i]))) << "level " << level << " element " << i;
  }

  // Unoptimized sessions save their graph as loaded; an existing file is replaced.
  SessionOptions plain;
  plain.graph_optimization_level = 0;
  plain.optimized_model_filepath = path;
  s = Session::CreateFromBytes(plain, bytes.data(), bytes.size(), &original);
  ASSERT_TRUE(s.ok()) << s.message();
  Model as_loaded;
  ASSERT_TRUE(LoadModelFromFile(path, &as_loaded).ok());
  EXPECT_EQ(as_loaded.graph->nodes.size(), 3u);
  EXPECT_EQ(as_loaded.opsets.count("com.microsoft"), 0u);
}

TEST(ModelSaver, ExternalDataIsWrittenInline) {
  TempDir dir;
  ASSERT_FALSE(dir.path().empty());
  const float weights[4] = {1.f, -2.f, 3.5f, 0.25f};
  {
    std::ofstream f(dir.File("weights.bin"), std::ios::binary);
    const char pad[8] = {};
    f.write(pad, sizeof(pad));  // at an offset, as external data often is
    f.write(reinterpret_cast<const char*>(weights), sizeof(weights));
  }
  onnx::ModelProto m;
  m.set_ir_version(8);
  m.add_opset_import()->set_version(17);
  auto* g = m.mutable_graph();
  g->set_name("ext");
  AddValue(g->mutable_input(), "X", onnx::TensorProto::FLOAT, {"4"});
  AddValue(g->mutable_output(), "Y", onnx::TensorProto::FLOAT, {"4"});
  auto* t = g->add_initializer();
  t->set_name("W");
  t->set_data_type(onnx::TensorProto::FLOAT);
  t->add_dims(4);
  t->set_data_location(onnx::TensorProto::EXTERNAL);
  for (auto kv : {std::make_pair("location", "weights.bin"), std::make_pair("offset", "8"),
                  std::make_pair("length", "16")}) {
    auto* e = t->add_external_data();
    e->set_key(kv.first);
    e->set_value(kv.second);
  }
  AddNode(g, "Add", {"X", "W"}, {"Y"}, "add");
  {
    std::ofstream f(dir.File("model.onnx"), std::ios::binary);
    f << m.SerializeAsString();
  }
  Model loaded;
  Status s = LoadModelFromFile(dir.File("model.onnx"), &loaded);
  ASSERT_TRUE(s.ok()) << s.message();

  TempDir other;  // no weights.bin here
  s = SaveModel(loaded, other.File("copy.onnx"));
  ASSERT_TRUE(s.ok()) << s.message();
  Model copy;
  s = LoadModelFromFile(other.File("copy.onnx"), &copy);
  ASSERT_TRUE(s.ok()) << s.message();
  const Tensor& w = *copy.graph->initializers.at("W");
  ASSERT_EQ(w.dims(), (onyx::Dims{4}));
  EXPECT_EQ(std::memcmp(w.raw(), weights, sizeof(weights)), 0);
}

TEST(ModelSaver, BadPathsFailNamingThePath) {
  Model m;
  ASSERT_TRUE(Load(ConvBnReluModel(), &m).ok());
  TempDir dir;
  ASSERT_FALSE(dir.path().empty());

  const std::string missing = dir.File("no_such_dir/model.onnx");
  Status s = SaveModel(m, missing);
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.code(), ErrorCode::kInvalidArgument);  // as onnxruntime
  EXPECT_NE(s.message().find(missing), std::string::npos) << s.message();
  EXPECT_NE(s.message().find(std::strerror(ENOENT)), std::string::npos) << s.message();

  s = SaveModel(m, dir.path());  // a directory
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find(dir.path()), std::string::npos) << s.message();
  EXPECT_NE(s.message().find("not a regular file"), std::string::npos) << s.message();

  s = SaveModel(m, dir.File("model.ort"));
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.code(), ErrorCode::kNotImplemented);
  EXPECT_NE(s.message().find("model.ort"), std::string::npos) << s.message();
  EXPECT_NE(s.message().find("ORT format"), std::string::npos) << s.message();
  EXPECT_FALSE(FileExists(dir.File("model.ort")));

  s = SaveModel(m, "");
  EXPECT_EQ(s.code(), ErrorCode::kInvalidArgument);

  // The session fails to create and says why.
  SessionOptions opts;
  opts.optimized_model_filepath = missing;
  std::string bytes = ConvBnReluModel().SerializeAsString();
  std::unique_ptr<Session> session;
  s = Session::CreateFromBytes(opts, bytes.data(), bytes.size(), &session);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find(missing), std::string::npos) << s.message();
  EXPECT_EQ(session, nullptr);
}

TEST(ModelSaver, ModelsOver2GiBAreNotImplemented) {
  // The size is checked before any tensor is copied, so a 2.4 GB tensor that
  // only pretends to have its bytes (it borrows a small buffer that is never
  // read) is enough.
  Model m;
  ASSERT_TRUE(Load(ConvBnReluModel(), &m).ok());
  static float dummy[4];
  m.graph->initializers["huge"] =
      std::make_shared<Tensor>(ElemType::kFloat, onyx::Dims{600000000}, dummy, MemoryInfo{});
  std::string bytes;
  Status s = SaveModelToString(m, &bytes);
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.code(), ErrorCode::kNotImplemented);
  EXPECT_NE(s.message().find("2 GiB"), std::string::npos) << s.message();
  EXPECT_NE(s.message().find("huge"), std::string::npos) << s.message();
}

TEST(ModelSaver, OldIrGetsVersion4WhenRewritesAddConstants) {
  // IR 3 lists every initializer as an input; rewrites such as Conv+BN folding
  // add initializers that are not, which only IR 4 and later allow.
  onnx::ModelProto mp = ConvBnReluModel();
  mp.set_ir_version(3);
  auto* g = mp.mutable_graph();
  for (const auto& t : std::vector<onnx::TensorProto>(g->initializer().begin(), g->initializer().end()))
    AddValue(g->mutable_input(), t.name(), onnx::TensorProto::FLOAT, {});
  Model m;
  ASSERT_TRUE(Load(mp, &m).ok());
  std::string out;
  ASSERT_TRUE(SaveModelToString(m, &out).ok());
  onnx::ModelProto saved;
  ASSERT_TRUE(saved.ParseFromString(out));
  EXPECT_EQ(saved.ir_version(), 3);  // still every initializer an input

  auto folded = std::make_shared<Tensor>(ElemType::kFloat, onyx::Dims{4});
  for (int k = 0; k < 4; ++k) folded->data<float>()[k] = static_cast<float>(k);
  m.graph->initializers["folded"] = folded;
  ASSERT_TRUE(SaveModelToString(m, &out).ok());
  ASSERT_TRUE(saved.ParseFromString(out));
  EXPECT_EQ(saved.ir_version(), 4);
  for (const auto& in : saved.graph().input()) EXPECT_NE(in.name(), "folded");
}

}  // namespace
}  // namespace onyx
