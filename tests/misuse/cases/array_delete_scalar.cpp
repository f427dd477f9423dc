// new[] of objects with a destructor (a count cookie before them), released with scalar delete.
#include "common.h"
struct Item {
  char data[24];
  ~Item() { data[0] = 0; }
};
int main(int argc, char** argv) {
  const std::size_t n = case_size(argc, argv, 8 * sizeof(Item)) / sizeof(Item);
  Item* items = opaque(new Item[n]);
  delete items;  // NOLINT: the misuse under test
  return unnoticed();
}
