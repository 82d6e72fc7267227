#include "user_chain.hpp"

#include <nlohmann/json.hpp>

#include <utility>
#include <vector>

#include "error.hpp"
#include "parse.hpp"
#include "profile_detail.hpp"

namespace ddp::plan {
namespace {

using profile_detail::dir_of;
using profile_detail::ProfileShelf;
using Texts = std::vector<std::pair<std::string, std::string>>;

[[noreturn]] void garbled(const std::string& path, const std::string& why) {
  throw PlanError("--ddp-profile=" + plan::quoted(path) + ": the copy srun sent with the step (" +
                  kUserProfileVar + ") " + why +
                  ". Fix: do not set " + kUserProfileVar +
                  " yourself; run the step with the cluster's own srun");
}

// {"files": [{"path": string, "text": string}, ...]}: nothing nests deeper than 3.
Texts decode(const std::string& path, std::string_view packed) {
  const auto too_deep = [](int depth, nlohmann::json::parse_event_t, nlohmann::json&) {
    if (depth > 3) throw PlanError("nests deeper than its format");
    return true;
  };
  nlohmann::json doc;
  try {
    doc = nlohmann::json::parse(packed.begin(), packed.end(), too_deep);
  } catch (const std::exception&) {
    // The parser's own words quote what it read: the user's, and unbounded.
    garbled(path, "is not what srun writes (JSON of its format)");
  }
  const auto files = doc.is_object() ? doc.find("files") : doc.end();
  if (files == doc.end() || !files->is_array() || files->empty())
    garbled(path, "has no list of files");
  Texts texts;
  for (const auto& f : *files) {
    const auto p = f.is_object() ? f.find("path") : f.end();
    const auto t = f.is_object() ? f.find("text") : f.end();
    if (p == f.end() || t == f.end() || !p->is_string() || !t->is_string())
      garbled(path, "holds a file without a path or a text");
    texts.emplace_back(p->get<std::string>(), t->get<std::string>());
  }
  if (texts.front().first != path)
    garbled(path, "is for " + plan::quoted(texts.front().first) + ", not this file");
  // Every path is DIR/NAME.yaml beside the named file, NAME a profile name: what later messages
  // say of them is then plain text.
  for (const auto& entry : texts) {
    const std::string& p = entry.first;
    const auto stem = profile_detail::stem_of(p);
    bool named = stem && dir_of(p) == dir_of(path);
    try {
      if (named) check_profile_name("file", *stem);
    } catch (const PlanError&) {
      named = false;
    }
    if (!named) garbled(path, "holds " + plan::quoted(p) + ", which is no profile file beside it");
  }
  return texts;
}

}  // namespace

std::string pack_user_chain(const std::string& path) {
  ProfileShelf shelf = ProfileShelf::directory(dir_of(path));
  const Profile profile = profile_detail::load_chain(shelf.file_at(path), shelf);
  nlohmann::json files = nlohmann::json::array();
  for (const std::string& file : profile.files)
    files.push_back({{"path", file}, {"text", shelf.text_at(file)}});
  const std::string packed = nlohmann::json{{"files", std::move(files)}}.dump(
      -1, ' ', /*ensure_ascii=*/true, nlohmann::json::error_handler_t::replace);
  if (packed.size() > kMaxUserChainBytes)
    throw PlanError("--ddp-profile=" + plan::quoted(path) + ": the profile and the " +
                    std::to_string(profile.files.size() - 1) + " it extends come to " +
                    std::to_string(packed.size() / 1024) + " KiB, and at most " +
                    std::to_string(kMaxUserChainBytes / 1024) +
                    " KiB travel with a step. Fix: keep your own profiles short (a few "
                    "kilobytes), or ask the admin to install the large one as a site profile");
  return packed;
}

Profile unpack_user_chain(const std::string& path, std::string_view packed) {
  if (packed.size() > kMaxUserChainBytes)
    garbled(path, "is larger than " + std::to_string(kMaxUserChainBytes / 1024) + " KiB");
  ProfileShelf shelf = ProfileShelf::of_texts(dir_of(path), decode(path, packed));
  return profile_detail::load_chain(shelf.file_at(path), shelf);
}

}  // namespace ddp::plan
