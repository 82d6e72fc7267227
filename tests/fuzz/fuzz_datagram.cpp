// The failure watch's datagrams as anyone on a node may send them (watch/wire/datagram.hpp): the
// input is tried as a whole datagram on the head's wire and on a member's, and its body alone as
// JSON. Nothing is opened that the step's key did not seal; a body that decodes encodes again to
// one that decodes the same; none grows past a datagram.
#include <string_view>

#include "datagram.hpp"
#include "fuzz_util.hpp"

namespace w = ddp::watch;

namespace {
const char* const kKey = "0123456789abcdef0123456789abcdef";
}

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string bytes = fuzz::text(data, size);
  static w::Wire head(kKey, 0, 4), member(kKey, 2, 4);
  // Random bytes never pass the seal (2^-128): if one does, the check of the tag is broken.
  FUZZ_CHECK(!head.open(bytes, 23456));
  FUZZ_CHECK(!member.open(bytes, 23456));
  if (const auto d = w::decode_body(bytes)) {
    const std::string again = w::encode_body(*d);
    FUZZ_CHECK(again.size() + w::kSealHeader + w::kSealTag <= w::kMaxDatagram);
    const auto back = w::decode_body(again);
    FUZZ_CHECK(back && back->type == d->type && back->id == d->id && back->node == d->node);
    // What a member seals, the head opens, whatever the body held.
    w::Wire sender(kKey, 1, 4), receiver(kKey, 0, 4);
    const auto opened = receiver.open(sender.seal(*d, 0, 23456), 23456);
    FUZZ_CHECK(opened && opened->type == d->type);
  }
  return 0;
}
