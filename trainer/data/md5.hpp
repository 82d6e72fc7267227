// MD5 with OpenSSL, fed piece by piece: the download hashes the archive while it arrives.
#pragma once

#include <openssl/evp.h>

#include <cstddef>
#include <memory>
#include <string>

#include "data/data_error.hpp"

namespace ddp::cifar {

struct Md5 {
  std::unique_ptr<EVP_MD_CTX, decltype(&EVP_MD_CTX_free)> ctx{EVP_MD_CTX_new(), &EVP_MD_CTX_free};
  Md5() {
    if (!ctx || EVP_DigestInit_ex(ctx.get(), EVP_md5(), nullptr) != 1) {
      throw DataError("OpenSSL cannot compute MD5 (EVP_md5 unavailable; FIPS mode?)");
    }
  }
  void update(const void* p, std::size_t n) { EVP_DigestUpdate(ctx.get(), p, n); }
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

}  // namespace ddp::cifar
