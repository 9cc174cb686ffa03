#include <algorithm>
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <mutex>
#include <thread>
#include <utility>
#include <vector>

#include "core/framework/allocator.h"
#include "core/framework/data_type.h"
#include "core/framework/tensor.h"
#include "core/framework/thread_pool.h"

namespace onyx {
namespace {

TEST(Float16, RoundTripsExactValues) {
  for (float f : {0.f, 1.f, -2.5f, 65504.f, 6.103515625e-05f, 5.960464477539063e-08f}) {
    EXPECT_EQ(static_cast<float>(Float16(f)), f) << f;
  }
  EXPECT_EQ(Float16(1e6f).bits, 0x7c00);  // overflow -> +inf
  EXPECT_EQ(Float16(-0.0f).bits, 0x8000);
}

TEST(BFloat16, RoundsToNearestEven) {
  EXPECT_EQ(static_cast<float>(BFloat16(1.0f)), 1.0f);
  EXPECT_EQ(BFloat16(1.00390625f).bits, 0x3f80);  // halfway, rounds to even
}

TEST(Tensor, OwnsAndClones) {
  Tensor t(ElemType::kInt64, {2, 3});
  for (int i = 0; i < 6; ++i) t.data<int64_t>()[i] = i;
  Tensor c = t.Clone();
  EXPECT_NE(c.raw(), t.raw());
  EXPECT_EQ(c.data<int64_t>()[5], 5);
  EXPECT_EQ(ShapeToString(c.dims()), "[2,3]");
}

TEST(Tensor, StringsAreConstructed) {
  Tensor t(ElemType::kString, {2});
  t.data<std::string>()[1] = "hello";
  Tensor c = t.Clone();
  EXPECT_EQ(c.data<std::string>()[0], "");
  EXPECT_EQ(c.data<std::string>()[1], "hello");
}

TEST(ThreadPool, CoversRangeOnce) {
  ThreadPool pool(4);
  std::vector<int> hits(1000, 0);
  pool.ParallelFor(1000, 7, [&](int64_t b, int64_t e) {
    for (int64_t i = b; i < e; ++i) hits[i]++;
  });
  for (int h : hits) EXPECT_EQ(h, 1);
}

// Each thread starts on its own contiguous share of the chunks (the caller
// on the first), so the same core gets the same part of the data loop after
// loop; what a thread finds left of the others' shares it still takes.
TEST(ThreadPool, ThreadsStartOnTheirOwnShares) {
  ThreadPool pool(2);
  const std::thread::id caller = std::this_thread::get_id();
  for (int round = 0; round < 200; ++round) {
    std::mutex mu;
    std::vector<std::pair<std::thread::id, int64_t>> order;  // (thread, chunk start) as run
    std::vector<int> hits(64, 0);
    pool.ParallelFor(64, 8, [&](int64_t b, int64_t e) {  // 8 chunks: shares [0, 32) and [32, 64)
      {
        std::lock_guard<std::mutex> lock(mu);
        order.emplace_back(std::this_thread::get_id(), b);
      }
      for (int64_t i = b; i < e; ++i) hits[i]++;
    });
    for (int h : hits) ASSERT_EQ(h, 1);
    const auto first_of = [&](bool want_caller) -> int64_t {
      for (const auto& o : order)
        if ((o.first == caller) == want_caller) return o.second;
      return -1;
    };
    // The caller claims from share 0 first and the worker from share 1; each
    // turns to the other's share only when its own is empty, so a thread
    // that ran anything began in its own share.
    const int64_t c = first_of(true), w = first_of(false);
    if (c >= 0) EXPECT_LT(c, 32) << "the caller began in the worker's share";
    if (w >= 0) EXPECT_GE(w, 32) << "the worker began in the caller's share";
  }
}

TEST(CpuAllocator, AlignsAndReusesLargeBlocks) {
  CpuAllocator a(/*min_cached_bytes=*/1 << 16, /*max_cached_total=*/size_t{64} << 20);
  void* p = a.Alloc(300000);
  ASSERT_NE(p, nullptr);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(p) % 64, 0u);
  std::memset(p, 1, 300000);
  a.Free(p);
  EXPECT_GT(a.CachedBytes(), 300000u);
  // A slightly different size in the same class gets the same block back.
  void* q = a.Alloc(299000);
  EXPECT_EQ(q, p);
  EXPECT_EQ(a.CachedBytes(), 0u);
  // A size in another class does not.
  void* r = a.Alloc(600000);
  EXPECT_NE(r, q);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(r) % 64, 0u);
  a.Free(q);
  a.Free(r);
  a.Trim();
  EXPECT_EQ(a.CachedBytes(), 0u);
}

TEST(CpuAllocator, SmallBlocksAndCapBypassTheCache) {
  CpuAllocator a(/*min_cached_bytes=*/1 << 16, /*max_cached_total=*/1 << 20);
  void* small = a.Alloc(100);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(small) % 64, 0u);
  a.Free(small);
  EXPECT_EQ(a.CachedBytes(), 0u);
  void* b1 = a.Alloc(700000);
  void* b2 = a.Alloc(700000);
  a.Free(b1);
  const size_t one = a.CachedBytes();
  EXPECT_GT(one, 700000u);
  a.Free(b2);  // would exceed the 1 MiB cap: released instead
  EXPECT_EQ(a.CachedBytes(), one);
  EXPECT_EQ(a.Alloc(0), nullptr);
  a.Free(nullptr);
}

TEST(CpuAllocator, MissesNeverGrowTheFootprintPastThePeakInUse) {
  CpuAllocator a(/*min_cached_bytes=*/1 << 16, /*max_cached_total=*/size_t{256} << 20);
  // A first run's pattern: tensors of ever new sizes, at most two alive.
  void* prev = a.Alloc(1 << 20);
  size_t peak = a.InUseBytes();
  for (size_t n = (1 << 20) + (1 << 18); n < (size_t{8} << 20); n += (n >> 2)) {
    void* p = a.Alloc(n);
    peak = std::max(peak, a.InUseBytes());
    EXPECT_LE(a.InUseBytes() + a.CachedBytes(), peak) << n;
    a.Free(prev);
    prev = p;
  }
  a.Free(prev);
  EXPECT_LE(a.CachedBytes(), peak);
  // Sizes that repeat still come from the cache.
  void* big = a.Alloc(4 << 20);
  a.Free(big);
  EXPECT_EQ(a.Alloc(4 << 20), big);
  a.Free(big);
}

TEST(CpuAllocator, ClassesCoverEverySize) {
  CpuAllocator a(/*min_cached_bytes=*/1 << 16, /*max_cached_total=*/size_t{256} << 20);
  // Writing the full requested size must stay inside the block (ASan checks it).
  for (size_t n : {size_t{65536}, size_t{65537}, size_t{73727}, size_t{131071}, size_t{131072}, size_t{1000001},
                   size_t{(1 << 24) - 1}}) {
    void* p = a.Alloc(n);
    std::memset(p, 7, n);
    a.Free(p);
    void* q = a.Alloc(n);
    EXPECT_EQ(q, p) << n;
    a.Free(q);
  }
}

}  // namespace
}  // namespace onyx
