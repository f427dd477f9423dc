// C23 free_sized with a size other than the one allocated (exit 77 where the C library has no free_sized).
#include "common.h"
extern "C" void free_sized(void*, std::size_t) __attribute__((weak));
int main(int argc, char** argv) {
  const std::size_t n = case_size(argc, argv, 40);
  if (&free_sized == nullptr) return 77;
  void* p = alloc_bytes(n);
  free_sized(opaque(p), n * 10);
  return unnoticed();
}
