// free(a); free(b); free(a): the second free of a is not at the top of any list.
#include "common.h"
int main() {
  void* a = alloc_bytes(32);
  void* b = alloc_bytes(32);
  std::free(a);
  std::free(b);
  std::free(opaque(a));
  return unnoticed();
}
