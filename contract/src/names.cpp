#include "names.hpp"

#include <algorithm>

namespace ddp::plan {

bool name_char(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' ||
         c == '_' || c == '.';
}

bool plain_name(std::string_view text, std::size_t max) {
  return !text.empty() && text.size() <= max && std::all_of(text.begin(), text.end(), name_char);
}

bool address_char(char c) {
  return name_char(c) || c == ':' || c == '%' || c == '[' || c == ']';
}

bool interface_name(std::string_view name) {
  return plain_name(name, 15) && name != "." && name != "..";
}

}  // namespace ddp::plan
