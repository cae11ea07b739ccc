// The stack walk's one rule for whose time an instant is: at every instant the open
// interval that started last is the innermost and holds the time. The lane builder
// credits pieces with it; analyze credits device work on a stream the same way, and the
// critical path walks a stream's stretches made by it.
#pragma once

#include <algorithm>
#include <cstdint>
#include <limits>
#include <vector>

namespace torch2pprof {

// Entries (with an `end_ns`) are pushed in order of their start. An entry that ends
// below the top stays on the stack, ended, until it is on top: the one above it started
// later, so the time is still the one above's.
template <typename Entry>
class InnermostClock {
 public:
  // Counts the time up to t: each stretch to the innermost entry then open, credit(entry,
  // ns); entries on top that ended by t leave the stack at their end.
  template <typename Credit>
  void AdvanceTo(int64_t t, Credit&& credit) {
    while (!stack_.empty() && stack_.back().end_ns <= t) {
      Count(stack_.back().end_ns, credit);
      stack_.pop_back();
    }
    Count(t, credit);
  }
  // An entry starting now (AdvanceTo its start first).
  Entry& Push(const Entry& e) { return stack_.emplace_back(e); }
  // Everything to the end of the last entry.
  template <typename Credit>
  void Finish(Credit&& credit) {
    AdvanceTo(std::numeric_limits<int64_t>::max(), credit);
  }
  // Outermost first; ended entries included.
  std::vector<Entry>& stack() { return stack_; }
  // While a credit runs: where the stretch it is given starts.
  int64_t now() const { return now_; }

 private:
  template <typename Credit>
  void Count(int64_t t, Credit& credit) {
    if (!stack_.empty() && t > now_) credit(stack_.back(), t - now_);
    now_ = std::max(now_, t);
  }
  std::vector<Entry> stack_;
  int64_t now_ = std::numeric_limits<int64_t>::min();
};

}  // namespace torch2pprof
