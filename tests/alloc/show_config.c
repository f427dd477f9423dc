/* SPDX-License-Identifier: MIT
 * Prints, one per line, what libtailor configured in this process: the
 * [program ...] section in force, the DMM and whether it serves malloc, and
 * TAILOR_CLASS_SPACING. Run under LD_PRELOAD=libtailor.so by
 * program_sections.sh; libtailor's API is found with dlsym, so the program
 * links no allocator. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tailor/tailor.h"

int main(void) {
  const char* (*section)(void) = (const char* (*)(void))dlsym(RTLD_DEFAULT, "tailor_config_section");
  const char* (*dmm)(tailor_config_source*) = (const char* (*)(tailor_config_source*))dlsym(RTLD_DEFAULT, "tailor_config_dmm");
  void (*dmm_stats)(tailor_dmm_stats*, size_t) =
      (void (*)(tailor_dmm_stats*, size_t))dlsym(RTLD_DEFAULT, "tailor_dmm_get_stats_sized");
  size_t (*config)(tailor_config_entry*, size_t, size_t) =
      (size_t (*)(tailor_config_entry*, size_t, size_t))dlsym(RTLD_DEFAULT, "tailor_config_sized");
  if (!section || !dmm || !dmm_stats || !config) {
    puts("libtailor is not this process's malloc");
    return 2;
  }
  void* volatile p = malloc(100);
  tailor_config_source src;
  const char* d = dmm(&src);
  tailor_dmm_stats st;
  dmm_stats(&st, sizeof st);
  tailor_config_entry entries[32];
  size_t n = config(entries, 32, sizeof entries[0]);
  printf("section=%s\n", section() ? section() : "(none)");
  printf("dmm=%s source=%d serving=%s\n", d ? d : "(none)", (int)src, st.active && st.allocations > 0 ? "yes" : "no");
  for (size_t i = 0; i < n && i < 32; ++i)
    if (strcmp(entries[i].name, "TAILOR_CLASS_SPACING") == 0)
      printf("class_spacing=%lld source=%d\n", (long long)entries[i].value, (int)entries[i].source);
  free(p);
  return 0;
}
