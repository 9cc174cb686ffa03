// Vector types only live inside the per-ISA regions below, whose functions
// call each other only; GCC's note about vector-argument ABI changes between
// ISAs cannot apply.
#pragma GCC diagnostic ignored "-Wpsabi"

#include "providers/cpu/math/sgemm.h"

#include <algorithm>
#include <array>
#include <atomic>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <type_traits>
#include <utility>

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#define ONYX_SGEMM_X86 1
#endif

namespace onyx {
namespace sgemm {
namespace {

// One GEMM call's operands; pa / pb are whole packed operands or null.
struct Args {
  bool trans_a, trans_b;
  int64_t M, N, K;
  float alpha, beta;
  const float* A;
  int64_t lda;
  const float* B;
  int64_t ldb;
  float* C;
  int64_t ldc;
  const float* pa;
  const float* pb;
  const Im2Col2D* im2col;    // B, when given
  const Epilogue* ep;        // or null
  const Im2Col2D* im2col_a;  // A = its transpose, when given
};

// A per-thread packing buffer, grown on demand and kept (at most MC x KC for
// A and KC x 2NC for B, i.e. 192 KiB and 1 MiB on the AVX-512 path).
class Buffer {
 public:
  ~Buffer() { std::free(p_); }
  float* Get(int64_t n) {
    if (n > n_) {
      std::free(p_);
      const size_t bytes = (static_cast<size_t>(n) * sizeof(float) + 63) / 64 * 64;
      p_ = static_cast<float*>(std::aligned_alloc(64, bytes));
      n_ = n;
    }
    return p_;
  }

