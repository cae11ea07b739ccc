#include "torch2pprof/output.h"

#include <cstring>
#include <map>
#include <tuple>

#include "base/utf8.h"
#include "torch2pprof/error.h"

namespace torch2pprof {
namespace {

using Key = std::tuple<std::string, int64_t, std::string>;  // (file, line, name)

struct Totals {
  int64_t cc = 0, nc = 0, tt = 0, ct = 0;  // calls and nanoseconds, converted at the end
};

struct Function {
  Totals own;
  std::map<Key, Totals> callers;
};

// Python's marshal format (version 2 codes, which every Python 3 reads).
class Marshal {
 public:
  void DictBegin() { out_ += '{'; }
  void DictEnd() { out_ += '0'; }
  void Tuple(uint32_t n) {
    out_ += '(';
    U32(n);
  }
  void Str(const std::string& s) {
    std::string utf8 = ValidUtf8(s);
    out_ += 'u';
    U32(static_cast<uint32_t>(utf8.size()));
    out_ += utf8;
  }
  void Int(int64_t v) {
    if (v >= INT32_MIN && v <= INT32_MAX) {
      out_ += 'i';
      U32(static_cast<uint32_t>(static_cast<int32_t>(v)));
      return;
    }
    // A long: its 15-bit digits, least significant first; the count's sign is the number's.
    uint64_t m = v < 0 ? 0 - static_cast<uint64_t>(v) : static_cast<uint64_t>(v);
    std::string digits;
    int32_t n = 0;
    for (; m; m >>= 15, ++n) {
      digits += static_cast<char>(m & 0xFF);
      digits += static_cast<char>((m >> 8) & 0x7F);
    }
    out_ += 'l';
    U32(static_cast<uint32_t>(v < 0 ? -n : n));
    out_ += digits;
  }
  void Float(double d) {
    out_ += 'g';
    char b[8];
    std::memcpy(b, &d, 8);  // little-endian IEEE 754, as marshal writes it on x86 and ARM
    out_.append(b, 8);
  }
  std::string Take() { return std::move(out_); }

 private:
  void U32(uint32_t v) {
    for (int i = 0; i < 4; ++i) out_ += static_cast<char>((v >> (8 * i)) & 0xFF);
  }
  std::string out_;
};

// cProfile's key for a frame: Python frames by file, line and function, others built-in style.
Key KeyOf(const Frame& f) { return f.filename.empty() ? Key{"~", 0, f.function} : Key{f.filename, f.line, f.function}; }

// pstats holds seconds: the time units a profile's values come in (convert's nanoseconds,
// torch's export_stacks' microseconds), each as so many a second; 0 for no time unit.
double PerSecond(const std::string& unit) { return unit == "nanoseconds" ? 1e9 : unit == "microseconds" ? 1e6 : 0; }

void Write(Marshal& m, const Totals& t, bool edge, double per_second) {
  // cProfile writes a function's numbers as (cc, nc, ...) and a caller edge's as (nc, cc, ...).
  m.Int(edge ? t.nc : t.cc);
  m.Int(edge ? t.cc : t.nc);
  m.Float(static_cast<double>(t.tt) / per_second);
  m.Float(static_cast<double>(t.ct) / per_second);
}

}  // namespace

std::string WritePstats(const Profile& p, const std::string& sample_type) {
  const size_t time = SampleTypeIndex(p, sample_type);
  const double per_second = PerSecond(p.sample_types[time].unit);
  if (per_second == 0) {
    throw Error(Error::Kind::kUsage, "", -1,
                "--sample-type " + p.sample_types[time].type + ": pstats holds times, and its unit is " +
                    p.sample_types[time].unit);
  }
  int64_t calls = -1;
  for (size_t i = 0; i < p.sample_types.size(); ++i) {
    if (p.sample_types[i].type == "calls") calls = static_cast<int64_t>(i);
  }
  const size_t n = p.tree.size();
  std::vector<int64_t> self(n, 0), incl(n, 0), ncalls(n, 0), sub_calls(n, 0);
  for (const Sample& s : p.samples) {
    self[s.node] += s.values[time];
    if (calls >= 0) ncalls[s.node] += s.values[static_cast<size_t>(calls)];
  }
  // A node's parent was made before it (ProfileBuilder), so children come later.
  for (size_t i = n; i-- > 1;) {
    incl[i] += self[i];
    sub_calls[i] += ncalls[i];
    incl[p.tree[i].parent] += incl[i];
    sub_calls[p.tree[i].parent] += sub_calls[i];
  }
  std::vector<Key> key_of_frame(p.frames.size());
  for (size_t f = 0; f < p.frames.size(); ++f) key_of_frame[f] = KeyOf(p.frames[f]);
  // Functions by index, and whether each node's function is already on the stack above it.
  std::map<Key, uint32_t> index;
  std::vector<uint32_t> func(n, 0);
  for (size_t i = 1; i < n; ++i) {
    func[i] = index.emplace(key_of_frame[p.tree[i].frame], static_cast<uint32_t>(index.size())).first->second;
  }
  std::vector<std::vector<uint32_t>> children(n);
  for (size_t i = 1; i < n; ++i) children[p.tree[i].parent].push_back(static_cast<uint32_t>(i));
  std::vector<bool> recursive(n, false);
  std::vector<uint32_t> active(index.size(), 0);
  std::vector<std::pair<uint32_t, size_t>> stack{{0, 0}};  // node, next child
  while (!stack.empty()) {
    auto& [node, next] = stack.back();
    if (next < children[node].size()) {
      uint32_t c = children[node][next++];
      recursive[c] = active[func[c]] > 0;
      ++active[func[c]];
      stack.push_back({c, 0});
    } else {
      if (node) --active[func[node]];
      stack.pop_back();
    }
  }
  std::vector<Function> funcs(index.size());
  std::vector<bool> used(index.size(), false);
  for (size_t i = 1; i < n; ++i) {
    if (incl[i] == 0 && sub_calls[i] == 0) continue;  // no time or calls of this type below
    used[func[i]] = true;
    Totals t;
    t.nc = ncalls[i];
    t.cc = recursive[i] ? 0 : ncalls[i];
    t.tt = self[i];
    t.ct = recursive[i] ? 0 : incl[i];
    Totals& own = funcs[func[i]].own;
    own.nc += t.nc, own.cc += t.cc, own.tt += t.tt, own.ct += t.ct;
    uint32_t parent = p.tree[i].parent;
    if (parent == 0) continue;  // called from the top level: no caller
    Totals& e = funcs[func[i]].callers[key_of_frame[p.tree[parent].frame]];
    e.nc += t.nc, e.cc += t.cc, e.tt += t.tt, e.ct += t.ct;
  }
  Marshal m;
  m.DictBegin();
  for (const auto& [k, i] : index) {  // sorted by key: stable output
    if (!used[i]) continue;
    m.Tuple(3);
    m.Str(std::get<0>(k));
    m.Int(std::get<1>(k));
    m.Str(std::get<2>(k));
    m.Tuple(5);
    Write(m, funcs[i].own, false, per_second);
    m.DictBegin();
    for (const auto& [caller, t] : funcs[i].callers) {
      m.Tuple(3);
      m.Str(std::get<0>(caller));
      m.Int(std::get<1>(caller));
      m.Str(std::get<2>(caller));
      m.Tuple(4);
      Write(m, t, true, per_second);
    }
    m.DictEnd();
  }
  m.DictEnd();
  return m.Take();
}

}  // namespace torch2pprof
