// Frees a block and asks for one 8 bytes smaller at once (a similar size,
// the same size class of most allocators).
#include "common.h"
int main(int argc, char** argv) {
  const std::size_t n = case_size(argc, argv, 72);
  void* keep = alloc_bytes(n);
  void* p = alloc_bytes(n);
  std::free(p);
  void* q = alloc_bytes(n - 8);
  const bool same = q == opaque(p);
  std::free(q);
  std::free(keep);
  return same ? unnoticed() : prevented("the freed block was not handed out at once");
}
