// SPDX-License-Identifier: MIT
// What the call-site pool tests share (pools_test.cpp, pools_slot_rule_test.cpp):
// helpers that are one call site each, the pools' counters, and whether
// this build tells two sites apart at all. Included by one file of each
// test binary.
#pragma once

#include <cstddef>

#include "tailor/tailor.h"

namespace {

constexpr int kWindow = 64;  // requests a monitor watches (site_pool.cpp)

// Each helper is one call site: not a tail call (code follows the call, or
// the site would be the helper's caller) and not folded with the others
// (a distinct asm comment each).
#define TAILOR_TEST_SITE(name, call)                          \
  __attribute__((noinline)) void* name(std::size_t n) {      \
    void* p = call;                                           \
    __asm__ volatile("# " #name : : "r"(p) : "memory");       \
    return p;                                                 \
  }
TAILOR_TEST_SITE(site_probe_1, tailor_malloc(n))
TAILOR_TEST_SITE(site_probe_2, tailor_malloc(n))

tailor_pools_stats stats() {
  tailor_pools_stats s{};
  tailor_pools_get_stats(&s);
  return s;
}

// Whether two helpers are two sites in this build: under the sanitizers
// tailor_malloc calls malloc_inline instead of inlining it, so every
// request has the same return address inside tailor_malloc. Tests that
// need two sites at once skip then.
bool sites_distinguished() {
  const std::size_t before = stats().sites;
  tailor_free(site_probe_1(16));
  tailor_free(site_probe_2(16));
  return stats().sites == before + 2;
}

}  // namespace
