#include "torch2pprof/folded_writer.h"

#include <algorithm>
#include <map>

#include "torch2pprof/error.h"

namespace torch2pprof {
namespace {

// The format splits frames at ';' and lines at '\n' and has no escapes; readers split
// the value at the last space, so frames lose their outer spaces.
std::string Clean(const std::string& name) {
  std::string out = name;
  for (char& c : out) {
    if (c == ';') c = ',';
    if (c == '\n' || c == '\r') c = ' ';
  }
  size_t begin = out.find_first_not_of(' '), end = out.find_last_not_of(' ');
  return begin == std::string::npos ? "" : out.substr(begin, end - begin + 1);
}

const Label* Find(const std::vector<Label>& labels, const char* key) {
  for (const Label& l : labels) {
    if (l.key == key) return &l;
  }
  return nullptr;
}

std::string Text(const Label& l) { return l.numeric ? std::to_string(l.num) : l.str; }

// The root frames of a label set: its rank, then (kThread) its thread.
std::string RootOf(const std::vector<Label>& labels, FoldedRoot root) {
  if (root == FoldedRoot::kNone) return "";
  std::string out;
  if (const Label* rank = Find(labels, "rank")) out = "rank " + Text(*rank) + ";";
  if (root == FoldedRoot::kDevice) {
    if (const Label* device = Find(labels, "device")) return out + Clean(Text(*device)) + ";";
    root = FoldedRoot::kThread;
  }
  if (root == FoldedRoot::kThread) {
    const Label* tid = Find(labels, "tid");
    const Label* name = Find(labels, "thread");
    // The thread label already names the thread and its tid: "thread 439 (python3)".
    if (name && !Clean(name->str).empty()) {
      out += Clean(name->str) + ";";
    } else if (tid) {
      out += "tid " + Clean(Text(*tid)) + ";";
    }
  }
  return out;
}

}  // namespace

size_t SampleTypeIndex(const Profile& p, const std::string& name) {
  const std::string& want = name.empty() ? p.default_sample_type : name;
  for (size_t i = 0; i < p.sample_types.size(); ++i) {
    if (p.sample_types[i].type == want) return i;
  }
  if (want.empty() && !p.sample_types.empty()) return 0;  // pprof's own rule: no default, the first
  std::string known;
  for (const ValueType& t : p.sample_types) known += (known.empty() ? "" : ", ") + t.type;
  throw Error(Error::Kind::kUsage, "", -1,
              "--sample-type " + want + ": the profile has no such sample type (it has " + known + ")");
}

std::string WriteFolded(const Profile& p, const std::string& sample_type, FoldedRoot root) {
  const size_t index = SampleTypeIndex(p, sample_type);
  if (root == FoldedRoot::kAuto) root = p.sample_types[index].type == "gpu" ? FoldedRoot::kDevice : FoldedRoot::kThread;
  // Each node's path once, built from its parent's: the tree is shared by all samples.
  std::vector<std::string> path(p.tree.size());
  std::vector<bool> built(p.tree.size(), false);
  built[0] = true;
  std::vector<uint32_t> chain;
  auto path_of = [&](uint32_t node) -> const std::string& {
    chain.clear();
    for (uint32_t n = node; !built[n]; n = p.tree[n].parent) chain.push_back(n);
    for (auto it = chain.rbegin(); it != chain.rend(); ++it) {
      const std::string& up = path[p.tree[*it].parent];
      path[*it] = (up.empty() ? "" : up + ";") + Clean(p.frames[p.tree[*it].frame].name);
      built[*it] = true;
    }
    return path[node];
  };
  std::vector<std::string> roots(p.label_sets.size());
  for (size_t i = 0; i < p.label_sets.size(); ++i) roots[i] = RootOf(p.label_sets[i], root);
  std::map<std::string, int64_t> lines;
  for (const Sample& s : p.samples) {
    int64_t v = s.values[index];
    if (v == 0) continue;
    const std::string& stack = path_of(s.node);
    std::string key = roots[s.labels] + stack;
    if (stack.empty() && !key.empty()) key.pop_back();  // a sample at the root: its root frames alone
    if (key.empty()) key = "[root]";
    lines[key] += v;
  }
  std::string out;
  for (const auto& [stack, value] : lines) {
    if (value == 0) continue;
    out += stack;
    out += ' ';
    out += std::to_string(value);
    out += '\n';
  }
  return out;
}

}  // namespace torch2pprof
