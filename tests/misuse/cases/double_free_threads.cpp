// A block freed by another thread, then freed again by its owner.
#include <thread>

#include "common.h"
int main(int argc, char** argv) {
  const std::size_t n = case_size(argc, argv, 96);
  void* p = alloc_bytes(n);
  std::thread t([p] { std::free(p); });
  t.join();
  std::free(opaque(p));
  return unnoticed();
}
