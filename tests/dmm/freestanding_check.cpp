// SPDX-License-Identifier: MIT
// json_reader.h and text.h under libtailor's flags (no exceptions, no RTTI,
// hidden visibility), in a shared library linked as C with -z defs: the link
// fails if the headers need any libstdc++ symbol, and dmm.freestanding_symbols
// checks with nm that only libc is left undefined. The function reads a DMM
// spec the way libtailor will (arena on the stack, messages from Text), and
// test_dmm calls it.
#include <cstddef>

#include "dmm/json_reader.h"
#include "dmm/text.h"

namespace {

using tailor::dmm::JsonValue;
using tailor::dmm::Text;

constexpr const char* kFits[] = {"first", "best", "exact", "farthest"};

// Else replaces out with "allocators[2].fit: unknown fit 'worst' (known:
// first, best, exact, farthest)".
bool check_fit(const JsonValue& fit, std::size_t index, Text& out) {
  for (const char* known : kFits)
    if (fit.string_equals(known)) return true;
  out.clear();
  out.append("allocators[").append_uint(index).append("].fit: unknown fit '");
  out.append_visible(fit.string_data(), fit.string_size(), 32).append("' (known: ");
  for (const char* known : kFits) out.append(known).append(known == kFits[3] ? ")" : ", ");
  return false;
}

}  // namespace

// Writes "<name>: <n> allocators: [min, max] mechanism; ..." (or the error)
// into out; returns 1 when the spec reads, else 0.
extern "C" __attribute__((visibility("default"))) int tailor_dmm_json_summary(const char* text, std::size_t length,
                                                                               char* out, std::size_t capacity) {
  alignas(16) char arena[64 * 1024];
  Text t(out, capacity);
  const tailor::dmm::JsonResult r = tailor::dmm::parse_json(text, length, arena, sizeof arena);
  if (r.failed()) {
    t.append(r.error());
    return 0;
  }
  const JsonValue* name = r.root()->find("name");
  const JsonValue* list = r.root()->find("allocators");
  if (list == nullptr || !list->is_array()) {
    t.append("allocators: must be an array, found ")
        .append(list == nullptr ? "nothing" : tailor::dmm::json_kind_name(list->kind()));
    return 0;
  }
  t.append(name != nullptr ? name->string_data() : "?").append(": ").append_uint(list->size()).append(" allocators:");
  std::size_t i = 0;
  for (const JsonValue& a : list->items()) {
    const JsonValue* sizes = a.find("sizes");
    const JsonValue* max = sizes != nullptr ? sizes->find("max") : nullptr;
    const JsonValue* fit = a.find("fit");
    if (fit != nullptr && !check_fit(*fit, i, t)) return 0;
    t.append(" [").append_uint(sizes != nullptr && sizes->find("min") ? sizes->find("min")->as_uint64() : 0);
    t.append(", ");
    if (max != nullptr && max->is_uint64())
      t.append_uint(max->as_uint64());
    else
      t.append("-");
    t.append("] ").append(a.find("mechanism") ? a.find("mechanism")->string_data() : "?").append(";");
    ++i;
  }
  return 1;
}
