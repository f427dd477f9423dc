// SPDX-License-Identifier: MIT
// The column codec alone (src/trace/event_codec.h): what encode writes,
// decode gives back, through each copy of the decoding loop (the portable
// one and the one this CPU runs, PEXT where it is fast), for varints of every
// length from one to ten bytes at every place in a column, the last ones
// included; and a column cut short fails both copies with the same reason.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "trace/event_codec.h"
#include "trace/format.h"
#include "tailor/trace/event.h"

namespace {

namespace tr = tailor::trace;
namespace codec = tailor::trace::codec;

// A value of `bits` significant bits (0 to 64).
std::uint64_t of_bits(std::mt19937_64& rng, unsigned bits) {
  if (bits == 0) return 0;
  const std::uint64_t top = std::uint64_t{1} << (bits - 1);
  return top | (rng() & (top - 1));
}

std::vector<tr::Event> events(std::size_t n, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::vector<tr::Event> out(n);
  std::uint64_t time = 1000;
  for (std::size_t i = 0; i < n; ++i) {
    tr::Event& e = out[i];
    e.op = static_cast<tr::Op>(1 + rng() % tr::kMaxOp);
    e.flags = static_cast<std::uint8_t>(rng() & 3);
    e.thread = 7;
    time += of_bits(rng, static_cast<unsigned>(rng() % 40));
    e.time_ns = time;
    e.size = of_bits(rng, static_cast<unsigned>(rng() % 65));
    e.address = of_bits(rng, static_cast<unsigned>(rng() % 65));
    e.aux = of_bits(rng, static_cast<unsigned>(rng() % 65));
    e.callsite = rng() % 4 == 0 ? out[i ? i - 1 : 0].callsite : of_bits(rng, static_cast<unsigned>(rng() % 65));
  }
  return out;
}

std::vector<std::uint8_t> encoded(const std::vector<tr::Event>& evs, std::uint64_t base) {
  std::vector<std::uint8_t> work(codec::workspace_size(evs.size()));
  std::vector<std::uint8_t> out(codec::max_encoded_size(evs.size()));
  out.resize(codec::encode(evs.data(), evs.size(), base, work.data(), out.data()));
  return out;
}

TEST(Codec, BothDecodingLoopsGiveBackEveryEvent) {
  for (std::size_t n : {std::size_t{1}, std::size_t{2}, std::size_t{7}, std::size_t{100}, std::size_t{5000}}) {
    const std::vector<tr::Event> evs = events(n, n);
    const std::vector<std::uint8_t> bytes = encoded(evs, 1000);
    for (codec::DecodePath path : {codec::DecodePath::kBest, codec::DecodePath::kPortable}) {
      std::vector<tr::Event> back(n);
      std::string why;
      ASSERT_TRUE(codec::decode(bytes.data(), bytes.size(), n, 7, 1000, back.data(), why, path)) << why;
      for (std::size_t i = 0; i < n; ++i) ASSERT_EQ(back[i], evs[i]) << "event " << i << " of " << n;
    }
  }
}

// Skipped columns are 0 in every event, the other fields as decoded in full.
TEST(Codec, SkippedColumnsAreZeroAndTheRestIsIntact) {
  const std::vector<tr::Event> evs = events(3000, 5);
  const std::vector<std::uint8_t> bytes = encoded(evs, 1000);
  for (unsigned skip = 0; skip < 4; ++skip) {
    for (codec::DecodePath path : {codec::DecodePath::kBest, codec::DecodePath::kPortable}) {
      std::vector<tr::Event> back(evs.size());
      std::string why;
      ASSERT_TRUE(codec::decode(bytes.data(), bytes.size(), evs.size(), 7, 1000, back.data(), why, path, skip)) << why;
      for (std::size_t i = 0; i < evs.size(); ++i) {
        tr::Event want = evs[i];
        if (skip & codec::kSkipTime) want.time_ns = 0;
        if (skip & codec::kSkipCallsite) want.callsite = 0;
        ASSERT_EQ(back[i], want) << "event " << i << ", skip " << skip;
      }
    }
  }
}

// The encoders write the columns in frame order (format::kFrameOrder): a
// payload cut after the frames a reading needs (what a reader decompresses
// of a ZstdFrames chunk) decodes to the same events; one cut shorter, or a
// reading that needs the frames cut off, is refused.
TEST(Codec, PayloadCutAfterTheFramesAReadingNeeds) {
  const std::vector<tr::Event> evs = events(2000, 9);
  const std::vector<std::uint8_t> bytes = encoded(evs, 1000);
  std::size_t frame[tr::format::kFrames];
  codec::frame_bytes(bytes.data(), frame);
  ASSERT_EQ(frame[0] + frame[1] + frame[2], bytes.size());
  for (unsigned skip = 0; skip < 4; ++skip) {
    SCOPED_TRACE("skip " + std::to_string(skip));
    std::size_t prefix = 0;
    for (unsigned f = 0; f < codec::frames_needed(skip); ++f) prefix += frame[f];
    std::vector<tr::Event> back(evs.size());
    std::string why;
    ASSERT_TRUE(codec::decode(bytes.data(), prefix, evs.size(), 7, 1000, back.data(), why, codec::DecodePath::kBest,
                              skip))
        << why;
    for (std::size_t i = 0; i < evs.size(); ++i) {
      tr::Event want = evs[i];
      if (skip & codec::kSkipTime) want.time_ns = 0;
      if (skip & codec::kSkipCallsite) want.callsite = 0;
      ASSERT_EQ(back[i], want) << "event " << i;
    }
    EXPECT_FALSE(codec::decode(bytes.data(), prefix - 1, evs.size(), 7, 1000, back.data(), why,
                               codec::DecodePath::kBest, skip));
    EXPECT_NE(why.find("do not add up"), std::string::npos) << why;
  }
  EXPECT_EQ(codec::frames_needed(codec::kSkipTime | codec::kSkipCallsite), 1u);
  EXPECT_EQ(codec::frames_needed(codec::kSkipCallsite), 2u);
  EXPECT_EQ(codec::frames_needed(codec::kSkipTime), 3u);
}

// Every column's varints of one length after another: each length ends a
// column too, where fewer than eight bytes are left.
TEST(Codec, EveryVarintLengthAtTheEndOfAColumn) {
  for (unsigned bits = 0; bits <= 64; ++bits) {
    std::mt19937_64 rng(bits);
    std::vector<tr::Event> evs(3);
    for (tr::Event& e : evs) {
      e.op = tr::Op::Malloc;
      e.thread = 1;
      e.size = of_bits(rng, bits);
      e.address = of_bits(rng, bits);
      e.aux = of_bits(rng, bits);
      e.callsite = of_bits(rng, bits);
      e.time_ns = of_bits(rng, bits);
    }
    const std::vector<std::uint8_t> bytes = encoded(evs, 0);
    for (codec::DecodePath path : {codec::DecodePath::kBest, codec::DecodePath::kPortable}) {
      std::vector<tr::Event> back(evs.size());
      std::string why;
      ASSERT_TRUE(codec::decode(bytes.data(), bytes.size(), evs.size(), 1, 0, back.data(), why, path)) << why;
      EXPECT_EQ(back, evs) << bits << " bits";
    }
  }
}

// The address column (the fourth) loses its last byte and the callsite
// column gains it: each copy of the loop reports the address column short.
TEST(Codec, AColumnCutShortFailsBothLoopsAlike) {
  const std::vector<tr::Event> evs = events(300, 1);
  std::vector<std::uint8_t> bytes = encoded(evs, 1000);
  std::uint32_t len[6];
  std::memcpy(len, bytes.data(), sizeof len);
  ASSERT_GT(len[3], 0u);
  --len[3];
  ++len[5];
  std::memcpy(bytes.data(), len, sizeof len);
  std::string reasons[2];
  int k = 0;
  for (codec::DecodePath path : {codec::DecodePath::kBest, codec::DecodePath::kPortable}) {
    std::vector<tr::Event> back(evs.size());
    EXPECT_FALSE(codec::decode(bytes.data(), bytes.size(), evs.size(), 7, 1000, back.data(), reasons[k], path));
    ++k;
  }
  EXPECT_EQ(reasons[0], reasons[1]);
  EXPECT_NE(reasons[0].find("column is"), std::string::npos) << reasons[0];
}

// Eleven bytes with the continuation bit are no varint the encoder writes.
TEST(Codec, AnOverlongVarintFailsBothLoops) {
  std::vector<tr::Event> evs(1);
  evs[0].op = tr::Op::Malloc;
  evs[0].size = 1;
  std::vector<std::uint8_t> bytes = encoded(evs, 0);
  std::uint32_t len[6];
  std::memcpy(len, bytes.data(), sizeof len);
  // Replace the size column's one byte with eleven continuation bytes and a terminator.
  const std::size_t size_at = 24 + len[0] + len[1];
  bytes.erase(bytes.begin() + static_cast<std::ptrdiff_t>(size_at));
  bytes.insert(bytes.begin() + static_cast<std::ptrdiff_t>(size_at), 12, 0x81);
  bytes[size_at + 11] = 0x01;
  len[2] = 12;
  std::memcpy(bytes.data(), len, sizeof len);
  for (codec::DecodePath path : {codec::DecodePath::kBest, codec::DecodePath::kPortable}) {
    std::vector<tr::Event> back(1);
    std::string why;
    EXPECT_FALSE(codec::decode(bytes.data(), bytes.size(), 1, 0, 0, back.data(), why, path));
    EXPECT_NE(why.find("size column"), std::string::npos) << why;
  }
}

// The recorder's path: times on another clock, mapped as they are encoded.
// The bytes are those of encoding the mapped events from their smallest
// time, and first/last are the smallest and largest mapped times, whether
// the times rise (one pass) or not (the first event is not the earliest).
TEST(Codec, MappedTimesEncodeAsTheMappedEvents) {
  tr::TimeMap map;
  map.identity = false;
  map.base_ticks = 500;
  map.base_ns = 1'000'000;
  map.ns_per_tick = 0.37;
  for (bool rising : {true, false}) {
    std::vector<tr::Event> ticks = events(4000, rising ? 11 : 12);
    if (!rising) std::swap(ticks[0].time_ns, ticks[1234].time_ns);
    std::vector<tr::Event> mapped = ticks;
    std::uint64_t lo = UINT64_MAX, hi = 0;
    for (tr::Event& e : mapped) {
      e.time_ns = map(e.time_ns);
      lo = std::min(lo, e.time_ns);
      hi = std::max(hi, e.time_ns);
    }
    std::vector<std::uint8_t> work(codec::workspace_size(ticks.size()));
    std::vector<std::uint8_t> out(codec::max_encoded_size(ticks.size()));
    std::uint64_t first = 0, last = 0;
    out.resize(codec::encode(ticks.data(), ticks.size(), map, work.data(), out.data(), first, last));
    EXPECT_EQ(first, lo);
    EXPECT_EQ(last, hi);
    EXPECT_EQ(out, encoded(mapped, lo)) << (rising ? "rising" : "not rising");
    std::vector<tr::Event> back(ticks.size());
    std::string why;
    ASSERT_TRUE(codec::decode(out.data(), out.size(), back.size(), 7, first, back.data(), why)) << why;
    for (std::size_t i = 0; i < back.size(); ++i) ASSERT_EQ(back[i], mapped[i]) << "event " << i;
  }
}

}  // namespace
