// SPDX-License-Identifier: MIT
// Classes proposed from a trace's live blocks at its peak (class_proposal.h).
#include "tune/class_proposal.h"

#include <algorithm>
#include <map>
#include <fmt/format.h>


#include "alloc/config.h"
#include "alloc/size_class.h"

namespace tailor::tune {

namespace {

constexpr std::uint32_t kDefaultClassBits = 2;         // class_spacing 4
constexpr std::uint64_t kDefaultMiddleMax = 128 * 1024;

// The kMinSaving-or-more sizes that save most, at most kClassListMax, increasing.
std::vector<std::uint32_t> pick(const std::map<std::uint32_t, std::uint64_t>& saving, std::uint64_t& total) {
  std::vector<std::pair<std::uint64_t, std::uint32_t>> by_saving;
  for (const auto& [size, bytes] : saving)
    if (bytes >= kMinSaving) by_saving.emplace_back(bytes, size);
  std::sort(by_saving.begin(), by_saving.end(), [](const auto& a, const auto& b) {
    return a.first != b.first ? a.first > b.first : a.second < b.second;
  });
  if (by_saving.size() > alloc::kClassListMax) by_saving.resize(alloc::kClassListMax);
  std::vector<std::uint32_t> out;
  total = 0;
  for (const auto& [bytes, size] : by_saving) {
    out.push_back(size);
    total += bytes;
  }
  std::sort(out.begin(), out.end());
  return out;
}

}  // namespace

ClassProposal propose_classes(const simulate::ReplayTrace& trace) {
  ClassProposal p;
  // The peak of requested bytes in use, then the live blocks of each size there.
  std::uint64_t in_use = 0, peak = 0, peak_op = 0;
  const auto& ops = trace.operations;
  for (std::uint64_t i = 0; i < ops.size(); ++i) {
    const std::uint64_t bytes = trace.sizes[ops[i].size()];
    if (ops[i].kind() == simulate::Operation::kAllocate) {
      in_use += bytes;
      if (in_use > peak) peak = in_use, peak_op = i;
    } else {
      in_use -= bytes;
    }
  }
  std::vector<std::int64_t> live(trace.sizes.size(), 0);
  for (std::uint64_t i = 0; i <= peak_op && i < ops.size(); ++i)
    live[ops[i].size()] += ops[i].kind() == simulate::Operation::kAllocate ? 1 : -1;

  std::uint32_t series[alloc::kMaxClasses];
  const std::size_t n = alloc::class_series(kDefaultClassBits, kDefaultMiddleMax, series, alloc::kMaxClasses);
  auto class_of = [&](std::uint64_t s) -> std::uint64_t {
    const std::uint32_t* c = std::lower_bound(series, series + n, static_cast<std::uint32_t>(std::max<std::uint64_t>(s, 1)));
    return c == series + n ? 0 : *c;
  };
  std::map<std::uint32_t, std::uint64_t> saving;
  for (std::size_t k = 0; k < trace.sizes.size(); ++k) {
    const std::uint64_t s = trace.sizes[k];
    if (live[k] <= 0 || s > alloc::kClassListLimit) continue;
    const std::uint64_t c = class_of(s);
    p.peak_block_bytes += static_cast<std::uint64_t>(live[k]) * c;
    const std::uint64_t l = (s + 15) / 16 * 16;
    if (s > 128 && l < c) saving[static_cast<std::uint32_t>(l)] += static_cast<std::uint64_t>(live[k]) * (c - l);
  }
  p.classes = pick(saving, p.classes_saving);
  saving.clear();
  for (std::size_t k = 0; k < trace.sizes.size(); ++k) {
    const std::uint64_t s = trace.sizes[k];
    if (live[k] <= 0 || s > alloc::kClassListLimit) continue;
    std::uint64_t c = class_of(s);
    if (auto it = std::lower_bound(p.classes.begin(), p.classes.end(), s); it != p.classes.end() && *it < c) c = *it;
    const std::uint64_t e = std::max<std::uint64_t>(24, (s + 7) / 8 * 8);
    if (e % 16 != 0 && e < c) saving[static_cast<std::uint32_t>(e)] += static_cast<std::uint64_t>(live[k]) * (c - e);
  }
  p.exact = pick(saving, p.exact_saving);
  return p;
}

std::string class_list(const std::vector<std::uint32_t>& sizes) {
  return fmt::format("{}", fmt::join(sizes, ","));
}

}  // namespace tailor::tune
