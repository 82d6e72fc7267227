// One HTTP(S) download with libcurl into an open file, hashed as it arrives.
#pragma once

#include <cstdint>
#include <string>

namespace ddp::cifar {

// Downloads url into fd (redirects followed, HTTP errors fail, connect and stall timeouts,
// progress on a terminal); returns the MD5 of what was written and sets `bytes`. `tmp_path` names
// fd in messages. Throws DataError naming the URL, the cause and the fix.
std::string fetch(const std::string& url, int fd, const std::string& tmp_path, std::uint64_t& bytes);

}  // namespace ddp::cifar
