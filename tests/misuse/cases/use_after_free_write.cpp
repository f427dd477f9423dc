// Writes into a freed block (its first and last 16 bytes), then allocates
// and frees blocks of its size many times, so that an allocator that hands
// freed blocks out again (at once or after a delay) reuses it.
#include "common.h"
int main(int argc, char** argv) {
  const std::size_t n = case_size(argc, argv, 48);
  auto* p = static_cast<unsigned char*>(alloc_bytes(n));
  std::free(p);
  {
    Access a;
    std::memset(opaque(p), 0x41, 16);
    std::memset(opaque(p) + n - 16, 0x41, 16);
  }
  for (int i = 0; i < 1000; ++i) std::free(alloc_bytes(n));
  return unnoticed();
}
