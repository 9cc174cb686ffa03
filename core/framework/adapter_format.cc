#include "core/framework/adapter_format.h"

#include <cstring>
#include <fstream>
#include <iterator>

namespace onyx {
namespace {

constexpr char kIdentifier[4] = {'T', 'O', 'R', 'T'};
// Element types the schema's TensorDataType lists besides UNDEFINED and STRING.
bool IsAdapterType(int32_t t) { return t >= 1 && t <= 20 && t != 8; }

// Bounds-checked reads of a little-endian flatbuffer.
class Reader {
 public:
  Reader(const uint8_t* data, size_t size) : d_(data), n_(size) {}

  Status Need(size_t pos, size_t bytes, const char* what) const {
    if (pos > n_ || bytes > n_ - pos)
      return MakeError(ErrorCode::kInvalidProtobuf, "adapter data is truncated or corrupt: ", what, " at byte ", pos,
                       " (", bytes, " bytes) lies outside the ", n_, "-byte buffer");
    return Status::OK();
  }
  template <typename T>
  Status Read(size_t pos, const char* what, T* out) const {
    ONYX_RETURN_IF_ERROR(Need(pos, sizeof(T), what));
    std::memcpy(out, d_ + pos, sizeof(T));
    return Status::OK();
  }
  // Follows a uoffset stored at `pos`.
  Status Follow(size_t pos, const char* what, size_t* out) const {
    uint32_t off = 0;
    ONYX_RETURN_IF_ERROR(Read(pos, what, &off));
    *out = pos + off;
    return Need(*out, 0, what);
  }
  // Position of field `index` of the table at `table` (0 when absent).
  Status Field(size_t table, int index, const char* what, size_t* out) const {
    int32_t soff = 0;
    ONYX_RETURN_IF_ERROR(Read(table, what, &soff));
    const int64_t vt = static_cast<int64_t>(table) - soff;
    if (vt < 0) return MakeError(ErrorCode::kInvalidProtobuf, "adapter data is corrupt: ", what, " has a bad vtable");
    uint16_t vt_size = 0, tbl_size = 0;
    ONYX_RETURN_IF_ERROR(Read(static_cast<size_t>(vt), what, &vt_size));
    ONYX_RETURN_IF_ERROR(Read(static_cast<size_t>(vt) + 2, what, &tbl_size));
    ONYX_RETURN_IF_ERROR(Need(static_cast<size_t>(vt), vt_size, what));
    ONYX_RETURN_IF_ERROR(Need(table, tbl_size, what));
    const size_t entry = 4 + 2 * static_cast<size_t>(index);
    *out = 0;
    if (entry + 2 > vt_size) return Status::OK();
    uint16_t off = 0;
    ONYX_RETURN_IF_ERROR(Read(static_cast<size_t>(vt) + entry, what, &off));
    if (off != 0) {
      if (off >= tbl_size) return MakeError(ErrorCode::kInvalidProtobuf, "adapter data is corrupt: ", what, " lies outside its table");
      *out = table + off;
    }
    return Status::OK();
  }
  Status Int(size_t table, int index, const char* what, int32_t* out) const {
    size_t pos = 0;
    ONYX_RETURN_IF_ERROR(Field(table, index, what, &pos));
    *out = 0;
    return pos ? Read(pos, what, out) : Status::OK();
  }
  // A vector field: *count elements of `elem` bytes starting at *start.
  Status Vector(size_t table, int index, size_t elem, const char* what, size_t* start, size_t* count) const {
    size_t pos = 0;
    ONYX_RETURN_IF_ERROR(Field(table, index, what, &pos));
    *start = 0;
    *count = 0;
    if (!pos) return Status::OK();
    size_t vec = 0;
    ONYX_RETURN_IF_ERROR(Follow(pos, what, &vec));
    uint32_t n = 0;
    ONYX_RETURN_IF_ERROR(Read(vec, what, &n));
    ONYX_RETURN_IF_ERROR(Need(vec + 4, static_cast<size_t>(n) * elem, what));
    *start = vec + 4;
    *count = n;
    return Status::OK();
  }
  const uint8_t* at(size_t pos) const { return d_ + pos; }

