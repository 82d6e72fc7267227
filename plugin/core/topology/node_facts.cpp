#include "node_facts.hpp"

#include <algorithm>
#include <sstream>
#include <vector>

#include "error.hpp"
#include "limits.hpp"
#include "parse.hpp"

namespace ddp::plan {
namespace {

// The first line; a format change makes a new number, and with it every old file stale.
constexpr const char* kMagic = "slurm-ddp node facts 1";
// Written for empty fields, so that every line splits into a fixed number of words.
constexpr const char* kNone = "-";

struct KeyField {
  const char* name;   // the word in the file
  const char* words;  // for log lines: "the boot id changed"
  std::string NodeFactsKey::*field;
};
constexpr KeyField kKeyFields[] = {
    {"source", "the topology source", &NodeFactsKey::source},
    {"boot_id", "the boot id (the node rebooted)", &NodeFactsKey::boot_id},
    {"cpus_online", "the online CPUs", &NodeFactsKey::cpus_online},
    {"pci_devices", "the PCI devices", &NodeFactsKey::pci_devices},
    {"hwloc", "the hwloc library", &NodeFactsKey::hwloc},
    {"plugin", "the slurm-ddp version", &NodeFactsKey::plugin},
};

// A word of the file: no white space (it separates words), "-" only for empty.
std::string word(const std::string& value, const char* what) {
  if (value.empty()) return kNone;
  if (value == kNone || value.find_first_of(" \t\r\n") != std::string::npos)
    throw PlanError(std::string("cannot record ") + what + " " + plan::quoted(value) +
                    " in the node facts file");
  return value;
}

std::string from_word(const std::string& w) { return w == kNone ? std::string() : w; }

std::string cpus_word(const CpuList& cpus) { return cpus.empty() ? kNone : format_cpu_list(cpus); }

std::string switches_word(const std::vector<unsigned long long>& switches) {
  if (switches.empty()) return kNone;
  std::string out;
  for (auto s : switches) out += (out.empty() ? "" : ",") + std::to_string(s);
  return out;
}

std::string locality_words(const Locality& l) {
  return switches_word(l.switches) + " " + word(l.numa, "a NUMA node set") + " " +
         std::to_string(l.package) + " " + cpus_word(l.cpus);
}

struct Reader {
  std::istringstream in;
  unsigned line_no = 0;
  std::vector<std::string> words;

  explicit Reader(const std::string& text) : in(text) {}

