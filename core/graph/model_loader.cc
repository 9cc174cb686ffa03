// ONNX protobuf -> Model IR. The only file of the engine that sees protobuf.
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <climits>
#include <cstdint>
#include <cstring>
#include <fstream>
#include <set>
#include <unordered_set>

#include <google/protobuf/io/coded_stream.h>
#include <google/protobuf/io/zero_copy_stream_impl.h>

#include "core/framework/sparse_tensor.h"
#include "core/graph/graph.h"
#include "core/graph/onnx_schema.h"
#include "core/graph/proto_convert.h"

namespace onyx {
namespace {

struct MappedFile {
  void* addr = MAP_FAILED;
  size_t size = 0;
  ~MappedFile() {
    if (addr != MAP_FAILED) munmap(addr, size);
  }
};

Status MapFile(const std::string& path, std::shared_ptr<MappedFile>* out) {
  int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return MakeError(ErrorCode::kNoSuchFile, "Load model from ", path, " failed: File doesn't exist or cannot be opened: ", std::strerror(errno));
  struct stat st;
  if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    close(fd);
    return MakeError(ErrorCode::kNoSuchFile, "Load model from ", path, " failed: not a regular file");
  }
  auto m = std::make_shared<MappedFile>();
  m->size = static_cast<size_t>(st.st_size);
  if (m->size > 0) {
    m->addr = mmap(nullptr, m->size, PROT_READ, MAP_PRIVATE, fd, 0);
    if (m->addr == MAP_FAILED) {
      close(fd);
      return MakeError(ErrorCode::kFail, "cannot map ", path, ": ", std::strerror(errno));
    }
  }
  close(fd);
  *out = std::move(m);
  return Status::OK();
}

// The canonical absolute path of an existing file or folder.
bool RealPath(const std::string& path, std::string* out) {
  char* p = realpath(path.c_str(), nullptr);
  if (!p) return false;
  *out = p;
  free(p);
  return true;
}

class Loader {
 public:
  Loader(std::string model_dir, const std::map<std::string, int>& opsets, const ExternalFiles* files = nullptr)
      : model_dir_(std::move(model_dir)), opsets_(opsets), files_(files) {}

  Status ConvertType(const onnx::TypeProto& tp, TypeInfo* out) {
    switch (tp.value_case()) {
      case onnx::TypeProto::kTensorType:
      case onnx::TypeProto::kSparseTensorType: {
        bool sparse = tp.value_case() == onnx::TypeProto::kSparseTensorType;
        int32_t et = sparse ? tp.sparse_tensor_type().elem_type() : tp.tensor_type().elem_type();
        bool has_shape = sparse ? tp.sparse_tensor_type().has_shape() : tp.tensor_type().has_shape();
        const auto& shape = sparse ? tp.sparse_tensor_type().shape() : tp.tensor_type().shape();
        out->kind = sparse ? TypeInfo::Kind::kSparseTensor : TypeInfo::Kind::kTensor;
        out->elem = static_cast<ElemType>(et);
        out->has_shape = has_shape;
        for (const auto& d : shape.dim()) {
          if (d.has_dim_value()) out->dims.push_back(Dim::Of(d.dim_value()));
          else if (d.has_dim_param()) out->dims.push_back(Dim::Symbol(d.dim_param()));
          else out->dims.push_back(Dim{});
          out->dims.back().denotation = d.denotation();
        }
        return Status::OK();
      }
      case onnx::TypeProto::kSequenceType:
      case onnx::TypeProto::kOptionalType: {
        bool seq = tp.value_case() == onnx::TypeProto::kSequenceType;
        out->kind = seq ? TypeInfo::Kind::kSequence : TypeInfo::Kind::kOptional;
        out->inner = std::make_shared<TypeInfo>();
        const auto& elem = seq ? tp.sequence_type().elem_type() : tp.optional_type().elem_type();
        return ConvertType(elem, out->inner.get());
      }
      case onnx::TypeProto::kMapType:
        out->kind = TypeInfo::Kind::kMap;
        out->map_key = static_cast<ElemType>(tp.map_type().key_type());
        out->inner = std::make_shared<TypeInfo>();
        return ConvertType(tp.map_type().value_type(), out->inner.get());
      default:
        out->kind = TypeInfo::Kind::kUnknown;
        return Status::OK();
    }
  }

