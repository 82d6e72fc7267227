// download_cifar100 against a python3 http.server on 127.0.0.1 serving generated archives. No
// test touches a non-loopback address.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <memory>
#include <thread>

#include "data/download.hpp"
#include "data/synthetic.hpp"
#include "test_support.hpp"

using namespace ddp::cifar;
using namespace ddp::cifar::test;
using ::testing::ContainsRegex;
using ::testing::HasSubstr;

namespace {

// A port nobody listens on right now (bound to 127.0.0.1:0, then closed).
int free_port() {
  const int s = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  a.sin_port = 0;
  socklen_t len = sizeof a;
  if (::bind(s, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0 ||
      ::getsockname(s, reinterpret_cast<sockaddr*>(&a), &len) != 0) {
    ::close(s);
    return -1;
  }
  ::close(s);
  return ntohs(a.sin_port);
}

bool can_connect(int port) {
  const int s = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  a.sin_port = htons(static_cast<uint16_t>(port));
  const bool ok = ::connect(s, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0;
  ::close(s);
  return ok;
}

void run(const std::string& cmd) {
  ASSERT_EQ(std::system(cmd.c_str()), 0) << cmd;
}

}  // namespace

class Download : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    if (!download_supported()) return;
    served_ = std::make_unique<TempDir>();
    const std::string www = served_->str();
    // A small synthetic data set in the official layout, and archives made from it.
    SynthOptions o;
    o.train = 60;
    o.test = 20;
    o.classes = 10;
    o.seed = 11;
    write_synthetic(*served_ / "src", o);
    run("tar czf " + www + "/good.tar.gz -C " + www + "/src cifar-100-binary");
    // The same archive with 4 KiB of the compressed stream (after the 10-byte gzip header)
    // overwritten; the test passes the MD5 of these bytes. (libarchive does not check the gzip
    // CRC, so damage deep inside the pixels would only be caught by the MD5 of the official
    // archive; damage to the deflate block headers or to a tar header is caught here.)
    auto bytes = read_bytes(www + "/good.tar.gz");
    for (size_t i = 10; i < 4106 && i < bytes.size(); ++i) {
      bytes[i] = static_cast<char>(i * 7919 % 256);
    }
    write_bytes(www + "/corrupt.tar.gz", bytes);
    // Cut short.
    bytes = read_bytes(www + "/good.tar.gz");
    bytes.resize(bytes.size() * 2 / 3);
    write_bytes(www + "/truncated.tar.gz", bytes);
    // The real data first, then an entry that climbs out of the data directory.
    const std::string py =
        "import io, sys, tarfile\n"
        "www = sys.argv[1]\n"
        "def add(t, name, data=b'x', kind=tarfile.REGTYPE, link=''):\n"
        "    i = tarfile.TarInfo(name); i.type = kind; i.linkname = link\n"
        "    i.size = len(data) if kind == tarfile.REGTYPE else 0\n"
        "    t.addfile(i, io.BytesIO(data) if kind == tarfile.REGTYPE else None)\n"
        "with tarfile.open(www + '/evil.tar.gz', 'w:gz') as t:\n"
        "    t.add(www + '/src/cifar-100-binary', arcname='cifar-100-binary')\n"
        "    add(t, '../evil')\n"
        "with tarfile.open(www + '/absolute.tar.gz', 'w:gz') as t:\n"
        "    add(t, '/tmp/ddp-cifar-evil-absolute')\n"
        "with tarfile.open(www + '/symlink.tar.gz', 'w:gz') as t:\n"
        "    add(t, 'cifar-100-binary/train.bin', kind=tarfile.SYMTYPE, link='/etc/passwd')\n"
        "with tarfile.open(www + '/notcifar.tar.gz', 'w:gz') as t:\n"
        "    add(t, 'README', b'hello')\n";
    write_bytes(www + "/make.py", std::vector<char>(py.begin(), py.end()));
    run("python3 " + www + "/make.py " + www);

    port_ = free_port();
    ASSERT_GT(port_, 0);
    pid_ = ::fork();
    if (pid_ == 0) {
      const std::string port = std::to_string(port_);
      ::freopen("/dev/null", "w", stdout);
      ::freopen("/dev/null", "w", stderr);
      ::execlp("python3", "python3", "-m", "http.server", "--bind", "127.0.0.1", port.c_str(),
               "--directory", www.c_str(), static_cast<char*>(nullptr));
      ::_exit(127);
    }
    ASSERT_GT(pid_, 0);
    for (int i = 0; i < 200 && !can_connect(port_); ++i) {
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    ASSERT_TRUE(can_connect(port_)) << "python3 -m http.server did not start on port " << port_;
  }

  static void TearDownTestSuite() {
    if (pid_ > 0) {
      ::kill(pid_, SIGTERM);
      int status = 0;
      ::waitpid(pid_, &status, 0);
      pid_ = -1;
    }
    served_.reset();
  }

  void SetUp() override {
    if (!download_supported()) GTEST_SKIP() << "built without libcurl/libarchive/OpenSSL";
    ASSERT_GT(pid_, 0);
  }

  static std::string url(const std::string& name) {
    return "http://127.0.0.1:" + std::to_string(port_) + "/" + name;
  }
  static DownloadSource source(const std::string& name) {
    return DownloadSource{url(name), md5_hex_of_file(*served_ / name)};
  }
  // The data directory a test downloads into (inside a fresh temp dir, so that nothing may
  // appear next to it either).
  void expect_nothing_left(const TempDir& parent) {
    EXPECT_EQ(entries(parent.path()), (std::set<std::string>{"data"}));
    EXPECT_TRUE(entries(parent.path() / "data").empty());
  }

  static std::unique_ptr<TempDir> served_;
  static pid_t pid_;
  static int port_;
};

std::unique_ptr<TempDir> Download::served_;
pid_t Download::pid_ = -1;
int Download::port_ = -1;

TEST_F(Download, Md5OfAFile) {
  TempDir dir;
  write_bytes(dir / "abc", {'a', 'b', 'c'});
  EXPECT_EQ(md5_hex_of_file(dir / "abc"), "900150983cd24fb0d6963f7d28e17f72");
  EXPECT_EQ(DownloadSource{}.md5, "03b5dce01913d631647c71ecec9e9cb8");
  EXPECT_EQ(DownloadSource{}.url, "https://www.cs.toronto.edu/~kriz/cifar-100-binary.tar.gz");
}

TEST_F(Download, FetchesChecksUnpacksAndLoads) {
  TempDir parent;
  const std::string data = parent / "data";
  download_cifar100(data, source("good.tar.gz"));
  // Only the unpacked directory remains: no archive, no staging directory.
  EXPECT_EQ(entries(data), (std::set<std::string>{"cifar-100-binary"}));
  const Dataset train = load_cifar100(data, true);
  const Dataset expected = read_cifar100_file(*served_ / "src/cifar-100-binary/train.bin");
  EXPECT_TRUE(torch::equal(train.images, expected.images));
  EXPECT_TRUE(torch::equal(train.labels, expected.labels));
  EXPECT_EQ(load_cifar100(data, false).size(), 20);
  EXPECT_TRUE(cifar100_present(data));
  // Already there: nothing is fetched (this URL would fail).
  download_cifar100(data, DownloadSource{url("missing.tar.gz"), "x"});
  // The MD5 comparison ignores case.
  TempDir other;
  DownloadSource upper = source("good.tar.gz");
  for (auto& c : upper.md5) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  download_cifar100(other / "data", upper);
  EXPECT_TRUE(cifar100_present(other / "data"));
}

TEST_F(Download, TellsHowFarItGotAndThatItUnpacks) {
  TempDir parent;
  std::vector<std::string> told;
  download_cifar100(parent / "data", source("good.tar.gz"),
                    [&](const std::string& line) { told.push_back(line); });
  ASSERT_GE(told.size(), 2u);
  EXPECT_NE(told[told.size() - 2].find("(100%)"), std::string::npos) << told[told.size() - 2];
  EXPECT_EQ(told.back(), "unpacking the archive");
}

TEST_F(Download, ReplacesAnIncompleteDataDirectory) {
  TempDir parent;
  const std::string data = parent / "data";
  fs::create_directories(data + "/cifar-100-binary");
  write_bytes(data + "/cifar-100-binary/train.bin", std::vector<char>(100, 0));  // broken
  EXPECT_FALSE(cifar100_present(data));
  download_cifar100(data, source("good.tar.gz"));
  EXPECT_EQ(load_cifar100(data, true).size(), 60);
}

TEST_F(Download, WrongMd5) {
  TempDir parent;
  const std::string data = parent / "data";
  DownloadSource src = source("good.tar.gz");
  const std::string got = src.md5;
  src.md5 = "0123456789abcdef0123456789abcdef";
  const std::string msg = error_of([&] { download_cifar100(data, src); });
  EXPECT_THAT(msg, HasSubstr("MD5 mismatch for " + url("good.tar.gz")));
  EXPECT_THAT(msg, HasSubstr("expected 0123456789abcdef0123456789abcdef, got " + got));
  EXPECT_THAT(msg, HasSubstr("removed"));
  expect_nothing_left(parent);
}

TEST_F(Download, CorruptArchiveWithMatchingMd5) {
  for (const char* name : {"corrupt.tar.gz", "truncated.tar.gz"}) {
    TempDir parent;
    const std::string data = parent / "data";
    const std::string msg = error_of([&] { download_cifar100(data, source(name)); });
    EXPECT_THAT(msg, HasSubstr("the archive from " + url(name) + " is corrupt")) << name;
    EXPECT_THAT(msg, HasSubstr("Nothing was unpacked"));
    std::cout << name << ": " << msg << "\n";
    expect_nothing_left(parent);
  }
}

TEST_F(Download, HttpNotFound) {
  TempDir parent;
  const std::string data = parent / "data";
  const std::string msg =
      error_of([&] { download_cifar100(data, DownloadSource{url("missing.tar.gz"), "x"}); });
  EXPECT_THAT(msg, HasSubstr("cannot download " + url("missing.tar.gz")));
  EXPECT_THAT(msg, HasSubstr("HTTP 404"));
  expect_nothing_left(parent);
}

TEST_F(Download, RefusesPathTraversal) {
  TempDir parent;
  const std::string data = parent / "data";
  const std::string msg = error_of([&] { download_cifar100(data, source("evil.tar.gz")); });
  EXPECT_THAT(msg, HasSubstr("entry '../evil'"));
  EXPECT_THAT(msg, HasSubstr("path traversal"));
  expect_nothing_left(parent);  // the good entries before it are gone too; no parent/evil
  EXPECT_FALSE(fs::exists(parent / "evil"));

  TempDir parent2;
  const std::string msg2 =
      error_of([&] { download_cifar100(parent2 / "data", source("absolute.tar.gz")); });
  EXPECT_THAT(msg2, HasSubstr("'/tmp/ddp-cifar-evil-absolute'"));
  EXPECT_FALSE(fs::exists("/tmp/ddp-cifar-evil-absolute"));
  expect_nothing_left(parent2);
}

TEST_F(Download, RefusesLinks) {
  TempDir parent;
  const std::string msg =
      error_of([&] { download_cifar100(parent / "data", source("symlink.tar.gz")); });
  EXPECT_THAT(msg, HasSubstr("'cifar-100-binary/train.bin' is a link or special file"));
  expect_nothing_left(parent);
}

TEST_F(Download, ArchiveWithoutTheDataSet) {
  TempDir parent;
  const std::string msg =
      error_of([&] { download_cifar100(parent / "data", source("notcifar.tar.gz")); });
  EXPECT_THAT(msg, HasSubstr("does not contain cifar-100-binary/train.bin and test.bin"));
  expect_nothing_left(parent);
}

TEST_F(Download, UnreachableServerFailsQuickly) {
  TempDir parent;
  const int closed = free_port();
  const std::string u = "http://127.0.0.1:" + std::to_string(closed) + "/cifar-100-binary.tar.gz";
  const auto t0 = std::chrono::steady_clock::now();
  const std::string msg = error_of([&] { download_cifar100(parent / "data", DownloadSource{u, "x"}); });
  const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  EXPECT_THAT(msg, HasSubstr("cannot download " + u));
  // curl's own words for error 7: "Couldn't connect" before 8.x, "Could not connect" since.
  EXPECT_THAT(msg, ContainsRegex("(Couldn't|Could not) connect to server"));
  EXPECT_THAT(msg, HasSubstr("network"));
  EXPECT_LT(s, 5.0);
  expect_nothing_left(parent);
}
