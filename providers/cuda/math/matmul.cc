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
    if (y->size() == 0) return Status::OK();
    if (k == 0) {
      // Empty sums: zeros (cuBLAS takes no leading dimension of 0).
      ONYX_CUDA_RETURN_IF_ERROR(cudaMemsetAsync(y->raw(), 0, y->bytes(), stream()));
      return Status::OK();
    }
    return BroadcastGemm(a->type(), ta, tb, batch, batch_a, batch_b, m, n, k, a->raw(), b->raw(), y->raw());
  }

 private:
  // One batch dimension: its size and the element stride of A, B and Y
  // along it (0 where that operand is broadcast).
  struct BatchDim {
    int64_t size, a, b, y;
  };

  // Y[i] = alpha op(A[i]) op(B[i]) over the broadcast batch `batch` (A's
  // batch `ba`, B's `bb`). Dimensions that step evenly in all three merge; a
  // trailing run where B repeats and A (not transposed) and Y are contiguous
  // folds into A's rows; the
  // largest remaining dimension is the strided batch of each GEMM, and the
  // others (if any) loop here.
  Status BroadcastGemm(ElemType t, bool ta, bool tb, const Dims& batch, const Dims& ba, const Dims& bb, int64_t m, int64_t n, int64_t k,
                       const void* a, const void* b, void* y) const {
    const size_t r = batch.size();
    std::vector<BatchDim> dims;
    int64_t sa = m * k, sb = k * n, sy = m * n;  // strides of the dimension being visited
    std::vector<BatchDim> rev;                    // innermost first
    for (size_t i = r; i-- > 0;) {
      const size_t la = r - ba.size(), lb = r - bb.size();
      const int64_t da = i < la ? 1 : ba[i - la], db = i < lb ? 1 : bb[i - lb];
      rev.push_back({batch[i], da == 1 ? 0 : sa, db == 1 ? 0 : sb, sy});
      sa *= da, sb *= db, sy *= batch[i];
    }
    for (size_t i = rev.size(); i-- > 0;) {  // outermost first
      const BatchDim& d = rev[i];
      if (d.size == 1) continue;
      if (!dims.empty()) {
        BatchDim& p = dims.back();
        if (p.a == d.a * d.size && p.b == d.b * d.size && p.y == d.y * d.size) {
          p = {p.size * d.size, d.a, d.b, d.y};
          continue;
        }
      }
      dims.push_back(d);
    }
    if (!ta && !dims.empty() && dims.back().b == 0 && dims.back().a == m * k && dims.back().y == m * n) {
      m *= dims.back().size;
      dims.pop_back();
    }
    BatchDim strided{1, 0, 0, 0};
    if (!dims.empty()) {
      size_t pick = 0;
      for (size_t i = 1; i < dims.size(); ++i)
        if (dims[i].size > dims[pick].size) pick = i;
      strided = dims[pick];
      dims.erase(dims.begin() + static_cast<std::ptrdiff_t>(pick));
    }
    int64_t loops = 1;
    for (const BatchDim& d : dims) loops *= d.size;
    const size_t es = ElemSize(t);
    for (int64_t l = 0; l < loops; ++l) {
      int64_t rest = l, oa = 0, ob = 0, oy = 0;
      for (size_t i = dims.size(); i-- > 0;) {
        const int64_t j = rest % dims[i].size;
        rest /= dims[i].size;
        oa += j * dims[i].a, ob += j * dims[i].b, oy += j * dims[i].y;
      }
      ONYX_RETURN_IF_ERROR(Gemm(env_, t, ta, tb, m, n, k, alpha_, static_cast<const char*>(a) + oa * es, strided.a,
                                static_cast<const char*>(b) + ob * es, strided.b, 0.f,
                                static_cast<char*>(y) + oy * es, strided.y, strided.size));
    }
    return Status::OK();
  }

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
