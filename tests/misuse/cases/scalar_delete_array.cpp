// A scalar new, released with delete[] (which reads a count cookie that is not there).
#include "common.h"
struct Item {
  char data[24];
  ~Item() { data[0] = 0; }
};
int main() {
  Item* item = opaque(new Item());
  delete[] item;  // NOLINT: the misuse under test
  return unnoticed();
}
