// SPDX-License-Identifier: MIT
// Turns a run of one thread's events into the column-wise, delta-coded byte
// string that is then compressed into an Events chunk, and back. Columns of
// like values (kinds, time deltas, sizes, address deltas, ...) compress far
// better than interleaved records: this is what keeps a trace near 2-4 bytes
// per event. Encoding never allocates; the caller provides the workspace.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "tailor/trace/event.h"
#include "tailor/trace/stacks.h"
#include "tailor/trace/writer.h"

namespace tailor::trace::codec {

/// The encoders write the columns in format::kFrameOrder (codec ZstdFrames);
/// frame_bytes gives, from an encoded payload's lengths, the bytes of each of
/// its format::kFrames frames (the lengths count in the first).
void frame_bytes(const std::uint8_t* encoded, std::size_t bytes[]) noexcept;

/// Bytes of workspace encode() needs for n events (columns are staged apart).
std::size_t workspace_size(std::size_t n) noexcept;

/// Upper bound of the encoded size of n events.
std::size_t max_encoded_size(std::size_t n) noexcept;

/// Encodes events[0..n) whose times are measured from base_time_ns into out
/// (at least max_encoded_size(n) bytes) using workspace (workspace_size(n)
/// bytes). Returns the encoded size.
std::size_t encode(const Event* events, std::size_t n, std::uint64_t base_time_ns,
                   std::uint8_t* workspace, std::uint8_t* out) noexcept;

/// The same, with each event's time mapped by `time` as it is encoded (the
/// events are only read), measured from the smallest mapped time. Returns the
/// encoded size; first_ns and last_ns receive the smallest and largest mapped
/// times. One pass over the events when their times do not decrease (a
/// recorder's buffer), two otherwise.
std::size_t encode(const Event* events, std::size_t n, const TimeMap& time, std::uint8_t* workspace,
                   std::uint8_t* out, std::uint64_t& first_ns, std::uint64_t& last_ns) noexcept;

/// The same for `slots` slots of packed events (writer.h), which hold
/// `events` events. Returns 0 if the last event is cut (its second slot
/// missing).
std::size_t encode(const PackedEvent* slots, std::size_t n, const TimeMap& time, std::uint8_t* workspace,
                   std::uint8_t* out, std::size_t& events, std::uint64_t& first_ns, std::uint64_t& last_ns) noexcept;

/// The payload of an EventStacks chunk: each event's Event::stack as a
/// zigzag varint of its difference to the previous event's (the first's to
/// 0), into out (at least max_stacks_size(n) bytes). Returns its size, 0 if no
/// event has a stack. The packed form reads an event's stack from its second
/// slot's `address` (writer.h); one-slot events have none.
std::size_t max_stacks_size(std::size_t n) noexcept;
std::size_t encode_stacks(const Event* events, std::size_t n, std::uint8_t* out) noexcept;
std::size_t encode_stacks(const PackedEvent* slots, std::size_t n, std::uint8_t* out) noexcept;

/// The payload of a Stacks chunk: per node, varint (id - the previous node's
/// id in the chunk, the first's - 0), varint parent, zigzag varint (address -
/// the previous node's address). Returns its size (at most
/// max_stack_nodes_size(n)).
std::size_t max_stack_nodes_size(std::size_t n) noexcept;
std::size_t encode_stack_nodes(const StackNode* nodes, std::size_t n, std::uint8_t* out) noexcept;

/// Reader side of the two: the n nodes of a Stacks payload into `out`, and
/// the stacks of an EventStacks payload into out[0..n).stack, each mapped
/// through `ids` (a writer's node id -> the reader's merged id, 0 where no
/// node was read). False with `why` on a bad payload or an unknown id.
bool decode_stack_nodes(const std::uint8_t* data, std::size_t size, std::size_t n, std::vector<StackNode>& out,
                        std::string& why);
bool decode_stacks(const std::uint8_t* data, std::size_t size, std::size_t n, const std::vector<std::uint32_t>& ids,
                   Event* out, std::string& why);

/// Which copy of the decoding loop runs: the fastest this CPU has (PEXT where
/// it is fast), or the portable one (tests compare the two).
enum class DecodePath { kBest, kPortable };

/// Columns a consumer does not read (bits): their values are 0 in the
/// decoded events, and they are neither decoded nor checked against the
/// event count (the chunk's checksum still covers them).
enum Skip : unsigned { kSkipNone = 0, kSkipTime = 1, kSkipCallsite = 2 };

/// Where a payload's columns sit: in the order of format::Column (codecs Raw
/// and Zstd) or in format::kFrameOrder (ZstdFrames, what encode() writes).
enum class Layout { kColumnOrder, kFrameOrder };

/// The frames of a ZstdFrames payload that a reader skipping `skip` needs:
/// the first only without times and call sites, the first two without call
/// sites, all of them otherwise.
unsigned frames_needed(unsigned skip) noexcept;

/// Decodes exactly n events of thread `thread` from [data, data+size) into
/// out[0..n) (room provided by the caller: decoding allocates nothing unless
/// it fails). With kFrameOrder, [data, data+size) may end after the frames
/// frames_needed(skip) says. Returns false and sets `why` if the bytes are not
/// a valid encoding; out's contents are then unspecified.
bool decode(const std::uint8_t* data, std::size_t size, std::size_t n, std::uint32_t thread,
            std::uint64_t base_time_ns, Event* out, std::string& why, DecodePath path = DecodePath::kBest,
            unsigned skip = kSkipNone, Layout layout = Layout::kFrameOrder);

}  // namespace tailor::trace::codec
