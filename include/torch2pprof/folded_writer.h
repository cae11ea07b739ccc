// Stage 4, another format: the profile as folded stacks, one "frame;frame;frame value"
// line per distinct stack, for flamegraph.pl, inferno and speedscope.
#pragma once

#include <functional>
#include <string>
#include <string_view>

#include "torch2pprof/profile.h"

namespace torch2pprof {

// What stands first in each stack as a root frame, so that flame graphs separate them.
enum class FoldedRoot {
  kAuto,    // kDevice for device time (gpu), else kThread
  kThread,  // the sample's thread label ("thread 439 (python3)", "stream 7"), else "tid N";
            // device work: its launching thread
  kDevice,  // the device the work ran on ("cuda:0"); samples without one: their thread. A
            // layer's forward and backward launch on different threads but run on one device,
            // so device time keeps the two together under the layer
  kRank,    // "rank N" (convert -o); samples without a rank label get none
  kNone,
};

// Frames run root to leaf; ';' in a frame becomes ',', a newline a space, and outer
// spaces go (the format has no escapes). Each line's value is the sum of `sample_type` (a name of
// p.sample_types; "" the profile's default) over the samples with that stack, in that
// type's unit; lines with 0 are left out. Lines come root by root (root frames in byte
// order), then depth first, the callees of a frame by name: a stack's callers come
// before it, and frames written alike ("a;b" and "a,b") are one.
// Throws Error (kind kUsage) for an unknown sample type.
std::string WriteFolded(const Profile& p, const std::string& sample_type = "", FoldedRoot root = FoldedRoot::kAuto);
// The same handed to `sink` a part at a time (about 1 MiB), so that the output is never
// held whole: deep stacks make folded text many times a profile's size.
void WriteFolded(const Profile& p, const std::string& sample_type, FoldedRoot root,
                 const std::function<void(std::string_view)>& sink);

// The index in p.sample_types of `name` ("" the default); throws Error (kind kUsage)
// naming the profile's types when it has no such type.
size_t SampleTypeIndex(const Profile& p, const std::string& name);

}  // namespace torch2pprof
