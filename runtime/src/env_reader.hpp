// Reads one launcher's variables. Every problem becomes a ddp::Error that starts with whose
// contract was being read, so "RANK is not set" comes with the way to launch that sets it.
#pragma once

#include <initializer_list>
#include <optional>
#include <string>

#include "ddp/context.hpp"

namespace ddp::detail {

// A switch's value: 1, true, yes, on / 0, false, no, off; nullopt for anything else.
std::optional<bool> yes_no(const std::string& value);

// A number with the variable it came from, so a consistency check can name both sides. `note`
// says how a value was derived when the variable itself was not set.
struct Named {
  std::string name;
  unsigned value = 0;
  std::string note;

  std::string shown() const;  // "RANK=3", or "LOCAL_WORLD_SIZE=4 (unset; taken as WORLD_SIZE)"
};

class EnvReader {
 public:
  // `contract` starts every message ("torchrun contract"); `missing_fix` ends the message about a
  // variable that is not set, `mismatch_fix` the one about values that disagree.
  EnvReader(const EnvLookup& env, std::string contract, std::string missing_fix,
            std::string mismatch_fix);

  std::optional<std::string> get(const std::string& name) const;
  std::string require(const std::string& name) const;

  // The first of `names` that is set, by name; nullopt when none is.
  std::optional<std::string> first_set(std::initializer_list<const char*> names) const;
  // The same, but an error naming them all when none is.
  std::string require_first(std::initializer_list<const char*> names) const;

  // A whole number in [min, max] from `name`'s value.
  Named number(const std::string& name, unsigned min, unsigned max) const;
  // The same for a text that did not come from `name` itself (part of a list, say).
  unsigned parse(const std::string& name, const std::string& text, unsigned min,
                 unsigned max) const;

  // Throws `value.name` must be below `limit` unless it is.
  void check_below(const Named& value, const Named& limit, const char* what) const;
  // Throws unless `value` <= `limit`.
  void check_at_most(const Named& value, const Named& limit, const char* why) const;

  [[noreturn]] void fail(const std::string& message) const;
  [[noreturn]] void fail_mismatch(const std::string& message) const;

 private:
  const EnvLookup& env_;
  std::string contract_;
  std::string missing_fix_;
  std::string mismatch_fix_;
};

}  // namespace ddp::detail
