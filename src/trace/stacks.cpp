// SPDX-License-Identifier: MIT
// The reader's half of whole call stacks (stacks.h): the table of merged
// nodes, and the decoding of Stacks and EventStacks payloads (layouts in
// event_codec.h and docs/trace-format.md).
#include "tailor/trace/stacks.h"

#include "trace/byte_io.h"
#include "trace/event_codec.h"
#include "trace/hash.h"

namespace tailor::trace {

std::vector<std::uint64_t> StackTable::frames(std::uint32_t id) const {
  std::vector<std::uint64_t> out;
  for (; id != 0; id = parent_[id]) out.push_back(address_[id]);
  return out;
}

std::size_t StackTable::depth(std::uint32_t id) const noexcept {
  std::size_t n = 0;
  for (; id != 0; id = parent_[id]) ++n;
  return n;
}

std::uint32_t StackTable::intern(std::uint32_t parent, std::uint64_t address) {
  const std::uint64_t key[2] = {parent, address};
  const auto slot_of = [&](std::uint64_t h) { return static_cast<std::size_t>(h & (slots_.size() - 1)); };
  if (4 * (parent_.size() + 1) > 3 * slots_.size()) {  // keep the table at most 3/4 full
    std::vector<std::uint32_t> grown(slots_.empty() ? 1024 : 2 * slots_.size(), 0);
    slots_.swap(grown);
    for (const std::uint32_t id : grown)
      if (id != 0) {
        const std::uint64_t k[2] = {parent_[id], address_[id]};
        std::size_t s = slot_of(hash64(k, sizeof k));
        while (slots_[s] != 0) s = slot_of(s + 1);
        slots_[s] = id;
      }
  }
  std::size_t s = slot_of(hash64(key, sizeof key));
  for (; slots_[s] != 0; s = slot_of(s + 1))
    if (parent_[slots_[s]] == parent && address_[slots_[s]] == address) return slots_[s];
  const auto id = static_cast<std::uint32_t>(parent_.size());
  parent_.push_back(parent);
  address_.push_back(address);
  slots_[s] = id;
  return id;
}

namespace codec {

bool decode_stack_nodes(const std::uint8_t* data, std::size_t size, std::size_t n, std::vector<StackNode>& out,
                        std::string& why) {
  io::Cursor c(data, data + size);
  std::uint64_t id = 0, address = 0;
  out.clear();
  for (std::size_t i = 0; i < n; ++i) {
    const std::uint64_t step = c.varint();
    const std::uint64_t parent = c.varint();
    address += static_cast<std::uint64_t>(io::unzigzag(c.varint()));
    if (!c.ok()) {
      why = "stack node " + std::to_string(i) + " of " + std::to_string(n) + " overruns the chunk";
      return false;
    }
    id += step;
    if (step == 0 || id > UINT32_MAX || parent >= id) {
      why = "stack node " + std::to_string(i) + " has id " + std::to_string(id) + " and parent " +
            std::to_string(parent) + " (ids ascend, a parent comes before its child)";
      return false;
    }
    out.push_back({static_cast<std::uint32_t>(id), static_cast<std::uint32_t>(parent), address});
  }
  if (c.remaining() != 0) {
    why = "stack nodes end " + std::to_string(c.remaining()) + " bytes before the chunk does";
    return false;
  }
  return true;
}

bool decode_stacks(const std::uint8_t* data, std::size_t size, std::size_t n, const std::vector<std::uint32_t>& ids,
                   Event* out, std::string& why) {
  io::Cursor c(data, data + size);
  std::uint64_t stack = 0;
  for (std::size_t i = 0; i < n; ++i) {
    stack += static_cast<std::uint64_t>(io::unzigzag(c.varint()));
    if (!c.ok()) {
      why = "the stacks of " + std::to_string(n) + " events end at event " + std::to_string(i);
      return false;
    }
    if (stack >= ids.size() || (stack != 0 && ids[stack] == 0)) {
      why = "event " + std::to_string(i) + " names stack " + std::to_string(stack) + ", which no stack chunk before it defines";
      return false;
    }
    out[i].stack = ids[stack];
  }
  if (c.remaining() != 0) {
    why = "the stacks of " + std::to_string(n) + " events are followed by " + std::to_string(c.remaining()) +
          " more bytes";
    return false;
  }
  return true;
}

}  // namespace codec

}  // namespace tailor::trace
