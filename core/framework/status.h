// Status and error codes used throughout the engine. The numeric values match
// onnxruntime's, because the Python layer prints them in its message format.
#pragma once

#include <memory>
#include <sstream>
#include <string>
#include <utility>

namespace onyx {

enum class ErrorCode : int {
  kOk = 0,
  kFail = 1,
  kInvalidArgument = 2,
  kNoSuchFile = 3,
  kNoModel = 4,
  kEngineError = 5,
  kRuntimeException = 6,
  kInvalidProtobuf = 7,
  kModelLoaded = 8,
  kNotImplemented = 9,
  kInvalidGraph = 10,
  kEpFail = 11,
};

const char* ErrorCodeName(ErrorCode code);

class [[nodiscard]] Status {
 public:
  Status() = default;
  Status(ErrorCode code, std::string message)
      : state_(code == ErrorCode::kOk ? nullptr
                                      : std::make_unique<State>(State{code, std::move(message)})) {}
  Status(const Status& other)
      : state_(other.state_ ? std::make_unique<State>(*other.state_) : nullptr) {}
  Status& operator=(const Status& other) {
    state_ = other.state_ ? std::make_unique<State>(*other.state_) : nullptr;
    return *this;
  }
  Status(Status&&) noexcept = default;
  Status& operator=(Status&&) noexcept = default;

  static Status OK() { return Status(); }
  bool ok() const { return state_ == nullptr; }
  ErrorCode code() const { return state_ ? state_->code : ErrorCode::kOk; }
  const std::string& message() const;
  // Returns a copy whose message is prefixed with `context` (e.g. the node).
  Status WithContext(const std::string& context) const;

 private:
  struct State {
    ErrorCode code;
    std::string message;
  };
  std::unique_ptr<State> state_;
};

namespace detail {
inline void Append(std::ostringstream&) {}
template <typename T, typename... Rest>
void Append(std::ostringstream& os, const T& v, const Rest&... rest) {
  os << v;
  Append(os, rest...);
}
}  // namespace detail

// Builds a message from its pieces; the single place error text is assembled.
template <typename... Args>
std::string StrCat(const Args&... args) {
  std::ostringstream os;
  detail::Append(os, args...);
  return os.str();
}

template <typename... Args>
Status MakeError(ErrorCode code, const Args&... args) {
  return Status(code, StrCat(args...));
}

// An exception used only inside the engine (e.g. from deep helpers); it is
// turned into a Status at the kernel/session boundary and never crosses the C ABI.
class OnyxException : public std::exception {
 public:
  explicit OnyxException(Status s) : status_(std::move(s)) {}
  const char* what() const noexcept override { return status_.message().c_str(); }
  const Status& status() const { return status_; }

 private:
  Status status_;
};

}  // namespace onyx

#define ONYX_RETURN_IF_ERROR(expr)          \
  do {                                      \
    ::onyx::Status _onyx_s = (expr);        \
    if (!_onyx_s.ok()) return _onyx_s;      \
  } while (0)

// Returns an error Status from the enclosing function when `cond` is false.
#define ONYX_CHECK(cond, code, ...)                                 \
  do {                                                              \
    if (!(cond)) return ::onyx::MakeError((code), __VA_ARGS__);     \
  } while (0)

#define ONYX_CHECK_ARG(cond, ...) ONYX_CHECK(cond, ::onyx::ErrorCode::kInvalidArgument, __VA_ARGS__)

// Throws from helpers that cannot return a Status (caught at the boundary).
#define ONYX_THROW(code, ...) throw ::onyx::OnyxException(::onyx::MakeError((code), __VA_ARGS__))
#define ONYX_ENFORCE(cond, ...)                                               \
  do {                                                                        \
    if (!(cond)) ONYX_THROW(::onyx::ErrorCode::kInvalidArgument, __VA_ARGS__); \
  } while (0)