 private:
  float* p_ = nullptr;
  int64_t n_ = 0;
};

// Whether the im2col B of a conv is read in place by the tiles (RunTask's
// panel-at-a-time loop) instead of packed: a 3x3 "same" stride-1 conv
// (dilation 1, pads 1) has an im2col row (c, kh, kw) that, over output
// positions j, reads x[c*H*W + j + (kh-1)*W + (kw-1)]: contiguous across
// row ends, zero only where the tap leaves the image, so a strip of
// positions is one masked load per half panel, one mask per tap for every
// channel (packing was 15% of such a conv at 64 channels; 1 thread, Zen 5,
// ResNet-50's 3x3 convs 5-9% faster).
// The same holds for a 3x3 conv of stride 2 over the input's phase planes
// (Im2Col2D::phases): every tap reads one phase at a fixed offset.
bool Im2ColInPlace(const Im2Col2D& s) {
  if (s.transposed || s.KH != 3 || s.KW != 3) return false;
  if (s.phases) return true;
  return s.sh == 1 && s.sw == 1 && s.dh == 1 && s.dw == 1 && s.ph == 1 && s.pw == 1 && s.OH == s.H && s.OW == s.W;
}

// Whether Gemm reads B in place, row by row, instead of packing it: for one
// row panel of A (a few rows: packing B would cost more than the product),
// and under a pre-packed A (a conv's weights, B its input: 1x1 convs read
// the image itself). Every row panel of A then walks the same rows of B,
// which stay in L1/L2, and the packing pass (up to a third of the time when
// M is a few dozen rows) is gone: 1 thread, Zen 5, 24x12544x96 177 -> 248
// GFLOP/s, 64x3136x256 222 -> 243, 1024x196x256 even. Not where B's row
// stride is a multiple of 512 floats, whose rows share a few cache sets.
bool BInPlace(const Args& g, int mr) {
  if (g.pb != nullptr || g.im2col != nullptr || g.im2col_a != nullptr || g.trans_b) return false;
  return g.M <= mr || (g.pa != nullptr && g.ldb % 512 != 0);
}

// What each ISA's instance of sgemm_driver.inc provides.
struct Kernel {
  int mr, nr;
  int64_t kc;
  void (*run_task)(const Args&, int64_t m0, int64_t m1, int64_t n0, int64_t n1);
  void (*pack_whole)(bool left, bool trans, int64_t rows, int64_t K, const float* X, int64_t ld, float* dst);
  void (*transpose)(int64_t rows, int64_t cols, const float* src, int64_t lds, float* dst, int64_t ldd,
                    const Epilogue* ep);
};

}  // namespace

#define ONYX_ISA_KERNEL "providers/cpu/math/sgemm_driver.inc"
#include "providers/cpu/common/isa_regions.inc"
#undef ONYX_ISA_KERNEL

namespace {

const Kernel* KernelFor(Isa isa) {
#ifdef ONYX_SGEMM_X86
  if (isa == Isa::kAvx512) return &avx512::kKernel;
  if (isa == Isa::kAvx2) return &avx2::kKernel;
#endif
  (void)isa;
  return nullptr;
}

std::atomic<Isa>& Active() {
  static std::atomic<Isa> active{fastmath::BestIsa()};
  return active;
}

// Below this many multiply-adds a GEMM runs on the calling thread: handing
// out work costs a few microseconds.
constexpr double kThreadedWork = 65536.0 * 4;

}  // namespace

Isa ActiveIsa() { return Active().load(std::memory_order_relaxed); }

Isa SetIsaForTesting(Isa isa) {
  if (static_cast<int>(isa) > static_cast<int>(fastmath::BestIsa())) isa = fastmath::BestIsa();
  Active().store(isa);
  return isa;
}

bool Available() { return KernelFor(ActiveIsa()) != nullptr; }

int TileRows() {
  const Kernel* k = KernelFor(ActiveIsa());
  return k ? k->mr : 0;
}

int TileCols() {
  const Kernel* k = KernelFor(ActiveIsa());
  return k ? k->nr : 0;
}

bool Preferred(bool trans_b, int64_t M, int64_t N, int64_t K, bool a_packed, bool b_packed) {
  if (!Available()) return false;
  // A pre-packed operand is always taken: its kernel may have released the
  // original (KernelInfo::ReleaseConstantInput), which only this path does not read.
  if (a_packed || b_packed) return true;
  if (static_cast<double>(M) * N * K <= 16.0 * 16 * 16) return false;
  // One row times a transposed B: dot products over B's rows in place (RowStream's counterpart).
  if (M == 1 && trans_b) return true;
  if (ActiveIsa() == Isa::kAvx2) return M <= 2 && !trans_b;
  return true;
}

void Packed::Free::operator()(float* p) const { std::free(p); }

Packed Packed::Pack(bool left, bool trans, int64_t rows, int64_t K, const float* X, int64_t ld) {
  Packed p;
  const Isa isa = ActiveIsa();
  const Kernel* k = KernelFor(isa);
  if (k == nullptr || rows <= 0 || K <= 0) return p;
  const int64_t r = left ? k->mr : k->nr, padded = (rows + r - 1) / r * r;
  p.bytes_ = (static_cast<size_t>(padded * K) * sizeof(float) + 63) / 64 * 64;
  p.data_.reset(static_cast<float*>(std::aligned_alloc(64, p.bytes_)));
  if (p.data_ == nullptr) return Packed();  // callers then read the raw operand
  k->pack_whole(left, trans, rows, K, X, ld, p.data_.get());
  p.isa_ = isa;
  p.left_ = left;
  p.rows_ = rows;
  p.depth_ = K;
  return p;
}

Packed PackA(bool trans_a, int64_t M, int64_t K, const float* A, int64_t lda) {
  return Packed::Pack(true, trans_a, M, K, A, lda);
}

Packed PackB(bool trans_b, int64_t K, int64_t N, const float* B, int64_t ldb) {
  return Packed::Pack(false, trans_b, N, K, B, ldb);
}

void Transpose(int64_t rows, int64_t cols, const float* src, int64_t lds, float* dst, int64_t ldd,
               const Epilogue* ep) {
  const Kernel* k = KernelFor(ActiveIsa());
  if (k != nullptr) {
    k->transpose(rows, cols, src, lds, dst, ldd, ep);
    return;
  }
  for (int64_t c = 0; c < cols; ++c) {
    for (int64_t r = 0; r < rows; ++r) {
      float v = src[r * lds + c];
      if (ep != nullptr) {
        if (ep->bias) v += ep->bias[c];
        if (ep->z) v += ep->z[c * ep->ldz + r];
        if (ep->clamp) v = std::min(std::max(v, ep->lo), ep->hi);
      }
      dst[c * ldd + r] = v;
    }
  }
}

bool Usable(const Packed* p, bool left, int64_t rows, int64_t depth) {
  return p != nullptr && !p->empty() && p->isa() == ActiveIsa() && p->left() == left && p->rows() == rows &&
         p->depth() == depth;
}

// How to split C over `threads` tasks: tm row chunks (whole MR panels) times
// tn column chunks (whole W-wide half panels, so a 196-column conv output
// splits 112/84 rather than 128/68; whole panels when B is pre-packed). Each split is costed as its slowest
// task: the multiply-adds of its tiles (rows and W-wide column groups
// rounded up, as the micro-kernel runs them) plus packing what it must pack
// itself (its columns of B unless B is pre-packed, its rows of A unless A
// is), a packed float costing about as much as 80 multiply-adds in FMA lanes
// would (a few cycles per gathered value against 32 FMA lanes per cycle).
// On the deep 1x1 convs of small images this splits the weights, which come
// from memory, between the tasks: the rows of a pre-packed A (a 14x14
// conv's 1024 -> 256 channels: 132 + 124 rows) or the columns of the
// transposed product's pre-packed B (7x7: 256 + 256 channels), each task
// streaming its part once. Measured against that in ResNet-50 (batch 1, 2
// threads, Zen 5, 3-4 interleaved A/B runs, min of 40, loaded machine):
// the 7x7 products split by rows instead (each task streams all weights)
// 20-34% more time per conv; K split in halves (half the weights and half
// the input channels per task, one partial C added in a second pass) 8-15%
// more; a last row chunk taking the rest (512 rows: 252 + 260, not 264 +
// 248) 0-4% more.
struct Split {
  int64_t tm = 1, tn = 1, m_chunk = 0, n_chunk = 0;
};

Split ChooseSplit(const Kernel& k, int threads, int64_t M, int64_t N, int64_t K, bool a_packed, bool b_packed,
                  int w) {
  const int64_t m_panels = (M + k.mr - 1) / k.mr, n_units = (N + w - 1) / w;
  Split best;
  best.m_chunk = m_panels * k.mr;
  best.n_chunk = n_units * w;
  double best_cost = -1.0;
  for (int64_t tm = 1; tm <= threads; ++tm) {
    if (threads % tm != 0) continue;
    const int64_t tn = threads / tm;
    if (tm > m_panels || tn > n_units) continue;
    const int64_t m_chunk = (m_panels + tm - 1) / tm * k.mr, n_chunk = (n_units + tn - 1) / tn * w;
    const double rows = static_cast<double>(std::min(M, m_chunk)), cols = static_cast<double>(std::min(N, n_chunk));
    const double padded_cols = std::ceil(cols / w) * w;
    double cost = rows * padded_cols * static_cast<double>(K);
    if (!b_packed) cost += 80.0 * cols * static_cast<double>(K);
    if (!a_packed) cost += 80.0 * rows * static_cast<double>(K);
    if (best_cost < 0 || cost < best_cost) {
      best_cost = cost;
      best = {tm, tn, m_chunk, n_chunk};
    }
  }
  return best;
}

void Gemm(bool trans_a, bool trans_b, int64_t M, int64_t N, int64_t K, float alpha, const float* A, int64_t lda,
          const float* B, int64_t ldb, float beta, float* C, int64_t ldc, ThreadPool* pool, const Packed* pa,
          const Packed* pb, const Im2Col2D* im2col, const Epilogue* epilogue) {
  const Kernel* k = KernelFor(ActiveIsa());
  if (k == nullptr || M <= 0 || N <= 0 || K <= 0) return;
  Args g{trans_a,
         im2col && !im2col->transposed ? false : trans_b,
         M,
         N,
         K,
         alpha,
         beta,
         A,
         lda,
         B,
         ldb,
         C,
         ldc,
         Usable(pa, true, M, K) ? pa->data() : nullptr,
         (!im2col || im2col->transposed) && Usable(pb, false, N, K) ? pb->data() : nullptr,
         im2col && !im2col->transposed ? im2col : nullptr,
         epilogue,
         im2col && im2col->transposed ? im2col : nullptr};
  if (g.im2col_a != nullptr) g.pa = nullptr;
  // A transposed result: the tasks compute C plain, then each moves its block.
  const Epilogue* to_t = epilogue != nullptr && epilogue->t_out != nullptr ? epilogue : nullptr;
  if (to_t != nullptr) g.ep = nullptr;

  const int threads = pool == nullptr || static_cast<double>(M) * N * K < kThreadedWork ? 1 : pool->NumThreads();
  // B read in place (a few rows, a pre-packed A, a 3x3 "same" im2col) costs nothing to "pack".
  const bool b_in_place = BInPlace(g, k->mr) || (g.im2col != nullptr && Im2ColInPlace(*g.im2col));
  const Split sp = threads > 1 ? ChooseSplit(*k, threads, M, N, K, g.pa != nullptr, g.pb != nullptr || b_in_place,
                                             g.pb != nullptr ? k->nr : k->nr / 2)
                               : Split{1, 1, M, N};
  auto task = [&](int64_t t) {
    const int64_t mi = t / sp.tn, ni = t % sp.tn;
    const int64_t m0 = mi * sp.m_chunk, n0 = ni * sp.n_chunk;
    if (m0 >= M || n0 >= N) return;
    const int64_t m1 = std::min(M, m0 + sp.m_chunk), n1 = std::min(N, n0 + sp.n_chunk);
    k->run_task(g, m0, m1, n0, n1);
    if (to_t != nullptr) {
      Epilogue e = *to_t;
      e.bias = e.bias != nullptr ? e.bias + n0 : nullptr;
      e.z = e.z != nullptr ? e.z + n0 * e.ldz + m0 : nullptr;
      const bool any = e.bias != nullptr || e.z != nullptr || e.clamp;
      k->transpose(m1 - m0, n1 - n0, C + m0 * ldc + n0, ldc, to_t->t_out + n0 * to_t->ldt + m0, to_t->ldt,
                   any ? &e : nullptr);
    }
  };
  if (sp.tm * sp.tn == 1) {
    task(0);
    return;
  }
  ThreadPool::For(pool, sp.tm * sp.tn, 1, [&](int64_t begin, int64_t end) {
    for (int64_t t = begin; t < end; ++t) task(t);
  });
}

}  // namespace sgemm
}  // namespace onyx
