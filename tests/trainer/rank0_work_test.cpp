// One rank works while the others wait as long as it makes progress: three ranks as threads of
// this process, meeting on a real rendezvous store on the loopback.
#include <gtest/gtest.h>

#include <future>
#include <thread>

#include "ddp/error.hpp"
#include "env_map.hpp"
#include "free_port.hpp"
#include "rank0_work.hpp"

namespace tr = ddp::trainer;
using namespace std::chrono_literals;

namespace {

struct Outcome {
  std::vector<std::string> heard;  // what rank 0's work told (rank 0 only)
  std::string error;               // what the rank threw, "" when it returned
  std::string log;                 // what it wrote on its log
};

// Each of `ranks` threads meets the others and calls rank0_works_others_wait with `work`.
std::vector<Outcome> run_ranks(int ranks, const std::function<void(const tr::Tell&)>& work,
                               std::chrono::milliseconds silence) {
  const std::string port = std::to_string(ddp::test::free_port());
  std::vector<std::future<Outcome>> done;
  for (int r = 0; r < ranks; ++r)
    done.push_back(std::async(std::launch::async, [=] {
      ddp::test::EnvMap env;
      env.set("RANK", std::to_string(r)).set("LOCAL_RANK", std::to_string(r))
          .set("WORLD_SIZE", std::to_string(ranks)).set("LOCAL_WORLD_SIZE", std::to_string(ranks))
          .set("MASTER_ADDR", "127.0.0.1").set("MASTER_PORT", port);
      const auto ctx = env.read();
      Outcome o;
      char* text = nullptr;
      std::size_t size = 0;
      std::FILE* log = open_memstream(&text, &size);
      auto rdv = ddp::Rendezvous::meet(ctx, 20s);
      try {
        tr::rank0_works_others_wait(*rdv, "the test's work",
                                    [&](const tr::Tell& tell) {
                                      work([&](const std::string& t) {
                                        o.heard.push_back(t);
                                        tell(t);
                                      });
                                    },
                                    silence, log);
      } catch (const std::exception& e) {
        o.error = e.what();
      }
      std::fclose(log);
      o.log = text;
      std::free(text);
      // Rank 0 serves the store: it leaves last.
      if (r == 0) std::this_thread::sleep_for(300ms);
      return o;
    }));
  std::vector<Outcome> out;
  for (auto& f : done) out.push_back(f.get());
  return out;
}

}  // namespace

TEST(Rank0Work, TheOthersWaitAsLongAsItTellsThemSomething) {
  // Three words 0.4 s apart with a silence of 0.6 s: 1.2 s of work, longer than any one wait.
  const auto out = run_ranks(3, [](const tr::Tell& tell) {
    for (const char* step : {"10%", "50%", "unpacking"}) {
      std::this_thread::sleep_for(400ms);
      tell(step);
    }
  }, 600ms);
  for (const Outcome& o : out) EXPECT_EQ(o.error, "");
  EXPECT_EQ(out[0].heard.size(), 3u);
  EXPECT_EQ(out[0].log, "");
  EXPECT_EQ(out[1].log.find("[rank 1/3] waiting for rank 0 (on 127.0.0.1) to finish the test's work;"), 0u)
      << out[1].log;
  EXPECT_EQ(out[2].log, "");  // one rank says it
}

TEST(Rank0Work, AFailureOfRank0ReachesTheOthersInItsWords) {
  const auto out = run_ranks(3, [](const tr::Tell& tell) {
    tell("10%");
    throw ddp::Error("cannot download http://x/y: the server answered HTTP 404 (not found)");
  }, 5s);
  EXPECT_EQ(out[0].error, "cannot download http://x/y: the server answered HTTP 404 (not found)");
  for (int r : {1, 2})
    EXPECT_EQ(out[r].error, "rank 0 could not finish the test's work: cannot download http://x/y: the "
                            "server answered HTTP 404 (not found) (rank 0's output says more)");
}

TEST(Rank0Work, ARank0ThatGoesSilentIsNotWaitedForForever) {
  const auto out = run_ranks(2, [](const tr::Tell& tell) {
    tell("10%");
    std::this_thread::sleep_for(1500ms);
  }, 500ms);
  EXPECT_EQ(out[0].error, "");
  EXPECT_EQ(out[1].error.find("rank 0 said nothing of the test's work for 0.5 s (its last word: 10%): "), 0u)
      << out[1].error;
}
