// SPDX-License-Identifier: MIT
// The loader call the recorder interposes: dlclose, so that the module map
// gets a module before it goes away (one loaded and unloaded between two
// flushes would otherwise be missing, and its call sites unsymbolizable),
// and the unwinder forgets the rules it read from it.
// dlopen is deliberately not interposed: glibc resolves a dlopen'ed name
// with the RUNPATH and $ORIGIN of the calling object, which would become
// this library; new modules are found at each flush instead.
#include "record/cfi_unwinder.h"
#include "record/real_functions.h"
#include "record/recorder.h"

extern "C" __attribute__((visibility("default"))) int dlclose(void* handle) {
  tailor::record::report_loaded_modules();
  const int status = tailor::record::real.dlclose ? tailor::record::real.dlclose(handle) : -1;
  // Another module may come to the unloaded one's addresses: the unwinder's
  // rules of them go.
  tailor::record::frame_rules_modules_changed();
  return status;
}
