// SPDX-License-Identifier: MIT
// Bytes by whole call stack (stack_profile.h): one pass, the live blocks kept
// only up to the peak.
#include "analyze/stack_profile.h"

#include "analyze/sampling.h"
#include "util/flat_map.h"

namespace tailor::analyze {

namespace {

struct Live {
  std::uint64_t bytes;
  std::uint32_t stack;
};

}  // namespace

StackProfile profile_stacks(trace::Reader& reader, std::uint64_t peak_event) {
  StackProfile p;
  p.allocated.assign(reader.stacks().size() + 1, 0);
  p.at_peak.assign(reader.stacks().size() + 1, 0);
  util::FlatMap<Live> live{std::size_t{1} << 16};
  const SampleWeights weights(reader.header().sample_interval);  // a sampled trace: what each block stands for
  std::uint64_t index = 0;
  bool before_peak = true;
  auto allocate = [&](std::uint64_t address, std::uint64_t requested, std::uint32_t stack) {
    const std::uint64_t bytes = weights.bytes(requested);
    p.allocated[stack] += bytes;
    p.allocated_bytes += bytes;
    if (before_peak) *live.try_emplace(address).first = {bytes, stack};
  };
  auto release = [&](std::uint64_t address) {
    Live gone{};
    if (before_peak) live.take(address, gone);
  };
  reader.rewind();
  const trace::Event* run = nullptr;
  while (const std::size_t n = reader.next_run(run)) {
    for (std::size_t i = 0; i < n; ++i, ++index) {
      const trace::Event& e = run[i];
      if (trace::is_allocation(e.op)) {
        if (e.address != 0) allocate(e.address, trace::requested_bytes(e), e.stack);
      } else if (trace::is_release(e.op)) {
        if (e.address != 0) release(e.address);
      } else if (e.op == trace::Op::Realloc) {
        if (e.aux != 0 && (e.address != 0 || e.size == 0)) release(e.aux);
        if (e.address != 0) allocate(e.address, e.size, e.stack);
      }
      if (before_peak && index == peak_event) {
        live.for_each([&](std::uint64_t, const Live& b) {
          p.at_peak[b.stack] += b.bytes;
          p.peak_bytes += b.bytes;
        });
        before_peak = false;
        live = util::FlatMap<Live>{};
      }
    }
  }
  reader.rewind();
  return p;
}

}  // namespace tailor::analyze
