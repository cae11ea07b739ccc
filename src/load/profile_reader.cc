#include "torch2pprof/profile.h"

#include <zlib.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <iterator>
#include <map>
#include <unordered_map>

#include "torch2pprof/error.h"

namespace torch2pprof {
namespace {

// protobuf's own limit on a message; a gzip that inflates past it is no profile.
constexpr size_t kMaxMessage = size_t{2} << 30;

bool Gzipped(std::string_view b) {
  return b.size() >= 2 && static_cast<unsigned char>(b[0]) == 0x1f && static_cast<unsigned char>(b[1]) == 0x8b;
}

// Every gzip member, one after another (as gunzip reads concatenated files).
std::string Gunzip(const std::string& file, std::string_view in) {
  std::string out;
  z_stream z{};
  if (inflateInit2(&z, 16 + MAX_WBITS) != Z_OK) ThrowInput(file, -1, "cannot initialise zlib");
  z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(in.data()));
  z.avail_in = static_cast<uInt>(in.size());
  char buf[1 << 16];
  for (;;) {
    z.next_out = reinterpret_cast<Bytef*>(buf);
    z.avail_out = sizeof buf;
    const int rc = inflate(&z, Z_NO_FLUSH);
    out.append(buf, sizeof buf - z.avail_out);
    if (out.size() > kMaxMessage) {
      inflateEnd(&z);
      ThrowInput(file, -1, "inflates past 2 GiB: larger than any profile protobuf can hold");
    }
    if (rc == Z_STREAM_END) {
      if (z.avail_in == 0) break;
      inflateReset(&z);  // another member
      continue;
    }
    if (rc != Z_OK && !(rc == Z_BUF_ERROR && z.avail_in > 0)) {
      const int64_t at = static_cast<int64_t>(in.size() - z.avail_in);
      inflateEnd(&z);
      ThrowInput(file, at,
                 rc == Z_BUF_ERROR ? "gzip data ends early: the profile is cut off"
                                   : std::string("corrupt gzip data: ") + (z.msg ? z.msg : "inflate failed"));
    }
  }
  inflateEnd(&z);
  return out;
}

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

struct RawLabel {
  uint64_t key = 0, str = 0, unit = 0;
  int64_t num = 0;
  size_t at = 0;
};

struct RawSample {
  std::vector<uint64_t> locations, values;
  std::vector<RawLabel> labels;
  size_t at = 0;
};

}  // namespace

