// C23 free_sized with a size other than the one allocated (exit 77 where the C library has no free_sized).
#include "common.h"
extern "C" void free_sized(void*, std::size_t) __attribute__((weak));
int main() {
  if (&free_sized == nullptr) return 77;
  void* p = alloc_bytes(40);
  free_sized(opaque(p), 400);
  return unnoticed();
}
