// What the ranks of a preflight tell each other through the rendezvous store, as JSON: each rank's
// checks (RankReport), rank 0's orders to each rank, and the links a node's leader measured. A message that does not decode
// stops the preflight with an error that names the rank that sent it: a rank of another version,
// or a store that lost data, must not silently drop a rank from the verdict.
#pragma once

#include <string>
#include <vector>

#include "analysis.hpp"
#include "orders.hpp"
#include "rank_report.hpp"

namespace ddp::preflight {

std::string encode_report(const RankReport& report);
// Throws ddp::Error naming `from` (the sender's rank) and what is wrong with the text.
RankReport decode_report(const std::string& text, int from);

std::string encode_links(const std::vector<Measurement>& links);
// Throws ddp::Error naming `from`.
std::vector<Measurement> decode_links(const std::string& text, int from);

std::string encode_orders(const RankOrders& orders);
// Throws ddp::Error naming rank 0, which sent them.
RankOrders decode_orders(const std::string& text);

}  // namespace ddp::preflight
