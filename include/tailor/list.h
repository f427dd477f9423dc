// SPDX-License-Identifier: MIT
// tailor::list: a doubly linked list with std::list's interface that tells
// its allocator where each new node belongs. A node is allocated with
// std::allocator_traits::allocate(a, 1, hint), the hint being the node it
// will sit next to (the tail for push_back, the head for push_front, the
// node before the insertion point otherwise), so that with tailor::allocator
// and the Match predicate (the default) neighbours in the list share a
// K-class. A program switches by changing a type alias; with any other
// allocator the hint is simply dropped by allocator_traits.
//
// Differences from std::list: the third parameter counts dynamism
// (locality/dynamism.h); everything else supported behaves as std::list.
#pragma once

#include <algorithm>
#include <compare>
#include <cstddef>
#include <functional>
#include <initializer_list>
#include <iterator>
#include <limits>
#include <memory>
#include <type_traits>
#include <utility>

#include "allocator.h"
#include "locality/dynamism.h"

namespace tailor {

template <class T, class Allocator, class Dynamism>
class list;

namespace locality::detail {

struct list_node_base {
  list_node_base* next;
  list_node_base* prev;
};
template <class T>
struct list_node : list_node_base {
  T value;
};

template <class T, bool Const, bool Counted>
class list_iterator {
  template <class, class, class>
  friend class tailor::list;
  template <class, bool, bool>
  friend class list_iterator;

 public:
  using iterator_category = std::bidirectional_iterator_tag;
  using value_type = T;
  using difference_type = std::ptrdiff_t;
  using pointer = std::conditional_t<Const, const T*, T*>;
  using reference = std::conditional_t<Const, const T&, T&>;

  list_iterator() = default;
  template <bool C = Const, class = std::enable_if_t<C>>
  list_iterator(const list_iterator<T, false, Counted>& other) noexcept : n_(other.n_), steps_(other.steps_) {}

  reference operator*() const noexcept { return static_cast<list_node<T>*>(n_)->value; }
  pointer operator->() const noexcept { return std::addressof(**this); }
  list_iterator& operator++() noexcept {
    n_ = n_->next;
    steps_.tick();
    return *this;
  }
  list_iterator operator++(int) noexcept {
    list_iterator old = *this;
    ++*this;
    return old;
  }
  list_iterator& operator--() noexcept {
    n_ = n_->prev;
    steps_.tick();
    return *this;
  }
  list_iterator operator--(int) noexcept {
    list_iterator old = *this;
    --*this;
    return old;
  }
  friend bool operator==(const list_iterator& a, const list_iterator& b) noexcept { return a.n_ == b.n_; }

 private:
  list_iterator(list_node_base* n, step_counter<Counted> s) noexcept : n_(n), steps_(s) {}
  list_node_base* n_ = nullptr;
  [[no_unique_address]] step_counter<Counted> steps_{};
};

}  // namespace locality::detail

template <class T, class Allocator = tailor::allocator<T, locality::Match>, class Dynamism = no_dynamism>
class list {
  using base = locality::detail::list_node_base;
  using node = locality::detail::list_node<T>;
  using alloc_traits = std::allocator_traits<Allocator>;
  using node_alloc = typename alloc_traits::template rebind_alloc<node>;
  using node_traits = std::allocator_traits<node_alloc>;
  static constexpr bool kCounted = Dynamism::enabled;

 public:
  using value_type = T;
  using allocator_type = Allocator;
  using size_type = std::size_t;
  using difference_type = std::ptrdiff_t;
  using reference = T&;
  using const_reference = const T&;
  using pointer = typename alloc_traits::pointer;
  using const_pointer = typename alloc_traits::const_pointer;
  using iterator = locality::detail::list_iterator<T, false, kCounted>;
  using const_iterator = locality::detail::list_iterator<T, true, kCounted>;
  using reverse_iterator = std::reverse_iterator<iterator>;
  using const_reverse_iterator = std::reverse_iterator<const_iterator>;
  /// The bytes of one node, as requested from the allocator (benchmarks
  /// warm the heap up with blocks of this size).
  static constexpr std::size_t node_bytes = sizeof(node);

