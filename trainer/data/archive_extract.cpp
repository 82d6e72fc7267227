// Unpacking the CIFAR archive with libarchive: regular files and directories only, no absolute
// paths, no '..', no links.
#include <archive.h>
#include <archive_entry.h>
#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <filesystem>
#include <memory>
#include <vector>

#include "data/download.hpp"
#include "data/errno_text.hpp"

namespace fs = std::filesystem;

namespace ddp::cifar {
namespace {

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

}  // namespace ddp::cifar
