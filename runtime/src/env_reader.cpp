#include "env_reader.hpp"

#include "ddp/error.hpp"
#include "error.hpp"
#include "parse.hpp"

namespace ddp::detail {

std::string Named::shown() const {
  std::string out = name + "=" + std::to_string(value);
  if (!note.empty()) out += " (" + note + ")";
  return out;
}

EnvReader::EnvReader(const EnvLookup& env, std::string contract, std::string missing_fix,
                     std::string mismatch_fix)
    : env_(env),
      contract_(std::move(contract)),
      missing_fix_(std::move(missing_fix)),
      mismatch_fix_(std::move(mismatch_fix)) {}

std::optional<std::string> EnvReader::get(const std::string& name) const { return env_(name); }

std::string EnvReader::require(const std::string& name) const {
  auto value = env_(name);
  if (!value) fail(name + " is not set; " + missing_fix_);
  return *value;
}

std::optional<std::string> EnvReader::first_set(std::initializer_list<const char*> names) const {
  for (const char* name : names)
    if (env_(name)) return std::string(name);
  return std::nullopt;
}

std::string EnvReader::require_first(std::initializer_list<const char*> names) const {
  if (auto name = first_set(names)) return *name;
  std::string list;
  for (const char* name : names) list += (list.empty() ? "" : " or ") + std::string(name);
  fail(list + " is not set; " + missing_fix_);
}

Named EnvReader::number(const std::string& name, unsigned min, unsigned max) const {
  return {name, parse(name, require(name), min, max), ""};
}

unsigned EnvReader::parse(const std::string& name, const std::string& text, unsigned min,
                          unsigned max) const {
  try {
    return static_cast<unsigned>(plan::parse_unsigned(name, text, min, max));
  } catch (const plan::PlanError& e) {
    fail(e.what());
  }
}

void EnvReader::check_below(const Named& value, const Named& limit, const char* what) const {
  if (value.value < limit.value) return;
  fail_mismatch(value.shown() + " is not below " + limit.shown() + ": " + what + " run 0.." +
                std::to_string(limit.value - 1) + ".");
}

void EnvReader::check_at_most(const Named& value, const Named& limit, const char* why) const {
  if (value.value <= limit.value) return;
  fail_mismatch(value.shown() + " is larger than " + limit.shown() + ": " + why + ".");
}

void EnvReader::fail(const std::string& message) const {
  throw Error(contract_ + ": " + message);
}

void EnvReader::fail_mismatch(const std::string& message) const {
  fail(message + " " + mismatch_fix_);
}

std::optional<bool> yes_no(const std::string& value) {
  for (const char* yes : {"1", "true", "yes", "on"})
    if (value == yes) return true;
  for (const char* no : {"0", "false", "no", "off"})
    if (value == no) return false;
  return std::nullopt;
}

}  // namespace ddp::detail
