#include "slurm_requeue.hpp"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <optional>
#include <thread>

extern "C" {
#include <slurm/slurm.h>
#include <slurm/slurm_errno.h>
}

#include "slurm_library.hpp"

namespace ddp::watch {
namespace {

// slurm_load_job took a step id in 26.05; the header this was built with decides which is called.
[[maybe_unused]] int load(int (*f)(job_info_msg_t**, std::uint32_t, std::uint16_t), job_info_msg_t** info,
                          std::uint32_t job) {
  return f(info, job, SHOW_LOCAL);
}
[[maybe_unused]] int load(int (*f)(job_info_msg_t**, slurm_step_id_t, std::uint16_t), job_info_msg_t** info,
                          std::uint32_t job) {
  slurm_step_id_t id{};
  id.job_id = job;
  id.step_id = NO_VAL;
  id.step_het_comp = NO_VAL;
  return f(info, id, SHOW_LOCAL);
}

constexpr int kAnswerSeconds = 20;        // slurmctld's three answers, all together
constexpr std::size_t kMaxAnswer = 8192;  // bytes of lines from the child

// The job's record in slurmctld: what it excludes, needs and runs in.
struct JobRecord {
  std::string id;         // "17", or "12_3" for a task of an array (its own id would be the array's)
  std::string excluded;   // ExcNodeList, "" for none
  std::string required;   // ReqNodeList (--nodelist), "" for none
  std::string partition;  // the one it runs in
  unsigned nodes = 0;
  bool batch = false;     // sbatch's; salloc's and srun's own allocations are not
  bool pending = false;   // requeued already
};

class Requeue {
 public:
  Requeue(std::uint32_t job, const RetryDecision& d) : job_(job), id_(std::to_string(job)), d_(d) {}

  std::vector<std::string> run() {
    if (!slurm_.ok()) return {"not retried: " + slurm_.error()};
    const auto record = load_job();
    if (!record) return {"not retried: cannot read job " + id_ + " from slurmctld: " + why_};
    id_ = record->id;
    const std::string excluded = merged(record->excluded);
    if (d_.kind == RetryDecision::Kind::Exhausted)
      return {(record->excluded.empty() ? "job " + id_ + " excludes no node"
                                                 : "job " + id_ + " excludes " + record->excluded) +
                           "; to leave out " + node_list(d_.nodes) + " as well, resubmit with --exclude=" +
                           excluded};
    // Asked first: a requeue of an salloc session is not always refused before it revokes the
    // allocation (22.05), and then nothing more could be said.
    if (!record->batch) return {"not retried: " + batch_only()};
    if (record->pending) return {already_requeued()};
    for (const auto& node : d_.nodes)
      if (listed(record->required, node))
        return {"not retried: job " + id_ + " asks for " + node + " by name (--nodelist=" +
                record->required + "), so it cannot run without it; resubmit without " + node};
    if (const auto left = nodes_left(record->partition, excluded); left && *left < record->nodes)
      return {"not retried: without " + excluded + ", partition " + record->partition +
                           " has " + std::to_string(*left) + " of the " + std::to_string(record->nodes) +
                           " nodes the job needs; resubmit once the nodes are repaired"};
    if (!requeue()) return {requeued_by_another_ ? why_ : "not retried: " + why_};
    if (!exclude(excluded))
      return {"job " + id_ + " is requeued, but Slurm would not exclude " + node_list(d_.nodes) +
                           " (" + why_ + "): it may start there again. While it is pending: "
                           "scontrol update jobid=" + id_ + " ExcNodeList=" + excluded +
                           " (its excluded nodes with " + node_list(d_.nodes) + ")"};
    return {"job " + id_ + " is requeued without " + excluded +
                         "; it starts again once Slurm's requeue delay has passed (BeginTime, "
                         "about 2 minutes), and the program resumes from its checkpoint"};
  }

