// The node facts file: every recorded topology survives the round trip field by field, a damaged
// or foreign file is refused with the line at fault, and the store uses a file only when it is
// safe and current, rebuilding it otherwise.
#include "node_facts_cache.hpp"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "error.hpp"

namespace p = ddp::plan;
namespace fs = std::filesystem;

namespace {

const fs::path kDir = DDP_TOPOLOGY_DIR;

void expect_same_locality(const p::Locality& a, const p::Locality& b, const std::string& what) {
  EXPECT_EQ(a.switches, b.switches) << what;
  EXPECT_EQ(a.numa, b.numa) << what;
  EXPECT_EQ(a.package, b.package) << what;
  EXPECT_EQ(a.cpus, b.cpus) << what;
}

void expect_same(const p::Topology& a, const p::Topology& b) {
  EXPECT_EQ(a.source, b.source);
  EXPECT_EQ(a.cpus, b.cpus);
  EXPECT_EQ(a.cores, b.cores);
  ASSERT_EQ(a.gpus.size(), b.gpus.size());
  for (std::size_t i = 0; i < a.gpus.size(); ++i) {
    const std::string what = "gpu " + a.gpus[i].busid;
    EXPECT_EQ(a.gpus[i].busid, b.gpus[i].busid);
    EXPECT_EQ(a.gpus[i].name, b.gpus[i].name) << what;
    EXPECT_EQ(a.gpus[i].vendor_id, b.gpus[i].vendor_id) << what;
    EXPECT_EQ(a.gpus[i].device_id, b.gpus[i].device_id) << what;
    expect_same_locality(a.gpus[i].locality, b.gpus[i].locality, what);
  }
  ASSERT_EQ(a.nics.size(), b.nics.size());
  for (std::size_t i = 0; i < a.nics.size(); ++i) {
    const std::string what = "nic " + a.nics[i].name;
    EXPECT_EQ(a.nics[i].name, b.nics[i].name);
    EXPECT_EQ(a.nics[i].kind, b.nics[i].kind) << what;
    EXPECT_EQ(a.nics[i].busid, b.nics[i].busid) << what;
    expect_same_locality(a.nics[i].locality, b.nics[i].locality, what);
    ASSERT_EQ(a.nics[i].ports.size(), b.nics[i].ports.size()) << what;
    for (std::size_t j = 0; j < a.nics[i].ports.size(); ++j) {
      EXPECT_EQ(a.nics[i].ports[j].number, b.nics[i].ports[j].number) << what;
      EXPECT_EQ(a.nics[i].ports[j].active, b.nics[i].ports[j].active) << what;
      EXPECT_EQ(a.nics[i].ports[j].netdev, b.nics[i].ports[j].netdev) << what;
      EXPECT_EQ(a.nics[i].ports[j].link, b.nics[i].ports[j].link) << what;
    }
  }
}

p::NodeFactsKey some_key() {
  p::NodeFactsKey k;
  k.source = "live";
  k.boot_id = "0b1f6c52-5f3e-4a51-9c3f-1d2e3f4a5b6c";
  k.cpus_online = "0-7";
  k.pci_devices = "42:9a3c5e7f00112233";
  k.hwloc = "api133376:/usr/lib/x86_64-linux-gnu/libhwloc.so.15.6.1:1:2.3:4";
  k.plugin = "0.1.0";
  return k;
}

std::string error_of(const std::string& text) {
  try {
    p::decode_node_facts(text);
  } catch (const p::PlanError& e) {
    return e.what();
  }
  return "(no error)";
}

std::string encoded(const std::string& file) {
  return p::encode_node_facts(some_key(), p::load_topology((kDir / file).string()));
}

// Replaces the first line that starts with `prefix`.
std::string with_line(std::string text, const std::string& prefix, const std::string& line) {
  const auto at = text.find("\n" + prefix);
  const auto end = text.find('\n', at + 1);
  return text.replace(at + 1, end - at - 1, line);
}

}  // namespace

TEST(NodeFacts, EveryRecordedTopologySurvivesTheRoundTrip) {
  int files = 0;
  for (const auto& entry : fs::directory_iterator(kDir)) {
    if (entry.path().extension() != ".xml") continue;
    SCOPED_TRACE(entry.path().filename().string());
    const p::Topology loaded = p::load_topology(entry.path().string());
    const std::string text = p::encode_node_facts(some_key(), loaded);
    const p::DecodedNodeFacts back = p::decode_node_facts(text);
    EXPECT_TRUE(back.key == some_key());
    expect_same(loaded, back.topology);
    EXPECT_EQ(p::encode_node_facts(back.key, back.topology), text);
    ++files;
  }
  EXPECT_GE(files, 8);
}

