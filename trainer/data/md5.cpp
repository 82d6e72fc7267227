#include "data/md5.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <vector>

#include "data/download.hpp"
#include "data/errno_text.hpp"

namespace ddp::cifar {

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

}  // namespace ddp::cifar
