// Deletes a derived object through a base pointer without a virtual
// destructor: sized delete receives the base's size.
#include <cstring>

#include "common.h"
struct Base {
  long a;
};
template <std::size_t N>
struct Derived : Base {
  char payload[N];
};
template <std::size_t N>
int run() {
  Base* b = opaque(static_cast<Base*>(new Derived<N>()));
  delete b;
  return unnoticed();
}
int main(int argc, char** argv) {
  switch (case_size(argc, argv, 200)) {
    case 200: return run<200>();
    case 200 + 3 * 1024: return run<200 + 3 * 1024>();
    default: return run<200 + 512 * 1024>();
  }
}
