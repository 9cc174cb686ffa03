// Gemm: Y = alpha * op(A) * op(B) + beta * C, C broadcast to [M,N].
// The same kernel runs onnxruntime's com.microsoft FusedGemm (its optimizer
// fuses Gemm + activation): Gemm's attributes plus `activation` (Relu,
// LeakyRelu, Tanh, Sigmoid, HardSigmoid, Elu, Selu, Softsign, Softplus,
// ThresholdedRelu) whose own attributes are prefixed "activation_"
// (activation_alpha, activation_beta, activation_gamma), applied to Y.
#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <string>
#include <type_traits>

#include "providers/cpu/common/dispatch.h"
#include "providers/cpu/common/fast_math.h"
#include "providers/cpu/common/float_to_int.h"
#include "providers/cpu/common/half_float.h"
#include "providers/cpu/math/blas.h"
#include "providers/kernel.h"

// Present only in DYNAMIC_ARCH builds of OpenBLAS (Debian's is one); weak so
// that other builds still link.
extern "C" void gotoblas_dynamic_init(void) __attribute__((weak));
extern "C" void gotoblas_dynamic_quit(void) __attribute__((weak));

namespace onyx {
namespace {

// OpenBLAS picks its kernels from the CPU model number. Virtual machines often
// report a generic "Intel Xeon Processor" it does not know, and it falls back
// to SSE3 (Prescott) kernels: about 5x slower SGEMM on an AVX-512 machine.
// When that happened, and the user did not choose with OPENBLAS_CORETYPE,
// re-select the kernels from the CPU's feature flags. This runs while the
// library is being loaded, before any session exists, so no GEMM can be running.
bool SelectBlasKernels() {
#if defined(__x86_64__) || defined(__i386__)
  if (!gotoblas_dynamic_init || !gotoblas_dynamic_quit || std::getenv("OPENBLAS_CORETYPE") != nullptr) return false;
  const char* core = openblas_get_corename();
  static const char* kFallbacks[] = {"Prescott", "Core2", "Penryn", "Dunnington", "Nehalem", "Atom", "Banias",
                                     "Katmai", "Coppermine", "Northwood", "unknown"};
  bool fallback = false;
  for (const char* f : kFallbacks) fallback = fallback || (core != nullptr && std::strcmp(core, f) == 0);
  if (!fallback) return false;
  __builtin_cpu_init();
  const char* want = nullptr;
  if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") && __builtin_cpu_supports("avx512vl") &&
      __builtin_cpu_supports("avx512dq")) {
    want = "SkylakeX";
  } else if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) {
    want = "Haswell";
  } else if (__builtin_cpu_supports("avx")) {
    want = "Sandybridge";
  }
  if (want == nullptr) return false;
  // OpenBLAS reads the choice from the environment; do not leak it to children.
  setenv("OPENBLAS_CORETYPE", want, 0);
  gotoblas_dynamic_quit();
  gotoblas_dynamic_init();
  unsetenv("OPENBLAS_CORETYPE");
  return true;
#else
  return false;
#endif
}

[[maybe_unused]] const bool kBlasKernelsSelected = SelectBlasKernels();

// FusedGemm's activation: y = f(y) with the ONNX operator's formula and
// default parameters.
struct GemmActivation {
  enum class Kind { kNone, kRelu, kLeakyRelu, kTanh, kSigmoid, kHardSigmoid, kElu, kSelu, kSoftsign, kSoftplus,
                    kThresholdedRelu };
  Kind kind = Kind::kNone;
  float alpha = 0.f, beta = 0.f, gamma = 0.f;

  Status Parse(const KernelInfo& info) {
    const Attribute* a = info.Attr("activation");
    if (a == nullptr) return Status::OK();
    const std::string& k = a->s;
    struct Entry {
      const char* name;
      Kind kind;
      float alpha, beta, gamma;
    };
    static const Entry kKinds[] = {
        {"Relu", Kind::kRelu, 0.f, 0.f, 0.f},
        {"LeakyRelu", Kind::kLeakyRelu, 0.01f, 0.f, 0.f},
        {"Tanh", Kind::kTanh, 0.f, 0.f, 0.f},
        {"Sigmoid", Kind::kSigmoid, 0.f, 0.f, 0.f},
        {"HardSigmoid", Kind::kHardSigmoid, 0.2f, 0.5f, 0.f},
        {"Elu", Kind::kElu, 1.f, 0.f, 0.f},
        {"Selu", Kind::kSelu, 1.67326319217681884765625f, 0.f, 1.05070102214813232421875f},
        {"Softsign", Kind::kSoftsign, 0.f, 0.f, 0.f},
        {"Softplus", Kind::kSoftplus, 0.f, 0.f, 0.f},
        {"ThresholdedRelu", Kind::kThresholdedRelu, 1.f, 0.f, 0.f},
    };
    for (const Entry& e : kKinds) {
      if (k != e.name) continue;
      kind = e.kind;
      alpha = info.AttrFloat("activation_alpha", e.alpha);
      beta = info.AttrFloat("activation_beta", e.beta);
      gamma = info.AttrFloat("activation_gamma", e.gamma);
      return Status::OK();
    }
    return MakeError(ErrorCode::kNotImplemented, info.node().Describe(), ": activation '", k,
                     "' is not supported (Relu, LeakyRelu, Tanh, Sigmoid, HardSigmoid, Elu, Selu, Softsign, Softplus, "
                     "ThresholdedRelu are)");
  }

