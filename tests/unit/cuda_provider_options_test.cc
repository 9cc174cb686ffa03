// CUDAExecutionProvider's options and availability, checked in the main
// library without a GPU.
#include <gtest/gtest.h>

#include <algorithm>

#include "providers/cuda_loader.h"
#include "providers/cuda_provider_options.h"
#include "providers/provider.h"

namespace onyx {
namespace {

TEST(CudaProviderOptions, ParsesOnnxruntimeNamesAndValues) {
  CudaProviderOptions o;
  Status st = ParseCudaProviderOptions({{"device_id", "1"},
                                        {"gpu_mem_limit", "1073741824"},
                                        {"arena_extend_strategy", "kSameAsRequested"},
                                        {"cudnn_conv_algo_search", "HEURISTIC"},
                                        {"do_copy_in_default_stream", "1"},
                                        {"user_compute_stream", "140000000"},
                                        {"use_tf32", "1"},
                                        {"enable_cuda_graph", "0"}},
                                       &o);
  ASSERT_TRUE(st.ok()) << st.message();
  EXPECT_EQ(o.device_id, 1);
  EXPECT_EQ(o.gpu_mem_limit, size_t{1} << 30);
  EXPECT_EQ(o.arena_extend_strategy, 1);
  EXPECT_EQ(o.cudnn_conv_algo_search, 1);
  EXPECT_TRUE(o.has_user_compute_stream);
  EXPECT_EQ(o.user_compute_stream, uintptr_t{140000000});
  EXPECT_TRUE(o.use_tf32);
  CudaProviderOptions d;
  ASSERT_TRUE(ParseCudaProviderOptions({}, &d).ok());
  EXPECT_FALSE(d.use_tf32);  // TF32 is off unless asked for
  EXPECT_EQ(d.gpu_mem_limit, 0u);
  ASSERT_TRUE(ParseCudaProviderOptions({{"arena_extend_strategy", "0"}, {"use_tf32", "false"}}, &d).ok());
}

TEST(CudaProviderOptions, BadValuesAndUnknownKeysNameTheOption) {
  struct Case {
    const char* key;
    const char* value;
    ErrorCode code;
  };
  for (const Case& c : {Case{"device_id", "-1", ErrorCode::kInvalidArgument},
                        Case{"device_id", "x", ErrorCode::kInvalidArgument},
                        Case{"gpu_mem_limit", "12GB", ErrorCode::kInvalidArgument},
                        Case{"arena_extend_strategy", "kDouble", ErrorCode::kInvalidArgument},
                        Case{"cudnn_conv_algo_search", "FAST", ErrorCode::kInvalidArgument},
                        Case{"use_tf32", "yes", ErrorCode::kInvalidArgument},
                        Case{"user_compute_stream", "0", ErrorCode::kInvalidArgument},
                        Case{"enable_cuda_graph", "2", ErrorCode::kInvalidArgument},
                        Case{"enable_cuda_graph", "1", ErrorCode::kNotImplemented},
                        Case{"do_copy_in_default_stream", "0", ErrorCode::kNotImplemented},
                        Case{"cudnn_conv_use_max_workspace", "1", ErrorCode::kInvalidArgument}}) {
    CudaProviderOptions o;
    Status st = ParseCudaProviderOptions({{c.key, c.value}}, &o);
    ASSERT_FALSE(st.ok()) << c.key << "=" << c.value;
    EXPECT_EQ(st.code(), c.code) << st.message();
    EXPECT_NE(st.message().find(std::string("'") + c.key + "'"), std::string::npos) << st.message();
  }
}

TEST(CudaProviderLoader, AvailabilityAgreesWithTheProviderList) {
  std::string why;
  const bool usable = CudaProviderUsable(&why);
  const auto& avail = AvailableProviders();
  EXPECT_EQ(usable, std::find(avail.begin(), avail.end(), kCudaProviderName) != avail.end());
  if (usable) return;
  // Without a GPU (or the library): the reason is said, and a request fails naming it.
  EXPECT_FALSE(why.empty());
  Status st = CheckProviderAvailable(kCudaProviderName);
  ASSERT_FALSE(st.ok());
  EXPECT_NE(st.message().find("'CUDAExecutionProvider' is not available: " + why), std::string::npos)
      << st.message();
  std::unique_ptr<ExecutionProvider> p;
  EXPECT_FALSE(CreateProvider(kCudaProviderName, {{"device_id", "0"}}, &p).ok());
  // The CPU provider still takes no options.
  Status cpu = CreateProvider(kCpuProviderName, {{"threads", "2"}}, &p);
  ASSERT_FALSE(cpu.ok());
  EXPECT_NE(cpu.message().find("provider option 'threads' of CPUExecutionProvider is not supported"),
            std::string::npos);
}

}  // namespace
}  // namespace onyx
