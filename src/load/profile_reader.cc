#include "torch2pprof/profile.h"

#include <algorithm>
#include <cstring>
#include <tuple>
#include <unordered_map>

#include "base/flat_map.h"
#include "base/gzip.h"
#include "base/saturate.h"
#include "load/byte_source.h"
#include "load/profile_reader.h"
#include "torch2pprof/error.h"

namespace torch2pprof {
namespace {

// protobuf's own limit on a message; a gzip that inflates past it is no profile.
constexpr size_t kMaxMessage = size_t{2} << 30;
// How much a gzipped profile may inflate: ByteSource::InflatesPastCap (convert's profiles
// inflate 6 to 10 times), so memory stays within 256 times the file.
constexpr uint64_t kMaxInflation = ByteSource::kMaxInflation;

// protobuf's wire format, read with every length checked against what is left.
class WireReader {
 public:
  WireReader(const std::string& file, std::string_view b, size_t base) : file_(file), b_(b), base_(base) {}
  bool Done() const { return at_ >= b_.size(); }
  size_t offset() const { return base_ + at_; }
  [[noreturn]] void Fail(const std::string& what) const {
    ThrowInput(file_, static_cast<int64_t>(offset()), "not a pprof profile: " + what);
  }
  uint64_t Varint() {
    uint64_t v = 0;
    for (int shift = 0; shift < 64; shift += 7) {
      if (at_ >= b_.size()) Fail("a number runs past the end of its message");
      const auto byte = static_cast<unsigned char>(b_[at_++]);
      v |= static_cast<uint64_t>(byte & 0x7f) << shift;
      if (!(byte & 0x80)) return v;
    }
    Fail("a number longer than ten bytes");
  }
  // The next field's number and wire type.
  std::pair<uint32_t, int> Tag() {
    const uint64_t t = Varint();
    if ((t >> 3) == 0 || (t >> 3) > 0x1fffffff) Fail("a field numbered 0 or past 2^29");
    return {static_cast<uint32_t>(t >> 3), static_cast<int>(t & 7)};
  }
  WireReader Message() {
    const uint64_t n = Varint();
    if (n > b_.size() - at_) Fail("a field's length runs past the end of its message");
    WireReader sub(file_, b_.substr(at_, n), base_ + at_);
    at_ += n;
    return sub;
  }
  std::string_view Bytes() {
    WireReader sub = Message();
    return sub.b_;
  }
  void Skip(int wire_type) {
    switch (wire_type) {
      case 0:
        Varint();
        return;
      case 1:
        Advance(8);
        return;
      case 2:
        Message();
        return;
      case 5:
        Advance(4);
        return;
      default:
        Fail("wire type " + std::to_string(wire_type) + " (groups or worse)");
    }
  }
  // A repeated varint field, packed (wire type 2) or one at a time (0).
  void Repeated(int wire_type, std::vector<uint64_t>* out) {
    if (wire_type == 0) {
      out->push_back(Varint());
    } else if (wire_type == 2) {
      WireReader packed = Message();
      while (!packed.Done()) out->push_back(packed.Varint());
    } else {
      Fail("a repeated number of wire type " + std::to_string(wire_type));
    }
  }
  uint64_t Number(int wire_type) {
    if (wire_type != 0) Fail("a number field of wire type " + std::to_string(wire_type));
    return Varint();
  }

 private:
  void Advance(size_t n) {
    if (n > b_.size() - at_) Fail("a fixed-size field runs past the end");
    at_ += n;
  }
  const std::string& file_;
  std::string_view b_;
  size_t base_;
  size_t at_ = 0;
};

// The message's strings, found by the offset of every 64th string's field and a walk of
// at most 63 fields from there: a table of 100 million empty strings (200 MB of message)
// costs 12 MB of index where a string_view each took 1.6 GB.
class StringTable {
 public:
  StringTable(const std::string& file, std::string_view message) : file_(file), m_(message) {}
  // The field (its tag) at `at`, the next string of the table.
  void Add(size_t at) {
    if (n_ % kStride == 0) at_.push_back(static_cast<uint32_t>(at));
    ++n_;
  }
  size_t size() const { return n_; }
  std::string_view Get(uint64_t id, size_t field_at) const {
    if (id >= n_) {
      ThrowInput(file_, static_cast<int64_t>(field_at),
                 "not a pprof profile: string " + std::to_string(id) + " of a table of " + std::to_string(n_));
    }
    const size_t from = at_[id / kStride];
    WireReader r(file_, m_.substr(from), from);
    for (uint64_t skip = id % kStride;;) {
      auto [field, type] = r.Tag();
      if (field != 6) {
        r.Skip(type);
        continue;
      }
      if (skip-- == 0) return r.Bytes();
      r.Skip(type);
    }
  }

