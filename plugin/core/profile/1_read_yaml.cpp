#include "profile_yaml.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#include <yaml-cpp/depthguard.h>
#include <yaml-cpp/eventhandler.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <sstream>
#include <vector>

#include "error.hpp"
#include "parse.hpp"
#include "printable.hpp"
#include "profile.hpp"

namespace ddp::plan::profile_yaml {
namespace {

std::string position(const std::string& path, const YAML::Mark& mark) {
  if (mark.is_null() || mark.line < 0) return path;
  return path + ":" + std::to_string(mark.line + 1) + ":" + std::to_string(mark.column + 1);
}

[[noreturn]] void fail_file(const std::string& at, const std::string& problem,
                            const std::string& fix) {
  throw PlanError(at + ": " + problem + ". Fix: " + fix);
}

class Fd {
 public:
  explicit Fd(int fd) : fd_(fd) {}
  ~Fd() {
    if (fd_ >= 0) ::close(fd_);
  }
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  int get() const { return fd_; }

 private:
  int fd_;
};

// O_NONBLOCK: a FIFO planted where a profile should be must not hang slurmstepd in open().
std::string read_text(const std::string& path) {
  Fd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK));
  if (fd.get() < 0) {
    const int err = errno;
    fail_file(path, std::string("cannot be opened: ") + std::strerror(err),
              err == ENOENT ? "check the path, or install the profile there"
                            : "make the file readable to the user running the job");
  }
  struct stat st {};
  if (::fstat(fd.get(), &st) != 0 || !S_ISREG(st.st_mode))
    fail_file(path, "is not a regular file", "point at a NAME.yaml file");
  const std::string limit = std::to_string(kMaxProfileBytes) + " bytes (1 MiB)";
  const std::string too_big = "is larger than a profile may be, " + limit;
  const std::string shrink = "keep a profile under " + limit + "; it needs only a few kilobytes";
  if (static_cast<unsigned long long>(st.st_size) > kMaxProfileBytes)
    fail_file(path, too_big, shrink);
  std::string text;
  char buf[1 << 16];
  for (;;) {
    const ssize_t n = ::read(fd.get(), buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0)
      fail_file(path, std::string("cannot be read: ") + std::strerror(errno),
                "make the file readable to the user running the job");
    if (n == 0) break;
    text.append(buf, static_cast<std::size_t>(n));
    // The file may have grown since fstat.
    if (text.size() > kMaxProfileBytes) fail_file(path, too_big, shrink);
  }
  return text;
}

// What the parser saw of a document before it finished or failed: where its first node is, the
// flow collections ('[', '{') still open, and the first quoted value that is never closed.
// yaml-cpp 0.7 reports an unclosed '[' or '{' where it gave up (after the end of the file) and
// takes an unclosed quote silently to the end of the file; the cause is where they were opened.
// yaml-cpp 0.7's LoadAll never returns on a document that starts with ',' (its parser hands out
// the same empty document again and again, and LoadAll keeps them all until memory runs out), so
// read_document counts at most two documents with this and loads the first on its own.
//
// It also finds what would make the document cost root more than its size: an anchor or alias
// (an alias is one more reference to a node, but every reader of the document copies what it
// finds, so N aliases of a 32 KiB value are N copies), and more nodes than a profile has (each
// yaml-cpp node costs a few hundred bytes, against the 2 bytes of "a," in the file).
class DocumentEvents : public YAML::EventHandler {
 public:
  explicit DocumentEvents(const std::string& text) : text_(text) {}

  YAML::Mark mark = YAML::Mark::null_mark();
  std::vector<YAML::Mark> open_flows;  // innermost last
  std::optional<YAML::Mark> unclosed_quote;
  std::optional<YAML::Mark> anchor;  // the first '&NAME'
  std::optional<YAML::Mark> alias;   // the first '*NAME'
  std::optional<YAML::Mark> past_node_cap;  // the first node beyond kMaxProfileNodes

  void OnDocumentStart(const YAML::Mark&) override {}
  void OnDocumentEnd() override {}
  void OnNull(const YAML::Mark& m, YAML::anchor_t a) override { node(m, a); }
  void OnAlias(const YAML::Mark& m, YAML::anchor_t) override {
    node(m, YAML::NullAnchor);
    if (!alias) alias = m;
  }
  void OnScalar(const YAML::Mark& m, const std::string& tag, YAML::anchor_t a,
                const std::string&) override {
    node(m, a);
    // yaml-cpp tags quoted scalars "!" and marks them at their opening quote.
    if (tag == "!" && !unclosed_quote && !quote_closes(m)) unclosed_quote = m;
  }
  void OnSequenceStart(const YAML::Mark& m, const std::string&, YAML::anchor_t a,
                       YAML::EmitterStyle::value style) override {
    node(m, a);
    open(m, style);
  }
  void OnSequenceEnd() override { close(); }
  void OnMapStart(const YAML::Mark& m, const std::string&, YAML::anchor_t a,
                  YAML::EmitterStyle::value style) override {
    node(m, a);
    open(m, style);
  }
  void OnMapEnd() override { close(); }

