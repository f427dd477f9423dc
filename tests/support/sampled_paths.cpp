// SPDX-License-Identifier: MIT
// Known amounts from known paths, for `tailor record --sample`
// (tests/record/stats_exact_test.cpp, "Sampling"): what the estimates of a
// sampled trace must come near, and every way a sampled block can end.
//   hold_small   20 000 blocks of 64 bytes       } all live at once: the
//   hold_medium   2 000 blocks of 4 000 bytes     } peak is 9 280 000 bytes
//   hold_large       10 blocks of 200 000 bytes   } (plus churn's one block)
// then all freed, half of hold_medium's by a second thread; then
//   churn        400 000 malloc(32)/free pairs
//   grow         one buffer realloc'ed from 16 bytes to 1 MiB by doubling, freed
//   news         100 000 new int[16] / delete[] pairs, 1 000 kept (leaked)
//   leak         300 blocks of 1 000 bytes never freed
// Exits 0.
#include <pthread.h>

#include <cstdlib>
#include <cstring>
#include <vector>

#include "keep.h"

namespace {

using tailor::test::keep;

constexpr int kSmall = 20000, kMedium = 2000, kLarge = 10;

__attribute__((noinline)) void hold_small(std::vector<void*>& v) {
  for (int i = 0; i < kSmall; ++i) v.push_back(keep(std::malloc(64)));
}
__attribute__((noinline)) void hold_medium(std::vector<void*>& v) {
  for (int i = 0; i < kMedium; ++i) v.push_back(keep(std::malloc(4000)));
}
__attribute__((noinline)) void hold_large(std::vector<void*>& v) {
  for (int i = 0; i < kLarge; ++i) v.push_back(keep(std::calloc(1, 200000)));
}
__attribute__((noinline)) void churn() {
  for (int i = 0; i < 400000; ++i) std::free(keep(std::malloc(32)));
}
__attribute__((noinline)) void grow() {
  void* p = std::malloc(16);
  for (std::size_t n = 32; n <= (std::size_t{1} << 20); n *= 2) p = keep(std::realloc(p, n));
  std::free(p);
}
__attribute__((noinline)) void news() {
  for (int i = 0; i < 100000; ++i) {
    int* a = new int[16];
    keep(a);
    if (i % 100 == 0) continue;  // 1 000 kept
    delete[] a;
  }
}
__attribute__((noinline)) void leak() {
  for (int i = 0; i < 300; ++i) keep(std::malloc(1000));
}

void* free_half(void* arg) {
  auto* v = static_cast<std::vector<void*>*>(arg);
  for (std::size_t i = 0; i < v->size(); i += 2) std::free((*v)[i]);
  return nullptr;
}

}  // namespace

int main() {
  std::vector<void*> small, medium, large;
  small.reserve(kSmall);
  medium.reserve(kMedium);
  large.reserve(kLarge);
  hold_small(small);
  hold_medium(medium);
  hold_large(large);
  pthread_t t;
  if (pthread_create(&t, nullptr, free_half, &medium) != 0) return 1;
  pthread_join(t, nullptr);
  for (std::size_t i = 1; i < medium.size(); i += 2) std::free(medium[i]);
  for (void* p : small) std::free(p);
  for (void* p : large) std::free(p);
  churn();
  grow();
  news();
  leak();
  return 0;
}
