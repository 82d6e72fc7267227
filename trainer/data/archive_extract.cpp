#include "data/download.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <sstream>
#include <vector>

#include "data/cifar_format.hpp"

#ifdef DDP_CIFAR_HAVE_DOWNLOAD
#include <archive.h>
#include <archive_entry.h>
#include <curl/curl.h>
#include <openssl/evp.h>

#include <memory>
#include <mutex>
#endif

namespace fs = std::filesystem;

namespace ddp::cifar {
namespace {

bool plausible_file(const fs::path& p) {
  std::error_code ec;
  if (!fs::is_regular_file(p, ec)) return false;
  const auto size = fs::file_size(p, ec);
  return !ec && size > 0 && size % static_cast<uintmax_t>(kRecordBytes) == 0;
}

}  // namespace

bool cifar100_present(const std::string& data_dir) {
  const std::string train = find_cifar100_file(data_dir, true);
  const std::string test = find_cifar100_file(data_dir, false);
  return !train.empty() && !test.empty() && plausible_file(train) && plausible_file(test);
}

#ifndef DDP_CIFAR_HAVE_DOWNLOAD

bool download_supported() { return false; }

namespace {
[[noreturn]] void unsupported(const std::string& what) {
  throw DataError(what + ": this build has no download support (libcurl, libarchive or OpenSSL was "
                         "not found when it was configured; Debian: libcurl4-openssl-dev "
                         "libarchive-dev libssl-dev). Fix: rebuild with them, or fetch "
                         "https://www.cs.toronto.edu/~kriz/cifar-100-binary.tar.gz by hand and "
                         "unpack it into the data directory, or generate synthetic data with `" +
                  std::string(kSynthCommand) + " DIR`");
}
}  // namespace

void download_cifar100(const std::string& data_dir, const DownloadSource& src) {
  if (cifar100_present(data_dir)) return;
  unsupported("cannot download " + src.url + " into " + data_dir);
}
std::string md5_hex_of_file(const std::string& path) { unsupported("cannot hash " + path); }
void extract_archive(const std::string& archive, const std::string&, const std::string&) {
  unsupported("cannot unpack " + archive);
}

#else

bool download_supported() { return true; }

namespace {

std::string errno_text(int err) { return std::strerror(err); }

std::string lower(std::string s) {
  for (auto& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

struct Md5 {
  std::unique_ptr<EVP_MD_CTX, decltype(&EVP_MD_CTX_free)> ctx{EVP_MD_CTX_new(), &EVP_MD_CTX_free};
  Md5() {
    if (!ctx || EVP_DigestInit_ex(ctx.get(), EVP_md5(), nullptr) != 1) {
      throw DataError("OpenSSL cannot compute MD5 (EVP_md5 unavailable; FIPS mode?)");
    }
  }
  void update(const void* p, size_t n) { EVP_DigestUpdate(ctx.get(), p, n); }
  std::string hex() {
    unsigned char d[EVP_MAX_MD_SIZE];
    unsigned int len = 0;
    EVP_DigestFinal_ex(ctx.get(), d, &len);
    static const char* digits = "0123456789abcdef";
    std::string s;
    for (unsigned int i = 0; i < len; ++i) {
      s += digits[d[i] >> 4];
      s += digits[d[i] & 15];
    }
    return s;
  }
};

// Removes a path on scope exit unless released.
struct Cleanup {
  fs::path path;
  ~Cleanup() {
    if (!path.empty()) {
      std::error_code ec;
      fs::remove_all(path, ec);
    }
  }
};

struct Fetch {
  int fd = -1;
  Md5 md5;
  uint64_t bytes = 0;
  int write_errno = 0;
  bool tty = false;
  std::chrono::steady_clock::time_point last_progress{};
};

size_t on_data(char* ptr, size_t size, size_t nmemb, void* user) {
  auto* f = static_cast<Fetch*>(user);
  const size_t n = size * nmemb;
  size_t done = 0;
  while (done < n) {
    const ssize_t put = ::write(f->fd, ptr + done, n - done);
    if (put < 0) {
      if (errno == EINTR) continue;
      f->write_errno = errno;
      return 0;  // makes curl fail with CURLE_WRITE_ERROR
    }
    done += static_cast<size_t>(put);
  }
  f->md5.update(ptr, n);
  f->bytes += n;
  return n;
}

int on_progress(void* user, curl_off_t total, curl_off_t now, curl_off_t, curl_off_t) {
  auto* f = static_cast<Fetch*>(user);
  const auto t = std::chrono::steady_clock::now();
  if (t - f->last_progress < std::chrono::milliseconds(500)) return 0;
  f->last_progress = t;
  if (total > 0) {
    std::fprintf(stderr, "\rcifar: downloading %.1f / %.1f MB (%d%%)", now / 1e6, total / 1e6,
                 static_cast<int>(100 * now / total));
  } else {
    std::fprintf(stderr, "\rcifar: downloading %.1f MB", now / 1e6);
  }
  return 0;
}

void curl_init_once() {
  static std::once_flag once;
  std::call_once(once, [] { curl_global_init(CURL_GLOBAL_DEFAULT); });
}

// Downloads url into fd; returns the MD5 of what was written.
std::string fetch(const std::string& url, int fd, const std::string& tmp_path, uint64_t& bytes) {
  curl_init_once();
  std::unique_ptr<CURL, decltype(&curl_easy_cleanup)> curl(curl_easy_init(), &curl_easy_cleanup);
  if (!curl) throw DataError("cannot download " + url + ": curl_easy_init failed");
  Fetch f;
  f.fd = fd;
  f.tty = ::isatty(STDERR_FILENO) == 1;
  char err[CURL_ERROR_SIZE] = {0};
  CURL* c = curl.get();
  curl_easy_setopt(c, CURLOPT_URL, url.c_str());
  curl_easy_setopt(c, CURLOPT_ERRORBUFFER, err);
  curl_easy_setopt(c, CURLOPT_FOLLOWLOCATION, 1L);
  curl_easy_setopt(c, CURLOPT_MAXREDIRS, 10L);
#if LIBCURL_VERSION_NUM >= 0x075500  // 7.85: the string forms
  curl_easy_setopt(c, CURLOPT_PROTOCOLS_STR, "http,https");
  curl_easy_setopt(c, CURLOPT_REDIR_PROTOCOLS_STR, "http,https");
#else
  curl_easy_setopt(c, CURLOPT_PROTOCOLS, static_cast<long>(CURLPROTO_HTTP | CURLPROTO_HTTPS));
  curl_easy_setopt(c, CURLOPT_REDIR_PROTOCOLS, static_cast<long>(CURLPROTO_HTTP | CURLPROTO_HTTPS));
#endif
  curl_easy_setopt(c, CURLOPT_FAILONERROR, 1L);
  curl_easy_setopt(c, CURLOPT_CONNECTTIMEOUT, 30L);
  curl_easy_setopt(c, CURLOPT_LOW_SPEED_LIMIT, 1024L);  // abort when under 1 KB/s ...
  curl_easy_setopt(c, CURLOPT_LOW_SPEED_TIME, 60L);     // ... for a minute
  curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
  curl_easy_setopt(c, CURLOPT_USERAGENT, "ddp-cifar100 (libcurl)");
  curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, &on_data);
  curl_easy_setopt(c, CURLOPT_WRITEDATA, &f);
  if (f.tty) {
    curl_easy_setopt(c, CURLOPT_NOPROGRESS, 0L);
    curl_easy_setopt(c, CURLOPT_XFERINFOFUNCTION, &on_progress);
    curl_easy_setopt(c, CURLOPT_XFERINFODATA, &f);
  }
  const CURLcode rc = curl_easy_perform(c);
  if (f.tty) std::fprintf(stderr, "\n");
  if (rc != CURLE_OK) {
    long status = 0;
    curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &status);
    std::ostringstream m;
    if (rc == CURLE_HTTP_RETURNED_ERROR) {
      m << "cannot download " << url << ": the server answered HTTP " << status
        << (status == 404 ? " (not found)" : "")
        << ". Fix: check the URL (the official one is " << DownloadSource{}.url
        << "), or fetch the archive by hand and unpack it into the data directory";
    } else if (rc == CURLE_WRITE_ERROR && f.write_errno != 0) {
      m << "cannot download " << url << ": writing " << tmp_path << " failed after " << f.bytes
        << " bytes: " << errno_text(f.write_errno) << ". Fix: free disk space (the archive is "
        << "about 170 MB) or choose another --data-dir";
    } else {
      m << "cannot download " << url << ": " << (err[0] ? err : curl_easy_strerror(rc))
        << " (curl error " << static_cast<int>(rc) << ": " << curl_easy_strerror(rc) << ", after "
        << f.bytes << " bytes). Fix: check the network connection and proxy settings "
        << "(https_proxy), or fetch the archive by hand and unpack it into the data directory";
    }
    throw DataError(m.str());
  }
  bytes = f.bytes;
  return f.md5.hex();
}

// The path relative to the extraction root, or "" when the entry must be refused.
bool safe_relative(const std::string& name, fs::path& rel) {
  if (name.empty() || name[0] == '/') return false;
  fs::path out;
  for (const auto& part : fs::path(name)) {
    const std::string s = part.string();
    if (s == "..") return false;
    if (s.empty() || s == ".") continue;
    out /= part;
  }
  if (out.empty()) return false;
  rel = out;
  return true;
}

std::string archive_problem(struct archive* a) {
  const char* e = archive_error_string(a);
  return e ? e : "unknown libarchive error";
}

}  // namespace

std::string md5_hex_of_file(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) throw DataError("cannot open " + path + " to compute its MD5: " + errno_text(errno));
  Md5 md5;
  std::vector<char> buf(1 << 20);
  for (;;) {
    const ssize_t got = ::read(fd, buf.data(), buf.size());
    if (got < 0) {
      if (errno == EINTR) continue;
      const int err = errno;
      ::close(fd);
      throw DataError("error reading " + path + " to compute its MD5: " + errno_text(err));
    }
    if (got == 0) break;
    md5.update(buf.data(), static_cast<size_t>(got));
  }
  ::close(fd);
  return md5.hex();
}

