// The character rules for the names both sides of the contract check: host names, network
// interface names, profile and cluster names. One copy, so the plugin refuses exactly what the
// runtime refuses.
#pragma once

#include <cstddef>
#include <string_view>

namespace ddp::plan {

// A character of a host, interface, profile or cluster name: letters, digits, '-', '_' and '.'.
bool name_char(char c);

// 1..max name characters.
bool plain_name(std::string_view text, std::size_t max);

// A character of a host name or IP address as MASTER_ADDR may hold one: a name character, or ':',
// '%' (an IPv6 zone) and brackets.
bool address_char(char c);

// A network interface name as `ip link` shows it: 1..15 name characters (IFNAMSIZ is 16 with the
// NUL), not "." or "..".
bool interface_name(std::string_view name);

// interface_name() in words, for the messages of both sides.
inline constexpr const char* kInterfaceNameRule =
    "1-15 letters, digits, '_', '.' or '-'";

}  // namespace ddp::plan
