// CUDA_VISIBLE_DEVICES per task under Slurm's two numberings (visible_devices.hpp): node-wide
// indices without ConstrainDevices, cgroup-local ones with it; the step's lists as slurmstepd
// sets them before the tasks, each task's as it sets them for the task (--gpus-per-task and
// --gpu-bind narrow it).
#include "visible_devices.hpp"

#include <gtest/gtest.h>

#include "error.hpp"

namespace p = ddp::plan;

namespace {

using Visible = std::optional<std::string>;

p::TaskFacts task(unsigned local, Visible visible) { return {local, local, std::move(visible)}; }

std::string error_of(const p::GpuFacts& gpus, const p::TaskFacts& t) {
  try {
    p::task_visible_devices(gpus, t);
  } catch (const p::PlanError& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST(GpuNumbering, IsToldFromTheStepsPair) {
  EXPECT_EQ(p::gpu_numbering({{2, 3}, "2,3"}), p::GpuNumbering::NodeWide);
  EXPECT_EQ(p::gpu_numbering({{4, 6, 7}, "4,6,7"}), p::GpuNumbering::NodeWide);
  EXPECT_EQ(p::gpu_numbering({{2, 3}, "0,1"}), p::GpuNumbering::CgroupLocal);
  EXPECT_EQ(p::gpu_numbering({{4, 6, 7}, "0-2"}), p::GpuNumbering::CgroupLocal);
  EXPECT_EQ(p::gpu_numbering({{0, 1}, "0,1"}), p::GpuNumbering::Either);
  // What does not pair up is not guessed at.
  EXPECT_EQ(p::gpu_numbering({{2, 3}, "MIG-a,MIG-b"}), p::GpuNumbering::Unknown);
  EXPECT_EQ(p::gpu_numbering({{2, 3}, "GPU-8f6c2b1e-0a3d-4c55-9e1f-2a7b3c4d5e6f,GPU-1"}),
            p::GpuNumbering::Unknown);
  EXPECT_EQ(p::gpu_numbering({{2, 3}, "0,1,2"}), p::GpuNumbering::Unknown);
  EXPECT_EQ(p::gpu_numbering({{2, 3}, "1,2"}), p::GpuNumbering::Unknown);
  EXPECT_EQ(p::gpu_numbering({{2, 3}, std::nullopt}), p::GpuNumbering::Unknown);
  EXPECT_EQ(p::gpu_numbering({{2, 3}, "NoDevFiles"}), p::GpuNumbering::Unknown);
  EXPECT_EQ(p::gpu_numbering({{}, "0"}), p::GpuNumbering::Unknown);
  EXPECT_EQ(p::gpu_numbering({{2, 3}, "-1"}), p::GpuNumbering::Unknown);
}

TEST(TaskVisibleDevices, AListSlurmDidNotNarrowIsLeftAlone) {
  EXPECT_EQ(p::task_visible_devices({{2, 3}, "2,3"}, task(1, "2,3")), std::nullopt);
  EXPECT_EQ(p::task_visible_devices({{2, 3}, "0,1"}, task(1, "0,1")), std::nullopt);
  EXPECT_EQ(p::task_visible_devices({{0, 1}, "0,1"}, task(1, "0-1")), std::nullopt);
}

// Without ConstrainDevices every GPU of the node is reachable: any narrowing is undone, whatever
// GPU the binding chose (--gpus-per-task=1, --gpu-bind=single:1, closest, map_gpu).
TEST(TaskVisibleDevices, NodeWideNarrowingIsWidenedToTheStepsGpus) {
  const p::GpuFacts gpus{{2, 3}, "2,3"};
  EXPECT_EQ(p::task_visible_devices(gpus, task(0, "2")), "2,3");
  EXPECT_EQ(p::task_visible_devices(gpus, task(1, "3")), "2,3");
  EXPECT_EQ(p::task_visible_devices(gpus, task(1, "2")), "2,3");  // map_gpu gave it rank 0's
  EXPECT_EQ(p::task_visible_devices({{4, 5, 6, 7}, "4,5,6,7"}, task(3, "6,7")), "4,5,6,7");
}

// With ConstrainDevices and per-task binding, the task's cgroup holds only its own GPUs and its
// list counts them from 0: a rank can use cuda:LOCAL_RANK only when that index exists there, and
// the plan never writes node-wide indices the cgroup does not have.
TEST(TaskVisibleDevices, CgroupLocalNarrowingIsKeptOrRefused) {
  const p::GpuFacts gpus{{2, 3}, "0,1"};
  EXPECT_EQ(p::task_visible_devices(gpus, task(0, "0")), std::nullopt);
  const std::string e = error_of(gpus, task(1, "0"));
  EXPECT_NE(e.find("local rank 1 cannot use cuda:LOCAL_RANK"), std::string::npos) << e;
  EXPECT_NE(e.find("with ConstrainDevices=yes a bound task sees only its own GPUs"),
            std::string::npos)
      << e;
  EXPECT_NE(e.find("rather than --gpus-per-task; srun --gpu-bind=none undoes a binding"),
            std::string::npos)
      << e;
  EXPECT_EQ(e.find('\n'), std::string::npos) << e;
  // --gpus-per-task=2 on 4 GPUs: task 1 holds two GPUs, 0 and 1 in its cgroup: cuda:1 exists.
  EXPECT_EQ(p::task_visible_devices({{4, 5, 6, 7}, "0-3"}, task(1, "0,1")), std::nullopt);
  EXPECT_NE(error_of({{4, 5, 6, 7}, "0-3"}, task(2, "0,1")), "");
}

// GPUs 0..n-1 of the node: both numberings write the same step lists. Without a cgroup, task i's
// list holds its own GPU i, and widening is needed; with one, a task whose list lacks i has no
// cuda:i. Task 0 is fine either way (CUDA stops at the first index its cgroup lacks).
TEST(TaskVisibleDevices, EitherNumberingWidensWhenTheRanksOwnGpuIsThere) {
  const p::GpuFacts gpus{{0, 1}, "0,1"};
  EXPECT_EQ(p::task_visible_devices(gpus, task(0, "0")), "0,1");
  EXPECT_EQ(p::task_visible_devices(gpus, task(1, "1")), "0,1");
  EXPECT_NE(error_of(gpus, task(1, "0")), "");
}

TEST(TaskVisibleDevices, AnUnsetListGetsTheSteps) {
  EXPECT_EQ(p::task_visible_devices({{2, 3}, "2,3"}, task(1, std::nullopt)), "2,3");
  EXPECT_EQ(p::task_visible_devices({{2, 3}, "0,1"}, task(1, std::nullopt)), "0,1");
}

// UUIDs (GPU-..., MIG-...) are Slurm's for MIG devices in both numberings; a UUID the task's
// cgroup lacks would make CUDA see nothing, so lists that are not indices are never rewritten.
// Odd values are left to CUDA as well.
TEST(TaskVisibleDevices, UuidsMigAndOddValuesAreLeftAsSlurmSetThem) {
  EXPECT_EQ(p::task_visible_devices({{2, 3}, "MIG-a,MIG-b"}, task(1, "MIG-b")), std::nullopt);
  EXPECT_EQ(p::task_visible_devices({{2, 3}, "GPU-a,GPU-b"}, task(1, std::nullopt)), std::nullopt);
  EXPECT_EQ(p::task_visible_devices({{2, 3}, "2,3"}, task(1, "MIG-b")), std::nullopt);
  EXPECT_EQ(p::task_visible_devices({{2, 3}, "2,3"}, task(1, "-1")), std::nullopt);
  EXPECT_EQ(p::task_visible_devices({{2, 3}, "2,3"}, task(1, "3,3")), std::nullopt);
  EXPECT_EQ(p::task_visible_devices({{2, 3}, "2,3"}, task(1, "")), std::nullopt);
  EXPECT_EQ(p::task_visible_devices({{}, std::nullopt}, task(0, "0")), std::nullopt);
}

// More ranks than GPUs (a Gloo step with some GPUs): a rank without a GPU of its own is no
// reason to fail.
TEST(TaskVisibleDevices, RanksWithoutAGpuOfTheirOwnAreNotRefused) {
  EXPECT_EQ(p::task_visible_devices({{0}, "0"}, task(1, "0")), std::nullopt);
}
