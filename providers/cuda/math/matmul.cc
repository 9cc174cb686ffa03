// MatMul, Gemm, FusedMatMul and FusedGemm on cuBLAS (cublasGemmStridedBatchedEx). Row-major C = A B
// is column-major C^T = B^T A^T, so B is passed first. Float runs in strict
// FP32 unless the session set use_tf32=1.
#include "providers/cuda/math/gemm.h"

#include "providers/cuda/common/launch.h"

namespace onyx {
namespace cuda {
namespace {

struct GemmTypes {
  cudaDataType data;
  cublasComputeType_t compute;
};

Status TypesFor(ElemType t, bool tf32, GemmTypes* out) {
  switch (t) {
    case ElemType::kFloat:
      *out = {CUDA_R_32F, tf32 ? CUBLAS_COMPUTE_32F_FAST_TF32 : CUBLAS_COMPUTE_32F};
      return Status::OK();
    case ElemType::kFloat16: *out = {CUDA_R_16F, CUBLAS_COMPUTE_32F}; return Status::OK();
    case ElemType::kBFloat16: *out = {CUDA_R_16BF, CUBLAS_COMPUTE_32F}; return Status::OK();
    case ElemType::kDouble: *out = {CUDA_R_64F, CUBLAS_COMPUTE_64F}; return Status::OK();
    default:
      return MakeError(ErrorCode::kNotImplemented, "no CUDA GEMM for element type ", ElemTypeName(t));
  }
}

}  // namespace

Status Gemm(const CudaEnv& env, ElemType t, bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, float alpha,
            const void* a, int64_t stride_a, const void* b, int64_t stride_b, float beta, void* y, int64_t stride_y,
            int64_t batch) {
  if (m == 0 || n == 0 || batch == 0) return Status::OK();
  GemmTypes gt;
  ONYX_RETURN_IF_ERROR(TypesFor(t, env.use_tf32, &gt));
  const int64_t lim = INT32_MAX;
  if (m > lim || n > lim || k > lim || batch > lim)
    return MakeError(ErrorCode::kNotImplemented, "GEMM dimensions above 2^31 are not supported on CUDA");
  double alpha_d = alpha, beta_d = beta;
  const void* pa = t == ElemType::kDouble ? static_cast<const void*>(&alpha_d) : &alpha;
  const void* pb = t == ElemType::kDouble ? static_cast<const void*>(&beta_d) : &beta;
  return CublasStatus(env.blas->cublasGemmStridedBatchedEx(
                          env.cublas, trans_b ? CUBLAS_OP_T : CUBLAS_OP_N, trans_a ? CUBLAS_OP_T : CUBLAS_OP_N,
                          static_cast<int>(n), static_cast<int>(m), static_cast<int>(k), pa, b, gt.data,
                          static_cast<int>(trans_b ? k : n), stride_b, a, gt.data, static_cast<int>(trans_a ? m : k),
                          stride_a, pb, y, gt.data, static_cast<int>(n), stride_y, static_cast<int>(batch),
                          gt.compute, CUBLAS_GEMM_DEFAULT),
                      "cublasGemmStridedBatchedEx");
}

namespace {

// MatMul, and com.microsoft FusedMatMul: alpha * op(A) op(B), op swapping
// the last two dims of an input of rank >= 2 when transA/transB is set.
class MatMul final : public CudaKernel {
 public:
  using CudaKernel::CudaKernel;
  Status Init(const KernelInfo& info) {
    if (info.node().op_type != "FusedMatMul") return Status::OK();
    alpha_ = info.AttrFloat("alpha", 1.f);
    trans_a_ = info.AttrInt("transA", 0) != 0;
    trans_b_ = info.AttrInt("transB", 0) != 0;
    for (const char* a : {"transBatchA", "transBatchB"})
      ONYX_CHECK(info.AttrInt(a, 0) == 0, ErrorCode::kNotImplemented, "CUDA FusedMatMul: attribute ", a,
                 " is run by the CPU kernel");
    return Status::OK();
  }
  Status Compute(KernelContext& ctx) const override {
    const Tensor *a, *b;
    ONYX_RETURN_IF_ERROR(ctx.RequiredInput(0, &a));
    ONYX_RETURN_IF_ERROR(ctx.RequiredInput(1, &b));
    Dims da = a->dims(), db = b->dims();
    ONYX_CHECK_ARG(!da.empty() && !db.empty(), "MatMul inputs must not be scalars");
    const bool a_vec = da.size() == 1, b_vec = db.size() == 1;
    const bool ta = trans_a_ && !a_vec, tb = trans_b_ && !b_vec;
    if (a_vec) da.insert(da.begin(), 1);
    if (b_vec) db.push_back(1);
    const int64_t m = ta ? da.back() : da[da.size() - 2], k = ta ? da[da.size() - 2] : da.back();
    const int64_t kb = tb ? db.back() : db[db.size() - 2], n = tb ? db[db.size() - 2] : db.back();
    ONYX_CHECK_ARG(kb == k, "MatMul inner dimensions differ: A ", ShapeToString(a->dims()), trans_a_ ? " (transA)" : "",
                   ", B ", ShapeToString(b->dims()), trans_b_ ? " (transB)" : "");
    Dims batch_a(da.begin(), da.end() - 2), batch_b(db.begin(), db.end() - 2), batch;
    ONYX_RETURN_IF_ERROR(BroadcastShape(batch_a, batch_b, &batch));
    Dims out = batch;
    if (!a_vec) out.push_back(m);
    if (!b_vec) out.push_back(n);
    Tensor* y = ctx.Output(0, out, a->type());
    const int64_t nb = ShapeSize(batch), na = ShapeSize(batch_a), nbb = ShapeSize(batch_b);
    if (nbb == 1 && !ta) {
      // One B for all: the batch folds into A's rows, one GEMM.
      return Gemm(env_, a->type(), false, tb, m * na, n, k, alpha_, a->raw(), 0, b->raw(), 0, 0.f, y->raw(), 0, 1);
    }
    if ((na == nb || na == 1) && (nbb == nb || nbb == 1))
      return Gemm(env_, a->type(), ta, tb, m, n, k, alpha_, a->raw(), na == 1 ? 0 : m * k, b->raw(),
                  nbb == 1 ? 0 : k * n, 0.f, y->raw(), m * n, nb);
    return MakeError(ErrorCode::kNotImplemented, "MatMul on CUDA broadcasts whole batches only; got A ",
                     ShapeToString(a->dims()), " and B ", ShapeToString(b->dims()));
  }

