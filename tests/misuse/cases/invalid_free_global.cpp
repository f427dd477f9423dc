// Frees the address of a global array.
#include "common.h"
alignas(16) char g_buffer[256];
int main() {
  std::free(opaque(static_cast<void*>(g_buffer + 32)));
  return unnoticed();
}