  Status ConvertTensor(onnx::TensorProto& tp, std::shared_ptr<Tensor>* out) {
    if (!IsKnownElemType(tp.data_type()))
      return MakeError(ErrorCode::kInvalidGraph, "tensor '", tp.name(), "' has unknown data type ", tp.data_type());
    ElemType et = static_cast<ElemType>(tp.data_type());
    Dims dims(tp.dims().begin(), tp.dims().end());
    int64_t n = ShapeSize(dims);
    if (n < 0)
      return MakeError(ErrorCode::kInvalidGraph, "tensor '", tp.name(), "' has a negative dimension or more elements than fit in int64: ",
                       ShapeToString(dims));
    // The data must be there (inline or in an external file), so a count this
    // large cannot be real; it would also overflow the byte count.
    if (static_cast<uint64_t>(n) > (SIZE_MAX >> 5))
      return MakeError(ErrorCode::kInvalidGraph, "tensor '", tp.name(), "' of shape ", ShapeToString(dims), " is too large");
    size_t nbytes = StorageBytes(et, static_cast<size_t>(n));
    auto bad_size = [&](size_t got) {
      return MakeError(ErrorCode::kInvalidGraph, "tensor '", tp.name(), "' of shape ", ShapeToString(dims), " and type ",
                       ElemTypeName(et), " needs ", nbytes, " bytes of data but has ", got);
    };

    if (tp.data_location() == onnx::TensorProto::EXTERNAL) return LoadExternal(tp, et, dims, nbytes, out);

    if (et == ElemType::kString) {
      if (tp.string_data_size() != n) return MakeError(ErrorCode::kInvalidGraph, "string tensor '", tp.name(), "' has ", tp.string_data_size(), " strings, shape needs ", n);
      auto t = std::make_shared<Tensor>(et, dims);
      for (int64_t i = 0; i < n; ++i) t->data<std::string>()[i] = tp.string_data(static_cast<int>(i));
      *out = std::move(t);
      return Status::OK();
    }
    if (tp.has_raw_data()) {
      if (tp.raw_data().size() != nbytes) return bad_size(tp.raw_data().size());
      // Take over the parsed bytes instead of copying them again.
      auto holder = std::make_shared<std::string>(std::move(*tp.mutable_raw_data()));
      // A bool is one byte holding 0 or 1; any other byte read as bool is
      // undefined behaviour in the kernels, so nonzero means true here.
      if (et == ElemType::kBool)
        for (char& c : *holder) c = c != 0;
      void* p = holder->empty() ? nullptr : &(*holder)[0];
      *out = std::make_shared<Tensor>(et, dims, std::shared_ptr<void>(holder, holder.get()), p, MemoryInfo{});
      return Status::OK();
    }
    // Counted before allocating, so a declared shape cannot allocate more
    // than the data the model carries.
    ONYX_RETURN_IF_ERROR(CheckTypedCount(tp, et, n, nbytes, bad_size));
    auto t = std::make_shared<Tensor>(et, dims);
    auto check = [&](int have, int per) -> Status {
      if (static_cast<int64_t>(have) != n * per) return bad_size(static_cast<size_t>(have) * ElemSize(et) / per);
      return Status::OK();
    };
    switch (et) {
      case ElemType::kFloat: case ElemType::kComplex64:
        ONYX_RETURN_IF_ERROR(check(tp.float_data_size(), et == ElemType::kComplex64 ? 2 : 1));
        std::memcpy(t->raw(), tp.float_data().data(), nbytes);
        break;
      case ElemType::kDouble: case ElemType::kComplex128:
        ONYX_RETURN_IF_ERROR(check(tp.double_data_size(), et == ElemType::kComplex128 ? 2 : 1));
        std::memcpy(t->raw(), tp.double_data().data(), nbytes);
        break;
      case ElemType::kInt64:
        ONYX_RETURN_IF_ERROR(check(tp.int64_data_size(), 1));
        std::memcpy(t->raw(), tp.int64_data().data(), nbytes);
        break;
      case ElemType::kUint32: case ElemType::kUint64: {
        ONYX_RETURN_IF_ERROR(check(tp.uint64_data_size(), 1));
        for (int64_t i = 0; i < n; ++i) {
          uint64_t v = tp.uint64_data(static_cast<int>(i));
          if (et == ElemType::kUint32) t->data<uint32_t>()[i] = static_cast<uint32_t>(v);
          else t->data<uint64_t>()[i] = v;
        }
        break;
      }
      case ElemType::kInt4: case ElemType::kUint4: case ElemType::kFloat4E2M1:
      case ElemType::kInt2: case ElemType::kUint2: {
        // int32_data holds packed bytes for the sub-byte types.
        if (static_cast<size_t>(tp.int32_data_size()) != nbytes) return bad_size(tp.int32_data_size());
        for (size_t i = 0; i < nbytes; ++i) t->data<uint8_t>()[i] = static_cast<uint8_t>(tp.int32_data(static_cast<int>(i)));
        break;
      }
      default: {
        // int32_data carries every other type, one element per entry.
        ONYX_RETURN_IF_ERROR(check(tp.int32_data_size(), 1));
        size_t es = ElemSize(et);
        for (int64_t i = 0; i < n; ++i) {
          int32_t v = tp.int32_data(static_cast<int>(i));
          if (et == ElemType::kBool) v = v != 0;
          std::memcpy(static_cast<char*>(t->raw()) + i * es, &v, es);  // little-endian low bytes
        }
      }
    }
    *out = std::move(t);
    return Status::OK();
  }