 private:
  float alpha_ = 1.f;
  bool trans_a_ = false, trans_b_ = false;
};

class GemmKernel final : public CudaKernel {
 public:
  using CudaKernel::CudaKernel;
  Status Init(const KernelInfo& info) {
    trans_a_ = info.AttrInt("transA", 0) != 0;
    trans_b_ = info.AttrInt("transB", 0) != 0;
    alpha_ = info.AttrFloat("alpha", 1.f);
    beta_ = info.AttrFloat("beta", 1.f);
    if (info.node().op_type == "FusedGemm") {
      const std::string act = info.AttrString("activation", "");
      if (act == "Relu") activation_ = UnaryOp::kRelu;
      else if (act == "Tanh") activation_ = UnaryOp::kTanh;
      else if (act == "Sigmoid") activation_ = UnaryOp::kSigmoid;
      else if (!act.empty())
        return MakeError(ErrorCode::kNotImplemented, "CUDA FusedGemm: activation '", act,
                         "' is run by the CPU kernel (Relu, Tanh and Sigmoid are on CUDA)");
      has_activation_ = !act.empty();
    }
    return Status::OK();
  }
  Status Compute(KernelContext& ctx) const override {
    const Tensor *a, *b;
    ONYX_RETURN_IF_ERROR(ctx.RequiredInput(0, &a));
    ONYX_RETURN_IF_ERROR(ctx.RequiredInput(1, &b));
    const Tensor* c = ctx.Input(2);
    ONYX_CHECK_ARG(a->rank() == 2 && b->rank() == 2, "Gemm inputs A and B must be 2-D, got ",
                   ShapeToString(a->dims()), " and ", ShapeToString(b->dims()));
    const int64_t m = trans_a_ ? a->dims()[1] : a->dims()[0], k = trans_a_ ? a->dims()[0] : a->dims()[1];
    const int64_t kb = trans_b_ ? b->dims()[1] : b->dims()[0], n = trans_b_ ? b->dims()[0] : b->dims()[1];
    ONYX_CHECK_ARG(k == kb, "Gemm inner dimensions differ: A ", ShapeToString(a->dims()), " (transA=", trans_a_,
                   "), B ", ShapeToString(b->dims()), " (transB=", trans_b_, ")");
    Tensor* y = ctx.Output(0, {m, n}, a->type());
    float beta = 0.f;
    if (c && beta_ != 0.f && m * n > 0) {
      // Y starts as C broadcast to [M, N]; the GEMM then adds to it.
      IndexMap map;
      Dims bc;
      ONYX_RETURN_IF_ERROR(BroadcastShape(c->dims(), {m, n}, &bc));
      ONYX_CHECK_ARG(bc == Dims({m, n}), "Gemm input C ", ShapeToString(c->dims()), " does not broadcast to [", m,
                     ",", n, "]");
      ONYX_RETURN_IF_ERROR(BroadcastMap({m, n}, {c->dims()}, &map));
      ONYX_RETURN_IF_ERROR(LaunchStridedCopy(ElemSize(c->type()), map, m * n, c->raw(), y->raw(), stream()));
      beta = beta_;
    }
    ONYX_RETURN_IF_ERROR(
        Gemm(env_, a->type(), trans_a_, trans_b_, m, n, k, alpha_, a->raw(), 0, b->raw(), 0, beta, y->raw(), 0, 1));
    if (!has_activation_) return Status::OK();
    return LaunchUnary(activation_, y->type(), y->size(), y->raw(), y->raw(), stream());
  }

 private:
  bool trans_a_ = false, trans_b_ = false;
  float alpha_ = 1.f, beta_ = 1.f;
  bool has_activation_ = false;  // FusedGemm's
  UnaryOp activation_ = UnaryOp::kRelu;
};

std::vector<ElemType> GemmElemTypes() {
  return {ElemType::kFloat, ElemType::kFloat16, ElemType::kBFloat16, ElemType::kDouble};
}

}  // namespace

ONYX_REGISTER_CUDA_KERNEL(MatMul, "", "MatMul", 1, kMaxVersion, GemmElemTypes());
ONYX_REGISTER_CUDA_KERNEL(GemmKernel, "", "Gemm", 7, kMaxVersion, GemmElemTypes());
ONYX_REGISTER_CUDA_KERNEL(MatMul, "com.microsoft", "FusedMatMul", 1, kMaxVersion, GemmElemTypes());
ONYX_REGISTER_CUDA_KERNEL(GemmKernel, "com.microsoft", "FusedGemm", 1, kMaxVersion, FloatTypes());

}  // namespace cuda
}  // namespace onyx
