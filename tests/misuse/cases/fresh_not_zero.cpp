// Fills a block with a secret, frees it, and asks for blocks of its size
// again, one at a time, a thousand times: an allocator that hands out memory holding an earlier owner's
// bytes leaks them to the next one. Counts as missed if any of the new
// blocks holds a byte of the secret.
#include "common.h"
int main(int argc, char** argv) {
  const std::size_t n = case_size(argc, argv, 128);
  auto* p = static_cast<unsigned char*>(alloc_bytes(n));
  std::memset(p, 0xc5, n);
  std::free(opaque(p));
  bool leaked = false;
  for (int k = 0; k < 1000 && !leaked; ++k) {
    void* h = opaque(std::malloc(n));
    if (h == nullptr) return 2;
    const auto* q = static_cast<volatile unsigned char*>(h);
    for (std::size_t i = 0; i < n && !leaked; ++i) leaked = q[i] == 0xc5;
    std::free(h);
  }
  return leaked ? unnoticed() : prevented("fresh blocks hold no earlier owner's bytes");
}
