#include <cerrno>
#include <climits>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <type_traits>

#include "providers/cpu/common/broadcast.h"
#include "providers/cpu/common/dispatch.h"
#include "providers/cpu/cpu_provider.h"

namespace onyx {

namespace {

template <typename T>
std::string ToText(T v) {
  if constexpr (std::is_same<T, bool>::value) {
    return v ? "1" : "0";
  } else if constexpr (std::is_integral<T>::value) {
    return std::to_string(v);
  } else {
    // Shortest form that reads back to the same value, like onnxruntime.
    using C = typename CalcType<T>::type;
    C f = static_cast<C>(v);
    if (std::isnan(f)) return "NaN";
    if (std::isinf(f)) return f < 0 ? "-INF" : "INF";
    char buf[64];
    std::snprintf(buf, sizeof(buf), "%.*g", std::is_same<C, double>::value ? 17 : 9, static_cast<double>(f));
    return buf;
  }
}

template <typename T>
bool FromText(const std::string& s, T* out) {
  const char* p = s.c_str();
  char* end = nullptr;
  errno = 0;
  if constexpr (std::is_integral<T>::value && !std::is_same<T, bool>::value) {
    if (std::is_signed<T>::value) {
      long long v = std::strtoll(p, &end, 10);
      *out = static_cast<T>(v);
    } else {
      unsigned long long v = std::strtoull(p, &end, 10);
      *out = static_cast<T>(v);
    }
  } else {
    // strtod reads "NaN", "INF", "-inf" and friends.
    double v = std::strtod(p, &end);
    if constexpr (std::is_same<T, bool>::value)
      *out = v != 0;
    else
      *out = static_cast<T>(static_cast<typename CalcType<T>::type>(v));
  }
  return end != p && *end == '\0';
}

template <typename S, typename D>
Status CastLoop(const S* src, D* dst, int64_t n, ThreadPool* pool) {
  if constexpr (std::is_same<D, std::string>::value) {
    if constexpr (std::is_same<S, std::string>::value) {
      for (int64_t i = 0; i < n; ++i) dst[i] = src[i];
    } else {
      for (int64_t i = 0; i < n; ++i) dst[i] = ToText(src[i]);
    }
  } else if constexpr (std::is_same<S, std::string>::value) {
    for (int64_t i = 0; i < n; ++i)
      if (!FromText(src[i], &dst[i]))
        return MakeError(ErrorCode::kInvalidArgument, "Cast: input string '", src[i], "' at index ", i,
                         " is not a number of type ", ElemTypeName(ElemTypeOf<D>::value));
  } else {
    using CS = typename CalcType<S>::type;
    using CD = typename CalcType<D>::type;
    ThreadPool::For(pool, n, 1 << 16, [&](int64_t b, int64_t e) {
      for (int64_t i = b; i < e; ++i) {
        if constexpr (std::is_same<S, D>::value) {
          dst[i] = src[i];
        } else if constexpr (std::is_same<D, bool>::value) {
          dst[i] = static_cast<CS>(src[i]) != CS(0);
        } else {
          dst[i] = static_cast<D>(static_cast<CD>(static_cast<CS>(src[i])));
        }
      }
    });
  }
  return Status::OK();
}

bool Castable(ElemType t) {
  switch (t) {
    case ElemType::kFloat: case ElemType::kDouble: case ElemType::kInt8: case ElemType::kInt16:
    case ElemType::kInt32: case ElemType::kInt64: case ElemType::kUint8: case ElemType::kUint16:
    case ElemType::kUint32: case ElemType::kUint64: case ElemType::kBool: case ElemType::kFloat16:
    case ElemType::kBFloat16: case ElemType::kString:
      return true;
    default:
      return false;
  }
}

class CastKernel final : public OpKernel {
 public:
  Status Init(const KernelInfo& info) {
    const Attribute* a = info.Attr("to");
    ONYX_CHECK(a != nullptr, ErrorCode::kInvalidGraph, "Cast: attribute 'to' is required");
    int64_t to = a->i;
    // Opset 1-5 spelled the type as a string ("FLOAT").
    if (a->type == Attribute::Type::kString) {
      static const std::pair<const char*, ElemType> kNames[] = {
          {"FLOAT", ElemType::kFloat},   {"DOUBLE", ElemType::kDouble}, {"INT8", ElemType::kInt8},
          {"INT16", ElemType::kInt16},   {"INT32", ElemType::kInt32},   {"INT64", ElemType::kInt64},
          {"UINT8", ElemType::kUint8},   {"UINT16", ElemType::kUint16}, {"UINT32", ElemType::kUint32},
          {"UINT64", ElemType::kUint64}, {"BOOL", ElemType::kBool},     {"FLOAT16", ElemType::kFloat16},
          {"STRING", ElemType::kString}};
      to = -1;
      for (const auto& kv : kNames)
        if (a->s == kv.first) to = static_cast<int64_t>(kv.second);
      ONYX_CHECK(to >= 0, ErrorCode::kInvalidGraph, "Cast: attribute 'to' names unknown type '", a->s, "'");
    }
    ONYX_CHECK(to >= 0 && to <= INT32_MAX && IsKnownElemType(static_cast<int32_t>(to)), ErrorCode::kInvalidGraph,
               "Cast: attribute 'to' has invalid value ", to);
    to_ = static_cast<ElemType>(to);
    ONYX_CHECK(Castable(to_), ErrorCode::kNotImplemented, "Cast: casting to ", ElemTypeName(to_),
               " is not supported");
    return Status::OK();
  }

  Status Compute(KernelContext& ctx) const override {
    const Tensor* X = nullptr;
    ONYX_RETURN_IF_ERROR(ctx.RequiredInput(0, &X));
    ONYX_CHECK(Castable(X->type()), ErrorCode::kNotImplemented, "Cast: casting from ", ElemTypeName(X->type()),
               " is not supported");
    Tensor* Y = ctx.Output(0, X->dims(), to_);
    if (Y == nullptr) return Status::OK();
    return DispatchAll(X->type(), "Cast", [&](auto stag) -> Status {
      using S = typename decltype(stag)::type;
      return DispatchAll(to_, "Cast", [&](auto dtag) -> Status {
        using D = typename decltype(dtag)::type;
        return CastLoop<S, D>(X->data<S>(), Y->data<D>(), X->size(), ctx.threads());
      });
    });
  }

 private:
  ElemType to_ = ElemType::kFloat;
};

}  // namespace

void RegisterCast(KernelRegistry& r) {
  KernelDef d;
  d.op_type = "Cast";
  d.since_version = 1;
  d.end_version = INT_MAX;
  d.create = MakeKernel<CastKernel>();
  r.Register(std::move(d));
}

}  // namespace onyx
