#include "data/cifar_format.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <sstream>

#include <ATen/ops/empty.h>

#include "data/errno_text.hpp"

namespace fs = std::filesystem;

namespace ddp::cifar {
namespace {

// Closes a file descriptor on scope exit.
struct Fd {
  int fd = -1;
  ~Fd() {
    if (fd >= 0) ::close(fd);
  }
};

std::string layout_help() {
  return "Each record must be 3074 bytes: 1 byte coarse label (0-19), 1 byte fine label (0-99) and "
         "3072 bytes of pixels";
}

}  // namespace

Dataset read_cifar100_file(const std::string& path) {
  Fd f;
  f.fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (f.fd < 0) {
    const int err = errno;
    if (err == ENOENT) {
      throw DataError("CIFAR-100 file " + path +
                      " does not exist. Fix: pass --download to fetch the official archive, or "
                      "generate synthetic data with `" + std::string(kSynthCommand) + " DIR`");
    }
    throw DataError("cannot open CIFAR-100 file " + path + ": " + errno_text(err) +
                    ". Fix: check the path and its permissions");
  }
  struct stat st {};
  if (::fstat(f.fd, &st) != 0) {
    throw DataError("cannot stat CIFAR-100 file " + path + ": " + errno_text(errno));
  }
  if (!S_ISREG(st.st_mode)) {
    throw DataError("CIFAR-100 file " + path +
                    " is not a regular file. Fix: point --data-dir at the directory holding "
                    "train.bin and test.bin");
  }
  const int64_t bytes = static_cast<int64_t>(st.st_size);
  if (bytes == 0) {
    throw DataError("CIFAR-100 file " + path +
                    " is empty (0 bytes); the download or copy probably failed. Fix: delete it and "
                    "pass --download again, or regenerate it with `" + std::string(kSynthCommand) +
                    " DIR`");
  }
  if (bytes % kRecordBytes != 0) {
    const int64_t whole = bytes / kRecordBytes;
    const int64_t extra = bytes % kRecordBytes;
    std::ostringstream m;
    m << "CIFAR-100 file " << path << " has " << bytes << " bytes, which is not a multiple of the "
      << kRecordBytes << "-byte record: " << whole << " whole records and " << extra
      << " extra bytes (" << (kRecordBytes - extra)
      << " bytes short of the next record). The file may be truncated or is not a CIFAR-100 "
         "binary file (CIFAR-10 records are 3073 bytes). "
      << layout_help() << ". Fix: delete it and pass --download again, or regenerate it";
    throw DataError(m.str());
  }
  const int64_t n = bytes / kRecordBytes;

  // One read straight into the tensor's memory; then the pixels are one strided copy.
  at::Tensor raw = at::empty({n, kRecordBytes}, at::kByte);
  auto* dst = static_cast<char*>(raw.data_ptr());
  int64_t done = 0;
  while (done < bytes) {
    const ssize_t got = ::read(f.fd, dst + done, static_cast<size_t>(bytes - done));
    if (got < 0) {
      if (errno == EINTR) continue;
      throw DataError("error reading CIFAR-100 file " + path + ": " + errno_text(errno));
    }
    if (got == 0) {
      std::ostringstream m;
      m << "CIFAR-100 file " << path << " ended after " << done << " of " << bytes
        << " bytes (it shrank while being read). Fix: make sure nothing is writing it";
      throw DataError(m.str());
    }
    done += got;
  }

  at::Tensor coarse = raw.select(1, 0);
  at::Tensor fine = raw.select(1, 1);
  const auto check = [&](const at::Tensor& labels, int64_t limit, const char* what) {
    at::Tensor bad = labels.ge(limit);
    if (bad.any().item<bool>()) {
      const int64_t index = bad.nonzero().select(1, 0)[0].item<int64_t>();
      const int64_t value = labels[index].item<int64_t>();
      const int64_t count = bad.sum().item<int64_t>();
      std::ostringstream m;
      m << "CIFAR-100 file " << path << ": record " << index << " (byte offset "
        << index * kRecordBytes << ") has " << what << " label " << value << ", outside 0-"
        << (limit - 1) << " (" << count << " of " << n
        << " records are out of range). The file is corrupt or not a CIFAR-100 binary file "
           "(CIFAR-10 has no coarse label byte). " << layout_help()
        << ". Fix: delete it and pass --download again, or regenerate it";
      throw DataError(m.str());
    }
  };
  check(coarse, kCoarseClasses, "coarse");
  check(fine, kFineClasses, "fine");

  Dataset d;
  d.labels = fine.to(at::kLong);
  d.images = raw.narrow(1, 2, kPixelBytes).contiguous().view({n, kChannels, kImageSide, kImageSide});
  return d;
}

void write_cifar100_file(const std::string& path, const Dataset& data) {
  if (!data.images.defined() || !data.labels.defined()) {
    throw DataError("cannot write CIFAR-100 file " + path + ": the dataset has no images or labels");
  }
  const at::Tensor& im = data.images;
  if (im.scalar_type() != at::kByte || im.dim() != 4 || im.size(1) != kChannels ||
      im.size(2) != kImageSide || im.size(3) != kImageSide) {
    std::ostringstream m;
    m << "cannot write CIFAR-100 file " << path << ": images must be uint8 [N,3,32,32], got "
      << im.scalar_type() << " " << im.sizes();
    throw DataError(m.str());
  }
  const int64_t n = im.size(0);
  if (data.labels.dim() != 1 || data.labels.size(0) != n) {
    std::ostringstream m;
    m << "cannot write CIFAR-100 file " << path << ": labels must be [" << n << "] (one per image), got "
      << data.labels.sizes();
    throw DataError(m.str());
  }
  at::Tensor fine = data.labels.to(at::kCPU).to(at::kLong);
  if (n > 0) {
    const int64_t lo = fine.min().item<int64_t>();
    const int64_t hi = fine.max().item<int64_t>();
    if (lo < 0 || hi >= kFineClasses) {
      std::ostringstream m;
      m << "cannot write CIFAR-100 file " << path << ": labels must be in 0-" << (kFineClasses - 1)
        << ", got values from " << lo << " to " << hi;
      throw DataError(m.str());
    }
  }
  at::Tensor raw = at::empty({n, kRecordBytes}, at::kByte);
  raw.select(1, 0).copy_(fine.div(5, "floor"));  // coarse_of_fine
  raw.select(1, 1).copy_(fine);
  raw.narrow(1, 2, kPixelBytes).copy_(im.to(at::kCPU).reshape({n, kPixelBytes}));

  const fs::path target(path);
  const fs::path dir = target.has_parent_path() ? target.parent_path() : fs::path(".");
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) {
    throw DataError("cannot create directory " + dir.string() + " for CIFAR-100 file " + path +
                    ": " + ec.message());
  }
  std::string tmpl = (dir / ("." + target.filename().string() + ".tmp-XXXXXX")).string();
  Fd f;
  f.fd = ::mkstemp(tmpl.data());
  if (f.fd < 0) {
    throw DataError("cannot create a temporary file in " + dir.string() + " to write " + path +
                    ": " + errno_text(errno) + ". Fix: check that the directory is writable");
  }
  const std::string tmp = tmpl;
  const auto fail = [&](const std::string& what) {
    ::unlink(tmp.c_str());
    throw DataError("cannot write CIFAR-100 file " + path + " (via " + tmp + "): " + what +
                    ". Fix: check free space and permissions");
  };
  const auto* src = static_cast<const char*>(raw.data_ptr());
  const int64_t bytes = n * kRecordBytes;
  int64_t done = 0;
  while (done < bytes) {
    const ssize_t put = ::write(f.fd, src + done, static_cast<size_t>(bytes - done));
    if (put < 0) {
      if (errno == EINTR) continue;
      fail(errno_text(errno));
    }
    done += put;
  }
  if (::fchmod(f.fd, 0644) != 0 || ::fsync(f.fd) != 0) fail(errno_text(errno));
  const int fd = f.fd;
  f.fd = -1;
  if (::close(fd) != 0) fail(errno_text(errno));
  if (::rename(tmp.c_str(), path.c_str()) != 0) fail("rename failed: " + errno_text(errno));
}

std::string find_cifar100_file(const std::string& data_dir, bool train) {
  const char* name = train ? kTrainFile : kTestFile;
  const fs::path candidates[] = {fs::path(data_dir) / kArchiveDir / name, fs::path(data_dir) / name};
  for (const auto& c : candidates) {
    std::error_code ec;
    if (fs::exists(c, ec)) return c.string();
  }
  return "";
}

Dataset load_cifar100(const std::string& data_dir, bool train) {
  const std::string path = find_cifar100_file(data_dir, train);
  if (path.empty()) {
    const char* name = train ? kTrainFile : kTestFile;
    const fs::path official = fs::path(data_dir) / kArchiveDir / name;
    const fs::path flat = fs::path(data_dir) / name;
    throw DataError(std::string("CIFAR-100 ") + (train ? "training" : "test") +
                    " set not found: neither " + official.string() + " nor " + flat.string() +
                    " exists. Fix: pass --download to fetch the official archive into " + data_dir +
                    ", or generate synthetic data with `" + kSynthCommand + " " + data_dir + "`");
  }
  return read_cifar100_file(path);
}

}  // namespace ddp::cifar
