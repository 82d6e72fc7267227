// Each rank's own checks, with the node's answers given: interfaces as getifaddrs would list them,
// InfiniBand ports in a sysfs tree made for the test, GPUs as the CUDA driver would report them.
#include "checks.hpp"

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <map>

#include <gtest/gtest.h>

#include "cuda_driver.hpp"

namespace {

namespace pf = ddp::preflight;
using pf::Status;

ddp::EnvLookup env_of(std::map<std::string, std::string> vars) {
  return [vars](const std::string& name) -> std::optional<std::string> {
    const auto it = vars.find(name);
    if (it == vars.end()) return std::nullopt;
    return it->second;
  };
}

ddp::plan::NetFacts node_net() {
  ddp::plan::NetFacts net;
  net.interfaces = {{"lo", true, true, true},
                    {"eth0", true, false, true},
                    {"ib0", false, false, true},     // down
                    {"ens1f0", true, false, false}};  // up, no IPv4 address
  return net;
}

TEST(PreflightChecks, ChosenInterfacesMustBeUpWithAnAddress) {
  auto c = pf::check_interfaces(env_of({{"GLOO_SOCKET_IFNAME", "eth0"}, {"NCCL_SOCKET_IFNAME", "=eth0"}}),
                                node_net());
  EXPECT_EQ(c.status, Status::Ok);
  EXPECT_EQ(c.detail, "eth0");
  c = pf::check_interfaces(env_of({{"GLOO_SOCKET_IFNAME", "ib0"}}), node_net());
  EXPECT_EQ(c.status, Status::Failed);
  EXPECT_EQ(c.detail, "GLOO_SOCKET_IFNAME=ib0: ib0 is down");
  c = pf::check_interfaces(env_of({{"NCCL_SOCKET_IFNAME", "=eth1"}}), node_net());
  EXPECT_EQ(c.detail, "NCCL_SOCKET_IFNAME==eth1: no interface eth1 on this node");
  c = pf::check_interfaces(env_of({{"GLOO_SOCKET_IFNAME", "ens1f0"}}), node_net());
  EXPECT_EQ(c.detail, "GLOO_SOCKET_IFNAME=ens1f0: ens1f0 has no IPv4 address");
}

TEST(PreflightChecks, NcclPrefixesAndExclusions) {
  // A prefix is fine when one interface it matches is usable.
  auto c = pf::check_interfaces(env_of({{"NCCL_SOCKET_IFNAME", "eth,ib"}}), node_net());
  EXPECT_EQ(c.status, Status::Failed) << c.detail;
  EXPECT_EQ(c.detail, "NCCL_SOCKET_IFNAME=eth,ib: ib0 is down");
  c = pf::check_interfaces(env_of({{"NCCL_SOCKET_IFNAME", "e"}}), node_net());
  EXPECT_EQ(c.status, Status::Ok) << c.detail;
  c = pf::check_interfaces(env_of({{"NCCL_SOCKET_IFNAME", "hsn"}}), node_net());
  EXPECT_EQ(c.detail, "NCCL_SOCKET_IFNAME=hsn: no interface named hsn* on this node");
  c = pf::check_interfaces(env_of({{"NCCL_SOCKET_IFNAME", "^docker,lo"}}), node_net());
  EXPECT_EQ(c.status, Status::Skipped);
  c = pf::check_interfaces(env_of({}), node_net());
  EXPECT_EQ(c.status, Status::Skipped);
}

class SysfsTree : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/ddp-ib-XXXXXX";
    root_ = mkdtemp(tmpl);
    port("mlx5_0", 1, "4: ACTIVE");
    port("mlx5_1", 1, "1: DOWN");
    port("mlx5_1", 2, "4: ACTIVE");
  }
  void TearDown() override { std::filesystem::remove_all(root_); }
  void port(const std::string& hca, int p, const std::string& state) {
    const auto dir = root_ + "/" + hca + "/ports/" + std::to_string(p);
    std::filesystem::create_directories(dir);
    std::ofstream(dir + "/state") << state << "\n";
  }
  std::string root_;
};

TEST_F(SysfsTree, TheChosenHcaPortMustBeActive) {
  auto c = pf::check_hcas(env_of({{"DDP_NIC", "mlx5_0:1 PIX"}}), root_);
  EXPECT_EQ(c.status, Status::Ok) << c.detail;
  EXPECT_EQ(c.detail, "mlx5_0:1 ACTIVE");
  c = pf::check_hcas(env_of({{"NCCL_IB_HCA", "=mlx5_1:1"}}), root_);
  EXPECT_EQ(c.status, Status::Failed);
  EXPECT_EQ(c.detail, "mlx5_1:1 is not ACTIVE (mlx5_1:1 1: DOWN)");
  c = pf::check_hcas(env_of({{"NCCL_IB_HCA", "mlx5_1"}}), root_);  // any port of it
  EXPECT_EQ(c.status, Status::Ok) << c.detail;
  c = pf::check_hcas(env_of({{"DDP_NIC", "mlx5_7:1 PHB"}}), root_);
  EXPECT_EQ(c.detail, "no InfiniBand HCA mlx5_7 on this node (" + root_ + ")");
  c = pf::check_hcas(env_of({{"NCCL_IB_HCA", "^mlx5_1"}}), root_);
  EXPECT_EQ(c.status, Status::Skipped);
  EXPECT_EQ(pf::sysfs_ports(root_, "mlx5_1"), (std::vector<unsigned>{1, 2}));
}

