// Copies a block's contents to 8 bytes before its start with memcpy (an
// index off by one element of a 64-bit array), then frees it.
#include "common.h"
int main(int argc, char** argv) {
  const std::size_t n = case_size(argc, argv, 56);
  void* keep = alloc_bytes(n);
  auto* p = static_cast<unsigned char*>(alloc_bytes(n));
  auto* src = static_cast<unsigned char*>(alloc_bytes(n));
  {
    Access a;
    std::memcpy(opaque(p) - 8, src, n);
  }
  std::free(p);
  std::free(keep);
  std::free(src);
  return unnoticed();
}
