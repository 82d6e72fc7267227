#include "rank0_work.hpp"

#include <nlohmann/json.hpp>

#include "ddp/error.hpp"

namespace ddp::trainer {
namespace {

using Json = nlohmann::json;

// What rank 0 sends, one message per broadcast: {"state": "working"|"done"|"failed", "text": ...}.
std::string message(const char* state, const std::string& text) {
  return Json{{"state", state}, {"text", text}}.dump(-1, ' ', false, Json::error_handler_t::replace);
}

}  // namespace

void rank0_works_others_wait(Rendezvous& rdv, const std::string& what,
                             const std::function<void(const Tell&)>& work,
                             std::chrono::milliseconds silence, std::FILE* log) {
  const Context& ctx = rdv.context();
  if (ctx.world_size == 1) {
    work([](const std::string&) {});
    return;
  }
  if (ctx.is_main()) {
    try {
      work([&](const std::string& text) { rdv.broadcast(message("working", text), silence); });
    } catch (const std::exception& e) {
      // Told, and waited for until every rank has heard it: rank 0 serves the store.
      rdv.broadcast(message("failed", e.what()), silence);
      rdv.finish(silence);
      throw;
    }
    rdv.broadcast(message("done", ""), silence);
    return;
  }
  if (ctx.rank == 1)
    std::fprintf(log, "[rank 1/%d] waiting for rank 0 (on %s) to finish %s; the other ranks wait "
                      "as long as it makes progress\n",
                 ctx.world_size, ctx.master_addr.c_str(), what.c_str());
  for (std::string last = "none yet";;) {
    std::string text;
    try {
      text = rdv.broadcast("", silence);
    } catch (const Error& e) {
      char seconds[32];
      std::snprintf(seconds, sizeof seconds, "%g", std::chrono::duration<double>(silence).count());
      throw Error("rank 0 said nothing of " + what + " for " + seconds + " s (its last word: " +
                  last + "): " + e.what());
    }
    Json m;
    try {
      m = Json::parse(text);
    } catch (const std::exception&) {
      throw Error("rank 0 sent '" + text + "' about " + what + ", which this rank cannot read: "
                  "do all ranks run the same ddp-cifar100?");
    }
    const std::string state = m.value("state", "");
    if (state == "done") return;
    if (state == "failed") {
      rdv.finish(silence);
      throw Error("rank 0 could not finish " + what + ": " + m.value("text", "") +
                  " (rank 0's output says more)");
    }
    last = m.value("text", "");
  }
}

}  // namespace ddp::trainer
