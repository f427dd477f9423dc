// SPDX-License-Identifier: MIT
// The live sampled blocks (sampled_set.h): the filter's bits with a count
// of the blocks behind each, and an open-addressing table of the addresses
// (linear probing, deletion by backward shift), both in memory of its own
// (mmap), under one lock: samples are rare.
#include "record/sampled_set.h"

#include <pthread.h>
#include <sys/mman.h>

namespace tailor::record::sampled_set {

namespace {

constexpr std::array<std::uint64_t, kFilterWords> all_ones() {
  std::array<std::uint64_t, kFilterWords> a{};
  for (auto& w : a) w = ~std::uint64_t{0};
  return a;
}

pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
std::uint16_t* counts = nullptr;      // mu: live sampled blocks per filter bit
std::uintptr_t* slots = nullptr;      // mu: the table (0: empty)
std::size_t capacity = 0, used = 0;   // mu

std::size_t bit_of(std::uintptr_t a) { return (a >> 4) & ((std::size_t{1} << kFilterBits) - 1); }
std::size_t home(std::uintptr_t a, std::size_t cap) { return ((a >> 4) * 0x9E3779B97F4A7C15ull) >> 20 & (cap - 1); }

void* map(std::size_t bytes) {
  void* p = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  return p == MAP_FAILED ? nullptr : p;
}

void place(std::uintptr_t* table, std::size_t cap, std::uintptr_t a) {
  std::size_t i = home(a, cap);
  while (table[i] != 0) i = (i + 1) & (cap - 1);
  table[i] = a;
}

// Doubles the table (mu held).
bool grow() {
  const std::size_t cap = capacity ? capacity * 2 : 1024;
  auto* table = static_cast<std::uintptr_t*>(map(cap * sizeof(std::uintptr_t)));
  if (!table) return false;
  for (std::size_t i = 0; i < capacity; ++i)
    if (slots[i]) place(table, cap, slots[i]);
  if (slots) munmap(slots, capacity * sizeof(std::uintptr_t));
  slots = table;
  capacity = cap;
  return true;
}

struct Locked {
  Locked() noexcept { pthread_mutex_lock(&mu); }
  ~Locked() { pthread_mutex_unlock(&mu); }
  Locked(const Locked&) = delete;
  Locked& operator=(const Locked&) = delete;
};

}  // namespace

constinit std::array<std::uint64_t, kFilterWords> filter = all_ones();

bool init() noexcept {
  Locked l;
  counts = static_cast<std::uint16_t*>(map((std::size_t{1} << kFilterBits) * sizeof(std::uint16_t)));
  if (!counts || !grow()) return false;
  for (auto& w : filter) __atomic_store_n(&w, 0, __ATOMIC_RELAXED);
  return true;
}

bool insert(const void* p) noexcept {
  const auto a = reinterpret_cast<std::uintptr_t>(p);
  Locked l;
  if ((used + 1) * 4 > capacity * 3 && !grow()) return false;
  const std::size_t bit = bit_of(a);
  if (counts[bit] == UINT16_MAX) return false;
  place(slots, capacity, a);
  ++used;
  if (counts[bit]++ == 0) __atomic_fetch_or(&filter[bit >> 6], std::uint64_t{1} << (bit & 63), __ATOMIC_RELAXED);
  return true;
}

bool remove(const void* p) noexcept {
  const auto a = reinterpret_cast<std::uintptr_t>(p);
  Locked l;
  if (capacity == 0) return false;
  std::size_t i = home(a, capacity);
  while (slots[i] != a) {
    if (slots[i] == 0) return false;
    i = (i + 1) & (capacity - 1);
  }
  // Backward-shift deletion: move later members of the probe run into the hole.
  for (std::size_t j = (i + 1) & (capacity - 1); slots[j] != 0; j = (j + 1) & (capacity - 1)) {
    const std::size_t h = home(slots[j], capacity);
    if (((j - h) & (capacity - 1)) >= ((j - i) & (capacity - 1))) {
      slots[i] = slots[j];
      i = j;
    }
  }
  slots[i] = 0;
  --used;
  const std::size_t bit = bit_of(a);
  if (--counts[bit] == 0) __atomic_fetch_and(&filter[bit >> 6], ~(std::uint64_t{1} << (bit & 63)), __ATOMIC_RELAXED);
  return true;
}

void after_fork_child() noexcept { mu = PTHREAD_MUTEX_INITIALIZER; }

}  // namespace tailor::record::sampled_set
