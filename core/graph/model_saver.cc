// Model IR -> ONNX protobuf: the inverse of model_loader.cc, used to write the
// optimized graph (SessionOptions.optimized_model_filepath). With the loader,
// the only code of the engine that sees protobuf.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cctype>
#include <cerrno>
#include <climits>
#include <cstring>
#include <set>
#include <unordered_set>

#include <google/protobuf/io/zero_copy_stream_impl.h>

#include "core/graph/graph.h"
#include "core/graph/proto_convert.h"

namespace onyx {
namespace {

// Protobuf cannot serialize or parse a message of 2 GiB or more; bigger models
// need their weights in external data files, which the saver does not write.
constexpr size_t kMaxModelBytes = static_cast<size_t>(INT_MAX);

const char* AttributeTypeName(Attribute::Type t) {
  switch (static_cast<int>(t)) {
    case 11: return "SPARSE_TENSOR";
    case 12: return "SPARSE_TENSORS";
    case 14: return "TYPE_PROTOS";
    default: return "unknown";
  }
}

// Where initializers of at least `min_bytes` go when the saver writes
// external data: appended to `data`, referenced by `location`.
struct ExternalSink {
  std::string location;
  size_t min_bytes = 0;
  std::string data;
};

class Saver {
 public:
  explicit Saver(ExternalSink* sink = nullptr) : sink_(sink) {}

  Status ConvertType(const TypeInfo& t, onnx::TypeProto* out) {
    switch (t.kind) {
      case TypeInfo::Kind::kTensor:
      case TypeInfo::Kind::kSparseTensor: {
        const bool sparse = t.kind == TypeInfo::Kind::kSparseTensor;
        onnx::TensorShapeProto* shape = nullptr;
        if (sparse) {
          auto* st = out->mutable_sparse_tensor_type();
          if (t.elem != ElemType::kUndefined) st->set_elem_type(static_cast<int32_t>(t.elem));
          if (t.has_shape) shape = st->mutable_shape();
        } else {
          auto* tt = out->mutable_tensor_type();
          if (t.elem != ElemType::kUndefined) tt->set_elem_type(static_cast<int32_t>(t.elem));
          if (t.has_shape) shape = tt->mutable_shape();
        }
        if (shape != nullptr) {
          for (const Dim& d : t.dims) {
            auto* dp = shape->add_dim();
            if (d.known()) dp->set_dim_value(d.value);
            else if (!d.symbol.empty()) dp->set_dim_param(d.symbol);
            if (!d.denotation.empty()) dp->set_denotation(d.denotation);
          }
        }
        return Status::OK();
      }
      case TypeInfo::Kind::kSequence: {
        auto* seq = out->mutable_sequence_type();
        return t.inner ? ConvertType(*t.inner, seq->mutable_elem_type()) : Status::OK();
      }
      case TypeInfo::Kind::kOptional: {
        auto* opt = out->mutable_optional_type();
        return t.inner ? ConvertType(*t.inner, opt->mutable_elem_type()) : Status::OK();
      }
      case TypeInfo::Kind::kMap: {
        auto* map = out->mutable_map_type();
        if (t.map_key != ElemType::kUndefined) map->set_key_type(static_cast<int32_t>(t.map_key));
        return t.inner ? ConvertType(*t.inner, map->mutable_value_type()) : Status::OK();
      }
      case TypeInfo::Kind::kUnknown:
        return Status::OK();
    }
    return Status::OK();
  }

