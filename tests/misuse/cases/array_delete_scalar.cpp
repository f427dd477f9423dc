// new[] of objects with a destructor (a count cookie before them), released with scalar delete.
#include "common.h"
struct Item {
  char data[24];
  ~Item() { data[0] = 0; }
};
int main() {
  Item* items = opaque(new Item[8]);
  delete items;  // NOLINT: the misuse under test
  return unnoticed();
}
