// core/session/providers_query: what the C API reads about providers and kernels.
#include "core/session/providers_query.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <climits>

namespace onyx {
namespace {

TEST(ProvidersQuery, NamesAndCheck) {
  const auto& avail = AvailableProviderNames();
  ASSERT_FALSE(avail.empty());
  EXPECT_EQ(avail.back(), "CPUExecutionProvider");
  EXPECT_NE(std::find(AllProviderNames().begin(), AllProviderNames().end(), "CUDAExecutionProvider"),
            AllProviderNames().end());
  EXPECT_TRUE(CheckProviderName("CPUExecutionProvider").ok());
  Status s = CheckProviderName("CUDAExecutionProvider");
  if (avail.size() == 1) {
    // No GPU here (or no provider library): refused with the reason.
    EXPECT_EQ(s.code(), ErrorCode::kInvalidArgument);
    EXPECT_NE(s.message().find("'CUDAExecutionProvider' is not available: "), std::string::npos) << s.message();
  } else {
    EXPECT_EQ(avail.front(), "CUDAExecutionProvider");
    EXPECT_TRUE(s.ok()) << s.message();
  }
  s = CheckProviderName("MIGraphXExecutionProvider");
  EXPECT_NE(s.message().find("is not available in this build"), std::string::npos) << s.message();
  s = CheckProviderName("NoSuchExecutionProvider");
  EXPECT_NE(s.message().find("unknown execution provider 'NoSuchExecutionProvider'"), std::string::npos);
}

// Registrations made by ONYX_REGISTER_KERNEL statements in the kernel files
// reach the registry (the engine is linked whole, so none is dropped).
TEST(ProvidersQuery, SupportedOperatorsComeFromTheRegistry) {
  std::vector<SupportedOperator> ops;
  ASSERT_TRUE(SupportedOperators("CPUExecutionProvider", &ops).ok());
  auto has = [&](const std::string& domain, const std::string& op, int since, int end) {
    for (const auto& o : ops)
      if (o.domain == domain && o.op_type == op && o.since_version == since && o.end_version == end) return true;
    return false;
  };
  EXPECT_TRUE(has("", "Softmax", 1, 12));
  EXPECT_TRUE(has("", "Softmax", 13, INT_MAX));
  EXPECT_TRUE(has("ai.onnx.ml", "Normalizer", 1, INT_MAX));
  EXPECT_TRUE(has("com.microsoft", "FusedConv", 1, INT_MAX));
  EXPECT_TRUE(has("", "ArgMin", 1, INT_MAX));
  EXPECT_TRUE(has("", "LayerNormalization", 17, INT_MAX));
  EXPECT_GE(ops.size(), 100u);
  EXPECT_EQ(SupportedOperators("CUDAExecutionProvider", &ops).code(), ErrorCode::kInvalidArgument);
}

}  // namespace
}  // namespace onyx
