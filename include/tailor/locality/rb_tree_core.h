// SPDX-License-Identifier: MIT
// The red-black tree algorithms shared by everything in tailor's locality
// layer that keeps an ordered set: the locality heap's index of K-classes
// (kclass_index.h) and the containers tailor::set and tailor::map
// (tree.h). They are intrusive: a node starts with rb_node, the owner keeps
// the values and the comparison, and these functions only relink.
//
// Layout (as in the classic STL trees): a header node whose parent is the
// root, left the leftmost node and right the rightmost; the root's parent is
// the header. The header is red and real roots are black, which is how
// rb_decrement tells the header (end()) from the root. An empty tree has a
// null root and left = right = header.
#pragma once

#include <utility>

namespace tailor::locality {

struct rb_node {
  rb_node* parent = nullptr;
  rb_node* left = nullptr;
  rb_node* right = nullptr;
  bool red = false;
};

/// The header of a tree: see the file comment.
struct rb_header : rb_node {
  rb_header() noexcept { reset(); }
  rb_header(const rb_header&) = delete;
  rb_header& operator=(const rb_header&) = delete;
  void reset() noexcept {
    parent = nullptr;
    left = right = this;
    red = true;
  }
  rb_node*& root() noexcept { return parent; }
  rb_node* root() const noexcept { return parent; }
  bool empty() const noexcept { return parent == nullptr; }
  /// Takes over other's nodes and leaves other empty.
  void steal(rb_header& other) noexcept {
    if (other.empty()) {
      reset();
      return;
    }
    parent = other.parent;
    left = other.left;
    right = other.right;
    parent->parent = this;
    other.reset();
  }
};

inline rb_node* rb_minimum(rb_node* x) noexcept {
  while (x->left != nullptr) x = x->left;
  return x;
}
inline rb_node* rb_maximum(rb_node* x) noexcept {
  while (x->right != nullptr) x = x->right;
  return x;
}

/// In-order successor; the successor of the rightmost node is the header.
inline rb_node* rb_increment(rb_node* x) noexcept {
  if (x->right != nullptr) return rb_minimum(x->right);
  rb_node* y = x->parent;
  while (x == y->right) {
    x = y;
    y = y->parent;
  }
  // x == y->right fails at the header when x was the root with no right child.
  if (x->right != y) x = y;
  return x;
}

/// In-order predecessor; the predecessor of the header is the rightmost node.
inline rb_node* rb_decrement(rb_node* x) noexcept {
  if (x->red && x->parent->parent == x) return x->right;  // x is the header
  if (x->left != nullptr) return rb_maximum(x->left);
  rb_node* y = x->parent;
  while (x == y->left) {
    x = y;
    y = y->parent;
  }
  return y;
}

namespace detail {
inline void rb_rotate_left(rb_node* x, rb_node*& root) noexcept {
  rb_node* y = x->right;
  x->right = y->left;
  if (y->left != nullptr) y->left->parent = x;
  y->parent = x->parent;
  if (x == root)
    root = y;
  else if (x == x->parent->left)
    x->parent->left = y;
  else
    x->parent->right = y;
  y->left = x;
  x->parent = y;
}
inline void rb_rotate_right(rb_node* x, rb_node*& root) noexcept {
  rb_node* y = x->left;
  x->left = y->right;
  if (y->right != nullptr) y->right->parent = x;
  y->parent = x->parent;
  if (x == root)
    root = y;
  else if (x == x->parent->right)
    x->parent->right = y;
  else
    x->parent->left = y;
  y->right = x;
  x->parent = y;
}
}  // namespace detail

/// Links x as the left (insert_left) or right child of p, which has no child
/// on that side (p is the header when the tree is empty; then insert_left),
/// and restores the red-black properties.
inline void rb_insert_and_rebalance(bool insert_left, rb_node* x, rb_node* p, rb_header& header) noexcept {
  rb_node*& root = header.root();
  x->parent = p;
  x->left = x->right = nullptr;
  x->red = true;
  if (insert_left) {
    p->left = x;
    if (p == &header) {
      header.parent = x;
      header.right = x;
    } else if (p == header.left) {
      header.left = x;
    }
  } else {
    p->right = x;
    if (p == header.right) header.right = x;
  }
  while (x != root && x->parent->red) {
    rb_node* const xpp = x->parent->parent;
    if (x->parent == xpp->left) {
      rb_node* const y = xpp->right;
      if (y != nullptr && y->red) {
        x->parent->red = false;
        y->red = false;
        xpp->red = true;
        x = xpp;
      } else {
        if (x == x->parent->right) {
          x = x->parent;
          detail::rb_rotate_left(x, root);
        }
        x->parent->red = false;
        xpp->red = true;
        detail::rb_rotate_right(xpp, root);
      }
    } else {
      rb_node* const y = xpp->left;
      if (y != nullptr && y->red) {
        x->parent->red = false;
        y->red = false;
        xpp->red = true;
        x = xpp;
      } else {
        if (x == x->parent->left) {
          x = x->parent;
          detail::rb_rotate_right(x, root);
        }
        x->parent->red = false;
        xpp->red = true;
        detail::rb_rotate_left(xpp, root);
      }
    }
  }
  root->red = false;
}

/// Unlinks z from the tree and restores the red-black properties; z's links
/// are left dangling for the caller to free.
inline void rb_erase_and_rebalance(rb_node* z, rb_header& header) noexcept {
  rb_node*& root = header.root();
  rb_node*& leftmost = header.left;
  rb_node*& rightmost = header.right;
  rb_node* y = z;
  rb_node* x = nullptr;
  rb_node* x_parent = nullptr;
  if (y->left == nullptr) {
    x = y->right;
  } else if (y->right == nullptr) {
    x = y->left;
  } else {
    y = rb_minimum(y->right);
    x = y->right;
  }
  if (y != z) {  // z has two children: y (its successor) takes its place
    z->left->parent = y;
    y->left = z->left;
    if (y != z->right) {
      x_parent = y->parent;
      if (x != nullptr) x->parent = y->parent;
      y->parent->left = x;
      y->right = z->right;
      z->right->parent = y;
    } else {
      x_parent = y;
    }
    if (root == z)
      root = y;
    else if (z->parent->left == z)
      z->parent->left = y;
    else
      z->parent->right = y;
    y->parent = z->parent;
    std::swap(y->red, z->red);
    y = z;  // y is now the node that leaves the tree
  } else {
    x_parent = y->parent;
    if (x != nullptr) x->parent = y->parent;
    if (root == z)
      root = x;
    else if (z->parent->left == z)
      z->parent->left = x;
    else
      z->parent->right = x;
    if (leftmost == z) leftmost = z->right == nullptr ? z->parent : rb_minimum(x);
    if (rightmost == z) rightmost = z->left == nullptr ? z->parent : rb_maximum(x);
  }
  if (!y->red) {
    while (x != root && (x == nullptr || !x->red)) {
      if (x == x_parent->left) {
        rb_node* w = x_parent->right;
        if (w->red) {
          w->red = false;
          x_parent->red = true;
          detail::rb_rotate_left(x_parent, root);
          w = x_parent->right;
        }
        if ((w->left == nullptr || !w->left->red) && (w->right == nullptr || !w->right->red)) {
          w->red = true;
          x = x_parent;
          x_parent = x_parent->parent;
        } else {
          if (w->right == nullptr || !w->right->red) {
            w->left->red = false;
            w->red = true;
            detail::rb_rotate_right(w, root);
            w = x_parent->right;
          }
          w->red = x_parent->red;
          x_parent->red = false;
          if (w->right != nullptr) w->right->red = false;
          detail::rb_rotate_left(x_parent, root);
          break;
        }
      } else {
        rb_node* w = x_parent->left;
        if (w->red) {
          w->red = false;
          x_parent->red = true;
          detail::rb_rotate_right(x_parent, root);
          w = x_parent->left;
        }
        if ((w->right == nullptr || !w->right->red) && (w->left == nullptr || !w->left->red)) {
          w->red = true;
          x = x_parent;
          x_parent = x_parent->parent;
        } else {
          if (w->left == nullptr || !w->left->red) {
            w->right->red = false;
            w->red = true;
            detail::rb_rotate_left(w, root);
            w = x_parent->left;
          }
          w->red = x_parent->red;
          x_parent->red = false;
          if (w->left != nullptr) w->left->red = false;
          detail::rb_rotate_right(x_parent, root);
          break;
        }
      }
    }
    if (x != nullptr) x->red = false;
  }
}

/// Checks the red-black invariants (for tests): returns the black height, or
/// -1 if a red node has a red child, the black heights differ, a parent link
/// is wrong or the header's leftmost/rightmost are stale.
inline int rb_black_height(const rb_header& header) noexcept {
  struct walk {
    static int of(const rb_node* n, const rb_node* parent) noexcept {
      if (n == nullptr) return 1;
      if (n->parent != parent) return -1;
      if (n->red && ((n->left != nullptr && n->left->red) || (n->right != nullptr && n->right->red))) return -1;
      const int l = of(n->left, n), r = of(n->right, n);
      if (l < 0 || r < 0 || l != r) return -1;
      return l + (n->red ? 0 : 1);
    }
  };
  const rb_node* root = header.root();
  if (root == nullptr) return header.left == &header && header.right == &header ? 0 : -1;
  if (root->red) return -1;
  if (header.left != rb_minimum(const_cast<rb_node*>(root)) || header.right != rb_maximum(const_cast<rb_node*>(root)))
    return -1;
  return walk::of(root, &header);
}

}  // namespace tailor::locality
