// QLinearMatMul (opset 10; 21 adds float16/bfloat16 scales): MatMul's numpy
// semantics (1-D operands promoted, batch dims broadcast) over int8/uint8
// A and B less their zero points, requantized to y_zero_point's type:
//   y = saturate(round_half_even(acc * a_scale * b_scale / y_scale) + y_zp).
// a's and y's scale and zero point are per tensor or per row of A ([M]), b's
// per tensor or per column of B ([N]). The multiplier is computed in the
// scales' type, as the reference does. Exact sums from ExactIntGemm (qlinear_common.h).
#include <algorithm>
#include <cstdint>
#include <vector>

#include "providers/cpu/common/broadcast.h"
#include "providers/cpu/math/blas.h"
#include "providers/cpu/quantization/int_matmul_shape.h"
#include "providers/cpu/quantization/qlinear_common.h"
#include "providers/kernel.h"

namespace onyx {

namespace {

using qlinear::Int8TypeSet;

class QLinearMatMulKernel final : public OpKernel {
 public:
  Status Init(const KernelInfo&) { return Status::OK(); }

  Status Compute(KernelContext& ctx) const override {
    const char* op = "QLinearMatMul";
    const Tensor* A = nullptr;
    const Tensor* B = nullptr;
    const Tensor* yz = nullptr;
    ONYX_RETURN_IF_ERROR(ctx.RequiredInput(0, &A));
    ONYX_RETURN_IF_ERROR(ctx.RequiredInput(3, &B));
    ONYX_RETURN_IF_ERROR(ctx.RequiredInput(7, &yz));
    IntMatMulShape sh;
    ONYX_RETURN_IF_ERROR(ResolveIntMatMul(A->dims(), B->dims(), op, 0, "a", 3, "b", /*blas_ints=*/true, &sh));
    const int64_t M = sh.M, K = sh.K, N = sh.N;

    const char* per_row = " (one per row of a)";
    const char* per_col = " (one per column of b)";
    std::vector<float> as, bs, ys;
    std::vector<int32_t> za, zb, zy;
    ONYX_RETURN_IF_ERROR(qlinear::ReadScales(ctx.Input(1), op, 1, "a_scale", M, per_row, M, false, &as));
    ONYX_RETURN_IF_ERROR(qlinear::ReadZeroPoints(ctx.Input(2), A, op, 2, "a_zero_point", M, per_row, M, &za));
    ONYX_RETURN_IF_ERROR(qlinear::ReadScales(ctx.Input(4), op, 4, "b_scale", N, per_col, N, false, &bs));
    ONYX_RETURN_IF_ERROR(qlinear::ReadZeroPoints(ctx.Input(5), B, op, 5, "b_zero_point", N, per_col, N, &zb));
    ONYX_RETURN_IF_ERROR(qlinear::ReadScales(ctx.Input(6), op, 6, "y_scale", M, per_row, M, true, &ys));
    ONYX_RETURN_IF_ERROR(qlinear::ReadZeroPoints(yz, nullptr, op, 7, "y_zero_point", M, per_row, M, &zy));
    const ElemType st = ctx.Input(1)->type();
    ONYX_CHECK_ARG(ctx.Input(4)->type() == st && ctx.Input(6)->type() == st, "QLinearMatMul: inputs 1 (a_scale), ",
                   "4 (b_scale) and 6 (y_scale) must have one type, got ", ElemTypeName(st), ", ",
                   ElemTypeName(ctx.Input(4)->type()), ", ", ElemTypeName(ctx.Input(6)->type()));

    // multiplier[m][n], in the scales' type.
    std::vector<float> mult(static_cast<size_t>(M * N));
    ONYX_RETURN_IF_ERROR(DispatchOver(qlinear::ScaleTypeSet{}, st, op, [&](auto tag) -> Status {
      using S = typename decltype(tag)::type;
      for (int64_t m = 0; m < M; ++m)
        for (int64_t n = 0; n < N; ++n) mult[m * N + n] = qlinear::ScaleProduct<S>(as[m], bs[n], ys[m]);
      return Status::OK();
    }));

    Tensor* Y = ctx.Output(0, sh.out_dims, yz->type());
    if (Y == nullptr || Y->size() == 0) return Status::OK();
    const int64_t batches = ShapeSize(sh.batch);
    const int64_t amats = ShapeSize(sh.abatch), bmats = ShapeSize(sh.bbatch);
    // Operands less their zero points, as floats, once per distinct matrix.
    std::vector<float> a(static_cast<size_t>(amats * M * K)), b(static_cast<size_t>(bmats * K * N));
    ONYX_RETURN_IF_ERROR(DispatchOver(Int8TypeSet{}, A->type(), op, [&](auto tag) -> Status {
      using TA = typename decltype(tag)::type;
      const TA* p = A->data<TA>();
      for (int64_t i = 0; i < amats * M * K; ++i)
        a[i] = static_cast<float>(static_cast<int32_t>(p[i]) - za[(i / K) % M]);
      return Status::OK();
    }));
    ONYX_RETURN_IF_ERROR(DispatchOver(Int8TypeSet{}, B->type(), op, [&](auto tag) -> Status {
      using TB = typename decltype(tag)::type;
      const TB* p = B->data<TB>();
      for (int64_t i = 0; i < bmats * K * N; ++i) b[i] = static_cast<float>(static_cast<int32_t>(p[i]) - zb[i % N]);
      return Status::OK();
    }));
    return DispatchOver(Int8TypeSet{}, yz->type(), op, [&](auto tag) -> Status {
      using TY = typename decltype(tag)::type;
      TY* y = Y->data<TY>();
      // `pool`: null inside work already spread over the pool.
      auto one = [&](int64_t bi, std::vector<double>* c, std::vector<float>* scratch, ThreadPool* pool) {
        int64_t oa = 0, ob = 0;
        sh.Offsets(bi, &oa, &ob);
        c->resize(static_cast<size_t>(M * N));
        qlinear::ExactIntGemm(M, N, K, a.data() + oa * M * K, K, b.data() + ob * K * N, N, c->data(), N, scratch,
                              pool);
        TY* yb = y + bi * M * N;
        for (int64_t m = 0; m < M; ++m)
          for (int64_t n = 0; n < N; ++n)
            yb[m * N + n] = qlinear::Requantize<TY>((*c)[m * N + n], mult[m * N + n], zy[m]);
      };
      const double work = static_cast<double>(M) * N * K;
      if (batches > 1 && work <= kBlasSingleThreadWork) {
        ThreadPool::For(ctx.threads(), batches, std::max<int64_t>(1, static_cast<int64_t>(65536.0 / (work + 1))),
                        [&](int64_t begin, int64_t end) {
                          std::vector<double> c;
                          std::vector<float> scratch;
                          for (int64_t bi = begin; bi < end; ++bi) one(bi, &c, &scratch, nullptr);
                        });
      } else {
        std::vector<double> c;
        std::vector<float> scratch;
        for (int64_t bi = 0; bi < batches; ++bi) one(bi, &c, &scratch, ctx.threads());
      }
      return Status::OK();
    });
  }
};

}  // namespace

ONYX_REGISTER_KERNEL(QLinearMatMulKernel, "", "QLinearMatMul", 10, kMaxVersion, Int8TypeSet::ElemTypes());

}  // namespace onyx
