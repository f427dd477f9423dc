// Frees a small block, allocates and frees other blocks of other sizes, then frees it again.
#include "common.h"
int main() {
  void* p = alloc_bytes(64);
  std::free(p);
  void* keep[32];
  for (int i = 0; i < 32; ++i) keep[i] = alloc_bytes(200 + 16 * static_cast<std::size_t>(i));
  for (int i = 0; i < 32; ++i) std::free(keep[i]);
  std::free(opaque(p));
  return unnoticed();
}
