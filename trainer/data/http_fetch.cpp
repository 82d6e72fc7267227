#include "data/http_fetch.hpp"

#include <curl/curl.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <algorithm>
#include <memory>
#include <mutex>
#include <sstream>

#include "data/data_error.hpp"
#include "data/download.hpp"
#include "data/errno_text.hpp"
#include "data/md5.hpp"

namespace ddp::cifar {
namespace {

struct Fetch {
  int fd = -1;
  Md5 md5;
  uint64_t bytes = 0;
  int write_errno = 0;
  const FetchProgress* progress = nullptr;
  std::chrono::steady_clock::time_point start = std::chrono::steady_clock::now();
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
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - f->start).count();
  (*f->progress)(static_cast<uint64_t>(now), static_cast<uint64_t>(std::max<curl_off_t>(total, 0)),
                 seconds);
  return 0;
}

void curl_init_once() {
  static std::once_flag once;
  std::call_once(once, [] { curl_global_init(CURL_GLOBAL_DEFAULT); });
}

}  // namespace

std::string fetch(const std::string& url, int fd, const std::string& tmp_path, uint64_t& bytes,
                  const FetchProgress& progress) {
  curl_init_once();
  std::unique_ptr<CURL, decltype(&curl_easy_cleanup)> curl(curl_easy_init(), &curl_easy_cleanup);
  if (!curl) throw DataError("cannot download " + url + ": curl_easy_init failed");
  Fetch f;
  f.fd = fd;
  f.progress = &progress;
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
  if (progress) {
    curl_easy_setopt(c, CURLOPT_NOPROGRESS, 0L);
    curl_easy_setopt(c, CURLOPT_XFERINFOFUNCTION, &on_progress);
    curl_easy_setopt(c, CURLOPT_XFERINFODATA, &f);
  }
  const CURLcode rc = curl_easy_perform(c);
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

}  // namespace ddp::cifar