  // The opening character at a mark ("[", "{", "\"", "'").
  std::string at(const YAML::Mark& m) const {
    return m.pos >= 0 && static_cast<std::size_t>(m.pos) < text_.size()
               ? text_.substr(static_cast<std::size_t>(m.pos), 1)
               : "";
  }

 private:
  void first(const YAML::Mark& m) {
    if (mark.is_null()) mark = m;
  }
  void node(const YAML::Mark& m, YAML::anchor_t a) {
    first(m);
    if (a != YAML::NullAnchor && !anchor) anchor = m;
    if (++nodes_ > kMaxProfileNodes && !past_node_cap) past_node_cap = m;
  }
  // Block collections close by indentation; only flow ones are pushed, but every end pops, so
  // the stack holds an entry (flow or not) per open collection.
  void open(const YAML::Mark& m, YAML::EmitterStyle::value style) {
    first(m);
    const std::string c = at(m);
    stack_.push_back(style == YAML::EmitterStyle::Flow && (c == "[" || c == "{"));
    if (stack_.back()) open_flows.push_back(m);
  }
  void close() {
    if (stack_.empty()) return;
    if (stack_.back()) open_flows.pop_back();
    stack_.pop_back();
  }
  // YAML's escapes: '' in single quotes, a backslash before any character in double quotes.
  bool quote_closes(const YAML::Mark& m) const {
    const std::string q = at(m);
    if (q != "\"" && q != "'") return true;  // a tagged value: not a quote at the mark
    for (std::size_t i = static_cast<std::size_t>(m.pos) + 1; i < text_.size(); ++i) {
      if (q == "\"" && text_[i] == '\\') {
        ++i;
      } else if (text_[i] == q[0]) {
        if (q == "'" && i + 1 < text_.size() && text_[i + 1] == '\'') {
          ++i;
          continue;
        }
        return true;
      }
    }
    return false;
  }

  const std::string& text_;
  std::vector<bool> stack_;
  std::size_t nodes_ = 0;
};

YAML::Mark mark_of_offset(const std::string& text, std::size_t offset) {
  const std::size_t line_start = text.rfind('\n', offset);
  const auto line = std::count(text.begin(), text.begin() + static_cast<long>(offset), '\n');
  const std::size_t column = line_start == std::string::npos ? offset : offset - line_start - 1;
  YAML::Mark m;
  m.line = static_cast<int>(line);
  m.column = static_cast<int>(column);
  return m;
}

[[noreturn]] void fail_unclosed(const std::string& path, const DocumentEvents& events,
                                const YAML::Mark& opened) {
  const std::string c = events.at(opened);
  if (c == "[" || c == "{") {
    const std::string closer = c == "[" ? "]" : "}";
    const std::string what = c == "[" ? "list" : "map";
    fail_file(position(path, opened),
              "is not valid YAML: the '" + c + "' that opens this " + what +
                  " is never closed (the file ends before its '" + closer + "')",
              "close it with '" + closer + "' where the " + what +
                  " ends, or quote the value if '" + c + "' is part of it");
  }
  const std::string quote = c == "'" ? "single quote (')" : "double quote (\")";
  fail_file(position(path, opened),
            "is not valid YAML: the " + quote +
                " that opens this value is never closed (the file ends before its closing " + c +
                ")",
            "end the value with " + c +
                "; inside it write a quote as '' in single quotes or \\\" in double quotes");
}

[[noreturn]] void fail_reference(const std::string& at, const char* what) {
  fail_file(at,
            std::string("uses a YAML ") + what +
                "; profiles take neither, since each alias is one more copy of its value in the "
                "memory of every slurmstepd that reads the profile",
            "write the value out where it is used; settings shared by several profiles belong "
            "in a parent profile that each one names with `extends:`");
}

// What the event pass found that the document must not be loaded with (DocumentEvents).
void refuse_costly(const std::string& path, const DocumentEvents& events) {
  if (events.anchor || events.alias) {
    const bool anchor_first =
        events.anchor && (!events.alias || events.anchor->pos <= events.alias->pos);
    fail_reference(position(path, anchor_first ? *events.anchor : *events.alias),
                   anchor_first ? "anchor ('&NAME')" : "alias ('*NAME')");
  }
  if (events.past_node_cap)
    fail_file(position(path, *events.past_node_cap),
              "holds more than " + std::to_string(kMaxProfileNodes) +
                  " YAML values; a profile needs a few hundred",
              "list nodes by host-list ranges (\"gpu[001-480]\") instead of one entry each, and "
              "drop what the profile does not use");
}