 private:
  const uint8_t* d_;
  size_t n_;
};

// Front-to-back flatbuffer writer: every uoffset points forward, as the
// format requires; tables and vectors are aligned as flatbuffers' verifier expects.
class Writer {
 public:
  size_t Pos() const { return b_.size(); }
  void Align(size_t a, size_t extra = 0) {
    while ((b_.size() + extra) % a) b_.push_back(0);
  }
  template <typename T>
  size_t Put(T v) {
    size_t p = b_.size();
    b_.resize(p + sizeof(T));
    std::memcpy(&b_[p], &v, sizeof(T));
    return p;
  }
  template <typename T>
  void Set(size_t pos, T v) { std::memcpy(&b_[pos], &v, sizeof(T)); }
  // Stores at `offset_pos` the uoffset of `target` (which must lie after it).
  void PointTo(size_t offset_pos, size_t target) {
    Set<uint32_t>(offset_pos, static_cast<uint32_t>(target - offset_pos));
  }
  void PointHere(size_t offset_pos) { PointTo(offset_pos, b_.size()); }
  void Bytes(const void* p, size_t n) {
    const auto* c = static_cast<const uint8_t*>(p);
    b_.insert(b_.end(), c, c + n);
  }
  // A table with `fields` 4-byte slots; returns the table position. The
  // vtable is written just before it.
  size_t Table(int fields) {
    Align(2);
    const size_t vt = Put<uint16_t>(static_cast<uint16_t>(4 + 2 * fields));
    Put<uint16_t>(static_cast<uint16_t>(4 + 4 * fields));
    for (int i = 0; i < fields; ++i) Put<uint16_t>(static_cast<uint16_t>(4 + 4 * i));
    Align(4);
    const size_t table = Put<int32_t>(static_cast<int32_t>(b_.size() - vt));
    for (int i = 0; i < fields; ++i) Put<uint32_t>(0);
    return table;
  }
  std::string Take() { return std::string(b_.begin(), b_.end()); }

