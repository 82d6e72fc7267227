#include "rendezvous.hpp"

#include <netdb.h>
#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>

#include <exception>
#include <future>
#include <memory>
#include <sstream>
#include <stdexcept>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include <torch/csrc/distributed/c10d/TCPStore.hpp>

#include "torch_compat.hpp"
#include "ddp/error.hpp"
#include "contract_tally.hpp"
#include "contract_views.hpp"
#include "fd_limit.hpp"
#include "relayed_store.hpp"
#include "sealed_store.hpp"
#include "seal.hpp"
#include "missing_ranks.hpp"
#include "parse.hpp"
#include "rank_places.hpp"
#include "local_host.hpp"

namespace ddp::detail {
namespace {

using namespace std::chrono_literals;

std::string where(const Context& c) {
  return c.master_addr + ":" + std::to_string(c.master_port);
}

std::string this_host(const Context& c) {
  if (c.hostname_hint) return *c.hostname_hint;
  return plan::local_host_name().value_or("this node");
}

// What a rank that reached MASTER_PORT but never heard a rendezvous store there is told.
Error no_answer(const Context& c, const std::string& host, std::chrono::milliseconds timeout,
                const std::string& detail) {
  return Error("rank " + std::to_string(c.rank) + " on " + host + " reached " + where(c) +
               " (MASTER_ADDR:MASTER_PORT) but got no rendezvous answer within " +
               seconds_text(timeout) + " s (" + detail +
               "). Another program may hold that port (rank 0's own error then says it is in use: "
               "choose another with --ddp-port or MASTER_PORT), or rank 0 stopped");
}

// Whether something accepts connections at MASTER_ADDR:MASTER_PORT now (within a second).
bool someone_listens(const Context& c) {
  addrinfo hints{};
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* found = nullptr;
  if (getaddrinfo(c.master_addr.c_str(), std::to_string(c.master_port).c_str(), &hints, &found) != 0)
    return false;
  bool listens = false;
  for (addrinfo* a = found; a != nullptr && !listens; a = a->ai_next) {
    const int fd = socket(a->ai_family, a->ai_socktype | SOCK_NONBLOCK | SOCK_CLOEXEC, a->ai_protocol);
    if (fd < 0) continue;
    if (::connect(fd, a->ai_addr, a->ai_addrlen) == 0) {
      listens = true;
    } else if (errno == EINPROGRESS) {
      pollfd p{fd, POLLOUT, 0};
      int error = 0;
      socklen_t len = sizeof error;
      listens = poll(&p, 1, 1000) == 1 && getsockopt(fd, SOL_SOCKET, SO_ERROR, &error, &len) == 0 &&
                error == 0;
    }
    close(fd);
  }
  freeaddrinfo(found);
  return listens;
}

// A client's TCPStore constructor waits for the server's first answer (LibTorch 2.x pings it)
// with no receive time-out: facing another program that holds MASTER_PORT and never answers, it
// never returns. So it runs on a thread of its own, awaited for the rendezvous time-out (a thread
// still stuck then is left blocked on its socket). Then, if something listens on the port, that
// is the silent program; if nothing does, rank 0's store never came up there (LibTorch's own
// connect attempts would end later: it retries once past the time-out).
c10::intrusive_ptr<c10d::Store> connect_client(const Context& c, const c10d::TCPStoreOptions& options,
                                               std::chrono::milliseconds timeout) {
  using Result = std::promise<c10::intrusive_ptr<c10d::Store>>;
  auto result = std::make_shared<Result>();
  auto future = result->get_future();
  std::thread([result, host = c.master_addr, options] {
    try {
      result->set_value(compat::make_tcp_store(host, options));
    } catch (...) {
      result->set_exception(std::current_exception());
    }
  }).detach();
  if (future.wait_for(timeout + std::chrono::seconds(1)) == std::future_status::timeout) {
    if (someone_listens(c))
      throw no_answer(c, this_host(c), timeout, "the store's first answer never came");
    throw std::runtime_error("nothing accepted a connection there");  // connect() says where
  }
  return future.get();
}

// Rank 0's reads of every rank's text. The classic TCPStore server (LibTorch 1.13, and 2.x as
// Debian builds it) answers the requests it finds in one pass over all its connections, so R reads
// one after another cost R passes over R connections (4,096 ranks: 12 s on the 2-core machine).
// Readers on connections of their own are answered in the same passes, about kReaders times fewer.
constexpr std::size_t kReaders = 16;
// Rank 0 reads every rank's text on its own connection up to this many ranks, beyond on kReaders.
constexpr int kReadAloneUpTo = 256;

// Named from the step's secret where there is one: an abstract name is listed in /proc/net/unix
// for every user of the node once it is bound, but nobody can bind it first who does not know
// the secret, which would otherwise cost every step with two ranks on this node its relay.
std::string relay_name(const Context& c) {
  if (c.store_key)
    if (const auto secret = seal::from_hex(*c.store_key)) {
      const auto id = seal::derive(*secret, "slurm-ddp store relay name, node " + std::to_string(c.node_rank));
      return "slurm-ddp/store-relay/" + seal::to_hex(std::string_view(reinterpret_cast<const char*>(id.data()), 16));
    }
  return relay::socket_name(c.master_addr, c.master_port, c.node_rank);
}

// This rank's context, reaching rank 0's store itself rather than through its node's relay.
Context unrelayed(Context c) {
  c.store_relay = false;
  return c;
}

// What this rank's values are sealed with (sealed_store.hpp): nothing without the step's secret.
SealInput seal_input(const Context& c) {
  SealInput in;
  if (c.store_key) in.secret = seal::from_hex(*c.store_key).value_or("");
  in.generation = std::to_string(c.restart_count) + "/" + c.store_scope;
  in.where = where(c);
  return in;
}

// The connection as it is (TCP, or through the node's relay), which the relay itself passes
// sealed values over unopened; connect() seals what this rank puts through it.
c10::intrusive_ptr<c10d::Store> connect_raw(const Context& c, std::chrono::milliseconds timeout) {
  // A leader that does not listen soon is not waited for longer: its node's ranks reach rank 0
  // directly, in time to arrive (rank 0 then names the leader if it never comes), as they do when
  // their leader is lost later.
  // A node's leader reaches rank 0 through its own relay too, which it listens on already: its
  // requests and waits share the node's connections (rank 0 serves the store itself).
  if (relayed(c) && c.rank != 0) {
    const Context direct = unrelayed(c);
    return RelayedStore::connect(
        relay_name(c), "this node's LOCAL_RANK 0 (" + this_host(c) + ")", timeout,
        std::chrono::steady_clock::now() + std::min<std::chrono::milliseconds>(timeout / 4, relay::kFindLeaderWithin),
        [direct, timeout] { return connect_raw(direct, timeout); });
  }
  c10d::TCPStoreOptions options;
  options.port = c.master_port;
  options.isServer = c.rank == 0;
  options.numWorkers = static_cast<std::size_t>(c.world_size);
  options.waitWorkers = false;  // the arrival check below waits, and can say who is missing
  options.timeout = timeout;
  if (c.rank == 0) {
    const auto files = rank0_open_files(c);
    if (const auto short_of = ensure_open_files(files.needed, files.wanted,
                                                "rank 0 serving the rendezvous of " +
                                                    std::to_string(c.world_size) + " ranks")) {
      std::fprintf(stderr, "[rank 0/%d] warning: %s\n", c.world_size, short_of->c_str());
      std::fflush(stderr);
    }
  }
  try {
    if (c.rank == 0) return compat::make_tcp_store(c.master_addr, options);
    return connect_client(c, options, timeout);
  } catch (const Error&) {
    throw;
  } catch (const std::exception& e) {
    std::ostringstream msg;
    if (c.rank == 0)
      msg << "rank 0 could not open the rendezvous on port " << c.master_port
          << " (MASTER_PORT) on " << this_host(c) << ": " << compat::message_of(e)
          << ". If the port is in use by another process, choose another one (--ddp-port, or "
             "MASTER_PORT); two jobs' derived ports meet on a shared node now and then, which "
             "MpiParams=ports= in slurm.conf ends for every job (a port reserved per step, "
             "docs/admins.md)";
    else
      msg << "rank " << c.rank << " on " << this_host(c) << " could not reach the rendezvous at "
          << where(c) << " (MASTER_ADDR:MASTER_PORT) within " << seconds_text(timeout)
          << " s: " << compat::message_of(e) << ". Check that rank 0 started, and that MASTER_ADDR resolves "
          << "to an address this node can reach";
    throw Error(msg.str());
  }
}

constexpr auto kGrace = std::chrono::seconds(3);
constexpr auto kRetryPause = std::chrono::seconds(1);
constexpr const char* kVerdictKey = "ddp/verdict";
constexpr const char* kAcksKey = "ddp/acks";
// The verdict's first word: every rank met and rank 0's view follows, or the rendezvous failed
// and the words every rank ends with follow.
constexpr const char* kMet = "met ";
constexpr const char* kFailed = "failed ";

std::string view_key(std::int64_t order) { return "ddp/view/" + std::to_string(order); }

void set_text(c10d::Store& store, const std::string& key, const std::string& text) {
  store.set(key, std::vector<std::uint8_t>(text.begin(), text.end()));
}

std::string get_text(c10d::Store& store, const std::string& key) {
  const auto bytes = store.get(key);
  return std::string(bytes.begin(), bytes.end());
}

// Rank 0: the failure for every rank, in one key that every rank waits on, served until every
// task that had arrived acknowledged it, or until acknowledgements stop coming for the grace (a
// rank that arrived and died since): thousands of ranks may take longer than any constant to
// read it, and none of them should see the store vanish instead. Only rank 0 counts, a few times a
// second; the others wait on the key.
void tell_everyone(c10d::Store& store, const std::string& report) {
  const auto arrived = store.add(kArrivalsKey, 0);
  set_text(store, kVerdictKey, kFailed + report);
  auto acked = store.add(kAcksKey, 0);
  auto progress = std::chrono::steady_clock::now();
  while (acked < arrived - 1 && std::chrono::steady_clock::now() - progress < kGrace) {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    const auto now = store.add(kAcksKey, 0);
    if (now > acked) progress = std::chrono::steady_clock::now();
    acked = now;
  }
}

// Not rank 0: the failure as this rank's error, after acknowledging it. `verdict` starts kFailed.
// The acknowledgement only spares rank 0 its grace: a store lost meanwhile does not change the
// words this rank ends with.
[[noreturn]] void hear_failure(c10d::Store& store, const std::string& verdict) {
  try {
    store.add(kAcksKey, 1);
  } catch (const std::exception&) {
  }
  throw Error(verdict.substr(std::strlen(kFailed)));
}

// Rank 0 after the time-out: its first connection still has a wait pending at the server, whose
// late answer (a rank arriving now) would be read as the answer to the next request; so the
// report goes through a connection of its own.
c10::intrusive_ptr<c10d::Store> connect(const Context& c, std::chrono::milliseconds timeout) {
  return sealed_if_keyed(connect_raw(c, timeout), seal_input(c));
}

// The relay's underneath a rank's sealed store, if that is how it reaches rank 0.
RelayedStore* relayed_store(c10d::Store& store) {
  if (auto* sealed = dynamic_cast<SealedStore*>(&store)) return dynamic_cast<RelayedStore*>(&sealed->inner());
  return dynamic_cast<RelayedStore*>(&store);
}

c10::intrusive_ptr<c10d::Store> second_connection_raw(const Context& c, std::chrono::milliseconds timeout) {
  c10d::TCPStoreOptions options;
  options.port = c.master_port;
  options.isServer = false;
  options.numWorkers = static_cast<std::size_t>(c.world_size);
  options.waitWorkers = false;
  options.timeout = timeout;
  return compat::make_tcp_store(c.master_addr, options);
}

c10::intrusive_ptr<c10d::Store> second_connection(const Context& c, std::chrono::milliseconds timeout) {
  return sealed_if_keyed(second_connection_raw(c, timeout), seal_input(c));
}

// A node leader's connections to rank 0 for its relay, each made when first needed and proved by
// a first answer, as a rank's own is (first_answer, below); a program that holds MASTER_PORT and
// never answers is named, as connect() names it.
StoreRelay::Connect relay_upstream(const Context& c, std::chrono::milliseconds timeout) {
  return [c, timeout]() -> c10::intrusive_ptr<c10d::Store> {
    const std::string key = "ddp/relay/" + std::to_string(c.node_rank);
    const Context direct = unrelayed(c);
    return first_answer(
        c10::intrusive_ptr<c10d::Store>(), c.rank, std::chrono::steady_clock::now(), timeout,
        [&](c10d::Store& s) {
          s.set(key, std::vector<std::uint8_t>{'1'});
          s.wait({key}, timeout);
        },
        [&] { return c.rank == 0 ? second_connection_raw(c, timeout) : connect_raw(direct, timeout); });
  };
}

// A node's leader, before it meets: its relay, or none when another program holds the relay's
// name. Then this node's ranks, which find that program there, reach rank 0's store directly, and
// so does the leader (`context` says so from here); the leader says it once for the node.
std::shared_ptr<StoreRelay> listen_or_go_direct(Context& context, std::chrono::milliseconds timeout) {
  const std::string name = relay_name(context);
  try {
    return StoreRelay::listen(name, relay_upstream(context, timeout));
  } catch (const Error& e) {
    if (relay::name_in_use(name)) {
      std::fprintf(stderr,
                   "[ddp] warning: another program holds this node's store relay name (@%s); this node's "
                   "ranks reach rank 0's store directly\n",
                   name.c_str());
      context = unrelayed(context);
      return nullptr;
    }
    throw;
  }
}

// Rank 0, once `world_size` tasks arrived: the verdict every rank waits for.
void judge(c10d::Store& store, const RankView& mine) {
  if (!tally_agrees(store, mine)) {
    // Some check may fail: the views, read one by one, say which (only on a launch that is wrong).
    const auto arrived = store.add(kArrivalsKey, 0);
    std::vector<std::string> keys;
    for (std::int64_t o = 1; o <= arrived; ++o) keys.push_back(view_key(o));
    store.wait(keys, kGrace);  // the last tasks set their views right after counting themselves
    std::vector<RankView> views;
    for (const auto& key : keys)
      if (const auto v = decode_view(get_text(store, key))) views.push_back(*v);
    if (const auto problem = contract_disagreement(views)) {
      tell_everyone(store, *problem);
      throw Error(*problem);
    }
  }
  set_text(store, kVerdictKey, kMet + encode_view(mine));
}

}  // namespace

std::string seconds_text(std::chrono::milliseconds d) {
  std::ostringstream s;
  s << static_cast<double>(d.count()) / 1000.0;
  return s.str();
}

std::string arrival_key(int rank) { return "ddp/arrived/" + std::to_string(rank); }

OpenFiles rank0_open_files(const Context& c) {
  const std::uint64_t per_client = compat::kStoreConnectionsPerClient;
  const std::uint64_t readers = c.world_size > kReadAloneUpTo ? 2 * kReaders * per_client : 0;
  const std::uint64_t own = readers + 64;
  const std::uint64_t every_rank = static_cast<std::uint64_t>(c.world_size) * per_client + own;
  if (!relayed(c)) return {every_rank, every_rank, readers};
  constexpr std::uint64_t kClientsPerLeader = 2;
  const std::uint64_t nodes = static_cast<std::uint64_t>(std::max(c.nodes, 1));
  return {std::min(every_rank, nodes * kClientsPerLeader * per_client + own), every_rank, readers};
}

c10::intrusive_ptr<c10d::Store> first_answer(c10::intrusive_ptr<c10d::Store> store, int rank,
                                             std::chrono::steady_clock::time_point since,
                                             std::chrono::milliseconds timeout,
                                             const std::function<void(c10d::Store&)>& first,
                                             const std::function<c10::intrusive_ptr<c10d::Store>()>& reconnect) {
  for (int attempt = 1;; ++attempt) {
    try {
      // LibTorch 2.x's client constructor asks the server already: a reset can come from there.
      if (!store) store = reconnect();
      first(*store);
      return store;
    } catch (const Error&) {
      throw;  // libddp's own words, found once the time-out was spent (or rank 0's failure): final
    } catch (const std::exception&) {
      const auto spent = std::chrono::steady_clock::now() - since;
      if (rank == 0 || spent + kRetryPause >= timeout) throw;
      // Spread over a second so that the retries do not overflow the queue again together.
      std::this_thread::sleep_for(kRetryPause * (1 + (rank * 7919 + attempt * 104729) % 10) / 10);
      store.reset();
    }
  }
}

// Each rank makes a constant number of requests and waits on keys instead of polling: the store
// answers a wait when the key is set, so R waiting ranks cost the server nothing until then. Rank
// 0 waits for the view of the WORLD_SIZE-th task to arrive, judges the tallies, and sets one
// verdict key that every other rank waits on; on a time-out it finds the missing ranks itself
// and puts the report there too.
c10::intrusive_ptr<c10d::Store> rendezvous(const Context& c, c10::intrusive_ptr<c10d::Store> store,
                                           std::chrono::steady_clock::time_point start,
                                           std::chrono::milliseconds timeout) {
  const std::string host = this_host(c);
  const RankView mine = view_of(c, host);
  try {
    store = first_answer(
        store, c.rank, start, timeout,
        [&](c10d::Store& s) {
          s.set(arrival_key(c.rank), std::vector<std::uint8_t>(host.begin(), host.end()));
          // Through a node's relay that answer came from rank 0's store already, over the
          // connection the leader proved as below.
          if (auto* relayed = relayed_store(s); relayed && relayed->relaying()) return;
          // The server's first answer: it proves that a rendezvous store, not some other program,
          // listens on MASTER_PORT, and (LibTorch 1.13) arms the connection's receive time-out,
          // without which the add() below would wait forever on a listener that never answers.
          s.wait({arrival_key(c.rank)}, timeout);
        },
        [&] { return connect(c, timeout); });
  } catch (const Error&) {
    throw;
  } catch (const std::exception& e) {
    throw no_answer(c, host, timeout, compat::message_of(e));
  }
  try {
    tally_view(*store, mine);
    // An order per arriving task, not per RANK: two tasks that claim one RANK both leave a view.
    const auto order = store->add(kArrivalsKey, 1);
    set_text(*store, view_key(order), encode_view(mine));
    if (c.rank == 0) {
      const auto waited_from = std::chrono::steady_clock::now();
      try {
        store->wait({view_key(c.world_size)}, timeout);
      } catch (const std::exception&) {
        // A wait that ended well before its time-out lost the store: no report to give.
        if (std::chrono::steady_clock::now() - waited_from < timeout - std::chrono::milliseconds(100)) throw;
        auto second = second_connection(c, timeout);
        const std::string report = missing_report(*second, c, where(c), timeout);
        tell_everyone(*second, report);
        throw Error(report);
      }
      judge(*store, mine);
    } else {
      // Rank 0 gives its verdict at its time-out at the latest, counted from its own arrival,
      // which thousands of ranks connecting at once can delay by seconds, as they can its
      // report: a quarter more of the time-out, and the grace, let it be heard. A rank 0 that
      // ends meanwhile ends this wait at once (the store's connection closes).
      const auto verdict_within = timeout + timeout / 4 + kGrace;
      std::string verdict;
      try {
        // get() waits for the key for the store's time-out, then reads it: one wait, no polling.
        store->setTimeout(verdict_within);
        verdict = get_text(*store, kVerdictKey);
        store->setTimeout(timeout);
      } catch (const Error&) {
        throw;  // rank 0's words through this node's relay, or libddp's own on the relay's loss
      } catch (const std::exception& e) {
        throw Error("rank " + std::to_string(c.rank) + " on " + host + " arrived at the rendezvous " +
                    where(c) + ", but rank 0 gave no verdict within " +
                    seconds_text(verdict_within) + " s (" + compat::message_of(e) +
                    "); rank 0 probably stopped");
      }
      if (plan::starts_with(verdict, kFailed)) hear_failure(*store, verdict);
      // Rank 0 compared the tasks it counted; one that arrived after its count was complete (this
      // rank counts to another WORLD_SIZE) is compared here.
      if (!plan::starts_with(verdict, kMet))
        throw Error("rank 0's rendezvous verdict is unreadable: " + plan::quoted(verdict));
      if (const auto first = decode_view(verdict.substr(std::strlen(kMet))))
        if (const auto problem = step_difference(*first, mine)) throw Error(*problem);
    }
  } catch (const Error&) {
    throw;
  } catch (const std::exception& e) {
    throw Error("lost the rendezvous at " + where(c) + " while waiting for the other ranks: " +
                compat::message_of(e) + ". Rank 0 (which serves it) probably ended");
  }
  return store;
}

}  // namespace ddp::detail

