// The failure watch at scale, on one machine: the real ddp-watch as the head node of a step of
// N nodes, and N-1 simulated member nodes in this process (the real Member logic and datagrams,
// one UDP socket each, on loopback), each beating as a node's watch does. This process also plays
// slurmstepd for the head's node (one task: a sleeping child). It measures:
//   - start: how long until every member has heard the head answer;
//   - quiet: the head's CPU time and the datagrams per second while nothing fails, and that no
//     verdict comes;
//   - with --all-fail: every rank of every member (8 per node) fails at once instead: the
//     datagrams each way and the head's CPU time until the end has reached every member, and
//     that the one verdict names the earliest and counts the rest;
//   - a lost node: one member falls silent; when the head's verdict comes after that node's last
//     beat (it must name that node, within the time-out + 3 s), and how long until the end
//     reaches every other member;
//   - with --head-lost: the head stops (its node died, or its watch is held in a request to
//     slurmctld) and every member's ranks fail with it: how many members ask slurmctld to end the
//     step themselves (Member::alarm's Alone) before the first such request has ended the step
//     everywhere, --kill-latency S (2) after it was made (at most 4, whatever N);
//   - in every case, the members' requests to slurmctld (slurmctld_requests): the head's own
//     verdict aside, none while the head answers;
//   - --clock-offset-ms X puts each member's clock up to X ms off the head's (drawn at random),
//     --loss P drops that share of the datagrams each way, and with --all-fail, --early-ms E has
//     the ranks of one member (node N/2, its clock X ms ahead) fail E ms before every other's:
//     the verdict must name it, though by its own clock it failed after many others.
// Prints one JSON object; exits 1 when a check fails.
//
//   ddp-watch-sim --watch PATH [--nodes N] [--timeout S] [--quiet S] [--clock-offset-ms X] [--loss P]
//                 [--all-fail 1 [--early-ms E [--no-clock-estimate 1]]]
//                 [--head-lost 1 [--kill-latency S] [--alone-tier-ms MS (0: every member at once)]]
#include <poll.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <netinet/in.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <memory>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "control.hpp"
#include "datagram.hpp"
#include "member.hpp"
#include "proc_stat.hpp"

namespace w = ddp::watch;
using Clock = std::chrono::steady_clock;

namespace {

const std::string kKey = "5eed5eed5eed5eed5eed5eed5eed5eed";

double since(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }

struct SimNode {
  int fd = -1;
  std::unique_ptr<w::Member> member;
  std::unique_ptr<w::Wire> wire;
  bool silent = false;   // stopped beating (a lost node)
  double last_sent = -1;
  double first_heard = -1;
  double end_at = -1;    // when the head's end reached it
  double asked_at = -1;  // when it asked slurmctld to end the step itself (acted alone)
  std::int64_t clock_ns = 0;  // its wall clock minus the head's
};

struct Options {
  std::string watch;
  unsigned nodes = 1000;
  unsigned timeout = 10;
  double quiet = 20;
  bool all_fail = false;
  bool head_lost = false;
  double kill_latency = 2;
  long alone_tier_ms = -1;  // MemberConfig::alone_tier; -1: the watch's own
  double clock_offset_ms = 0;
  double loss = 0;
  double early_ms = 0;
  bool clock_estimate = true;  // --no-clock-estimate 1: the members never estimate (as before)
};

Options parse(int argc, char** argv) {
  Options o;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string k = argv[i], v = argv[i + 1];
    if (k == "--watch") o.watch = v;
    else if (k == "--nodes") o.nodes = static_cast<unsigned>(std::stoul(v));
    else if (k == "--timeout") o.timeout = static_cast<unsigned>(std::stoul(v));
    else if (k == "--quiet") o.quiet = std::stod(v);
    else if (k == "--all-fail") o.all_fail = v != "0";
    else if (k == "--head-lost") o.head_lost = v != "0";
    else if (k == "--kill-latency") o.kill_latency = std::stod(v);
    else if (k == "--alone-tier-ms") o.alone_tier_ms = std::stol(v);
    else if (k == "--clock-offset-ms") o.clock_offset_ms = std::stod(v);
    else if (k == "--loss") o.loss = std::stod(v);
    else if (k == "--early-ms") o.early_ms = std::stod(v);
    else if (k == "--no-clock-estimate") o.clock_estimate = v == "0";
    else throw std::runtime_error("unknown argument " + k);
  }
  if (o.watch.empty() || o.nodes < 2) throw std::runtime_error("usage: ddp-watch-sim --watch PATH [--nodes N>=2] [--timeout S] [--quiet S]");
  return o;
}

