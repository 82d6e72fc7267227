#include "port.hpp"

#include "error.hpp"
#include "parse.hpp"

namespace ddp::plan {

const char* port_source_name(PortSource s) {
  switch (s) {
    case PortSource::Reserved: return "reserved";
    case PortSource::Option: return "option";
    case PortSource::Derived: return "derived";
  }
  return "derived";
}

std::uint16_t derive_port(std::uint32_t job_id, std::uint32_t step_id, const PortRange& range) {
  // splitmix64's finaliser: consecutive job ids land far apart in the range.
  std::uint64_t h = job_id + 0x9e3779b97f4a7c15ULL;
  h = (h ^ (h >> 30)) * 0xbf58476d1ce4e5b9ULL;
  h = (h ^ (h >> 27)) * 0x94d049bb133111ebULL;
  h ^= h >> 31;
  const std::uint64_t offset = (h + step_id) % range.size();
  return static_cast<std::uint16_t>(range.low + offset);
}

std::uint16_t first_reserved_port(std::string_view resv_ports) {
  const std::size_t end = resv_ports.find_first_of(",-");
  return static_cast<std::uint16_t>(
      parse_unsigned("SLURM_STEP_RESV_PORTS", resv_ports.substr(0, end), 1, 65535));
}

PortChoice choose_port(std::uint32_t job_id, std::uint32_t step_id,
                       const std::optional<std::string>& resv_ports,
                       const std::optional<std::uint16_t>& user_port, const PortRange& range) {
  if (user_port) return {*user_port, PortSource::Option};
  if (resv_ports && !resv_ports->empty())
    return {first_reserved_port(*resv_ports), PortSource::Reserved};
  return {derive_port(job_id, step_id, range), PortSource::Derived};
}

}  // namespace ddp::plan
