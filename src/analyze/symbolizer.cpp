// SPDX-License-Identifier: MIT
// libdw-based symbolization of call sites; see symbolizer.h.
#include "symbolizer.h"

#include <cxxabi.h>
#include <elfutils/libdwfl.h>
#include <fmt/format.h>

#include <cstdlib>
#include <filesystem>
#include <unordered_map>

namespace tailor::analyze {

std::string Symbol::to_string() const {
  std::string where = module.empty() ? std::string("?") : std::filesystem::path(module).filename().string();
  if (function.empty()) return module.empty() ? "?" : fmt::format("{}+{:#x}", where, offset);
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
    }
  }
  impl_->cache.emplace(address, s);
  return s;
}

}  // namespace tailor::analyze