  Status ConvertTensor(const Tensor& t, const std::string& name, onnx::TensorProto* out, bool initializer = false) {
    const size_t nbytes = t.bytes();
    if (initializer && sink_ && t.type() != ElemType::kString && nbytes > 0 && nbytes >= sink_->min_bytes) {
      out->set_name(name);
      out->set_data_type(static_cast<int32_t>(t.type()));
      for (int64_t d : t.dims()) out->add_dims(d);
      out->set_data_location(onnx::TensorProto::EXTERNAL);
      auto add = [out](const char* key, const std::string& value) {
        auto* kv = out->add_external_data();
        kv->set_key(key);
        kv->set_value(value);
      };
      add("location", sink_->location);
      add("offset", std::to_string(sink_->data.size()));
      add("length", std::to_string(nbytes));
      sink_->data.append(static_cast<const char*>(t.raw()), nbytes);
      return Status::OK();
    }
    tensor_bytes_ += nbytes;
    // Checked before copying, so an oversized model fails without first
    // doubling its weights in memory.
    if (tensor_bytes_ >= kMaxModelBytes)
      return MakeError(ErrorCode::kNotImplemented, "the model's tensors take more than ", tensor_bytes_,
                       " bytes (at '", name, "'); saving models over 2 GiB needs external data files, which "
                       "is not supported");
    out->set_name(name);
    out->set_data_type(static_cast<int32_t>(t.type()));
    for (int64_t d : t.dims()) out->add_dims(d);
    if (t.type() == ElemType::kString) {
      const std::string* s = t.data<std::string>();
      for (int64_t i = 0; i < t.size(); ++i) out->add_string_data(s[i]);
      return Status::OK();
    }
    // raw_data is little-endian with the sub-byte types packed: the
    // engine's own layout, external (mapped) data included.
    out->set_raw_data(nbytes == 0 ? std::string() : std::string(static_cast<const char*>(t.raw()), nbytes));
    return Status::OK();
  }

  Status ConvertAttribute(const std::string& name, const Attribute& a, onnx::AttributeProto* out) {
    out->set_name(name);
    using T = Attribute::Type;
    switch (a.type) {
      case T::kUndefined: return Status::OK();  // as read: an attribute with nothing set
      case T::kFloat: out->set_f(a.f); break;
      case T::kInt: out->set_i(a.i); break;
      case T::kString: out->set_s(a.s); break;
      case T::kFloats: for (float v : a.floats) out->add_floats(v); break;
      case T::kInts: for (int64_t v : a.ints) out->add_ints(v); break;
      case T::kStrings: for (const auto& v : a.strings) out->add_strings(v); break;
      case T::kTensor:
        if (!a.t) return MakeError(ErrorCode::kEngineError, "tensor attribute '", name, "' holds no tensor");
        ONYX_RETURN_IF_ERROR(ConvertTensor(*a.t, "", out->mutable_t()));
        break;
      case T::kTensors:
        for (const auto& t : a.tensors) {
          if (!t) return MakeError(ErrorCode::kEngineError, "tensors attribute '", name, "' holds a null tensor");
          ONYX_RETURN_IF_ERROR(ConvertTensor(*t, "", out->add_tensors()));
        }
        break;
      case T::kGraph:
        if (!a.g) return MakeError(ErrorCode::kEngineError, "graph attribute '", name, "' holds no graph");
        ONYX_RETURN_IF_ERROR(ConvertGraph(*a.g, out->mutable_g()));
        break;
      case T::kGraphs:
        for (const auto& g : a.graphs) {
          if (!g) return MakeError(ErrorCode::kEngineError, "graphs attribute '", name, "' holds a null graph");
          ONYX_RETURN_IF_ERROR(ConvertGraph(*g, out->add_graphs()));
        }
        break;
      case T::kTypeProto:
        if (!a.tp) return MakeError(ErrorCode::kEngineError, "type attribute '", name, "' holds no type");
        ONYX_RETURN_IF_ERROR(ConvertType(*a.tp, out->mutable_tp()));
        break;
      default:
        // The loader keeps the type code of these but not their values.
        return MakeError(ErrorCode::kNotImplemented, "attribute '", name, "' has type ", AttributeTypeName(a.type),
                         " (", static_cast<int>(a.type), "), which cannot be saved");
    }
    out->set_type(static_cast<onnx::AttributeProto::AttributeType>(a.type));
    return Status::OK();
  }

