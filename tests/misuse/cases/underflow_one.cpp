// Writes one byte before the start of a block, then frees it.
#include "common.h"
int main() {
  void* keep = alloc_bytes(40);
  auto* p = static_cast<unsigned char*>(alloc_bytes(40));
  opaque(p)[-1] = 0xff;
  std::free(p);
  std::free(keep);
  return unnoticed();
}
