// free(a); free(b); free(a): the second free of a is not at the top of any list.
#include "common.h"
int main(int argc, char** argv) {
  const std::size_t n = case_size(argc, argv, 32);
  void* a = alloc_bytes(n);
  void* b = alloc_bytes(n);
  std::free(a);
  std::free(b);
  std::free(opaque(a));
  return unnoticed();
}