  Status ConvertValueInfo(const std::string& name, const TypeInfo& type, const std::string& doc,
                          onnx::ValueInfoProto* out) {
    out->set_name(name);
    if (!doc.empty()) out->set_doc_string(doc);
    if (type.kind != TypeInfo::Kind::kUnknown) ONYX_RETURN_IF_ERROR(ConvertType(type, out->mutable_type()));
    return Status::OK();
  }

  Status ConvertNode(const Node& n, onnx::NodeProto* np) {
    np->set_name(n.name);
    np->set_op_type(n.op_type);
    if (!n.domain.empty()) np->set_domain(n.domain);
    for (const auto& i : n.inputs) np->add_input(i);
    for (const auto& o : n.outputs) np->add_output(o);
    for (const auto& kv : n.attrs) {
      Status s = ConvertAttribute(kv.first, kv.second, np->add_attribute());
      if (!s.ok()) return s.WithContext(n.Describe() + ": ");
    }
    return Status::OK();
  }

  Status ConvertGraph(const Graph& g, onnx::GraphProto* out) {
    out->set_name(g.name);
    if (!g.doc.empty()) out->set_doc_string(g.doc);
    for (const Node& n : g.nodes) ONYX_RETURN_IF_ERROR(ConvertNode(n, out->add_node()));
    // Sorted so that saving the same model twice gives the same bytes.
    std::vector<const std::string*> names;
    names.reserve(g.initializers.size());
    for (const auto& kv : g.initializers) names.push_back(&kv.first);
    std::sort(names.begin(), names.end(), [](const std::string* a, const std::string* b) { return *a < *b; });
    for (const std::string* name : names) {
      const auto& t = g.initializers.at(*name);
      if (!t) return MakeError(ErrorCode::kEngineError, "graph '", g.name, "': initializer '", *name, "' is null");
      Status s = ConvertTensor(*t, *name, out->add_initializer(), true);
      if (!s.ok()) return s.WithContext(StrCat("graph '", g.name, "', initializer '", *name, "': "));
    }
    for (const auto& vi : g.inputs) ONYX_RETURN_IF_ERROR(ConvertValueInfo(vi.name, vi.type, vi.doc, out->add_input()));
    for (const auto& vi : g.outputs)
      ONYX_RETURN_IF_ERROR(ConvertValueInfo(vi.name, vi.type, vi.doc, out->add_output()));
    // value_info for the values nodes produce: declared and inferred types
    // alike (value_types no longer tells them apart), which saves a later
    // load its inference. Incomplete types are left out rather than written
    // as an invalid UNDEFINED element type.
    std::unordered_set<std::string> outputs;
    for (const auto& vi : g.outputs) outputs.insert(vi.name);
    std::unordered_set<std::string> done;
    for (const Node& n : g.nodes) {
      for (const auto& o : n.outputs) {
        if (o.empty() || outputs.count(o) || g.IsInitializer(o) || !done.insert(o).second) continue;
        auto it = g.value_types.find(o);
        if (it == g.value_types.end() || !it->second.IsComplete()) continue;
        ONYX_RETURN_IF_ERROR(ConvertValueInfo(o, it->second, "", out->add_value_info()));
      }
    }
    return Status::OK();
  }