  list() : list(Allocator()) {}
  explicit list(const Allocator& a) noexcept : alloc_(a) { reset(); }
  explicit list(size_type n, const Allocator& a = Allocator()) : list(a) {
    for (; n != 0; --n) emplace_back();
  }
  list(size_type n, const T& v, const Allocator& a = Allocator()) : list(a) { insert(end(), n, v); }
  template <std::input_iterator It>
  list(It first, It last, const Allocator& a = Allocator()) : list(a) {
    insert(end(), first, last);
  }
  list(std::initializer_list<T> il, const Allocator& a = Allocator()) : list(il.begin(), il.end(), a) {}
  list(const list& o) : list(o, alloc_traits::select_on_container_copy_construction(o.get_allocator())) {}
  list(const list& o, const Allocator& a) : list(a) { insert(end(), o.begin(), o.end()); }
  list(list&& o) noexcept : alloc_(std::move(o.alloc_)) {
    reset();
    steal(o);
  }
  list(list&& o, const Allocator& a) : list(a) {
    if (alloc_ == o.alloc_)
      steal(o);
    else
      insert(end(), std::make_move_iterator(o.begin()), std::make_move_iterator(o.end()));
  }
  ~list() { clear(); }

  list& operator=(const list& o) {
    if (this == &o) return *this;
    if constexpr (alloc_traits::propagate_on_container_copy_assignment::value) {
      if (alloc_ != o.alloc_) {
        clear();
        alloc_ = o.alloc_;
      }
    }
    assign(o.begin(), o.end());
    return *this;
  }
  list& operator=(list&& o) noexcept(alloc_traits::is_always_equal::value ||
                                     alloc_traits::propagate_on_container_move_assignment::value) {
    if (this == &o) return *this;
    clear();
    if constexpr (alloc_traits::propagate_on_container_move_assignment::value) {
      alloc_ = std::move(o.alloc_);
      steal(o);
    } else if (alloc_ == o.alloc_) {
      steal(o);
    } else {
      insert(end(), std::make_move_iterator(o.begin()), std::make_move_iterator(o.end()));
      o.clear();
    }
    return *this;
  }
  list& operator=(std::initializer_list<T> il) {
    assign(il.begin(), il.end());
    return *this;
  }

  void assign(size_type n, const T& v) {
    clear();
    insert(end(), n, v);
  }
  template <std::input_iterator It>
  void assign(It first, It last) {
    iterator it = begin();
    for (; it != end() && first != last; ++it, ++first) *it = *first;
    if (first == last)
      erase(it, end());
    else
      insert(end(), first, last);
  }
  void assign(std::initializer_list<T> il) { assign(il.begin(), il.end()); }

  allocator_type get_allocator() const noexcept { return allocator_type(alloc_); }

  reference front() {
    dyn_.access();
    return value(head_.next);
  }
  const_reference front() const {
    dyn_.access();
    return value(head_.next);
  }
  reference back() {
    dyn_.access();
    return value(head_.prev);
  }
  const_reference back() const {
    dyn_.access();
    return value(head_.prev);
  }

  iterator begin() noexcept { return {head_.next, counter()}; }
  const_iterator begin() const noexcept { return {head_.next, counter()}; }
  const_iterator cbegin() const noexcept { return begin(); }
  iterator end() noexcept { return {&head_, counter()}; }
  const_iterator end() const noexcept { return {const_cast<base*>(&head_), counter()}; }
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
    base* n = head_.next;
    dyn_.modify(size_);
    while (n != &head_) {
      base* next = n->next;
      destroy(static_cast<node*>(n));
      n = next;
    }
    reset();
  }

  iterator insert(const_iterator pos, const T& v) { return emplace(pos, v); }
  iterator insert(const_iterator pos, T&& v) { return emplace(pos, std::move(v)); }
  iterator insert(const_iterator pos, size_type n, const T& v) {
    iterator first(pos.n_, counter());
    bool any = false;
    for (; n != 0; --n) {
      iterator it = emplace(pos, v);
      if (!any) first = it, any = true;
    }
    return first;
  }
  template <std::input_iterator It>
  iterator insert(const_iterator pos, It first, It last) {
    iterator result(pos.n_, counter());
    bool any = false;
    for (; first != last; ++first) {
      iterator it = emplace(pos, *first);
      if (!any) result = it, any = true;
    }
    return result;
  }
  iterator insert(const_iterator pos, std::initializer_list<T> il) { return insert(pos, il.begin(), il.end()); }

  template <class... Args>
  iterator emplace(const_iterator pos, Args&&... args) {
    base* at = pos.n_;
    node* n = make_node(neighbour_of(at), std::forward<Args>(args)...);
    link_before(at, n);
    return {n, counter()};
  }
  template <class... Args>
  reference emplace_back(Args&&... args) {
    return static_cast<node*>(emplace(end(), std::forward<Args>(args)...).n_)->value;
  }
  template <class... Args>
  reference emplace_front(Args&&... args) {
    return static_cast<node*>(emplace(begin(), std::forward<Args>(args)...).n_)->value;
  }
  void push_back(const T& v) { emplace_back(v); }
  void push_back(T&& v) { emplace_back(std::move(v)); }
  void push_front(const T& v) { emplace_front(v); }
  void push_front(T&& v) { emplace_front(std::move(v)); }
  void pop_back() noexcept { erase(const_iterator(head_.prev, counter())); }
  void pop_front() noexcept { erase(const_iterator(head_.next, counter())); }

