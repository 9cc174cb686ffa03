#include "core/framework/status.h"

namespace onyx {

const char* ErrorCodeName(ErrorCode code) {
  switch (code) {
    case ErrorCode::kOk: return "OK";
    case ErrorCode::kFail: return "FAIL";
    case ErrorCode::kInvalidArgument: return "INVALID_ARGUMENT";
    case ErrorCode::kNoSuchFile: return "NO_SUCHFILE";
    case ErrorCode::kNoModel: return "NO_MODEL";
    case ErrorCode::kEngineError: return "ENGINE_ERROR";
    case ErrorCode::kRuntimeException: return "RUNTIME_EXCEPTION";
    case ErrorCode::kInvalidProtobuf: return "INVALID_PROTOBUF";
    case ErrorCode::kModelLoaded: return "MODEL_LOADED";
    case ErrorCode::kNotImplemented: return "NOT_IMPLEMENTED";
    case ErrorCode::kInvalidGraph: return "INVALID_GRAPH";
    case ErrorCode::kEpFail: return "EP_FAIL";
  }
  return "UNKNOWN";
}

const std::string& Status::message() const {
  static const std::string kEmpty;
  return state_ ? state_->message : kEmpty;
}

Status Status::WithContext(const std::string& context) const {
  if (ok()) return Status();
  return Status(state_->code, context + state_->message);
}

}  // namespace onyx
