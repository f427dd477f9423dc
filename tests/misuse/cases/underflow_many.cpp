// Writes 32 bytes before the start of a block, then frees it.
#include "common.h"
int main(int argc, char** argv) {
  const std::size_t n = case_size(argc, argv, 40);
  void* keep = alloc_bytes(n);
  auto* p = static_cast<unsigned char*>(alloc_bytes(n));
  {
    Access a;
    std::memset(opaque(p) - 32, 0x41, 32);
  }
  std::free(p);
  std::free(keep);
  return unnoticed();
}
