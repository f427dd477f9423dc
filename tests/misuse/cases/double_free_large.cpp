// Frees a 256 KiB block twice.
#include "common.h"
int main() {
  void* p = alloc_bytes(256 * 1024);
  std::free(p);
  std::free(opaque(p));
  return unnoticed();
}