  // The count of the typed field that holds `et`'s values must match the
  // shape's `n` elements (`nbytes` for the packed sub-byte types).
  template <typename BadSize>
  static Status CheckTypedCount(const onnx::TensorProto& tp, ElemType et, int64_t n, size_t nbytes,
                                const BadSize& bad_size) {
    int64_t have = 0, per = 1, want = n;
    switch (et) {
      case ElemType::kFloat: case ElemType::kComplex64:
        have = tp.float_data_size();
        per = et == ElemType::kComplex64 ? 2 : 1;
        break;
      case ElemType::kDouble: case ElemType::kComplex128:
        have = tp.double_data_size();
        per = et == ElemType::kComplex128 ? 2 : 1;
        break;
      case ElemType::kInt64: have = tp.int64_data_size(); break;
      case ElemType::kUint32: case ElemType::kUint64: have = tp.uint64_data_size(); break;
      case ElemType::kInt4: case ElemType::kUint4: case ElemType::kFloat4E2M1:
      case ElemType::kInt2: case ElemType::kUint2:
        have = tp.int32_data_size();
        want = static_cast<int64_t>(nbytes);
        break;
      default: have = tp.int32_data_size(); break;
    }
    if (have != want * per) return bad_size(static_cast<size_t>(have) * std::max<size_t>(ElemSize(et), 1) / per);
    return Status::OK();
  }

  // An external data key's value: a non-negative decimal integer.
  static bool ParseExternalInt(const std::string& s, int64_t* out) {
    if (s.empty() || s.size() > 19 || s.find_first_not_of("0123456789") != std::string::npos) return false;
    const unsigned long long v = std::stoull(s);  // 19 digits always fit
    if (v > static_cast<unsigned long long>(INT64_MAX)) return false;
    *out = static_cast<int64_t>(v);
    return true;
  }

