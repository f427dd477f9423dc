// SPDX-License-Identifier: MIT
// Module scanning with dl_iterate_phdr; see module_map.h.
#include "record/module_map.h"

#include <elf.h>
#include <link.h>

#include <cstring>

namespace tailor::record {

namespace {

constexpr std::size_t kMaxModules = 4096;
constexpr std::size_t kMaxPath = 512;

struct Known {
  std::uint64_t load_address;
  std::uint64_t start;
  std::uint64_t end;
  std::uint64_t time_ns;
  char path[kMaxPath];
  char build_id[2 * 20 + 1];
  bool reported;
};

// Static so that scanning never allocates; untouched entries cost no memory.
Known known[kMaxModules];
std::size_t known_count = 0;
unsigned long long last_adds = ~0ull;
unsigned long long last_subs = ~0ull;
bool forgotten = true;

struct ScanContext {
  std::uint64_t now_ns;
  const char* executable;
  bool first_callback;
  bool unchanged;
};

void read_build_id(const dl_phdr_info* info, char* out) {
  out[0] = '\0';
  for (int i = 0; i < info->dlpi_phnum; ++i) {
    const ElfW(Phdr)& ph = info->dlpi_phdr[i];
    if (ph.p_type != PT_NOTE) continue;
    const auto* p = reinterpret_cast<const unsigned char*>(info->dlpi_addr + ph.p_vaddr);
    const unsigned char* end = p + ph.p_memsz;
    while (p + sizeof(ElfW(Nhdr)) <= end) {
      ElfW(Nhdr) n;
      std::memcpy(&n, p, sizeof n);
      const unsigned char* name = p + sizeof n;
      const unsigned char* desc = name + ((n.n_namesz + 3) & ~3u);
      const unsigned char* next = desc + ((n.n_descsz + 3) & ~3u);
      if (next > end) break;
      if (n.n_type == NT_GNU_BUILD_ID && n.n_namesz == 4 && std::memcmp(name, "GNU", 4) == 0 && n.n_descsz <= 20) {
        static const char hex[] = "0123456789abcdef";
        for (unsigned k = 0; k < n.n_descsz; ++k) {
          out[2 * k] = hex[desc[k] >> 4];
          out[2 * k + 1] = hex[desc[k] & 15];
        }
        out[2 * n.n_descsz] = '\0';
        return;
      }
      p = next;
    }
  }
}

int visit(dl_phdr_info* info, std::size_t size, void* data) {
  auto* ctx = static_cast<ScanContext*>(data);
  if (ctx->first_callback) {
    ctx->first_callback = false;
    if (size >= offsetof(dl_phdr_info, dlpi_subs) + sizeof info->dlpi_subs) {
      if (!forgotten && info->dlpi_adds == last_adds && info->dlpi_subs == last_subs) {
        ctx->unchanged = true;
        return 1;  // nothing loaded or unloaded since the last scan
      }
      last_adds = info->dlpi_adds;
      last_subs = info->dlpi_subs;
    }
  }
  std::uint64_t lo = UINT64_MAX, hi = 0;
  for (int i = 0; i < info->dlpi_phnum; ++i) {
    const ElfW(Phdr)& ph = info->dlpi_phdr[i];
    if (ph.p_type != PT_LOAD) continue;
    std::uint64_t s = info->dlpi_addr + ph.p_vaddr;
    if (s < lo) lo = s;
    if (s + ph.p_memsz > hi) hi = s + ph.p_memsz;
  }
  if (hi == 0) return 0;
  const char* path = info->dlpi_name && info->dlpi_name[0] ? info->dlpi_name : ctx->executable;
  for (std::size_t i = 0; i < known_count; ++i)
    if (known[i].load_address == info->dlpi_addr && known[i].start == lo && std::strncmp(known[i].path, path, kMaxPath - 1) == 0)
      return 0;
  if (known_count == kMaxModules) return 0;
  Known& k = known[known_count++];
  k.load_address = info->dlpi_addr;
  k.start = lo;
  k.end = hi;
  k.time_ns = ctx->now_ns;
  std::strncpy(k.path, path, kMaxPath - 1);
  k.path[kMaxPath - 1] = '\0';
  read_build_id(info, k.build_id);
  k.reported = false;
  return 0;
}

}  // namespace

std::size_t scan_new_modules(trace::ModuleFields* out, std::size_t cap, std::uint64_t now_ns,
                             const char* executable) noexcept {
  ScanContext ctx{now_ns, executable ? executable : "", true, false};
  dl_iterate_phdr(visit, &ctx);
  forgotten = false;
  std::size_t n = 0;
  for (std::size_t i = 0; i < known_count && n < cap; ++i) {
    Known& k = known[i];
    if (k.reported) continue;
    k.reported = true;
    out[n++] = {k.load_address, k.start, k.end, k.time_ns, k.path, k.build_id};
  }
  return n;
}

void forget_modules() noexcept {
  for (std::size_t i = 0; i < known_count; ++i) known[i].reported = false;
  forgotten = true;
}

}  // namespace tailor::record
