// A profile's call tree reduced to what a flame graph draws: each node's inclusive value
// per chosen sample type, the nodes too small to see folded into their parents.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "torch2pprof/analysis.h"
#include "torch2pprof/profile.h"

namespace torch2pprof {

// The tree of `p` with the values of `types` (those p lacks, or whose total is 0, left
// out). A node is kept where it holds at least `fold_share` of some type's total; past
// `max_nodes` kept, the share doubles until they fit (the page stays small on any trace).
FlameGraph FlameOf(const Profile& p, const std::vector<std::string>& types, double fold_share = 0.001,
                   size_t max_nodes = 20000);

// Two runs' trees merged by their stacks (frames matched by name, root to leaf): total
// holds next's values, base the base run's, for the types either has. A node is kept
// where either run holds fold_share of the larger root; max_nodes as FlameOf.
FlameGraph DiffFlameOf(const Profile& base, const Profile& next, const std::vector<std::string>& types,
                       double fold_share = 0.001, size_t max_nodes = 20000);

// The graph as JSON for the page's script: {"types": [...], "units": [...], "names":
// [...], "parent": [...], "name": [...], "total": [[...], ...], "base": [[...], ...] (a differential graph), "folded":
// N, "share": x}.
std::string FlameJson(const FlameGraph& f);

}  // namespace torch2pprof
