// C++ consumer of an installed Onyx Runtime through find_package(OnyxRuntime).
#include <cstdio>
#include <vector>

#include <onyxruntime/onyxruntime_cxx_api.h>

int main(int argc, char** argv) {
  if (argc != 2) return 2;
  try {
    onyx::Env env;
    onyx::Session session(env, argv[1]);
    onyx::MemoryInfo cpu = onyx::MemoryInfo::CreateCpu();
    std::vector<float> x = {1, 2, 3, 4, 5, 6}, y = {10, 20, 30, 40, 50, 60};
    std::vector<onyx::Value> inputs;
    inputs.push_back(onyx::Value::CreateTensor<float>(cpu, x.data(), x.size(), {2, 3}));
    inputs.push_back(onyx::Value::CreateTensor<float>(cpu, y.data(), y.size(), {2, 3}));
    std::vector<onyx::Value> out = session.Run({"x", "y"}, inputs, {"z"});
    const float* z = out[0].GetTensorData<float>();
    std::printf("z =");
    for (int i = 0; i < 6; ++i) std::printf(" %g", z[i]);
    std::printf("\n");
  } catch (const onyx::Exception& e) {
    std::fprintf(stderr, "consumer: %s\n", e.what());
    return 1;
  }
  return 0;
}
