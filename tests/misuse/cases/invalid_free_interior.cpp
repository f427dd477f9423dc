// Frees a pointer 16 bytes into a block (64 bytes when small).
#include "common.h"
int main(int argc, char** argv) {
  const std::size_t n = case_size(argc, argv, 64);
  auto* p = static_cast<char*>(alloc_bytes(n));
  std::free(opaque(p + 16));
  return unnoticed();
}