// A value that starts with a character no value may start with (a stray ',').
[[noreturn]] void fail_stray(const std::string& path, const std::string& text,
                             const YAML::Mark& mark) {
  const auto pos = static_cast<std::size_t>(std::max(mark.pos, 0));
  fail_file(position(path, mark),
            "is not valid YAML: " + quoted(text.substr(pos, 1)) + " cannot start a value",
            "delete it, or write the list it belongs to in [...]");
}

}  // namespace

std::string read_profile_text(const std::string& path) { return read_text(path); }

YAML::Node read_document(const std::string& path, const std::string& text) {
  if (text.size() > kMaxProfileBytes)
    fail_file(path, "is larger than a profile may be, " + std::to_string(kMaxProfileBytes) +
                        " bytes (1 MiB)",
              "keep a profile under 1 MiB; it needs only a few kilobytes");
  const std::size_t nul = text.find('\0');
  if (nul != std::string::npos)
    fail_file(position(path, mark_of_offset(text, nul)), "holds a NUL byte; a profile is text",
              "save the file as plain UTF-8 text");
  std::vector<YAML::Mark> starts;  // of the first two documents
  DocumentEvents first_doc(text);
  YAML::Node doc;
  try {
    std::istringstream in(text);
    YAML::Parser parser(in);
    for (int i = 0; i < 2; ++i) {
      DocumentEvents second_doc(text);
      DocumentEvents& events = i == 0 ? first_doc : second_doc;
      if (!parser.HandleNextDocument(events)) break;
      starts.push_back(events.mark);
    }
    if (starts.size() == 2 && starts[0].pos == starts[1].pos) fail_stray(path, text, starts[1]);
    if (first_doc.unclosed_quote) fail_unclosed(path, first_doc, *first_doc.unclosed_quote);
    refuse_costly(path, first_doc);
    if (!starts.empty()) doc = YAML::Load(text);
  } catch (const YAML::DeepRecursion& e) {
    fail_file(position(path, e.mark),
              "nests deeper than YAML is read here; a profile nests at most 5 levels",
              "flatten the value to what the profile schema allows");
  } catch (const YAML::Exception& e) {
    // Running out of file inside a '[' or '{': the cause is where it was opened.
    const bool unclosed_flow =
        e.msg == YAML::ErrorMsg::END_OF_SEQ_FLOW || e.msg == YAML::ErrorMsg::END_OF_MAP_FLOW;
    if (first_doc.unclosed_quote) fail_unclosed(path, first_doc, *first_doc.unclosed_quote);
    // An alias of no anchor is refused as any alias is.
    if (e.msg == YAML::ErrorMsg::UNKNOWN_ANCHOR) fail_reference(position(path, e.mark), "alias ('*NAME')");
    if (unclosed_flow && !first_doc.open_flows.empty())
      fail_unclosed(path, first_doc, first_doc.open_flows.back());
    // yaml-cpp 0.9 refuses a stray ',' itself (0.7 loops on it, caught above), in
    // its own words and with no fix: the same message on every version.
    const auto pos = static_cast<std::size_t>(std::max(e.mark.pos, 0));
    if (e.msg.find("cannot start with flow indicator") != std::string::npos &&
        pos < text.size() && text[pos] == ',')
      fail_stray(path, text, e.mark);
    fail_file(position(path, e.mark), "is not valid YAML: " + e.msg,
              "correct the YAML at that point; quote values that hold ':', '#', '[', '{' or "
              "start with '*', '&', '!' or '%'");
  }
  if (starts.empty() || (starts.size() == 1 && doc.IsNull()))
    fail_file(path, "is empty",
              "write at least `name: NAME`, where NAME is the file's name "
              "without .yaml");
  if (starts.size() > 1)
    fail_file(position(path, starts[1]), "holds more than one YAML document ('---')",
              "keep one profile per file; delete the second document or move it to its own file");
  return doc;
}

Field::Field(std::string path, std::string key, std::string name, YAML::Node node, YAML::Mark mark,
             YAML::Mark key_mark)
    : path_(std::move(path)),
      key_(std::move(key)),
      name_(std::move(name)),
      node_(std::move(node)),
      mark_(mark),
      key_mark_(key_mark) {}

Field Field::root(const std::string& path, const YAML::Node& node) {
  return Field(path, "", "", node, node.Mark(), node.Mark());
}

std::string Field::at(const YAML::Mark& mark) const { return position(path_, mark); }
std::string Field::where() const { return at(mark_); }
std::string Field::key_where() const { return at(key_mark_); }

void Field::fail(const std::string& problem, const std::string& fix) const {
  fail_file(where(), problem, fix);
}

void Field::fail_key(const std::string& problem, const std::string& fix) const {
  fail_file(key_where(), problem, fix);
}

