// SPDX-License-Identifier: MIT
// tailor::map: std::map's interface on the path-hinting red-black tree of
// locality/tree.h (nodes placed by the Path predicate by default), plus the
// map-only members: at, operator[], try_emplace, insert_or_assign.
#pragma once

#include <functional>
#include <stdexcept>
#include <tuple>
#include <utility>

#include "allocator.h"
#include "locality/dynamism.h"
#include "locality/tree.h"

namespace tailor {

template <class Key, class T, class Compare = std::less<Key>,
          class Allocator = tailor::allocator<std::pair<const Key, T>, locality::Path>, class Dynamism = no_dynamism>
class map : public locality::detail::rb_tree<Key, std::pair<const Key, T>, locality::detail::first_key, Compare,
                                             Allocator, Dynamism, false> {
  using tree = locality::detail::rb_tree<Key, std::pair<const Key, T>, locality::detail::first_key, Compare, Allocator,
                                         Dynamism, false>;

 public:
  using mapped_type = T;
  using value_type = std::pair<const Key, T>;
  using typename tree::iterator;
  using typename tree::const_iterator;
  struct value_compare {
    Compare comp;
    bool operator()(const value_type& a, const value_type& b) const { return comp(a.first, b.first); }
  };

  using tree::tree;
  map() = default;
  map(std::initializer_list<value_type> il, const Compare& c = Compare(), const Allocator& a = Allocator())
      : tree(il, c, a) {}
  value_compare value_comp() const { return {this->key_comp()}; }

  using tree::insert;
  template <class P>
    requires std::is_constructible_v<value_type, P&&>
  std::pair<iterator, bool> insert(P&& p) {
    return this->emplace(std::forward<P>(p));
  }

  T& at(const Key& k) {
    auto it = this->find(k);
    if (it == this->end()) throw std::out_of_range("tailor::map::at");
    return it->second;
  }
  const T& at(const Key& k) const {
    auto it = this->find(k);
    if (it == this->end()) throw std::out_of_range("tailor::map::at");
    return it->second;
  }
  T& operator[](const Key& k) { return try_emplace(k).first->second; }
  T& operator[](Key&& k) { return try_emplace(std::move(k)).first->second; }

  template <class... Args>
  std::pair<iterator, bool> try_emplace(const Key& k, Args&&... args) {
    return this->emplace_key(k, std::piecewise_construct, std::forward_as_tuple(k),
                             std::forward_as_tuple(std::forward<Args>(args)...));
  }
  template <class... Args>
  std::pair<iterator, bool> try_emplace(Key&& k, Args&&... args) {
    return this->emplace_key(k, std::piecewise_construct, std::forward_as_tuple(std::move(k)),
                             std::forward_as_tuple(std::forward<Args>(args)...));
  }
  template <class M>
  std::pair<iterator, bool> insert_or_assign(const Key& k, M&& m) {
    auto r = try_emplace(k, std::forward<M>(m));
    if (!r.second) r.first->second = std::forward<M>(m);
    return r;
  }
  friend void swap(map& a, map& b) noexcept { a.swap(b); }
};

}  // namespace tailor
