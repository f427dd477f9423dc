// Frees a block twice in a row.
#include "common.h"
int main(int argc, char** argv) {
  const std::size_t n = case_size(argc, argv, 48);
  void* p = alloc_bytes(n);
  std::free(p);
  std::free(opaque(p));
  return unnoticed();
}
