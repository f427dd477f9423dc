// SPDX-License-Identifier: MIT
// libdw-based symbolization of call sites; see symbolizer.h.
#include "analyze/symbolizer.h"

#include <cxxabi.h>
#include <dwarf.h>
#include <elfutils/libdw.h>
#include <elfutils/libdwfl.h>
#include <fmt/format.h>

#include <cstdlib>
#include <filesystem>
#include <unordered_map>

namespace tailor::analyze {

std::string Symbol::to_string() const {
  std::string where = module.empty() ? std::string("?") : std::filesystem::path(module).filename().string();
  if (function.empty()) return module.empty() ? "?" : fmt::format("{}+{:#x}", where, offset);
  if (!file.empty() && !inlined_file.empty())
    return fmt::format("{} ({}:{}, inlined {}:{})", function, std::filesystem::path(file).filename().string(), line,
                       std::filesystem::path(inlined_file).filename().string(), inlined_line);
  if (!file.empty()) return fmt::format("{} ({}:{})", function, std::filesystem::path(file).filename().string(), line);
  return fmt::format("{} ({})", function, where);
}

namespace {

std::string demangle(const char* name) {
  int status = 0;
  char* d = abi::__cxa_demangle(name, nullptr, nullptr, &status);
  if (status != 0 || !d) return name;
  std::string s(d);
  std::free(d);
  return s;
}

// If pc lies in code inlined into a function, moves the innermost source
// position to s.inlined_* and puts in s.file / s.line the line of the
// function itself where the outermost inlined call sits: an allocation
// helper inlined everywhere then still shows which line of which function
// allocated.
void attribute_to_caller(Dwfl_Module* mod, std::uint64_t pc, Symbol& s) {
  Dwarf_Addr bias = 0;
  Dwarf_Die* cu = dwfl_module_addrdie(mod, pc, &bias);
  if (!cu) return;
  // dwarf_getscopes follows an inlined instance into its abstract definition;
  // the physical nesting (instance inside instance inside the function) comes
  // from dwarf_getscopes_die on the innermost instance.
  Dwarf_Die* lexical = nullptr;
  int n = dwarf_getscopes(cu, pc - bias, &lexical);
  int innermost = -1;
  for (int i = 0; i < n && innermost < 0; ++i)
    if (dwarf_tag(&lexical[i]) == DW_TAG_inlined_subroutine) innermost = i;
  Dwarf_Die* scopes = nullptr;
  n = innermost < 0 ? 0 : dwarf_getscopes_die(&lexical[innermost], &scopes);
  std::free(lexical);
  const Dwarf_Die* outermost_inline = nullptr;
  for (int i = 0; i < n; ++i) {
    int tag = dwarf_tag(&scopes[i]);
    if (tag == DW_TAG_inlined_subroutine) outermost_inline = &scopes[i];
    if (tag == DW_TAG_subprogram) break;
  }
  if (outermost_inline) {
    Dwarf_Attribute attr;
    Dwarf_Word line = 0, file_index = 0;
    Dwarf_Die die = *outermost_inline;
    if (dwarf_formudata(dwarf_attr(&die, DW_AT_call_line, &attr), &line) == 0 &&
        dwarf_formudata(dwarf_attr(&die, DW_AT_call_file, &attr), &file_index) == 0) {
      Dwarf_Files* files = nullptr;
      std::size_t nfiles = 0;
      if (dwarf_getsrcfiles(cu, &files, &nfiles) == 0 && file_index < nfiles) {
        if (const char* file = dwarf_filesrc(files, file_index, nullptr, nullptr)) {
          s.inlined_file = s.file;
          s.inlined_line = s.line;
          s.file = file;
          s.line = static_cast<int>(line);
        }
      }
    }
  }
  std::free(scopes);
}

char* debuginfo_path = nullptr;
const Dwfl_Callbacks kCallbacks = {
    dwfl_build_id_find_elf,
    dwfl_standard_find_debuginfo,
    dwfl_offline_section_address,
    &debuginfo_path,
};

}  // namespace

struct Symbolizer::Impl {
  Dwfl* dwfl = nullptr;
  const std::vector<trace::Module>* modules = nullptr;
  std::unordered_map<std::uint64_t, Symbol> cache;
};

Symbolizer::Symbolizer(const std::vector<trace::Module>& modules) : impl_(std::make_unique<Impl>()) {
  impl_->modules = &modules;
  impl_->dwfl = dwfl_begin(&kCallbacks);
  if (!impl_->dwfl) return;
  dwfl_report_begin(impl_->dwfl);
  for (const auto& m : modules) {
    if (m.path.empty() || m.path[0] != '/' || !std::filesystem::exists(m.path)) continue;
    dwfl_report_elf(impl_->dwfl, m.path.c_str(), m.path.c_str(), -1, m.load_address, false);
  }
  dwfl_report_end(impl_->dwfl, nullptr, nullptr);
}

Symbolizer::~Symbolizer() {
  if (impl_->dwfl) dwfl_end(impl_->dwfl);
}

Symbol Symbolizer::resolve_return_address(std::uint64_t address) {
  auto it = impl_->cache.find(address);
  if (it != impl_->cache.end()) return it->second;
  Symbol s;
  std::uint64_t pc = address ? address - 1 : 0;
  for (const auto& m : *impl_->modules) {
    if (pc >= m.start && pc < m.end) {
      s.module = m.path;
      s.offset = address - m.load_address;
      break;
    }
  }
  if (impl_->dwfl && pc) {
    if (Dwfl_Module* mod = dwfl_addrmodule(impl_->dwfl, pc)) {
      if (const char* name = dwfl_module_addrname(mod, pc)) s.function = demangle(name);
      if (Dwfl_Line* line = dwfl_module_getsrc(mod, pc)) {
        int lineno = 0;
        if (const char* file = dwfl_lineinfo(line, nullptr, &lineno, nullptr, nullptr, nullptr)) {
          s.file = file;
          s.line = lineno;
        }
      }
      attribute_to_caller(mod, pc, s);
    }
  }
  impl_->cache.emplace(address, s);
  return s;
}

}  // namespace tailor::analyze
