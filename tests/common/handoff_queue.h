// SPDX-License-Identifier: MIT
// A queue through which threads hand blocks to each other, for tests of
// cross-thread frees: each push returns the oldest waiting block once more
// than `depth` wait, so most blocks are freed by a thread that did not
// allocate them.
#pragma once

#include <cstddef>
#include <deque>
#include <mutex>
#include <vector>

namespace tailor::test {

class handoff_queue {
 public:
  explicit handoff_queue(std::size_t depth) : depth_(depth) {}

  /// Queues p; returns the oldest block if more than depth wait, else nullptr.
  void* exchange(void* p) {
    std::lock_guard<std::mutex> lock(m_);
    q_.push_back(p);
    if (q_.size() <= depth_) return nullptr;
    void* oldest = q_.front();
    q_.pop_front();
    return oldest;
  }
  /// What is still waiting (after the threads are done).
  std::vector<void*> drain() {
    std::lock_guard<std::mutex> lock(m_);
    std::vector<void*> out(q_.begin(), q_.end());
    q_.clear();
    return out;
  }

 private:
  std::mutex m_;
  std::deque<void*> q_;
  std::size_t depth_;
};

}  // namespace tailor::test
