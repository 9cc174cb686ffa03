#include <gtest/gtest.h>

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

}  // namespace
}  // namespace onyx