 private:
  static constexpr size_t kStride = 64;
  const std::string& file_;
  std::string_view m_;
  std::vector<uint32_t> at_;
  uint64_t n_ = 0;
};

// The frames of one sample, root side kept: a ring of the last max_depth location ids read
// (pprof lists a stack leaf first), so that a stack of 50 million frames costs max_depth.
class StackRing {
 public:
  explicit StackRing(uint32_t max_depth) : ring_(std::max(2u, max_depth)) {}
  void Clear() { n_ = 0; }
  void Push(uint64_t id) { ring_[n_++ % ring_.size()] = id; }
  uint64_t count() const { return n_; }
  // The kept ids root first; `deeper` says whether frames were left out.
  void RootFirst(std::vector<uint64_t>* out, bool* deeper) const {
    out->clear();
    const uint64_t kept = std::min<uint64_t>(n_, ring_.size());
    for (uint64_t k = 0; k < kept; ++k) out->push_back(ring_[(n_ - 1 - k) % ring_.size()]);
    *deeper = n_ > ring_.size();
  }

 private:
  std::vector<uint64_t> ring_;
  uint64_t n_ = 0;
};

uint64_t HashLabels(const std::vector<Label>& labels) {
  uint64_t h = 1469598103934665603ULL;
  auto mix = [&](std::string_view s) {
    for (char c : s) h = (h ^ static_cast<unsigned char>(c)) * 1099511628211ULL;
    h = (h ^ 0xff) * 1099511628211ULL;
  };
  for (const Label& l : labels) {
    mix(l.key);
    mix(l.numeric ? std::to_string(l.num) + '\1' : l.str + '\2');
  }
  return h;
}

bool SameLabels(const std::vector<Label>& a, const std::vector<Label>& b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    if (a[i].key != b[i].key || a[i].numeric != b[i].numeric || a[i].num != b[i].num || a[i].str != b[i].str)
      return false;
  }
  return true;
}

// The message's fields but the samples, as string ids (resolved once the string table
// is complete: a field may name a string that comes after it).
struct Header {
  struct FunctionIds {
    uint64_t name = 0, system_name = 0, filename = 0;
    int64_t line = 0;
  };
  std::vector<std::pair<uint64_t, uint64_t>> types;          // (type, unit) string ids
  std::unordered_map<uint64_t, uint64_t> location_function;  // location id -> function id
  std::unordered_map<uint64_t, uint32_t> function_index;     // function id -> position
  std::vector<std::pair<FunctionIds, size_t>> functions;     // and where
  std::vector<uint64_t> comments;
  uint64_t mapping_file = 0, period_type = 0, period_unit = 0, default_type = 0;
  size_t samples = 0;
};

// A ValueType message (a sample type, the period type): its (type, unit) string ids.
std::pair<uint64_t, uint64_t> ReadValueType(WireReader m) {
  std::pair<uint64_t, uint64_t> t{0, 0};
  while (!m.Done()) {
    auto [f, w] = m.Tag();
    if (f == 1)
      t.first = m.Number(w);
    else if (f == 2)
      t.second = m.Number(w);
    else
      m.Skip(w);
  }
  return t;
}

// A Mapping: its file names the profile.
uint64_t ReadMappingFile(WireReader m) {
  uint64_t file = 0;
  while (!m.Done()) {
    auto [f, w] = m.Tag();
    if (f == 5)
      file = m.Number(w);
    else
      m.Skip(w);
  }
  return file;
}

// A Location: one line, one function (as convert writes them).
void ReadLocation(const std::string& file, const WireReader& r, WireReader m, size_t field_at, Header* h) {
  uint64_t id = 0, function = 0;
  int lines = 0;
  while (!m.Done()) {
    auto [f, w] = m.Tag();
    if (f == 1) {
      id = m.Number(w);
    } else if (f == 4) {
      if (w != 2) m.Fail("a line that is no message");
      ++lines;
      WireReader lm = m.Message();
      while (!lm.Done()) {
        auto [lf, lw] = lm.Tag();
        if (lf == 1)
          function = lm.Number(lw);
        else
          lm.Skip(lw);
      }
    } else {
      m.Skip(w);
    }
  }
  if (id == 0 || lines != 1) {
    ThrowInput(file, static_cast<int64_t>(field_at),
               "a location without an id or with other than one line: not a profile torch2pprof convert wrote");
  }
  if (!h->location_function.emplace(id, function).second) r.Fail("location id " + std::to_string(id) + " twice");
}

void ReadFunction(const std::string& file, const WireReader& r, WireReader m, size_t field_at, Header* h) {
  uint64_t id = 0;
  Header::FunctionIds ids;
  while (!m.Done()) {
    auto [f, w] = m.Tag();
    if (f == 1)
      id = m.Number(w);
    else if (f == 2)
      ids.name = m.Number(w);
    else if (f == 3)
      ids.system_name = m.Number(w);
    else if (f == 4)
      ids.filename = m.Number(w);
    else if (f == 5)
      ids.line = static_cast<int64_t>(m.Number(w));
    else
      m.Skip(w);
  }
  if (id == 0) ThrowInput(file, static_cast<int64_t>(field_at), "not a pprof profile: a function without an id");
  if (!h->function_index.emplace(id, static_cast<uint32_t>(h->functions.size())).second) {
    r.Fail("function id " + std::to_string(id) + " twice");
  }
  h->functions.push_back({ids, field_at});
}

// The first pass: every field but the samples, which it only counts; the numbers go
// straight into the profile.
Header ReadHeader(const std::string& file, std::string_view bytes, StringTable* strings, Profile* out) {
  Header h;
  WireReader r(file, bytes, 0);
  while (!r.Done()) {
    const size_t field_at = r.offset();
    auto [field, type] = r.Tag();
    switch (field) {
      case 1:  // ValueType
        if (type != 2) r.Fail("a sample type that is no message");
        h.types.push_back(ReadValueType(r.Message()));
        break;
      case 2:  // Sample: the second pass
        if (type != 2) r.Fail("a sample that is no message");
        r.Skip(type);
        ++h.samples;
        break;
      case 3:
        if (type != 2) r.Fail("a mapping that is no message");
        h.mapping_file = ReadMappingFile(r.Message());
        break;
      case 4:
        if (type != 2) r.Fail("a location that is no message");
        ReadLocation(file, r, r.Message(), field_at, &h);
        break;
      case 5:
        if (type != 2) r.Fail("a function that is no message");
        ReadFunction(file, r, r.Message(), field_at, &h);
        break;
      case 6:
        if (type != 2) r.Fail("a string that is no bytes");
        strings->Add(field_at);
        r.Skip(type);
        break;
      case 11:  // period type
        if (type != 2) r.Fail("a period type that is no message");
        std::tie(h.period_type, h.period_unit) = ReadValueType(r.Message());
        break;
      case 12:
        out->period = static_cast<int64_t>(r.Number(type));
        break;
      case 14:
        h.default_type = r.Number(type);
        break;
      case 9:
        out->time_nanos = static_cast<int64_t>(r.Number(type));
        break;
      case 10:
        out->duration_nanos = static_cast<int64_t>(r.Number(type));
        break;
      case 13:
        r.Repeated(type, &h.comments);
        break;
      default:
        r.Skip(type);
    }
  }
  return h;
}

// The header's strings into the profile; a profile that convert did not write is refused.
void ResolveHeader(const std::string& file, const Header& h, const StringTable& strings, Profile* out) {
  auto str = [&](uint64_t id, size_t at) { return std::string(strings.Get(id, at)); };
  for (const auto& [type, unit] : h.types) out->sample_types.push_back({str(type, 0), str(unit, 0)});
  for (const auto& [ids, at] : h.functions) {
    Frame f;
    f.name = f.function = str(ids.name, at);
    f.system_name = str(ids.system_name, at);
    f.filename = str(ids.filename, at);
    f.line = ids.line;
    out->frames.push_back(std::move(f));
  }
  out->period_type = {str(h.period_type, 0), str(h.period_unit, 0)};
  out->default_sample_type = str(h.default_type, 0);
  for (uint64_t c : h.comments) out->comments.push_back(str(c, 0));
  out->source_file = str(h.mapping_file, 0);
  if (out->comments.empty() || out->comments[0].rfind("torch2pprof ", 0) != 0 ||
      out->comments[0].find(" convert ") == std::string::npos) {
    ThrowInput(file, -1,
               "a pprof profile that torch2pprof convert did not write (its first comment names no convert): "
               "only convert's profiles merge with traces");
  }
}

// A Label: convert writes a numeric label's key as its unit.
Label ReadLabel(WireReader lm, const StringTable& strings, size_t label_at) {
  uint64_t key = 0, text = 0, unit = 0;
  Label label;
  while (!lm.Done()) {
    auto [lf, lw] = lm.Tag();
    if (lf == 1)
      key = lm.Number(lw);
    else if (lf == 2)
      text = lm.Number(lw);
    else if (lf == 3)
      label.num = static_cast<int64_t>(lm.Number(lw));
    else if (lf == 4)
      unit = lm.Number(lw);
    else
      lm.Skip(lw);
  }
  label.key = std::string(strings.Get(key, label_at));
  label.numeric = unit != 0;
  if (!label.numeric) {
    label.num = 0;
    label.str = std::string(strings.Get(text, label_at));
  }
  return label;
}

// The samples, decoded one at a time into the profile: the stacks as one tree, the labels
// as sets, both in the order samples first use them; samples of one stack and label set
// are one, their values summed (as pprof reads them), so memory follows the distinct
// stacks, not a message that repeats one.
class SampleFolder {
 public:
  SampleFolder(const std::string& file, const Header& h, uint32_t max_depth, Profile* out)
      : file_(file), h_(h), ring_(max_depth), out_(out) {
    out->tree.push_back(TreeNode{0, 0});
    out->samples.reserve(h.samples);
  }
  StackRing& ring() { return ring_; }
  // The sample at `at`, its stack in ring(), its values in p.
  void Add(size_t at, Sample p, std::vector<Label> labels) {
    if (p.values.size() != out_->sample_types.size()) {
      ThrowInput(file_, static_cast<int64_t>(at),
                 "not a pprof profile: a sample with " + std::to_string(p.values.size()) + " values for " +
                     std::to_string(out_->sample_types.size()) + " sample types");
    }
    if (ring_.count() == 0) ThrowInput(file_, static_cast<int64_t>(at), "not a pprof profile: a sample with no stack");
    p.node = Node(at);
    p.labels = LabelSet(std::move(labels));
    auto [same, first] =
        sample_index_.Emplace(uint64_t{p.node} << 32 | p.labels, static_cast<uint32_t>(out_->samples.size()));
    if (first) {
      out_->samples.push_back(std::move(p));
    } else {
      std::vector<int64_t>& into = out_->samples[same].values;
      for (size_t k = 0; k < into.size(); ++k) into[k] = SaturatingAdd(into[k], p.values[k], &saturated_);
    }
  }

