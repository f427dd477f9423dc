// Frees a block, allocates and frees other blocks of other sizes, then frees it again.
#include "common.h"
int main(int argc, char** argv) {
  const std::size_t n = case_size(argc, argv, 64);
  void* p = alloc_bytes(n);
  std::free(p);
  void* keep[32];
  for (int i = 0; i < 32; ++i) keep[i] = alloc_bytes(200 + 16 * static_cast<std::size_t>(i));
  for (int i = 0; i < 32; ++i) std::free(keep[i]);
  std::free(opaque(p));
  return unnoticed();
}
