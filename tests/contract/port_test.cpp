#include "port.hpp"

#include <gtest/gtest.h>

#include <set>

#include "error.hpp"

namespace p = ddp::plan;

TEST(Port, DerivedPortStaysInRange) {
  const p::PortRange r{20000, 20099};
  for (std::uint32_t job = 0; job < 2000; ++job) {
    const auto port = p::derive_port(job, job % 7, r);
    EXPECT_GE(port, 20000);
    EXPECT_LE(port, 20099);
  }
}

TEST(Port, StepsOfOneJobNeverShareAPortWhileTheRangeLasts) {
  const p::PortRange r{20000, 29999};
  std::set<std::uint16_t> seen;
  for (std::uint32_t step = 0; step < 1000; ++step) seen.insert(p::derive_port(4242, step, r));
  EXPECT_EQ(seen.size(), 1000u);
}

TEST(Port, ConsecutiveJobsAreScattered) {
  const p::PortRange r{20000, 29999};
  std::set<std::uint16_t> seen;
  for (std::uint32_t job = 100; job < 150; ++job) seen.insert(p::derive_port(job, 0, r));
  EXPECT_GE(seen.size(), 48u);  // a hash, not a counter; a rare collision is allowed
}

TEST(Port, SameFactsSamePortOnEveryNode) {
  EXPECT_EQ(p::derive_port(77, 3, {20000, 29999}), p::derive_port(77, 3, {20000, 29999}));
}

TEST(Port, PrecedenceIsOptionThenReservedThenDerived) {
  const p::PortRange r;
  auto c = p::choose_port(1, 0, std::string("12000-12003"), std::uint16_t{29500}, r);
  EXPECT_EQ(c.port, 29500);
  EXPECT_EQ(c.source, p::PortSource::Option);
  c = p::choose_port(1, 0, std::string("12000-12003"), std::nullopt, r);
  EXPECT_EQ(c.port, 12000);
  EXPECT_EQ(c.source, p::PortSource::Reserved);
  c = p::choose_port(1, 0, std::string("12007,12009"), std::nullopt, r);
  EXPECT_EQ(c.port, 12007);
  c = p::choose_port(1, 0, std::nullopt, std::nullopt, r);
  EXPECT_EQ(c.source, p::PortSource::Derived);
}

TEST(Port, GarbageReservedPortsAreAnError) {
  EXPECT_THROW(p::first_reserved_port("abc"), p::PlanError);
  EXPECT_THROW(p::first_reserved_port("70000"), p::PlanError);
}
