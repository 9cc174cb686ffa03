// MatMul with numpy semantics: 1-D operands are promoted (and the added dim
// dropped again), leading "batch" dims broadcast against each other.
#include <algorithm>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "providers/cpu/common/dispatch.h"
#include "providers/cpu/common/float_to_int.h"
#include "providers/cpu/common/half_float.h"
#include "providers/kernel.h"
#include "providers/cpu/math/blas.h"
#include "providers/cpu/math/gelu_contrib.h"

namespace onyx {
namespace {

// Where one output batch reads its A and B matrices.
struct BatchPlan {
  int64_t M = 0, N = 0, K = 0;
  Dims out_dims;
  // Offsets (in matrices, not elements) of A and B for each output batch;
  // empty when there is a single GEMM.
  std::vector<int64_t> a_index, b_index;
  int64_t batches = 1;
  // A is folded into one [batches*M, K] matrix against a single B.
  bool fold_a = false;
};

Status PlanMatMul(const Dims& ad, const Dims& bd, BatchPlan* p) {
  ONYX_CHECK_ARG(!ad.empty() && !bd.empty(), "MatMul: inputs A ", ShapeToString(ad), " and B ", ShapeToString(bd),
                 " must have rank >= 1");
  const bool a_vec = ad.size() == 1;
  const bool b_vec = bd.size() == 1;
  Dims a = a_vec ? Dims{1, ad[0]} : ad;
  Dims b = b_vec ? Dims{bd[0], 1} : bd;
  p->M = a[a.size() - 2];
  p->K = a.back();
  p->N = b.back();
  ONYX_CHECK_ARG(b[b.size() - 2] == p->K, "MatMul: inner dimensions differ: A ", ShapeToString(ad), " and B ",
                 ShapeToString(bd));
  ONYX_CHECK_ARG(FitsBlasInt(p->M) && FitsBlasInt(p->N) && FitsBlasInt(p->K), "MatMul: matrix dimensions of A ",
                 ShapeToString(ad), " and B ", ShapeToString(bd), " are too large");

  const size_t ra = a.size() - 2, rb = b.size() - 2, r = std::max(ra, rb);
  Dims batch(r);
  for (size_t i = 0; i < r; ++i) {
    const int64_t da = i + ra >= r ? a[i + ra - r] : 1;
    const int64_t db = i + rb >= r ? b[i + rb - r] : 1;
    ONYX_CHECK_ARG(da == db || da == 1 || db == 1, "MatMul: batch dimensions of A ", ShapeToString(ad), " and B ",
                   ShapeToString(bd), " cannot be broadcast");
    batch[i] = da == 1 ? db : da;
  }
  p->out_dims = batch;
  if (!a_vec) p->out_dims.push_back(p->M);
  if (!b_vec) p->out_dims.push_back(p->N);
  p->batches = ShapeSize(batch);

  int64_t b_batches = 1;
  for (size_t i = 0; i < rb; ++i) b_batches *= b[i];
  // A single B for every batch: [..., M, K] x [K, N] is one [batch*M, K] GEMM.
  if (b_batches == 1) {
    int64_t a_batches = 1;
    for (size_t i = 0; i < ra; ++i) a_batches *= a[i];
    if (a_batches == p->batches && FitsBlasInt(a_batches * p->M)) {
      p->fold_a = true;
      return Status::OK();
    }
  }

  // General case: walk the output batch index, mapping each to A and B by
  // strides that are 0 along broadcast dims.
  std::vector<int64_t> sa(r, 0), sb(r, 0);
  int64_t ma = 1, mb = 1;
  for (size_t i = r; i-- > 0;) {
    if (i + ra >= r) {
      const int64_t d = a[i + ra - r];
      sa[i] = d == 1 ? 0 : ma;
      ma *= d;
    }
    if (i + rb >= r) {
      const int64_t d = b[i + rb - r];
      sb[i] = d == 1 ? 0 : mb;
      mb *= d;
    }
  }
  p->a_index.resize(p->batches);
  p->b_index.resize(p->batches);
  std::vector<int64_t> idx(r, 0);
  int64_t oa = 0, ob = 0;
  for (int64_t n = 0; n < p->batches; ++n) {
    p->a_index[n] = oa;
    p->b_index[n] = ob;
    for (size_t i = r; i-- > 0;) {
      ++idx[i];
      oa += sa[i];
      ob += sb[i];
      if (idx[i] < batch[i]) break;
      oa -= sa[i] * idx[i];
      ob -= sb[i] * idx[i];
      idx[i] = 0;
    }
  }
  return Status::OK();
}

// A constant float B [K,N] (a weight), packed once for the GEMM's
// micro-kernel, or empty. Skipped for narrow B (N below half a panel), where
// the padded copy would mostly hold zeros.
// Runs then read the packed copy only, so the original is released
// (KernelInfo::ReleaseConstantInput).
sgemm::Packed PackConstantB(const KernelInfo& info, bool trans_b) {
  const Tensor* b = info.ConstantInput(1);
  if (b == nullptr || b->type() != ElemType::kFloat || b->rank() != 2) return {};
  const int64_t K = trans_b ? b->dims()[1] : b->dims()[0], N = trans_b ? b->dims()[0] : b->dims()[1];
  if (N < 16 || K < 1 || !FitsBlasInt(N) || !FitsBlasInt(K)) return {};
  sgemm::Packed packed = sgemm::PackB(trans_b, K, N, b->data<float>(), b->dims()[1]);
  if (!packed.empty()) info.ReleaseConstantInput(1);
  return packed;
}

class MatMulKernel : public OpKernel {
 public:
  Status Init(const KernelInfo& info) {
    packed_b_ = PackConstantB(info, false);
    return Status::OK();
  }

