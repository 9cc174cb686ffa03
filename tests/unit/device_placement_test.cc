// Partitioning between a device provider and the CPU, tested without a GPU:
// a fake device provider whose "device memory" is host memory tagged as
// CUDA runs some CPU kernels and refuses any input not in its memory, so a
// missing copy fails the run; its data transfer counts the copies.
#include <gtest/gtest.h>

#include <atomic>
#include <cstring>
#include <map>

#include "core/session/session.h"
#include "onnx-ml.pb.h"
#include "providers/cpu/cpu_provider.h"

namespace onyx {
namespace {

constexpr const char* kFakeName = "FakeDeviceExecutionProvider";

class FakeDeviceAllocator final : public Allocator {
 public:
  FakeDeviceAllocator() {
    info_.name = "Cuda";
    info_.device = DeviceType::kCuda;
  }
  void* Alloc(size_t bytes) override { return GetCpuAllocator()->Alloc(bytes); }
  void Free(void* p) override { GetCpuAllocator()->Free(p); }
  const MemoryInfo& Info() const override { return info_; }

 private:
  MemoryInfo info_;
};

struct Counters {
  std::atomic<int> to_device{0}, to_host{0}, within_device{0}, synchronized{0};
};

// Runs a CPU kernel after checking where its inputs are.
class CheckedKernel final : public OpKernel {
 public:
  CheckedKernel(std::unique_ptr<OpKernel> inner, std::vector<int> host_inputs)
      : inner_(std::move(inner)), host_inputs_(std::move(host_inputs)) {}
  Status Compute(KernelContext& ctx) const override {
    for (int i = 0; i < ctx.InputCount(); ++i) {
      const Tensor* t = ctx.Input(i);
      if (!t) continue;
      const bool host = std::find(host_inputs_.begin(), host_inputs_.end(), i) != host_inputs_.end();
      if ((t->location().device == DeviceType::kCuda) == host)
        return MakeError(ErrorCode::kFail, "fake device kernel got input ", i, " in the wrong memory");
    }
    return inner_->Compute(ctx);
  }

 private:
  std::unique_ptr<OpKernel> inner_;
  std::vector<int> host_inputs_;
};

class FakeDeviceProvider final : public ExecutionProvider {
 public:
  FakeDeviceProvider(std::shared_ptr<Counters> counters) : counters_(std::move(counters)) {
    const KernelRegistry& cpu = cpu_->Kernels();
    for (const KernelDef* d : cpu.Defs()) {
      if (d->domain != "" || (d->op_type != "Add" && d->op_type != "Relu" && d->op_type != "Reshape" &&
                              d->op_type != "Cast"))
        continue;
      KernelDef def = *d;
      std::vector<int> host = d->op_type == "Reshape" ? std::vector<int>{1} : std::vector<int>{};
      KernelCreateFn inner = d->create;
      def.create = [inner, host](const KernelInfo& info, std::unique_ptr<OpKernel>* out) {
        // Declines a value it "lacks", as a CUDA kernel may: the CPU takes the node.
        if (info.node().op_type == "Cast" && info.AttrInt("to", 0) == 11)
          return MakeError(ErrorCode::kNotImplemented, "fake device: no Cast to double");
        std::unique_ptr<OpKernel> k;
        ONYX_RETURN_IF_ERROR(inner(info, &k));
        *out = std::make_unique<CheckedKernel>(std::move(k), host);
        return Status::OK();
      };
      registry_.Register(std::move(def));
    }
  }
  const std::string& Name() const override {
    static const std::string name = kFakeName;
    return name;
  }
  const KernelRegistry& Kernels() const override { return registry_; }
  Allocator* GetAllocator() const override { return &alloc_; }
  DeviceType Device() const override { return DeviceType::kCuda; }
  bool InputOnHost(const KernelDef& def, int i) const override { return def.op_type == "Reshape" && i == 1; }
  Status CopyTensor(const Tensor& src, Tensor* dst) const override {
    const bool to_dev = dst->location().device == DeviceType::kCuda;
    const bool from_dev = src.location().device == DeviceType::kCuda;
    if (!to_dev && !from_dev) return MakeError(ErrorCode::kFail, "fake copy asked to copy host to host");
    if (to_dev && from_dev) counters_->within_device++;
    else (to_dev ? counters_->to_device : counters_->to_host)++;
    std::memcpy(dst->raw(), src.raw(), src.bytes());
    return Status::OK();
  }
  Status Synchronize() const override {
    counters_->synchronized++;
    return Status::OK();
  }

