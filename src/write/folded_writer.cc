#include "torch2pprof/output.h"

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
  if (const Label* rank = Find(labels, label_key::kRank)) out = "rank " + Text(*rank) + ";";
  if (root == FoldedRoot::kDevice) {
    if (const Label* device = Find(labels, label_key::kDevice)) return out + Clean(Text(*device)) + ";";
    root = FoldedRoot::kThread;
  }
  if (root == FoldedRoot::kThread) {
    const Label* tid = Find(labels, label_key::kTid);
    const Label* name = Find(labels, label_key::kThread);
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
  std::string out;
  WriteFolded(p, sample_type, root, [&](std::string_view part) { out += part; });
  return out;
}

// Over 100 lines: one walk per root over the paths with values, whose parts share the
// tree, the interned roots and the stamps they are made with.
void WriteFolded(const Profile& p, const std::string& sample_type, FoldedRoot root,
                 const std::function<void(std::string_view)>& sink) {
  const size_t index = SampleTypeIndex(p, sample_type);
  if (root == FoldedRoot::kAuto) root = p.sample_types[index].type == "gpu" ? FoldedRoot::kDevice : FoldedRoot::kThread;
  // Each sample's root frames, interned: lines come root by root, in byte order of them.
  std::vector<std::string> roots(p.label_sets.size());
  for (size_t i = 0; i < p.label_sets.size(); ++i) roots[i] = RootOf(p.label_sets[i], root);
  std::map<std::string, uint32_t> root_ids;
  for (const std::string& r : roots) root_ids.emplace(r, 0);
  uint32_t next_id = 0;
  std::vector<const std::string*> root_text;
  for (auto& [text, id] : root_ids) id = next_id++, root_text.push_back(&text);
  std::vector<uint32_t> root_of_labels(p.label_sets.size());
  for (size_t i = 0; i < p.label_sets.size(); ++i) root_of_labels[i] = root_ids.at(roots[i]);
  // The values by (root, node).
  struct Entry {
    uint32_t root, node;
    int64_t value;
  };
  std::vector<Entry> entries;
  for (const Sample& s : p.samples) {
    if (s.values[index] != 0) entries.push_back({root_of_labels[s.labels], s.node, s.values[index]});
  }
  std::sort(entries.begin(), entries.end(),
            [](const Entry& a, const Entry& b) { return a.root != b.root ? a.root < b.root : a.node < b.node; });
  // The tree's children (a node's parent comes before it), and each frame's name as the
  // format writes it, made once.
  const size_t n = p.tree.size();
  std::vector<uint32_t> first_child(n + 1, 0), children(n > 0 ? n - 1 : 0);
  for (size_t i = 1; i < n; ++i) ++first_child[p.tree[i].parent + 1];
  for (size_t i = 0; i < n; ++i) first_child[i + 1] += first_child[i];
  {
    std::vector<uint32_t> at(first_child.begin(), first_child.end() - 1);
    for (uint32_t i = 1; i < n; ++i) children[at[p.tree[i].parent]++] = i;
  }
  std::vector<std::string> name(p.frames.size());
  for (size_t f = 0; f < p.frames.size(); ++f) name[f] = Clean(p.frames[f].name);
  // Per root: the nodes on the way to a value (stamped with the root), depth first, the
  // children of a path by name; nodes whose names are written alike are one path. Only
  // the paths with values are walked, so the work is the output's size, and nothing but
  // the output and the tree is held (no path string per node).
  std::vector<int64_t> own(n, 0);
  std::vector<uint32_t> stamp(n, UINT32_MAX);
  constexpr size_t kPart = 1 << 20;
  std::string out, path;
  struct Level {
    std::vector<std::pair<std::string_view, std::vector<uint32_t>>> groups;  // children by name
    size_t next = 0;
    size_t path_len = 0;  // the path's length before this level's name
  };
  auto level_of = [&](const std::vector<uint32_t>& nodes, uint32_t r) {
    Level level;
    std::map<std::string_view, std::vector<uint32_t>> by_name;
    for (uint32_t node : nodes) {
      for (uint32_t k = first_child[node]; k < first_child[node + 1]; ++k) {
        const uint32_t c = children[k];
        if (stamp[c] == r) by_name[name[p.tree[c].frame]].push_back(c);
      }
    }
    level.groups.assign(by_name.begin(), by_name.end());
    level.path_len = path.size();
    return level;
  };
  for (size_t e = 0; e < entries.size();) {
    const uint32_t r = entries[e].root;
    const size_t begin = e;
    for (; e < entries.size() && entries[e].root == r; ++e) {
      own[entries[e].node] += entries[e].value;
      for (uint32_t node = entries[e].node; node != 0 && stamp[node] != r; node = p.tree[node].parent) stamp[node] = r;
    }
    const std::string& prefix = *root_text[r];
    if (own[0] != 0) {  // a sample at the root: its root frames alone
      out += prefix.empty() ? std::string("[root]") : prefix.substr(0, prefix.size() - 1);
      out += ' ' + std::to_string(own[0]) + '\n';
    }
    path.clear();
    std::vector<Level> stack;
    stack.push_back(level_of({0}, r));
    while (!stack.empty()) {
      Level& top = stack.back();
      if (top.next == top.groups.size()) {
        path.resize(top.path_len);
        stack.pop_back();
        continue;
      }
      auto& [group_name, nodes] = top.groups[top.next++];
      path.resize(top.path_len);
      if (!path.empty()) path += ';';
      path += group_name;
      int64_t value = 0;
      for (uint32_t node : nodes) value += own[node];
      if (value != 0) {
        out += prefix;
        out += path;
        out += ' ';
        out += std::to_string(value);
        out += '\n';
        if (out.size() >= kPart) sink(out), out.clear();
      }
      std::vector<uint32_t> below = std::move(nodes);
      stack.push_back(level_of(below, r));
    }
    for (size_t k = begin; k < e; ++k) own[entries[k].node] = 0;
  }
  if (!out.empty()) sink(out);
}

}  // namespace torch2pprof
