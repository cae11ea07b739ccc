#include "report/flame_graph.h"

#include <algorithm>
#include <cstdio>
#include <map>

#include "report/format.h"
#include "report/table.h"

namespace torch2pprof {

namespace {

// A profile's inclusive value of `type` at each node (empty: the profile lacks it), and its unit.
std::vector<int64_t> Totals(const Profile& p, const std::string& type, std::string* unit) {
  size_t column = p.sample_types.size();
  for (size_t i = 0; i < p.sample_types.size(); ++i) {
    if (p.sample_types[i].type == type) column = i;
  }
  if (column == p.sample_types.size() || p.tree.empty()) return {};
  *unit = p.sample_types[column].unit;
  std::vector<int64_t> total(p.tree.size(), 0);
  for (const Sample& s : p.samples) {
    if (s.node < total.size() && column < s.values.size()) total[s.node] += s.values[column];
  }
  for (size_t i = total.size() - 1; i > 0; --i) total[p.tree[i].parent] += total[i];
  return total;
}

// The smallest share from fold_share up (doubling) at which at most max_nodes nodes hold
// it (`holds(i, share)`), the root counted: what both graphs fold at.
template <typename Holds>
double FoldShare(size_t n, double fold_share, size_t max_nodes, Holds holds) {
  for (double share = fold_share;; share *= 2) {
    size_t kept = 1;
    for (size_t i = 1; i < n; ++i) kept += holds(i, share);
    if (kept <= max_nodes || share >= 1) return share;
  }
}

}  // namespace

FlameGraph FlameOf(const Profile& p, const std::vector<std::string>& types, double fold_share, size_t max_nodes) {
  FlameGraph f;
  const size_t n = p.tree.size();
  if (n == 0) return f;
  // The values of each chosen type, self at the sample's node, then summed up the tree
  // (a parent's index is below its child's: the aggregator adds a node after its parent).
  std::vector<std::vector<int64_t>> totals;
  for (const std::string& type : types) {
    std::string unit;
    std::vector<int64_t> total = Totals(p, type, &unit);
    if (total.empty() || total[0] <= 0) continue;
    f.types.push_back(type);
    f.units.push_back(unit);
    totals.push_back(std::move(total));
  }
  if (totals.empty()) return f;
  // The nodes kept: those holding the share of some type's total (their parents hold at
  // least as much, so the kept nodes form a tree).
  auto holds = [&](size_t i, double share) {
    for (const std::vector<int64_t>& t : totals) {
      if (t[i] > 0 && static_cast<double>(t[i]) >= share * static_cast<double>(t[0])) return true;
    }
    return false;
  };
  f.fold_share = FoldShare(n, fold_share, max_nodes, holds);
  std::vector<uint32_t> index(n, UINT32_MAX);
  std::vector<int32_t> name_of(p.frames.size(), -1);
  index[0] = 0;
  f.parent.push_back(0);
  f.name.push_back(0);
  for (size_t i = 1; i < n; ++i) {
    if (index[p.tree[i].parent] == UINT32_MAX || !holds(i, f.fold_share)) {  // those under a folded one count too
      ++f.folded;
      continue;
    }
    index[i] = static_cast<uint32_t>(f.parent.size());
    f.parent.push_back(index[p.tree[i].parent]);
    int32_t& nm = name_of[p.tree[i].frame];
    if (nm < 0) {
      nm = static_cast<int32_t>(f.names.size());
      f.names.push_back(p.frames[p.tree[i].frame].name);
    }
    f.name.push_back(static_cast<uint32_t>(nm));
  }
  for (const std::vector<int64_t>& t : totals) {
    std::vector<int64_t>& out = f.total.emplace_back(f.parent.size(), 0);
    for (size_t i = 0; i < n; ++i) {
      if (index[i] != UINT32_MAX) out[index[i]] = t[i];
    }
  }
  if (f.names.empty()) f.names.push_back("");
  return f;
}

FlameGraph DiffFlameOf(const Profile& base, const Profile& next, const std::vector<std::string>& types,
                       double fold_share, size_t max_nodes) {
  FlameGraph f;
  // The merged tree: a node per (merged parent, frame name), parents first.
  std::vector<uint32_t> parent = {0};
  std::vector<std::string> name = {""};
  std::map<std::pair<uint32_t, std::string>, uint32_t> index;
  std::vector<uint32_t> merged[2];
  const Profile* runs[2] = {&base, &next};
  for (int r = 0; r < 2; ++r) {
    const Profile& p = *runs[r];
    merged[r].assign(p.tree.size(), 0);
    for (size_t i = 1; i < p.tree.size(); ++i) {
      const uint32_t up = merged[r][p.tree[i].parent];
      auto [it, added] = index.try_emplace({up, p.frames[p.tree[i].frame].name}, static_cast<uint32_t>(parent.size()));
      if (added) {
        parent.push_back(up);
        name.push_back(p.frames[p.tree[i].frame].name);
      }
      merged[r][i] = it->second;
    }
  }
  const size_t n = parent.size();
  std::vector<std::vector<int64_t>> values[2];
  for (const std::string& type : types) {
    std::string unit;
    std::vector<int64_t> t[2] = {Totals(base, type, &unit), Totals(next, type, &unit)};
    if ((t[0].empty() || t[0][0] <= 0) && (t[1].empty() || t[1][0] <= 0)) continue;
    f.types.push_back(type);
    f.units.push_back(unit);
    for (int r = 0; r < 2; ++r) {
      std::vector<int64_t>& v = values[r].emplace_back(n, 0);
      for (size_t i = 0; i < t[r].size(); ++i) v[merged[r][i]] += t[r][i];
    }
  }
  if (f.types.empty()) return f;
  auto holds = [&](size_t i, double share) {
    for (size_t k = 0; k < f.types.size(); ++k) {
      const double root = static_cast<double>(std::max(values[0][k][0], values[1][k][0]));
      const int64_t v = std::max(values[0][k][i], values[1][k][i]);
      if (v > 0 && static_cast<double>(v) >= share * root) return true;
    }
    return false;
  };
  f.fold_share = FoldShare(n, fold_share, max_nodes, holds);
  std::vector<uint32_t> out(n, UINT32_MAX);
  std::map<std::string, uint32_t> names;
  out[0] = 0;
  f.parent.push_back(0);
  f.name.push_back(0);
  f.names.push_back("");
  for (size_t i = 1; i < n; ++i) {
    if (out[parent[i]] == UINT32_MAX || !holds(i, f.fold_share)) {
      ++f.folded;
      continue;
    }
    out[i] = static_cast<uint32_t>(f.parent.size());
    f.parent.push_back(out[parent[i]]);
    auto [it, added] = names.try_emplace(name[i], static_cast<uint32_t>(f.names.size()));
    if (added) f.names.push_back(name[i]);
    f.name.push_back(it->second);
  }
  for (size_t k = 0; k < f.types.size(); ++k) {
    std::vector<int64_t>& b = f.base.emplace_back(f.parent.size(), 0);
    std::vector<int64_t>& t = f.total.emplace_back(f.parent.size(), 0);
    for (size_t i = 0; i < n; ++i) {
      if (out[i] == UINT32_MAX) continue;
      b[out[i]] = values[0][k][i];
      t[out[i]] = values[1][k][i];
    }
  }
  return f;
}

std::string FlameJson(const FlameGraph& f) {
  // Compact: a page holds up to tens of thousands of nodes.
  std::string out = "{";
  auto quoted = [](const std::string& s) {
    report::Json j;
    j.String(s);
    return j.out;
  };
  auto strings = [&](const char* key, const std::vector<std::string>& v) {
    out += std::string("\"") + key + "\":[";
    for (size_t i = 0; i < v.size(); ++i) out += (i ? "," : "") + quoted(v[i]);
    out += "],";
  };
  auto numbers = [&](const auto& v) {
    out += "[";
    for (size_t i = 0; i < v.size(); ++i) out += (i ? "," : "") + std::to_string(v[i]);
    out += "]";
  };
  strings("types", f.types);
  strings("units", f.units);
  strings("names", f.names);
  // The label each name is drawn with, as the tables write it; "" where it is the name.
  std::vector<std::string> labels;
  for (const std::string& n : f.names) {
    std::string l = report::FrameLabel(n);
    labels.push_back(l == n ? std::string() : std::move(l));
  }
  strings("labels", labels);
  out += "\"parent\":";
  numbers(f.parent);
  out += ",\"name\":";
  numbers(f.name);
  out += ",\"total\":[";
  for (size_t t = 0; t < f.total.size(); ++t) {
    if (t) out += ",";
    numbers(f.total[t]);
  }
  out += "]";
  if (!f.base.empty()) {
    out += ",\"base\":[";
    for (size_t t = 0; t < f.base.size(); ++t) {
      if (t) out += ",";
      numbers(f.base[t]);
    }
    out += "]";
  }
  char share[32];
  std::snprintf(share, sizeof share, "%g", f.fold_share);
  out += ",\"folded\":" + std::to_string(f.folded) + ",\"share\":" + share + "}";
  return out;
}

}  // namespace torch2pprof
