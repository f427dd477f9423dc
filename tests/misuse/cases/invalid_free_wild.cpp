// Frees an address no allocator ever returned (heap-like, 16-byte aligned).
#include <cstdint>

#include "common.h"
int main() {
  void* p = alloc_bytes(32);
  auto wild = reinterpret_cast<void*>((reinterpret_cast<std::uintptr_t>(p) ^ (std::uintptr_t{1} << 40)) & ~std::uintptr_t{15});
  std::free(opaque(wild));
  return unnoticed();
}