  Status Compute(KernelContext& ctx) const override {
    Tensor* y = nullptr;
    return MatMulInto(ctx, &y);
  }

 protected:
  // Y = A x B into output 0, which *y receives (null when omitted).
  Status MatMulInto(KernelContext& ctx, Tensor** y_out) const {
    const Tensor* a = nullptr;
    const Tensor* b = nullptr;
    ONYX_RETURN_IF_ERROR(ctx.RequiredInput(0, &a));
    ONYX_RETURN_IF_ERROR(ctx.RequiredInput(1, &b));
    ONYX_CHECK_ARG(a->type() == b->type(), "MatMul: inputs A (", ElemTypeName(a->type()), ") and B (",
                   ElemTypeName(b->type()), ") must have the same element type");
    BatchPlan p;
    ONYX_RETURN_IF_ERROR(PlanMatMul(a->dims(), b->dims(), &p));
    Tensor* y = *y_out = ctx.Output(0, p.out_dims, a->type());
    if (y == nullptr || y->size() == 0) return Status::OK();

    if (a->type() == ElemType::kFloat16) return ComputeThroughFloat<Float16>(ctx, *a, *b, p, y);
    if (a->type() == ElemType::kBFloat16) return ComputeThroughFloat<BFloat16>(ctx, *a, *b, p, y);
    return Multiply(ctx, *a, *b, p, y, 1.0, b->rank() == 2 ? &packed_b_ : nullptr);
  }

  // A constant 2-D B packed at Init (float only), else empty; the packed copy
  // adds K x N rounded up to whole panels of floats to the session.
  sgemm::Packed packed_b_;

  // 16-bit floats: widened to float, multiplied with float accumulation (as
  // onnxruntime's CPU kernels do), rounded once on the way back.
  template <typename H>
  static Status ComputeThroughFloat(KernelContext& ctx, const Tensor& a, const Tensor& b, const BatchPlan& p,
                                    Tensor* y, double alpha = 1.0) {
    Tensor af = WidenToFloat<H>(a), bf = WidenToFloat<H>(b);
    Tensor yf(ElemType::kFloat, y->dims());
    ONYX_RETURN_IF_ERROR(Multiply(ctx, af, bf, p, &yf, alpha));
    NarrowFromFloat<H>(yf, y);
    return Status::OK();
  }

