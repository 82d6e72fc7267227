#include "names.hpp"

#include <gtest/gtest.h>

#include "local_host.hpp"

namespace p = ddp::plan;

TEST(Names, InterfaceNamesAsIpLinkShowsThem) {
  for (const char* ok : {"ib0", "eth0", "ens1f0np0", "hsn0", "bond0.100", "a_b-c", "123456789012345"})
    EXPECT_TRUE(p::interface_name(ok)) << ok;
  for (const char* bad : {"", ".", "..", "1234567890123456", "eth0,eth1", "^ib", "e th0", "a/b", "=ib0"})
    EXPECT_FALSE(p::interface_name(bad)) << bad;
}

TEST(Names, AddressCharactersAddIpv6ToNames) {
  for (char c : std::string("az09-_.:%[]")) EXPECT_TRUE(p::address_char(c)) << c;
  for (char c : std::string(" ;$'\"`/\\,\n")) EXPECT_FALSE(p::address_char(c)) << c;
  for (char c : std::string(":%[]")) EXPECT_FALSE(p::name_char(c)) << c;
}

TEST(Names, PlainNamesHaveALengthLimit) {
  EXPECT_TRUE(p::plain_name("vega", 4));
  EXPECT_FALSE(p::plain_name("vega", 3));
  EXPECT_FALSE(p::plain_name("", 3));
}

TEST(LocalHost, NamesThisMachine) {
  const auto name = p::local_host_name();
  ASSERT_TRUE(name.has_value());
  EXPECT_FALSE(name->empty());
}
