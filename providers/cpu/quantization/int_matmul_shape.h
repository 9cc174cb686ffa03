// The shapes of the integer matrix products (MatMulInteger, QLinearMatMul),
// with MatMul's numpy semantics: a 1-D operand gains a dim that the output
// drops again, and the leading batch dims broadcast.
#pragma once

#include <cstdint>

#include <algorithm>
#include <memory>
#include <type_traits>
#include <vector>

#include "providers/cpu/common/broadcast.h"
#include "providers/cpu/math/blas.h"
#include "providers/cpu/quantization/int8_gemm.h"
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

// A constant 2-D int8/uint8 B (input `b_index`, an initializer) packed for
// the VNNI product at kernel creation, so runs skip packing it; null when B
// is not such a constant or the CPU lacks VNNI. As large as B itself.
inline std::shared_ptr<const qlinear::PackedU8S8B> PackConstantB(const KernelInfo& info, int b_index) {
  if (!qlinear::HasU8S8Gemm()) return nullptr;
  const Tensor* b = info.ConstantInput(b_index);
  if (b == nullptr || b->rank() != 2 || (b->type() != ElemType::kInt8 && b->type() != ElemType::kUint8) ||
      b->dims()[0] > qlinear::kU8S8MaxK)
    return nullptr;
  auto packed = std::make_shared<qlinear::PackedU8S8B>();
  qlinear::PackU8S8B(static_cast<const uint8_t*>(b->raw()), b->dims()[1], b->dims()[0], b->dims()[1],
                     b->type() == ElemType::kUint8 ? 0x80 : 0, packed.get());
  return packed;
}

// The exact integer products (A - za[m]) x (B - zb[n]) of every output batch
// of `sh`, for 8-bit codes `a` (all A matrices) and `b` (all B matrices) with
// per-row zero points za[M] and per-column zb[N]. fn(bi, acc) receives output
// batch bi as M*N doubles holding exact integers. On AVX-512 VNNI the codes
// multiply as uint8 x int8 (int8 A and uint8 B shifted by 128, their zero
// points with them; the zero points applied through row and column sums);
// elsewhere SGEMM over exact slices. Small batched products run in parallel
// on `pool`; large ones one at a time, each GEMM threading itself.
// `packed`, when given, is B packed beforehand (PackConstantB).
template <typename TA, typename TB, typename F>
void ForEachIntMatMul(const IntMatMulShape& sh, ThreadPool* pool, const TA* a, const int32_t* za, const TB* b,
                      const int32_t* zb, F&& fn, const qlinear::PackedU8S8B* packed = nullptr) {
  const int64_t M = sh.M, K = sh.K, N = sh.N;
  const int64_t batches = ShapeSize(sh.batch);
  const bool vnni = qlinear::HasU8S8Gemm() && K <= qlinear::kU8S8MaxK;
  constexpr bool a_signed = std::is_signed<TA>::value, b_signed = std::is_signed<TB>::value;
  struct Scratch {
    std::vector<double> acc;
    std::vector<float> af, bslice, gemm;
    std::vector<int32_t> raw, colsum, rowsum;
  };
  auto one = [&](int64_t bi, ThreadPool* gemm_pool, Scratch* s) {
    int64_t oa = 0, ob = 0;
    sh.Offsets(bi, &oa, &ob);
    const TA* am = a + oa * M * K;
    const TB* bm = b + ob * K * N;
    s->acc.resize(static_cast<size_t>(M * N));
    if (vnni) {
      s->raw.resize(static_cast<size_t>(M * N));
      s->colsum.resize(static_cast<size_t>(N));
      s->rowsum.resize(static_cast<size_t>(M));
      const int32_t* colsum = s->colsum.data();
      if (packed != nullptr && packed->K == K && packed->N == N && ob == 0) {
        qlinear::GemmU8S8Packed(gemm_pool, M, reinterpret_cast<const uint8_t*>(am), K, a_signed ? 0x80 : 0, *packed,
                                s->raw.data(), s->rowsum.data());
        colsum = packed->colsum.data();
      } else {
        qlinear::GemmU8S8(gemm_pool, M, N, K, reinterpret_cast<const uint8_t*>(am), K, a_signed ? 0x80 : 0,
                          reinterpret_cast<const uint8_t*>(bm), N, b_signed ? 0 : 0x80, s->raw.data(),
                          s->colsum.data(), s->rowsum.data());
      }
      for (int64_t m = 0; m < M; ++m) {
        const int64_t zam = za[m] + (a_signed ? 128 : 0);
        for (int64_t n = 0; n < N; ++n) {
          const int64_t zbn = zb[n] - (b_signed ? 0 : 128);
          s->acc[m * N + n] = static_cast<double>(s->raw[m * N + n] - zam * colsum[n] - zbn * s->rowsum[m] +
                                                  K * zam * zbn);
        }
      }
    } else {
      s->af.resize(static_cast<size_t>(M * K));
      for (int64_t i = 0; i < M * K; ++i) s->af[i] = static_cast<float>(static_cast<int32_t>(am[i]) - za[i / K]);
      qlinear::ExactIntGemmCodes(M, N, K, s->af.data(), K, bm, zb, s->acc.data(), &s->bslice, &s->gemm);
    }
    fn(bi, static_cast<const double*>(s->acc.data()));
  };
  const double work = static_cast<double>(M) * N * K;
  if (batches > 1 && work <= kBlasSingleThreadWork) {
    ThreadPool::For(pool, batches, std::max<int64_t>(1, static_cast<int64_t>(65536.0 / (work + 1))),
                    [&](int64_t begin, int64_t end) {
                      Scratch s;
                      for (int64_t bi = begin; bi < end; ++bi) one(bi, nullptr, &s);
                    });
  } else {
    Scratch s;
    for (int64_t bi = 0; bi < batches; ++bi) one(bi, pool, &s);
  }
}

}  // namespace onyx