unsigned free_udp_port() {
  const int fd = ::socket(AF_INET, SOCK_DGRAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a);
  socklen_t len = sizeof a;
  ::getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len);
  ::close(fd);
  return ntohs(a.sin_port);
}

// Reaps `pid` within `seconds`, and then ends its process group (each child leads its own, with
// whatever it started): nothing this process started may outlive it, since a process left running
// holds the test's output open and the test then ends only at its time-out.
int reap_within(pid_t pid, double seconds) {
  int status = 0;
  if (pid <= 0) return status;
  const auto until = Clock::now() + std::chrono::duration<double>(seconds);
  bool reaped = false;
  while (!(reaped = waitpid(pid, &status, WNOHANG) == pid) && Clock::now() < until) usleep(20000);
  kill(-pid, SIGKILL);
  if (!reaped) waitpid(pid, &status, 0);
  return status;
}

// The head's node as this process plays slurmstepd for it: its task and the head, each ended on
// every way out (a failed check or an exception too), and what the head said on its stderr.
struct HeadNode {
  pid_t task = -1, head = -1;
  int control = -1, err = -1;
  std::string said;

  // Reads the head's stderr until its end or `seconds`: a process the head started may hold it.
  void drain(double seconds) {
    if (err < 0) return;
    char buf[4096];
    const auto until = Clock::now() + std::chrono::duration<double>(seconds);
    for (;;) {
      const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(until - Clock::now()).count();
      pollfd p{err, POLLIN, 0};
      if (left <= 0 || poll(&p, 1, static_cast<int>(left)) <= 0) break;
      const ssize_t r = read(err, buf, sizeof buf);
      if (r <= 0) break;
      said.append(buf, static_cast<std::size_t>(r));
    }
    close(err);
    err = -1;
  }

  ~HeadNode() {
    if (task > 0) reap_within(task, 0);
    if (head > 0) reap_within(head, 0);
    if (err >= 0) close(err);
  }
};

std::uint64_t cpu_ticks(pid_t pid) {
  const auto s = ddp::monitor::read_proc_stat("/proc", pid);
  return s ? s->ticks : 0;
}