  Status LoadExternal(const onnx::TensorProto& tp, ElemType et, const Dims& dims, size_t nbytes,
                      std::shared_ptr<Tensor>* out) {
    std::string location;
    int64_t offset = 0, length = -1;
    for (const auto& kv : tp.external_data()) {
      bool ok = true;
      if (kv.key() == "location") location = kv.value();
      else if (kv.key() == "offset") ok = ParseExternalInt(kv.value(), &offset);
      else if (kv.key() == "length") ok = ParseExternalInt(kv.value(), &length);
      if (!ok)
        return MakeError(ErrorCode::kInvalidGraph, "tensor '", tp.name(), "': external data ", kv.key(), " '", kv.value(),
                         "' is not a non-negative integer");
    }
    if (files_ && files_->supplied.count(tp.name())) {
      // The caller supplies this one: nothing to read.
      *out = std::make_shared<Tensor>(et, dims, nullptr, MemoryInfo{});
      return Status::OK();
    }
    if (files_) {
      // A file the caller holds in memory (add_external_initializers_from_files_in_memory).
      auto f = files_->in_memory.find(location);
      if (f != files_->in_memory.end()) {
        const size_t size = f->second.second;
        if (length < 0) length = static_cast<int64_t>(nbytes);
        if (offset < 0 || static_cast<size_t>(length) != nbytes || static_cast<uint64_t>(offset + length) > size)
          return MakeError(ErrorCode::kInvalidGraph, "tensor '", tp.name(), "': external data (offset ", offset,
                           ", length ", length, ") does not fit in-memory file '", location, "' of ", size,
                           " bytes or shape ", ShapeToString(dims));
        if (et == ElemType::kString)
          return MakeError(ErrorCode::kInvalidGraph, "string tensor '", tp.name(), "' cannot use external data");
        void* p = const_cast<char*>(static_cast<const char*>(f->second.first)) + offset;
        *out = std::make_shared<Tensor>(et, dims, p, MemoryInfo{});
        return Status::OK();
      }
    }
    if (location.empty() || location[0] == '/' || location.find("..") != std::string::npos ||
        location.find('\0') != std::string::npos)
      return MakeError(ErrorCode::kInvalidGraph, "tensor '", tp.name(), "': external data location '", location,
                       "' must be a relative path inside the model's folder");
    if (model_dir_.empty())
      return MakeError(ErrorCode::kInvalidGraph, "tensor '", tp.name(), "' uses external data, which needs a model loaded from a path");
    std::string path = model_dir_ + "/" + location;
    // A symbolic link (of the file or of a folder on the way) must not lead
    // out of the model's folder either.
    std::string real_dir, real_path;
    if (!RealPath(model_dir_, &real_dir) || !RealPath(path, &real_path))
      return MakeError(ErrorCode::kInvalidGraph, "tensor '", tp.name(), "': cannot open external data file '", location, "'");
    const std::string inside = real_dir == "/" ? "/" : real_dir + "/";
    if (real_path.compare(0, inside.size(), inside) != 0)
      return MakeError(ErrorCode::kInvalidGraph, "tensor '", tp.name(), "': external data location '", location,
                       "' resolves to '", real_path, "', outside the model's folder");
    auto it = mapped_.find(real_path);
    std::shared_ptr<MappedFile> file;
    if (it != mapped_.end()) {
      file = it->second;
    } else {
      Status s = MapFile(real_path, &file);
      if (!s.ok()) return MakeError(ErrorCode::kInvalidGraph, "tensor '", tp.name(), "': cannot open external data file '", location, "'");
      mapped_[real_path] = file;
    }
    if (length < 0) length = static_cast<int64_t>(nbytes);
    if (static_cast<size_t>(length) != nbytes || static_cast<uint64_t>(offset) > file->size ||
        static_cast<uint64_t>(length) > file->size - static_cast<uint64_t>(offset))
      return MakeError(ErrorCode::kInvalidGraph, "tensor '", tp.name(), "': external data (offset ", offset, ", length ",
                       length, ") does not fit file '", location, "' of ", file->size, " bytes or shape ", ShapeToString(dims));
    if (et == ElemType::kString) return MakeError(ErrorCode::kInvalidGraph, "string tensor '", tp.name(), "' cannot use external data");
    void* p = static_cast<char*>(file->addr) + offset;
    if (et == ElemType::kBool) {  // mapped read-only, so checked rather than fixed
      const auto* b = static_cast<const uint8_t*>(p);
      for (size_t i = 0; i < nbytes; ++i)
        if (b[i] > 1)
          return MakeError(ErrorCode::kInvalidGraph, "bool tensor '", tp.name(), "': external data byte ", i, " is ",
                           static_cast<int>(b[i]), " (a bool must be 0 or 1)");
    }
    // Mapped read-only: kernels never write initializers.
    *out = std::make_shared<Tensor>(et, dims, std::shared_ptr<void>(file, file.get()), p, MemoryInfo{});
    return Status::OK();
  }

