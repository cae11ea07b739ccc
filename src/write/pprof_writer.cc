#include "torch2pprof/output.h"

#include <zlib.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "base/utf8.h"
#include "torch2pprof/error.h"
#include "write/pprof_names.h"

namespace torch2pprof {
namespace {

// profile.proto's wire format written directly: building the message with libprotobuf
// and serializing it cost a copy of every sample, on one thread after everything else.
// Fields go out in field-number order, zeros and empty packed fields
// left out, as proto3's serializers write them (tests decode it with libprotobuf, and
// the end-to-end tests with go tool pprof).
class Wire {
 public:
  explicit Wire(std::string* out) : out_(*out) {}
  void Varint(uint64_t v) {
    while (v >= 0x80) {
      out_.push_back(static_cast<char>(v | 0x80));
      v >>= 7;
    }
    out_.push_back(static_cast<char>(v));
  }
  void Tag(int field, int wire_type) { Varint(static_cast<uint64_t>(field) << 3 | static_cast<uint64_t>(wire_type)); }
  // A varint field; int64 values go as their two's complement, as proto3 has it.
  void Int(int field, int64_t v) { Uint(field, static_cast<uint64_t>(v)); }
  void Uint(int field, uint64_t v) {
    if (v == 0) return;
    Tag(field, 0);
    Varint(v);
  }
  void Bytes(int field, std::string_view bytes) {
    Tag(field, 2);
    Varint(bytes.size());
    out_.append(bytes);
  }
  template <typename T>
  void Packed(int field, const std::vector<T>& values, std::string* scratch) {
    if (values.empty()) return;
    scratch->clear();
    Wire w(scratch);
    for (T v : values) w.Varint(static_cast<uint64_t>(v));
    Bytes(field, *scratch);
  }

 private:
  std::string& out_;
};

// The string table: ids in the order strings are first asked for.
class Strings {
 public:
  Strings() { Id(""); }
  int64_t Id(const std::string& s) {
    // try_emplace: no node (and copy of s) is made for a string already in the table.
    auto [it, added] = index_.try_emplace(s, static_cast<int64_t>(table_.size()));
    if (added) table_.push_back(ValidUtf8(s));
    return it->second;
  }
  const std::vector<std::string>& table() const { return table_; }