  PlanError error(const std::string& why) const {
    return PlanError("node facts line " + std::to_string(line_no) + ": " + why);
  }
  // The next line split into words; false at the end.
  bool next() {
    std::string line;
    if (!std::getline(in, line)) return false;
    ++line_no;
    words.clear();
    std::istringstream split(line);
    for (std::string w; split >> w;) words.push_back(w);
    if (words.empty()) throw error("empty line");
    return true;
  }
  void expect(const char* keyword, std::size_t count) const {
    if (words[0] != keyword || words.size() != count)
      throw error(std::string("expected '") + keyword + "' with " + std::to_string(count - 1) +
                  " value(s), found " + plan::quoted(words[0]) + " with " +
                  std::to_string(words.size() - 1));
  }
  unsigned long long number(std::size_t i, unsigned long long max) const {
    try {
      return parse_unsigned("field " + std::to_string(i), words[i], 0, max);
    } catch (const PlanError& e) {
      throw error(e.what());
    }
  }
  unsigned hex(std::size_t i) const {
    const std::string& w = words[i];
    if (w.size() < 3 || w.size() > 6 || w.compare(0, 2, "0x") != 0 ||
        w.find_first_not_of("0123456789abcdef", 2) != std::string::npos)
      throw error("field " + std::to_string(i) + " is not a PCI id: " + plan::quoted(w));
    return static_cast<unsigned>(std::stoul(w.substr(2), nullptr, 16));
  }
  CpuList cpus(std::size_t i) const {
    if (words[i] == kNone) return {};
    try {
      CpuList cpus = parse_index_list("field " + std::to_string(i), words[i], kMaxCpuId);
      std::sort(cpus.begin(), cpus.end());
      return cpus;
    } catch (const PlanError& e) {
      throw error(e.what());
    }
  }
  // loc SWITCHES NUMA PACKAGE CPUS, from word i on.
  Locality locality(std::size_t i) const {
    Locality l;
    if (words[i] != kNone) {
      std::istringstream list(words[i]);
      for (std::string s; std::getline(list, s, ',');) {
        try {
          l.switches.push_back(parse_unsigned("a switch", s, 0, ~0ull));
        } catch (const PlanError& e) {
          throw error(e.what());
        }
      }
    }
    l.numa = from_word(words[i + 1]);
    l.package = words[i + 2] == "-1" ? -1 : static_cast<int>(number(i + 2, 1u << 20));
    l.cpus = cpus(i + 3);
    return l;
  }
};

std::string hex_id(unsigned id) {
  std::ostringstream s;
  s << "0x" << std::hex << id;
  return s.str();
}

NicKind nic_kind(const Reader& r, std::size_t i) {
  for (NicKind k : {NicKind::InfiniBand, NicKind::RoCE, NicKind::Slingshot, NicKind::Ethernet,
                    NicKind::Efa, NicKind::Other})
    if (r.words[i] == nic_kind_name(k)) return k;
  throw r.error("unknown NIC kind " + plan::quoted(r.words[i]));
}

}  // namespace

bool NodeFactsKey::operator==(const NodeFactsKey& other) const {
  return first_difference(other).empty();
}

std::string NodeFactsKey::first_difference(const NodeFactsKey& other) const {
  for (const auto& f : kKeyFields)
    if (this->*f.field != other.*f.field) return f.words;
  return "";
}

std::string encode_node_facts(const NodeFactsKey& key, const Topology& t) {
  std::ostringstream out;
  out << kMagic << "\n";
  for (const auto& f : kKeyFields) out << "key " << f.name << " " << word(key.*f.field, f.name) << "\n";
  out << "topology " << word(t.source, "the topology source") << " " << cpus_word(t.cpus) << " "
      << t.cores.size() << " " << t.gpus.size() << " " << t.nics.size() << "\n";
  for (const auto& core : t.cores) out << "core " << cpus_word(core) << "\n";
  for (const auto& g : t.gpus)
    out << "gpu " << word(g.busid, "a bus id") << " " << word(g.name, "a GPU name") << " "
        << hex_id(g.vendor_id) << " " << hex_id(g.device_id) << " " << locality_words(g.locality)
        << "\n";
  for (const auto& n : t.nics) {
    out << "nic " << word(n.name, "a NIC name") << " " << nic_kind_name(n.kind) << " "
        << word(n.busid, "a bus id") << " " << n.ports.size() << " " << locality_words(n.locality)
        << "\n";
    for (const auto& p : n.ports)
      out << "port " << p.number << " " << (p.active ? 1 : 0) << " "
          << word(p.netdev, "an interface name") << " " << nic_kind_name(p.link) << "\n";
  }
  out << "end\n";
  return out.str();
}

DecodedNodeFacts decode_node_facts(const std::string& text) {
  Reader r(text);
  DecodedNodeFacts d;
  std::string magic;
  std::getline(r.in, magic);
  r.line_no = 1;
  if (magic != kMagic)
    throw r.error("not a node facts file of this format (" + plan::quoted(magic) + ")");
  for (const auto& f : kKeyFields) {
    if (!r.next()) throw r.error("ends before its key");
    r.expect("key", 3);
    if (r.words[1] != f.name) throw r.error("expected key " + std::string(f.name));
    d.key.*f.field = from_word(r.words[2]);
  }
  if (!r.next()) throw r.error("ends before its topology");
  r.expect("topology", 6);
  Topology& t = d.topology;
  t.source = from_word(r.words[1]);
  t.cpus = r.cpus(2);
  const auto cores = r.number(3, 1u << 20);
  const auto gpus = r.number(4, 1u << 10);
  const auto nics = r.number(5, 1u << 10);
  for (unsigned long long i = 0; i < cores; ++i) {
    if (!r.next()) throw r.error("ends inside its cores");
    r.expect("core", 2);
    t.cores.push_back(r.cpus(1));
  }
  for (unsigned long long i = 0; i < gpus; ++i) {
    if (!r.next()) throw r.error("ends inside its GPUs");
    r.expect("gpu", 9);
    Gpu g;
    g.busid = from_word(r.words[1]);
    g.name = from_word(r.words[2]);
    g.vendor_id = r.hex(3);
    g.device_id = r.hex(4);
    g.locality = r.locality(5);
    t.gpus.push_back(std::move(g));
  }
  for (unsigned long long i = 0; i < nics; ++i) {
    if (!r.next()) throw r.error("ends inside its NICs");
    r.expect("nic", 9);
    Nic n;
    n.name = from_word(r.words[1]);
    n.kind = nic_kind(r, 2);
    n.busid = from_word(r.words[3]);
    const auto ports = r.number(4, 256);
    n.locality = r.locality(5);
    for (unsigned long long j = 0; j < ports; ++j) {
      if (!r.next()) throw r.error("ends inside the ports of " + plan::quoted(n.name));
      r.expect("port", 5);
      NicPort p;
      p.number = static_cast<unsigned>(r.number(1, 999));
      if (r.words[2] != "0" && r.words[2] != "1") throw r.error("a port state is 0 or 1");
      p.active = r.words[2] == "1";
      p.netdev = from_word(r.words[3]);
      p.link = nic_kind(r, 4);
      n.ports.push_back(std::move(p));
    }
    t.nics.push_back(std::move(n));
  }
  if (!r.next()) throw r.error("ends without its end line (truncated)");
  r.expect("end", 1);
  if (r.next()) throw r.error("has lines after its end line");
  return d;
}

}  // namespace ddp::plan
