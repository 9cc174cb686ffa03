// Sparse tensors (checks and densifying), the LoRA adapter file format and
// the model's ort_config session options, at the engine level.
#include <gtest/gtest.h>

#include <cstring>

#include "core/framework/adapter_format.h"
#include "core/framework/sparse_tensor.h"
#include "core/session/model_config.h"

namespace onyx {
namespace {

std::shared_ptr<Tensor> Ints(const Dims& dims, std::vector<int64_t> v) {
  auto t = std::make_shared<Tensor>(ElemType::kInt64, dims);
  std::memcpy(t->raw(), v.data(), v.size() * sizeof(int64_t));
  return t;
}

std::shared_ptr<Tensor> Floats(const Dims& dims, std::vector<float> v) {
  auto t = std::make_shared<Tensor>(ElemType::kFloat, dims);
  std::memcpy(t->raw(), v.data(), v.size() * sizeof(float));
  return t;
}

std::vector<float> Dense(const SparseTensor& s) {
  Tensor d;
  EXPECT_TRUE(Densify(s, &d).ok());
  return std::vector<float>(d.data<float>(), d.data<float>() + d.size());
}

TEST(SparseTensor, CooLinearAndCoordinatesDensify) {
  SparseTensor a, b;
  ASSERT_TRUE(MakeSparseTensor("t", SparseFormat::kCoo, {2, 3}, Floats({2}, {1, 2}), {Ints({2}, {1, 5})}, &a).ok());
  ASSERT_TRUE(
      MakeSparseTensor("t", SparseFormat::kCoo, {2, 3}, Floats({2}, {1, 2}), {Ints({2, 2}, {0, 1, 1, 2})}, &b).ok());
  const std::vector<float> want = {0, 1, 0, 0, 0, 2};
  EXPECT_EQ(Dense(a), want);
  EXPECT_EQ(Dense(b), want);
}

TEST(SparseTensor, CsrAndBlockSparseDensify) {
  SparseTensor csr;
  ASSERT_TRUE(MakeSparseTensor("t", SparseFormat::kCsr, {2, 3}, Floats({2}, {1, 2}),
                               {Ints({2}, {1, 2}), Ints({3}, {0, 1, 2})}, &csr).ok());
  EXPECT_EQ(Dense(csr), (std::vector<float>{0, 1, 0, 0, 0, 2}));
  auto idx = std::make_shared<Tensor>(ElemType::kInt32, Dims{2, 1});
  idx->data<int32_t>()[0] = 1;  // block row
  idx->data<int32_t>()[1] = 0;  // block column
  SparseTensor block;
  ASSERT_TRUE(
      MakeSparseTensor("t", SparseFormat::kBlockSparse, {4, 2}, Floats({1, 2, 2}, {1, 2, 3, 4}), {idx}, &block).ok());
  EXPECT_EQ(Dense(block), (std::vector<float>{0, 0, 0, 0, 1, 2, 3, 4}));
}

TEST(SparseTensor, BadIndicesNameTheRule) {
  SparseTensor s;
  Status st = MakeSparseTensor("x", SparseFormat::kCoo, {2, 3}, Floats({2}, {1, 2}), {Ints({2}, {5, 1})}, &s);
  EXPECT_EQ(st.code(), ErrorCode::kInvalidArgument);
  EXPECT_NE(st.message().find("sorted"), std::string::npos) << st.message();
  st = MakeSparseTensor("x", SparseFormat::kCoo, {2, 3}, Floats({2}, {1, 2}), {Ints({2}, {1, 6})}, &s);
  EXPECT_NE(st.message().find("out of range"), std::string::npos) << st.message();
  st = MakeSparseTensor("x", SparseFormat::kCsr, {2, 3}, Floats({2}, {1, 2}), {Ints({2}, {2, 1}), Ints({3}, {0, 2, 2})},
                        &s);
  EXPECT_NE(st.message().find("sorted and unique within a row"), std::string::npos) << st.message();
  st = MakeSparseTensor("x", SparseFormat::kCsr, {2, 3}, Floats({2}, {1, 2}), {Ints({2}, {0, 1}), Ints({3}, {0, 2, 1})},
                        &s);
  EXPECT_NE(st.message().find("end at 2"), std::string::npos) << st.message();
}

TEST(AdapterFormat, RoundTripAndTruncation) {
  LoraAdapterData a;
  a.adapter_version = 3;
  a.model_version = 4;
  a.parameters.emplace_back("w", Floats({2, 2}, {1, 2, 3, 4}));
  a.parameters.emplace_back("b", Floats({3}, {5, 6, 7}));
  std::string bytes;
  ASSERT_TRUE(SerializeAdapter(a, &bytes).ok());
  EXPECT_EQ(bytes.substr(4, 4), "TORT");
  LoraAdapterData back;
  ASSERT_TRUE(ParseAdapter(bytes.data(), bytes.size(), &back).ok());
  EXPECT_EQ(back.format_version, 1);
  EXPECT_EQ(back.adapter_version, 3);
  EXPECT_EQ(back.model_version, 4);
  ASSERT_EQ(back.parameters.size(), 2u);
  EXPECT_EQ(back.parameters[1].first, "b");
  EXPECT_EQ(back.parameters[0].second->dims(), (Dims{2, 2}));
  EXPECT_EQ(back.parameters[1].second->data<float>()[2], 7.f);
  for (size_t n = 0; n < bytes.size(); ++n) EXPECT_FALSE(ParseAdapter(bytes.data(), n, &back).ok()) << n;
}

TEST(AdapterFormat, RefusesWhatItCannotHold) {
  LoraAdapterData a;
  a.parameters.emplace_back("s", std::make_shared<Tensor>(ElemType::kString, Dims{1}));
  std::string bytes;
  Status st = SerializeAdapter(a, &bytes);
  EXPECT_EQ(st.code(), ErrorCode::kInvalidArgument);
  EXPECT_NE(st.message().find("'s'"), std::string::npos) << st.message();
}

Model WithConfig(const std::string& json) {
  Model m;
  m.metadata.emplace_back("ort_config", json);
  return m;
}

TEST(ModelConfig, AppliesOnnxruntimeKeys) {
  SessionOptions o;
  ASSERT_TRUE(ApplyModelConfig(WithConfig(R"({"session_options": {"intra_op_num_threads": 3, "inter_op_num_threads": 2,
      "execution_mode": 1, "graph_optimization_level": 1, "enable_profiling": 1, "other": [1, {"a": "b"}]},
      "run_options": {"x": 1.5}})"), &o).ok());
  EXPECT_EQ(o.intra_op_threads, 3);
  EXPECT_EQ(o.inter_op_threads, 2);
  EXPECT_EQ(o.execution_mode, 1);
  EXPECT_EQ(o.graph_optimization_level, 1);
  EXPECT_TRUE(o.enable_profiling);
  SessionOptions untouched;
  ASSERT_TRUE(ApplyModelConfig(Model(), &untouched).ok());
  EXPECT_EQ(untouched.graph_optimization_level, 99);
}

TEST(ModelConfig, BadJsonAndValuesNameTheKey) {
  SessionOptions o;
  Status st = ApplyModelConfig(WithConfig(R"({"session_options": {"execution_mode": 3}})"), &o);
  EXPECT_NE(st.message().find("Unsupported execution_mode value in ORT config: 3"), std::string::npos);
  st = ApplyModelConfig(WithConfig(R"({"session_options": {"intra_op_num_threads": "2"}})"), &o);
  EXPECT_NE(st.message().find("intra_op_num_threads option in the model file must be an integer"), std::string::npos);
  st = ApplyModelConfig(WithConfig(R"({"session_options": {)"), &o);
  EXPECT_NE(st.message().find("cannot be parsed"), std::string::npos) << st.message();
}

}  // namespace
}  // namespace onyx
