// The shapes of the integer matrix products (MatMulInteger, QLinearMatMul),
// with MatMul's numpy semantics: a 1-D operand gains a dim that the output
// drops again, and the leading batch dims broadcast.
#pragma once

#include <cstdint>

#include <algorithm>
#include <vector>

#include "providers/cpu/common/broadcast.h"
#include "providers/cpu/math/blas.h"
#include "providers/cpu/quantization/qlinear_common.h"
#include "providers/kernel.h"

namespace onyx {

struct IntMatMulShape {
  int64_t M = 0, K = 0, N = 0;
  Dims abatch, bbatch, batch, out_dims;
  Dims sa, sb;  // batch strides of A and B in whole matrices, 0 along broadcast dims

  // Which A and B matrices (counted in whole matrices) output batch `bi` multiplies.
  void Offsets(int64_t bi, int64_t* oa, int64_t* ob) const {
    int64_t r = bi;
    *oa = 0;
    *ob = 0;
    for (size_t d = batch.size(); d-- > 0;) {
      const int64_t idx = r % batch[d];
      r /= batch[d];
      *oa += idx * sa[d];
      *ob += idx * sb[d];
    }
  }
};

// Resolves the product of `ad0` x `bd0` for `op`, whose operands are inputs
// `ai` (`an`) and `bi` (`bn`) in messages. With `blas_ints`, M, N and K must
// also fit one BLAS call.
inline Status ResolveIntMatMul(const Dims& ad0, const Dims& bd0, const char* op, int ai, const char* an, int bi,
                               const char* bn, bool blas_ints, IntMatMulShape* s) {
  ONYX_CHECK_ARG(!ad0.empty() && !bd0.empty(), op, ": inputs ", ai, " (", an, ") ", ShapeToString(ad0), " and ", bi,
                 " (", bn, ") ", ShapeToString(bd0), " must have rank >= 1");
  const bool a_vec = ad0.size() == 1, b_vec = bd0.size() == 1;
  const Dims ad = a_vec ? Dims{1, ad0[0]} : ad0;
  const Dims bd = b_vec ? Dims{bd0[0], 1} : bd0;
  s->M = ad[ad.size() - 2];
  s->K = ad.back();
  s->N = bd.back();
  ONYX_CHECK_ARG(bd[bd.size() - 2] == s->K, op, ": inner dimensions of input ", ai, " (", an, ") ",
                 ShapeToString(ad0), " and input ", bi, " (", bn, ") ", ShapeToString(bd0), " differ");
  ONYX_CHECK_ARG(!blas_ints || (FitsBlasInt(s->M) && FitsBlasInt(s->N) && FitsBlasInt(s->K)), op, ": inputs ", ai,
                 " (", an, ") ", ShapeToString(ad0), " and ", bi, " (", bn, ") ", ShapeToString(bd0),
                 " are too large for one GEMM");
  s->abatch.assign(ad.begin(), ad.end() - 2);
  s->bbatch.assign(bd.begin(), bd.end() - 2);
  ONYX_RETURN_IF_ERROR(BroadcastShapes(s->abatch, s->bbatch, &s->batch, op));
  s->out_dims = s->batch;
  if (!a_vec) s->out_dims.push_back(s->M);
  if (!b_vec) s->out_dims.push_back(s->N);
  s->sa = BroadcastStrides(s->abatch, s->batch);
  s->sb = BroadcastStrides(s->bbatch, s->batch);
  return Status::OK();
}

// The exact integer products of every output batch of `sh`: `a` holds all A
// matrices less their zero points as floats, `b` the raw 8-bit codes of all B
// matrices with per-column zero points zb[N]. fn(bi, acc) receives output
// batch bi as M*N doubles holding exact integers. Small batched products run
// in parallel on `pool`; large ones one at a time, BLAS threading each.
template <typename TB, typename F>
void ForEachIntMatMul(const IntMatMulShape& sh, ThreadPool* pool, const float* a, const TB* b, const int32_t* zb,
                      F&& fn) {
  const int64_t M = sh.M, K = sh.K, N = sh.N;
  const int64_t batches = ShapeSize(sh.batch);
  auto one = [&](int64_t bi, std::vector<double>* acc, std::vector<float>* bslice, std::vector<float>* scratch) {
    int64_t oa = 0, ob = 0;
    sh.Offsets(bi, &oa, &ob);
    acc->resize(static_cast<size_t>(M * N));
    qlinear::ExactIntGemmCodes(M, N, K, a + oa * M * K, K, b + ob * K * N, zb, acc->data(), bslice, scratch);
    fn(bi, static_cast<const double*>(acc->data()));
  };
  const double work = static_cast<double>(M) * N * K;
  if (batches > 1 && work <= kBlasSingleThreadWork) {
    ThreadPool::For(pool, batches, std::max<int64_t>(1, static_cast<int64_t>(65536.0 / (work + 1))),
                    [&](int64_t begin, int64_t end) {
                      std::vector<double> acc;
                      std::vector<float> bslice, scratch;
                      for (int64_t bi = begin; bi < end; ++bi) one(bi, &acc, &bslice, &scratch);
                    });
  } else {
    std::vector<double> acc;
    std::vector<float> bslice, scratch;
    for (int64_t bi = 0; bi < batches; ++bi) one(bi, &acc, &bslice, &scratch);
  }
}

}  // namespace onyx
