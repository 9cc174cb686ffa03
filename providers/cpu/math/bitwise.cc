// Integer bit operators with numpy broadcasting: BitwiseAnd, BitwiseOr,
// BitwiseXor (opset 18) and BitShift (opset 11: unsigned types; opset 28 adds
// the signed ones, right shifts sign-extending).
#include <cstdint>
#include <string>
#include <type_traits>

#include "providers/cpu/common/broadcast.h"
#include "providers/cpu/common/dispatch.h"
#include "providers/cpu/math/broadcast_binary.h"
#include "providers/kernel.h"

namespace onyx {

namespace {

using IntegerTypeSet = TypeSet<int8_t, int16_t, int32_t, int64_t, uint8_t, uint16_t, uint32_t, uint64_t>;
using UnsignedTypeSet = TypeSet<uint8_t, uint16_t, uint32_t, uint64_t>;

enum class BitOp { kAnd, kOr, kXor, kShiftLeft, kShiftRight };

// Shifts with every amount defined: an amount that is negative or not below
// the width gives what the fill alone gives (0, or -1 for a right shift of a
// negative signed value), as opset 28 spells out; C++ leaves those undefined.
template <typename T>
T ShiftLeft(T x, T y) {
  using U = std::make_unsigned_t<T>;
  constexpr int kBits = static_cast<int>(sizeof(T) * 8);
  if constexpr (std::is_signed<T>::value) {
    if (y < 0) return 0;
  }
  if (static_cast<uint64_t>(y) >= static_cast<uint64_t>(kBits)) return 0;
  // Through the unsigned type: bits past the sign bit are dropped, no UB.
  return static_cast<T>(static_cast<U>(static_cast<U>(x) << static_cast<int>(y)));
}

template <typename T>
T ShiftRight(T x, T y) {
  constexpr int kBits = static_cast<int>(sizeof(T) * 8);
  bool out_of_range = static_cast<uint64_t>(y) >= static_cast<uint64_t>(kBits);
  if constexpr (std::is_signed<T>::value) {
    out_of_range = y < 0 || y >= static_cast<T>(kBits);
    if (out_of_range) return x < 0 ? static_cast<T>(-1) : static_cast<T>(0);
  }
  if (out_of_range) return 0;
  // >> of a negative signed value is arithmetic in every compiler we build
  // with (and defined so from C++20).
  return static_cast<T>(x >> static_cast<int>(y));
}

const char* BitOpName(BitOp op) {
  switch (op) {
    case BitOp::kAnd: return "BitwiseAnd";
    case BitOp::kOr: return "BitwiseOr";
    case BitOp::kXor: return "BitwiseXor";
    default: return "BitShift";
  }
}

class BitwiseBinaryKernel final : public OpKernel {
 public:
  // `signed_ok`: whether this registration's opset accepts signed types.
  BitwiseBinaryKernel(BitOp op, bool signed_ok) : op_(op), signed_ok_(signed_ok) {}

  Status Init(const KernelInfo& info) {
    if (op_ == BitOp::kShiftLeft || op_ == BitOp::kShiftRight) {
      const std::string dir = info.AttrString("direction", "");
      if (dir == "LEFT") {
        op_ = BitOp::kShiftLeft;
      } else if (dir == "RIGHT") {
        op_ = BitOp::kShiftRight;
      } else {
        return MakeError(ErrorCode::kInvalidGraph, "BitShift: attribute direction must be 'LEFT' or 'RIGHT', got '",
                         dir, "'");
      }
    }
    return Status::OK();
  }

  Status Compute(KernelContext& ctx) const override {
    const char* name = BitOpName(op_);
    const Tensor* A = nullptr;
    const Tensor* B = nullptr;
    ONYX_RETURN_IF_ERROR(ctx.RequiredInput(0, &A));
    ONYX_RETURN_IF_ERROR(ctx.RequiredInput(1, &B));
    ONYX_CHECK_ARG(A->type() == B->type(), name, ": input 0 has type ", ElemTypeName(A->type()),
                   " but input 1 has type ", ElemTypeName(B->type()));
    Dims out_dims;
    ONYX_RETURN_IF_ERROR(BroadcastShapes(A->dims(), B->dims(), &out_dims, name));
    BroadcastPlan plan;
    ONYX_RETURN_IF_ERROR(plan.Init({A->dims(), B->dims()}, out_dims, name));
    auto run = [&](auto tag) -> Status {
      using T = typename decltype(tag)::type;
      Tensor* Y = ctx.Output(0, out_dims, A->type());
      if (Y == nullptr) return Status::OK();
      const T* a = A->data<T>();
      const T* b = B->data<T>();
      T* y = Y->data<T>();
      ThreadPool* pool = ctx.threads();
      switch (op_) {
        case BitOp::kAnd: BroadcastBinaryLoop(plan, pool, a, b, y, [](T u, T v) { return static_cast<T>(u & v); }); break;
        case BitOp::kOr: BroadcastBinaryLoop(plan, pool, a, b, y, [](T u, T v) { return static_cast<T>(u | v); }); break;
        case BitOp::kXor: BroadcastBinaryLoop(plan, pool, a, b, y, [](T u, T v) { return static_cast<T>(u ^ v); }); break;
        case BitOp::kShiftLeft: BroadcastBinaryLoop(plan, pool, a, b, y, [](T u, T v) { return ShiftLeft(u, v); }); break;
        case BitOp::kShiftRight: BroadcastBinaryLoop(plan, pool, a, b, y, [](T u, T v) { return ShiftRight(u, v); }); break;
      }
      return Status::OK();
    };
    if (signed_ok_) return DispatchOver(IntegerTypeSet{}, A->type(), name, run);
    return DispatchOver(UnsignedTypeSet{}, A->type(), name, run);
  }

 private:
  BitOp op_;
  bool signed_ok_;
};

}  // namespace

ONYX_REGISTER_KERNEL(BitwiseBinaryKernel, "", "BitwiseAnd", 18, kMaxVersion, IntegerTypeSet::ElemTypes(), BitOp::kAnd, true);
ONYX_REGISTER_KERNEL(BitwiseBinaryKernel, "", "BitwiseOr", 18, kMaxVersion, IntegerTypeSet::ElemTypes(), BitOp::kOr, true);
ONYX_REGISTER_KERNEL(BitwiseBinaryKernel, "", "BitwiseXor", 18, kMaxVersion, IntegerTypeSet::ElemTypes(), BitOp::kXor, true);
// Opset 11-27 defines BitShift on unsigned types only; 28 adds the signed ones.
ONYX_REGISTER_KERNEL(BitwiseBinaryKernel, "", "BitShift", 11, 27, UnsignedTypeSet::ElemTypes(), BitOp::kShiftLeft, false);
ONYX_REGISTER_KERNEL(BitwiseBinaryKernel, "", "BitShift", 28, kMaxVersion, IntegerTypeSet::ElemTypes(), BitOp::kShiftLeft, true);

}  // namespace onyx
