// SPDX-License-Identifier: MIT
// The red-black tree behind tailor::set and tailor::map (unique keys). What
// sets it apart from the std trees: insertion first finds the new node's
// place, recording the turns from the root (tree_path.h), and only then
// allocates the node, giving the allocator that path and the parent's
// address (allocate_on_path when the allocator has it, as tailor::allocator
// does; the standard hint overload with the parent otherwise). With the Path
// predicate, nodes whose keys are close end up close in memory.
// The balancing is rb_tree_core.h, shared with the locality heap.
#pragma once

#include <algorithm>
#include <compare>
#include <cstddef>
#include <functional>
#include <initializer_list>
#include <iterator>
#include <memory>
#include <type_traits>
#include <utility>

#include "../allocator.h"
#include "dynamism.h"
#include "rb_tree_core.h"
#include "tree_path.h"

namespace tailor::locality::detail {

template <class V>
struct tree_node : rb_node {
  V value;
};

template <class V, bool Const, bool Counted>
class tree_iterator {
  template <class, class, class, class, class, class, bool>
  friend class rb_tree;
  template <class, bool, bool>
  friend class tree_iterator;

 public:
  using iterator_category = std::bidirectional_iterator_tag;
  using value_type = V;
  using difference_type = std::ptrdiff_t;
  using pointer = std::conditional_t<Const, const V*, V*>;
  using reference = std::conditional_t<Const, const V&, V&>;

  tree_iterator() = default;
  template <bool C = Const, class = std::enable_if_t<C>>
  tree_iterator(const tree_iterator<V, false, Counted>& o) noexcept : n_(o.n_), steps_(o.steps_) {}

  reference operator*() const noexcept { return static_cast<tree_node<V>*>(n_)->value; }
  pointer operator->() const noexcept { return std::addressof(**this); }
  tree_iterator& operator++() noexcept {
    n_ = rb_increment(n_);
    steps_.tick();
    return *this;
  }
  tree_iterator operator++(int) noexcept {
    tree_iterator old = *this;
    ++*this;
    return old;
  }
  tree_iterator& operator--() noexcept {
    n_ = rb_decrement(n_);
    steps_.tick();
    return *this;
  }
  tree_iterator operator--(int) noexcept {
    tree_iterator old = *this;
    --*this;
    return old;
  }
  friend bool operator==(const tree_iterator& a, const tree_iterator& b) noexcept { return a.n_ == b.n_; }

 private:
  tree_iterator(rb_node* n, step_counter<Counted> s) noexcept : n_(n), steps_(s) {}
  rb_node* n_ = nullptr;
  [[no_unique_address]] step_counter<Counted> steps_{};
};

/// KeyOf(value) gives the key; IsSet makes iterator a const iterator.
template <class Key, class V, class KeyOf, class Compare, class Allocator, class Dynamism, bool IsSet>
class rb_tree {
  using node = tree_node<V>;
  using alloc_traits = std::allocator_traits<Allocator>;
  using node_alloc = typename alloc_traits::template rebind_alloc<node>;
  using node_traits = std::allocator_traits<node_alloc>;
  static constexpr bool kCounted = Dynamism::enabled;

 public:
  using key_type = Key;
  using value_type = V;
  using size_type = std::size_t;
  using difference_type = std::ptrdiff_t;
  using key_compare = Compare;
  using allocator_type = Allocator;
  using reference = V&;
  using const_reference = const V&;
  using pointer = typename alloc_traits::pointer;
  using const_pointer = typename alloc_traits::const_pointer;
  using iterator = tree_iterator<V, IsSet, kCounted>;
  using const_iterator = tree_iterator<V, true, kCounted>;
  using reverse_iterator = std::reverse_iterator<iterator>;
  using const_reverse_iterator = std::reverse_iterator<const_iterator>;
  /// The bytes of one node, as requested from the allocator (benchmarks
  /// warm the heap up with blocks of this size).
  static constexpr std::size_t node_bytes = sizeof(node);