 private:
  std::vector<uint8_t> b_;
};

}  // namespace

Status ParseAdapter(const void* data, size_t size, LoraAdapterData* out) {
  if (size < 8 || std::memcmp(static_cast<const uint8_t*>(data) + 4, kIdentifier, 4) != 0)
    return MakeError(ErrorCode::kInvalidProtobuf, "not an onnxruntime adapter: ",
                     size < 8 ? "the data is too short" : "the file identifier is not 'TORT'", " (", size, " bytes)");
  Reader r(static_cast<const uint8_t*>(data), size);
  size_t root = 0;
  ONYX_RETURN_IF_ERROR(r.Follow(0, "the root table", &root));
  LoraAdapterData a;
  int32_t v = 0;
  ONYX_RETURN_IF_ERROR(r.Int(root, 0, "format_version", &v));
  a.format_version = v;
  if (a.format_version != 1)
    return MakeError(ErrorCode::kInvalidArgument, "adapter format version ", a.format_version,
                     " is not supported (only version 1)");
  ONYX_RETURN_IF_ERROR(r.Int(root, 1, "adapter_version", &v));
  a.adapter_version = v;
  ONYX_RETURN_IF_ERROR(r.Int(root, 2, "model_version", &v));
  a.model_version = v;
  size_t start = 0, count = 0;
  ONYX_RETURN_IF_ERROR(r.Vector(root, 3, 4, "the parameters", &start, &count));
  for (size_t i = 0; i < count; ++i) {
    size_t p = 0;
    ONYX_RETURN_IF_ERROR(r.Follow(start + 4 * i, "a parameter", &p));
    size_t s = 0, n = 0;
    ONYX_RETURN_IF_ERROR(r.Vector(p, 0, 1, "a parameter name", &s, &n));
    std::string name(reinterpret_cast<const char*>(r.at(s)), n);
    if (name.empty()) return MakeError(ErrorCode::kInvalidArgument, "adapter parameter ", i, " has no name");
    size_t ds = 0, dn = 0;
    ONYX_RETURN_IF_ERROR(r.Vector(p, 1, 8, "parameter dims", &ds, &dn));
    Dims dims(dn);
    int64_t elems = 1;
    for (size_t k = 0; k < dn; ++k) {
      std::memcpy(&dims[k], r.at(ds + 8 * k), 8);
      if (dims[k] < 0)
        return MakeError(ErrorCode::kInvalidArgument, "adapter parameter '", name, "' has a negative dimension");
      // The data must hold every element: a shape larger than the file is corrupt.
      if (dims[k] > 0 && elems > static_cast<int64_t>(size) / dims[k])
        return MakeError(ErrorCode::kInvalidArgument, "adapter parameter '", name, "' has shape ",
                         ShapeToString(dims), ", larger than the ", size, "-byte adapter");
      elems *= dims[k];
    }
    int32_t type = 0;
    ONYX_RETURN_IF_ERROR(r.Int(p, 2, "parameter data_type", &type));
    if (!IsAdapterType(type))
      return MakeError(ErrorCode::kInvalidArgument, "adapter parameter '", name, "' has data type ", type,
                       ", which adapters do not support");
    size_t rs = 0, rn = 0;
    ONYX_RETURN_IF_ERROR(r.Vector(p, 3, 1, "parameter raw_data", &rs, &rn));
    const ElemType et = static_cast<ElemType>(type);
    const size_t need = StorageBytes(et, static_cast<size_t>(elems));
    if (rn != need)
      return MakeError(ErrorCode::kInvalidArgument, "adapter parameter '", name, "' holds ", rn, " bytes but ",
                       ElemTypeName(et), ShapeToString(dims), " needs ", need);
    auto t = std::make_shared<Tensor>(et, dims);
    if (need) std::memcpy(t->raw(), r.at(rs), need);
    a.parameters.emplace_back(std::move(name), std::move(t));
  }
  *out = std::move(a);
  return Status::OK();
}

Status ReadAdapterFile(const std::string& path, LoraAdapterData* out) {
  std::ifstream f(path, std::ios::binary);
  if (!f) return MakeError(ErrorCode::kNoSuchFile, "cannot open adapter file '", path, "'");
  std::string bytes((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  Status s = ParseAdapter(bytes.data(), bytes.size(), out);
  return s.ok() ? s : s.WithContext("adapter file '" + path + "': ");
}

Status CheckAdapterParameters(const LoraAdapterData& adapter) {
  for (const auto& kv : adapter.parameters) {
    if (!kv.second) return MakeError(ErrorCode::kInvalidArgument, "adapter parameter '", kv.first, "' is null");
    if (!IsAdapterType(static_cast<int32_t>(kv.second->type())))
      return MakeError(ErrorCode::kInvalidArgument, "adapter parameter '", kv.first, "' is ",
                       ElemTypeName(kv.second->type()), ", which adapters cannot hold");
    if (kv.first.empty()) return MakeError(ErrorCode::kInvalidArgument, "an adapter parameter has an empty name");
  }
  return Status::OK();
}

Status SerializeAdapter(const LoraAdapterData& adapter, std::string* out) {
  ONYX_RETURN_IF_ERROR(CheckAdapterParameters(adapter));
  Writer w;
  const size_t root_off = w.Put<uint32_t>(0);
  w.Bytes(kIdentifier, 4);
  const size_t root = w.Table(4);
  w.PointTo(root_off, root);
  w.Set<int32_t>(root + 4, adapter.format_version);
  w.Set<int32_t>(root + 8, adapter.adapter_version);
  w.Set<int32_t>(root + 12, adapter.model_version);
  w.Align(4);
  w.PointHere(root + 16);
  w.Put<uint32_t>(static_cast<uint32_t>(adapter.parameters.size()));
  const size_t slots = w.Pos();
  for (size_t i = 0; i < adapter.parameters.size(); ++i) w.Put<uint32_t>(0);
  for (size_t i = 0; i < adapter.parameters.size(); ++i) {
    const std::string& name = adapter.parameters[i].first;
    const Tensor& t = *adapter.parameters[i].second;
    const size_t table = w.Table(4);
    w.PointTo(slots + 4 * i, table);
    w.Set<int32_t>(table + 12, static_cast<int32_t>(t.type()));
    w.Align(4);
    w.PointHere(table + 4);
    w.Put<uint32_t>(static_cast<uint32_t>(name.size()));
    w.Bytes(name.data(), name.size());
    w.Put<uint8_t>(0);
    w.Align(8, 4);  // int64 elements 8-aligned
    w.PointHere(table + 8);
    w.Put<uint32_t>(static_cast<uint32_t>(t.rank()));
    for (int64_t d : t.dims()) w.Put<int64_t>(d);
    w.Align(8, 4);  // raw_data is force_align 8
    w.PointHere(table + 16);
    w.Put<uint32_t>(static_cast<uint32_t>(t.bytes()));
    if (t.bytes()) w.Bytes(t.raw(), t.bytes());
  }
  *out = w.Take();
  return Status::OK();
}

}  // namespace onyx
