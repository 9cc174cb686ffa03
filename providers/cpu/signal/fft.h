// A complex FFT of any length for the signal kernels (DFT, STFT), in double:
// iterative radix-2 for powers of two, Bluestein's chirp-z (three radix-2
// FFTs of a power of two >= 2n - 1) for other lengths, so every length is
// O(n log n). Real input goes two lines per complex transform (RealPair).
#pragma once

#include <algorithm>
#include <cmath>
#include <complex>
#include <cstdint>
#include <vector>

#include "core/framework/thread_pool.h"

namespace onyx {
namespace signal {

using Complex = std::complex<double>;

// The largest power-of-two length a plan works in: its twiddles and every
// thread's line buffers are each that many complex doubles (128 MiB here),
// held outside the session's tensor memory limit. A length n works in n when
// n is a power of two, else in Bluestein's first power of two >= 2n - 1.
constexpr int64_t kMaxFftWorkLength = int64_t{1} << 23;
inline int64_t FftWorkLength(int64_t n) {
  if (n <= 1 || (n & (n - 1)) == 0) return n;
  int64_t m = 1;
  while (m < 2 * n - 1) m <<= 1;
  return m;
}

class FftPlan {
 public:
  explicit FftPlan(int64_t n) : n_(n) {
    if (n <= 1) return;
    if ((n & (n - 1)) == 0) {
      InitPow2(n, &tw_);
      return;
    }
    // Bluestein: chirp w_k = exp(-i pi k^2 / n), k^2 taken mod 2n so the
    // angle stays small and exact.
    m_ = 1;
    while (m_ < 2 * n - 1) m_ <<= 1;
    InitPow2(m_, &tw_);
    chirp_.resize(static_cast<size_t>(n));
    for (int64_t k = 0; k < n; ++k) {
      const int64_t k2 = (k * k) % (2 * n);
      const double a = -M_PI * static_cast<double>(k2) / static_cast<double>(n);
      chirp_[k] = Complex(std::cos(a), std::sin(a));
    }
    filter_.assign(static_cast<size_t>(m_), Complex(0, 0));
    filter_[0] = std::conj(chirp_[0]);
    for (int64_t k = 1; k < n; ++k) filter_[k] = filter_[m_ - k] = std::conj(chirp_[k]);
    Pow2(filter_.data(), m_, false);
  }

  int64_t size() const { return n_; }

  // In place, unnormalized: X_k = sum_j x_j exp(-+2 pi i jk/n) (+ when inverse).
  // `scratch` is reused between calls (Bluestein's work buffer).
  void Transform(Complex* x, bool inverse, std::vector<Complex>* scratch) const {
    if (n_ <= 1) return;
    if (inverse)
      for (int64_t i = 0; i < n_; ++i) x[i] = std::conj(x[i]);
    if (m_ == 0) {
      Pow2(x, n_, false);
    } else {
      std::vector<Complex>& a = *scratch;
      a.assign(static_cast<size_t>(m_), Complex(0, 0));
      for (int64_t j = 0; j < n_; ++j) a[j] = x[j] * chirp_[j];
      Pow2(a.data(), m_, false);
      for (int64_t j = 0; j < m_; ++j) a[j] *= filter_[j];
      Pow2(a.data(), m_, true);
      const double inv_m = 1.0 / static_cast<double>(m_);
      for (int64_t k = 0; k < n_; ++k) x[k] = a[k] * chirp_[k] * inv_m;
    }
    if (inverse)
      for (int64_t i = 0; i < n_; ++i) x[i] = std::conj(x[i]);
  }

 private:
  static void InitPow2(int64_t m, std::vector<Complex>* tw) {
    tw->resize(static_cast<size_t>(m / 2));
    for (int64_t k = 0; k < m / 2; ++k) {
      const double a = -2.0 * M_PI * static_cast<double>(k) / static_cast<double>(m);
      (*tw)[k] = Complex(std::cos(a), std::sin(a));
    }
  }