 private:
  size_t tensor_bytes_ = 0;
  ExternalSink* sink_;
};

// Domains the nodes of `g` and its subgraphs use, with the opset each node
// was resolved against (optimizer-made nodes of a domain the model did not
// import, such as com.microsoft's FusedConv, carry theirs in since_version).
void CollectDomains(const Graph& g, std::map<std::string, int>* out) {
  for (const Node& n : g.nodes) {
    auto& v = (*out)[n.domain];
    v = std::max(v, std::max(n.since_version, 1));
    for (const auto& kv : n.attrs) {
      if (kv.second.g) CollectDomains(*kv.second.g, out);
      for (const auto& sg : kv.second.graphs)
        if (sg) CollectDomains(*sg, out);
    }
  }
}

// IR < 4 requires every initializer to be a graph input; rewrites such as
// Conv+BN folding add initializers that are not.
bool HasConstantInitializers(const Graph& g) {
  std::unordered_set<std::string> inputs;
  for (const auto& vi : g.inputs) inputs.insert(vi.name);
  for (const auto& kv : g.initializers)
    if (!inputs.count(kv.first)) return true;
  for (const Node& n : g.nodes) {
    for (const auto& kv : n.attrs) {
      if (kv.second.g && HasConstantInitializers(*kv.second.g)) return true;
      for (const auto& sg : kv.second.graphs)
        if (sg && HasConstantInitializers(*sg)) return true;
    }
  }
  return false;
}

Status BuildModelProto(const Model& m, onnx::ModelProto* mp, ExternalSink* sink = nullptr) {
  if (!m.graph) return MakeError(ErrorCode::kInvalidArgument, "cannot save a model without a graph");
  // Initializers that are not inputs mean what IR 4 says they mean (constants),
  // which is also how the engine treated them.
  mp->set_ir_version(m.ir_version < 4 && HasConstantInitializers(*m.graph) ? 4 : m.ir_version);
  std::map<std::string, int> used;
  CollectDomains(*m.graph, &used);
  std::map<std::string, int> opsets = m.opsets;
  for (const auto& kv : used) opsets.emplace(kv.first, kv.second);
  for (const auto& kv : opsets) {
    auto* op = mp->add_opset_import();
    op->set_domain(kv.first);
    op->set_version(kv.second);
  }
  if (!m.producer_name.empty()) mp->set_producer_name(m.producer_name);
  if (!m.producer_version.empty()) mp->set_producer_version(m.producer_version);
  if (!m.domain.empty()) mp->set_domain(m.domain);
  if (!m.doc_string.empty()) mp->set_doc_string(m.doc_string);
  // The loader reads an unset model_version as INT64_MAX (onnxruntime's way).
  if (m.model_version != INT64_MAX) mp->set_model_version(m.model_version);
  for (const auto& kv : m.metadata) {
    auto* p = mp->add_metadata_props();
    p->set_key(kv.first);
    p->set_value(kv.second);
  }
  Saver saver(sink);
  ONYX_RETURN_IF_ERROR(saver.ConvertGraph(*m.graph, mp->mutable_graph()));
  const size_t size = mp->ByteSizeLong();
  if (size >= kMaxModelBytes)
    return MakeError(ErrorCode::kNotImplemented, "the model serializes to ", size,
                     " bytes; saving models over 2 GiB needs external data files, which is not supported");
  return Status::OK();
}

bool EndsWithNoCase(const std::string& s, const std::string& suffix) {
  if (s.size() < suffix.size()) return false;
  return std::equal(suffix.begin(), suffix.end(), s.end() - suffix.size(),
                    [](char a, char b) { return std::tolower(static_cast<unsigned char>(a)) == b; });
}

// A path that cannot be created is the caller's INVALID_ARGUMENT, as in
// onnxruntime; a write that fails midway (disk full) is FAIL.
Status WriteError(ErrorCode code, const std::string& path, const std::string& what, int err) {
  return MakeError(code, "cannot save the model to '", path, "': ", what, ": ", std::strerror(err));
}

}  // namespace

namespace proto {

Status NodeToProto(const Node& n, onnx::NodeProto* out) { return Saver().ConvertNode(n, out); }
Status TypeToProto(const TypeInfo& t, onnx::TypeProto* out) { return Saver().ConvertType(t, out); }

}  // namespace proto

Status SaveModelToString(const Model& model, std::string* bytes) {
  onnx::ModelProto mp;
  ONYX_RETURN_IF_ERROR(BuildModelProto(model, &mp));
  if (!mp.SerializeToString(bytes))
    return MakeError(ErrorCode::kFail, "cannot serialize the model (", mp.ByteSizeLong(), " bytes)");
  return Status::OK();
}

// Writes `bytes` to `path` through a temporary file renamed over it.
static Status WriteFileAtomically(const std::string& path, const std::string& bytes) {
  static std::atomic<unsigned> counter{0};
  const std::string tmp = StrCat(path, ".tmp.", getpid(), ".", counter.fetch_add(1));
  int fd = open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
  if (fd < 0) return WriteError(ErrorCode::kInvalidArgument, path, "cannot create '" + tmp + "'", errno);
  size_t done = 0;
  int err = 0;
  while (done < bytes.size()) {
    ssize_t n = write(fd, bytes.data() + done, bytes.size() - done);
    if (n < 0) {
      if (errno == EINTR) continue;
      err = errno;
      break;
    }
    done += static_cast<size_t>(n);
  }
  if (close(fd) != 0 && err == 0) err = errno;
  if (err == 0 && rename(tmp.c_str(), path.c_str()) != 0) err = errno;
  if (err != 0) {
    unlink(tmp.c_str());
    return WriteError(ErrorCode::kFail, path, "write failed", err);
  }
  return Status::OK();
}

Status SaveModel(const Model& model, const std::string& path, const std::string& external_file,
                 size_t min_external_bytes) {
  if (path.empty()) return MakeError(ErrorCode::kInvalidArgument, "cannot save the model: the path is empty");
  if (EndsWithNoCase(path, ".ort"))
    return MakeError(ErrorCode::kNotImplemented, "cannot save the model to '", path,
                     "': the ORT format is not supported; use a path ending in .onnx");
  struct stat st;
  if (stat(path.c_str(), &st) == 0 && !S_ISREG(st.st_mode))
    return MakeError(ErrorCode::kInvalidArgument, "cannot save the model to '", path,
                     "': it exists and is not a regular file");
  ExternalSink sink;
  if (!external_file.empty()) {
    if (external_file[0] == '/' || external_file.find("..") != std::string::npos)
      return MakeError(ErrorCode::kInvalidArgument, "cannot save the model to '", path, "': the external initializers ",
                       "file name '", external_file, "' must be a relative path inside the model's folder");
    sink.location = external_file;
    sink.min_bytes = min_external_bytes;
  }
  onnx::ModelProto mp;
  {
    Status s = BuildModelProto(model, &mp, external_file.empty() ? nullptr : &sink);
    if (!s.ok()) return s.WithContext("cannot save the model to '" + path + "': ");
  }
  if (!external_file.empty()) {
    const auto slash = path.find_last_of('/');
    const std::string dir = slash == std::string::npos ? "." : (slash == 0 ? "/" : path.substr(0, slash));
    ONYX_RETURN_IF_ERROR(WriteFileAtomically(dir + "/" + external_file, sink.data));
  }

  // Written beside the target and renamed over it, so a reader never sees a
  // half-written model and a failed save leaves any old file in place.
  static std::atomic<unsigned> counter{0};
  const std::string tmp = StrCat(path, ".tmp.", getpid(), ".", counter.fetch_add(1));
  int fd = open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
  if (fd < 0) return WriteError(ErrorCode::kInvalidArgument, path, "cannot create '" + tmp + "'", errno);
  int err = 0;
  {
    google::protobuf::io::FileOutputStream out(fd, 1 << 20);
    const bool ok = mp.SerializeToZeroCopyStream(&out);
    const bool flushed = out.Close();  // also closes fd
    if (!ok || !flushed) err = out.GetErrno() != 0 ? out.GetErrno() : EIO;
  }
  if (err == 0 && rename(tmp.c_str(), path.c_str()) != 0) err = errno;
  if (err != 0) {
    unlink(tmp.c_str());
    return WriteError(ErrorCode::kFail, path, "write failed", err);
  }
  return Status::OK();
}

}  // namespace onyx