 private:
  std::optional<JobRecord> load_job() {
    auto load_job = slurm_.get<decltype(&slurm_load_job)>("slurm_load_job");
    auto free_info = slurm_.get<decltype(&slurm_free_job_info_msg)>("slurm_free_job_info_msg");
    if (!load_job || !free_info) {
      fail(slurm_.error());
      return std::nullopt;
    }
    job_info_msg_t* info = nullptr;
    if (load(load_job, &info, job_) != SLURM_SUCCESS || !info) {
      fail(slurm_.strerror(errno));
      return std::nullopt;
    }
    if (info->record_count == 0) {
      free_info(info);
      fail("slurmctld no longer knows it");
      return std::nullopt;
    }
    const slurm_job_info_t& j = info->job_array[0];
    JobRecord r;
    r.id = j.array_task_id != NO_VAL ? std::to_string(j.array_job_id) + "_" + std::to_string(j.array_task_id)
                                     : id_;
    r.required = j.req_nodes ? j.req_nodes : "";
    r.excluded = j.exc_nodes ? j.exc_nodes : "";
    r.partition = j.partition ? j.partition : "";
    r.nodes = j.num_nodes;
    r.batch = j.batch_flag != 0;
    r.pending = (j.job_state & JOB_STATE_BASE) == JOB_PENDING;
    free_info(info);
    return r;
  }

  // The job's excluded nodes and the failed ones, as one ranged list ("n[2-3]").
  std::string merged(const std::string& excluded) {
    auto create = slurm_.get<decltype(&slurm_hostlist_create)>("slurm_hostlist_create");
    auto push = slurm_.get<decltype(&slurm_hostlist_push_host)>("slurm_hostlist_push_host");
    auto uniq = slurm_.get<decltype(&slurm_hostlist_uniq)>("slurm_hostlist_uniq");
    auto ranged = slurm_.get<decltype(&slurm_hostlist_ranged_string)>("slurm_hostlist_ranged_string");
    auto destroy = slurm_.get<decltype(&slurm_hostlist_destroy)>("slurm_hostlist_destroy");
    std::vector<std::string> all = d_.nodes;
    if (!excluded.empty()) all.insert(all.begin(), excluded);
    if (!create || !push || !uniq || !ranged || !destroy) return node_list(all);
    auto hl = create(excluded.c_str());
    if (!hl) return node_list(all);
    for (const auto& n : d_.nodes) push(hl, n.c_str());
    uniq(hl);
    // Every series has this one (the malloc'ing kind is gone from 24.11); a list that does not
    // fit is given unranged.
    char text[8192];
    const auto n = ranged(hl, sizeof text, text);
    destroy(hl);
    return n > 0 && static_cast<std::size_t>(n) < sizeof text ? std::string(text, static_cast<std::size_t>(n)) : node_list(all);
  }

  // Whether NODE is one of the hosts of LIST (a Slurm host list; "" holds none).
  bool listed(const std::string& list, const std::string& node) {
    if (list.empty()) return false;
    auto create = slurm_.get<decltype(&slurm_hostlist_create)>("slurm_hostlist_create");
    auto find = slurm_.get<decltype(&slurm_hostlist_find)>("slurm_hostlist_find");
    auto destroy = slurm_.get<decltype(&slurm_hostlist_destroy)>("slurm_hostlist_destroy");
    if (!create || !find || !destroy) return false;
    auto hl = create(list.c_str());
    if (!hl) return false;
    const bool found = find(hl, node.c_str()) >= 0;
    destroy(hl);
    return found;
  }

