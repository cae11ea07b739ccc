// Builds a Profile for the aggregator: frames interned by name, one call tree, label
// sets, and samples summed per (tree node, label set), trace by trace.
#pragma once

#include <cstdint>
#include <string>
#include <unordered_map>
#include <vector>

#include "base/flat_map.h"
#include "base/saturate.h"
#include "torch2pprof/profile.h"
#include "torch2pprof/stages/trace.h"
#include "torch2pprof/stages/trace_model.h"

namespace torch2pprof {

class ProfileBuilder {
 public:
  static constexpr uint32_t kNoLane = UINT32_MAX;

  // Stacks deeper than max_depth frames keep their first max_depth - 1 and fold the rest
  // into one frame "[deeper frames truncated]": pprof stores each sample's whole stack,
  // so depth d would cost d^2.
  ProfileBuilder(Profile* p, uint32_t max_depth);
  // Without labels every sample has the empty label set.
  void set_labels(bool labels) { labels_ = labels; }

  // The trace whose events come next; rank < 0: no rank label.
  void Begin(const Trace& trace, const TraceModel& model, int64_t rank);

  // The frame of an event name (string id of the current trace).
  uint32_t Frame(uint32_t name);
  uint32_t FrameFor(const std::string& system_name);
  uint32_t Node(uint32_t parent, uint32_t frame);
  uint64_t folds() const { return folds_; }          // stacks cut at max_depth (fold nodes)
  uint64_t saturated() const { return saturated_; }  // sample values held at the 64-bit limit

  // A label set: the thread that ran or launched the work (lane; kNoLane: none), its
  // step (-1: none), and where the work ran: a device lane (-1: none) or a memory device.
  uint32_t Labels(uint32_t lane, int64_t step, int64_t device_lane = -1, int32_t memory_device = -1);

  // The sample of a tree node and label set (made on first use), and a value added to it.
  uint32_t Sample(uint32_t node, uint32_t labels);
  void Add(uint32_t sample, int index, int64_t value) {
    int64_t& v = p_.samples[sample].values[static_cast<size_t>(index)];
    v = SaturatingAdd(v, value, &saturated_);
  }
  void Add(uint32_t node, uint32_t labels, int index, int64_t value) { Add(Sample(node, labels), index, value); }
  // A profile that convert wrote, added as it was (convert -o over profiles): a label set
  // and a sample appended as they are, never merged with another, so that the samples
  // come in the profile's order. values: one per sample type of the profile being built.
  uint32_t AppendLabels(std::vector<Label> labels);
  void AppendSample(uint32_t node, uint32_t labels, std::vector<int64_t> values);
  // The node's own frame is a blocking wait (IsBlockingWait) on a lane: run_backward is
  // none where the lane runs its own backward (TraceModel::Waits).
  bool IsWait(uint32_t node, bool runs_own_backward) const {
    const uint8_t w = wait_frame_[p_.tree[node].frame];
    return w == kWaitFrame || (w == kRunBackward && !runs_own_backward);
  }

 private:
  struct LabelKey {
    uint32_t lane;
    int64_t step;
    int64_t device_lane;
    int32_t memory;
    bool operator==(const LabelKey& o) const {
      return lane == o.lane && step == o.step && device_lane == o.device_lane && memory == o.memory;
    }
  };

  Profile& p_;
  uint32_t max_depth_;
  std::vector<uint32_t> depth_;  // by tree node, the root 0; a fold node is max_depth_ + 1
  int64_t fold_frame_ = -1;
  uint64_t folds_ = 0;
  bool labels_ = true;
  uint64_t saturated_ = 0;
  static constexpr uint8_t kWaitFrame = 1, kRunBackward = 2;
  std::vector<uint8_t> wait_frame_;  // by frame: 0 (work), kWaitFrame or kRunBackward
  const Trace* t_ = nullptr;
  const TraceModel* m_ = nullptr;
  int64_t rank_ = -1;
  std::vector<int32_t> frame_of_name_;
  std::unordered_map<std::string, uint32_t> frame_index_;
  FlatIndexMap child_;                                       // (parent << 32 | frame) -> node
  std::unordered_multimap<uint64_t, uint32_t> label_index_;  // hash of a LabelKey -> label set
  std::vector<LabelKey> label_keys_;                         // per label set; earlier traces' never match
  uint32_t last_labels_ = UINT32_MAX;                        // pieces of one lane and step come in runs
  FlatIndexMap sample_;                                      // (node << 32 | label set) -> sample
};

// A label whose text is an integer is numeric (so that pprof's -tagfocus=tid=1234
// selects it); the writer gives it its key as unit (pprof drops a 0 with no unit).
Label TextOrNumberLabel(const std::string& key, const std::string& text);

}  // namespace torch2pprof
