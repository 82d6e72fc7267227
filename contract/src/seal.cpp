#include "seal.hpp"

#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <sys/random.h>

#include <cerrno>
#include <cstring>
#include <stdexcept>

namespace ddp::seal {
namespace {

int digit(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  return -1;
}

[[noreturn]] void crypto_failed(const char* what) {
  throw std::runtime_error(std::string("libcrypto: ") + what + " failed");
}

int size_of(std::string_view s) {
  if (s.size() > static_cast<std::size_t>(1) << 30) throw std::length_error("seal: text too large");
  return static_cast<int>(s.size());
}

const unsigned char* bytes_of(std::string_view s) { return reinterpret_cast<const unsigned char*>(s.data()); }

}  // namespace

Key derive(std::string_view secret, std::string_view label) {
  Key out{};
  unsigned int n = 0;
  if (HMAC(EVP_sha256(), secret.data(), size_of(secret), bytes_of(label), label.size(), out.data(), &n) ==
          nullptr ||
      n != out.size())
    crypto_failed("HMAC-SHA256");
  return out;
}

std::string to_hex(std::string_view bytes) {
  static const char digits[] = "0123456789abcdef";
  std::string out;
  out.reserve(2 * bytes.size());
  for (char ch : bytes) {
    const auto b = static_cast<unsigned char>(ch);
    out += digits[b >> 4];
    out += digits[b & 15];
  }
  return out;
}

std::optional<std::string> from_hex(std::string_view hex) {
  if (hex.size() % 2 != 0) return std::nullopt;
  std::string out(hex.size() / 2, '\0');
  for (std::size_t i = 0; i < out.size(); ++i) {
    const int hi = digit(hex[2 * i]), lo = digit(hex[2 * i + 1]);
    if (hi < 0 || lo < 0) return std::nullopt;
    out[i] = static_cast<char>(hi << 4 | lo);
  }
  return out;
}

Nonce random_nonce() {
  Nonce n{};
  std::size_t got = 0;
  while (got < n.size()) {
    const ssize_t r = ::getrandom(n.data() + got, n.size() - got, 0);
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) throw std::runtime_error(std::string("getrandom: ") + std::strerror(errno));
    got += static_cast<std::size_t>(r);
  }
  return n;
}

struct Aead::Context {
  EVP_CIPHER_CTX* ctx = EVP_CIPHER_CTX_new();
  ~Context() { EVP_CIPHER_CTX_free(ctx); }
};

Aead::Aead(const Key& key) : key_(key), ctx_(std::make_unique<Context>()) {
  if (ctx_->ctx == nullptr) crypto_failed("EVP_CIPHER_CTX_new");
}

Aead::~Aead() { OPENSSL_cleanse(key_.data(), key_.size()); }

std::string Aead::seal(const Nonce& nonce, std::string_view aad, std::string_view plain) {
  EVP_CIPHER_CTX* c = ctx_->ctx;
  std::string out(plain.size() + kTagBytes, '\0');
  auto* o = reinterpret_cast<unsigned char*>(out.data());
  int n = 0, tail = 0;
  if (EVP_EncryptInit_ex(c, EVP_chacha20_poly1305(), nullptr, key_.data(), nonce.data()) != 1 ||
      EVP_EncryptUpdate(c, nullptr, &n, bytes_of(aad), size_of(aad)) != 1 ||
      EVP_EncryptUpdate(c, o, &n, bytes_of(plain), size_of(plain)) != 1 ||
      EVP_EncryptFinal_ex(c, o + n, &tail) != 1 ||
      EVP_CIPHER_CTX_ctrl(c, EVP_CTRL_AEAD_GET_TAG, static_cast<int>(kTagBytes), o + plain.size()) != 1)
    crypto_failed("ChaCha20-Poly1305 sealing");
  return out;
}

std::optional<std::string> Aead::open(const Nonce& nonce, std::string_view aad, std::string_view sealed) {
  if (sealed.size() < kTagBytes) return std::nullopt;
  EVP_CIPHER_CTX* c = ctx_->ctx;
  const std::string_view body = sealed.substr(0, sealed.size() - kTagBytes);
  unsigned char tag[kTagBytes];
  std::memcpy(tag, sealed.data() + body.size(), kTagBytes);
  std::string out(body.size(), '\0');
  auto* o = reinterpret_cast<unsigned char*>(out.data());
  int n = 0, tail = 0;
  if (EVP_DecryptInit_ex(c, EVP_chacha20_poly1305(), nullptr, key_.data(), nonce.data()) != 1 ||
      EVP_DecryptUpdate(c, nullptr, &n, bytes_of(aad), size_of(aad)) != 1 ||
      EVP_DecryptUpdate(c, o, &n, bytes_of(body), size_of(body)) != 1 ||
      EVP_CIPHER_CTX_ctrl(c, EVP_CTRL_AEAD_SET_TAG, static_cast<int>(kTagBytes), tag) != 1)
    crypto_failed("ChaCha20-Poly1305 opening");
  // The tag is checked here, in constant time; a text that fails it is never handed out.
  if (EVP_DecryptFinal_ex(c, o + n, &tail) != 1) {
    OPENSSL_cleanse(out.data(), out.size());
    return std::nullopt;
  }
  return out;
}

}  // namespace ddp::seal
