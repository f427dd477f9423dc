// A scalar new, released with delete[] (which reads a count cookie that is not there).
#include "common.h"
template <std::size_t N>
struct Item {
  char data[N];
  ~Item() { data[0] = 0; }
};
template <std::size_t N>
int run() {
  Item<N>* item = opaque(new Item<N>());
  delete[] item;  // NOLINT: the misuse under test
  return unnoticed();
}
int main(int argc, char** argv) {
  switch (case_size(argc, argv, 24)) {
    case 24: return run<24>();
    case 24 + 3 * 1024: return run<24 + 3 * 1024>();
    default: return run<24 + 512 * 1024>();
  }
}