  // Nodes of PARTITION outside EXCLUDED; nullopt when unknown (then the requeue goes ahead).
  std::optional<unsigned> nodes_left(const std::string& partition, const std::string& excluded) {
    auto load = slurm_.get<decltype(&slurm_load_partitions)>("slurm_load_partitions");
    auto free_parts = slurm_.get<decltype(&slurm_free_partition_info_msg)>("slurm_free_partition_info_msg");
    auto create = slurm_.get<decltype(&slurm_hostlist_create)>("slurm_hostlist_create");
    auto find = slurm_.get<decltype(&slurm_hostlist_find)>("slurm_hostlist_find");
    auto count = slurm_.get<decltype(&slurm_hostlist_count)>("slurm_hostlist_count");
    auto shift = slurm_.get<decltype(&slurm_hostlist_shift)>("slurm_hostlist_shift");
    auto destroy = slurm_.get<decltype(&slurm_hostlist_destroy)>("slurm_hostlist_destroy");
    if (!load || !free_parts || !create || !find || !count || !shift || !destroy) return std::nullopt;
    partition_info_msg_t* parts = nullptr;
    if (load(0, &parts, SHOW_ALL) != SLURM_SUCCESS || !parts) return std::nullopt;
    std::optional<unsigned> left;
    for (std::uint32_t i = 0; i < parts->record_count; ++i) {
      const partition_info_t& p = parts->partition_array[i];
      if (!p.name || partition != p.name || !p.nodes) continue;
      auto members = create(p.nodes);
      auto out = create(excluded.c_str());
      if (members && out) {
        unsigned n = static_cast<unsigned>(count(members));
        while (char* host = shift(out)) {
          if (find(members, host) >= 0) --n;
          std::free(host);
        }
        left = n;
      }
      if (members) destroy(members);
      if (out) destroy(out);
    }
    free_parts(parts);
    return left;
  }

  bool requeue() {
    auto requeue2 = slurm_.get<decltype(&slurm_requeue2)>("slurm_requeue2");
    auto free_resp = slurm_.get<decltype(&slurm_free_job_array_resp)>("slurm_free_job_array_resp");
    if (!requeue2 || !free_resp) return fail(slurm_.error());
    job_array_resp_msg_t* resp = nullptr;
    int code = requeue2(id_.data(), 0, &resp) == SLURM_SUCCESS ? SLURM_SUCCESS : errno;
    if (resp) {
      for (std::uint32_t i = 0; i < resp->job_array_count && code == SLURM_SUCCESS; ++i)
        code = static_cast<int>(resp->error_code[i]);
      free_resp(resp);
    }
    if (code == SLURM_SUCCESS) return true;
    if (code == ESLURM_JOB_PENDING) {
      requeued_by_another_ = true;
      why_ = already_requeued();
      return false;
    }
    const std::string fix = "resubmit with --exclude=" + node_list(d_.nodes);
    if (code == ESLURM_BATCH_ONLY)
      why_ = batch_only();
    else if (code == ESLURM_DISABLED)
      why_ = "job " + id_ + " may not be requeued (sbatch --no-requeue, or the site's JobRequeue=0 "
             "or job_submit policy): submit with --requeue, or " + fix;
    else
      why_ = "Slurm refused to requeue job " + id_ + " (" + slurm_.strerror(code) + "): " + fix;
    return false;
  }

  // By Slurm (a node it marked down), or by another node's watch that saw the failure its own way
  // (a node cut off the network finds the head silent, as the head finds it): the first word
  // stands, and no second node is excluded on this one's view.
  std::string already_requeued() const {
    return "job " + id_ + " was requeued already (by Slurm, or by another node's failure watch); " +
           node_list(d_.nodes) + " is not excluded from here";
  }

  std::string batch_only() const {
    return "Slurm requeues batch jobs only, and job " + id_ + " is an salloc or srun allocation: "
           "use sbatch for --ddp-retries, or resubmit with --exclude=" + node_list(d_.nodes);
  }

  bool exclude(const std::string& excluded) {
    auto init = slurm_.get<decltype(&slurm_init_job_desc_msg)>("slurm_init_job_desc_msg");
    auto update = slurm_.get<decltype(&slurm_update_job2)>("slurm_update_job2");
    auto free_resp = slurm_.get<decltype(&slurm_free_job_array_resp)>("slurm_free_job_array_resp");
    if (!init || !update || !free_resp) return fail(slurm_.error());
    std::string list = excluded;
    // slurmctld refuses some updates for a moment after a requeue (22.05: while it writes the
    // requeue to accounting, ESLURM_JOB_SETTING_DB_INX, gone from 24.11): three tries, a second
    // apart, whatever the error.
    for (int tries = 1;; ++tries) {
      job_desc_msg_t desc;
      init(&desc);
      desc.job_id_str = id_.data();
      desc.exc_nodes = list.data();
      job_array_resp_msg_t* resp = nullptr;
      int code = update(&desc, &resp) == SLURM_SUCCESS ? SLURM_SUCCESS : errno;
      if (resp) {
        for (std::uint32_t i = 0; i < resp->job_array_count && code == SLURM_SUCCESS; ++i)
          code = static_cast<int>(resp->error_code[i]);
        free_resp(resp);
      }
      if (code == SLURM_SUCCESS) return true;
      if (tries == 3) {
        why_ = slurm_.strerror(code);
        return false;
      }
      std::this_thread::sleep_for(std::chrono::seconds(1));
    }
  }

