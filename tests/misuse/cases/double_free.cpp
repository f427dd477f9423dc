// Frees a small block twice in a row.
#include "common.h"
int main() {
  void* p = alloc_bytes(48);
  std::free(p);
  std::free(opaque(p));
  return unnoticed();
}
