// Copies 16 bytes more than a block holds into it with memcpy (a length
// taken from the source), then frees it and its neighbour.
#include "common.h"
int main(int argc, char** argv) {
  const std::size_t n = case_size(argc, argv, 56);
  auto* src = static_cast<unsigned char*>(alloc_bytes(n + 16));
  auto* p = static_cast<unsigned char*>(alloc_bytes(n));
  void* q = alloc_bytes(n);
  {
    Access a;
    std::memcpy(opaque(p), src, n + 16);
  }
  std::free(p);
  std::free(q);
  std::free(src);
  return unnoticed();
}