  bool fail(std::string why) {
    why_ = std::move(why);
    return false;
  }

  std::uint32_t job_;
  std::string id_;
  const RetryDecision& d_;
  SlurmLibrary slurm_;
  std::string why_;
  bool requeued_by_another_ = false;
};

}  // namespace

void let_srun_hear() { std::this_thread::sleep_for(std::chrono::seconds(1)); }

std::vector<std::string> requeue_here(std::uint32_t job, const RetryDecision& decision) {
  try {
    return Requeue(job, decision).run();
  } catch (const std::exception& e) {
    return {std::string("not retried: ") + e.what()};
  }
}

std::vector<std::string> requeue_through_slurm(std::uint32_t job, const RetryDecision& decision) {
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0) return {"not retried: no pipe for the requeue's child"};
  const pid_t child = ::fork();
  if (child < 0) {
    ::close(fds[0]);
    ::close(fds[1]);
    return {"not retried: cannot fork the requeue's child"};
  }
  if (child == 0) {
    ::close(fds[0]);
    // The requeue's own SIGTERM to the job's processes must not end this before the exclusion.
    sigset_t ending;
    sigemptyset(&ending);
    for (int sig : {SIGTERM, SIGINT, SIGHUP}) sigaddset(&ending, sig);
    ::sigprocmask(SIG_BLOCK, &ending, nullptr);
    std::string text;
    for (const auto& line : requeue_here(job, decision)) text += line + "\n";
    (void)!::write(fds[1], text.data(), std::min(text.size(), kMaxAnswer));
    ::_exit(0);
  }
  ::close(fds[1]);
  std::string text;
  const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(kAnswerSeconds);
  bool ended = false;
  while (!ended && text.size() < kMaxAnswer) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
                          until - std::chrono::steady_clock::now()).count();
    if (left <= 0) break;
    pollfd p{fds[0], POLLIN, 0};
    const int ready = ::poll(&p, 1, static_cast<int>(left));
    if (ready < 0 && errno == EINTR) continue;
    if (ready <= 0) break;
    char buf[1024];
    const ssize_t n = ::read(fds[0], buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) ended = true;
    else text.append(buf, static_cast<std::size_t>(n));
  }
  ended = ended || text.size() >= kMaxAnswer;
  ::close(fds[0]);
  if (!ended) {
    ::kill(child, SIGKILL);  // reaped by SIGCHLD=SIG_IGN
    return {"slurmctld did not answer the requeue within " + std::to_string(kAnswerSeconds) +
            " s: if job " + std::to_string(job) + " is pending again, add " + node_list(decision.nodes) +
            " to the excluded nodes `scontrol show job " + std::to_string(job) +
            "` lists (scontrol update jobid=" + std::to_string(job) +
            " ExcNodeList=...); if it ended, resubmit with --exclude=" + node_list(decision.nodes)};
  }
  if (text.empty())
    return {"not retried: the requeue's child process ended without an answer; "
                           "resubmit with --exclude=" + node_list(decision.nodes)};
  std::vector<std::string> lines;
  for (std::size_t at = 0; at < text.size();) {
    const std::size_t nl = text.find('\n', at);
    lines.push_back(text.substr(at, nl == std::string::npos ? std::string::npos : nl - at));
    at = nl == std::string::npos ? text.size() : nl + 1;
  }
  return lines;
}

}  // namespace ddp::watch
