// SPDX-License-Identifier: MIT
// Loads the library named in argv[1] with dlopen (after recording started),
// allocates one 7777-byte block through it, frees it, unloads it.
#include <dlfcn.h>

#include <cstdio>
#include <cstdlib>

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: dlopen_plugin LIBRARY\n");
    return 2;
  }
  void* lib = dlopen(argv[1], RTLD_NOW);
  if (!lib) {
    std::fprintf(stderr, "dlopen_plugin: %s\n", dlerror());
    return 1;
  }
  auto allocate = reinterpret_cast<void* (*)(std::size_t)>(dlsym(lib, "plugin_allocate"));
  if (!allocate) return 1;
  std::free(allocate(7777));
  dlclose(lib);
  return 0;
}
