#include "human_text.hpp"

#include <cstdio>
#include <ctime>

namespace ddp::plan {

std::string fixed_text(double v, int digits) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", digits, v);
  return buf;
}

std::string duration_text(double s) {
  if (s < 120) return fixed_text(s, 1) + " s";
  if (s < 7200) return fixed_text(s / 60, 1) + " min";
  return fixed_text(s / 3600, 1) + " h";
}

std::string local_time_text(const char* format) {
  const std::time_t t = std::time(nullptr);
  std::tm tm{};
  localtime_r(&t, &tm);
  char buf[64];
  return std::strftime(buf, sizeof buf, format, &tm) ? buf : "";
}

}  // namespace ddp::plan
