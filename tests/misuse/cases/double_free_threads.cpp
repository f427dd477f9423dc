// A block freed by another thread, then freed again by its owner.
#include <thread>

#include "common.h"
int main() {
  void* p = alloc_bytes(96);
  std::thread t([p] { std::free(p); });
  t.join();
  std::free(opaque(p));
  return unnoticed();
}