 private:
  // The tree node of the ring's stack.
  uint32_t Node(size_t at) {
    bool deeper = false;
    ring_.RootFirst(&root_first_, &deeper);
    if (deeper) {  // as convert folds a deep stack: its first max_depth - 1 frames, then one for the rest
      root_first_.pop_back();
      if (fold_frame_ == UINT32_MAX) {
        fold_frame_ = static_cast<uint32_t>(out_->frames.size());
        Frame f;
        f.name = f.function = f.system_name = kDeeperFramesName;
        out_->frames.push_back(std::move(f));
      }
    }
    uint32_t node = 0;
    auto descend = [&](uint32_t frame) {
      const uint64_t key = uint64_t{node} << 32 | frame;
      auto [child, added] = children_.Emplace(key, static_cast<uint32_t>(out_->tree.size()));
      if (added) out_->tree.push_back(TreeNode{node, frame});
      node = child;
    };
    for (uint64_t loc : root_first_) {
      auto l = h_.location_function.find(loc);
      auto f = l == h_.location_function.end() ? h_.function_index.end() : h_.function_index.find(l->second);
      if (f == h_.function_index.end()) {
        ThrowInput(file_, static_cast<int64_t>(at),
                   "not a pprof profile: a sample names location " + std::to_string(loc) +
                       ", which is missing or names a missing function");
      }
      descend(f->second);
    }
    if (deeper) descend(fold_frame_);
    return node;
  }