void extract_archive(const std::string& archive, const std::string& dest_dir,
                     const std::string& origin) {
  std::unique_ptr<struct archive, decltype(&archive_read_free)> owner(archive_read_new(),
                                                                     &archive_read_free);
  struct archive* a = owner.get();
  archive_read_support_filter_all(a);
  archive_read_support_format_tar(a);
  const auto corrupt = [&](const std::string& where) {
    throw DataError("the archive from " + origin + " is corrupt or not a tar archive (" + where +
                    "): " + archive_problem(a) +
                    ". Nothing was unpacked. Fix: download it again; if this persists, the URL "
                    "does not serve the CIFAR-100 binary archive");
  };
  if (archive_read_open_filename(a, archive.c_str(), 1 << 16) != ARCHIVE_OK) corrupt("opening it");
  const fs::path root(dest_dir);
  std::vector<char> buf(1 << 16);
  int64_t entries = 0;
  for (;;) {
    struct archive_entry* e = nullptr;
    const int r = archive_read_next_header(a, &e);
    if (r == ARCHIVE_EOF) break;
    if (r < ARCHIVE_WARN) corrupt("entry " + std::to_string(entries));
    ++entries;
    const char* raw_name = archive_entry_pathname(e);
    const std::string name = raw_name ? raw_name : "";
    fs::path rel;
    if (!safe_relative(name, rel)) {
      throw DataError("refusing the archive from " + origin + ": entry '" + name +
                      "' has an absolute path, '..' or no name (path traversal); only relative "
                      "paths inside the data directory are allowed. Nothing was unpacked. Fix: "
                      "use the official archive");
    }
    const auto type = archive_entry_filetype(e);
    if (archive_entry_hardlink(e) != nullptr || (type != AE_IFREG && type != AE_IFDIR)) {
      throw DataError("refusing the archive from " + origin + ": entry '" + name +
                      "' is a link or special file; only regular files and directories are "
                      "allowed. Nothing was unpacked. Fix: use the official archive");
    }
    const fs::path target = root / rel;
    std::error_code ec;
    if (type == AE_IFDIR) {
      fs::create_directories(target, ec);
      if (ec) throw DataError("cannot create " + target.string() + ": " + ec.message());
      continue;
    }
    fs::create_directories(target.parent_path(), ec);
    if (ec) throw DataError("cannot create " + target.parent_path().string() + ": " + ec.message());
    const int fd = ::open(target.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0644);
    if (fd < 0) throw DataError("cannot create " + target.string() + ": " + errno_text(errno));
    for (;;) {
      const la_ssize_t got = archive_read_data(a, buf.data(), buf.size());
      if (got == 0) break;
      if (got < 0) {
        ::close(fd);
        corrupt("reading entry '" + name + "'");
      }
      size_t done = 0;
      while (done < static_cast<size_t>(got)) {
        const ssize_t put = ::write(fd, buf.data() + done, static_cast<size_t>(got) - done);
        if (put < 0) {
          if (errno == EINTR) continue;
          const int err = errno;
          ::close(fd);
          throw DataError("cannot write " + target.string() + " while unpacking " + origin + ": " +
                          errno_text(err) + ". Fix: free disk space");
        }
        done += static_cast<size_t>(put);
      }
    }
    if (::close(fd) != 0) {
      throw DataError("cannot write " + target.string() + ": " + errno_text(errno));
    }
  }
  if (entries == 0) {
    throw DataError("the archive from " + origin + " is empty. Fix: check the URL");
  }
}