TEST(NodeFacts, TheRoundTripKeepsDownPorts) {
  // On ipa20 only mlx5_0's port is ACTIVE (topology_test): the others must stay down.
  const auto back = p::decode_node_facts(encoded("ipa20.xml")).topology;
  int hcas = 0;
  for (const auto& n : back.nics) {
    if (!n.openfabrics()) continue;
    ++hcas;
    EXPECT_EQ(n.has_active_port(), n.name == "mlx5_0") << n.name;
  }
  EXPECT_EQ(hcas, 4);
}

TEST(NodeFacts, KeyDifferencesAreNamed) {
  p::NodeFactsKey a = some_key(), b = some_key();
  EXPECT_EQ(a.first_difference(b), "");
  b.boot_id = "another";
  EXPECT_EQ(a.first_difference(b), "the boot id (the node rebooted)");
  b = a;
  b.pci_devices = "41:00";
  EXPECT_EQ(a.first_difference(b), "the PCI devices");
  EXPECT_FALSE(a == b);
}

TEST(NodeFacts, TheLiveKeyIsStableAndNamesThisMachine) {
  const p::NodeFactsKey a = p::current_node_facts_key(std::nullopt);
  const p::NodeFactsKey b = p::current_node_facts_key(std::nullopt);
  EXPECT_TRUE(a == b);
  EXPECT_EQ(a.source, "live");
  EXPECT_EQ(a.boot_id.size(), 36u) << a.boot_id;
  EXPECT_FALSE(a.cpus_online.empty());
  EXPECT_NE(a.hwloc.find("libhwloc"), std::string::npos) << a.hwloc;
}

TEST(NodeFacts, DamagedFilesAreRefusedNamingTheLine) {
  const std::string good = encoded("ipa20.xml");  // 4 GPUs, 6 NICs
  ASSERT_EQ(error_of(good), "(no error)");
  // Truncated: cut in the middle of the NICs, or only the end line missing.
  EXPECT_NE(error_of(good.substr(0, good.find("\nnic ") + 1)).find("ends inside its NICs"),
            std::string::npos);
  EXPECT_NE(error_of(good.substr(0, good.size() - 4)).find("without its end line"), std::string::npos);
  EXPECT_NE(error_of(good + "gpu x\n").find("after its end line"), std::string::npos);
  EXPECT_NE(error_of("slurm-ddp node facts 0\n").find("line 1: not a node facts file"),
            std::string::npos);
  EXPECT_NE(error_of("").find("not a node facts file"), std::string::npos);
  const std::string bad_kind = with_line(good, "nic ", "nic mlx5_0 warp 0000:01:00.0 1 - - -1 -");
  EXPECT_NE(error_of(bad_kind).find("unknown NIC kind 'warp'"), std::string::npos) << error_of(bad_kind);
  const std::string bad_cpus = with_line(good, "core ", "core 3-1");
  EXPECT_NE(error_of(bad_cpus).find("line 9: "), std::string::npos) << error_of(bad_cpus);
  EXPECT_NE(error_of(with_line(good, "gpu ", "gpu 0000:34:00.0")).find("expected 'gpu' with 8"),
            std::string::npos);
  EXPECT_NE(error_of(with_line(good, "key boot_id", "key boot_id a b")).find("line 3"),
            std::string::npos);
}

TEST(NodeFacts, ValuesThatWouldBreakTheFormatAreNotWritten) {
  p::Topology t;
  t.source = "live";
  t.cpus = {0};
  p::Gpu g;
  g.busid = "0000:01:00.0";
  g.name = "cuda 0";
  t.gpus.push_back(g);
  EXPECT_THROW(p::encode_node_facts(some_key(), t), p::PlanError);
}

namespace {

// A store in a fresh directory owned by this test's user, as /run/slurm-ddp is by root.
class Store : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = fs::temp_directory_path() / ("ddp-node-facts-" + std::to_string(getpid()));
    fs::remove_all(root_);
    fs::create_directories(root_);
    xml_ = (root_ / "node.xml").string();
    fs::copy_file(kDir / "nvidiaDGX2.xml", xml_);
    store_.dir = (root_ / "cache").string();
    store_.owner = geteuid();
  }
  void TearDown() override { fs::remove_all(root_); }
  p::NodeTopology get(bool may_write = true) { return p::node_topology(store_, xml_, may_write); }
  // A valid file, moved away from its name for a test to put something else there.
  std::string move_file_aside() {
    get();
    const std::string elsewhere = (root_ / "elsewhere").string();
    fs::rename(store_.path(), elsewhere);
    return elsewhere;
  }
  mode_t mode_of(const std::string& path) {
    struct stat st{};
    EXPECT_EQ(stat(path.c_str(), &st), 0);
    return st.st_mode & 07777;
  }

  fs::path root_;
  std::string xml_;
  p::NodeFactsStore store_;
};

}  // namespace

