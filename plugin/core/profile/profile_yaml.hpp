// Strict reading of one profile file: the file itself (kind, size, NUL bytes), its YAML syntax,
// and typed access to its nodes that fails with file:line:column, the key, what was found, and
// the fix. The schema (which keys, which values) lives in 2_check_keys.cpp.
#pragma once

#include <yaml-cpp/yaml.h>

#include <initializer_list>
#include <optional>
#include <string>
#include <vector>

namespace ddp::plan::profile_yaml {

// A regular file of at most kMaxProfileBytes, opened without blocking (a FIFO planted where a
// profile should be must not hang the reader). Throws PlanError naming the file and the fix.
std::string read_profile_text(const std::string& path);

// The one YAML document of a profile's text; `path` names it in messages. Throws PlanError.
YAML::Node read_document(const std::string& path, const std::string& text);

// A node and the keys that led to it ("nodes[1].network.socket_interfaces").
class Field {
 public:
  static Field root(const std::string& path, const YAML::Node& node);

  const std::string& key() const { return key_; }    // the whole path of keys
  const std::string& name() const { return name_; }  // the last key, as written
  const YAML::Node& node() const { return node_; }
  std::string where() const;      // "file:line:column" of the value
  std::string key_where() const;  // the same for the key that names it

  [[noreturn]] void fail(const std::string& problem, const std::string& fix) const;
  [[noreturn]] void fail_key(const std::string& problem, const std::string& fix) const;

  // Typed access: each fails naming the key, what was found, and what is allowed.
  std::string text() const;  // a scalar on one line, without NUL
  unsigned long integer(unsigned long min, unsigned long max) const;
  double number(double min, double max) const;  // plain decimal: 12, 2.5
  bool boolean() const;              // true or false
  std::vector<Field> items() const;  // a list
  // A map's entries in file order; keys are scalars, each once, and one of `allowed` unless
  // `allowed` is empty.
  std::vector<Field> entries(std::initializer_list<const char*> allowed) const;
  bool is_map() const { return node_.IsMap(); }

 private:
  Field(std::string path, std::string key, std::string name, YAML::Node node, YAML::Mark mark,
        YAML::Mark key_mark);
  std::string at(const YAML::Mark& mark) const;
  std::string found() const;  // "a list", "nothing", ...

  std::string path_;
  std::string key_;
  std::string name_;
  YAML::Node node_;
  YAML::Mark mark_;
  YAML::Mark key_mark_;
};

std::optional<Field> find(const std::vector<Field>& entries, const char* name);

}  // namespace ddp::plan::profile_yaml
