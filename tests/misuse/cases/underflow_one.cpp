// Writes one byte before the start of a block, then frees it.
#include "common.h"
int main(int argc, char** argv) {
  const std::size_t n = case_size(argc, argv, 40);
  void* keep = alloc_bytes(n);
  auto* p = static_cast<unsigned char*>(alloc_bytes(n));
  {
    Access a;
    opaque(p)[-1] = 0xff;
  }
  std::free(p);
  std::free(keep);
  return unnoticed();
}