  template <typename T>
  void Apply(T* y, int64_t n) const {
    const T a = static_cast<T>(alpha), b = static_cast<T>(beta), g = static_cast<T>(gamma);
    for (int64_t i = 0; i < n; ++i) {
      const T v = y[i];
      switch (kind) {
        case Kind::kNone: return;
        case Kind::kRelu: y[i] = v > T(0) ? v : T(0); break;
        case Kind::kLeakyRelu: y[i] = v >= T(0) ? v : a * v; break;
        case Kind::kTanh: y[i] = std::tanh(v); break;
        case Kind::kSigmoid:
          y[i] = v >= T(0) ? T(1) / (T(1) + std::exp(-v)) : std::exp(v) / (T(1) + std::exp(v));
          break;
        case Kind::kHardSigmoid: y[i] = std::max(T(0), std::min(T(1), a * v + b)); break;
        case Kind::kElu: y[i] = v >= T(0) ? v : a * (std::exp(v) - T(1)); break;
        case Kind::kSelu: y[i] = v > T(0) ? g * v : g * (a * std::exp(v) - a); break;
        case Kind::kSoftsign: y[i] = v / (T(1) + std::abs(v)); break;
        case Kind::kSoftplus: y[i] = v > T(0) ? v + std::log1p(std::exp(-v)) : std::log1p(std::exp(v)); break;
        case Kind::kThresholdedRelu: y[i] = v > a ? v : T(0); break;
      }
    }
  }
};

class GemmKernel final : public OpKernel {
 public:
  Status Init(const KernelInfo& info) {
    if (info.node().op_type == "FusedGemm") ONYX_RETURN_IF_ERROR(act_.Parse(info));
    trans_a_ = info.AttrInt("transA", 0);
    trans_b_ = info.AttrInt("transB", 0);
    ONYX_CHECK(trans_a_ == 0 || trans_a_ == 1, ErrorCode::kInvalidGraph, "Gemm: attribute transA must be 0 or 1, got ",
               trans_a_);
    ONYX_CHECK(trans_b_ == 0 || trans_b_ == 1, ErrorCode::kInvalidGraph, "Gemm: attribute transB must be 0 or 1, got ",
               trans_b_);
    alpha_ = info.AttrFloat("alpha", 1.0f);
    beta_ = info.AttrFloat("beta", 1.0f);
    // A constant float B (a weight) is packed once for the GEMM's micro-kernel.
    const Tensor* b = info.ConstantInput(1);
    if (b != nullptr && b->type() == ElemType::kFloat && b->rank() == 2) {
      const int64_t K = trans_b_ ? b->dims()[1] : b->dims()[0], N = trans_b_ ? b->dims()[0] : b->dims()[1];
      if (N >= 16 && FitsBlasInt(N) && FitsBlasInt(K))
        packed_b_ = sgemm::PackB(trans_b_ != 0, K, N, b->data<float>(), b->dims()[1]);
      // Runs read the packed copy only: the original may go.
      if (!packed_b_.empty()) info.ReleaseConstantInput(1);
    }
    return Status::OK();
  }

