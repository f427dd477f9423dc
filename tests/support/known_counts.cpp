// SPDX-License-Identifier: MIT
// A program whose allocation calls are known by construction, for
// tests/record/stats_exact_test.cpp. Usage: known_counts [ITERATIONS]
// (default 1). Prints nothing on stdout and exits 0; exits 4 (with a message on
// stderr) if the C library did not behave as the construction assumes, so that
// a test never checks numbers the program did not actually produce.
//
// One iteration makes exactly these calls, every one directly from this
// executable (so each recorded call site lies inside this program's module;
// the test keeps only those events and so ignores whatever libc, libstdc++ and
// the loader allocate for themselves):
//   malloc(1051)                      leaked on purpose (live at exit)
//   malloc(1003) x 5
//   calloc(7, 143) x 3                1001 bytes each
//   realloc(NULL, 2003)               from NULL
//   realloc(that, 1005)               shrink: glibc always does it in place
//   memalign(64, 1011), posix_memalign(128, 1013), aligned_alloc(256, 1280),
//   valloc(1019), pvalloc(1021)
//   new 1023, new[] 1025, new(nothrow) 1027, new[](nothrow) 1029,
//   new(align 64) 1031, new[](align 128) 1033, new(align 64, nothrow) 1039,
//   new[](align 64, nothrow) 1049, new 1061, new[] 1063, new(align 64) 1069,
//   new[](align 64) 1087
//   malloc(1009), then realloc(it, 10000019): mmapped (threshold fixed at
//     1 MiB below), so the block always moves.   <- peak bytes in use here
//   malloc(huge) fails, new(huge, nothrow) fails, realloc(m[0], huge) fails
//   free(NULL), operator delete(nullptr)
//   free of: the 10000019 block, the five 1003, the three callocs, the five
//     aligned C blocks;  realloc(1005 block, 0) (glibc frees it: "to zero")
//   the twelve delete forms, each on a block of the matching new form:
//     delete 1023, delete[] 1025, delete(nothrow) 1027, delete[](nothrow) 1029,
//     delete(align) 1031, delete[](align) 1033, delete(align, nothrow) 1039,
//     delete[](align, nothrow) 1049, delete(size) 1061, delete[](size) 1063,
//     delete(size, align) 1069, delete[](size, align) 1087
// The test derives every expected number from this list (see
// stats_exact_test.cpp).
#include <malloc.h>
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <new>

#include "keep.h"

namespace {

using tailor::test::keep;  // opaque to the optimizer, which may delete unused pairs

volatile std::size_t huge = SIZE_MAX - 4096;  // fails every allocation call (> PTRDIFF_MAX)
void* volatile leaked[1024];

[[noreturn]] void broken(const char* what) {
  std::fprintf(stderr, "known_counts: %s\n", what);
  std::_Exit(4);
}

void check(bool ok, const char* what) {
  if (!ok) broken(what);
}

__attribute__((noinline)) void iteration(int index) {
  leaked[index % 1024] = keep(std::malloc(1051));

  void* m[5];
  for (auto& p : m) p = keep(std::malloc(1003));
  void* c[3];
  for (auto& p : c) p = keep(std::calloc(7, 143));

  void* r0 = keep(std::realloc(keep(nullptr), 2003));  // gcc turns realloc(NULL, n) into malloc(n)
  void* r0b = keep(std::realloc(r0, 1005));
  check(r0b == r0, "shrinking realloc moved the block");

  void* a1 = keep(memalign(64, 1011));
  void* a2 = nullptr;
  check(posix_memalign(&a2, 128, 1013) == 0, "posix_memalign failed");
  keep(a2);
  void* a3 = keep(aligned_alloc(256, 1280));
  void* a4 = keep(valloc(1019));
  void* a5 = keep(pvalloc(1021));

  void* n1 = keep(::operator new(1023));
  void* n2 = keep(::operator new[](1025));
  void* n3 = keep(::operator new(1027, std::nothrow));
  void* n4 = keep(::operator new[](1029, std::nothrow));
  void* n5 = keep(::operator new(1031, std::align_val_t{64}));
  void* n6 = keep(::operator new[](1033, std::align_val_t{128}));
  void* n7 = keep(::operator new(1039, std::align_val_t{64}, std::nothrow));
  void* n8 = keep(::operator new[](1049, std::align_val_t{64}, std::nothrow));
  void* n9 = keep(::operator new(1061));
  void* n10 = keep(::operator new[](1063));
  void* n11 = keep(::operator new(1069, std::align_val_t{64}));
  void* n12 = keep(::operator new[](1087, std::align_val_t{64}));
  check(a1 && a3 && a4 && a5 && n3 && n4 && n7 && n8, "an allocation failed");

  void* r1 = keep(std::malloc(1009));
  void* r1b = keep(std::realloc(r1, 10000019));
  check(r1b != nullptr && r1b != r1, "growing realloc to 10 MB did not move the block");

  check(keep(std::malloc(huge)) == nullptr, "malloc(huge) succeeded");
  check(keep(::operator new(huge, std::nothrow)) == nullptr, "new(huge, nothrow) succeeded");
  check(keep(std::realloc(m[0], huge)) == nullptr, "realloc(p, huge) succeeded");

  std::free(keep(nullptr));
  ::operator delete(keep(nullptr));

  std::free(r1b);
  for (auto* p : m) std::free(p);
  for (auto* p : c) std::free(p);
  check(keep(std::realloc(r0b, 0)) == nullptr, "realloc(p, 0) did not free");
  std::free(a1);
  std::free(a2);
  std::free(a3);
  std::free(a4);
  std::free(a5);

  ::operator delete(n1);
  ::operator delete[](n2);
  ::operator delete(n3, std::nothrow);
  ::operator delete[](n4, std::nothrow);
  ::operator delete(n5, std::align_val_t{64});
  ::operator delete[](n6, std::align_val_t{128});
  ::operator delete(n7, std::align_val_t{64}, std::nothrow);
  ::operator delete[](n8, std::align_val_t{64}, std::nothrow);
  ::operator delete(n9, 1061);
  ::operator delete[](n10, 1063);
  ::operator delete(n11, 1069, std::align_val_t{64});
  ::operator delete[](n12, 1087, std::align_val_t{64});
}

}  // namespace

int main(int argc, char** argv) {
  // A fixed mmap threshold (no dynamic adjustment): the 10 MB realloc target
  // is always a fresh mapping, whatever earlier iterations freed.
  check(mallopt(M_MMAP_THRESHOLD, 1 << 20) == 1, "mallopt failed");
  int iterations = argc > 1 ? std::atoi(argv[1]) : 1;
  if (iterations < 1 || iterations > 1000) broken("iterations must be 1..1000");
  for (int i = 0; i < iterations; ++i) iteration(i);
  return 0;
}