TEST_F(Store, TheFirstStepWritesTheFileAndLaterStepsReadIt) {
  const auto first = get();
  EXPECT_FALSE(first.from_file);
  EXPECT_NE(first.how.find("there is none yet: rewritten"), std::string::npos) << first.how;
  EXPECT_EQ(mode_of(store_.dir), 0755u);
  EXPECT_EQ(mode_of(store_.path()), 0644u);
  const auto second = get();
  EXPECT_TRUE(second.from_file) << second.how;
  expect_same(first.topology, second.topology);
  EXPECT_NE(second.how.find("node facts file " + store_.path()), std::string::npos);
}

TEST_F(Store, ReadingTheFileIsFarCheaperThanLoadingHwloc) {
  const auto loaded = get();
  double best = 1e9;
  for (int i = 0; i < 20; ++i) best = std::min(best, get().ms);
  // The DGX-2 export is a large node (16 GPUs, 8 HCAs, 96 threads); hwloc takes milliseconds.
  EXPECT_LT(best, loaded.topology.load_ms);
  RecordProperty("read_ms", std::to_string(best));
  RecordProperty("hwloc_ms", std::to_string(loaded.topology.load_ms));
}

TEST_F(Store, AChangedTopologySourceMakesTheFileStale) {
  get();
  // A new export of the node: other size and time.
  std::ofstream(xml_, std::ios::app) << "\n";
  const auto after = get();
  EXPECT_FALSE(after.from_file);
  EXPECT_NE(after.how.find("stale: the topology source changed: rewritten"), std::string::npos)
      << after.how;
  EXPECT_TRUE(get().from_file);
}

TEST_F(Store, ADamagedFileIsReplaced) {
  get();
  std::ofstream(store_.path(), std::ios::trunc) << "slurm-ddp node facts 1\nkey source\n";
  const auto after = get();
  EXPECT_FALSE(after.from_file);
  EXPECT_NE(after.how.find("it is damaged: node facts line 2"), std::string::npos) << after.how;
  EXPECT_TRUE(get().from_file);
}

TEST_F(Store, AFileOthersMayWriteIsNeverBelieved) {
  get();
  ASSERT_EQ(chmod(store_.path().c_str(), 0666), 0);
  const auto after = get();
  EXPECT_FALSE(after.from_file);
  EXPECT_NE(after.how.find("it is writable by others: rewritten"), std::string::npos) << after.how;
  EXPECT_EQ(mode_of(store_.path()), 0644u);
}

TEST_F(Store, ADirectoryOthersMayWriteIsNeitherReadNorWritten) {
  get();
  ASSERT_EQ(chmod(store_.dir.c_str(), 0777), 0);
  const auto after = get();
  EXPECT_FALSE(after.from_file);
  EXPECT_NE(after.how.find(store_.dir + " (mode 0777, owner "), std::string::npos) << after.how;
  EXPECT_NE(after.how.find("is writable by others, who could swap what lies under it: chmod go-w " +
                           store_.dir),
            std::string::npos)
      << after.how;
  EXPECT_NE(after.how.find("choose another directory: not rewritten"), std::string::npos)
      << after.how;
}

TEST_F(Store, AFileOfAnotherOwnerIsNeverBelieved) {
  get();
  store_.owner = geteuid() + 1;
  const auto after = get(false);
  EXPECT_FALSE(after.from_file);
  EXPECT_NE(after.how.find("owned by uid"), std::string::npos) << after.how;
}

TEST_F(Store, ASymbolicLinkInPlaceOfTheFileIsNotFollowed) {
  fs::create_symlink(move_file_aside(), store_.path());
  const auto after = get(false);
  EXPECT_FALSE(after.from_file);
  EXPECT_NE(after.how.find("cannot be opened"), std::string::npos) << after.how;
}

