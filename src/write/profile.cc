#include "torch2pprof/profile.h"

namespace torch2pprof {

std::string ValidateProfile(const Profile& p) {
  if (p.sample_types.empty()) return "no sample types";
  bool default_known = p.default_sample_type.empty();
  for (const ValueType& t : p.sample_types) default_known |= t.type == p.default_sample_type;
  if (!default_known) return "default sample type " + p.default_sample_type + " is not a sample type";
  if (p.tree.empty()) return "the call tree has no root";
  for (size_t i = 1; i < p.tree.size(); ++i) {
    // Parents are created before children, so a parent index below the node's rules out cycles.
    if (p.tree[i].parent >= i)
      return "tree node " + std::to_string(i) + " has parent " + std::to_string(p.tree[i].parent);
    if (p.tree[i].frame >= p.frames.size()) return "tree node " + std::to_string(i) + " has no frame";
  }
  for (size_t i = 0; i < p.samples.size(); ++i) {
    const Sample& s = p.samples[i];
    if (s.node == 0 || s.node >= p.tree.size()) return "sample " + std::to_string(i) + " has no stack";
    if (s.labels >= p.label_sets.size()) return "sample " + std::to_string(i) + " has unknown labels";
    if (s.values.size() != p.sample_types.size())
      return "sample " + std::to_string(i) + " has the wrong number of values";
  }
  return "";
}

}  // namespace torch2pprof
