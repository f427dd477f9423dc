// Frees the address of a local variable.
#include "common.h"
int main() {
  char local[64];
  std::memset(local, 1, sizeof local);
  std::free(opaque(static_cast<void*>(local + 16)));
  return unnoticed();
}