// Root's writes must go where root was told: a user who could swap a component of the path (a
// directory above the store, or a name inside a shared one) could otherwise make slurmd or
// slurmstepd write, or read back, files of the user's choosing.
TEST_F(Store, ASymbolicLinkAboveTheDirectoryIsNotFollowed) {
  const fs::path real = root_ / "real";
  fs::create_directories(real);
  fs::create_directory_symlink(real, root_ / "link");
  store_.dir = (root_ / "link" / "cache").string();
  const auto after = get();
  EXPECT_FALSE(after.from_file);
  EXPECT_NE(after.how.find((root_ / "link").string() + " is a symbolic link to '" + real.string() +
                           "'"),
            std::string::npos)
      << after.how;
  EXPECT_NE(after.how.find("not rewritten"), std::string::npos) << after.how;
  EXPECT_FALSE(fs::exists(real / "cache"));
}

TEST_F(Store, ASymbolicLinkInPlaceOfTheDirectoryIsNotFollowed) {
  const fs::path real = root_ / "real";
  fs::create_directories(real);
  fs::create_directory_symlink(real, store_.dir);
  const auto after = get();
  EXPECT_NE(after.how.find(store_.dir + " is a symbolic link"), std::string::npos) << after.how;
  EXPECT_TRUE(fs::is_empty(real));
}

TEST_F(Store, AHardLinkInPlaceOfTheFileIsNeverBelieved) {
  // In a sticky directory anyone may add a name: a second name for a file of root's (a copy of
  // the cache here; /etc/shadow on a machine without fs.protected_hardlinks).
  fs::create_hard_link(move_file_aside(), store_.path());
  const auto after = get(false);
  EXPECT_FALSE(after.from_file);
  EXPECT_NE(after.how.find("it has other names (hard links)"), std::string::npos) << after.how;
}

TEST_F(Store, AFifoInPlaceOfTheFileDoesNotBlock) {
  ASSERT_EQ(mkdir(store_.dir.c_str(), 0755), 0);
  ASSERT_EQ(mkfifo(store_.path().c_str(), 0644), 0);
  const auto after = get(false);  // opening a FIFO to read would wait for a writer
  EXPECT_NE(after.how.find("it is not a regular file of node facts"), std::string::npos)
      << after.how;
}

// A sticky directory (/tmp, or a site's shared one) keeps others from renaming what is in it,
// so it is walked through and may hold the store; a name someone else made there first is theirs
// and refused, and root's rename replaces it.
TEST_F(Store, InAStickyDirectoryOnlyRootsOwnFileIsBelieved) {
  if (geteuid() != 0) GTEST_SKIP() << "needs root to make a file of another user";
  ASSERT_EQ(mkdir(store_.dir.c_str(), 01777), 0);
  ASSERT_EQ(chmod(store_.dir.c_str(), 01777), 0);
  std::ofstream(store_.path()) << "slurm-ddp node facts 1\n";
  ASSERT_EQ(chown(store_.path().c_str(), 65534, 65534), 0);
  const auto first = get();
  EXPECT_FALSE(first.from_file);
  EXPECT_NE(first.how.find("not used: it is owned by uid 65534, not 0: rewritten"),
            std::string::npos)
      << first.how;
  EXPECT_TRUE(get().from_file);
}

TEST_F(Store, ADirectoryAboveOfAnotherUserIsRefused) {
  if (geteuid() != 0) GTEST_SKIP() << "needs root to make a directory of another user";
  const fs::path theirs = root_ / "theirs";
  fs::create_directories(theirs);
  ASSERT_EQ(chown(theirs.c_str(), 65534, 65534), 0);
  store_.dir = (theirs / "cache").string();
  const auto after = get();
  EXPECT_FALSE(after.from_file);
  EXPECT_NE(after.how.find(theirs.string() + " (mode 0755, owner "), std::string::npos)
      << after.how;
  EXPECT_NE(after.how.find("uid 65534) belongs to another user"), std::string::npos) << after.how;
  EXPECT_FALSE(fs::exists(theirs / "cache"));
}

TEST_F(Store, WithoutTheRightToWriteTheFileStaysAsItIs) {
  const auto first = get(false);
  EXPECT_FALSE(first.from_file);
  EXPECT_FALSE(fs::exists(store_.path()));
  EXPECT_NE(first.how.find("not used: "), std::string::npos) << first.how;
}

TEST_F(Store, OffMeansHwlocEveryTime) {
  store_.dir.clear();
  EXPECT_FALSE(get().from_file);
  EXPECT_FALSE(get().from_file);
  EXPECT_NE(get().how.find("node_facts_dir=off"), std::string::npos);
}