  uint32_t LabelSet(std::vector<Label> labels) {
    const uint64_t hash = HashLabels(labels);
    const uint32_t next = static_cast<uint32_t>(out_->label_sets.size());
    auto [index, added] = label_index_.Emplace(hash, next);
    if (!added && !SameLabels(out_->label_sets[index], labels)) {
      index = next;
      added = true;
      auto range = collided_.equal_range(hash);
      for (auto it = range.first; it != range.second; ++it) {
        if (SameLabels(out_->label_sets[it->second], labels)) {
          index = it->second;
          added = false;
          break;
        }
      }
      if (added) collided_.emplace(hash, next);
    }
    if (added) out_->label_sets.push_back(std::move(labels));
    return index;
  }

  const std::string& file_;
  const Header& h_;
  StackRing ring_;
  Profile* out_;
  std::vector<uint64_t> root_first_;
  uint32_t fold_frame_ = UINT32_MAX;
  FlatIndexMap children_;     // (parent << 32 | frame) -> node
  FlatIndexMap label_index_;  // hash of a label set -> its index (chained through collided_)
  std::unordered_multimap<uint64_t, uint32_t> collided_;
  FlatIndexMap sample_index_;  // node << 32 | label set -> sample
  uint64_t saturated_ = 0;     // sums held at the largest value (AddProfile then checks what it adds)
};

// The second pass: each sample straight into the profile.
void ReadSamples(const std::string& file, std::string_view bytes, const StringTable& strings, SampleFolder* folder) {
  WireReader again(file, bytes, 0);
  while (!again.Done()) {
    const size_t at = again.offset();
    auto [field, type] = again.Tag();
    if (field != 2) {
      again.Skip(type);
      continue;
    }
    WireReader m = again.Message();
    Sample p;
    std::vector<Label> labels;
    StackRing& ring = folder->ring();
    ring.Clear();
    while (!m.Done()) {
      auto [f, w] = m.Tag();
      if (f == 1) {
        if (w == 0) {
          ring.Push(m.Varint());
        } else if (w == 2) {
          WireReader packed = m.Message();
          while (!packed.Done()) ring.Push(packed.Varint());
        } else {
          m.Fail("a repeated number of wire type " + std::to_string(w));
        }
      } else if (f == 2) {
        std::vector<uint64_t> values;
        m.Repeated(w, &values);
        for (uint64_t v : values) p.values.push_back(static_cast<int64_t>(v));
      } else if (f == 3) {
        if (w != 2) m.Fail("a label that is no message");
        const size_t label_at = m.offset();
        labels.push_back(ReadLabel(m.Message(), strings, label_at));
      } else {
        m.Skip(w);
      }
    }
    folder->Add(at, std::move(p), std::move(labels));
  }
}

}  // namespace

