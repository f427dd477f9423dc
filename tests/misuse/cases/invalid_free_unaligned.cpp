// Frees a pointer one byte past the start of a block.
#include "common.h"
int main(int argc, char** argv) {
  const std::size_t n = case_size(argc, argv, 64);
  auto* p = static_cast<char*>(alloc_bytes(n));
  std::free(opaque(p + 1));
  return unnoticed();
}
