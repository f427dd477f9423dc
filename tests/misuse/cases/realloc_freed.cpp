// Calls realloc on a block that was already freed.
#include "common.h"
int main() {
  void* p = alloc_bytes(48);
  std::free(p);
  void* q = std::realloc(opaque(p), 100);
  std::free(q);
  return unnoticed();
}
