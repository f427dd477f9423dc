// Calls realloc on a block that was already freed.
#include "common.h"
int main(int argc, char** argv) {
  const std::size_t n = case_size(argc, argv, 48);
  void* p = alloc_bytes(n);
  std::free(p);
  void* q = std::realloc(opaque(p), n + 52);
  std::free(q);
  return unnoticed();
}
