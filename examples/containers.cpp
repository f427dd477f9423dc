// SPDX-License-Identifier: MIT
// A C++ program on the installed locality library: tailor::list and
// tailor::map (nodes placed by hints from the containers) checked against
// std::list and std::map on the same operations.
#include <tailor/list.h>
#include <tailor/map.h>

#include <cstdio>
#include <list>
#include <map>
#include <string>

int main() {
  tailor::list<int> list;
  std::list<int> list_expected;
  for (int i = 0; i < 5000; ++i) {
    if (i % 3 == 0) {
      list.push_front(i);
      list_expected.push_front(i);
    } else {
      list.push_back(i);
      list_expected.push_back(i);
    }
  }
  list.remove_if([](int v) { return v % 5 == 0; });
  list_expected.remove_if([](int v) { return v % 5 == 0; });

  tailor::map<int, std::string> map;
  std::map<int, std::string> map_expected;
  for (int i = 0; i < 5000; ++i) {
    const int key = (i * 7919) % 5003;
    map[key] = std::to_string(i);
    map_expected[key] = std::to_string(i);
  }
  for (int key = 0; key < 5003; key += 4) {
    map.erase(key);
    map_expected.erase(key);
  }

  const bool same_list = std::equal(list.begin(), list.end(), list_expected.begin(), list_expected.end());
  const bool same_map = std::equal(map.begin(), map.end(), map_expected.begin(), map_expected.end());
  std::printf("containers: list %zu elements %s, map %zu entries %s\n", list.size(),
              same_list ? "as std::list" : "DIFFERENT from std::list", map.size(),
              same_map ? "as std::map" : "DIFFERENT from std::map");
  return same_list && same_map ? 0 : 1;
}