  // `packed_b`: B packed at Init (a 2-D constant), or null. `trans_b`: each
  // matrix of B is stored [N, K] (FusedMatMul's transB), read in place.
  static Status Multiply(KernelContext& ctx, const Tensor& a_in, const Tensor& b_in, const BatchPlan& p, Tensor* y,
                         double alpha = 1.0, const sgemm::Packed* packed_b = nullptr, bool trans_b = false) {
    const Tensor* a = &a_in;
    const Tensor* b = &b_in;
    return DispatchNumeric(a->type(), "MatMul", [&](auto tag) -> Status {
      using T = typename decltype(tag)::type;
      const T* av = a->data<T>();
      const T* bv = b->data<T>();
      T* yv = y->data<T>();
      const int64_t M = p.M, N = p.N, K = p.K;
      const T scale = FromFloat<T>(alpha);  // FusedMatMul alpha: any float, ints included
      const int64_t ldb = trans_b ? K : N;
      if (p.fold_a) {
        BlasGemm<T>(false, trans_b, p.batches * M, N, K, scale, av, K, bv, ldb, T(0), yv, N, ctx.threads(), nullptr,
                    packed_b);
        return Status::OK();
      }
      // `pool`: null inside work already spread over the pool.
      auto gemms = [&](int64_t begin, int64_t end, ThreadPool* pool) {
        for (int64_t n = begin; n < end; ++n)
          BlasGemm<T>(false, trans_b, M, N, K, scale, av + p.a_index[n] * M * K, K, bv + p.b_index[n] * K * N, ldb,
                      T(0), yv + n * M * N, N, pool, nullptr, packed_b);
      };
      // Small GEMMs (attention heads) run whole on one thread each, spread
      // over the pool; big ones are split across it one at a time, unless
      // there are enough to share out whole (no split means no packing twice
      // and no hand-off per GEMM). Float GEMMs always go whole then, on our
      // SGEMM or OpenBLAS alike: OpenBLAS's sums depend on its thread count,
      // and MultiHeadAttention's per-head GEMMs run whole on one thread, so
      // an attention graph gives the same bits fused or not.
      const double work = static_cast<double>(M) * N * K;
      const int threads = ctx.threads() != nullptr ? ctx.threads()->NumThreads() : 1;
      const bool whole = std::is_same<T, float>::value && p.batches >= 2 * threads;
      if (work <= kBlasSingleThreadWork || whole) {
        const int64_t min_chunk = std::max<int64_t>(1, static_cast<int64_t>(32768.0 / std::max(work, 1.0)));
        ThreadPool::For(ctx.threads(), p.batches, min_chunk,
                        [&](int64_t begin, int64_t end) { gemms(begin, end, nullptr); });
      } else {
        gemms(0, p.batches, ctx.threads());
      }
      return Status::OK();
    });
  }
};

// A copy of `t` with its last two dims swapped (a no-op view for rank < 2).
template <typename T>
Tensor SwapLastTwo(const Tensor& t) {
  Dims d = t.dims();
  const size_t r = d.size();
  std::swap(d[r - 1], d[r - 2]);
  Tensor out(t.type(), d);
  const int64_t rows = t.dims()[r - 2], cols = t.dims()[r - 1], mats = rows * cols == 0 ? 0 : t.size() / (rows * cols);
  const T* src = t.data<T>();
  T* dst = out.data<T>();
  for (int64_t m = 0; m < mats; ++m)
    for (int64_t i = 0; i < rows; ++i)
      for (int64_t j = 0; j < cols; ++j) dst[m * rows * cols + j * rows + i] = src[m * rows * cols + i * cols + j];
  return out;
}

// com.microsoft FusedMatMul (onnxruntime's transformer optimizer folds a
// Transpose and a scaling into MatMul): Y = alpha * op(A) x op(B), op a swap
// of the last two dims when transA/transB is set; MatMul's broadcasting.
class FusedMatMulKernel final : public MatMulKernel {
 public:
  Status Init(const KernelInfo& info) {
    node_ = info.node().Describe();
    alpha_ = info.AttrFloat("alpha", 1.f);
    trans_a_ = info.AttrInt("transA", 0) != 0;
    trans_b_ = info.AttrInt("transB", 0) != 0;
    for (const char* a : {"transBatchA", "transBatchB"})
      ONYX_CHECK(info.AttrInt(a, 0) == 0, ErrorCode::kNotImplemented, node_, ": attribute ", a,
                 "=1 (moving the batch dims into the matrix) is not supported");
    // transB swaps B's last dims by copying at run time; only plain B is packed.
    if (!trans_b_) packed_b_ = PackConstantB(info, false);
    return Status::OK();
  }