  rb_tree() : rb_tree(Compare(), Allocator()) {}
  explicit rb_tree(const Compare& c, const Allocator& a = Allocator()) : comp_(c), alloc_(a) {}
  explicit rb_tree(const Allocator& a) : comp_(), alloc_(a) {}
  template <std::input_iterator It>
  rb_tree(It first, It last, const Compare& c = Compare(), const Allocator& a = Allocator()) : rb_tree(c, a) {
    insert(first, last);
  }
  template <std::input_iterator It>
  rb_tree(It first, It last, const Allocator& a) : rb_tree(Compare(), a) {
    insert(first, last);
  }
  rb_tree(std::initializer_list<V> il, const Compare& c = Compare(), const Allocator& a = Allocator())
      : rb_tree(il.begin(), il.end(), c, a) {}
  rb_tree(std::initializer_list<V> il, const Allocator& a) : rb_tree(il.begin(), il.end(), Compare(), a) {}
  rb_tree(const rb_tree& o) : rb_tree(o, alloc_traits::select_on_container_copy_construction(o.get_allocator())) {}
  rb_tree(const rb_tree& o, const Allocator& a) : rb_tree(o.comp_, a) { insert(o.begin(), o.end()); }
  rb_tree(rb_tree&& o) noexcept : comp_(o.comp_), alloc_(std::move(o.alloc_)) { steal(o); }
  rb_tree(rb_tree&& o, const Allocator& a) : rb_tree(o.comp_, a) {
    if (alloc_ == o.alloc_) {
      steal(o);
    } else {
      for (auto& v : o) emplace(std::move(const_cast<V&>(v)));
      o.clear();
    }
  }
  ~rb_tree() { clear(); }

  rb_tree& operator=(const rb_tree& o) {
    if (this == &o) return *this;
    clear();
    if constexpr (alloc_traits::propagate_on_container_copy_assignment::value) alloc_ = o.alloc_;
    comp_ = o.comp_;
    insert(o.begin(), o.end());
    return *this;
  }
  rb_tree& operator=(rb_tree&& o) noexcept(alloc_traits::is_always_equal::value ||
                                           alloc_traits::propagate_on_container_move_assignment::value) {
    if (this == &o) return *this;
    clear();
    comp_ = o.comp_;
    if constexpr (alloc_traits::propagate_on_container_move_assignment::value) {
      alloc_ = std::move(o.alloc_);
      steal(o);
    } else if (alloc_ == o.alloc_) {
      steal(o);
    } else {
      for (auto& v : o) emplace(std::move(const_cast<V&>(v)));
      o.clear();
    }
    return *this;
  }
  rb_tree& operator=(std::initializer_list<V> il) {
    clear();
    insert(il);
    return *this;
  }

  allocator_type get_allocator() const noexcept { return allocator_type(alloc_); }
  key_compare key_comp() const { return comp_; }

  iterator begin() noexcept { return {header_.left, counter()}; }
  const_iterator begin() const noexcept { return {header_.left, counter()}; }
  const_iterator cbegin() const noexcept { return begin(); }
  iterator end() noexcept { return {&header_, counter()}; }
  const_iterator end() const noexcept { return {const_cast<rb_header*>(&header_), counter()}; }
  const_iterator cend() const noexcept { return end(); }
  reverse_iterator rbegin() noexcept { return reverse_iterator(end()); }
  const_reverse_iterator rbegin() const noexcept { return const_reverse_iterator(end()); }
  const_reverse_iterator crbegin() const noexcept { return rbegin(); }
  reverse_iterator rend() noexcept { return reverse_iterator(begin()); }
  const_reverse_iterator rend() const noexcept { return const_reverse_iterator(begin()); }
  const_reverse_iterator crend() const noexcept { return rend(); }

  [[nodiscard]] bool empty() const noexcept { return size_ == 0; }
  size_type size() const noexcept { return size_; }
  size_type max_size() const noexcept { return node_traits::max_size(alloc_); }

  void clear() noexcept {
    dyn_.modify(size_);
    destroy_subtree(header_.root());
    header_.reset();
    size_ = 0;
  }