  Status ConvertAttribute(onnx::AttributeProto& ap, const Graph* owner, Attribute* out) {
    out->type = static_cast<Attribute::Type>(ap.type());
    out->f = ap.f();
    out->i = ap.i();
    out->s = ap.s();
    out->floats.assign(ap.floats().begin(), ap.floats().end());
    out->ints.assign(ap.ints().begin(), ap.ints().end());
    out->strings.assign(ap.strings().begin(), ap.strings().end());
    if (ap.has_t()) ONYX_RETURN_IF_ERROR(ConvertTensor(*ap.mutable_t(), &out->t));
    for (auto& t : *ap.mutable_tensors()) {
      out->tensors.emplace_back();
      ONYX_RETURN_IF_ERROR(ConvertTensor(t, &out->tensors.back()));
    }
    if (ap.has_g()) {
      out->g = std::make_shared<Graph>();
      ONYX_RETURN_IF_ERROR(ConvertGraph(*ap.mutable_g(), owner, out->g.get()));
    }
    for (auto& g : *ap.mutable_graphs()) {
      out->graphs.push_back(std::make_shared<Graph>());
      ONYX_RETURN_IF_ERROR(ConvertGraph(g, owner, out->graphs.back().get()));
    }
    if (ap.has_tp()) {
      out->tp = std::make_shared<TypeInfo>();
      ONYX_RETURN_IF_ERROR(ConvertType(ap.tp(), out->tp.get()));
    }
    if (out->type == Attribute::Type::kUndefined) {
      // Old exporters omit the type; infer it from what is set.
      if (ap.has_g()) out->type = Attribute::Type::kGraph;
      else if (ap.has_t()) out->type = Attribute::Type::kTensor;
      else if (ap.has_s()) out->type = Attribute::Type::kString;
      else if (ap.has_f()) out->type = Attribute::Type::kFloat;
      else if (ap.has_i()) out->type = Attribute::Type::kInt;
      else if (ap.floats_size()) out->type = Attribute::Type::kFloats;
      else if (ap.ints_size()) out->type = Attribute::Type::kInts;
      else if (ap.strings_size()) out->type = Attribute::Type::kStrings;
      else if (ap.tensors_size()) out->type = Attribute::Type::kTensors;
      else if (ap.graphs_size()) out->type = Attribute::Type::kGraphs;
      else if (ap.has_tp()) out->type = Attribute::Type::kTypeProto;
    }
    return Status::OK();
  }

  Status ConvertGraph(onnx::GraphProto& gp, const Graph* parent, Graph* g) {
    g->name = gp.name();
    g->doc = gp.doc_string();
    g->parent = parent;
    for (auto& init : *gp.mutable_initializer()) {
      std::shared_ptr<Tensor> t;
      ONYX_RETURN_IF_ERROR(ConvertTensor(init, &t));
      if (init.name().empty()) return MakeError(ErrorCode::kInvalidGraph, "graph '", g->name, "' has an initializer with no name");
      g->initializers[init.name()] = std::move(t);
    }
    // Sparse initializers (COO) are densified: every kernel takes dense tensors.
    for (auto& sp : *gp.mutable_sparse_initializer()) {
      const std::string name = sp.values().name();
      if (name.empty()) return MakeError(ErrorCode::kInvalidGraph, "graph '", g->name, "' has a sparse initializer with no name");
      if (g->initializers.count(name))
        return MakeError(ErrorCode::kInvalidGraph, "graph '", g->name, "': initializer '", name, "' is given twice");
      std::shared_ptr<Tensor> values, indices;
      ONYX_RETURN_IF_ERROR(ConvertTensor(*sp.mutable_values(), &values));
      ONYX_RETURN_IF_ERROR(ConvertTensor(*sp.mutable_indices(), &indices));
      SparseTensor st;
      Status s = MakeSparseTensor(StrCat("sparse initializer '", name, "'"), SparseFormat::kCoo,
                                  Dims(sp.dims().begin(), sp.dims().end()), values, {indices}, &st);
      if (!s.ok()) return MakeError(ErrorCode::kInvalidGraph, s.message());
      auto dense = std::make_shared<Tensor>();
      ONYX_RETURN_IF_ERROR(Densify(st, dense.get()));
      g->initializers[name] = std::move(dense);
    }
    auto convert_infos = [&](google::protobuf::RepeatedPtrField<onnx::ValueInfoProto>& src,
                             std::vector<ValueInfo>* dst) -> Status {
      for (auto& vi : src) {
        ValueInfo info;
        info.name = vi.name();
        info.doc = vi.doc_string();
        ONYX_RETURN_IF_ERROR(ConvertType(vi.type(), &info.type));
        g->value_types[info.name] = info.type;
        dst->push_back(std::move(info));
      }
      return Status::OK();
    };
    ONYX_RETURN_IF_ERROR(convert_infos(*gp.mutable_input(), &g->inputs));
    ONYX_RETURN_IF_ERROR(convert_infos(*gp.mutable_output(), &g->outputs));
    std::vector<ValueInfo> extra;
    ONYX_RETURN_IF_ERROR(convert_infos(*gp.mutable_value_info(), &extra));

    for (int i = 0; i < gp.node_size(); ++i) {
      Node n;
      ONYX_RETURN_IF_ERROR(ConvertNode(*gp.mutable_node(i), g, i, &n));
      g->nodes.push_back(std::move(n));
    }
    return Status::OK();
  }

