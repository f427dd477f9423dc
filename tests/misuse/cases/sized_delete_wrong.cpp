// Deletes a derived object through a base pointer without a virtual
// destructor: sized delete receives the base's size.
#include "common.h"
struct Base {
  long a;
};
struct Derived : Base {
  char payload[200];
};
int main() {
  Base* b = opaque(static_cast<Base*>(new Derived()));
  delete b;
  return unnoticed();
}
