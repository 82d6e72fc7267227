// One HTTP(S) download with libcurl into an open file, hashed as it arrives.
#pragma once

#include <cstdint>
#include <functional>
#include <string>

namespace ddp::cifar {

// Bytes done, bytes in all (0 while unknown), seconds since the start; called about once a second
// and whenever data arrives.
using FetchProgress = std::function<void(std::uint64_t done, std::uint64_t total, double seconds)>;

// Downloads url into fd (redirects followed, HTTP errors fail, connect and stall timeouts);
// returns the MD5 of what was written and sets `bytes`. `tmp_path` names fd in messages. Throws
// DataError naming the URL, the cause and the fix.
std::string fetch(const std::string& url, int fd, const std::string& tmp_path, std::uint64_t& bytes,
                  const FetchProgress& progress = {});

}  // namespace ddp::cifar
