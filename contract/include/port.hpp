// MASTER_PORT: Slurm's reserved port when the step has one, a fixed one when the user asked,
// otherwise one derived from (job id, step id), so that every node of a step computes the same
// port without talking to each other and concurrent steps on one head node do not collide.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace ddp::plan {

// The range a derived port is taken from (plugstack.conf port_range=LOW-HIGH).
struct PortRange {
  std::uint16_t low = 20000;
  std::uint16_t high = 29999;
  unsigned size() const { return static_cast<unsigned>(high) - low + 1; }
};

enum class PortSource { Reserved, Option, Derived };
const char* port_source_name(PortSource s);

struct PortChoice {
  std::uint16_t port = 0;
  PortSource source = PortSource::Derived;
};

// Steps of one job get consecutive ports (distinct while fewer steps than the range holds);
// jobs are scattered over the range by a hash of the job id.
std::uint16_t derive_port(std::uint32_t job_id, std::uint32_t step_id, const PortRange& range);

// SLURM_STEP_RESV_PORTS: "12000-12003" or "12000,12002"; the first port is the rendezvous port.
std::uint16_t first_reserved_port(std::string_view resv_ports);

PortChoice choose_port(std::uint32_t job_id, std::uint32_t step_id,
                       const std::optional<std::string>& resv_ports,
                       const std::optional<std::uint16_t>& user_port, const PortRange& range);

}  // namespace ddp::plan
