// Who this process is in the job: its rank, its node, and where rank 0 listens for the others.
// Read once at start-up from whichever launcher started the process, so one training binary runs
// under `srun --ddp`, under torchrun, and under a plain `srun`.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>

#include "ddp/env_contract.hpp"

namespace ddp {

// Whose variables the Context came from. from_environment() tries them in this order, except
// that torchrun started inside an `srun --ddp` step wins: it is the launcher that spoke last.
enum class ContractSource { Plugin, Torchrun, Slurm };

// "spank_ddp", "torchrun" or "slurm": the names describe() and error messages use.
const char* contract_source_name(ContractSource source);

// Looks a variable up; nullopt when it is not set. Tests pass a map instead of the environment.
using EnvLookup = std::function<std::optional<std::string>(const std::string& name)>;

// The process's own environment (getenv), as an EnvLookup.
EnvLookup process_environment();

struct Context {
  int rank = 0, local_rank = 0, world_size = 1, local_world_size = 1, node_rank = 0, nodes = 1;
  std::string master_addr;
  std::uint16_t master_port = 0;
  ContractSource source = ContractSource::Torchrun;
  std::optional<contract::Backend> backend;  // DDP_BACKEND if given
  std::optional<std::string> gloo_ifname;    // GLOO_SOCKET_IFNAME if given
  std::optional<std::string> hostname_hint;  // this node's name (SLURMD_NODENAME or gethostname)
  // DDP_STORE_RELAY if given. 1: the node's other ranks reach rank 0's store through LOCAL_RANK 0,
  // so that rank 0 serves a few connections per node instead of one or two per rank; 0: every rank
  // reaches it itself. Unset: relayed (runtime/src/relay_rule.hpp).
  std::optional<bool> store_relay;
  // DDP_STORE_KEY: the step's secret, which spank_ddp gives every task of a DDP step (64 hex
  // digits). With it, everything libddp puts in the rendezvous store is sealed, so that another
  // user who connects to MASTER_PORT can neither read nor forge it; without it (torchrun, a plain
  // srun) the store is LibTorch's, open to anyone on the network, as it is for a Python program.
  // describe() never shows it.
  std::optional<std::string> store_key;
  // TORCHELASTIC_RESTART_COUNT: how often the job was started again (requeued); part of what a
  // sealed value is bound to, so that one from an earlier attempt does not pass in this one.
  unsigned restart_count = 0;
  // What this rendezvous is for, when one step meets more than once on MASTER_PORT (ddp-preflight
  // says "preflight", the program after it leaves it empty): bound into the sealed values too, so
  // that one copied from the preflight's store does not pass in the program's.
  std::string store_scope;

  // Throws ddp::Error naming the variable, its value, what is allowed and how to launch instead.
  static Context from_environment();                      // the process's environment
  static Context from_environment(const EnvLookup& env);  // any lookup, for tests

  bool is_main() const { return rank == 0; }

  // One line for the job log: "rank 3/8 (local 1/4, node 1/2) master n1:24567 via spank_ddp".
  std::string describe() const;
};

}  // namespace ddp