  iterator erase(const_iterator pos) noexcept {
    base* n = pos.n_;
    base* next = n->next;
    unlink(n);
    destroy(static_cast<node*>(n));
    dyn_.modify();
    return {next, counter()};
  }
  iterator erase(const_iterator first, const_iterator last) noexcept {
    while (first != last) first = erase(first);
    return {last.n_, counter()};
  }

  void resize(size_type n) {
    while (size_ > n) pop_back();
    while (size_ < n) emplace_back();
  }
  void resize(size_type n, const T& v) {
    while (size_ > n) pop_back();
    while (size_ < n) emplace_back(v);
  }

  void swap(list& o) noexcept {
    if constexpr (alloc_traits::propagate_on_container_swap::value) {
      using std::swap;
      swap(alloc_, o.alloc_);
    }
    swap_nodes(o);
  }
  friend void swap(list& a, list& b) noexcept { a.swap(b); }

  void splice(const_iterator pos, list& o) noexcept {
    if (o.empty() || &o == this) return;
    transfer(pos.n_, o.head_.next, &o.head_);
    size_ += o.size_;
    o.size_ = 0;
    dyn_.modify();
  }
  void splice(const_iterator pos, list&& o) noexcept { splice(pos, o); }
  void splice(const_iterator pos, list& o, const_iterator it) noexcept {
    base* n = it.n_;
    if (pos.n_ == n || pos.n_ == n->next) return;
    transfer(pos.n_, n, n->next);
    ++size_;
    --o.size_;
    dyn_.modify();
  }
  void splice(const_iterator pos, list&& o, const_iterator it) noexcept { splice(pos, o, it); }
  void splice(const_iterator pos, list& o, const_iterator first, const_iterator last) noexcept {
    if (first == last) return;
    if (&o != this) {
      const size_type n = static_cast<size_type>(std::distance(first, last));
      size_ += n;
      o.size_ -= n;
    }
    transfer(pos.n_, first.n_, last.n_);
    dyn_.modify();
  }
  void splice(const_iterator pos, list&& o, const_iterator first, const_iterator last) noexcept {
    splice(pos, o, first, last);
  }

  size_type remove(const T& v) {
    return remove_if([&v](const T& x) { return x == v; });
  }
  template <class Pred>
  size_type remove_if(Pred pred) {
    // Unlink first, destroy after: v may live in the list (remove(front())).
    list doomed(alloc_);
    size_type removed = 0;
    for (base* n = head_.next; n != &head_;) {
      base* next = n->next;
      if (pred(value(n))) {
        unlink(n);
        doomed.link_before(&doomed.head_, static_cast<node*>(n));
        ++removed;
      }
      n = next;
    }
    size_ -= removed;
    dyn_.modify(removed);
    return removed;
  }
  size_type unique() { return unique(std::equal_to<>()); }
  template <class Pred>
  size_type unique(Pred pred) {
    if (size_ < 2) return 0;
    list doomed(alloc_);
    size_type removed = 0;
    base* keep = head_.next;
    for (base* n = keep->next; n != &head_;) {
      base* next = n->next;
      if (pred(value(keep), value(n))) {
        unlink(n);
        doomed.link_before(&doomed.head_, static_cast<node*>(n));
        ++removed;
      } else {
        keep = n;
      }
      n = next;
    }
    size_ -= removed;
    dyn_.modify(removed + 1);
    return removed;
  }
  void reverse() noexcept {
    base* n = &head_;
    do {
      std::swap(n->next, n->prev);
      n = n->prev;
    } while (n != &head_);
    dyn_.modify();
  }

  void merge(list& o) { merge(o, std::less<>()); }
  void merge(list&& o) { merge(o, std::less<>()); }
  template <class Compare>
  void merge(list&& o, Compare comp) {
    merge(o, comp);
  }
  template <class Compare>
  void merge(list& o, Compare comp) {
    if (&o == this || o.empty()) return;
    base* a = head_.next;
    base* b = o.head_.next;
    while (a != &head_ && b != &o.head_) {
      if (comp(value(b), value(a))) {
        base* next = b->next;
        transfer(a, b, next);
        b = next;
      } else {
        a = a->next;
      }
    }
    if (b != &o.head_) transfer(&head_, b, &o.head_);
    size_ += o.size_;
    o.size_ = 0;
    dyn_.modify();
  }