 private:
  std::unique_ptr<ExecutionProvider> cpu_ = CreateCpuProvider();
  KernelRegistry registry_;
  mutable FakeDeviceAllocator alloc_;
  std::shared_ptr<Counters> counters_;
};

std::shared_ptr<Counters> g_counters = std::make_shared<Counters>();

void RegisterFake() {
  static bool done = [] {
    RegisterProviderForTesting(kFakeName, [](const ProviderOptions&) {
      return std::unique_ptr<ExecutionProvider>(new FakeDeviceProvider(g_counters));
    });
    return true;
  }();
  (void)done;
}

void AddNode(onnx::GraphProto* g, const std::string& op, std::vector<std::string> in, std::vector<std::string> out) {
  auto* n = g->add_node();
  n->set_op_type(op);
  n->set_name(op + "_" + out[0]);
  for (auto& s : in) n->add_input(s);
  for (auto& s : out) n->add_output(s);
}

void AddFloatValue(google::protobuf::RepeatedPtrField<onnx::ValueInfoProto>* list, const std::string& name,
                   std::vector<int64_t> dims) {
  auto* vi = list->Add();
  vi->set_name(name);
  vi->mutable_type()->mutable_tensor_type()->set_elem_type(1);
  auto* shape = vi->mutable_type()->mutable_tensor_type()->mutable_shape();
  for (int64_t d : dims) shape->add_dim()->set_dim_value(d);
}

// X[2,3] -> Add(W) -> Relu (R, also an output) -> Softmax (CPU) -> Reshape([3,2]) -> Relu -> Y
std::string Model() {
  onnx::ModelProto m;
  m.set_ir_version(8);
  auto* op = m.add_opset_import();
  op->set_version(17);
  auto* g = m.mutable_graph();
  g->set_name("placement");
  AddFloatValue(g->mutable_input(), "X", {2, 3});
  AddFloatValue(g->mutable_output(), "R", {2, 3});
  AddFloatValue(g->mutable_output(), "Y", {3, 2});
  auto* w = g->add_initializer();
  w->set_name("W");
  w->set_data_type(1);
  w->add_dims(3);
  for (float v : {0.5f, -1.f, 2.f}) w->add_float_data(v);
  auto* shape = g->add_initializer();
  shape->set_name("shape");
  shape->set_data_type(7);
  shape->add_dims(2);
  shape->add_int64_data(3);
  shape->add_int64_data(2);
  AddNode(g, "Add", {"X", "W"}, {"A"});
  AddNode(g, "Relu", {"A"}, {"R"});
  AddNode(g, "Softmax", {"R"}, {"S"});
  AddNode(g, "Reshape", {"S", "shape"}, {"T"});
  AddNode(g, "Relu", {"T"}, {"Y"});
  return m.SerializeAsString();
}

// A session over model `bytes` with `providers` in that order, unoptimized
// (`threads`: intra-op threads, 0 = the default); null after a failed check.
std::unique_ptr<Session> SessionOver(const std::string& bytes, const std::vector<std::string>& providers,
                                     int threads = 0) {
  SessionOptions o;
  o.graph_optimization_level = 0;
  if (threads > 0) o.intra_op_threads = threads;
  for (const auto& p : providers) o.providers.push_back({p, {}});
  std::unique_ptr<Session> s;
  Status st = Session::CreateFromBytes(o, bytes.data(), bytes.size(), &s);
  EXPECT_TRUE(st.ok()) << st.message();
  return s;
}

std::unique_ptr<Session> Load(std::vector<std::string> providers) { return SessionOver(Model(), providers, 1); }

std::vector<Value> RunX(const Session& s, const std::vector<float>& x) {
  Tensor t(ElemType::kFloat, {2, 3});
  std::memcpy(t.raw(), x.data(), x.size() * sizeof(float));
  Value v(std::move(t));
  std::vector<Value> out;
  Status st = s.Run(nullptr, {"X"}, {&v}, {}, &out);
  EXPECT_TRUE(st.ok()) << st.message();
  return out;
}

TEST(DevicePlacement, CopiesAtBoundariesAndResultsMatchCpu) {
  RegisterFake();
  auto dev = Load({kFakeName, kCpuProviderName});
  auto cpu = Load({kCpuProviderName});
  ASSERT_TRUE(dev && cpu);

  std::vector<std::string> assigned;
  for (const auto& a : dev->NodeAssignments()) assigned.push_back(a.second->op_type + "@" + *a.first);
  const std::vector<std::string> expected = {
      "MemcpyFromHost@FakeDeviceExecutionProvider",  // X (a feed: passed through when already there)
      "Add@FakeDeviceExecutionProvider",             // W was uploaded once, at plan time
      "Relu@FakeDeviceExecutionProvider",
      "MemcpyToHost@FakeDeviceExecutionProvider",    // R for Softmax and as an output, one copy
      "Softmax@CPUExecutionProvider",
      "MemcpyFromHost@FakeDeviceExecutionProvider",  // S; Reshape's shape stays on the host
      "Reshape@FakeDeviceExecutionProvider",
      "Relu@FakeDeviceExecutionProvider",
      "MemcpyToHost@FakeDeviceExecutionProvider"};   // Y
  EXPECT_EQ(assigned, expected);

  const std::vector<float> x = {1.f, 2.f, -3.f, -4.f, 0.25f, 1.5f};
  const int to_dev = g_counters->to_device.load(), to_host = g_counters->to_host.load();
  const int syncs = g_counters->synchronized.load();
  auto a = RunX(*dev, x);
  auto b = RunX(*cpu, x);
  EXPECT_EQ(g_counters->to_device.load() - to_dev, 2);  // X and S
  EXPECT_EQ(g_counters->to_host.load() - to_host, 2);   // R and Y
  EXPECT_EQ(g_counters->synchronized.load() - syncs, 1);
  ASSERT_EQ(a.size(), 2u);
  for (size_t i = 0; i < a.size(); ++i) {
    const Tensor& p = a[i].tensor();
    const Tensor& q = b[i].tensor();
    EXPECT_EQ(p.location().device, DeviceType::kCpu) << "output " << i << " is not in host memory";
    ASSERT_EQ(p.dims(), q.dims());
    for (int64_t k = 0; k < p.size(); ++k) EXPECT_FLOAT_EQ(p.data<float>()[k], q.data<float>()[k]);
  }
}

TEST(DevicePlacement, DeviceFeedIsPassedThroughWithoutACopy) {
  RegisterFake();
  auto dev = Load({kFakeName, kCpuProviderName});
  ASSERT_TRUE(dev);
  FakeDeviceAllocator alloc;
  Tensor t(ElemType::kFloat, {2, 3}, &alloc);
  for (int i = 0; i < 6; ++i) t.data<float>()[i] = static_cast<float>(i) - 2.f;
  Value v(std::move(t));
  const int to_dev = g_counters->to_device.load();
  std::vector<Value> out;
  Status st = dev->Run(nullptr, {"X"}, {&v}, {}, &out);
  ASSERT_TRUE(st.ok()) << st.message();
  EXPECT_EQ(g_counters->to_device.load() - to_dev, 1);  // only S; X was already on the device
  EXPECT_FLOAT_EQ(out[0].tensor().data<float>()[5], 5.f);  // relu(3 + W[2] = 2)
}

TEST(DevicePlacement, HostOnlySessionRefusesDeviceFeed) {
  auto cpu = Load({kCpuProviderName});
  ASSERT_TRUE(cpu);
  FakeDeviceAllocator alloc;
  Tensor t(ElemType::kFloat, {2, 3}, &alloc);
  std::memset(t.raw(), 0, t.bytes());
  Value v(std::move(t));
  std::vector<Value> out;
  Status st = cpu->Run(nullptr, {"X"}, {&v}, {}, &out);
  ASSERT_FALSE(st.ok());
  EXPECT_NE(st.message().find("input 'X' is in Cuda memory"), std::string::npos) << st.message();
  // The session stays usable.
  EXPECT_EQ(RunX(*cpu, {1, 1, 1, 1, 1, 1}).size(), 2u);
}

TEST(DevicePlacement, BoundDeviceOutputIsWrittenInPlaceWithoutACopy) {
  RegisterFake();
  auto dev = Load({kFakeName, kCpuProviderName});
  ASSERT_TRUE(dev);
  FakeDeviceAllocator alloc;
  auto y = std::make_shared<Tensor>(ElemType::kFloat, Dims{3, 2}, &alloc);
  auto r = std::make_shared<Tensor>(ElemType::kFloat, Dims{2, 3});  // R bound in host memory
  Tensor t(ElemType::kFloat, {2, 3});
  for (int i = 0; i < 6; ++i) t.data<float>()[i] = static_cast<float>(i);
  Value v(std::move(t));
  std::vector<Value> out;
  std::vector<std::shared_ptr<Tensor>> bound = {r, y};
  const int to_host = g_counters->to_host.load(), within = g_counters->within_device.load();
  Status st = dev->Run(nullptr, {"X"}, {&v}, {"R", "Y"}, &out, &bound);
  EXPECT_EQ(g_counters->to_host.load() - to_host, 1);        // R only
  EXPECT_EQ(g_counters->within_device.load() - within, 0);  // Y: the last Relu wrote the caller's buffer itself
  ASSERT_TRUE(st.ok()) << st.message();
  ASSERT_EQ(out.size(), 2u);
  EXPECT_EQ(&out[1].tensor(), y.get());  // the caller's device buffer, written there
  EXPECT_EQ(out[1].tensor().location().device, DeviceType::kCuda);
  EXPECT_FLOAT_EQ(r->data<float>()[5], 7.f);  // relu(5 + W[2] = 2)
  auto want = RunX(*Load({kCpuProviderName}), {0, 1, 2, 3, 4, 5});
  for (int k = 0; k < 6; ++k) EXPECT_FLOAT_EQ(y->data<float>()[k], want[1].tensor().data<float>()[k]);
}

MemoryInfo FakeDeviceMemory() {
  MemoryInfo m;
  m.name = "Cuda";
  m.device = DeviceType::kCuda;
  return m;
}

Value HostFloats(Dims dims, float start) {
  Tensor t(ElemType::kFloat, std::move(dims));
  for (int64_t i = 0; i < t.size(); ++i) t.data<float>()[i] = start + static_cast<float>(i);
  return Value(std::move(t));
}

void ExpectSameFloats(const Tensor& got, const Tensor& want) {
  ASSERT_EQ(got.dims(), want.dims());
  for (int64_t k = 0; k < got.size(); ++k) EXPECT_FLOAT_EQ(got.data<float>()[k], want.data<float>()[k]) << k;
}

// IOBinding's bind_output(name, device) without a buffer: a graph output a
// device kernel makes is returned in device memory, its copy step skipped.
TEST(DevicePlacement, OutputBoundToTheDeviceStaysThereWithoutACopy) {
  RegisterFake();
  auto dev = Load({kFakeName, kCpuProviderName});
  auto cpu = Load({kCpuProviderName});
  ASSERT_TRUE(dev && cpu);
  Value x = HostFloats({2, 3}, -2.f);
  const std::vector<MemoryInfo> where = {MemoryInfo(), FakeDeviceMemory()};  // R on the host, Y on the device
  const int to_host = g_counters->to_host.load(), to_dev = g_counters->to_device.load();
  std::vector<Value> out;
  Status st = dev->Run(nullptr, {"X"}, {&x}, {"R", "Y"}, &out, nullptr, &where);
  ASSERT_TRUE(st.ok()) << st.message();
  EXPECT_EQ(g_counters->to_host.load() - to_host, 1);  // R only: Y's MemcpyToHost did not copy
  EXPECT_EQ(g_counters->to_device.load() - to_dev, 2);  // X and S, as ever; Y was not copied back either
  ASSERT_EQ(out.size(), 2u);
  EXPECT_EQ(out[0].tensor().location().device, DeviceType::kCpu);
  EXPECT_EQ(out[1].tensor().location().device, DeviceType::kCuda);
  std::vector<Value> want;
  ASSERT_TRUE(cpu->Run(nullptr, {"X"}, {&x}, {"R", "Y"}, &want).ok());
  ExpectSameFloats(out[0].tensor(), want[0].tensor());
  ExpectSameFloats(out[1].tensor(), want[1].tensor());
  // The same session, asked for host outputs again, copies as before.
  auto host = RunX(*dev, {-2, -1, 0, 1, 2, 3});
  EXPECT_EQ(host[1].tensor().location().device, DeviceType::kCpu);
  ExpectSameFloats(host[1].tensor(), want[1].tensor());
}

TEST(DevicePlacement, OutputBoundToTheDeviceThatAHostNodeReadsComesFromTheDevice) {
  RegisterFake();
  auto dev = Load({kFakeName, kCpuProviderName});
  auto cpu = Load({kCpuProviderName});
  ASSERT_TRUE(dev && cpu);
  Value x = HostFloats({2, 3}, -1.f);
  // R is made on the device and read by Softmax on the CPU: its copy runs
  // for Softmax, and the device version is returned without a copy back.
  const std::vector<MemoryInfo> where = {FakeDeviceMemory(), FakeDeviceMemory()};
  const int to_dev = g_counters->to_device.load();
  std::vector<Value> out;
  Status st = dev->Run(nullptr, {"X"}, {&x}, {"R", "Y"}, &out, nullptr, &where);
  ASSERT_TRUE(st.ok()) << st.message();
  EXPECT_EQ(g_counters->to_device.load() - to_dev, 2);  // X and S only: R's host copy went nowhere
  ASSERT_EQ(out.size(), 2u);
  std::vector<Value> want;
  ASSERT_TRUE(cpu->Run(nullptr, {"X"}, {&x}, {"R", "Y"}, &want).ok());
  for (int i = 0; i < 2; ++i) {
    EXPECT_EQ(out[i].tensor().location().device, DeviceType::kCuda) << i;
    ExpectSameFloats(out[i].tensor(), want[i].tensor());
  }
}

// X[N,3] -> Add(W) -> Relu -> Y (device kernels; Y's shape is only known at
// run time); X -> Softmax (CPU) -> S.
std::unique_ptr<Session> LoadDynamic(std::vector<std::string> providers) {
  onnx::ModelProto m;
  m.set_ir_version(8);
  m.add_opset_import()->set_version(17);
  auto* g = m.mutable_graph();
  g->set_name("dynamic");
  AddFloatValue(g->mutable_input(), "X", {-1, 3});
  g->mutable_input(0)->mutable_type()->mutable_tensor_type()->mutable_shape()->mutable_dim(0)->set_dim_param("N");
  auto* y = g->add_output();
  y->set_name("Y");
  y->mutable_type()->mutable_tensor_type()->set_elem_type(1);
  auto* s_out = g->add_output();
  s_out->set_name("S");
  s_out->mutable_type()->mutable_tensor_type()->set_elem_type(1);
  auto* w = g->add_initializer();
  w->set_name("W");
  w->set_data_type(1);
  w->add_dims(3);
  for (float v : {1.f, -1.f, 0.5f}) w->add_float_data(v);
  AddNode(g, "Add", {"X", "W"}, {"A"});
  AddNode(g, "Relu", {"A"}, {"Y"});
  AddNode(g, "Softmax", {"X"}, {"S"});
  return SessionOver(m.SerializeAsString(), providers);
}

TEST(DevicePlacement, OutputBoundToTheDeviceTakesTheShapeOfEachRun) {
  RegisterFake();
  auto dev = LoadDynamic({kFakeName, kCpuProviderName});
  auto cpu = LoadDynamic({kCpuProviderName});
  ASSERT_TRUE(dev && cpu);
  const std::vector<MemoryInfo> where = {FakeDeviceMemory(), FakeDeviceMemory()};
  for (int64_t n : {2, 5, 1}) {
    Value x = HostFloats({n, 3}, -3.f);
    const int to_host = g_counters->to_host.load(), to_dev = g_counters->to_device.load();
    std::vector<Value> out, want;
    Status st = dev->Run(nullptr, {"X"}, {&x}, {"Y", "S"}, &out, nullptr, &where);
    ASSERT_TRUE(st.ok()) << st.message();
    EXPECT_EQ(g_counters->to_host.load() - to_host, 0) << "Y was copied to the host";
    // X goes up for Add; S, made on the CPU, is copied to the device memory it was bound to.
    EXPECT_EQ(g_counters->to_device.load() - to_dev, 2);
    ASSERT_TRUE(cpu->Run(nullptr, {"X"}, {&x}, {"Y", "S"}, &want).ok());
    ASSERT_EQ(out.size(), 2u);
    for (int i = 0; i < 2; ++i) {
      EXPECT_EQ(out[i].tensor().location().device, DeviceType::kCuda) << i;
      EXPECT_EQ(out[i].tensor().dims(), (Dims{n, 3}));
      ExpectSameFloats(out[i].tensor(), want[i].tensor());
    }
  }
}

TEST(DevicePlacement, OutputBoundToADeviceTheSessionLacksIsRefusedNamingIt) {
  RegisterFake();
  auto cpu = Load({kCpuProviderName});
  auto dev = Load({kFakeName, kCpuProviderName});
  ASSERT_TRUE(cpu && dev);
  Value x = HostFloats({2, 3}, 0.f);
  const std::vector<MemoryInfo> where = {MemoryInfo(), FakeDeviceMemory()};
  std::vector<Value> out;
  Status st = cpu->Run(nullptr, {"X"}, {&x}, {"R", "Y"}, &out, nullptr, &where);
  ASSERT_FALSE(st.ok());
  EXPECT_EQ(st.code(), ErrorCode::kInvalidArgument);
  EXPECT_NE(st.message().find("output 'Y' cannot be allocated in Cuda memory: no provider of this session runs on "
                              "that device (it runs on: CPUExecutionProvider)"),
            std::string::npos)
      << st.message();
  EXPECT_TRUE(cpu->CheckOutputDevice("Y", MemoryInfo()).ok());
  MemoryInfo other = FakeDeviceMemory();
  other.device_id = 1;
  st = dev->CheckOutputDevice("Y", other);
  EXPECT_NE(st.message().find("output 'Y' is bound to Cuda device 1 but this session's FakeDeviceExecutionProvider "
                              "runs on device 0"),
            std::string::npos)
      << st.message();
  // Both sessions stay usable.
  EXPECT_EQ(RunX(*cpu, {1, 1, 1, 1, 1, 1}).size(), 2u);
  EXPECT_EQ(RunX(*dev, {1, 1, 1, 1, 1, 1}).size(), 2u);
}

// X -> Relu (device) -> Cast to double (declined: CPU) -> Y;
// Shape(X) (CPU: no fake kernel) -> Add(int64 constant) (host integers: CPU) -> S.
TEST(DevicePlacement, DeclinedKernelsAndHostShapeArithmeticRunOnTheCpu) {
  RegisterFake();
  onnx::ModelProto m;
  m.set_ir_version(8);
  m.add_opset_import()->set_version(17);
  auto* g = m.mutable_graph();
  g->set_name("declined");
  AddFloatValue(g->mutable_input(), "X", {2, 3});
  auto* y = g->add_output();
  y->set_name("Y");
  y->mutable_type()->mutable_tensor_type()->set_elem_type(11);
  auto* s_out = g->add_output();
  s_out->set_name("S");
  s_out->mutable_type()->mutable_tensor_type()->set_elem_type(7);
  auto* one = g->add_initializer();
  one->set_name("one");
  one->set_data_type(7);
  one->add_dims(1);
  one->add_int64_data(1);
  AddNode(g, "Relu", {"X"}, {"R"});
  AddNode(g, "Cast", {"R"}, {"Y"});
  g->mutable_node(1)->add_attribute()->CopyFrom(onnx::AttributeProto());
  auto* to = g->mutable_node(1)->mutable_attribute(0);
  to->set_name("to");
  to->set_type(onnx::AttributeProto::INT);
  to->set_i(11);
  AddNode(g, "Shape", {"X"}, {"shape"});
  AddNode(g, "Add", {"shape", "one"}, {"S"});
  auto sess = SessionOver(m.SerializeAsString(), {kFakeName});
  ASSERT_TRUE(sess);
  std::map<std::string, std::string> where;
  for (const auto& a : sess->NodeAssignments()) where[a.second->op_type] = *a.first;
  EXPECT_EQ(where["Relu"], kFakeName);
  EXPECT_EQ(where["Cast"], kCpuProviderName);
  EXPECT_EQ(where["Shape"], kCpuProviderName);
  EXPECT_EQ(where["Add"], kCpuProviderName);
  auto out = RunX(*sess, {-1, 2, -3, 4, -5, 6});
  ASSERT_EQ(out.size(), 2u);
  EXPECT_EQ(out[0].tensor().data<double>()[1], 2.0);
  EXPECT_EQ(out[0].tensor().data<double>()[2], 0.0);
  EXPECT_EQ(out[1].tensor().data<int64_t>()[0], 3);
  EXPECT_EQ(out[1].tensor().data<int64_t>()[1], 4);
}

}  // namespace
}  // namespace onyx