int simulate(const Options& o, HeadNode& node) {
  rlimit nofile{};
  getrlimit(RLIMIT_NOFILE, &nofile);
  nofile.rlim_cur = nofile.rlim_max;
  setrlimit(RLIMIT_NOFILE, &nofile);
  signal(SIGPIPE, SIG_IGN);
  const unsigned port = free_udp_port();

  // The head's node: a task (a sleeping child) and the control channel, as slurmstepd makes them.
  int control[2];
  socketpair(AF_UNIX, SOCK_STREAM, 0, control);
  const pid_t task = node.task = fork();
  if (task < 0) throw std::runtime_error(std::string("fork: ") + std::strerror(errno));
  if (task == 0) {
    setpgid(0, 0);
    execlp("sleep", "sleep", "3600", nullptr);
    _exit(127);
  }
  setpgid(task, task);  // as the child does: whichever comes first
  int errp[2];
  if (pipe(errp) != 0) throw std::runtime_error(std::string("pipe: ") + std::strerror(errno));
  node.err = errp[0];
  const pid_t head = node.head = fork();
  if (head < 0) throw std::runtime_error(std::string("fork: ") + std::strerror(errno));
  if (head == 0) {
    setpgid(0, 0);
    dup2(control[1], 3);
    dup2(errp[1], 2);
    setenv(w::kKeyVariable, kKey.c_str(), 1);
    const std::string nodes = std::to_string(o.nodes), to = std::to_string(o.timeout),
                      p = std::to_string(port) + "-" + std::to_string(port), world = std::to_string(o.nodes * 8);
    execl(o.watch.c_str(), o.watch.c_str(), "--job", "1", "--step", "0", "--node", "0", "--nodes",
          nodes.c_str(), "--host", "sim0", "--world", world.c_str(), "--head", "127.0.0.1",
          "--ports", p.c_str(), "--timeout", to.c_str(), "--control-fd", "3", nullptr);
    _exit(127);
  }
  setpgid(head, head);
  close(control[1]);
  close(errp[1]);
  const auto start_ticks = ddp::monitor::read_proc_stat("/proc", task);
  const std::string line =
      ddp::monitor::task_message(0, 0, task, start_ticks ? start_ticks->start_time : 0);
  send(control[0], line.data(), line.size(), MSG_NOSIGNAL);

  // The members.
  sockaddr_in to{};
  to.sin_family = AF_INET;
  to.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  to.sin_port = htons(static_cast<std::uint16_t>(port));
  const auto t0 = Clock::now();
  const w::Now now0 = w::Now::read();
  const w::Ms interval(std::max<long>(500, std::min<long>(5000, o.timeout * 100)));
  std::vector<SimNode> sim(o.nodes);
  const unsigned early = o.early_ms > 0 ? o.nodes / 2 : 1;  // the member whose ranks fail first
  const auto ms_ns = [](double ms) { return static_cast<std::int64_t>(ms * 1e6); };
  for (unsigned i = 1; i < o.nodes; ++i)
    sim[i].clock_ns = i == early && o.early_ms > 0
                          ? ms_ns(o.clock_offset_ms)
                          : ms_ns(o.clock_offset_ms * (2.0 * std::rand() / RAND_MAX - 1));
  // A member's time: the machine's, its wall clock off by its offset.
  const auto on_clock_of = [&](unsigned i, w::Now now) {
    now.wall_ns += sim[i].clock_ns;
    return now;
  };
  const auto lost_on_the_way = [&] { return o.loss > 0 && std::rand() < o.loss * RAND_MAX; };
  for (unsigned i = 1; i < o.nodes; ++i) {
    sim[i].fd = socket(AF_INET, SOCK_DGRAM | SOCK_NONBLOCK, 0);
    if (sim[i].fd < 0) throw std::runtime_error(std::string("socket: ") + std::strerror(errno));
    w::MemberConfig c;
    c.node = i;
    c.host = "sim" + std::to_string(i);
    c.ranks = std::to_string(i * 8) + "-" + std::to_string(i * 8 + 7);
    c.timeout = w::Ms(o.timeout * 1000);
    c.interval = interval;
    c.phase = w::Ms(std::rand() % interval.count());
    c.seed = static_cast<unsigned>(std::rand());
    if (o.alone_tier_ms >= 0) c.alone_tier = w::Ms(o.alone_tier_ms);
    sim[i].member = std::make_unique<w::Member>(c, now0);
    sim[i].wire = std::make_unique<w::Wire>(kKey, i, o.nodes);
  }

  std::string& head_said = node.said;
  std::uint64_t sent = 0, received = 0;
  enum class Phase { Start, Quiet, Lost, Fail, HeadLost, Done } phase = Phase::Start;
  unsigned requests = 0;  // the members' own requests to slurmctld to end the step
  double first_request = -1;
  double fail_at = -1, fail_done = -1;
  std::uint64_t fail_messages = 0;  // fail datagrams the members sent
  std::uint64_t fail_ticks0 = 0, fail_ticks1 = 0, fail_sent0 = 0, fail_recv0 = 0;
  double quiet_from = 0, lost_at = -1, verdict_at = -1;
  std::uint64_t quiet_ticks0 = 0, quiet_ticks1 = 0, quiet_sent0 = 0, quiet_recv0 = 0;
  std::uint64_t quiet_sent = 0, quiet_recv = 0;
  const unsigned lost = o.nodes / 2;
  std::vector<pollfd> fds;
  char buf[w::kMaxDatagram + 1];
  for (;;) {
    const w::Now now = w::Now::read();
    const double t = since(t0);
    for (unsigned i = 1; i < o.nodes; ++i) {
      SimNode& n = sim[i];
      if (n.silent || n.end_at >= 0) continue;
      for (auto& d : n.member->due(on_clock_of(i, now))) {
        if (phase == Phase::Fail && d.type == w::Datagram::Type::Fail) ++fail_messages;
        const std::string bytes = n.wire->seal(d, 0, static_cast<std::uint16_t>(port));
        if (!lost_on_the_way())
          sendto(n.fd, bytes.data(), bytes.size(), 0, reinterpret_cast<sockaddr*>(&to), sizeof to);
        n.last_sent = t;
        ++sent;
      }
      // As the node's watch does (watch_node.cpp, tick): acting alone is one request to end the
      // step, and node 1 speaks for a lost head; either ends the node's own tasks.
      const auto alarm = n.member->alarm(on_clock_of(i, now));
      if (n.asked_at < 0 && (alarm == w::Member::Alarm::Alone || (alarm == w::Member::Alarm::HeadLost && i == 1))) {
        n.asked_at = t;
        ++requests;
        if (first_request < 0) first_request = t;
      }
    }
    fds.clear();
    for (unsigned i = 1; i < o.nodes; ++i) fds.push_back({sim[i].fd, POLLIN, 0});
    fds.push_back({errp[0], POLLIN, 0});
    poll(fds.data(), fds.size(), 20);
    for (unsigned i = 1; i < o.nodes; ++i) {
      if (!(fds[i - 1].revents & POLLIN)) continue;
      for (;;) {
        const ssize_t r = recv(sim[i].fd, buf, sizeof buf, MSG_DONTWAIT);
        if (r <= 0) break;
        ++received;
        if (lost_on_the_way()) continue;
        const w::Now arrived = on_clock_of(i, w::Now::read());
        const auto d = sim[i].wire->open(std::string_view(buf, static_cast<std::size_t>(r)), static_cast<std::uint16_t>(port));
        if (!d || sim[i].silent) continue;
        sim[i].member->heard_head(arrived);
        if (d->type == w::Datagram::Type::Beat && o.clock_estimate) sim[i].member->heard_head_beat(d->echo_ns, d->heard_ns, d->sent_ns, arrived);
        if (sim[i].first_heard < 0) sim[i].first_heard = t;
        if (d->type == w::Datagram::Type::Ack) sim[i].member->acked(d->id);
        if (d->type == w::Datagram::Type::End && sim[i].end_at < 0) {
          sim[i].end_at = t;
          sim[i].member->ended();
        }
      }
    }
    if (fds.back().revents & POLLIN) {
      const ssize_t r = read(errp[0], buf, sizeof buf);
      if (r > 0) head_said.append(buf, static_cast<std::size_t>(r));
      if (verdict_at < 0 && head_said.find("failed:") != std::string::npos) verdict_at = t;
    }
    // Phases.
    if (phase == Phase::Start) {
      bool all = true;
      for (unsigned i = 1; i < o.nodes && all; ++i) all = sim[i].first_heard >= 0;
      if (all) {
        phase = Phase::Quiet;
        quiet_from = t;
        quiet_ticks0 = cpu_ticks(head);
        quiet_sent0 = sent;
        quiet_recv0 = received;
      } else if (t > 30) {
        throw std::runtime_error("the head did not answer every member within 30 s");
      }
    } else if (phase == Phase::Quiet && t - quiet_from >= o.quiet) {
      quiet_ticks1 = cpu_ticks(head);
      quiet_sent = sent - quiet_sent0;
      quiet_recv = received - quiet_recv0;
      if (o.all_fail || o.head_lost) {
        // The head stops first: nobody answers the members from now on.
        if (o.head_lost) kill(head, SIGSTOP);
        // Every rank of every member fails at once; each member's watch reports its node's.
        fail_ticks0 = quiet_ticks1;
        fail_sent0 = sent;
        fail_recv0 = received;
        fail_at = t;
        for (unsigned i = 1; i < o.nodes; ++i) {
          w::Failure first;
          w::FailureCounts counts;
          for (unsigned r = 0; r < 8; ++r) {
            w::Failure f;
            f.rank = i * 8 + r;
            f.node = i;
            f.host = "sim" + std::to_string(i);
            f.code = 1;
            // By the member's own clock; every member but `early` E ms after it (5 ms without
            // --early-ms: more than the members' clock estimates may be off on a busy loopback).
            const double lead_ms = o.early_ms > 0 ? o.early_ms : 5;
            f.at_ns = on_clock_of(i, now).wall_ns + i * 1000 + r + (i == early ? 0 : ms_ns(lead_ms));
            if (r == 0) first = f;
            ++counts[w::how_short(f)];
            sim[i].member->report(first, counts, on_clock_of(i, now));
          }
        }
        phase = o.head_lost ? Phase::HeadLost : Phase::Fail;
      } else {
        sim[lost].silent = true;  // node `lost` drops off the network
        lost_at = t;
        phase = Phase::Lost;
      }
    } else if (phase == Phase::Fail) {
      bool all = verdict_at >= 0;
      for (unsigned i = 1; i < o.nodes && all; ++i) all = sim[i].end_at >= 0;
      if (all || t - fail_at > 20) {
        fail_done = t;
        fail_ticks1 = cpu_ticks(head);
        break;
      }
    } else if (phase == Phase::HeadLost) {
      // The first request ends the step on every node once Slurm has carried it out.
      if ((first_request >= 0 && t - first_request >= o.kill_latency) || t - fail_at > o.timeout + 90) {
        fail_done = t;
        break;
      }
    } else if (phase == Phase::Lost) {
      bool all = verdict_at >= 0;
      for (unsigned i = 1; i < o.nodes && all; ++i) all = i == lost || sim[i].end_at >= 0;
      if (all) break;
      if (t - lost_at > o.timeout + 20) break;
    }
  }
  if (o.head_lost) kill(head, SIGCONT);
  // The head's node: its task was ended by the head; tell the head, as slurmstepd would.
  const int status = reap_within(task, 5);
  node.task = -1;
  const std::string exit_line = ddp::monitor::exit_message(0, 0, status, w::Now::read().wall_ns);
  send(control[0], exit_line.data(), exit_line.size(), MSG_NOSIGNAL);
  shutdown(control[0], SHUT_WR);
  // The head ends once its control channel closed; one that does not is ended here.
  reap_within(head, 10);
  node.head = -1;
  node.drain(2);

  const double tick = static_cast<double>(sysconf(_SC_CLK_TCK));
  const double quiet_cpu = static_cast<double>(quiet_ticks1 - quiet_ticks0) / tick;
  if (o.head_lost) {
    std::printf(
        "{\"nodes\": %u, \"head_lost\": true, \"kill_latency_s\": %.1f, \"slurmctld_requests\": %u, "
        "\"first_request_after_s\": %.2f}\n",
        o.nodes, o.kill_latency, requests, first_request < 0 ? -1.0 : first_request - fail_at);
    // Node 1 asks once its failure went unacknowledged for alone_after (member.hpp), and few after.
    const bool ok = first_request >= 0 && first_request - fail_at < 4.5 && (o.alone_tier_ms == 0 || requests <= 4);
    return ok ? 0 : 1;
  }
  if (o.all_fail) {
    unsigned ended = 0;
    for (unsigned i = 1; i < o.nodes; ++i) ended += sim[i].end_at >= 0;
    const unsigned ranks = (o.nodes - 1) * 8;
    const std::string named = "rank " + std::to_string(early * 8) + " on sim" + std::to_string(early) + " exited with code 1";
    const std::string counted = "also failed after it: " + std::to_string(ranks - 1) + " ranks (exit code 1)";
    const bool verdict_ok = head_said.find(named) != std::string::npos &&
                            head_said.find(counted) != std::string::npos;
    const bool one_verdict = head_said.find("failed:") == head_said.rfind("failed:");
    std::printf(
        "{\"nodes\": %u, \"ranks_failed\": %u, \"timeout_s\": %u, \"clock_offset_ms\": %.0f, \"loss\": %.3f, "
        "\"early_ms\": %.0f, \"quiet_head_cpu_percent\": %.2f, "
        "\"fail_verdict_after_s\": %.2f, \"fail_end_reached_members\": %u, \"fail_end_all_within_s\": %.2f, "
        "\"fail_messages_to_head\": %llu, \"fail_datagrams_to_head\": %llu, \"fail_datagrams_from_head\": %llu, "
        "\"fail_head_cpu_s\": %.3f, "
        "\"verdict_names_first_counts_rest\": %s, \"one_verdict\": %s, \"slurmctld_requests\": %u}\n",
        o.nodes, ranks, o.timeout, o.clock_offset_ms, o.loss, o.early_ms, 100 * quiet_cpu / o.quiet,
        verdict_at - fail_at, ended,
        fail_done - fail_at, static_cast<unsigned long long>(fail_messages),
        static_cast<unsigned long long>(sent - fail_sent0),
        static_cast<unsigned long long>(received - fail_recv0),
        static_cast<double>(fail_ticks1 - fail_ticks0) / tick, verdict_ok ? "true" : "false",
        one_verdict ? "true" : "false", requests);
    // One fail message per node (not one per rank), a repeat for a lost one at most.
    const bool ok = verdict_at >= 0 && verdict_ok && one_verdict && ended == o.nodes - 1 &&
                    fail_messages < 2ull * (o.nodes - 1) && requests == 0;
    if (!ok) std::fprintf(stderr, "the head said:\n%s", head_said.c_str());
    return ok ? 0 : 1;
  }
  double end_max = 0;
  unsigned ended = 0;
  for (unsigned i = 1; i < o.nodes; ++i)
    if (i != lost && sim[i].end_at >= 0) {
      ++ended;
      end_max = std::max(end_max, sim[i].end_at - verdict_at);
    }
  double heard_max = 0;
  for (unsigned i = 1; i < o.nodes; ++i) heard_max = std::max(heard_max, sim[i].first_heard);
  const std::string named = "node sim" + std::to_string(lost) + " (ranks " + std::to_string(lost * 8);
  const bool verdict_names = head_said.find(named) != std::string::npos;
  const bool one_verdict = head_said.find("failed:") == head_said.rfind("failed:");
  // From the lost node's last datagram: the head hears a node's silence from then on.
  const double detect = verdict_at - sim[lost].last_sent;
  std::printf(
      "{\"nodes\": %u, \"timeout_s\": %u, \"beat_interval_s\": %.1f, \"all_heard_s\": %.2f, "
      "\"quiet_s\": %.0f, \"head_cpu_s\": %.3f, \"head_cpu_percent\": %.2f, "
      "\"datagrams_to_head_per_s\": %.0f, \"datagrams_from_head_per_s\": %.0f, "
      "\"verdict_after_last_beat_s\": %.2f, \"end_reached_members\": %u, \"end_all_within_s\": %.3f, "
      "\"verdict_names_lost_node\": %s, \"one_verdict\": %s, \"slurmctld_requests\": %u}\n",
      o.nodes, o.timeout, static_cast<double>(interval.count()) / 1000, heard_max, o.quiet,
      quiet_cpu, 100 * quiet_cpu / o.quiet, static_cast<double>(quiet_sent) / o.quiet,
      static_cast<double>(quiet_recv) / o.quiet, detect, ended, end_max,
      verdict_names ? "true" : "false", one_verdict ? "true" : "false", requests);
  const bool ok = verdict_at >= 0 && verdict_names && one_verdict && ended == o.nodes - 2 && requests == 0 &&
                  detect >= o.timeout - 0.5 && detect <= o.timeout + 3;
  if (!ok) std::fprintf(stderr, "the head said:\n%s", head_said.c_str());
  return ok ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
  HeadNode node;
  try {
    return simulate(parse(argc, argv), node);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "ddp-watch-sim: %s\n", e.what());
  }
  if (node.head > 0) {
    kill(-node.head, SIGTERM);
    reap_within(node.head, 2);
    node.head = -1;
  }
  node.drain(2);
  if (!node.said.empty()) std::fprintf(stderr, "the head said:\n%s", node.said.c_str());
  return 2;
}
