// Frees a 64 MiB block (mapped on its own) twice.
#include "common.h"
int main() {
  void* p = alloc_bytes(64u << 20);
  std::free(p);
  std::free(opaque(p));
  return unnoticed();
}
