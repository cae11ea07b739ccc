#include "load/event_batch.h"

#include <algorithm>
#include <cstdint>
#include <cstring>

#include "load/json_scanner.h"

namespace torch2pprof {
namespace {
constexpr size_t kBlock = 64 << 10;
}  // namespace

EventBatch::EventBatch(bool details) : details_(details) {
  // Room for a chunk's events at once: doubling would touch (fault) about twice the pages.
  events_.reserve(kReadSize / 64);
  Clear();
}

void EventBatch::Clear() {
  strings_.assign(1, std::string_view());
  std::fill(std::begin(last_), std::end(last_), 0);
  index_.Clear();
  block_ = 0;
  used_ = 0;
  events_.clear();
  rare_.clear();
}

uint32_t EventBatch::Intern(std::string_view s) {
  if (s.empty()) return 0;
  const uint32_t hash = StringIndex::Hash(s);
  const uint32_t found = index_.Find(s, hash, strings_);
  if (found != StringIndex::kNone) return found;
  // Copy into the batch's blocks: the parser's buffers are reused by the next event.
  if (block_ >= blocks_.size() || blocks_[block_].size() - used_ < s.size()) {
    if (block_ < blocks_.size() && used_ > 0) ++block_, used_ = 0;
    if (block_ == blocks_.size()) blocks_.emplace_back(std::max(kBlock, s.size()));
    if (blocks_[block_].size() < s.size()) blocks_[block_].resize(s.size());  // empty: nothing points into it
  }
  char* p = blocks_[block_].data() + used_;
  std::memcpy(p, s.data(), s.size());
  used_ += s.size();
  uint32_t id = static_cast<uint32_t>(strings_.size());
  strings_.push_back(std::string_view(p, s.size()));
  index_.Insert(hash, id);
  return id;
}

uint32_t EventBatch::InternLike(std::string_view s, uint32_t* last) {
  if (SameText(s, strings_[*last])) return *last;
  return *last = Intern(s);
}

void EventBatch::OnEvent(const RawEvent& ev) {
  // Built where it stays, from the event's numbers: a BatchEvent assembled on the stack
  // and then copied whole into the vector read back its just-written fields (a failed
  // store-to-load forward), and one value-initialized in place was zeroed first.
  BatchEvent& e = events_.emplace_back(static_cast<const EventValues&>(ev));
  e.ph = InternLike(ev.ph, &last_[0]);
  e.name = Intern(ev.name);
  e.cat = InternLike(ev.cat, &last_[1]);
  e.pid = InternLike(ev.pid, &last_[2]);
  e.tid = InternLike(ev.tid, &last_[3]);
  e.meta_name = Intern(ev.meta_name);
  e.input_dims = details_ ? Intern(ev.input_dims) : 0;
  if (details_ && (!ev.collective.empty() || ev.copy_bytes >= 0)) {
    const int32_t group = ev.group_size >= 0 && ev.group_size <= INT32_MAX ? static_cast<int32_t>(ev.group_size) : -1;
    rare_.push_back(BatchRare{static_cast<uint32_t>(events_.size() - 1), Intern(ev.collective), Intern(ev.dtype),
                              ev.in_nelems, ev.out_nelems, group, ev.copy_bytes});
  }
}

void EventBatch::Bad(Skip why, uint64_t offset, const std::string& what) {
  BatchEvent e;
  e.kind = BatchEvent::kBad;
  e.bad = why;
  e.offset = offset;
  e.message = Intern(what);
  events_.push_back(e);
}

void EventBatch::Repaired(uint64_t offset) {
  BatchEvent e;
  e.kind = BatchEvent::kRepaired;
  e.offset = offset;
  events_.push_back(e);
}

}  // namespace torch2pprof
