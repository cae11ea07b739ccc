// StringIndex: every string finds its own id and no other, across lengths that take
// each path of the hash (short, the 4-byte pair, whole words and an overlapping tail).
#include "base/string_index.h"

#include <gtest/gtest.h>

#include <random>
#include <string>
#include <unordered_set>
#include <vector>

namespace torch2pprof {
namespace {

TEST(StringIndex, EachStringFindsItsOwnId) {
  std::mt19937 rng(3);
  std::vector<std::string> texts;
  std::unordered_set<std::string> seen;
  for (size_t len = 0; len <= 40; ++len) {
    for (int k = 0; k < 2000; ++k) {
      std::string s(len, 'a');
      for (char& c : s) c = static_cast<char>('a' + rng() % 3);  // few letters: near misses
      if (seen.insert(s).second) texts.push_back(s);
    }
  }
  // Strings that differ only in bytes the overlapping tail reads twice, or only by a NUL.
  for (const std::string& s :
       std::vector<std::string>{"abcdefghij", "abcdefghiJ", "abcdefgHij", std::string("abc\0", 4), "abc"}) {
    if (seen.insert(s).second) texts.push_back(s);
  }
  std::vector<std::string_view> views;
  StringIndex index;
  for (const std::string& s : texts) {
    uint32_t hash = StringIndex::Hash(s);
    ASSERT_EQ(index.Find(s, hash, views), StringIndex::kNone) << s;
    index.Insert(hash, static_cast<uint32_t>(views.size()));
    views.push_back(s);
  }
  for (size_t id = 0; id < texts.size(); ++id) {
    ASSERT_EQ(index.Find(texts[id], StringIndex::Hash(texts[id]), views), id) << texts[id];
  }
  EXPECT_EQ(index.Find("not there", StringIndex::Hash("not there"), views), StringIndex::kNone);
  index.Clear();
  EXPECT_EQ(index.Find(texts[5], StringIndex::Hash(texts[5]), views), StringIndex::kNone);
}

}  // namespace
}  // namespace torch2pprof