Profile DecodeProfile(const std::string& file, std::string_view bytes) {
  std::string inflated;
  if (Gzipped(bytes)) {
    inflated = Gunzip(file, bytes);
    bytes = inflated;
  }
  if (bytes.size() > kMaxMessage) ThrowInput(file, -1, "larger than 2 GiB: larger than any profile protobuf can hold");
  WireReader r(file, bytes, 0);
  std::vector<std::pair<uint64_t, uint64_t>> types;  // (type, unit) string ids
  std::vector<RawSample> samples;
  std::unordered_map<uint64_t, uint64_t> location_function;  // location id -> function id
  std::unordered_map<uint64_t, uint32_t> function_index;     // function id -> position
  struct FunctionIds {
    uint64_t name = 0, system_name = 0, filename = 0;
    int64_t line = 0;
  };
  std::vector<std::pair<FunctionIds, size_t>> function_names;  // and where
  std::vector<std::string_view> strings;
  std::vector<uint64_t> comments;
  uint64_t mapping_file = 0;
  Profile out;
  uint64_t period_type = 0, period_unit = 0, default_type = 0;
  while (!r.Done()) {
    const size_t field_at = r.offset();
    auto [field, type] = r.Tag();
    switch (field) {
      case 1: {  // ValueType
        if (type != 2) r.Fail("a sample type that is no message");
        WireReader m = r.Message();
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
        types.push_back(t);
        break;
      }
      case 2: {  // Sample
        if (type != 2) r.Fail("a sample that is no message");
        WireReader m = r.Message();
        RawSample s;
        s.at = field_at;
        while (!m.Done()) {
          auto [f, w] = m.Tag();
          if (f == 1) {
            m.Repeated(w, &s.locations);
          } else if (f == 2) {
            m.Repeated(w, &s.values);
          } else if (f == 3) {
            if (w != 2) m.Fail("a label that is no message");
            RawLabel l;
            l.at = m.offset();
            WireReader lm = m.Message();
            while (!lm.Done()) {
              auto [lf, lw] = lm.Tag();
              if (lf == 1)
                l.key = lm.Number(lw);
              else if (lf == 2)
                l.str = lm.Number(lw);
              else if (lf == 3)
                l.num = static_cast<int64_t>(lm.Number(lw));
              else if (lf == 4)
                l.unit = lm.Number(lw);
              else
                lm.Skip(lw);
            }
            s.labels.push_back(l);
          } else {
            m.Skip(w);
          }
        }
        samples.push_back(std::move(s));
        break;
      }
      case 3: {  // Mapping: its file names the profile
        if (type != 2) r.Fail("a mapping that is no message");
        WireReader m = r.Message();
        while (!m.Done()) {
          auto [f, w] = m.Tag();
          if (f == 5)
            mapping_file = m.Number(w);
          else
            m.Skip(w);
        }
        break;
      }
      case 4: {  // Location: one line, one function (as convert writes them)
        if (type != 2) r.Fail("a location that is no message");
        WireReader m = r.Message();
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
        if (!location_function.emplace(id, function).second) r.Fail("location id " + std::to_string(id) + " twice");
        break;
      }
      case 5: {  // Function
        if (type != 2) r.Fail("a function that is no message");
        WireReader m = r.Message();
        uint64_t id = 0;
        FunctionIds ids;
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
        if (!function_index.emplace(id, static_cast<uint32_t>(function_names.size())).second) {
          r.Fail("function id " + std::to_string(id) + " twice");
        }
        function_names.push_back({ids, field_at});
        break;
      }
      case 6:
        if (type != 2) r.Fail("a string that is no bytes");
        strings.push_back(r.Bytes());
        break;
      case 11: {  // period type
        if (type != 2) r.Fail("a period type that is no message");
        WireReader m = r.Message();
        while (!m.Done()) {
          auto [f, w] = m.Tag();
          if (f == 1)
            period_type = m.Number(w);
          else if (f == 2)
            period_unit = m.Number(w);
          else
            m.Skip(w);
        }
        break;
      }
      case 12:
        out.period = static_cast<int64_t>(r.Number(type));
        break;
      case 14:
        default_type = r.Number(type);
        break;
      case 9:
        out.time_nanos = static_cast<int64_t>(r.Number(type));
        break;
      case 10:
        out.duration_nanos = static_cast<int64_t>(r.Number(type));
        break;
      case 13:
        r.Repeated(type, &comments);
        break;
      default:
        r.Skip(type);
    }
  }
  auto str = [&](uint64_t id, size_t at) -> std::string {
    if (id >= strings.size()) {
      ThrowInput(
          file, static_cast<int64_t>(at),
          "not a pprof profile: string " + std::to_string(id) + " of a table of " + std::to_string(strings.size()));
    }
    return std::string(strings[id]);
  };
  for (const auto& [type, unit] : types) out.sample_types.push_back({str(type, 0), str(unit, 0)});
  for (const auto& [ids, at] : function_names) {
    Frame f;
    f.name = f.function = str(ids.name, at);
    f.system_name = str(ids.system_name, at);
    f.filename = str(ids.filename, at);
    f.line = ids.line;
    out.frames.push_back(std::move(f));
  }
  out.period_type = {str(period_type, 0), str(period_unit, 0)};
  out.default_sample_type = str(default_type, 0);
  for (uint64_t c : comments) out.comments.push_back(str(c, 0));
  out.source_file = str(mapping_file, 0);
  if (out.comments.empty() || out.comments[0].rfind("torch2pprof ", 0) != 0 ||
      out.comments[0].find(" convert ") == std::string::npos) {
    ThrowInput(file, -1,
               "a pprof profile that torch2pprof convert did not write (its first comment names no convert): "
               "only convert's profiles merge with traces");
  }
  // The stacks as one tree, the labels as sets: both in the order samples first use them.
  out.tree.push_back(TreeNode{0, 0});
  std::map<std::pair<uint32_t, uint32_t>, uint32_t> children;
  std::map<std::string, uint32_t> label_index;
  out.samples.reserve(samples.size());
  for (RawSample& s : samples) {
    Sample p;
    if (s.values.size() != out.sample_types.size()) {
      ThrowInput(file, static_cast<int64_t>(s.at),
                 "not a pprof profile: a sample with " + std::to_string(s.values.size()) + " values for " +
                     std::to_string(out.sample_types.size()) + " sample types");
    }
    for (uint64_t v : s.values) p.values.push_back(static_cast<int64_t>(v));
    if (s.locations.empty())
      ThrowInput(file, static_cast<int64_t>(s.at), "not a pprof profile: a sample with no stack");
    std::vector<uint32_t> stack;  // leaf first
    for (uint64_t loc : s.locations) {
      auto l = location_function.find(loc);
      auto f = l == location_function.end() ? function_index.end() : function_index.find(l->second);
      if (f == function_index.end()) {
        ThrowInput(file, static_cast<int64_t>(s.at),
                   "not a pprof profile: a sample names location " + std::to_string(loc) +
                       ", which is missing or names a missing function");
      }
      stack.push_back(f->second);
    }
    p.node = 0;
    for (size_t k = stack.size(); k-- > 0;) {
      auto [it, added] = children.try_emplace({p.node, stack[k]}, static_cast<uint32_t>(out.tree.size()));
      if (added) out.tree.push_back(TreeNode{p.node, stack[k]});
      p.node = it->second;
    }
    std::vector<Label> labels;
    std::string key;
    for (const RawLabel& l : s.labels) {
      Label label;
      label.key = str(l.key, l.at);
      label.numeric = l.unit != 0;  // convert writes a numeric label's key as its unit
      if (label.numeric) {
        label.num = l.num;
      } else {
        label.str = str(l.str, l.at);
      }
      key += label.key + '\0' + (label.numeric ? std::to_string(label.num) + '\1' : label.str + '\2');
      labels.push_back(std::move(label));
    }
    auto [it, added] = label_index.try_emplace(key, static_cast<uint32_t>(out.label_sets.size()));
    if (added) out.label_sets.push_back(std::move(labels));
    p.labels = it->second;
    out.samples.push_back(std::move(p));
  }
  return out;
}

Profile ReadProfile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) ThrowInput(path, -1, std::string("cannot open: ") + std::strerror(errno));
  std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (in.bad()) ThrowInput(path, -1, std::string("cannot read: ") + std::strerror(errno));
  return DecodeProfile(path, bytes);
}

}  // namespace torch2pprof
