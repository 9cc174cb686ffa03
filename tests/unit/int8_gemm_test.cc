// int8gemm::Gemm against a plain int64 reference, bit for bit, on every
// micro-kernel path this machine runs.
#include <gtest/gtest.h>

#include <cstdint>
#include <random>
#include <vector>

#include "core/framework/thread_pool.h"
#include "providers/cpu/quantization/int8_gemm.h"

namespace onyx {
namespace {

struct Case {
  int64_t M, N, K;
  bool a_signed, b_signed;
  int zp_mode;  // 0: none, 1: scalar, 2: per row of A / per column of B
};

// Values in the byte's full range, stored as raw bytes.
std::vector<uint8_t> RandomBytes(size_t n, std::mt19937* rng) {
  std::uniform_int_distribution<int> d(0, 255);
  std::vector<uint8_t> v(n);
  for (auto& x : v) x = static_cast<uint8_t>(d(*rng));
  return v;
}

int32_t Value(uint8_t raw, bool is_signed) {
  return is_signed ? static_cast<int32_t>(static_cast<int8_t>(raw)) : static_cast<int32_t>(raw);
}

std::vector<int32_t> ZeroPoints(int64_t count, bool is_signed, std::mt19937* rng) {
  std::vector<int32_t> z;
  for (uint8_t raw : RandomBytes(static_cast<size_t>(count), rng)) z.push_back(Value(raw, is_signed));
  return z;
}

void RunCase(const Case& c, ThreadPool* pool, bool use_epilogue, std::mt19937* rng) {
  const int64_t M = c.M, N = c.N, K = c.K;
  const int64_t lda = K + 3, ldb = N + 5, ldc = N + 1;  // strides wider than the rows
  const std::vector<uint8_t> a = RandomBytes(static_cast<size_t>(M * lda), rng);
  const std::vector<uint8_t> b = RandomBytes(static_cast<size_t>(K * ldb), rng);
  std::vector<int32_t> za, zb;
  if (c.zp_mode == 1) {
    za = ZeroPoints(1, c.a_signed, rng);
    zb = ZeroPoints(1, c.b_signed, rng);
  } else if (c.zp_mode == 2) {
    za = ZeroPoints(M, c.a_signed, rng);
    zb = ZeroPoints(N, c.b_signed, rng);
  }
  auto zpa = [&](int64_t m) -> int64_t { return za.empty() ? 0 : za[c.zp_mode == 2 ? m : 0]; };
  auto zpb = [&](int64_t n) -> int64_t { return zb.empty() ? 0 : zb[c.zp_mode == 2 ? n : 0]; };

  const int8gemm::PackedB packed = int8gemm::PackedB::Pack(b.data(), c.b_signed, K, N, ldb, pool);
  std::vector<int32_t> out(static_cast<size_t>(M * ldc), -7);
  std::vector<int> seen(static_cast<size_t>(M * N), 0);
  int8gemm::GemmArgs args;
  args.M = M;
  args.a = a.data();
  args.a_signed = c.a_signed;
  args.lda = lda;
  args.za = za.empty() ? nullptr : za.data();
  args.za_per_row = c.zp_mode == 2;
  args.zb = zb.empty() ? nullptr : zb.data();
  args.zb_per_column = c.zp_mode == 2;
  if (use_epilogue) {
    args.epilogue = [&](int64_t m0, int64_t m1, int64_t n0, int64_t n1, const int32_t* t, int64_t ldt) {
      for (int64_t m = m0; m < m1; ++m)
        for (int64_t n = n0; n < n1; ++n) {
          out[m * ldc + n] = t[(m - m0) * ldt + (n - n0)];
          ++seen[m * N + n];
        }
    };
  } else {
    args.c = out.data();
    args.ldc = ldc;
  }
  int8gemm::Gemm(args, packed, pool);

  int64_t bad = 0;
  for (int64_t m = 0; m < M; ++m) {
    for (int64_t n = 0; n < N; ++n) {
      int64_t ref = 0;
      for (int64_t k = 0; k < K; ++k)
        ref += (Value(a[m * lda + k], c.a_signed) - zpa(m)) * (Value(b[k * ldb + n], c.b_signed) - zpb(n));
      if (out[m * ldc + n] != static_cast<int32_t>(ref) && ++bad <= 3)
        ADD_FAILURE() << "C[" << m << "," << n << "] = " << out[m * ldc + n] << ", expected " << ref;
      if (use_epilogue && seen[m * N + n] != 1 && ++bad <= 3)
        ADD_FAILURE() << "C[" << m << "," << n << "] reached the epilogue " << seen[m * N + n] << " times";
    }
    if (!use_epilogue) {
      for (int64_t n = N; n < ldc; ++n) ASSERT_EQ(out[m * ldc + n], -7) << "wrote past column N";
    }
  }
  EXPECT_EQ(bad, 0);
}

TEST(Int8Gemm, MatchesInt64ReferenceOnEveryPath) {
  const int64_t dims[] = {1, 3, 17, 64, 255};
  const int64_t ks[] = {1, 3, 4, 17, 64, 255, 600};
  ThreadPool pool(3);
  std::mt19937 rng(1234);
  const int8gemm::Path best = int8gemm::BestPath();
  for (int p = 0; p <= static_cast<int>(best); ++p) {
    const int8gemm::Path path = int8gemm::SetPathForTesting(static_cast<int8gemm::Path>(p));
    ASSERT_EQ(static_cast<int>(path), p);
    SCOPED_TRACE(int8gemm::PathName(path));
    int count = 0;
    for (int types = 0; types < 4; ++types) {
      for (int zp = 0; zp < 3; ++zp) {
        for (int64_t M : dims) {
          for (int64_t N : dims) {
            // Every K for a few shapes; the other shapes take one K each.
            const bool all_k = (M == 17 && N == 64) || (M == 3 && N == 255);
            for (int64_t K : ks) {
              if (!all_k && K != ks[(M + N + types + zp) % 7]) continue;
              const Case c{M, N, K, (types & 1) != 0, (types & 2) != 0, zp};
              SCOPED_TRACE(::testing::Message() << "M=" << M << " N=" << N << " K=" << K << " a_signed="
                                                << c.a_signed << " b_signed=" << c.b_signed << " zp=" << zp);
              RunCase(c, (count % 2) ? &pool : nullptr, count % 3 == 0, &rng);
              ++count;
              if (::testing::Test::HasFailure()) return;
            }
          }
        }
      }
    }
  }
  int8gemm::SetPathForTesting(best);
}

// Deep K: sums past 2^24 (where float slices would round) stay exact.
TEST(Int8Gemm, LargeKExtremeValues) {
  const int64_t M = 5, N = 70, K = 4099;
  for (int p = 0; p <= static_cast<int>(int8gemm::BestPath()); ++p) {
    const int8gemm::Path path = int8gemm::SetPathForTesting(static_cast<int8gemm::Path>(p));
    SCOPED_TRACE(int8gemm::PathName(path));
    std::vector<uint8_t> a(static_cast<size_t>(M * K), 255);     // uint8 255
    std::vector<uint8_t> b(static_cast<size_t>(K * N), 0x80);    // int8 -128
    const int32_t zb = 127;
    const int8gemm::PackedB packed = int8gemm::PackedB::Pack(b.data(), true, K, N, N);
    std::vector<int32_t> c(static_cast<size_t>(M * N));
    int8gemm::GemmArgs args;
    args.M = M;
    args.a = a.data();
    args.lda = K;
    args.zb = &zb;
    args.c = c.data();
    args.ldc = N;
    int8gemm::Gemm(args, packed, nullptr);
    for (int32_t v : c) ASSERT_EQ(v, static_cast<int32_t>(int64_t{255} * -255 * K));
  }
  int8gemm::SetPathForTesting(int8gemm::BestPath());
}

}  // namespace
}  // namespace onyx