  Status Compute(KernelContext& ctx) const override {
    // float16/bfloat16 run the float code, accumulating in float.
    if (const Tensor* in0 = ctx.Input(0); in0 != nullptr && IsHalfType(in0->type()))
      return ComputeThroughFloat(*this, ctx, {{0, 0}});
    const Tensor* a = nullptr;
    const Tensor* b = nullptr;
    ONYX_RETURN_IF_ERROR(ctx.RequiredInput(0, &a));
    ONYX_RETURN_IF_ERROR(ctx.RequiredInput(1, &b));
    const Tensor* c = ctx.Input(2);
    ONYX_CHECK_ARG(a->rank() == 2 && b->rank() == 2, "Gemm: inputs A ", ShapeToString(a->dims()), " and B ",
                   ShapeToString(b->dims()), " must both be 2-D");
    ONYX_CHECK_ARG(b->type() == a->type() && (c == nullptr || c->type() == a->type()),
                   "Gemm: inputs A, B and C must have the same element type");
    const int64_t M = trans_a_ ? a->dims()[1] : a->dims()[0];
    const int64_t K = trans_a_ ? a->dims()[0] : a->dims()[1];
    const int64_t Kb = trans_b_ ? b->dims()[1] : b->dims()[0];
    const int64_t N = trans_b_ ? b->dims()[0] : b->dims()[1];
    ONYX_CHECK_ARG(K == Kb, "Gemm: inner dimensions differ: A ", ShapeToString(a->dims()), (trans_a_ ? " (transposed)" : ""),
                   " and B ", ShapeToString(b->dims()), (trans_b_ ? " (transposed)" : ""));
    ONYX_CHECK_ARG(FitsBlasInt(M) && FitsBlasInt(N) && FitsBlasInt(K), "Gemm: dimensions of A ",
                   ShapeToString(a->dims()), " and B ", ShapeToString(b->dims()), " are too large");

    // C is right-aligned against [M,N]; each of its dims must be 1 or match.
    int64_t c_rows = 1, c_cols = 1;
    if (c != nullptr) {
      const Dims& cd = c->dims();
      bool ok = cd.size() <= 2;
      if (ok && cd.size() >= 1) c_cols = cd.back();
      if (ok && cd.size() == 2) c_rows = cd[0];
      ok = ok && (c_cols == 1 || c_cols == N) && (c_rows == 1 || c_rows == M);
      ONYX_CHECK_ARG(ok, "Gemm: input C ", ShapeToString(cd), " cannot be broadcast to the output [", M, ",", N, "]");
    }

    Tensor* y = ctx.Output(0, {M, N}, a->type());
    if (y == nullptr || M == 0 || N == 0) return Status::OK();
    return DispatchNumeric(a->type(), "Gemm", [&](auto tag) -> Status {
      using T = typename decltype(tag)::type;
      T* out = y->data<T>();
      T beta = FromFloat<T>(beta_);
      if (c != nullptr && beta != T(0)) {
        // Stage C in Y so one GEMM call applies beta to it.
        const T* cv = c->data<T>();
        for (int64_t i = 0; i < M; ++i) {
          const T* row = cv + (c_rows == 1 ? 0 : i * c_cols);
          T* dst = out + i * N;
          if (c_cols == 1) {
            std::fill(dst, dst + N, row[0]);
          } else {
            std::copy(row, row + N, dst);
          }
        }
      } else {
        beta = T(0);
      }
      BlasGemm<T>(trans_a_ != 0, trans_b_ != 0, M, N, K, FromFloat<T>(alpha_), a->data<T>(), a->dims()[1],
                  b->data<T>(), b->dims()[1], beta, out, N, ctx.threads(), nullptr, &packed_b_);
      if constexpr (std::is_floating_point<T>::value) act_.Apply(out, M * N);
      return Status::OK();
    });
  }

 private:
  int64_t trans_a_ = 0;
  int64_t trans_b_ = 0;
  float alpha_ = 1.0f;
  float beta_ = 1.0f;
  GemmActivation act_;  // FusedGemm only
  // B packed at Init when it is a constant float (adds about its size again).
  sgemm::Packed packed_b_;
};

}  // namespace

ONYX_REGISTER_KERNEL(GemmKernel, "", "Gemm", 1, kMaxVersion,
                     {ElemType::kFloat, ElemType::kDouble, ElemType::kInt32, ElemType::kInt64, ElemType::kUint32,
                      ElemType::kUint64, ElemType::kFloat16, ElemType::kBFloat16});
ONYX_REGISTER_KERNEL(GemmKernel, "com.microsoft", "FusedGemm", 1, kMaxVersion,
                     {ElemType::kFloat, ElemType::kDouble, ElemType::kFloat16, ElemType::kBFloat16});

std::string CpuCodePath() {
  (void)kBlasKernelsSelected;  // the selection above has run
  const char* core = openblas_get_corename();
  return std::string(fastmath::IsaName(fastmath::BestIsa())) + " (OpenBLAS " + (core ? core : "unknown") + ")";
}

}  // namespace onyx