  // Radix-2 over length m (a power of two whose twiddles tw_ holds, or m_
  // itself); `conj_tw` runs the inverse direction (unnormalized).
  void Pow2(Complex* x, int64_t m, bool conj_tw) const {
    for (int64_t i = 1, j = 0; i < m; ++i) {
      int64_t bit = m >> 1;
      for (; j & bit; bit >>= 1) j ^= bit;
      j ^= bit;
      if (i < j) std::swap(x[i], x[j]);
    }
    const int64_t full = static_cast<int64_t>(tw_.size()) * 2;
    for (int64_t len = 2; len <= m; len <<= 1) {
      const int64_t half = len / 2, step = full / len;
      for (int64_t i = 0; i < m; i += len) {
        for (int64_t k = 0; k < half; ++k) {
          const Complex w = conj_tw ? std::conj(tw_[k * step]) : tw_[k * step];
          const Complex u = x[i + k], v = x[i + k + half] * w;
          x[i + k] = u + v;
          x[i + k + half] = u - v;
        }
      }
    }
  }

  int64_t n_ = 0;
  int64_t m_ = 0;  // Bluestein's power-of-two length; 0 when n is one itself
  std::vector<Complex> tw_, chirp_, filter_;
};

// The spectra of two real sequences a, b of length n from Z, the FFT of
// a + ib: A_k = (Z_k + conj(Z_{n-k})) / 2, B_k = (Z_k - conj(Z_{n-k})) / 2i,
// into a_out and b_out (n values each; neither may alias z).
inline void SplitRealPair(const Complex* z, int64_t n, Complex* a_out, Complex* b_out) {
  for (int64_t k = 0; k < n; ++k) {
    const Complex zk = z[k], zc = std::conj(z[(n - k) % n]);
    a_out[k] = (zk + zc) * 0.5;
    b_out[k] = (zk - zc) * Complex(0, -0.5);
  }
}

// Forward or inverse (unnormalized) transforms of `lines` sequences of the
// plan's length n: load(i, buf) fills buf[0, n) with line i, store(i, spec)
// takes its n-value spectrum. With `real_input` (imaginary parts all zero),
// forward lines go two per complex FFT. Lines run in parallel on `pool`.
// `stop()` is asked before each line (a run's terminate flag): once it says
// true the remaining lines are skipped, and the caller reports the stop.
template <typename Load, typename Store, typename Stop>
void TransformLines(ThreadPool* pool, const FftPlan& plan, int64_t lines, bool real_input, bool inverse, Load load,
                    Store store, Stop stop) {
  const int64_t n = plan.size();
  const bool pair = real_input && !inverse && n > 1;
  const int64_t units = pair ? (lines + 1) / 2 : lines;
  const int64_t per_unit = std::max<int64_t>(1, n * 8);
  ThreadPool::For(pool, units, std::max<int64_t>(1, 16384 / per_unit), [&](int64_t begin, int64_t end) {
    std::vector<Complex> z(static_cast<size_t>(n)), b(static_cast<size_t>(n)), sa(static_cast<size_t>(n)),
        sb(static_cast<size_t>(n)), scratch;
    for (int64_t u = begin; u < end; ++u) {
      if (stop()) return;
      if (!pair) {
        load(u, z.data());
        plan.Transform(z.data(), inverse, &scratch);
        store(u, z.data());
        continue;
      }
      const int64_t i0 = 2 * u, i1 = 2 * u + 1;
      load(i0, z.data());
      if (i1 < lines) {
        load(i1, b.data());
        for (int64_t k = 0; k < n; ++k) z[k] = Complex(z[k].real(), b[k].real());
      }
      plan.Transform(z.data(), false, &scratch);
      SplitRealPair(z.data(), n, sa.data(), sb.data());
      store(i0, sa.data());
      if (i1 < lines) store(i1, sb.data());
    }
  });
}

}  // namespace signal
}  // namespace onyx