  // One node; `index` names it when the model does not ("Conv_3").
  Status ConvertNode(onnx::NodeProto& np, const Graph* owner, int index, Node* out) {
    Node& n = *out;
    n.name = np.name().empty() ? StrCat(np.op_type(), "_", index) : np.name();
    n.op_type = np.op_type();
    n.domain = np.domain() == "ai.onnx" ? "" : np.domain();
    auto it = opsets_.find(n.domain);
    if (it == opsets_.end())
      return MakeError(ErrorCode::kInvalidGraph, n.Describe(), ": the model imports no opset for domain '",
                       n.domain.empty() ? "ai.onnx" : n.domain, "'");
    n.since_version = it->second;
    n.inputs.assign(np.input().begin(), np.input().end());
    n.outputs.assign(np.output().begin(), np.output().end());
    for (auto& ap : *np.mutable_attribute()) {
      Attribute a;
      ONYX_RETURN_IF_ERROR(ConvertAttribute(ap, owner, &a).WithContext(n.Describe() + ", attribute '" + ap.name() + "': "));
      n.attrs[ap.name()] = std::move(a);
    }
    for (const auto& kv : n.attrs) {
      std::vector<std::shared_ptr<Graph>> subs = kv.second.graphs;
      if (kv.second.g) subs.push_back(kv.second.g);
      for (const auto& sg : subs) CollectFreeNames(*sg, &n.implicit_inputs);
    }
    return Status::OK();
  }

  // Names a subgraph reads but does not define: they come from enclosing scopes.
  static void CollectFreeNames(const Graph& g, std::vector<std::string>* out) {
    std::unordered_set<std::string> defined;
    for (const auto& i : g.inputs) defined.insert(i.name);
    for (const auto& kv : g.initializers) defined.insert(kv.first);
    for (const auto& n : g.nodes)
      for (const auto& o : n.outputs) defined.insert(o);
    auto add = [&](const std::string& name) {
      if (name.empty() || defined.count(name)) return;
      for (const auto& e : *out)
        if (e == name) return;
      out->push_back(name);
    };
    for (const auto& n : g.nodes) {
      for (const auto& i : n.inputs) add(i);
      for (const auto& i : n.implicit_inputs) add(i);
    }
    for (const auto& o : g.outputs) add(o.name);
  }

 private:
  std::string model_dir_;
  const std::map<std::string, int>& opsets_;
  std::map<std::string, std::shared_ptr<MappedFile>> mapped_;
  const ExternalFiles* files_;
};

Status FinalizeRecursive(Graph& g, const std::vector<std::string>& outer) {
  ONYX_RETURN_IF_ERROR(g.Finalize(outer));
  std::vector<std::string> scope = outer;
  for (const auto& i : g.inputs) scope.push_back(i.name);
  for (const auto& kv : g.initializers) scope.push_back(kv.first);
  for (const auto& n : g.nodes)
    for (const auto& o : n.outputs) scope.push_back(o);
  for (auto& n : g.nodes) {
    for (auto& kv : n.attrs) {
      if (kv.second.g) ONYX_RETURN_IF_ERROR(FinalizeRecursive(*kv.second.g, scope));
      for (auto& sg : kv.second.graphs) ONYX_RETURN_IF_ERROR(FinalizeRecursive(*sg, scope));
    }
  }
  return Status::OK();
}

}  // namespace

