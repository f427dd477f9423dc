// SPDX-License-Identifier: MIT
// A shared library that tests/support/dlopen_plugin.cpp loads with dlopen:
// its allocation call site must appear in the trace's module map and
// symbolize to plugin_allocate.
#include <cstdlib>

extern "C" __attribute__((visibility("default"), noinline)) void* plugin_allocate(std::size_t n) {
  void* p = std::malloc(n);
  asm volatile("" : : "r"(p) : "memory");
  return p;
}