 private:
  std::unordered_map<std::string, int64_t> index_;
  std::vector<std::string> table_;
};

}  // namespace

// Over 100 lines: one function on purpose. It writes the message's fields in field number order, as
// libprotobuf serializes them (the byte-for-byte test depends on it), and that order is
// easiest to check when it reads top to bottom in one place.
std::string EncodeProfile(const Profile& profile) {
  std::string problem = ValidateProfile(profile);
  if (!problem.empty()) throw std::logic_error("invalid profile: " + problem);
  // Strings are numbered in the order libprotobuf's encoder asked for them here before:
  // sample types, the mapping, the frames, the labels, the period, comments.
  Strings st;
  std::vector<std::pair<int64_t, int64_t>> sample_types;
  for (const ValueType& t : profile.sample_types) sample_types.push_back({st.Id(t.type), st.Id(t.unit)});
  // One Mapping naming the trace, so that pprof titles the profile with it. No address
  // range, and functions, files and lines already known: nothing to symbolize.
  const bool mapped = !profile.source_file.empty();
  const int64_t mapping_file = mapped ? st.Id(profile.source_file) : 0;
  struct FunctionIds {
    int64_t name, system_name, filename;
  };
  std::vector<FunctionIds> functions;
  functions.reserve(profile.frames.size());
  for (const Frame& f : profile.frames)
    functions.push_back({st.Id(PprofFunctionName(f)), st.Id(f.system_name), st.Id(f.filename)});
  // Numeric labels carry a unit: pprof drops a numeric label whose value and unit
  // are both 0, and rank 0 and ProfilerStep#0 are real values. Label sets are encoded in
  // the order samples first use them, so that the bytes depend on the samples alone
  // (a profile merged from profiles equals the one merged from their traces).
  std::vector<std::string> label_sets(profile.label_sets.size());
  std::vector<bool> encoded(profile.label_sets.size());
  std::string scratch;
  for (const Sample& sample : profile.samples) {
    const size_t i = sample.labels;
    if (encoded[i]) continue;
    encoded[i] = true;
    Wire w(&label_sets[i]);
    for (const Label& l : profile.label_sets[i]) {
      const int64_t key = st.Id(l.key);
      scratch.clear();
      Wire label(&scratch);
      label.Int(1, key);
      if (l.numeric) {
        label.Int(3, l.num);
        label.Int(4, key);
      } else {
        label.Int(2, st.Id(l.str));
      }
      w.Bytes(3, scratch);
    }
  }
  const int64_t period_type = st.Id(profile.period_type.type), period_unit = st.Id(profile.period_type.unit);
  std::vector<int64_t> comments;
  for (const std::string& c : profile.comments) comments.push_back(st.Id(c));
  const int64_t default_sample_type = st.Id(profile.default_sample_type);

  std::string out, message, packed;
  Wire w(&out);
  auto sub = [&](int field, auto&& fill) {
    message.clear();
    Wire m(&message);
    fill(m);
    w.Bytes(field, message);
  };
  for (const std::pair<int64_t, int64_t>& t : sample_types) {
    sub(1, [&](Wire& m) { m.Int(1, t.first), m.Int(2, t.second); });
  }
  std::vector<uint64_t> locations;
  for (const Sample& s : profile.samples) {
    locations.clear();
    for (uint32_t node = s.node; node != 0; node = profile.tree[node].parent) {
      locations.push_back(profile.tree[node].frame + 1);
    }
    message.clear();
    Wire m(&message);
    m.Packed(1, locations, &packed);
    m.Packed(2, s.values, &packed);
    message += label_sets[s.labels];
    w.Bytes(2, message);
  }
  if (mapped) {
    sub(3, [&](Wire& m) {
      m.Uint(1, 1);
      m.Int(5, mapping_file);
      m.Uint(7, 1), m.Uint(8, 1), m.Uint(9, 1);
    });
  }
  // One Location and one Function per frame, both with id frame + 1 (ids are never 0).
  for (size_t i = 0; i < profile.frames.size(); ++i) {
    const uint64_t id = i + 1;
    const int64_t line = profile.frames[i].line;
    sub(4, [&](Wire& m) {
      m.Uint(1, id);
      m.Uint(2, mapped ? 1 : 0);
      scratch.clear();
      Wire l(&scratch);
      l.Uint(1, id);
      l.Int(2, line);
      m.Bytes(4, scratch);
    });
  }
  for (size_t i = 0; i < profile.frames.size(); ++i) {
    const FunctionIds& f = functions[i];
    sub(5, [&](Wire& m) {
      m.Uint(1, i + 1);
      m.Int(2, f.name), m.Int(3, f.system_name), m.Int(4, f.filename);
      m.Int(5, profile.frames[i].line);
    });
  }
  for (const std::string& s : st.table()) w.Bytes(6, s);
  w.Int(9, profile.time_nanos);
  w.Int(10, profile.duration_nanos);
  sub(11, [&](Wire& m) { m.Int(1, period_type), m.Int(2, period_unit); });
  w.Int(12, profile.period);
  w.Packed(13, comments, &packed);
  w.Int(14, default_sample_type);
  return out;
}

// gzip in blocks of 128 KiB, each deflated on its own (level 1, as Go's runtime/pprof
// writes profiles) and ended by a sync flush, the last by the final block: one deflate
// stream that any inflater reads (pigz's layout). The blocks were once compressed side by
// side; a profile is small beside its trace and the gain was a fraction of a millisecond,
// so they are compressed in turn, in the same layout, to the same bytes.
std::string Gzip(const std::string& data) {
  constexpr size_t kBlock = size_t{128} << 10;
  const size_t blocks = std::max<size_t>(1, (data.size() + kBlock - 1) / kBlock);
  std::vector<std::string> out(blocks);
  auto size_of = [&](size_t k) { return std::min(kBlock, data.size() - std::min(data.size(), k * kBlock)); };
  std::vector<uLong> crcs(blocks);
  for (size_t k = 0; k < blocks; ++k) {
    const size_t begin = k * kBlock, len = size_of(k);
    const auto* in = reinterpret_cast<const Bytef*>(data.data());
    crcs[k] = crc32_z(0, in + begin, len);
    z_stream zs{};
    if (deflateInit2(&zs, Z_BEST_SPEED, Z_DEFLATED, -15, 8, Z_DEFAULT_STRATEGY) != Z_OK) {
      throw std::runtime_error("cannot initialise zlib");
    }
    std::string& o = out[k];
    o.resize(deflateBound(&zs, len) + 16);  // + the sync flush's empty stored block
    zs.next_in = const_cast<Bytef*>(in + begin);
    zs.avail_in = static_cast<uInt>(len);
    zs.next_out = reinterpret_cast<Bytef*>(o.data());
    zs.avail_out = static_cast<uInt>(o.size());
    const bool last = k + 1 == blocks;
    const int rc = deflate(&zs, last ? Z_FINISH : Z_SYNC_FLUSH);
    const bool done = last ? rc == Z_STREAM_END : rc == Z_OK && zs.avail_in == 0 && zs.avail_out > 0;
    o.resize(zs.total_out);
    deflateEnd(&zs);
    if (!done) throw std::runtime_error("gzip compression failed");
  }
  // The header as zlib writes it for level 1 (mtime 0, extra flags 4: fastest, OS 3: Unix).
  std::string gz("\x1f\x8b\x08\x00\x00\x00\x00\x00\x04\x03", 10);
  size_t total = gz.size() + 8;
  for (const std::string& o : out) total += o.size();
  gz.reserve(total);
  uLong crc = crc32_z(0, nullptr, 0);
  for (size_t k = 0; k < blocks; ++k) {
    gz += out[k];
    crc = crc32_combine(crc, crcs[k], static_cast<z_off_t>(size_of(k)));
  }
  const uint64_t size = data.size();
  for (int i = 0; i < 4; ++i) gz.push_back(static_cast<char>((crc >> (8 * i)) & 0xff));
  for (int i = 0; i < 4; ++i) gz.push_back(static_cast<char>((size >> (8 * i)) & 0xff));  // ISIZE: mod 2^32
  return gz;
}

}  // namespace torch2pprof