  std::pair<iterator, bool> insert(const V& v) { return emplace_key(KeyOf()(v), v); }
  std::pair<iterator, bool> insert(V&& v) { return emplace_key(KeyOf()(v), std::move(v)); }
  /// The position hint is not used: insertion is logarithmic.
  iterator insert(const_iterator, const V& v) { return insert(v).first; }
  iterator insert(const_iterator, V&& v) { return insert(std::move(v)).first; }
  template <std::input_iterator It>
  void insert(It first, It last) {
    for (; first != last; ++first) emplace(*first);
  }
  void insert(std::initializer_list<V> il) { insert(il.begin(), il.end()); }
  /// Builds the value first (the key is needed to find the path), then moves it into a node.
  template <class... Args>
  std::pair<iterator, bool> emplace(Args&&... args) {
    if constexpr (sizeof...(Args) == 1 && (std::is_same_v<std::remove_cvref_t<Args>, V> && ...)) {
      return emplace_key(KeyOf()(args...), std::forward<Args>(args)...);
    } else {
      V v(std::forward<Args>(args)...);
      return emplace_key(KeyOf()(v), std::move(v));
    }
  }
  template <class... Args>
  iterator emplace_hint(const_iterator, Args&&... args) {
    return emplace(std::forward<Args>(args)...).first;
  }

  iterator erase(const_iterator pos) noexcept {
    rb_node* n = pos.n_;
    rb_node* next = rb_increment(n);
    rb_erase_and_rebalance(n, header_);
    destroy(static_cast<node*>(n));
    --size_;
    dyn_.modify();
    return {next, counter()};
  }
  iterator erase(iterator pos) noexcept
    requires(!IsSet)
  {
    return erase(const_iterator(pos));
  }
  iterator erase(const_iterator first, const_iterator last) noexcept {
    while (first != last) first = erase(first);
    return {last.n_, counter()};
  }
  size_type erase(const Key& k) {
    const_iterator it = find(k);
    if (it == end()) return 0;
    erase(it);
    return 1;
  }

  void swap(rb_tree& o) noexcept {
    if constexpr (alloc_traits::propagate_on_container_swap::value) {
      using std::swap;
      swap(alloc_, o.alloc_);
    }
    using std::swap;
    swap(comp_, o.comp_);
    rb_tree tmp(std::move(*this), no_alloc_tag{});
    steal(o);
    o.steal(tmp);
  }

  iterator find(const Key& k) {
    dyn_.access();
    rb_node* n = lower(k);
    return {n != &header_ && !comp_(k, key(n)) ? n : &header_, counter()};
  }
  const_iterator find(const Key& k) const { return const_cast<rb_tree*>(this)->find(k); }
  size_type count(const Key& k) const { return find(k) != end() ? 1 : 0; }
  bool contains(const Key& k) const { return find(k) != end(); }
  iterator lower_bound(const Key& k) {
    dyn_.access();
    return {lower(k), counter()};
  }
  const_iterator lower_bound(const Key& k) const { return const_cast<rb_tree*>(this)->lower_bound(k); }
  iterator upper_bound(const Key& k) {
    dyn_.access();
    return {upper(k), counter()};
  }
  const_iterator upper_bound(const Key& k) const { return const_cast<rb_tree*>(this)->upper_bound(k); }
  std::pair<iterator, iterator> equal_range(const Key& k) {
    dyn_.access();
    return {iterator(lower(k), counter()), iterator(upper(k), counter())};
  }
  std::pair<const_iterator, const_iterator> equal_range(const Key& k) const {
    auto r = const_cast<rb_tree*>(this)->equal_range(k);
    return {r.first, r.second};
  }

  dynamism_counts dynamism() const noexcept { return dyn_.counts(); }
  void reset_dynamism() noexcept { dyn_.reset(); }
  /// The red-black invariants hold (tests).
  bool is_valid() const noexcept { return rb_black_height(header_) >= 0; }

