#include <cmath>
#include <string>
#include <unordered_map>

#include "torch2pprof/profile.h"

namespace torch2pprof {

Profile DiffProfile(const Profile& base, const Profile& next) {
  Profile out;
  out.default_sample_type = next.default_sample_type;
  out.period_type = next.period_type;
  out.period = next.period;
  out.time_nanos = next.time_nanos;
  out.duration_nanos = next.duration_nanos;
  out.tree.push_back(TreeNode{0, 0});
  for (const Profile* p : {&base, &next}) {
    for (const ValueType& t : p->sample_types) {
      bool known = false;
      for (const ValueType& u : out.sample_types) known |= u.type == t.type;
      if (!known) out.sample_types.push_back(t);
    }
  }
  std::unordered_map<std::string, uint32_t> frame_of;  // by system name: frames are made from it
  std::unordered_map<uint64_t, uint32_t> child_of;
  std::unordered_map<uint64_t, uint32_t> sample_of;
  for (const Profile* p : {&base, &next}) {
    const bool is_base = p == &base;
    std::vector<int> column(p->sample_types.size());
    for (size_t k = 0; k < p->sample_types.size(); ++k) {
      for (size_t u = 0; u < out.sample_types.size(); ++u) {
        if (out.sample_types[u].type == p->sample_types[k].type) column[k] = static_cast<int>(u);
      }
    }
    std::vector<uint32_t> frames(p->frames.size());
    for (size_t f = 0; f < p->frames.size(); ++f) {
      auto [it, added] = frame_of.emplace(p->frames[f].system_name, static_cast<uint32_t>(out.frames.size()));
      if (added) out.frames.push_back(p->frames[f]);
      frames[f] = it->second;
    }
    std::vector<uint32_t> nodes(p->tree.size(), 0);  // parents come before children
    for (size_t n = 1; n < p->tree.size(); ++n) {
      uint32_t parent = nodes[p->tree[n].parent], frame = frames[p->tree[n].frame];
      auto [it, added] =
          child_of.emplace((static_cast<uint64_t>(parent) << 32) | frame, static_cast<uint32_t>(out.tree.size()));
      if (added) out.tree.push_back(TreeNode{parent, frame});
      nodes[n] = it->second;
    }
    uint32_t first_set = static_cast<uint32_t>(out.label_sets.size());
    for (const auto& labels : p->label_sets) {
      out.label_sets.push_back(labels);
      if (is_base) out.label_sets.back().push_back(Label{label_key::kBase, "true", 0, false});
    }
    for (const Sample& s : p->samples) {
      uint32_t node = nodes[s.node], labels = first_set + s.labels;
      auto [it, added] =
          sample_of.emplace((static_cast<uint64_t>(node) << 32) | labels, static_cast<uint32_t>(out.samples.size()));
      if (added) out.samples.push_back(Sample{node, labels, std::vector<int64_t>(out.sample_types.size(), 0)});
      for (size_t k = 0; k < s.values.size(); ++k) {
        out.samples[it->second].values[static_cast<size_t>(column[k])] += is_base ? -s.values[k] : s.values[k];
      }
    }
    for (const std::string& c : p->comments) out.comments.push_back((is_base ? "base: " : "new: ") + c);
  }
  out.source_file = next.source_file + " vs " + base.source_file;
  return out;
}

Profile PerStepProfile(Profile p, uint64_t steps) {
  if (steps <= 1) return p;
  const double n = static_cast<double>(steps);
  for (Sample& s : p.samples) {
    for (int64_t& v : s.values) v = std::llround(static_cast<double>(v) / n);
  }
  p.comments.push_back("values per step: the totals divided by " + std::to_string(steps) +
                       " steps and rounded (torch2pprof compare -o)");
  return p;
}

}  // namespace torch2pprof