// Two passes over the message: the first reads everything but the samples (strings,
// functions, locations, types, comments), the second decodes each sample straight into
// the profile's tree, labels and values. Nothing is held per sample but what the Profile
// keeps, and nothing per frame beyond max_depth.
Profile DecodeProfile(const std::string& file, std::string_view bytes, uint32_t max_depth) {
  if (IsGzip(bytes)) {
    ByteSource source(bytes, file);
    return ReadProfile(source, max_depth);
  }
  if (bytes.size() > kMaxMessage) ThrowInput(file, -1, "larger than 2 GiB: larger than any profile protobuf can hold");
  Profile out;
  StringTable strings(file, bytes);
  const Header header = ReadHeader(file, bytes, &strings, &out);
  ResolveHeader(file, header, strings, &out);
  SampleFolder folder(file, header, max_depth, &out);
  ReadSamples(file, bytes, strings, &folder);
  return out;
}

Profile ReadProfile(ByteSource& source, uint32_t max_depth) {
  // Read in parts, then put together once: the message is held once, never a doubling
  // string's old and new buffers.
  std::vector<std::string> parts;
  size_t total = 0;
  for (;;) {
    std::string part(1 << 20, '\0');
    size_t n = 0;
    for (size_t k; n < part.size() && (k = source.Read(part.data() + n, part.size() - n)) > 0;) n += k;
    if (n == 0) break;
    if ((total += n) > kMaxMessage) {
      ThrowInput(source.name(), -1,
                 source.gzipped() ? "inflates past 2 GiB: larger than any profile protobuf can hold"
                                  : "larger than 2 GiB: larger than any profile protobuf can hold");
    }
    if (source.InflatesPastCap(total)) {
      ThrowInput(source.name(), static_cast<int64_t>(total),
                 "a gzipped profile that inflates more than " + std::to_string(kMaxInflation) + " times its size (" +
                     std::to_string(source.stored_offset()) + " bytes to " + std::to_string(total) +
                     " so far): no profile convert wrote (they inflate about 10 times); gunzip it to merge it as it "
                     "is");
    }
    part.resize(n);
    parts.push_back(std::move(part));
  }
  std::string bytes;
  bytes.reserve(total);
  for (std::string& part : parts) {
    bytes += part;
    std::string().swap(part);
  }
  return DecodeProfile(source.name(), bytes, max_depth);
}

Profile ReadProfile(const std::string& path, uint32_t max_depth) {
  ByteSource source(path);
  return ReadProfile(source, max_depth);
}

}  // namespace torch2pprof
