#include "core/session/model_config.h"

#include <cctype>
#include <cstdlib>
#include <cstring>
#include <map>
#include <string>

namespace onyx {
namespace {

// Just enough JSON: objects, and integer leaves under them; other values are
// parsed and skipped.
class Json {
 public:
  explicit Json(const std::string& s) : s_(s) {}

  // Parses the top-level object; `on_member(path, integer-or-null)` is called
  // for every member whose value is an integer ("a.b" paths).
  template <typename F>
  Status Parse(F on_member) {
    Space();
    ONYX_RETURN_IF_ERROR(Value("", on_member));
    Space();
    if (i_ != s_.size()) return Error("trailing characters");
    return Status::OK();
  }

 private:
  Status Error(const char* what) const {
    return MakeError(ErrorCode::kInvalidArgument, "Json stored in the `ort_config` key cannot be parsed: ", what,
                     " at offset ", i_);
  }
  void Space() {
    while (i_ < s_.size() && std::isspace(static_cast<unsigned char>(s_[i_]))) ++i_;
  }
  Status String(std::string* out) {
    if (i_ >= s_.size() || s_[i_] != '"') return Error("expected a string");
    ++i_;
    out->clear();
    while (i_ < s_.size() && s_[i_] != '"') {
      if (s_[i_] == '\\') {
        if (++i_ >= s_.size()) break;
        if (s_[i_] == 'u') {
          if (i_ + 4 >= s_.size()) return Error("bad \\u escape");
          i_ += 4;
          out->push_back('?');
        } else {
          const char* from = "\"\\/bfnrt";
          const char* to = "\"\\/\b\f\n\r\t";
          const char* p = std::strchr(from, s_[i_]);
          if (!p) return Error("bad escape");
          out->push_back(to[p - from]);
        }
      } else {
        out->push_back(s_[i_]);
      }
      ++i_;
    }
    if (i_ >= s_.size()) return Error("unterminated string");
    ++i_;
    return Status::OK();
  }
  template <typename F>
  Status Value(const std::string& path, F& on_member) {
    Space();
    if (i_ >= s_.size()) return Error("unexpected end");
    const char c = s_[i_];
    if (c == '{') {
      ++i_;
      Space();
      if (i_ < s_.size() && s_[i_] == '}') return ++i_, Status::OK();
      while (true) {
        Space();
        std::string key;
        ONYX_RETURN_IF_ERROR(String(&key));
        Space();
        if (i_ >= s_.size() || s_[i_] != ':') return Error("expected ':'");
        ++i_;
        ONYX_RETURN_IF_ERROR(Value(path.empty() ? key : path + "." + key, on_member));
        Space();
        if (i_ < s_.size() && s_[i_] == ',') { ++i_; continue; }
        if (i_ < s_.size() && s_[i_] == '}') return ++i_, Status::OK();
        return Error("expected ',' or '}'");
      }
    }
    if (c == '[') {
      ++i_;
      Space();
      if (i_ < s_.size() && s_[i_] == ']') return ++i_, Status::OK();
      while (true) {
        ONYX_RETURN_IF_ERROR(Value(path + "[]", on_member));
        Space();
        if (i_ < s_.size() && s_[i_] == ',') { ++i_; continue; }
        if (i_ < s_.size() && s_[i_] == ']') return ++i_, Status::OK();
        return Error("expected ',' or ']'");
      }
    }
    if (c == '"') {
      std::string ignored;
      ONYX_RETURN_IF_ERROR(String(&ignored));
      return on_member(path, nullptr);
    }
    for (const char* word : {"true", "false", "null"}) {
      if (s_.compare(i_, std::strlen(word), word) == 0) {
        i_ += std::strlen(word);
        return on_member(path, nullptr);
      }
    }
    const size_t start = i_;
    if (s_[i_] == '-') ++i_;
    bool integer = true;
    while (i_ < s_.size() && (std::isdigit(static_cast<unsigned char>(s_[i_])) || std::strchr(".eE+-", s_[i_]))) {
      if (!std::isdigit(static_cast<unsigned char>(s_[i_]))) integer = false;
      ++i_;
    }
    if (i_ == start || (i_ == start + 1 && s_[start] == '-')) return Error("unexpected character");
    if (!integer) return on_member(path, nullptr);
    const long long v = std::strtoll(s_.c_str() + start, nullptr, 10);
    return on_member(path, &v);
  }

  const std::string& s_;
  size_t i_ = 0;
};

}  // namespace

bool LoadConfigFromModelRequested() {
  const char* v = std::getenv("ORT_LOAD_CONFIG_FROM_MODEL");
  return v != nullptr && std::strcmp(v, "1") == 0;
}

Status ApplyModelConfig(const Model& model, SessionOptions* options) {
  const std::string* json = nullptr;
  for (const auto& kv : model.metadata)
    if (kv.first == "ort_config") json = &kv.second;
  if (!json) return Status::OK();
  static const char* kPrefix = "session_options.";
  return Json(*json).Parse([&](const std::string& path, const long long* v) -> Status {
    if (path.compare(0, std::strlen(kPrefix), kPrefix) != 0) return Status::OK();
    const std::string key = path.substr(std::strlen(kPrefix));
    const bool known = key == "intra_op_num_threads" || key == "inter_op_num_threads" || key == "execution_mode" ||
                       key == "graph_optimization_level" || key == "enable_profiling";
    if (!known) return Status::OK();  // onnxruntime ignores the session options it does not read from models
    if (!v) return MakeError(ErrorCode::kInvalidArgument, key, " option in the model file must be an integer");
    const long long x = *v;
    if (key == "intra_op_num_threads" || key == "inter_op_num_threads") {
      if (x < 0 || x > 4096) return MakeError(ErrorCode::kInvalidArgument, "Unsupported value for ", key, ": ", x);
      (key == "intra_op_num_threads" ? options->intra_op_threads : options->inter_op_threads) = static_cast<int>(x);
    } else if (key == "execution_mode") {
      if (x != 0 && x != 1)
        return MakeError(ErrorCode::kInvalidArgument, "Unsupported execution_mode value in ORT config: ", x);
      options->execution_mode = static_cast<int>(x);
    } else if (key == "graph_optimization_level") {
      if (x != 0 && x != 1 && x != 2 && x != 3 && x != 99)
        return MakeError(ErrorCode::kInvalidArgument, "Unsupported graph_optimization_level value in ORT config: ", x);
      options->graph_optimization_level = static_cast<int>(x);
    } else {
      if (x != 0 && x != 1)
        return MakeError(ErrorCode::kInvalidArgument, "Unsupported value for enable_profiling option: ", x);
      options->enable_profiling = x == 1;
    }
    return Status::OK();
  });
}

}  // namespace onyx
