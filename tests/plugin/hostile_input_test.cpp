// Hostile input, one case per line of the table: what users type (option values), what admins
// write (plugstack.conf, profiles) and what Slurm hands the plugin (host, index and CPU lists).
// Each is refused with a message that names the problem, never a crash, a hang or a half-filled
// result; the inputs the fuzzers (tests/fuzz) found are here too.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "error.hpp"
#include "hostlist.hpp"
#include "options.hpp"
#include "parse.hpp"
#include "profile.hpp"
#include "profile_test_util.hpp"
#include "topology.hpp"

namespace p = ddp::plan;
using profile_test::TempDir;

namespace {

const std::string kMiB(1 << 20, '7');

bool has(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

std::string option_error(std::string_view name, std::string_view value) {
  p::UserOptions o;
  return profile_test::error_of([&] { p::apply_user_option(o, name, value); });
}

// An error message is one short line, whatever the input: it goes to a job's log.
void expect_one_line(const std::string& e) {
  EXPECT_FALSE(e.empty());
  EXPECT_EQ(e.find('\n'), std::string::npos) << e;
  EXPECT_LT(e.size(), 1200u) << e;
}

}  // namespace

// --- option values --------------------------------------------------------------------------

TEST(HostileOption, NumbersThatOverflow) {
  for (const char* v : {"99999999999999999999999", "18446744073709551616"}) {
    const std::string e = option_error("ddp-nodes", v);
    EXPECT_TRUE(has(e, "--ddp-nodes=")) << e;
    EXPECT_TRUE(has(e, "is too large; allowed: 1..100000")) << e;
  }
  // Fits 64 bits but not the range, nor an unsigned: never wrapped to a small count.
  for (const char* v : {"4294967297", "100001", "18446744073709551615"})
    EXPECT_TRUE(has(option_error("ddp-nodes", v), "is out of range; allowed: 1..100000")) << v;
  EXPECT_TRUE(has(option_error("ddp-gpus", "4294967360"), "allowed: 1..64"));
  EXPECT_TRUE(has(option_error("ddp-port", "65536"), "allowed: 1..65535"));
  EXPECT_TRUE(has(option_error("ddp-port", "-1"), "is not a whole number"));
  EXPECT_TRUE(has(option_error("ddp-nodes", "0x10"), "is not a whole number"));
}

TEST(HostileOption, NewlinesAreRefusedAndEscapedInTheMessage) {
  for (const auto& [name, value] : std::vector<std::pair<std::string, std::string>>{
           {"ddp-nodes", "2\n"},
           {"ddp-port", "29400\nMASTER_PORT=1"},
           {"ddp-backend", "nccl\n"},
           {"ddp-bind", "none\r\n"},
           {"ddp-profile", "vega\nextends"},
           {"ddp", "vega\n"},
           {"ddp-profile", "/home/u/p.yaml\n.yaml"},
           {"ddp-nodes", std::string("2\0", 2)}}) {
    const std::string e = option_error(name, value);
    expect_one_line(e);
    EXPECT_TRUE(has(e, "--" + name)) << e;
    EXPECT_TRUE(has(e, "='" + value.substr(0, 1))) << e;
    EXPECT_TRUE(has(e, "\\x0a") || has(e, "\\x0d") || has(e, "\\x00")) << e;
  }
}

TEST(HostileOption, AProfilePathWithControlCharactersIsRefused) {
  // A title change and a carriage return would reach slurmd's log and an admin's terminal.
  for (const std::string value : {"/home/u/\x1b]0;x\x07.yaml", "/home/u/a\rb.yaml", "/home/u/\x7f.yaml"}) {
    const std::string e = option_error("ddp-profile", value);
    expect_one_line(e);
    EXPECT_TRUE(has(e, "is not a profile file")) << e;
    EXPECT_TRUE(has(e, "\\x1b") || has(e, "\\x0d") || has(e, "\\x7f")) << e;
  }
}

TEST(HostileOption, ShellMetacharactersAreNeverAccepted) {
  for (const char* v : {"2;reboot", "$(id)", "`id`", "2|cat", "2&&x", "'2'", "2 "})
    EXPECT_TRUE(has(option_error("ddp-nodes", v), "is not a whole number")) << v;
  EXPECT_TRUE(has(option_error("ddp-backend", "nccl;id"), "is not a backend"));
  EXPECT_TRUE(has(option_error("ddp-bind", "$(reboot)"), "is not a binding"));
  EXPECT_TRUE(has(option_error("ddp-port", "auto;id"), "is not a whole number"));
  for (const char* v : {"vega;id", "$(id)", "`id`", "a b", "vega|x", "~root", "*"})
    EXPECT_TRUE(has(option_error("ddp-profile", v), "is not a profile name")) << v;
}

TEST(HostileOption, OneMebibyteValuesGetAShortMessage) {
  const std::string e1 = option_error("ddp-nodes", kMiB);
  expect_one_line(e1);
  EXPECT_TRUE(has(e1, "is too large")) << e1;
  EXPECT_TRUE(has(e1, "...'")) << e1;  // the value is cut in the message
  const std::string e2 = option_error("ddp-profile", std::string(1 << 20, 'a'));
  expect_one_line(e2);
  EXPECT_TRUE(has(e2, "is not a profile name")) << e2;
  const std::string e3 = option_error("ddp-profile", "/" + std::string(1 << 20, 'a') + ".yaml");
  expect_one_line(e3);
  EXPECT_TRUE(has(e3, "is not a profile file")) << e3;
  expect_one_line(option_error("ddp-backend", kMiB));
}

TEST(HostileOption, ProfileNamesAreNeverPaths) {
  for (const char* v : {"../etc/passwd", "..", ".", "a/b", "vega/../../x", ".hidden", "-rf",
                        "./vega", "vega.yaml/"}) {
    const std::string e = option_error("ddp-profile", v);
    EXPECT_TRUE(has(e, "is not a profile name")) << v << ": " << e;
    EXPECT_TRUE(has(e, "a name, not a path")) << e;
    EXPECT_TRUE(has(option_error("ddp", v), "is not a profile name")) << v;
  }
}

TEST(HostileOption, AnUnknownOptionNameIsQuoted) {
  const std::string e = option_error(std::string("\n\0\0\0", 4), "0");
  expect_one_line(e);
  EXPECT_TRUE(has(e, "'--\\x0a\\x00\\x00\\x00' is not an option of spank_ddp")) << e;
}

TEST(HostileOption, ARefusedValueLeavesTheEarlierOneInPlace) {
  p::UserOptions o;
  p::apply_user_option(o, "ddp-nodes", "2");
  p::apply_user_option(o, "ddp-profile", "vega");
  p::apply_user_option(o, "ddp-port", "29400");
  EXPECT_THROW(p::apply_user_option(o, "ddp-nodes", "3;x"), p::PlanError);
  EXPECT_THROW(p::apply_user_option(o, "ddp-profile", "../x"), p::PlanError);
  EXPECT_THROW(p::apply_user_option(o, "ddp-profile", "/x\n.yaml"), p::PlanError);
  EXPECT_THROW(p::apply_user_option(o, "ddp-port", "70000"), p::PlanError);
  EXPECT_EQ(o.nodes, 2u);
  EXPECT_EQ(o.profile, "vega");
  EXPECT_FALSE(o.profile_file);
  EXPECT_EQ(o.port, 29400);
}

// --- plugstack.conf -------------------------------------------------------------------------

TEST(HostilePlugstack, BadArgumentsNameTheArgument) {
  const auto error = [](std::vector<std::string> args) {
    return profile_test::error_of([&] { p::parse_plugstack_args(args); });
  };
  EXPECT_TRUE(has(error({"profile_dir=etc/ddp"}), "must be an absolute directory path"));
  EXPECT_TRUE(has(error({"default_profile=../x"}), "is not a profile name"));
  EXPECT_TRUE(has(error({"port_range=20000-40000"}), "overlaps Linux's ephemeral ports"));
  EXPECT_TRUE(has(error({"port_range=99999999999999999999-1"}), "is too large"));
  EXPECT_TRUE(has(error({"port_range=30000-20000"}), "runs backwards"));
  EXPECT_TRUE(has(error({"user_profiles=yes;id"}), "is not a boolean"));
  EXPECT_TRUE(has(error({"activate=always\n"}), "activate='always\\x0a' is not allowed"));
  EXPECT_TRUE(has(error({"topology=node.xml"}), "must be an absolute path"));
  const std::string e = error({"profile_dir\n=/x"});
  expect_one_line(e);
  EXPECT_TRUE(has(e, "'profile_dir\\x0a' is unknown")) << e;
  expect_one_line(error({kMiB}));
}

// --- host lists (libslurm) ------------------------------------------------------------------

// libslurm 22.05 leaks memory on each range it refuses (the hostlist fuzzer's first finding),
// so malformed ranges are refused before libslurm sees them, with the range named.
TEST(HostileHostlist, MalformedRangesAreRefusedBeforeLibslurm) {
  for (const char* list : {"gn[052-010]", "n[1-2x]", "n[a-b]", "n[]", "n[-1]", "n[1--2]",
                           "n[1,,2]", "gn[001-060\xf0]", "n[1-99999999]"}) {
    const std::string e = profile_test::error_of([&] { p::expand_hostlist("nodes", list); });
    EXPECT_TRUE(has(e, "is not a Slurm host list (the range '[")) << list << ": " << e;
    EXPECT_TRUE(has(e, "at most 65536 hosts each")) << e;
    EXPECT_THROW(p::first_host("SLURM_STEP_NODELIST", list), p::PlanError) << list;
  }
  for (const char* list : {"n[1-", "n[[1]]", "n[1-2]]", "n]", "n[1-2]x["}) {
    const std::string e = profile_test::error_of([&] { p::expand_hostlist("nodes", list); });
    EXPECT_TRUE(has(e, "is not a Slurm host list (an unbalanced '")) << list << ": " << e;
  }
}

TEST(HostileHostlist, OnlyHostNameCharacters) {
  for (const char* list : {"n1;reboot", "n$(id)", "n1\nn2", "n1\tn2", "n`x`", "n1/../x"}) {
    const std::string e = profile_test::error_of([&] { p::expand_hostlist("nodes", list); });
    expect_one_line(e);
    EXPECT_TRUE(has(e, "host names are letters, digits, '-', '_' and '.'")) << list << ": " << e;
  }
  EXPECT_THROW(p::expand_hostlist("nodes", std::string("a\0b", 3)), p::PlanError);
}

TEST(HostileHostlist, ListsNamingTooManyHostsAreRefusedBeforeExpanding) {
  for (const std::string& list :
       {std::string("n[0-65535]x[0-65535]"), std::string("a[0-65535],b[0-65535],c[0-1]"),
        std::string("n[0-65535][0-65535][0-65535][0-65535]")}) {
    const std::string e = profile_test::error_of([&] { p::expand_hostlist("nodes", list); });
    EXPECT_TRUE(has(e, "names more than 131072 hosts")) << list << ": " << e;
  }
  // A megabyte of short names names too many as well.
  std::string many;
  while (many.size() < (1 << 19)) many += "n1,";
  EXPECT_TRUE(has(profile_test::error_of([&] { p::expand_hostlist("nodes", many); }),
                  "names more than 131072 hosts"));
  EXPECT_THROW(p::expand_hostlist("nodes", many + many + "n1"), p::PlanError);  // over 1 MiB
}

TEST(HostileHostlist, ListsSlurmWritesStillExpand) {
  EXPECT_EQ(p::expand_hostlist("l", "n[1-2][3-4]").size(), 4u);
  EXPECT_EQ(p::expand_hostlist("l", "n1 n2"), (std::vector<std::string>{"n1", "n2"}));
  EXPECT_EQ(p::expand_hostlist("l", "rack[1-2]-n[01-02]").size(), 4u);
  EXPECT_EQ(p::expand_hostlist("l", "n[0-65535]").size(), 65536u);
  EXPECT_EQ(p::expand_hostlist("l", "n[0-65535],m[0-65535]").size(), p::kMaxHosts);
  EXPECT_EQ(p::first_host("l", "nid[001234-001300,002000]"), "nid001234");
}

// --- index lists ----------------------------------------------------------------------------

TEST(HostileLists, LargeIndexRangesAreLinearNotQuadratic) {
  // Before the fuzzer found it, each index was compared with every earlier one: 0-65536 took
  // about 2 billion comparisons.
  EXPECT_EQ(p::parse_index_list("CUDA_VISIBLE_DEVICES", "0-65536", 1u << 16).size(), 65537u);
  std::string repeated = "0-65536";
  for (int i = 0; i < 1000; ++i) repeated += ",0-65536";
  const std::string e = profile_test::error_of(
      [&] { p::parse_index_list("CUDA_VISIBLE_DEVICES", repeated, 1u << 16); });
  expect_one_line(e);
  EXPECT_TRUE(has(e, "lists 0 twice; each index may appear once")) << e;
  EXPECT_TRUE(has(profile_test::error_of(
                      [&] { p::parse_index_list("SLURM_STEP_GPUS", "0-4294967295", 1u << 16); }),
                  "is out of range"));
  EXPECT_TRUE(has(profile_test::error_of(
                      [&] { p::parse_index_list("SLURM_STEP_GPUS", "-1", 1u << 16); }),
                  "'-1' is not an index or a low-high range"));
}

// --- profiles -------------------------------------------------------------------------------

namespace {

std::string load_error(const TempDir& dir, const std::string& text) {
  const std::string path = dir.write("t.yaml", text);
  return profile_test::error_of([&] { p::load_profile_file(path); });
}

}  // namespace

TEST(HostileProfile, NamesWithSlashOrDotDotAreRefused) {
  TempDir dir;
  dir.write("vega.yaml", "name: vega\n");
  for (const char* name : {"../vega", "a/b", "..", ".", "/etc/passwd", "vega/", ".vega"}) {
    const std::string e = profile_test::error_of([&] { p::load_profile(dir.path(), name); });
    EXPECT_TRUE(has(e, "is not a profile name")) << name << ": " << e;
    EXPECT_TRUE(has(e, "Fix: use one of the profiles in " + dir.path() + ": vega")) << e;
  }
  EXPECT_TRUE(has(load_error(dir, "name: t\nextends: ../vega\n"), "is not a profile name"));
  EXPECT_TRUE(has(load_error(dir, "name: ../t\n"), "is not a profile name"));
}

TEST(HostileProfile, UnknownKeysAreRefusedWhereTheyAre) {
  TempDir dir;
  std::string e = load_error(dir, "name: t\nrm_rf: true\n");
  EXPECT_TRUE(has(e, ":2:1: 'rm_rf' is not a key of the top level; allowed: name,")) << e;
  e = load_error(dir, "name: t\nnetwork: {transport: ib, preload: x.so}\n");
  EXPECT_TRUE(has(e, "'preload' is not a key of network")) << e;
  e = load_error(dir, "name: t\nnodes:\n  - {match: n1, exec: /bin/sh}\n");
  EXPECT_TRUE(has(e, "'exec' is not a key of nodes[0]")) << e;
}

TEST(HostileProfile, DeepNestingStopsWithAMessageNotAStackOverflow) {
  TempDir dir;
  const int n = 10000;
  std::string maps, lists, block;
  for (int i = 0; i < n; ++i) maps += "{a: ";
  maps += "1" + std::string(n, '}');
  lists = std::string(n, '[') + std::string(n, ']');
  for (int i = 0; i < n; ++i) block += "- ";
  block += "x";
  for (const std::string& value : {maps, lists}) {
    for (const char* key : {"env", "description", "nodes", "unknown"}) {
      const std::string e = load_error(dir, "name: t\n" + std::string(key) + ": " + value + "\n");
      EXPECT_TRUE(has(e, "nests deeper than YAML is read here")) << key << ": " << e;
    }
  }
  const std::string e = load_error(dir, "name: t\nnodes:\n" + block + "\n");
  EXPECT_TRUE(has(e, "nests deeper than YAML is read here")) << e;
  // Nested anchors and aliases are not expanded into a billion values.
  std::string laughs = "name: t\na0: &a0 [x, x, x, x, x, x, x, x, x, x]\n";
  for (int i = 1; i < 30; ++i) {
    laughs += "a" + std::to_string(i) + ": &a" + std::to_string(i) + " [";
    for (int k = 0; k < 10; ++k)
      laughs += std::string(k ? ", " : "") + "*a" + std::to_string(i - 1);
    laughs += "]\n";
  }
  EXPECT_TRUE(has(load_error(dir, laughs), "t.yaml:2:5: uses a YAML anchor ('&NAME')"));
}

// An alias costs the parser nothing, but each reader copies what it finds: 32 aliases of a 32 KiB
// value in each of 300 aliased entries took ddp-plan to 1.2 GB. Refused before anything is built.
TEST(HostileProfile, AnchorsAndAliasesAreRefusedWithTheirLine) {
  TempDir dir;
  std::string bomb = "name: t\ndescription: &x " + std::string(32000, 'v') + "\nnodes: [&o {match: n1, env: {";
  for (int i = 0; i < 32; ++i) bomb += (i ? ", V" : "V") + std::to_string(i) + ": *x";
  bomb += "}}";
  for (int i = 0; i < 300; ++i) bomb += ", *o";
  bomb += "]\n";
  const std::string e = load_error(dir, bomb);
  EXPECT_TRUE(has(e, "t.yaml:2:14: uses a YAML anchor ('&NAME'); profiles take neither")) << e;
  expect_one_line(e);
  // An alias of an anchor that is not there is an alias all the same (yaml-cpp refuses it with a
  // message that does not say why).
  EXPECT_TRUE(has(load_error(dir, "name: t\ndescription: x\nenv: {A: *nowhere}\n"),
                  "t.yaml:3:10: uses a YAML alias ('*NAME')"));
  // Values that merely start with the characters, quoted, are values.
  EXPECT_EQ(load_error(dir, "name: t\ndescription: '&x *y'\n"), "");
}

// Each parsed YAML value costs slurmstepd about 500 bytes: 40,000 of them in an 80 KB file were
// 19 MB. The count, not only the size, is bounded.
TEST(HostileProfile, MoreValuesThanAProfileHasAreRefusedBeforeParsing) {
  TempDir dir;
  std::string many = "name: t\nnodes: [";
  for (std::size_t i = 0; i <= p::kMaxProfileNodes; ++i) many += i ? ",a" : "a";
  many += "]\n";
  const std::string e = load_error(dir, many);
  EXPECT_TRUE(has(e, "holds more than " + std::to_string(p::kMaxProfileNodes) + " YAML values")) << e;
  expect_one_line(e);
}

TEST(HostileProfile, FilesOverOneMebibyteAreRefusedBeforeParsing) {
  TempDir dir;
  const std::string e = load_error(dir, "name: t\ndescription: " + kMiB + "\n");
  EXPECT_TRUE(has(e, "is larger than a profile may be, 1048576 bytes (1 MiB)")) << e;
}

TEST(HostileProfile, LoaderAndPluginVariablesAreRefused) {
  TempDir dir;
  for (const char* name : {"LD_PRELOAD", "LD_LIBRARY_PATH", "LD_AUDIT"}) {
    const std::string e = load_error(dir, "name: t\nenv: {" + std::string(name) + ": /tmp/x.so}\n");
    EXPECT_TRUE(has(e, "variable '" + std::string(name) + "' is a dynamic loader variable")) << e;
  }
  for (const char* name : {"RANK", "MASTER_ADDR", "DDP_LAUNCHER", "CUDA_VISIBLE_DEVICES"})
    EXPECT_TRUE(has(load_error(dir, "name: t\nenv: {" + std::string(name) + ": x}\n"),
                    "is written by the plugin") ||
                has(load_error(dir, "name: t\nenv: {" + std::string(name) + ": x}\n"),
                    "is set by the plugin"))
        << name;
  EXPECT_TRUE(has(load_error(dir, "name: t\nenv: {\"A;reboot\": x}\n"), "is not a variable name"));
  EXPECT_TRUE(has(load_error(dir, "name: t\nenv: {A: \"x\\ny\"}\n"), "holds a line break"));
}

TEST(HostileProfile, ValuesThatAreNotUtf8AreRefused) {
  // The profile fuzzer's find: a Latin-1 byte passed the parser, and `ddp-plan --check-profile`
  // then failed in the JSON writer with "invalid UTF-8 byte" instead of naming the line.
  TempDir dir;
  for (const char* value : {"caf\xe9", "\xff", "\xc0\xaf", "\xed\xa0\x80", "ok\xf0\x9f"}) {
    const std::string e =
        load_error(dir, "name: t\ndescription: " + std::string(value) + "\nenv: {A: b}\n");
    EXPECT_TRUE(has(e, ":2:14: description='")) << e;
    EXPECT_TRUE(has(e, "is not UTF-8 text. Fix: save the file as UTF-8")) << e;
    EXPECT_TRUE(has(load_error(dir, "name: t\nenv: {A: \"" + std::string(value) + "\"}\n"),
                    "is not UTF-8 text"));
  }
  EXPECT_EQ(load_error(dir, "name: t\ndescription: Tromsø – 北極 🚀\n"), "");
}

TEST(HostileProfile, HugeVariableValuesAreRefused) {
  // Linux starts no program with a variable over 128 KiB: every task of the job would fail.
  TempDir dir;
  const std::string e =
      load_error(dir, "name: t\nenv: {NCCL_X: " + std::string(200000, 'x') + "}\n");
  EXPECT_TRUE(has(e, "variable 'NCCL_X' is 200000 bytes long; a value may be at most 32768")) << e;
  const std::string forced = load_error(
      dir, "name: t\nenv: {NCCL_X: {value: " + std::string(40000, 'x') + ", force: true}}\n");
  EXPECT_TRUE(has(forced, "is 40000 bytes long")) << forced;
  EXPECT_EQ(load_error(dir, "name: t\nenv: {NCCL_X: " + std::string(32768, 'x') + "}\n"), "");
}

TEST(HostileProfile, HostListsThatNameTooManyHostsAreRefused) {
  TempDir dir;
  std::string e = load_error(dir, "name: t\nmatch: {nodes: \"n[0-65535]x[0-65535]\"}\n");
  EXPECT_TRUE(has(e, "names more than 131072 hosts")) << e;
  // Each list within the limit, together over it: slurmstepd's memory is not the file's to take.
  std::string many = "name: t\nnodes:\n";
  for (int i = 0; i < 3; ++i)
    many += "  - {match: \"r" + std::to_string(i) + "n[0-65535]\", binding: {cpus: none}}\n";
  e = load_error(dir, many);
  EXPECT_TRUE(has(e, "nodes[2].match brings the hosts this file's lists name to more than 131072"))
      << e;
  EXPECT_TRUE(has(load_error(dir, "name: t\nmatch: {nodes: \"gn[052-010]\"}\n"),
                  "match.nodes='gn[052-010]' is not a Slurm host list (the range"));
}

TEST(HostileProfile, ARefusedProfileIsNeverPartlyApplied) {
  // The choice either yields a whole profile or throws: nothing from a bad file gets through.
  TempDir dir;
  dir.write("bad.yaml", "name: bad\nmatch: {cluster: c}\nenv: {NCCL_DEBUG: INFO, LD_PRELOAD: x}\n");
  EXPECT_THROW(p::select_profile(dir.path(), std::nullopt, std::nullopt, std::string("c"), "n1"),
               p::PlanError);
  EXPECT_THROW(p::select_profile(dir.path(), std::string("bad"), std::nullopt, std::nullopt, "n1"),
               p::PlanError);
}

TEST(HostileProfile, AStrayCommaDoesNotHangTheParser) {
  // The profile fuzzer's find: yaml-cpp 0.7's LoadAll never returns on a document that starts
  // with ',' (it collects the same empty document until memory runs out): slurmstepd would hang
  // on such a profile. Found as a 12 s time-out on a shipped profile with one line starting ','.
  TempDir dir;
  for (const auto& [text, at] : std::vector<std::pair<std::string, std::string>>{
           {",", ":1:1:"}, {",name: t", ":1:1:"}, {"# comment\n\n  ,x\n", ":3:3:"}}) {
    const std::string e = load_error(dir, text);
    EXPECT_TRUE(has(e, at + " is not valid YAML: ',' cannot start a value")) << e;
    EXPECT_TRUE(has(e, "Fix: delete it")) << e;
  }
  // After a first value, yaml-cpp 0.7 reads on past the ',' and complains about what it was in;
  // 0.9 stops at the ',' itself. Either way the place is named and nothing hangs.
  const std::string after_map = load_error(dir, "name: t\n,\n");
  EXPECT_TRUE(has(after_map, "is not valid YAML: end of map not found") ||
              has(after_map, ":2:1: is not valid YAML: ',' cannot start a value"))
      << after_map;
  const std::string second = load_error(dir, "name: t\n---\n,\n");
  EXPECT_TRUE(has(second, ":3:1: holds more than one YAML document") ||
              has(second, ":3:1: is not valid YAML: ',' cannot start a value"))
      << second;
  EXPECT_TRUE(has(load_error(dir, "# only a comment\n"), "is empty"));
  EXPECT_TRUE(has(load_error(dir, "---\n---\n"), "holds more than one YAML document"));
  EXPECT_EQ(load_error(dir, "---\nname: t\n...\n"), "");
}
