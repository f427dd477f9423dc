// Writes one byte past the end of a block (24 bytes when small), then frees it.
#include "common.h"
int main(int argc, char** argv) {
  const std::size_t n = case_size(argc, argv, 24);
  auto* p = static_cast<unsigned char*>(alloc_bytes(n));
  void* q = alloc_bytes(n);
  {
    Access a;
    opaque(p)[n] = 0xff;
  }
  std::free(p);
  std::free(q);
  return unnoticed();
}
