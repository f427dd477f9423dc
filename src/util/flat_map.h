// SPDX-License-Identifier: MIT
// A map from 64-bit keys to values, for code that looks one up on every
// event of a trace (tailor stats' live blocks, sizes and call sites; the
// simulator's address -> block id while it builds a replay): open
// addressing with linear probing in one array, so a lookup is a multiply
// and, usually, one cache line, where std::unordered_map costs a node
// allocation per entry and a pointer chase per lookup.
//
// Key 0 marks an empty slot, so key 0 itself (a request of 0 bytes, an
// unknown call site) lives in a slot of its own beside the array. Removal
// shifts the following entries of the run back, so no tombstones
// accumulate. Pointers to values are valid until the next insertion or
// removal.
#pragma once

#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

#include "util/random.h"

namespace tailor::util {

template <class Value>
class FlatMap {
 public:
  /// An empty map with room for about capacity / 2 entries before it grows
  /// (capacity: a power of two).
  explicit FlatMap(std::size_t capacity = 64) { resize(capacity); }

  std::size_t size() const noexcept { return size_ + (has_zero_ ? 1 : 0); }

  /// The value of `key`, or nullptr.
  Value* find(std::uint64_t key) noexcept {
    if (key == 0) [[unlikely]]
      return has_zero_ ? &zero_ : nullptr;
    for (std::size_t i = home(key);; i = (i + 1) & mask_) {
      if (slots_[i].key == key) return &slots_[i].value;
      if (slots_[i].key == 0) return nullptr;
    }
  }

  /// The value of `key` and true if it was inserted (value-initialized) now.
  std::pair<Value*, bool> try_emplace(std::uint64_t key) {
    if (key == 0) [[unlikely]] {
      const bool fresh = !has_zero_;
      if (fresh) {
        has_zero_ = true;
        zero_ = Value{};
      }
      return {&zero_, fresh};
    }
    std::size_t i = home(key);
    for (; slots_[i].key != 0; i = (i + 1) & mask_)
      if (slots_[i].key == key) return {&slots_[i].value, false};
    if (2 * (size_ + 1) > slots_.size()) {  // grow, then find the key's free slot again
      resize(2 * slots_.size());
      for (i = home(key); slots_[i].key != 0; i = (i + 1) & mask_) {
      }
    }
    slots_[i].key = key;
    slots_[i].value = Value{};
    ++size_;
    return {&slots_[i].value, true};
  }

  Value& operator[](std::uint64_t key) { return *try_emplace(key).first; }

  /// Removes `key`, which must be in the map.
  void erase(std::uint64_t key) noexcept {
    if (key == 0) [[unlikely]] {
      has_zero_ = false;
      return;
    }
    std::size_t i = home(key);
    while (slots_[i].key != key) i = (i + 1) & mask_;
    remove_slot(i);
  }

  /// Removes `key` and moves its value to `out`; false (and `out`
  /// untouched) if it is not in the map. One probe where find + erase take two.
  bool take(std::uint64_t key, Value& out) noexcept {
    if (key == 0) [[unlikely]] {
      if (!has_zero_) return false;
      out = std::move(zero_);
      has_zero_ = false;
      return true;
    }
    for (std::size_t i = home(key);; i = (i + 1) & mask_) {
      if (slots_[i].key == key) {
        out = std::move(slots_[i].value);
        remove_slot(i);
        return true;
      }
      if (slots_[i].key == 0) return false;
    }
  }

  /// f(key, value) for every entry, in no particular order.
  template <class F>
  void for_each(F f) const {
    if (has_zero_) f(std::uint64_t{0}, zero_);
    for (const Slot& s : slots_)
      if (s.key != 0) f(s.key, s.value);
  }

 private:
  struct Slot {
    std::uint64_t key = 0;
    Value value{};
  };

  // Empties slot i, which holds an entry.
  void remove_slot(std::size_t i) noexcept {
    // Backward shift: an entry further along the run moves into the hole when
    // the hole lies between its home slot and where it is.
    for (std::size_t j = (i + 1) & mask_; slots_[j].key != 0; j = (j + 1) & mask_) {
      if (((j - home(slots_[j].key)) & mask_) >= ((j - i) & mask_)) {
        slots_[i] = std::move(slots_[j]);
        i = j;
      }
    }
    slots_[i].key = 0;
    --size_;
  }

  // Fibonacci hashing: the product's high bits, which every key bit reaches
  // (block addresses share their low bits).
  std::size_t home(std::uint64_t key) const noexcept { return static_cast<std::size_t>((key * kGoldenGamma) >> shift_); }

  void resize(std::size_t capacity) {
    std::vector<Slot> old = std::move(slots_);
    slots_.assign(capacity, Slot{});
    mask_ = capacity - 1;
    shift_ = 64 - static_cast<unsigned>(__builtin_ctzll(capacity));
    for (Slot& s : old)
      if (s.key != 0) {
        std::size_t i = home(s.key);
        while (slots_[i].key != 0) i = (i + 1) & mask_;
        slots_[i] = std::move(s);
      }
  }

  std::vector<Slot> slots_;
  std::size_t mask_ = 0;
  unsigned shift_ = 64;
  std::size_t size_ = 0;  // in slots_ (key 0 not counted)
  bool has_zero_ = false;
  Value zero_{};
};

}  // namespace tailor::util
