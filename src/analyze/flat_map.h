// SPDX-License-Identifier: MIT
// A map from any 64-bit key to a small value, for the per-event counters of
// tailor stats (request sizes, call sites): open addressing with linear
// probing in one array, as AddressMap, but every key is allowed. Key 0 (a
// request of 0 bytes, an unknown call site) does not fit the "0 is empty"
// mark of the slots, so it lives in a slot of its own beside the array.
// Insertion and lookup only (the counters never forget a key). Pointers to
// values are valid until the next insertion.
#pragma once

#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

namespace tailor::analyze {

template <class Value>
class FlatMap {
 public:
  FlatMap() { resize(64); }

  std::size_t size() const noexcept { return size_ + (has_zero_ ? 1 : 0); }

  /// The value of `key`, or nullptr.
  Value* find(std::uint64_t key) noexcept {
    if (key == 0) return has_zero_ ? &zero_ : nullptr;
    for (std::size_t i = home(key);; i = (i + 1) & mask_) {
      if (slots_[i].key == key) return &slots_[i].value;
      if (slots_[i].key == 0) return nullptr;
    }
  }

  /// The value of `key` and true if it was inserted (value-initialized) now.
  std::pair<Value*, bool> try_emplace(std::uint64_t key) {
    if (key == 0) {
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
      for (i = home(key); slots_[i].key != 0; i = (i + 1) & mask_) {}
    }
    slots_[i].key = key;
    slots_[i].value = Value{};
    ++size_;
    return {&slots_[i].value, true};
  }

  Value& operator[](std::uint64_t key) { return *try_emplace(key).first; }

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

  // Fibonacci hashing: the product's high bits, which every key bit reaches.
  std::size_t home(std::uint64_t key) const noexcept {
    return static_cast<std::size_t>((key * 0x9e3779b97f4a7c15ULL) >> shift_);
  }

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

}  // namespace tailor::analyze
