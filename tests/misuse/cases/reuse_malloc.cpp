// Frees a block and asks for one of the same size at once: an allocator
// that hands the freed block straight back lets a dangling pointer to it
// reach the new owner's data (use after free made exploitable).
#include "common.h"
int main(int argc, char** argv) {
  const std::size_t n = case_size(argc, argv, 64);
  void* keep = alloc_bytes(n);
  void* p = alloc_bytes(n);
  std::free(p);
  void* q = alloc_bytes(n);
  const bool same = q == opaque(p);
  std::free(q);
  std::free(keep);
  return same ? unnoticed() : prevented("the freed block was not handed out at once");
}
