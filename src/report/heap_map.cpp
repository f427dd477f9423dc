// SPDX-License-Identifier: MIT
// Lays a heap snapshot out as rows of cells (heap_map.h): one walk over the
// live blocks in address order, splitting each over the cells it covers.
#include "report/heap_map.h"

#include <algorithm>
#include <array>
#include <bit>
#include <nlohmann/json.hpp>

namespace tailor::report {

unsigned size_class(std::uint64_t bytes) {
  return bytes <= 1 ? 0u : static_cast<unsigned>(std::bit_width(bytes - 1));
}

std::vector<Moment> heap_moments(const simulate::ReplayTrace& trace) {
  const std::uint64_t n = trace.operations.size();
  if (n == 0) return {};
  // The peak of requested bytes in use: the operation after which it is first reached.
  std::vector<std::uint64_t> bytes(trace.summary.max_live_blocks);
  std::uint64_t in_use = 0, peak = 0, peak_op = 0;
  for (std::uint64_t i = 0; i < n; ++i) {
    const simulate::Operation& op = trace.operations[i];
    if (op.kind() == simulate::Operation::kAllocate) {
      bytes[op.block] = trace.bytes(op);
      in_use += trace.bytes(op);
    } else {
      in_use -= bytes[op.block];
    }
    if (in_use > peak) {
      peak = in_use;
      peak_op = i;
    }
  }
  std::vector<Moment> m = {{peak_op, "peak of requested bytes"},
                           {(n - 1) / 4, "a quarter of the operations"},
                           {(n - 1) / 2, "half of the operations"},
                           {3 * (n - 1) / 4, "three quarters of the operations"},
                           {n - 1, "last operation"}};
  std::stable_sort(m.begin(), m.end(), [](const Moment& a, const Moment& b) { return a.operation < b.operation; });
  m.erase(std::unique(m.begin(), m.end(), [](const Moment& a, const Moment& b) { return a.operation == b.operation; }),
          m.end());
  return m;
}

namespace {

constexpr int kFree = -1;
constexpr unsigned kClasses = 65;

// Accumulates the bytes of each class in the current cell; emits the cell's
// class (the class with most bytes if live blocks cover at least half of
// the cell, else free) and merges equal neighbours of a row into runs.
class CellWriter {
 public:
  CellWriter(std::uint64_t cell_bytes, nlohmann::json& runs) : cell_(cell_bytes), runs_(runs) {}

  void add(std::uint64_t cell, unsigned cls, std::uint64_t bytes) {
    while (current_ < cell) flush();
    per_class_[cls] += bytes;
    covered_ += bytes;
  }
  void finish(std::uint64_t cells) {
    while (current_ < cells) flush();
    close_run();
  }

 private:
  void flush() {
    int cls = kFree;
    if (2 * covered_ >= cell_)
      cls = static_cast<int>(std::max_element(per_class_.begin(), per_class_.end()) - per_class_.begin());
    const std::uint64_t row = current_ / kColumns, column = current_ % kColumns;
    if (run_open_ && (cls != run_class_ || row != run_row_)) close_run();
    if (cls != kFree && !run_open_) {
      run_open_ = true;
      run_row_ = row;
      run_first_ = column;
      run_class_ = cls;
    }
    run_end_ = column + 1;
    per_class_.fill(0);
    covered_ = 0;
    ++current_;
  }
  void close_run() {
    if (run_open_) runs_.push_back({run_row_, run_first_ * cell_, run_end_ * cell_, run_class_});
    run_open_ = false;
  }

  std::uint64_t cell_;
  nlohmann::json& runs_;
  std::array<std::uint64_t, kClasses> per_class_{};
  std::uint64_t covered_ = 0, current_ = 0;
  bool run_open_ = false;
  std::uint64_t run_row_ = 0, run_first_ = 0, run_end_ = 0;
  int run_class_ = kFree;
};

}  // namespace

nlohmann::json heap_map(const simulate::HeapSnapshot& s) {
  // The axis: held regions end to end, adjacent ones merged.
  struct Segment {
    simulate::Address start;
    std::uint64_t bytes, offset;
  };
  std::vector<Segment> axis;
  std::uint64_t held = 0;
  for (const auto& r : s.held) {
    if (!axis.empty() && axis.back().start + axis.back().bytes == r.start)
      axis.back().bytes += r.bytes;
    else
      axis.push_back({r.start, r.bytes, held});
    held += r.bytes;
  }
  const std::uint64_t cells = kRows * kColumns;
  const std::uint64_t cell = std::max<std::uint64_t>(1, (held + cells - 1) / cells);

  nlohmann::json runs = nlohmann::json::array();
  CellWriter writer(cell, runs);
  std::uint64_t block_bytes = 0, requested = 0, outside = 0;
  std::size_t seg = 0;
  for (const auto& b : s.live) {
    block_bytes += b.block_bytes;
    requested += b.requested;
    while (seg < axis.size() && axis[seg].start + axis[seg].bytes <= b.address) ++seg;
    if (seg == axis.size() || b.address < axis[seg].start) {
      ++outside;  // not in held memory: a DMM bug the checker would report; not drawn
      continue;
    }
    const unsigned cls = size_class(b.block_bytes);
    std::uint64_t at = axis[seg].offset + (b.address - axis[seg].start);
    const std::uint64_t end = std::min(at + b.block_bytes, axis[seg].offset + axis[seg].bytes);
    while (at < end) {
      const std::uint64_t c = at / cell, piece = std::min(end, (c + 1) * cell) - at;
      writer.add(c, cls, piece);
      at += piece;
    }
  }
  writer.finish(held ? (held + cell - 1) / cell : 0);

  nlohmann::json starts = nlohmann::json::array();
  for (const auto& a : axis) starts.push_back(a.offset);
  return {{"operation", s.operation},
          {"held_bytes", held},
          {"regions", s.held.size()},
          {"region_starts", starts},
          {"live_blocks", s.live.size()},
          {"blocks_outside_held", outside},
          {"block_bytes", block_bytes},
          {"requested_bytes", requested},
          {"cell_bytes", cell},
          {"row_bytes", cell * kColumns},
          {"rows", held ? (held + cell * kColumns - 1) / (cell * kColumns) : 0},
          {"runs", std::move(runs)}};
}

}  // namespace tailor::report