  void sort() { sort(std::less<>()); }
  /// Stable merge sort that relinks nodes (no allocation, iterators stay valid).
  template <class Compare>
  void sort(Compare comp) {
    dyn_.modify();
    if (size_ < 2) return;
    head_.prev->next = nullptr;
    base* chain = head_.next;
    base* bins[64] = {};
    while (chain != nullptr) {
      base* n = chain;
      chain = chain->next;
      n->next = nullptr;
      std::size_t i = 0;
      for (; i < 64 && bins[i] != nullptr; ++i) {
        n = merge_chains(bins[i], n, comp);
        bins[i] = nullptr;
      }
      bins[i == 64 ? 63 : i] = n;
    }
    base* sorted = nullptr;
    for (base* b : bins)
      if (b != nullptr) sorted = merge_chains(b, sorted, comp);
    base* prev = &head_;
    for (base* n = sorted; n != nullptr; n = n->next) {
      prev->next = n;
      n->prev = prev;
      prev = n;
    }
    prev->next = &head_;
    head_.prev = prev;
  }

  /// Counts since construction or reset_dynamism() (zeros with no_dynamism).
  dynamism_counts dynamism() const noexcept { return dyn_.counts(); }
  void reset_dynamism() noexcept { dyn_.reset(); }

  friend bool operator==(const list& a, const list& b) {
    return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin());
  }
  friend auto operator<=>(const list& a, const list& b) {
    return std::lexicographical_compare_three_way(a.begin(), a.end(), b.begin(), b.end());
  }

 private:
  static T& value(base* n) noexcept { return static_cast<node*>(n)->value; }
  static const T& value(const base* n) noexcept { return static_cast<const node*>(n)->value; }
  locality::detail::step_counter<kCounted> counter() const noexcept {
    return locality::detail::step_counter<kCounted>(dyn_.step_counter());
  }
  void reset() noexcept {
    head_.next = head_.prev = &head_;
    size_ = 0;
  }
  void steal(list& o) noexcept {
    if (o.empty()) return;
    head_.next = o.head_.next;
    head_.prev = o.head_.prev;
    head_.next->prev = head_.prev->next = &head_;
    size_ = o.size_;
    o.reset();
  }
  void swap_nodes(list& o) noexcept {
    list_swap_storage a, b;
    a.take(*this);
    b.take(o);
    b.give(*this);
    a.give(o);
  }
  struct list_swap_storage {
    base* first = nullptr;
    base* last = nullptr;
    size_type n = 0;
    void take(list& l) noexcept {
      if (l.empty()) return;
      first = l.head_.next;
      last = l.head_.prev;
      n = l.size_;
      l.reset();
    }
    void give(list& l) noexcept {
      if (n == 0) return;
      l.head_.next = first;
      l.head_.prev = last;
      first->prev = last->next = &l.head_;
      l.size_ = n;
    }
  };
  /// The node a new element inserted before `at` will sit next to.
  const void* neighbour_of(base* at) const noexcept {
    if (at->prev != &head_) return static_cast<const node*>(at->prev);
    if (at != &head_) return static_cast<const node*>(at);
    return nullptr;
  }
  template <class... Args>
  node* make_node(const void* hint, Args&&... args) {
    node* n = std::to_address(node_traits::allocate(alloc_, 1, hint));
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
    --size_;
  }
  void link_before(base* at, node* n) noexcept {
    n->next = at;
    n->prev = at->prev;
    at->prev->next = n;
    at->prev = n;
    ++size_;
    dyn_.modify();
  }
  static void unlink(base* n) noexcept {
    n->prev->next = n->next;
    n->next->prev = n->prev;
  }
  /// Moves [first, last) before pos (the nodes may come from another list).
  static void transfer(base* pos, base* first, base* last) noexcept {
    if (pos == last) return;
    base* const before_last = last->prev;
    first->prev->next = last;
    last->prev = first->prev;
    first->prev = pos->prev;
    before_last->next = pos;
    pos->prev->next = first;
    pos->prev = before_last;
  }
  template <class Compare>
  static base* merge_chains(base* a, base* b, Compare& comp) {
    base head{nullptr, nullptr};
    base* tail = &head;
    while (a != nullptr && b != nullptr) {
      if (comp(value(b), value(a))) {
        tail->next = b;
        b = b->next;
      } else {
        tail->next = a;
        a = a->next;
      }
      tail = tail->next;
    }
    tail->next = a != nullptr ? a : b;
    return head.next;
  }

  base head_;
  size_type size_ = 0;
  [[no_unique_address]] node_alloc alloc_;
  [[no_unique_address]] mutable Dynamism dyn_;
};

}  // namespace tailor
