// Writes 8 bytes at the end of a freed block (past the first 64 bytes, where
// an allocator's links and fill usually are), then allocates and frees
// blocks of its size many times, so that the block is handed out again.
#include "common.h"
int main(int argc, char** argv) {
  const std::size_t n = case_size(argc, argv, 200);
  auto* p = static_cast<unsigned char*>(alloc_bytes(n));
  std::free(p);
  {
    Access a;
    std::memset(opaque(p) + n - 8, 0x41, 8);
  }
  for (int i = 0; i < 1000; ++i) std::free(alloc_bytes(n));
  return unnoticed();
}