void download_cifar100(const std::string& data_dir, const DownloadSource& src) {
  if (cifar100_present(data_dir)) {
    std::cerr << "cifar: CIFAR-100 already present in " << data_dir << ", not downloading\n";
    return;
  }
  std::error_code ec;
  fs::create_directories(data_dir, ec);
  if (ec) {
    throw DataError("cannot create the data directory " + data_dir + " for the download: " +
                    ec.message() + ". Fix: choose a writable --data-dir");
  }
  std::string tmpl = (fs::path(data_dir) / ".cifar-100-binary.tar.gz.part-XXXXXX").string();
  const int fd = ::mkstemp(tmpl.data());
  if (fd < 0) {
    throw DataError("cannot create a temporary file in " + data_dir + " for the download: " +
                    errno_text(errno) + ". Fix: choose a writable --data-dir");
  }
  Cleanup archive_guard{tmpl};
  std::cerr << "cifar: downloading " << src.url << " into " << data_dir << "\n";
  uint64_t bytes = 0;
  std::string got;
  try {
    got = fetch(src.url, fd, tmpl, bytes);
  } catch (...) {
    ::close(fd);
    throw;
  }
  if (::close(fd) != 0) {
    throw DataError("cannot write " + tmpl + ": " + errno_text(errno) + ". Fix: free disk space");
  }
  if (lower(got) != lower(src.md5)) {
    throw DataError("MD5 mismatch for " + src.url + ": expected " + lower(src.md5) + ", got " +
                    got + " (" + std::to_string(bytes) +
                    " bytes); the downloaded file was removed. The download was corrupted or the "
                    "URL serves a different file. Fix: try again; if it persists, check the URL "
                    "and the expected MD5");
  }

  std::string stmpl = (fs::path(data_dir) / ".cifar-100-extract-XXXXXX").string();
  if (::mkdtemp(stmpl.data()) == nullptr) {
    throw DataError("cannot create a staging directory in " + data_dir + ": " + errno_text(errno));
  }
  Cleanup staging_guard{stmpl};
  extract_archive(tmpl, stmpl, src.url);
  if (!cifar100_present(stmpl)) {
    throw DataError("the archive from " + src.url + " does not contain " + kArchiveDir + "/" +
                    kTrainFile + " and " + kTestFile +
                    " (is it the CIFAR-100 *binary* version?). Nothing was unpacked. Fix: use the "
                    "official cifar-100-binary.tar.gz");
  }
  for (const auto& entry : fs::directory_iterator(stmpl)) {
    const fs::path target = fs::path(data_dir) / entry.path().filename();
    fs::remove_all(target, ec);
    fs::rename(entry.path(), target, ec);
    if (ec) {
      throw DataError("cannot move " + entry.path().string() + " to " + target.string() + ": " +
                      ec.message());
    }
  }
  std::cerr << "cifar: unpacked " << src.url << " (" << bytes << " bytes, MD5 ok) into " << data_dir
            << "\n";
}

#endif  // DDP_CIFAR_HAVE_DOWNLOAD

}  // namespace ddp::cifar
