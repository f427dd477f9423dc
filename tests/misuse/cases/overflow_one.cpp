// Writes one byte past the end of a 24-byte block, then frees it.
#include "common.h"
int main() {
  auto* p = static_cast<unsigned char*>(alloc_bytes(24));
  void* q = alloc_bytes(24);
  opaque(p)[24] = 0xff;
  std::free(p);
  std::free(q);
  return unnoticed();
}