namespace {

Status ParseModelProto(google::protobuf::io::CodedInputStream& in, onnx::ModelProto* mp) {
  in.SetTotalBytesLimit(INT_MAX);
  in.SetRecursionLimit(256);
  if (!mp->ParseFromCodedStream(&in) || !in.ConsumedEntireMessage())
    return MakeError(ErrorCode::kInvalidProtobuf, "Protobuf parsing failed: the data is not an ONNX ModelProto");
  return Status::OK();
}

Status BuildModel(onnx::ModelProto& mp, const std::string& model_dir, Model* out, const ExternalFiles* files) {
  if (!mp.has_ir_version() || !mp.has_graph())
    return MakeError(ErrorCode::kInvalidProtobuf, "the data is not an ONNX model: ",
                     !mp.has_ir_version() ? "ir_version" : "graph", " is missing");
  Model& m = *out;
  m.ir_version = mp.ir_version();
  for (const auto& op : mp.opset_import()) {
    std::string d = op.domain() == "ai.onnx" ? "" : op.domain();
    m.opsets[d] = static_cast<int>(op.version());
  }
  if (m.ir_version < 3 && m.opsets.empty()) m.opsets[""] = 1;
  ONYX_RETURN_IF_ERROR(CheckOpsetImports(m.opsets));
  m.producer_name = mp.producer_name();
  m.producer_version = mp.producer_version();
  m.domain = mp.domain();
  m.doc_string = mp.doc_string();
  // onnxruntime reports an unset model_version as INT64_MAX; users test for it.
  m.model_version = mp.has_model_version() ? mp.model_version() : INT64_MAX;
  for (const auto& kv : mp.metadata_props()) m.metadata.emplace_back(kv.key(), kv.value());
  ONYX_RETURN_IF_ERROR(proto::InlineLocalFunctions(mp));
  m.graph = std::make_shared<Graph>();
  Loader loader(model_dir, m.opsets, files);
  ONYX_RETURN_IF_ERROR(loader.ConvertGraph(*mp.mutable_graph(), nullptr, m.graph.get()));
  return FinalizeRecursive(*m.graph, {});
}

}  // namespace

namespace proto {

Status NodeFromProto(onnx::NodeProto& np, const Graph* owner, const std::map<std::string, int>& opsets, int index,
                     Node* out) {
  Loader loader("", opsets);
  return loader.ConvertNode(np, owner, index, out);
}

Status TypeFromProto(const onnx::TypeProto& tp, TypeInfo* out) {
  std::map<std::string, int> none;
  Loader loader("", none);
  return loader.ConvertType(tp, out);
}

}  // namespace proto

Status LoadModelFromBytes(const void* data, size_t size, const std::string& model_dir, Model* out,
                          const ExternalFiles* files) {
  if (size > static_cast<size_t>(INT_MAX))
    return MakeError(ErrorCode::kInvalidProtobuf, "model is ", size, " bytes; protobuf models over 2 GiB must use external data");
  onnx::ModelProto mp;
  google::protobuf::io::CodedInputStream in(static_cast<const uint8_t*>(data), static_cast<int>(size));
  ONYX_RETURN_IF_ERROR(ParseModelProto(in, &mp));
  return BuildModel(mp, model_dir, out, files);
}

Status LoadModelFromFile(const std::string& path, Model* out, const ExternalFiles* files) {
  // Streamed through a small buffer rather than mapped whole, so the file's
  // pages and the parsed weights are not resident at the same time.
  int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    return MakeError(ErrorCode::kNoSuchFile, "Load model from ", path,
                     " failed: File doesn't exist or cannot be opened: ", std::strerror(errno));
  struct stat st;
  if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    close(fd);
    return MakeError(ErrorCode::kNoSuchFile, "Load model from ", path, " failed: not a regular file");
  }
  if (static_cast<uint64_t>(st.st_size) > static_cast<uint64_t>(INT_MAX)) {
    close(fd);
    return MakeError(ErrorCode::kInvalidProtobuf, "Load model from ", path, " failed: the file is ", st.st_size,
                     " bytes; protobuf models over 2 GiB must use external data");
  }
  onnx::ModelProto mp;
  Status s;
  {
    google::protobuf::io::FileInputStream raw(fd, 1 << 20);
    raw.SetCloseOnDelete(true);
    google::protobuf::io::CodedInputStream in(&raw);
    s = ParseModelProto(in, &mp);
  }
  if (!s.ok()) return MakeError(s.code(), "Load model from ", path, " failed: ", s.message());
  std::string dir = ".";
  auto slash = path.find_last_of('/');
  if (slash != std::string::npos) dir = slash == 0 ? "/" : path.substr(0, slash);
  s = BuildModel(mp, dir, out, files);
  if (!s.ok() && s.code() == ErrorCode::kInvalidProtobuf)
    return MakeError(s.code(), "Load model from ", path, " failed: ", s.message());
  return s;
}

}  // namespace onyx
