// SPDX-License-Identifier: MIT
// tailor::set: std::set's interface on the path-hinting red-black tree of
// locality/tree.h. By default its nodes come from tailor::allocator with the
// Path predicate, so keys that are close in value share K-classes; the
// fourth parameter counts dynamism (locality/dynamism.h).
#pragma once

#include <functional>

#include "allocator.h"
#include "locality/dynamism.h"
#include "locality/tree.h"

namespace tailor {

template <class Key, class Compare = std::less<Key>, class Allocator = tailor::allocator<Key, locality::Path>,
          class Dynamism = no_dynamism>
class set : public locality::detail::rb_tree<Key, Key, locality::detail::identity_key, Compare, Allocator, Dynamism,
                                             true> {
  using tree = locality::detail::rb_tree<Key, Key, locality::detail::identity_key, Compare, Allocator, Dynamism, true>;

 public:
  using value_compare = Compare;
  using tree::tree;
  set() = default;
  set(std::initializer_list<Key> il, const Compare& c = Compare(), const Allocator& a = Allocator())
      : tree(il, c, a) {}
  value_compare value_comp() const { return this->key_comp(); }
  friend void swap(set& a, set& b) noexcept { a.swap(b); }
};

}  // namespace tailor