  friend bool operator==(const rb_tree& a, const rb_tree& b) {
    return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin());
  }
  friend auto operator<=>(const rb_tree& a, const rb_tree& b) {
    return std::lexicographical_compare_three_way(a.begin(), a.end(), b.begin(), b.end());
  }

 protected:
  /// Inserts a node built from args if no element has key k.
  template <class... Args>
  std::pair<iterator, bool> emplace_key(const Key& k, Args&&... args) {
    tree_path path;
    rb_node* parent = &header_;
    rb_node* x = header_.root();
    bool left = true;
    while (x != nullptr) {
      parent = x;
      if (comp_(k, key(x))) {
        left = true;
        path.push(false);
        x = x->left;
      } else if (comp_(key(x), k)) {
        left = false;
        path.push(true);
        x = x->right;
      } else {
        dyn_.access();
        return {iterator(x, counter()), false};
      }
    }
    const void* near = parent == &header_ ? nullptr : static_cast<const void*>(parent);
    node* n = make_node(path, near, std::forward<Args>(args)...);
    rb_insert_and_rebalance(left, n, parent, header_);
    ++size_;
    dyn_.modify();
    return {iterator(n, counter()), true};
  }
  iterator make_iterator(rb_node* n) const noexcept { return {n, counter()}; }

 private:
  struct no_alloc_tag {};
  rb_tree(rb_tree&& o, no_alloc_tag) noexcept : comp_(o.comp_), alloc_(o.alloc_) { steal(o); }

  static const Key& key(const rb_node* n) noexcept { return KeyOf()(static_cast<const node*>(n)->value); }
  step_counter<kCounted> counter() const noexcept { return step_counter<kCounted>(dyn_.step_counter()); }
  rb_node* lower(const Key& k) const {
    rb_node* result = const_cast<rb_header*>(&header_);
    for (rb_node* x = header_.root(); x != nullptr;) {
      if (!comp_(key(x), k)) {
        result = x;
        x = x->left;
      } else {
        x = x->right;
      }
    }
    return result;
  }
  rb_node* upper(const Key& k) const {
    rb_node* result = const_cast<rb_header*>(&header_);
    for (rb_node* x = header_.root(); x != nullptr;) {
      if (comp_(k, key(x))) {
        result = x;
        x = x->left;
      } else {
        x = x->right;
      }
    }
    return result;
  }
  void steal(rb_tree& o) noexcept {
    header_.steal(o.header_);
    size_ = o.size_;
    o.size_ = 0;
  }
  template <class... Args>
  node* make_node(tree_path path, const void* parent, Args&&... args) {
    node* n;
    if constexpr (requires(node_alloc& a) { a.allocate_on_path(std::size_t{1}, path, parent); })
      n = std::to_address(alloc_.allocate_on_path(1, path, parent));
    else
      n = std::to_address(node_traits::allocate(alloc_, 1, parent));
    try {
      node_traits::construct(alloc_, std::addressof(n->value), std::forward<Args>(args)...);
    } catch (...) {
      node_traits::deallocate(alloc_, n, 1);
      throw;
    }
    return n;
  }
  void destroy(node* n) noexcept {
    node_traits::destroy(alloc_, std::addressof(n->value));
    node_traits::deallocate(alloc_, n, 1);
  }
  /// Right subtrees recursively, left spines iteratively: depth stays O(log n).
  void destroy_subtree(rb_node* x) noexcept {
    while (x != nullptr) {
      destroy_subtree(x->right);
      rb_node* left = x->left;
      destroy(static_cast<node*>(x));
      x = left;
    }
  }

  rb_header header_;
  size_type size_ = 0;
  [[no_unique_address]] Compare comp_;
  [[no_unique_address]] node_alloc alloc_;
  [[no_unique_address]] mutable Dynamism dyn_;
};

struct identity_key {
  template <class T>
  const T& operator()(const T& v) const noexcept {
    return v;
  }
};
struct first_key {
  template <class P>
  const auto& operator()(const P& p) const noexcept {
    return p.first;
  }
};

}  // namespace tailor::locality::detail