ddp::Context rank(int local_rank) {
  ddp::Context c;
  c.local_rank = local_rank;
  c.local_world_size = 2;
  return c;
}

pf::CudaDevices driver(std::vector<std::string> ids) {
  pf::CudaDevices d;
  d.loaded = true;
  d.bus_ids = std::move(ids);
  return d;
}

TEST(PreflightChecks, EachRankSeesExactlyItsGpu) {
  std::string bus;
  const auto env = env_of({{"CUDA_VISIBLE_DEVICES", "0,1"}, {"DDP_GPU", "1"}, {"DDP_GPU_BUSID", "0000:86:00.0"}});
  auto c = pf::check_gpus(env, rank(1), driver({"0000:3B:00.0", "00000000:86:00.0"}), bus);
  EXPECT_EQ(c.status, Status::Ok) << c.detail;
  EXPECT_EQ(c.detail, "cuda:1 0000:86:00.0");
  EXPECT_EQ(bus, "0000:86:00.0");
  c = pf::check_gpus(env, rank(1), driver({"0000:86:00.0", "0000:3b:00.0"}), bus);
  EXPECT_EQ(c.status, Status::Failed);
  EXPECT_EQ(c.detail, "cuda:1 is 0000:3b:00.0, but this rank was given DDP_GPU_BUSID=0000:86:00.0 "
                      "(is CUDA_DEVICE_ORDER=PCI_BUS_ID set?)");
  c = pf::check_gpus(env, rank(1), driver({"0000:3b:00.0"}), bus);
  EXPECT_EQ(c.detail, "CUDA_VISIBLE_DEVICES=0,1 names 2 GPU(s), but CUDA sees 1");
  c = pf::check_gpus(env_of({{"DDP_GPU", "3"}}), rank(1), driver({"0000:3b:00.0"}), bus);
  EXPECT_EQ(c.detail, "LOCAL_RANK=1, but CUDA sees 1 device(s): cuda:1 does not exist");
}

TEST(PreflightChecks, NoDriverOrNoGpusIsSaidNotFailed) {
  std::string bus;
  pf::CudaDevices none;
  none.why_not = "libcuda.so.1: cannot open shared object file";
  auto c = pf::check_gpus(env_of({{"CUDA_VISIBLE_DEVICES", "0,1"}}), rank(0), none, bus);
  EXPECT_EQ(c.status, Status::Skipped);
  EXPECT_EQ(c.detail, "not checked: no CUDA driver here (libcuda.so.1: cannot open shared object file)");
  c = pf::check_gpus(env_of({{"CUDA_VISIBLE_DEVICES", "NoDevFiles"}}), rank(0), none, bus);
  EXPECT_EQ(c.detail, "no GPUs in this step");
  c = pf::check_gpus(env_of({}), rank(0), driver({"0000:3b:00.0"}), bus);
  EXPECT_EQ(c.status, Status::Skipped);
  EXPECT_EQ(c.detail, "no GPUs given to this step (CUDA sees 1)");
}

TEST(PreflightChecks, BusIdsAreComparedInOneSpelling) {
  EXPECT_EQ(pf::normal_bus_id("0000:3B:00.0"), "0000:3b:00.0");
  EXPECT_EQ(pf::normal_bus_id("00000000:3B:00.0"), "0000:3b:00.0");
}

// The driver is the real code path: dlopen, cuInit, the device list, here from a stand-in library
// that answers as the driver does (CUDA_VISIBLE_DEVICES applied).
TEST(PreflightCudaDriver, ReadsBusIdsThroughTheDriverApi) {
  setenv("FAKE_CUDA_BUS_IDS", "0000:3B:00.0,0000:5E:00.0,0000:86:00.0", 1);
  setenv("CUDA_VISIBLE_DEVICES", "2,0", 1);
  const auto d = pf::query_cuda_devices(DDP_FAKE_LIBCUDA);
  EXPECT_TRUE(d.loaded) << d.why_not;
  EXPECT_EQ(d.bus_ids, (std::vector<std::string>{"0000:86:00.0", "0000:3B:00.0"}));
  const auto missing = pf::query_cuda_devices("/nonexistent/libcuda.so.1");
  EXPECT_FALSE(missing.loaded);
  EXPECT_NE(missing.why_not.find("/nonexistent/libcuda.so.1"), std::string::npos) << missing.why_not;
  unsetenv("FAKE_CUDA_BUS_IDS");
  unsetenv("CUDA_VISIBLE_DEVICES");
}

}  // namespace
