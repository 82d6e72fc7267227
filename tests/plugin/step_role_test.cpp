#include "step_role.hpp"

#include <gtest/gtest.h>

#include "error.hpp"
#include "planner.hpp"

namespace p = ddp::plan;

namespace {

// A job made by `sbatch --ddp-nodes=2 --ddp-gpus=2` through the cli_filter: 2 nodes x 2 tasks.
p::StepRoleInput ddp_job(unsigned step_nodes, unsigned step_tasks) {
  p::StepRoleInput in;
  p::apply_user_option(in.options, p::kOptNodes, "2");
  p::apply_user_option(in.options, p::kOptGpus, "2");
  in.job = p::JobShape{{2, 2}};
  in.step = {step_nodes, step_tasks};
  return in;
}

}  // namespace

TEST(StepRole, FullShapeStepIsStrictDdp) {
  const auto d = p::decide_step_role(ddp_job(2, 4));
  EXPECT_EQ(d.role, p::StepRole::Ddp);
  EXPECT_TRUE(d.check_nodes);
  EXPECT_TRUE(d.check_gpus);
  EXPECT_TRUE(d.job_has_shape);
}

TEST(StepRole, HelperStepsOfTheJobArePlain) {
  // srun -N1 -n1 setup; srun -N2 -n2 --ntasks-per-node=1 staging (or --overlap monitor).
  for (const auto& [nodes, tasks] : {std::pair{1u, 1u}, {2u, 2u}, {1u, 2u}, {2u, 3u}}) {
    const auto d = p::decide_step_role(ddp_job(nodes, tasks));
    EXPECT_EQ(d.role, p::StepRole::Plain) << nodes << " nodes, " << tasks << " tasks";
    EXPECT_NE(d.reason.find("plain step"), std::string::npos) << d.reason;
    EXPECT_NE(d.reason.find("srun --ddp"), std::string::npos) << d.reason;
  }
}

TEST(StepRole, OffOnTheStepMakesEvenAFullStepPlain) {
  auto in = ddp_job(2, 4);
  p::apply_user_option(in.options, p::kOptDdp, "off");
  EXPECT_EQ(p::decide_step_role(in).role, p::StepRole::Plain);
}

TEST(StepRole, DdpOnTheStepIsADdpStepOfItsOwnShape) {
  auto in = ddp_job(1, 2);
  p::apply_user_option(in.options, p::kOptDdp, "");
  in.command_line.any_ddp = true;
  const auto d = p::decide_step_role(in);
  EXPECT_EQ(d.role, p::StepRole::Ddp);
  EXPECT_FALSE(d.check_nodes);  // the job's --ddp-nodes=2 describes the training step
  EXPECT_FALSE(d.check_gpus);

  in.command_line.nodes = true;  // srun --ddp-nodes=1: held to what this srun said
  EXPECT_TRUE(p::decide_step_role(in).check_nodes);
}

TEST(StepRole, DdpOnTheStepWinsOverAnInheritedOff) {
  auto in = ddp_job(1, 1);
  p::apply_user_option(in.options, p::kOptDdp, "off");  // sbatch --ddp=off
  p::apply_user_option(in.options, p::kOptDdp, "");     // srun --ddp
  in.command_line.any_ddp = true;
  EXPECT_EQ(p::decide_step_role(in).role, p::StepRole::Ddp);
}

TEST(StepRole, AllocationWithoutTheShapeKeepsEveryStepStrict) {
  // No cli_filter: the job got 1 node and 1 task, so the training step must fail, not run alone.
  auto in = ddp_job(1, 1);
  in.job = p::JobShape{{1}};
  auto d = p::decide_step_role(in);
  EXPECT_EQ(d.role, p::StepRole::Ddp);
  EXPECT_FALSE(d.job_has_shape);
  EXPECT_TRUE(d.check_nodes);

  // -N2 by hand but one task per node: the nodes are right, the tasks per node are not.
  in = ddp_job(2, 2);
  in.job = p::JobShape{{1, 1}};
  d = p::decide_step_role(in);
  EXPECT_EQ(d.role, p::StepRole::Ddp);
  EXPECT_FALSE(d.job_has_shape);
}

TEST(StepRole, StepLargerThanTheJobIsStrict) {
  // --overlap -n8 in a job of 4 tasks: not "less than the job", so held to the shape.
  const auto d = p::decide_step_role(ddp_job(2, 8));
  EXPECT_EQ(d.role, p::StepRole::Ddp);
  EXPECT_TRUE(d.job_has_shape);
}

TEST(StepRole, SrunOutsideAJobIsItsOwnAllocation) {
  auto in = ddp_job(1, 1);
  in.job.reset();
  const auto d = p::decide_step_role(in);
  EXPECT_EQ(d.role, p::StepRole::Ddp);
  EXPECT_TRUE(d.check_nodes);
}

TEST(StepRole, DdpWithoutShapeOptionsInAJob) {
  // salloc -N2 --ddp; srun -N1 setup is plain, srun over the whole allocation is DDP.
  p::StepRoleInput in;
  p::apply_user_option(in.options, p::kOptDdp, "");
  in.job = p::JobShape{{1, 1}};
  in.step = {1, 1};
  EXPECT_EQ(p::decide_step_role(in).role, p::StepRole::Plain);
  in.step = {2, 2};
  EXPECT_EQ(p::decide_step_role(in).role, p::StepRole::Ddp);
}

TEST(StepRole, EncodingRoundTrips) {
  for (const auto& in : {ddp_job(2, 4), ddp_job(1, 1), ddp_job(2, 8)}) {
    const auto d = p::decide_step_role(in);
    const auto back = p::decode_step_role(p::encode_step_role(d));
    EXPECT_EQ(back.role, d.role);
    EXPECT_EQ(back.check_nodes, d.check_nodes);
    EXPECT_EQ(back.check_gpus, d.check_gpus);
    EXPECT_EQ(back.job_has_shape, d.job_has_shape);
  }
}

TEST(StepRole, DecodeRejectsWhatSrunNeverWrites) {
  for (const char* bad : {"", "ddp,", "ddp,check-everything", "Plain", "nodes", ",ddp"})
    EXPECT_THROW(p::decode_step_role(bad), p::PlanError) << bad;
}

TEST(StepRole, OffIsNotAProfileName) {
  p::UserOptions o;
  EXPECT_THROW(p::apply_user_option(o, p::kOptProfile, "off"), p::PlanError);
  p::apply_user_option(o, p::kOptDdp, "off");
  EXPECT_TRUE(o.off);
  EXPECT_FALSE(o.profile);
  p::apply_user_option(o, p::kOptDdp, "vega");
  EXPECT_FALSE(o.off);
  EXPECT_EQ(o.profile, "vega");
}

TEST(StepRole, ShapeErrorNamesTheFixThatApplies) {
  p::UserOptions o;
  p::apply_user_option(o, p::kOptNodes, "2");
  EXPECT_NE(p::shape_fix_hint(o, false).find("cli_filter"), std::string::npos);
  const std::string step_only = p::shape_fix_hint(o, true);
  EXPECT_EQ(step_only.find("cli_filter"), std::string::npos);
  EXPECT_NE(step_only.find("--ddp=off"), std::string::npos);
  EXPECT_NE(step_only.find("srun --ddp"), std::string::npos);
}
