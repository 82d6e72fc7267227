#include "exchange.hpp"

#include "ddp/error.hpp"
#include "messages.hpp"
#include "rank_report.hpp"
#include "schedule.hpp"

namespace ddp::preflight {

CheckRound exchange_checks(Rendezvous& rendezvous, const RankReport& mine, std::vector<Check> first_rows,
                           const std::string& pairs, std::chrono::milliseconds timeout) {
  const auto texts = rendezvous.gather(encode_report(mine), timeout);
  CheckRound out;
  std::vector<std::string> orders;
  if (rendezvous.context().is_main()) {
    // Each report on its own: one that does not decode fails the step and names its rank (the
    // first, and how many more), and the others still count.
    std::vector<RankReport> reports;
    std::string unreadable;
    std::size_t unread = 0;
    for (std::size_t r = 0; r < texts.size(); ++r) {
      try {
        reports.push_back(decode_report(texts[r], static_cast<int>(r)));
      } catch (const Error& e) {
        if (unread++ == 0) unreadable = e.what();
      }
    }
    if (unread > 1) unreadable += " (and " + std::to_string(unread - 1) + " more ranks' reports)";
    const auto nodes = node_leaders(reports);
    for (const auto& n : nodes) out.nodes.push_back(n.host);
    out.failed_nodes = nodes_that_failed(reports);
    out.rows.push_back({"contract", Status::Ok,
                        std::to_string(rendezvous.context().world_size) + " ranks on " +
                            std::to_string(nodes.size()) + " node(s), the same WORLD_SIZE and MASTER on every rank"});
    for (auto& row : first_rows) out.rows.push_back(std::move(row));
    if (!unreadable.empty()) out.rows.push_back({"reports", Status::Failed, unreadable});
    for (auto& row : summarise(reports)) out.rows.push_back(std::move(row));
    bool pass = true;
    for (const auto& row : out.rows) pass = pass && row.status != Status::Failed;
    const int count = static_cast<int>(nodes.size());
    const auto rounds = pass ? pair_rounds(count, pair_mode(pairs, count)) : std::vector<std::vector<Pair>>{};
    for (const auto& o : orders_for_ranks(nodes, rounds, rendezvous.context().world_size, pass))
      orders.push_back(encode_orders(o));
  }
  out.orders = decode_orders(rendezvous.scatter(orders, timeout));
  return out;
}

std::vector<Measurement> exchange_links(Rendezvous& rendezvous, const std::vector<Measurement>& measured,
                                        std::chrono::milliseconds timeout) {
  const auto texts = rendezvous.gather(encode_links(measured), timeout);
  std::vector<Measurement> links;
  for (std::size_t r = 0; r < texts.size(); ++r)
    for (auto& m : decode_links(texts[r], static_cast<int>(r))) links.push_back(std::move(m));
  return links;
}

}  // namespace ddp::preflight
