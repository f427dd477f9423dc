// Frees a block, then grows a small block to its size with realloc at
// once: an allocator that moves the grown block into the one just freed
// hands it straight back.
#include "common.h"
int main(int argc, char** argv) {
  const std::size_t n = case_size(argc, argv, 96);
  void* keep = alloc_bytes(n);
  void* small = alloc_bytes(8);
  void* p = alloc_bytes(n);
  std::free(p);
  void* q = std::realloc(small, n);
  if (q == nullptr) return 2;
  const bool same = q == opaque(p);
  std::free(q);
  std::free(keep);
  return same ? unnoticed() : prevented("the freed block was not handed out at once");
}
