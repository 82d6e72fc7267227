#include "error_file.hpp"

#include <atomic>
#include <ctime>
#include <fstream>

#include <nlohmann/json.hpp>

#include "ddp/env_contract.hpp"

namespace ddp::detail {

std::string error_file_text(const std::string& message, long long unix_seconds) {
  const nlohmann::json j = {
      {"message",
       {{"message", message},
        {"extraInfo", {{"py_callstack", ""}, {"timestamp", std::to_string(unix_seconds)}}}}}};
  return j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

void record_error(const std::string& message, const EnvLookup& env) {
  static std::atomic<bool> recorded{false};
  const auto path = env(contract::kTorchelasticErrorFile);
  if (!path || path->empty() || recorded.exchange(true)) return;
  std::ofstream out(*path, std::ios::trunc);
  out << error_file_text(message, static_cast<long long>(std::time(nullptr)));
}

}  // namespace ddp::detail