  Status Compute(KernelContext& ctx) const override {
    const Tensor* a = nullptr;
    const Tensor* b = nullptr;
    ONYX_RETURN_IF_ERROR(ctx.RequiredInput(0, &a));
    ONYX_RETURN_IF_ERROR(ctx.RequiredInput(1, &b));
    ONYX_CHECK_ARG(a->type() == b->type(), node_, ": inputs A (", ElemTypeName(a->type()), ") and B (",
                   ElemTypeName(b->type()), ") must have the same element type");
    return DispatchOver(TypeSet<float, double, Float16, BFloat16>{}, a->type(), "FusedMatMul", [&](auto tag) -> Status {
      using T = typename decltype(tag)::type;
      const sgemm::Packed* packed_b = !trans_b_ && b->rank() == 2 ? &packed_b_ : nullptr;
      // float and double read a transposed B in place (the GEMM's transB);
      // the 16-bit types, widened first, and a transposed A are copied.
      constexpr bool kInPlaceB = std::is_same<T, float>::value || std::is_same<T, double>::value;
      const bool b_in_place = kInPlaceB && trans_b_ && b->rank() >= 2;
      Tensor at, bt;
      if (trans_a_ && a->rank() >= 2) a = &(at = SwapLastTwo<T>(*a));
      if (trans_b_ && b->rank() >= 2 && !b_in_place) b = &(bt = SwapLastTwo<T>(*b));
      Dims bd = b->dims();
      if (b_in_place) std::swap(bd[bd.size() - 1], bd[bd.size() - 2]);
      BatchPlan p;
      ONYX_RETURN_IF_ERROR(PlanMatMul(a->dims(), bd, &p));
      Tensor* y = ctx.Output(0, p.out_dims, a->type());
      if (y == nullptr || y->size() == 0) return Status::OK();
      if (a->type() == ElemType::kFloat16) return ComputeThroughFloat<Float16>(ctx, *a, *b, p, y, alpha_);
      if (a->type() == ElemType::kBFloat16) return ComputeThroughFloat<BFloat16>(ctx, *a, *b, p, y, alpha_);
      return Multiply(ctx, *a, *b, p, y, alpha_, packed_b, b_in_place);
    });
  }

 private:
  std::string node_;
  float alpha_ = 1.f;
  bool trans_a_ = false, trans_b_ = false;
};

// com.microsoft GemmFastGelu (the optimizer's enable_gemm_fast_gelu: a MatMul
// and its FastGelu with bias): Y = FastGelu(X x W + bias), MatMul's shapes,
// bias optional and 1-D over Y's last axis. onnxruntime runs it on GPUs only.
class GemmFastGeluKernel final : public MatMulKernel {
 public:
  Status Compute(KernelContext& ctx) const override {
    const Tensor* bias = ctx.InputCount() > 2 ? ctx.Input(2) : nullptr;
    if (bias != nullptr) {
      const Tensor* w = nullptr;
      ONYX_RETURN_IF_ERROR(ctx.RequiredInput(1, &w));
      const int64_t n = w->rank() >= 1 ? w->dims().back() : 0;
      ONYX_CHECK_ARG(bias->type() == w->type() && bias->rank() == 1 && bias->dims()[0] == n,
                     "GemmFastGelu: input 2 (bias) ", ElemTypeName(bias->type()), " ", ShapeToString(bias->dims()),
                     " must be 1-D of ", n, " values (the last dimension of input 1 (W) ", ShapeToString(w->dims()),
                     ") of its type ", ElemTypeName(w->type()));
    }
    Tensor* y = nullptr;
    ONYX_RETURN_IF_ERROR(MatMulInto(ctx, &y));
    if (y == nullptr || y->size() == 0) return Status::OK();
    return DispatchOver(TypeSet<float, double, Float16, BFloat16>{}, y->type(), "GemmFastGelu",
                        [&](auto tag) -> Status {
      using T = typename decltype(tag)::type;
      const int64_t last = y->rank() >= 1 ? y->dims().back() : 1;
      FastGeluWithBias<T>(y->data<T>(), bias != nullptr ? bias->data<T>() : nullptr, last, y->data<T>(), y->size(),
                          ctx.threads());
      return Status::OK();
    });
  }
};

}  // namespace

ONYX_REGISTER_KERNEL(GemmFastGeluKernel, "com.microsoft", "GemmFastGelu", 1, kMaxVersion,
                     {ElemType::kFloat, ElemType::kFloat16, ElemType::kBFloat16});
ONYX_REGISTER_KERNEL(FusedMatMulKernel, "com.microsoft", "FusedMatMul", 1, kMaxVersion,
                     {ElemType::kFloat, ElemType::kDouble, ElemType::kFloat16, ElemType::kBFloat16});
// com.microsoft SparseToDenseMatMul: the same product with a sparse A, which
// the session densifies before kernels see it.
ONYX_REGISTER_KERNEL(FusedMatMulKernel, "com.microsoft", "SparseToDenseMatMul", 1, kMaxVersion,
                     {ElemType::kFloat, ElemType::kDouble});
ONYX_REGISTER_KERNEL(MatMulKernel, "", "MatMul", 1, kMaxVersion,
                     {ElemType::kFloat, ElemType::kDouble, ElemType::kInt32, ElemType::kInt64, ElemType::kUint32,
                      ElemType::kUint64, ElemType::kFloat16, ElemType::kBFloat16});

}  // namespace onyx
