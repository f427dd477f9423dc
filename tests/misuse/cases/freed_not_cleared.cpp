// Fills a block with a secret, frees it and reads it back through the
// dangling pointer: an allocator that leaves freed memory as it was lets
// the secret be read after free. Counts as missed if more than a quarter of
// the secret's bytes are still there (an allocator's own links may
// overwrite a few words).
#include "common.h"
int main(int argc, char** argv) {
  const std::size_t n = case_size(argc, argv, 128);
  auto* p = static_cast<unsigned char*>(alloc_bytes(n));
  std::memset(p, 0xc5, n);
  std::free(opaque(p));
  const auto* q = static_cast<volatile unsigned char*>(opaque(p));
  std::size_t left = 0;
  {
    Access a;
    for (std::size_t i = 0; i < n; ++i) left += q[i] == 0xc5;
  }
  return left * 4 > n ? unnoticed() : prevented("freed memory holds no trace of its data");
}
