// SPDX-License-Identifier: MIT
// The live blocks of a trace by address, for analyzers that look one up on
// every event (tailor stats): open addressing with linear probing in one
// array, so a lookup is a multiply and, usually, one cache line, where
// std::unordered_map costs a node allocation per block and a pointer chase
// per lookup. Address 0 marks an empty slot: it is never live (failed
// allocations and free(NULL) are dropped before they reach the map).
// Removal shifts the following entries back, so no tombstones accumulate.
// Pointers to values are valid until the next insertion or removal.
#pragma once

#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <utility>
#include <vector>

namespace tailor::analyze {

template <class Value>
class AddressMap {
 public:
  AddressMap() { resize(1u << 16); }

  std::size_t size() const noexcept { return size_; }

  /// The value of `address`, or nullptr.
  Value* find(std::uint64_t address) noexcept {
    for (std::size_t i = home(address);; i = (i + 1) & mask_) {
      if (slots_[i].address == address) return &slots_[i].value;
      if (slots_[i].address == 0) return nullptr;
    }
  }

  /// The value of `address` and true if it was inserted (value-initialized) now.
  std::pair<Value*, bool> try_emplace(std::uint64_t address) {
    if (address == 0) throw std::invalid_argument("AddressMap: address 0 is never live");
    if (2 * (size_ + 1) > slots_.size()) resize(2 * slots_.size());
    std::size_t i = home(address);
    for (; slots_[i].address != 0; i = (i + 1) & mask_)
      if (slots_[i].address == address) return {&slots_[i].value, false};
    slots_[i].address = address;
    slots_[i].value = Value{};
    ++size_;
    return {&slots_[i].value, true};
  }

  /// Removes `address`, which must be in the map.
  void erase(std::uint64_t address) noexcept {
    std::size_t i = home(address);
    while (slots_[i].address != address) i = (i + 1) & mask_;
    remove_slot(i);
  }

  /// Removes `address` and moves its value to `out`; false (and `out`
  /// untouched) if it is not in the map. One probe where find + erase take two.
  bool take(std::uint64_t address, Value& out) noexcept {
    for (std::size_t i = home(address);; i = (i + 1) & mask_) {
      if (slots_[i].address == address) {
        out = std::move(slots_[i].value);
        remove_slot(i);
        return true;
      }
      if (slots_[i].address == 0) return false;
    }
  }

  template <class F>
  void for_each(F f) const {
    for (const Slot& s : slots_)
      if (s.address != 0) f(s.address, s.value);
  }

 private:
  struct Slot {
    std::uint64_t address = 0;
    Value value{};
  };

  // Empties slot i, which holds an entry.
  void remove_slot(std::size_t i) noexcept {
    // Backward shift: an entry further along the run moves into the hole when
    // the hole lies between its home slot and where it is.
    for (std::size_t j = (i + 1) & mask_; slots_[j].address != 0; j = (j + 1) & mask_) {
      if (((j - home(slots_[j].address)) & mask_) >= ((j - i) & mask_)) {
        slots_[i] = std::move(slots_[j]);
        i = j;
      }
    }
    slots_[i].address = 0;
    --size_;
  }

  // Fibonacci hashing: the product's high bits, which every address bit
  // reaches (block addresses share their low bits).
  std::size_t home(std::uint64_t address) const noexcept {
    return static_cast<std::size_t>((address * 0x9e3779b97f4a7c15ULL) >> shift_);
  }

  void resize(std::size_t capacity) {
    std::vector<Slot> old = std::move(slots_);
    slots_.assign(capacity, Slot{});
    mask_ = capacity - 1;
    shift_ = 64 - static_cast<unsigned>(__builtin_ctzll(capacity));
    size_ = 0;
    for (Slot& s : old)
      if (s.address != 0) {
        std::size_t i = home(s.address);
        while (slots_[i].address != 0) i = (i + 1) & mask_;
        slots_[i] = std::move(s);
        ++size_;
      }
  }

  std::vector<Slot> slots_;
  std::size_t mask_ = 0;
  unsigned shift_ = 64;
  std::size_t size_ = 0;
};

}  // namespace tailor::analyze
