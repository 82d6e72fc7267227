// The failure watch at scale, on one machine: the real ddp-watch as the head node of a step of
// N nodes, and N-1 simulated member nodes in this process (the real Member logic and datagrams,
// one UDP socket each, on loopback), each beating as a node's watch does. This process also plays
// slurmstepd for the head's node (one task: a sleeping child). It measures:
//   - start: how long until every member has heard the head answer;
//   - quiet: the head's CPU time and the datagrams per second while nothing fails, and that no
//     verdict comes;
//   - a lost node: one member falls silent; when the head's verdict comes after that node's last
//     beat (it must name that node, within the time-out + 3 s), and how long until the end
//     reaches every other member.
// Prints one JSON object; exits 1 when a check fails.
//
//   ddp-watch-sim --watch PATH [--nodes N] [--timeout S] [--quiet S]
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
  bool silent = false;   // stopped beating (a lost node)
  double last_sent = -1;
  double first_heard = -1;
  double end_at = -1;    // when the head's end reached it
};

struct Options {
  std::string watch;
  unsigned nodes = 1000;
  unsigned timeout = 10;
  double quiet = 20;
};

Options parse(int argc, char** argv) {
  Options o;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string k = argv[i], v = argv[i + 1];
    if (k == "--watch") o.watch = v;
    else if (k == "--nodes") o.nodes = static_cast<unsigned>(std::stoul(v));
    else if (k == "--timeout") o.timeout = static_cast<unsigned>(std::stoul(v));
    else if (k == "--quiet") o.quiet = std::stod(v);
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

std::uint64_t cpu_ticks(pid_t pid) {
  const auto s = ddp::monitor::read_proc_stat("/proc", pid);
  return s ? s->ticks : 0;
}

}  // namespace

int main(int argc, char** argv) try {
  const Options o = parse(argc, argv);
  rlimit nofile{};
  getrlimit(RLIMIT_NOFILE, &nofile);
  nofile.rlim_cur = nofile.rlim_max;
  setrlimit(RLIMIT_NOFILE, &nofile);
  signal(SIGPIPE, SIG_IGN);
  const unsigned port = free_udp_port();

  // The head's node: a task (a sleeping child) and the control channel, as slurmstepd makes them.
  int control[2];
  socketpair(AF_UNIX, SOCK_STREAM, 0, control);
  const pid_t task = fork();
  if (task == 0) {
    execlp("sleep", "sleep", "3600", nullptr);
    _exit(127);
  }
  const int err_pipe[2] = {-1, -1};
  int errp[2];
  pipe(errp);
  const pid_t head = fork();
  if (head == 0) {
    dup2(control[1], 3);
    dup2(errp[1], 2);
    setenv(w::kKeyVariable, kKey.c_str(), 1);
    const std::string nodes = std::to_string(o.nodes), to = std::to_string(o.timeout),
                      p = std::to_string(port), world = std::to_string(o.nodes * 8);
    execl(o.watch.c_str(), o.watch.c_str(), "--job", "1", "--step", "0", "--node", "0", "--nodes",
          nodes.c_str(), "--host", "sim0", "--world", world.c_str(), "--head", "127.0.0.1",
          "--port", p.c_str(), "--timeout", to.c_str(), "--control-fd", "3", nullptr);
    _exit(127);
  }
  (void)err_pipe;
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
    sim[i].member = std::make_unique<w::Member>(c, now0);
  }

  std::string head_said;
  std::uint64_t sent = 0, received = 0;
  enum class Phase { Start, Quiet, Lost, Done } phase = Phase::Start;
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
      for (auto& d : n.member->due(now)) {
        const std::string bytes = w::encode(d, kKey);
        sendto(n.fd, bytes.data(), bytes.size(), 0, reinterpret_cast<sockaddr*>(&to), sizeof to);
        n.last_sent = t;
        ++sent;
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
        const auto d = w::decode(std::string_view(buf, static_cast<std::size_t>(r)), kKey);
        if (!d || sim[i].silent) continue;
        sim[i].member->heard_head(now);
        if (sim[i].first_heard < 0) sim[i].first_heard = t;
        if (d->type == w::Datagram::Type::Ack) sim[i].member->acked(d->id);
        if (d->type == w::Datagram::Type::End && sim[i].end_at < 0) sim[i].end_at = t;
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
      sim[lost].silent = true;  // node `lost` drops off the network
      lost_at = t;
      phase = Phase::Lost;
    } else if (phase == Phase::Lost) {
      bool all = verdict_at >= 0;
      for (unsigned i = 1; i < o.nodes && all; ++i) all = i == lost || sim[i].end_at >= 0;
      if (all) break;
      if (t - lost_at > o.timeout + 20) break;
    }
  }
  // The head's node: its task was ended by the head; tell the head, as slurmstepd would.
  int status = 0;
  for (int i = 0; i < 100 && waitpid(task, &status, WNOHANG) == 0; ++i) usleep(50000);
  kill(task, SIGKILL);
  waitpid(task, &status, 0);
  const std::string exit_line = ddp::monitor::exit_message(0, 0, status, w::Now::read().wall_ns);
  send(control[0], exit_line.data(), exit_line.size(), MSG_NOSIGNAL);
  shutdown(control[0], SHUT_WR);
  int head_status = 0;
  waitpid(head, &head_status, 0);
  for (ssize_t r; (r = read(errp[0], buf, sizeof buf)) > 0;) head_said.append(buf, static_cast<std::size_t>(r));

  double end_max = 0;
  unsigned ended = 0;
  for (unsigned i = 1; i < o.nodes; ++i)
    if (i != lost && sim[i].end_at >= 0) {
      ++ended;
      end_max = std::max(end_max, sim[i].end_at - verdict_at);
    }
  double heard_max = 0;
  for (unsigned i = 1; i < o.nodes; ++i) heard_max = std::max(heard_max, sim[i].first_heard);
  const double tick = static_cast<double>(sysconf(_SC_CLK_TCK));
  const double quiet_cpu = static_cast<double>(quiet_ticks1 - quiet_ticks0) / tick;
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
      "\"verdict_names_lost_node\": %s, \"one_verdict\": %s}\n",
      o.nodes, o.timeout, static_cast<double>(interval.count()) / 1000, heard_max, o.quiet,
      quiet_cpu, 100 * quiet_cpu / o.quiet, static_cast<double>(quiet_sent) / o.quiet,
      static_cast<double>(quiet_recv) / o.quiet, detect, ended, end_max,
      verdict_names ? "true" : "false", one_verdict ? "true" : "false");
  const bool ok = verdict_at >= 0 && verdict_names && one_verdict && ended == o.nodes - 2 &&
                  detect >= o.timeout - 0.5 && detect <= o.timeout + 3;
  if (!ok) std::fprintf(stderr, "the head said:\n%s", head_said.c_str());
  return ok ? 0 : 1;
} catch (const std::exception& e) {
  std::fprintf(stderr, "ddp-watch-sim: %s\n", e.what());
  return 2;
}