std::string Field::found() const {
  switch (node_.Type()) {
    case YAML::NodeType::Scalar: return "the value " + quoted(node_.Scalar());
    case YAML::NodeType::Sequence: return "a list";
    case YAML::NodeType::Map: return "a map";
    default: return "nothing";
  }
}

std::string Field::text() const {
  if (!node_.IsScalar())
    fail(key_ + " must be a single value, found " + found(),
         "write one value after '" + name_ + ":', quoted if it holds special characters");
  const std::string& s = node_.Scalar();
  if (s.find_first_of(std::string("\n\r\0", 3)) != std::string::npos)
    fail(key_ + "=" + quoted(s) + " holds a line break or NUL; values are one line",
         "write the value on one line without \\n, \\r or \\0");
  if (!valid_utf8(s))
    fail(key_ + "=" + quoted(s) + " is not UTF-8 text",
         "save the file as UTF-8 (e.g. iconv -f latin1 -t utf-8), or write the value in ASCII");
  return s;
}

unsigned long Field::integer(unsigned long min, unsigned long max) const {
  const std::string s = text();
  const std::string range = std::to_string(min) + ".." + std::to_string(max);
  try {
    return static_cast<unsigned long>(parse_unsigned(key_, s, min, max));
  } catch (const PlanError&) {
    fail(key_ + "=" + quoted(s) + " is not a whole number in " + range,
         "write a plain number in " + range + ", without quotes, sign or unit");
  }
}

double Field::number(double min, double max) const {
  const std::string s = text();
  std::ostringstream range;
  range << min << ".." << max;
  // Decimal only: no sign, exponent, hex, inf or nan, which strtod would take.
  const bool plain = !s.empty() && s.size() <= 32 && s.find_first_not_of("0123456789.") == std::string::npos &&
                     s.find('.') == s.rfind('.') && s.front() != '.' && s.back() != '.';
  const double value = plain ? std::strtod(s.c_str(), nullptr) : 0;
  if (!plain || value < min || value > max)
    fail(key_ + "=" + quoted(s) + " is not a number in " + range.str(),
         "write a plain decimal number in " + range.str() + ", e.g. 2.5, without quotes, sign or unit");
  return value;
}

bool Field::boolean() const {
  const std::string s = text();
  if (s == "true") return true;
  if (s == "false") return false;
  fail(key_ + "=" + quoted(s) + " is not a boolean; allowed: true or false",
       "write " + name_ + ": true or " + name_ + ": false");
}

std::vector<Field> Field::items() const {
  if (!node_.IsSequence())
    fail(key_ + " must be a list, found " + found(),
         "write a list, e.g. " + name_ + ": [a, b], or one '- item' per line");
  std::vector<Field> out;
  std::size_t i = 0;
  for (const YAML::Node& item : node_) {
    const std::string key = key_ + "[" + std::to_string(i++) + "]";
    const YAML::Mark mark = item.IsNull() ? mark_ : item.Mark();
    out.push_back(Field(path_, key, key, item, mark, mark));
  }
  return out;
}

std::vector<Field> Field::entries(std::initializer_list<const char*> allowed) const {
  const std::string label = key_.empty() ? "the top level" : key_;
  std::string allowed_text;
  for (const char* a : allowed) allowed_text += std::string(allowed_text.empty() ? "" : ", ") + a;
  if (!node_.IsMap())
    fail(label + " must be a map of keys, found " + found(),
         allowed_text.empty() ? "write NAME: value pairs, one per line"
                              : "write key: value pairs; keys: " + allowed_text);
  std::vector<Field> out;
  for (const auto& kv : node_) {
    const YAML::Mark key_mark = kv.first.Mark();
    if (!kv.first.IsScalar())
      fail_file(at(key_mark), label + " has a key that is not a plain name",
                "write keys as plain names, e.g. name: value");
    const std::string name = kv.first.Scalar();
    const std::string key = key_.empty() ? name : key_ + "." + name;
    const YAML::Mark mark = kv.second.IsNull() ? key_mark : kv.second.Mark();
    Field f(path_, key, name, kv.second, mark, key_mark);
    const bool known = allowed.size() == 0 || std::any_of(allowed.begin(), allowed.end(),
                                                          [&](const char* a) { return name == a; });
    if (!known)
      f.fail_key(quoted(name) + " is not a key of " + label + "; allowed: " + allowed_text,
                 "remove it or correct its spelling");
    if (const auto first = find(out, name.c_str()))
      f.fail_key(key + " appears twice (first at " + first->key_where() + ")", "keep one of them");
    out.push_back(std::move(f));
  }
  return out;
}

std::optional<Field> find(const std::vector<Field>& entries, const char* name) {
  for (const Field& f : entries)
    if (f.name() == name) return f;
  return std::nullopt;
}

}  // namespace ddp::plan::profile_yaml
