// Writes 32 bytes past the end of a block (40 bytes when small), then frees it and its neighbours.
#include "common.h"
int main(int argc, char** argv) {
  const std::size_t n = case_size(argc, argv, 40);
  auto* p = static_cast<unsigned char*>(alloc_bytes(n));
  void* q = alloc_bytes(n);
  void* r = alloc_bytes(n);
  {
    Access a;
    std::memset(opaque(p) + n, 0x41, 32);
  }
  std::free(p);
  std::free(q);
  std::free(r);
  return unnoticed();
}