namespace ddp {
namespace {

using detail::get_text;
using detail::set_text;

// One exchange's keys: each rank's text, the count of ranks that left theirs, and the key the last
// of them sets, so that a rank waits on one key instead of R.
struct Round {
  std::string prefix;
  std::string text_key(int rank) const { return prefix + std::to_string(rank); }
  std::string count_key() const { return prefix + "count"; }
  std::string all_key() const { return prefix + "all"; }
};

void contribute(c10d::Store& store, const Round& round, int rank, int world_size, const std::string& text) {
  set_text(store, round.text_key(rank), text);
  if (store.add(round.count_key(), 1) == world_size) set_text(store, round.all_key(), "1");
}

// Waits for every rank's text; on a time-out, names the first few that left none. The report goes
// through a connection of its own: on LibTorch 1.13 the server keeps the timed-out wait and may
// answer it late on this one, and that byte would be read as the answer to the next request.
void wait_for_all(c10d::Store& store, const Context& c, const Round& round,
                  std::chrono::milliseconds timeout) {
  try {
    store.wait({round.all_key()}, timeout);
    return;
  } catch (const std::exception&) {
  }
  const auto fresh = detail::second_connection(c, timeout);
  const auto named = detail::name_absent(
      *fresh, c, [&](int r) { return round.text_key(r); }, fresh->add(round.count_key(), 0));
  throw Error("rank(s) " + named.list + " of " + std::to_string(c.world_size) + " did not answer within " +
              detail::seconds_text(timeout) + " s (missing: " + named.places +
              "): they ended or hang (their own output says why)");
}

// What rank 0 left under `key`, once it set `ready` (all of a scatter's texts are ready at once,
// so that a node's ranks wait for one key: its leader's relay makes one wait of it); `owed`: how
// long rank 0 may still be waiting for the others in a gather this rank already left.
std::string from_rank0(c10d::Store& store, const std::string& ready, const std::string& key,
                       std::chrono::milliseconds timeout, std::chrono::milliseconds owed) {
  try {
    store.wait({ready}, timeout + owed);
  } catch (const std::exception&) {
    throw Error("rank 0 said nothing within " + detail::seconds_text(timeout + owed) +
                " s: it ended or hangs (its own output says why)");
  }
  return get_text(store, key);
}

std::vector<std::string> read_texts(Rendezvous::Native& native, const Context& c, const Round& round,
                                    std::chrono::milliseconds timeout) {
  std::vector<std::string> out(static_cast<std::size_t>(c.world_size));
  const auto read_every = [&](c10d::Store& store, std::size_t first, std::size_t step) {
    for (std::size_t r = first; r < out.size(); r += step) out[r] = get_text(store, round.text_key(static_cast<int>(r)));
  };
  if (c.world_size <= detail::kReadAloneUpTo) {
    read_every(*native.store, 0, 1);
    return out;
  }
  while (native.readers.size() < detail::kReaders) native.readers.push_back(detail::second_connection(c, timeout));
  std::vector<std::future<void>> readers;
  for (std::size_t k = 0; k < detail::kReaders; ++k)
    readers.push_back(
        std::async(std::launch::async, [&, k] { read_every(*native.readers[k], k, detail::kReaders); }));
  // Every reader ends before a failure is raised: they write into `out`.
  std::exception_ptr failed;
  for (auto& r : readers) {
    try {
      r.get();
    } catch (...) {
      if (!failed) failed = std::current_exception();
    }
  }
  if (failed) std::rethrow_exception(failed);
  return out;
}

// Runs one exchange: its own ddp::Errors pass; any other failure of the store under a request (not
// a time-out, which the exchange names itself) says rank 0, which serves it, is the likely cause.
template <class Exchange>
auto through_store(const char* doing, Exchange exchange) -> decltype(exchange()) {
  try {
    return exchange();
  } catch (const Error&) {
    throw;
  } catch (const std::exception& e) {
    throw Error(std::string("lost the rendezvous store while ") + doing + ": " + compat::message_of(e) +
                ". Rank 0 (which serves it) probably ended");
  }
}

// A rank that dies closes its sockets, and the next write to one raises SIGPIPE, whose default
// action ends this process without a word: rank 0, serving the store, then dies of a killed rank's
// connection instead of naming it, and takes every other rank down with a "rank 0 ended". Python
// ignores SIGPIPE at start, so every torchrun program already runs this way: a write to a closed
// socket fails with EPIPE and the loss is reported. A handler the program installed is kept.
void ignore_broken_pipes() {
  struct sigaction current {};
  if (sigaction(SIGPIPE, nullptr, &current) != 0) return;
  if ((current.sa_flags & SA_SIGINFO) != 0 || current.sa_handler != SIG_DFL) return;
  struct sigaction ignore {};
  ignore.sa_handler = SIG_IGN;
  sigemptyset(&ignore.sa_mask);
  sigaction(SIGPIPE, &ignore, nullptr);
}

}  // namespace

Rendezvous::Rendezvous(const Context& context, std::string host, std::unique_ptr<Native> native)
    : context_(context), host_(std::move(host)), native_(std::move(native)) {}

Rendezvous::~Rendezvous() = default;

std::shared_ptr<Rendezvous> Rendezvous::meet(const Context& context,
                                             std::chrono::milliseconds timeout) {
  ignore_broken_pipes();
  auto native = std::make_unique<Native>();
  const auto start = std::chrono::steady_clock::now();
  // Rank 0 opens its store before its relay listens, so that the relay reaches rank 0's store and
  // never another program that holds the port (its node's ranks then reach that program directly,
  // and say so, while rank 0 names the port in use).
  c10::intrusive_ptr<c10d::Store> store;
  if (context.rank == 0) store = detail::connect(context, timeout);
  // Rank 0's store stays open while its relay lingers after a failure, told rank 0's words first.
  const auto server = store;
  // The leader listens before it meets: its node's ranks may ask before it reached rank 0.
  Context reach = context;
  if (detail::relayed(context) && context.local_rank == 0)
    native->relay = detail::listen_or_go_direct(reach, timeout);
  try {
    if (!store) store = detail::connect(reach, timeout);
    native->store = detail::rendezvous(context, std::move(store), start, timeout);
  } catch (const Error& e) {
    // Its node's ranks read the same failure through it: the relay serves them until they left.
    // Rank 0's failure is the verdict itself, told to every rank that arrived already: the ones
    // that ask after it hear it from the relay.
    if (native->relay) {
      if (context.rank == 0) native->relay->answer_with(e.what());
      native->relay->linger(detail::kGrace, 4 * detail::kGrace);
    }
    throw;
  }
  return std::shared_ptr<Rendezvous>(
      new Rendezvous(context, detail::this_host(context), std::move(native)));
}

std::vector<std::string> Rendezvous::gather(const std::string& text, std::chrono::milliseconds timeout) {
  const Round round{"ddp/to0/" + std::to_string(++round_) + "/"};
  auto& store = *native_->store;
  return through_store("gathering the other ranks' texts", [&]() -> std::vector<std::string> {
    contribute(store, round, context_.rank, context_.world_size, text);
    // Rank 0 may wait `timeout` for the last rank before it reads, decides and answers: this
    // rank's next wait on rank 0 allows for that.
    if (context_.rank != 0) {
      rank0_owes_ = timeout;
      return {};
    }
    wait_for_all(store, context_, round, timeout);
    return read_texts(*native_, context_, round, timeout);
  });
}

std::string Rendezvous::scatter(const std::vector<std::string>& texts, std::chrono::milliseconds timeout) {
  const Round round{"ddp/scatter/" + std::to_string(++round_) + "/"};
  auto& store = *native_->store;
  return through_store("waiting for rank 0", [&]() -> std::string {
    if (context_.rank != 0)
      return from_rank0(store, round.all_key(), round.text_key(context_.rank), timeout,
                        std::exchange(rank0_owes_, {}));
    if (texts.size() != static_cast<std::size_t>(context_.world_size))
      throw Error("Rendezvous::scatter: rank 0 passed " + std::to_string(texts.size()) + " texts for " +
                  std::to_string(context_.world_size) + " ranks");
    for (int r = 1; r < context_.world_size; ++r)
      set_text(store, round.text_key(r), texts[static_cast<std::size_t>(r)]);
    set_text(store, round.all_key(), "1");
    return texts.front();
  });
}

std::vector<std::string> Rendezvous::all_gather(const std::string& text,
                                                std::chrono::milliseconds timeout) {
  const Round round{"ddp/gather/" + std::to_string(++round_) + "/"};
  auto& store = *native_->store;
  rank0_owes_ = {};  // every rank waits here for every other, rank 0 included
  return through_store("exchanging with the other ranks", [&]() -> std::vector<std::string> {
    contribute(store, round, context_.rank, context_.world_size, text);
    wait_for_all(store, context_, round, timeout);
    std::vector<std::string> out;
    out.reserve(static_cast<std::size_t>(context_.world_size));
    for (int r = 0; r < context_.world_size; ++r) out.push_back(get_text(store, round.text_key(r)));
    return out;
  });
}

std::string Rendezvous::broadcast(const std::string& text, std::chrono::milliseconds timeout) {
  const std::string key = "ddp/broadcast/" + std::to_string(++round_);
  auto& store = *native_->store;
  return through_store("waiting for rank 0", [&]() -> std::string {
    if (context_.rank != 0) return from_rank0(store, key, key, timeout, std::exchange(rank0_owes_, {}));
    set_text(store, key, text);
    return text;
  });
}

void Rendezvous::finish(std::chrono::milliseconds timeout) {
  auto& store = *native_->store;
  try {
    // The last rank to finish says so once; rank 0 waits on that key instead of polling a count.
    if (store.add("ddp/finished", 1) == context_.world_size) set_text(store, "ddp/all_finished", "1");
    // A node's leader relays its ranks' requests: it waits as rank 0 does, so that none of them
    // loses the store before it finished.
    if (context_.rank != 0 && !native_->relay) return;
    store.wait({"ddp/all_finished"}, timeout);
  } catch (const std::exception&) {
    // Leaving anyway: rank 0 is gone, or the others are; there is nobody left to wait for.
  }
}

}  // namespace ddp
