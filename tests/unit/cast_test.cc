// Cast to and from the narrow formats (float8, int4/uint4, float4e2m1) and the
// float16 rounding of double, checked against known bit patterns. The values
// match onnx's reference implementation (ml_dtypes); see the ONNX Cast spec's
// float8 tables for the saturate rules.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include "tests/unit/kernel_test_util.h"

namespace onyx {
namespace {

using testing::MakeNode;
using testing::MakeTensor;
using testing::Run1;
using testing::RunCpuKernel;
using testing::SetInt;
using testing::ToVector;

const float kInf = std::numeric_limits<float>::infinity();
const float kNaN = std::numeric_limits<float>::quiet_NaN();

Node CastTo(ElemType to, int saturate = -1, int opset = 21) {
  Node n = MakeNode("Cast", opset);
  SetInt(n, "to", static_cast<int64_t>(to));
  if (saturate >= 0) SetInt(n, "saturate", saturate);
  return n;
}

// Raw bytes of a tensor (packed for the 4-bit types).
std::vector<uint8_t> Bytes(const Tensor& t) {
  const auto* p = static_cast<const uint8_t*>(t.raw());
  return std::vector<uint8_t>(p, p + t.bytes());
}

Tensor FromBytes(ElemType type, const Dims& dims, const std::vector<uint8_t>& bytes) {
  Tensor t(type, dims);
  EXPECT_EQ(t.bytes(), bytes.size());
  std::memcpy(t.raw(), bytes.data(), bytes.size());
  return t;
}

std::vector<uint8_t> ToFormat(ElemType to, const std::vector<float>& values, int saturate = -1) {
  Tensor x = MakeTensor<float>({static_cast<int64_t>(values.size())}, values);
  Tensor y = Run1(CastTo(to, saturate), {&x});
  EXPECT_EQ(y.type(), to);
  return Bytes(y);
}

std::vector<float> FromFormat(ElemType from, const std::vector<uint8_t>& bytes, int64_t count) {
  Tensor x = FromBytes(from, {count}, bytes);
  return ToVector<float>(Run1(CastTo(ElemType::kFloat), {&x}));
}

uint32_t FloatBits(float f) {
  uint32_t u;
  std::memcpy(&u, &f, 4);
  return u;
}

// Float equality that tells -0 from 0 and accepts NaN for NaN (with its sign).
void ExpectSameFloats(const std::vector<float>& got, const std::vector<float>& want) {
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < got.size(); ++i) {
    if (std::isnan(want[i])) {
      EXPECT_TRUE(std::isnan(got[i])) << "element " << i << ": " << got[i];
      EXPECT_EQ(std::signbit(got[i]), std::signbit(want[i])) << "element " << i;
    } else {
      EXPECT_EQ(FloatBits(got[i]), FloatBits(want[i])) << "element " << i << ": " << got[i] << " vs " << want[i];
    }
  }
}

TEST(CastTest, FloatToE4M3FN) {
  const float min_sub = std::ldexp(1.f, -9);
  // 1, max, tie at max+16 (rounds down to even), just above it, infinities,
  // NaN of both signs, -0, smallest subnormal, half of it (tie to 0), a bit
  // more than half, 1.5 subnormal units (tie to even 2), the ties 1+1/16 and
  // 1+3/16 (to 1 and 1.25).
  std::vector<float> x = {1.f, 448.f, 464.f, 465.f, -465.f, kInf, -kInf, kNaN, -kNaN, -0.f, min_sub,
                          min_sub / 2, min_sub * 0.5001f, min_sub * 1.5f, 1.0625f, 1.1875f};
  EXPECT_EQ(ToFormat(ElemType::kFloat8E4M3FN, x),
            (std::vector<uint8_t>{0x38, 0x7E, 0x7E, 0x7E, 0xFE, 0x7E, 0xFE, 0x7F, 0xFF, 0x80, 0x01, 0x00, 0x01,
                                  0x02, 0x38, 0x3A}));
  // saturate=0: out of range and infinities become NaN of their sign.
  EXPECT_EQ(ToFormat(ElemType::kFloat8E4M3FN, x, 0),
            (std::vector<uint8_t>{0x38, 0x7E, 0x7E, 0x7F, 0xFF, 0x7F, 0xFF, 0x7F, 0xFF, 0x80, 0x01, 0x00, 0x01,
                                  0x02, 0x38, 0x3A}));
}

TEST(CastTest, FloatToE4M3FNUZ) {
  // No negative zero and a single NaN (0x80); max 240, smallest subnormal 2^-10.
  std::vector<float> x = {1.f, 240.f, 248.f, -1000.f, kInf, -kInf, kNaN, -kNaN, -0.f, -1e-9f,
                          std::ldexp(1.f, -10)};
  EXPECT_EQ(ToFormat(ElemType::kFloat8E4M3FNUZ, x),
            (std::vector<uint8_t>{0x40, 0x7F, 0x7F, 0xFF, 0x7F, 0xFF, 0x80, 0x80, 0x00, 0x00, 0x01}));
  EXPECT_EQ(ToFormat(ElemType::kFloat8E4M3FNUZ, x, 0),
            (std::vector<uint8_t>{0x40, 0x7F, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x00, 0x00, 0x01}));
}

TEST(CastTest, FloatToE5M2) {
  // IEEE-like: saturate=0 overflows to infinity. 61440 is the tie above the
  // max 57344 and rounds to even, i.e. up; 1+1/8 and 1+3/8 are ties too.
  std::vector<float> x = {1.f, 57344.f, 61439.f, 61440.f, -1e6f, kInf, -kInf, kNaN, -kNaN, -0.f,
                          std::ldexp(1.f, -16), 1.125f, 1.375f};
  EXPECT_EQ(ToFormat(ElemType::kFloat8E5M2, x),
            (std::vector<uint8_t>{0x3C, 0x7B, 0x7B, 0x7B, 0xFB, 0x7B, 0xFB, 0x7E, 0xFE, 0x80, 0x01, 0x3C, 0x3E}));
  EXPECT_EQ(ToFormat(ElemType::kFloat8E5M2, x, 0),
            (std::vector<uint8_t>{0x3C, 0x7B, 0x7B, 0x7C, 0xFC, 0x7C, 0xFC, 0x7E, 0xFE, 0x80, 0x01, 0x3C, 0x3E}));
}

TEST(CastTest, FloatToE5M2FNUZ) {
  std::vector<float> x = {1.f, 57344.f, 1e6f, -kInf, kNaN, -0.f, std::ldexp(1.f, -17), std::ldexp(1.f, -18)};
  EXPECT_EQ(ToFormat(ElemType::kFloat8E5M2FNUZ, x),
            (std::vector<uint8_t>{0x40, 0x7F, 0x7F, 0xFF, 0x80, 0x00, 0x01, 0x00}));
  EXPECT_EQ(ToFormat(ElemType::kFloat8E5M2FNUZ, x, 0),
            (std::vector<uint8_t>{0x40, 0x7F, 0x80, 0x80, 0x80, 0x00, 0x01, 0x00}));
}

TEST(CastTest, Float8ToFloat) {
  ExpectSameFloats(FromFormat(ElemType::kFloat8E4M3FN, {0x38, 0x7E, 0xFE, 0x01, 0x80, 0x7F, 0xFF, 0x08}, 8),
                   {1.f, 448.f, -448.f, std::ldexp(1.f, -9), -0.f, kNaN, -kNaN, std::ldexp(1.f, -6)});
  ExpectSameFloats(FromFormat(ElemType::kFloat8E4M3FNUZ, {0x40, 0x7F, 0xFF, 0x01, 0x80, 0x00}, 6),
                   {1.f, 240.f, -240.f, std::ldexp(1.f, -10), -kNaN, 0.f});  // 0x80 has the sign bit
  ExpectSameFloats(FromFormat(ElemType::kFloat8E5M2, {0x3C, 0x7B, 0x7C, 0xFC, 0x7D, 0xFF, 0x01, 0x80}, 8),
                   {1.f, 57344.f, kInf, -kInf, kNaN, -kNaN, std::ldexp(1.f, -16), -0.f});
  ExpectSameFloats(FromFormat(ElemType::kFloat8E5M2FNUZ, {0x40, 0x7F, 0xFF, 0x80, 0x01}, 5),
                   {1.f, 57344.f, -57344.f, -kNaN, std::ldexp(1.f, -17)});
}

TEST(CastTest, Float8ToFloat8) {
  // e4m3fn 448 is 1.75 * 2^8, exact in e5m2 (0x5F); its NaN stays NaN.
  Tensor x = FromBytes(ElemType::kFloat8E4M3FN, {3}, {0x7E, 0xFF, 0x38});
  EXPECT_EQ(Bytes(Run1(CastTo(ElemType::kFloat8E5M2), {&x})), (std::vector<uint8_t>{0x5F, 0xFE, 0x3C}));
  // 448 is above e4m3fnuz's 240: saturates, or NaN without saturation.
  EXPECT_EQ(Bytes(Run1(CastTo(ElemType::kFloat8E4M3FNUZ), {&x})), (std::vector<uint8_t>{0x7F, 0x80, 0x40}));
  EXPECT_EQ(Bytes(Run1(CastTo(ElemType::kFloat8E4M3FNUZ, 0), {&x})), (std::vector<uint8_t>{0x80, 0x80, 0x40}));
  // The fnuz NaN carries the sign bit, and keeps it in formats with signed NaNs.
  Tensor nan_uz = FromBytes(ElemType::kFloat8E4M3FNUZ, {1}, {0x80});
  EXPECT_EQ(Bytes(Run1(CastTo(ElemType::kFloat8E4M3FN), {&nan_uz})), (std::vector<uint8_t>{0xFF}));
  EXPECT_EQ(Bytes(Run1(CastTo(ElemType::kFloat8E5M2), {&nan_uz})), (std::vector<uint8_t>{0xFE}));
  // Saturation applies to a same-type cast's infinities; NaN payloads are kept.
  Tensor e = FromBytes(ElemType::kFloat8E5M2, {4}, {0x7C, 0xFC, 0x7D, 0x3C});
  EXPECT_EQ(Bytes(Run1(CastTo(ElemType::kFloat8E5M2), {&e})), (std::vector<uint8_t>{0x7B, 0xFB, 0x7D, 0x3C}));
  EXPECT_EQ(Bytes(Run1(CastTo(ElemType::kFloat8E5M2, 0), {&e})), (std::vector<uint8_t>{0x7C, 0xFC, 0x7D, 0x3C}));
}

TEST(CastTest, Float8ToIntegers) {
  // Finite values convert like floats; NaN gives 0 and infinity the limit.
  Tensor x = FromBytes(ElemType::kFloat8E5M2, {5}, {0x3E, 0xBE, 0x7C, 0xFC, 0x7E});  // 1.5 -1.5 inf -inf NaN
  EXPECT_EQ(ToVector<int32_t>(Run1(CastTo(ElemType::kInt32), {&x})),
            (std::vector<int32_t>{1, -1, INT32_MAX, INT32_MIN, 0}));
  Tensor u = FromBytes(ElemType::kFloat8E5M2, {4}, {0x3E, 0x7C, 0xFC, 0x7E});
  EXPECT_EQ(ToVector<uint8_t>(Run1(CastTo(ElemType::kUint8), {&u})), (std::vector<uint8_t>{1, 255, 0, 0}));
  EXPECT_EQ(ToVector<bool>(Run1(CastTo(ElemType::kBool), {&x})), (std::vector<bool>{true, true, true, true, true}));
}

TEST(CastTest, IntegersAndDoubleToFloat8) {
  Tensor i = MakeTensor<int64_t>({4}, {3, -17, 1000, int64_t(1) << 40});
  // 17 is a tie between 16 and 18 in e4m3fn: rounds to even 16 (0x58 | sign).
  EXPECT_EQ(Bytes(Run1(CastTo(ElemType::kFloat8E4M3FN), {&i})), (std::vector<uint8_t>{0x44, 0xD8, 0x7E, 0x7E}));
  EXPECT_EQ(Bytes(Run1(CastTo(ElemType::kFloat8E4M3FN, 0), {&i})), (std::vector<uint8_t>{0x44, 0xD8, 0x7F, 0x7F}));
  Tensor b = MakeTensor<bool>({2}, {true, false});
  EXPECT_EQ(Bytes(Run1(CastTo(ElemType::kFloat8E5M2), {&b})), (std::vector<uint8_t>{0x3C, 0x00}));
  // Double goes through float first, as onnx's reference does: 1 + 2^-4 +
  // 2^-40 becomes the tie 1 + 2^-4 and rounds down to 1.
  Tensor d = MakeTensor<double>({1}, {1.0 + 0.0625 + std::ldexp(1.0, -40)});
  EXPECT_EQ(Bytes(Run1(CastTo(ElemType::kFloat8E4M3FN), {&d})), (std::vector<uint8_t>{0x38}));
}

TEST(CastTest, Int4AndUint4) {
  // Truncation toward zero, then the low four bits (onnx: out of range is
  // undefined; its reference wraps). Odd count: the last high nibble is 0.
  Tensor x = MakeTensor<float>({9}, {-9.f, -8.f, 7.f, 8.f, 15.f, 2.7f, -2.7f, kNaN, kInf});
  Tensor i4 = Run1(CastTo(ElemType::kInt4), {&x});
  EXPECT_EQ(i4.type(), ElemType::kInt4);
  // elements 7 -8 7 -8 -1 2 -2 0 0
  EXPECT_EQ(Bytes(i4), (std::vector<uint8_t>{0x87, 0x87, 0x2F, 0x0E, 0x00}));
  EXPECT_EQ(ToVector<int8_t>(Run1(CastTo(ElemType::kInt8), {&i4})),
            (std::vector<int8_t>{7, -8, 7, -8, -1, 2, -2, 0, 0}));
  Tensor u4 = Run1(CastTo(ElemType::kUint4), {&x});
  EXPECT_EQ(Bytes(u4), (std::vector<uint8_t>{0x87, 0x87, 0x2F, 0x0E, 0x00}));
  EXPECT_EQ(ToVector<float>(Run1(CastTo(ElemType::kFloat), {&u4})),
            (std::vector<float>{7, 8, 7, 8, 15, 2, 14, 0, 0}));
  // Integers keep their low bits.
  Tensor n = MakeTensor<int32_t>({3}, {16, 17, -1});
  EXPECT_EQ(Bytes(Run1(CastTo(ElemType::kUint4), {&n})), (std::vector<uint8_t>{0x10, 0x0F}));
  EXPECT_EQ(ToVector<int32_t>(Run1(CastTo(ElemType::kInt32), {&i4})),
            (std::vector<int32_t>{7, -8, 7, -8, -1, 2, -2, 0, 0}));
  // int4 <-> uint4 reinterprets the bits.
  Tensor back = Run1(CastTo(ElemType::kUint4), {&i4});
  EXPECT_EQ(Bytes(back), Bytes(u4));
}

TEST(CastTest, Float4E2M1) {
  // Ties to even: 0.25 -> 0, 0.75 -> 1, 2.5 -> 2, 5 -> 4; saturating at 6.
  // NaN gives the opposite-signed zero, as onnx's reference and tests do.
  std::vector<float> x = {0.25f, 0.75f, 2.5f, 5.f, 100.f, -kInf, -0.f, kNaN, 0.5f};
  EXPECT_EQ(ToFormat(ElemType::kFloat4E2M1, x), (std::vector<uint8_t>{0x20, 0x64, 0xF7, 0x88, 0x01}));
  EXPECT_EQ(ToFormat(ElemType::kFloat4E2M1, x, 0), ToFormat(ElemType::kFloat4E2M1, x));
  ExpectSameFloats(FromFormat(ElemType::kFloat4E2M1, {0x91, 0xF7, 0x08}, 5), {0.5f, -0.5f, 6.f, -6.f, -0.f});
}

TEST(CastTest, DoubleToFloat16RoundsOnce) {
  // 1 + 2^-11 + 2^-40 is just above the tie between 1 and 1 + 2^-10; through
  // float it would become the tie and round down.
  Tensor d = MakeTensor<double>({3}, {1.0 + std::ldexp(1.0, -11) + std::ldexp(1.0, -40), 65520.0, std::ldexp(1.0, -25)});
  Tensor h = Run1(CastTo(ElemType::kFloat16), {&d});
  ASSERT_EQ(h.type(), ElemType::kFloat16);
  EXPECT_EQ(h.data<Float16>()[0].bits, 0x3C01);
  EXPECT_EQ(h.data<Float16>()[1].bits, 0x7C00);  // the tie above 65504 rounds to inf
  EXPECT_EQ(h.data<Float16>()[2].bits, 0x0000);  // half the smallest subnormal: tie to 0
}

TEST(CastTest, StringsAndNarrowFormats) {
  Tensor s = MakeTensor<std::string>({4}, {"448", "-INF", "NaN", "0.3"});
  EXPECT_EQ(Bytes(Run1(CastTo(ElemType::kFloat8E4M3FN), {&s})), (std::vector<uint8_t>{0x7E, 0xFE, 0x7F, 0x2A}));
  EXPECT_EQ(Bytes(Run1(CastTo(ElemType::kFloat8E4M3FN, 0), {&s})), (std::vector<uint8_t>{0x7E, 0xFF, 0x7F, 0x2A}));
  Tensor f8 = FromBytes(ElemType::kFloat8E4M3FN, {3}, {0x38, 0xFE, 0x7F});
  EXPECT_EQ(ToVector<std::string>(Run1(CastTo(ElemType::kString), {&f8})),
            (std::vector<std::string>{"1", "-448", "NaN"}));
  Tensor i4 = FromBytes(ElemType::kInt4, {3}, {0x8F, 0x07});
  EXPECT_EQ(ToVector<std::string>(Run1(CastTo(ElemType::kString), {&i4})),
            (std::vector<std::string>{"-1", "-8", "7"}));
  Tensor si = MakeTensor<std::string>({3}, {"-1", "17", "7"});
  EXPECT_EQ(Bytes(Run1(CastTo(ElemType::kInt4), {&si})), (std::vector<uint8_t>{0x1F, 0x07}));
  Tensor bad = MakeTensor<std::string>({1}, {"x"});
  std::vector<std::unique_ptr<Tensor>> out;
  Status st = RunCpuKernel(CastTo(ElemType::kUint4), {&bad}, 1, &out);
  EXPECT_FALSE(st.ok());
  EXPECT_NE(st.message().find("uint4"), std::string::npos) << st.message();
}

TEST(CastTest, ComplexIsRefused) {
  Node n = CastTo(ElemType::kComplex64);
  Tensor x = MakeTensor<float>({1}, {1.f});
  std::vector<std::unique_ptr<Tensor>> out;
  Status st = RunCpuKernel(n, {&x}, 1, &out);
  EXPECT_FALSE(st.ok());
  EXPECT_EQ(st.code(), ErrorCode::kNotImplemented);
}

}  // namespace
}  // namespace onyx
