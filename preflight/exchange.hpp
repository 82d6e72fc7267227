// What the ranks of a preflight say to each other through the rendezvous, in the order they say
// it: every rank's checks to rank 0, rank 0's orders to each rank, the measured links to rank 0.
// Only rank 0 reads what all ranks sent, so the exchange is O(R) requests in all (8,192 ranks:
// bench/scale.sh measures it). ddp-preflight and the scale simulator run this same code.
#pragma once

#include <chrono>
#include <string>
#include <vector>

#include "ddp/rendezvous.hpp"
#include "analysis.hpp"
#include "checks.hpp"
#include "orders.hpp"

namespace ddp::preflight {

struct CheckRound {
  std::vector<Check> rows;         // rank 0: the contract, `first_rows`, one per check over all ranks
  std::vector<std::string> nodes;  // rank 0: the step's nodes, by NODE_RANK
  std::vector<std::string> failed_nodes;  // rank 0: nodes_that_failed
  RankOrders orders;               // every rank: its own
};

// Every rank calls it with its own report. Rank 0 reads all reports, fails the step when any
// check failed or a report does not decode (a row that names its sender), and orders each node's
// leader to measure its links (`pairs`: pair_mode's word).
CheckRound exchange_checks(Rendezvous& rendezvous, const RankReport& mine, std::vector<Check> first_rows,
                           const std::string& pairs, std::chrono::milliseconds timeout);

// Every rank's measured links on rank 0 (empty elsewhere). Throws ddp::Error naming a rank whose
// message does not decode.
std::vector<Measurement> exchange_links(Rendezvous& rendezvous, const std::vector<Measurement>& measured,
                                        std::chrono::milliseconds timeout);

}  // namespace ddp::preflight
