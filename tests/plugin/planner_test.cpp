#include "planner.hpp"

#include <gtest/gtest.h>

#include <map>

#include "error.hpp"

namespace p = ddp::plan;

namespace {

p::StepFacts two_nodes_two_tasks(unsigned node_id) {
  p::StepFacts f;
  f.job_id = 42;
  f.step_id = 0;
  f.nodes = 2;
  f.node_id = node_id;
  f.total_tasks = 4;
  f.local_tasks = 2;
  f.nodelist = "n[1-2]";
  f.hostname = node_id == 0 ? "n1" : "n2";
  f.cpus_on_node = 8;
  return f;
}

p::UserOptions ddp_shape(unsigned nodes, unsigned gpus) {
  p::UserOptions o;
  p::apply_user_option(o, "ddp-nodes", std::to_string(nodes));
  p::apply_user_option(o, "ddp-gpus", std::to_string(gpus));
  return o;
}

std::map<std::string, std::string> env_of(const p::TaskPlan& t) {
  std::map<std::string, std::string> m;
  for (const auto& e : t.env) m[e.name] = e.value;
  return m;
}

// What one task of the node gets, placement included (no topology in these tests).
p::TaskPlan plan_task(const p::StepPlan& step, const p::TaskFacts& task, const p::GpuFacts& gpus) {
  return p::plan_task(step, task, gpus, p::place_node(step, gpus));
}

std::vector<p::TaskPlan> plan_node(const p::StepPlan& step, const p::GpuFacts& gpus) {
  return p::plan_node(step, gpus, p::place_node(step, gpus));
}

std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const p::PlanError& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST(Planner, TwoNodesTwoGpusGiveTheTorchrunContract) {
  const p::GpuFacts gpus{{0, 1}, std::string("0,1")};
  std::set<unsigned> ranks;
  for (unsigned node = 0; node < 2; ++node) {
    const auto step = p::plan_step(two_nodes_two_tasks(node), ddp_shape(2, 2), {});
    const auto tasks = plan_node(step, gpus);
    ASSERT_EQ(tasks.size(), 2u);
    for (unsigned local = 0; local < 2; ++local) {
      const auto env = env_of(tasks[local]);
      EXPECT_EQ(env.at("RANK"), std::to_string(node * 2 + local));
      EXPECT_EQ(env.at("LOCAL_RANK"), std::to_string(local));
      EXPECT_EQ(env.at("WORLD_SIZE"), "4");
      EXPECT_EQ(env.at("LOCAL_WORLD_SIZE"), "2");
      EXPECT_EQ(env.at("GROUP_RANK"), std::to_string(node));
      EXPECT_EQ(env.at("NODE_RANK"), std::to_string(node));
      EXPECT_EQ(env.at("MASTER_ADDR"), "n1");
      EXPECT_EQ(env.at("MASTER_PORT"), std::to_string(p::derive_port(42, 0, {})));
      EXPECT_EQ(env.at("DDP_BACKEND"), "nccl");
      EXPECT_EQ(env.at("DDP_GPU"), std::to_string(local));
      EXPECT_EQ(env.at("CUDA_DEVICE_ORDER"), "PCI_BUS_ID");
      EXPECT_EQ(env.at("OMP_NUM_THREADS"), "4");
      EXPECT_EQ(env.count("CUDA_VISIBLE_DEVICES"), 0u);  // already right: left alone
      ranks.insert(tasks[local].contract.rank);
    }
  }
  EXPECT_EQ(ranks.size(), 4u);
}

TEST(Planner, UserSetLibraryVariablesWinButRankVariablesAlwaysOverwrite) {
  const auto step = p::plan_step(two_nodes_two_tasks(0), ddp_shape(2, 2), {});
  const auto task = plan_task(step, {0, 0}, {{0, 1}, std::nullopt});
  for (const auto& e : task.env) {
    const bool user_may_override = e.name == "OMP_NUM_THREADS" || e.name == "CUDA_DEVICE_ORDER" ||
                                   e.name == "ROLE_NAME" ||
                                   e.name == "TORCH_NCCL_ASYNC_ERROR_HANDLING" ||
                                   e.name == "NCCL_ASYNC_ERROR_HANDLING";
    EXPECT_EQ(e.overwrite, !user_may_override) << e.name;
  }
}

TEST(Planner, WithoutGpusTheBackendIsGloo) {
  p::UserOptions o;
  p::apply_user_option(o, "ddp", "");
  const auto step = p::plan_step(two_nodes_two_tasks(1), o, {});
  const auto task = plan_task(step, {1, 3}, {});
  const auto env = env_of(task);
  EXPECT_EQ(env.at("DDP_BACKEND"), "gloo");
  EXPECT_EQ(env.count("DDP_GPU"), 0u);
  EXPECT_FALSE(task.gpu);
}

TEST(Planner, WrongNodeCountNamesAskedGivenAndFix) {
  auto f = two_nodes_two_tasks(0);
  f.nodes = 1;
  f.total_tasks = 2;
  f.nodelist = "n1";
  const auto msg = error_of([&] { p::plan_step(f, ddp_shape(2, 2), {}); });
  EXPECT_NE(msg.find("--ddp-nodes=2 --ddp-gpus=2 asked for 2 nodes"), std::string::npos) << msg;
  EXPECT_NE(msg.find("runs on 1 node (n1)"), std::string::npos) << msg;
  EXPECT_NE(msg.find("--nodes=2 --ntasks-per-node=2 --gpus-per-node=2"), std::string::npos) << msg;
}

TEST(Planner, WrongTaskCountPerNodeIsAnError) {
  auto f = two_nodes_two_tasks(0);
  f.local_tasks = 1;
  f.total_tasks = 2;
  const auto msg = error_of([&] { p::plan_step(f, ddp_shape(2, 2), {}); });
  EXPECT_NE(msg.find("node n1 runs 1 task of this step"), std::string::npos) << msg;
}

TEST(Planner, MissingGpusIsAnErrorWhenAsked) {
  const auto step = p::plan_step(two_nodes_two_tasks(0), ddp_shape(2, 2), {});
  const auto msg = error_of([&] { plan_task(step, {0, 0}, {}); });
  EXPECT_NE(msg.find("Slurm gave this step 0 GPUs on node n1"), std::string::npos) << msg;
}

TEST(Planner, ExplicitNcclWithoutAGpuPerTaskIsAnError) {
  p::UserOptions o;
  p::apply_user_option(o, "ddp-backend", "nccl");
  const auto step = p::plan_step(two_nodes_two_tasks(0), o, {});
  const auto msg = error_of([&] { plan_task(step, {0, 0}, {{0}, std::string("0")}); });
  EXPECT_NE(msg.find("nccl backend needs one GPU per task"), std::string::npos) << msg;
  EXPECT_NE(msg.find("--ddp-backend=gloo"), std::string::npos) << msg;
}

// --gpus-per-task=1 (or --gpu-bind=single:1) without ConstrainDevices, as the test cluster's
// Slurm 22.05 does it with step GPUs 2,3: slurmstepd sets SLURM_STEP_GPUS=2,3 and
// CUDA_VISIBLE_DEVICES=2,3 for the step, then narrows both in each task (task 0: 2 and 2, task 1:
// 3 and 3). The plan works from the step's pair, read before the tasks: every rank gets its GPU
// and NCCL, and cuda:LOCAL_RANK is that GPU.
TEST(Planner, GpusBoundPerTaskNodeWideAreWidenedSoLocalRankIndexesThem) {
  const auto step = p::plan_step(two_nodes_two_tasks(0), ddp_shape(2, 2), {});
  const p::GpuFacts gpus{{2, 3}, std::string("2,3")};
  for (unsigned local = 0; local < 2; ++local) {
    const auto env = env_of(plan_task(step, {local, local, std::to_string(2 + local)}, gpus));
    EXPECT_EQ(env.at("CUDA_VISIBLE_DEVICES"), "2,3");
    EXPECT_EQ(env.at("DDP_GPU"), std::to_string(2 + local));
    EXPECT_EQ(env.at("DDP_STEP_GPUS"), "2,3");
    EXPECT_EQ(env.at("DDP_BACKEND"), "nccl");
  }
}

// ConstrainDevices=yes: CUDA_VISIBLE_DEVICES counts the step's cgroup from 0 while
// SLURM_STEP_GPUS names the node's GPUs. The rank's GPU is the node's; CUDA's index is left as
// Slurm wrote it, never replaced by a node-wide index the cgroup does not have.
TEST(Planner, CgroupLocalIndicesAreKeptAndTheRankGetsTheNodesGpu) {
  const auto step = p::plan_step(two_nodes_two_tasks(0), ddp_shape(2, 2), {});
  const p::GpuFacts gpus{{2, 3}, std::string("0,1")};
  for (unsigned local = 0; local < 2; ++local) {
    const auto env = env_of(plan_task(step, {local, local, std::string("0,1")}, gpus));
    EXPECT_EQ(env.count("CUDA_VISIBLE_DEVICES"), 0u);
    EXPECT_EQ(env.at("DDP_GPU"), std::to_string(2 + local));
    EXPECT_EQ(env.at("DDP_BACKEND"), "nccl");
  }
}

// ConstrainDevices=yes and --gpus-per-task=1: each task's cgroup holds its own GPU only, and
// Slurm writes CUDA_VISIBLE_DEVICES=0 in every task. Rank 0 can use cuda:0; rank 1 has no
// cuda:1 whatever the plan writes: the step fails before the program, saying why and the fix.
TEST(Planner, CgroupLocalGpusBoundPerTaskFailRanksPastTheFirst) {
  const auto step = p::plan_step(two_nodes_two_tasks(0), ddp_shape(2, 2), {});
  const p::GpuFacts gpus{{2, 3}, std::string("0,1")};
  EXPECT_EQ(env_of(plan_task(step, {0, 0, std::string("0")}, gpus)).count("CUDA_VISIBLE_DEVICES"),
            0u);
  const auto msg = error_of([&] { plan_task(step, {1, 1, std::string("0")}, gpus); });
  EXPECT_NE(msg.find("local rank 1 cannot use cuda:LOCAL_RANK: Slurm bound its task to "
                     "CUDA_VISIBLE_DEVICES=0 (--gpus-per-task or --gpu-bind)"),
            std::string::npos)
      << msg;
  EXPECT_NE(msg.find("CUDA_VISIBLE_DEVICES=0,1 (SLURM_STEP_GPUS=2,3)"), std::string::npos) << msg;
  EXPECT_NE(msg.find("Fix: give the step its GPUs without binding them per task"),
            std::string::npos)
      << msg;
}

// UUIDs (MIG): never rewritten, in either numbering.
TEST(Planner, UuidListsAreLeftAsSlurmSetThem) {
  const auto step = p::plan_step(two_nodes_two_tasks(0), ddp_shape(2, 2), {});
  const p::GpuFacts gpus{{2, 3}, std::string("MIG-a,MIG-b")};
  const auto env = env_of(plan_task(step, {1, 1, std::string("MIG-b")}, gpus));
  EXPECT_EQ(env.count("CUDA_VISIBLE_DEVICES"), 0u);
  EXPECT_EQ(env.at("DDP_GPU"), "3");
}

TEST(Planner, ReservedPortWinsOverDerivedAndOptionOverBoth) {
  auto f = two_nodes_two_tasks(0);
  f.resv_ports = "12000-12001";
  p::UserOptions o;
  p::apply_user_option(o, "ddp", "");
  EXPECT_EQ(p::plan_step(f, o, {}).port.port, 12000);
  p::apply_user_option(o, "ddp-port", "29500");
  EXPECT_EQ(p::plan_step(f, o, {}).port.port, 29500);
}

TEST(Planner, AdminPortRangeIsUsed) {
  const auto cfg = p::parse_plugstack_args({"port_range=15000-15009"});
  const auto port = p::plan_step(two_nodes_two_tasks(0), ddp_shape(2, 2), cfg).port.port;
  EXPECT_GE(port, 15000);
  EXPECT_LE(port, 15009);
}

TEST(Planner, InconsistentFactsAreRejected) {
  auto f = two_nodes_two_tasks(0);
  f.node_id = 2;
  EXPECT_THROW(p::plan_step(f, {}, {}), p::PlanError);
  f = two_nodes_two_tasks(0);
  f.local_tasks = 5;
  EXPECT_THROW(p::plan_step(f, {}, {}), p::PlanError);
  const auto step = p::plan_step(two_nodes_two_tasks(0), {}, {});
  EXPECT_THROW(plan_task(step, {2, 0}, {}), p::PlanError);
  EXPECT_THROW(plan_task(step, {0, 4}, {}), p::PlanError);
}

TEST(Planner, OmpThreadsIsAFairShareAndAtLeastOne) {
  auto f = two_nodes_two_tasks(0);
  f.cpus_on_node = 1;
  const auto step = p::plan_step(f, {}, {});
  EXPECT_EQ(plan_task(step, {0, 0}, {}).omp_threads, 1u);
}

TEST(Planner, CpuStepsArePinnedToAFairSplitOfTheStepsCpus) {
  auto f = two_nodes_two_tasks(0);
  f.allowed_cpus = {0, 1, 2, 3, 4, 5};
  const auto step = p::plan_step(f, {}, {});
  const auto tasks = plan_node(step, {});
  ASSERT_EQ(tasks.size(), 2u);
  EXPECT_EQ(tasks[0].cpus, (p::CpuList{0, 1, 2}));
  EXPECT_EQ(tasks[1].cpus, (p::CpuList{3, 4, 5}));
  EXPECT_EQ(env_of(tasks[1]).at("DDP_CPUS"), "3-5");
  EXPECT_EQ(env_of(tasks[1]).at("OMP_NUM_THREADS"), "3");
  p::UserOptions none;
  p::apply_user_option(none, "ddp-bind", "none");
  EXPECT_TRUE(plan_node(p::plan_step(f, none, {}), {})[0].cpus.empty());
}

TEST(Planner, GpuStepWithoutTopologySaysSoAndStillRuns) {
  auto f = two_nodes_two_tasks(0);
  f.topology_problem = "cannot load the node topology: broken.xml";
  const auto step = p::plan_step(f, ddp_shape(2, 2), {});
  const auto placement = p::place_node(step, {{0, 1}, std::string("0,1")});
  ASSERT_FALSE(placement.warnings.empty());
  EXPECT_NE(placement.warnings[0].find("broken.xml; GPU-local NICs and cores are not used"),
            std::string::npos);
  EXPECT_EQ(env_of(plan_task(step, {0, 0}, {{0, 1}, std::string("0,1")})).count("NCCL_IB_HCA"), 0u);
}

TEST(Planner, ProfileSettingsApplyBelowTheCommandLine) {
  p::ResolvedProfile prof;
  prof.name = "site";
  prof.port_range = p::PortRange{15000, 15009};
  prof.host_suffix = "-ib";
  prof.env = {{"NCCL_DEBUG", "WARN", false}, {"NCCL_PROTO", "^LL128", true}};
  const auto step = p::plan_step(two_nodes_two_tasks(0), ddp_shape(2, 2), {}, prof);
  EXPECT_EQ(step.master_addr, "n1-ib");
  EXPECT_GE(step.port.port, 15000);
  EXPECT_LE(step.port.port, 15009);
  const auto task = plan_task(step, {0, 0}, {{0, 1}, std::string("0,1")});
  std::map<std::string, bool> overwrite;
  for (const auto& e : task.env) overwrite[e.name] = e.overwrite;
  EXPECT_FALSE(overwrite.at("NCCL_DEBUG"));  // the user's own value wins
  EXPECT_TRUE(overwrite.at("NCCL_PROTO"));   // forced by the profile
  EXPECT_EQ(env_of(task).at("DDP_PROFILE"), "site");
  p::UserOptions o = ddp_shape(2, 2);
  p::apply_user_option(o, "ddp-port", "29400");  // the command line beats the profile's range
  EXPECT_EQ(p::plan_step(two_nodes_two_tasks(0), o, {}, prof).port.port, 29400);
}

TEST(Planner, ProfileHcaListAndTransportDecideNcclIbHca) {
  p::ResolvedProfile prof;
  prof.hca = p::HcaMode::List;
  prof.hca_list = {"mlx5_0:1", "mlx5_3:1"};
  auto step = p::plan_step(two_nodes_two_tasks(0), {}, {}, prof);
  EXPECT_EQ(env_of(plan_task(step, {0, 0}, {})).at("NCCL_IB_HCA"), "=mlx5_0:1,mlx5_3:1");
  prof.transport = p::Transport::Ofi;  // Slingshot: NCCL_IB_HCA means nothing there
  step = p::plan_step(two_nodes_two_tasks(0), {}, {}, prof);
  EXPECT_EQ(env_of(plan_task(step, {0, 0}, {})).count("NCCL_IB_HCA"), 0u);
}

TEST(Planner, EveryVariableTorchrunsAgentGivesAWorker) {
  auto facts = two_nodes_two_tasks(1);
  facts.job_id = 42;
  facts.step_id = 3;
  facts.restart_count = 2;
  const auto step = p::plan_step(facts, ddp_shape(2, 2), {});
  const auto tasks = plan_node(step, {{0, 1}, std::string("0,1")});
  for (const auto& t : tasks) {
    const auto env = env_of(t);
    EXPECT_EQ(env.at("GROUP_WORLD_SIZE"), "2");
    EXPECT_EQ(env.at("ROLE_RANK"), env.at("RANK"));
    EXPECT_EQ(env.at("ROLE_WORLD_SIZE"), env.at("WORLD_SIZE"));
    EXPECT_EQ(env.at("ROLE_NAME"), "default");
    EXPECT_EQ(env.at("TORCHELASTIC_RUN_ID"), "42.3");
    EXPECT_EQ(env.at("TORCHELASTIC_RESTART_COUNT"), "2");
    EXPECT_EQ(env.at("TORCHELASTIC_MAX_RESTARTS"), "0");
    EXPECT_EQ(env.at("TORCH_NCCL_ASYNC_ERROR_HANDLING"), "1");
    EXPECT_EQ(env.at("NCCL_ASYNC_ERROR_HANDLING"), "1");
    EXPECT_EQ(env.count("TORCHELASTIC_USE_AGENT_STORE"), 0u);  // no agent serves a store here
    EXPECT_EQ(env.at("DDP_WATCH"), "45");
  }
  // Another step of the job, and another job, get another run id.
  facts.step_id = 4;
  EXPECT_EQ(env_of(plan_node(p::plan_step(facts, ddp_shape(2, 2), {}), {{0, 1}, std::nullopt})[0])
                .at("TORCHELASTIC_RUN_ID"),
            "42.4");
}

TEST(Planner, EachRankGetsItsOwnErrorFileInTheStepsPrivateDirectory) {
  auto facts = two_nodes_two_tasks(1);
  facts.watch_nonce = "0123456789abcdef";
  facts.tmpdir = "/scratch/tmp";
  const auto step = p::plan_step(facts, ddp_shape(2, 2), {});
  const auto tasks = plan_node(step, {{0, 1}, std::nullopt});
  EXPECT_EQ(env_of(tasks[0]).at("TORCHELASTIC_ERROR_FILE"),
            "/scratch/tmp/ddp-42.0-0123456789abcdef-node1/rank-2.json");
  EXPECT_EQ(env_of(tasks[1]).at("TORCHELASTIC_ERROR_FILE"),
            "/scratch/tmp/ddp-42.0-0123456789abcdef-node1/rank-3.json");
  // Without srun's nonce (an srun without the plugin) there is no directory to trust.
  facts.watch_nonce.reset();
  EXPECT_EQ(env_of(plan_node(p::plan_step(facts, ddp_shape(2, 2), {}), {{0, 1}, std::nullopt})[0])
                .count("TORCHELASTIC_ERROR_FILE"),
            0u);
}

TEST(Planner, TheWatchFollowsTheOptionOverTheProfile) {
  auto options = ddp_shape(2, 2);
  p::ResolvedProfile profile;
  profile.name = "site";
  profile.watch.timeout = 120;
  auto step = p::plan_step(two_nodes_two_tasks(0), options, {}, profile);
  ASSERT_TRUE(step.watch);
  EXPECT_EQ(step.watch->timeout, 120u);
  EXPECT_EQ(step.watch->reason, "profile site (watch.timeout)");
  p::apply_user_option(options, "ddp-watch", "30");
  step = p::plan_step(two_nodes_two_tasks(0), options, {}, profile);
  EXPECT_EQ(step.watch->timeout, 30u);
  EXPECT_EQ(step.watch->reason, "--ddp-watch=30");
  p::apply_user_option(options, "ddp-watch", "off");
  step = p::plan_step(two_nodes_two_tasks(0), options, {}, profile);
  EXPECT_FALSE(step.watch);
  EXPECT_EQ(env_of(plan_task(step, {0, 0}, {{0, 1}, std::nullopt})).count("DDP_WATCH"), 0u);
  profile.watch.enabled = false;
  EXPECT_FALSE(p::plan_step(two_nodes_two_tasks(0), ddp_shape(2, 2), {}, profile).watch);
  auto asked = ddp_shape(2, 2);
  p::apply_user_option(asked, "ddp-watch", "");
  EXPECT_TRUE(p::plan_step(two_nodes_two_tasks(0), asked, {}, profile).watch);
}

TEST(Planner, ASitesProfileValueBeatsTorchrunsDefault) {
  p::ResolvedProfile profile;
  profile.name = "site";
  profile.env.push_back({"TORCH_NCCL_ASYNC_ERROR_HANDLING", "3", false});
  const auto step = p::plan_step(two_nodes_two_tasks(0), ddp_shape(2, 2), {}, profile);
  const auto task = plan_task(step, {0, 0}, {{0, 1}, std::nullopt});
  // Applied in order without overwriting: the first value of a name is the one that stays.
  for (const auto& e : task.env)
    if (e.name == "TORCH_NCCL_ASYNC_ERROR_HANDLING") {
      EXPECT_EQ(e.value, "3");
      break;
    }
}

TEST(Planner, TheStepTokenTravelsAsKeyNonceAndStoreKey) {
  const auto token = p::new_step_token();
  EXPECT_EQ(token.key.size(), 32u);
  EXPECT_EQ(token.nonce.size(), 16u);
  EXPECT_EQ(token.store_key.size(), 64u);
  EXPECT_NE(p::new_step_token().key, token.key);
  EXPECT_NE(token.store_key.substr(0, 32), token.key);
  const auto back = p::decode_step_token(p::encode_step_token(token));
  ASSERT_TRUE(back);
  EXPECT_EQ(back->key, token.key);
  EXPECT_EQ(back->nonce, token.nonce);
  EXPECT_EQ(back->store_key, token.store_key);
  EXPECT_FALSE(p::decode_step_token(""));
  EXPECT_FALSE(p::decode_step_token(token.key));
  EXPECT_FALSE(p::decode_step_token(token.key + "." + token.nonce));
  EXPECT_FALSE(p::decode_step_token(token.key + "." + token.nonce + "0." + token.store_key));
  EXPECT_FALSE(p::decode_step_token(token.key + "." + token.nonce + "." + token.store_key + "0"));
  EXPECT_FALSE(p::decode_step_token(token.key + ".../../etc/x"));
}

// Every task of the step gets the store's secret, and no summary or verbose line shows it.
TEST(Planner, EveryTaskGetsTheStepsStoreKeyAndNoSummaryShowsIt) {
  auto facts = two_nodes_two_tasks(1);
  const std::string key(64, 'a');
  facts.store_key = key;
  const auto step = p::plan_step(facts, ddp_shape(2, 2), {});
  for (const auto& t : plan_node(step, {{0, 1}, std::string("0,1")})) {
    EXPECT_EQ(env_of(t).at("DDP_STORE_KEY"), key);
    EXPECT_EQ(t.summary().find(key.substr(0, 16)), std::string::npos) << t.summary();
  }
  facts.store_key.reset();  // an srun without the plugin: nothing to seal with, nothing set
  EXPECT_EQ(env_of(plan_node(p::plan_step(facts, ddp_shape(2, 2), {}), {{0, 1}, std::nullopt})[0])
                .count("DDP_STORE_KEY"),
            0u);
}
