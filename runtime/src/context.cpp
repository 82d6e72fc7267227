#include "ddp/context.hpp"

#include <cstdlib>

#include "contract_read.hpp"
#include "ddp/env_contract.hpp"
#include "ddp/error.hpp"
#include "local_host.hpp"
#include "names.hpp"
#include "parse.hpp"

namespace ddp {
namespace {

namespace c = ddp::contract;
using detail::EnvReader;

// torchrun's elastic agent sets this for every worker; inside an `srun --ddp` step it means
// torchrun rewrote RANK and friends after the plugin, so its contract is the true one.
constexpr const char* kTorchrunMarker = "TORCHELASTIC_RUN_ID";

constexpr const char* kNoContract =
    "no launcher contract found: none of DDP_LAUNCHER (srun --ddp), RANK (torchrun) or "
    "SLURM_PROCID (srun) is set. Launch with `srun --ddp ...`, `torchrun --nproc-per-node=N "
    "--no-python ./program`, or plain `srun ./program`; for one process by hand, "
    "`torchrun --standalone --nproc-per-node=1 --no-python ./program`.";

// Optional settings: an empty value means unset, as it does to NCCL and Gloo.
std::optional<std::string> setting(const EnvReader& env, const char* name) {
  auto value = env.get(name);
  if (value && value->empty()) return std::nullopt;
  return value;
}

std::optional<c::Backend> read_backend(const EnvReader& env) {
  const auto text = setting(env, c::kDdpBackend);
  if (!text) return std::nullopt;
  const auto backend = c::backend_from_name(*text);
  if (!backend)
    env.fail(std::string(c::kDdpBackend) + "=" + plan::quoted(*text) +
             " is not a backend; allowed: nccl, gloo. Unset it to let the program choose.");
  return backend;
}

// "ib0" or "eth0,eth1": each a name as the plugin and profiles accept it (names.hpp).
std::optional<bool> read_store_relay(const EnvReader& env) {
  const auto value = setting(env, c::kDdpStoreRelay);
  if (!value) return std::nullopt;
  const auto on = detail::yes_no(*value);
  if (!on)
    env.fail(std::string(c::kDdpStoreRelay) + "=" + plan::quoted(*value) +
             " is not a yes/no value; use 1 (each node's LOCAL_RANK 0 relays its ranks' store requests) "
             "or 0 (every rank reaches rank 0's store itself), or unset it (relayed).");
  return *on;
}

// The value is a secret: a message never repeats it.
std::optional<std::string> read_store_key(const EnvReader& env) {
  const auto value = setting(env, c::kDdpStoreKey);
  if (!value) return std::nullopt;
  if (value->size() != c::kStoreKeyHexDigits || value->find_first_not_of("0123456789abcdef") != std::string::npos)
    env.fail(std::string(c::kDdpStoreKey) + " is not a step's secret as spank_ddp writes it (" +
             std::to_string(c::kStoreKeyHexDigits) +
             " lowercase hex digits). Unset it: the plugin sets it for every task of a DDP step.");
  return value;
}

unsigned read_restart_count(const EnvReader& env) {
  const auto value = setting(env, c::kTorchelasticRestartCount);
  if (!value) return 0;
  try {
    return static_cast<unsigned>(plan::parse_unsigned(c::kTorchelasticRestartCount, *value, 0, 1u << 30));
  } catch (const std::exception& e) {
    env.fail(std::string(e.what()) + ". Unset it, or leave it to the launcher (spank_ddp, torchrun).");
  }
}

std::optional<std::string> read_gloo_ifname(const EnvReader& env) {
  auto names = setting(env, c::kGlooSocketIfname);
  if (!names) return names;
  std::size_t start = 0;
  for (std::size_t comma = 0; comma != std::string::npos; start = comma + 1) {
    comma = names->find(',', start);
    if (!plan::interface_name(std::string_view(*names).substr(start, comma - start)))
      env.fail(std::string(c::kGlooSocketIfname) + "=" + plan::quoted(*names) +
               " is not a list of network interface names (" + plan::kInterfaceNameRule +
               "); e.g. ib0 or eth0,eth1. Run `ip link` on the node to see its names.");
  }
  return names;
}

std::optional<std::string> read_hostname(const EnvReader& env) {
  if (auto name = setting(env, "SLURMD_NODENAME")) return name;
  return plan::local_host_name();
}

ContractSource choose_source(const EnvLookup& env) {
  const bool torchrun_inside = env(kTorchrunMarker).has_value();
  if (env(c::kDdpLauncher) && !torchrun_inside) return ContractSource::Plugin;
  if (env(c::kRank) || torchrun_inside) return ContractSource::Torchrun;
  if (env("SLURM_PROCID")) return ContractSource::Slurm;
  throw Error(kNoContract);
}

EnvReader reader_for(ContractSource source, const EnvLookup& env) {
  switch (source) {
    case ContractSource::Plugin: return detail::plugin_reader(env);
    case ContractSource::Torchrun: return detail::torchrun_reader(env);
    case ContractSource::Slurm: break;
  }
  return detail::slurm_reader(env);
}

detail::RawContract read(ContractSource source, const EnvReader& env) {
  switch (source) {
    case ContractSource::Plugin: return detail::read_plugin(env);
    case ContractSource::Torchrun: return detail::read_torchrun(env);
    case ContractSource::Slurm: break;
  }
  return detail::read_slurm(env);
}

}  // namespace

const char* contract_source_name(ContractSource source) {
  switch (source) {
    case ContractSource::Plugin: return "spank_ddp";
    case ContractSource::Torchrun: return "torchrun";
    case ContractSource::Slurm: return "slurm";
  }
  return "unknown";
}

EnvLookup process_environment() {
  return [](const std::string& name) -> std::optional<std::string> {
    const char* value = std::getenv(name.c_str());
    if (!value) return std::nullopt;
    return std::string(value);
  };
}

Context Context::from_environment() { return from_environment(process_environment()); }

Context Context::from_environment(const EnvLookup& env) {
  if (!env) throw Error("Context::from_environment: the environment lookup is empty");
  const ContractSource source = choose_source(env);
  const EnvReader reader = reader_for(source, env);
  const detail::RawContract raw = read(source, reader);
  detail::check_consistent(reader, raw);

  Context ctx;
  ctx.source = raw.source;
  ctx.rank = static_cast<int>(raw.rank.value);
  ctx.local_rank = static_cast<int>(raw.local_rank.value);
  ctx.world_size = static_cast<int>(raw.world_size.value);
  ctx.local_world_size = static_cast<int>(raw.local_world_size.value);
  ctx.node_rank = static_cast<int>(raw.node_rank.value);
  ctx.nodes = static_cast<int>(raw.nodes.value);
  ctx.master_addr = raw.master_addr;
  ctx.master_port = raw.master_port;
  ctx.backend = read_backend(reader);
  ctx.gloo_ifname = read_gloo_ifname(reader);
  ctx.hostname_hint = read_hostname(reader);
  ctx.store_relay = read_store_relay(reader);
  ctx.store_key = read_store_key(reader);
  ctx.restart_count = read_restart_count(reader);
  return ctx;
}

std::string Context::describe() const {
  // An IPv6 address needs brackets before ":port".
  const bool v6 = master_addr.find(':') != std::string::npos;
  const std::string addr = v6 ? "[" + master_addr + "]" : master_addr;
  return "rank " + std::to_string(rank) + "/" + std::to_string(world_size) + " (local " +
         std::to_string(local_rank) + "/" + std::to_string(local_world_size) + ", node " +
         std::to_string(node_rank) + "/" + std::to_string(nodes) + ") master " + addr + ":" +
         std::to_string(master_port) + " via " + contract_source_name(source);
}

}  // namespace ddp
