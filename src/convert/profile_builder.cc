#include "convert/profile_builder.h"
#include "base/utf8.h"
#include "model/frame_names.h"

namespace torch2pprof {

Label TextOrNumberLabel(const std::string& key, const std::string& text) {
  size_t i = !text.empty() && text[0] == '-' ? 1 : 0;
  bool number = i < text.size() && text.size() - i <= 18 && (text[i] != '0' || text.size() == i + 1);
  for (size_t k = i; number && k < text.size(); ++k) number = text[k] >= '0' && text[k] <= '9';
  if (!number) return Label{key, VisibleText(text), 0, false};
  return Label{key, "", std::stoll(text), true};
}

ProfileBuilder::ProfileBuilder(Profile* p, uint32_t max_depth) : p_(*p), max_depth_(std::max(2u, max_depth)) {
  p_.tree.push_back(TreeNode{0, 0});
  depth_.push_back(0);
  wait_frame_.assign(p_.frames.size(), 0);
}

void ProfileBuilder::Begin(const Trace& trace, const TraceModel& model, int64_t rank) {
  t_ = &trace;
  m_ = &model;
  rank_ = rank;
  frame_of_name_.assign(trace.strings.size(), -1);
  label_index_.clear();
  label_keys_.assign(p_.label_sets.size(), LabelKey{~0u, 0, 0, 0});
  last_labels_ = UINT32_MAX;
}

uint32_t ProfileBuilder::Frame(uint32_t name) {
  if (frame_of_name_[name] < 0)
    frame_of_name_[name] = static_cast<int32_t>(FrameFor(FrameSystemName(t_->strings.Get(name))));
  return static_cast<uint32_t>(frame_of_name_[name]);
}

uint32_t ProfileBuilder::FrameFor(const std::string& system_name) {
  auto [it, inserted] = frame_index_.emplace(system_name, static_cast<uint32_t>(p_.frames.size()));
  if (inserted) {
    p_.frames.push_back(MakeFrame(system_name));
    wait_frame_.push_back(system_name == kRunBackwardFrame   ? kRunBackward
                          : IsBlockingWait(p_.frames.back()) ? kWaitFrame
                                                             : 0);
  }
  return it->second;
}

uint32_t ProfileBuilder::Node(uint32_t parent, uint32_t frame) {
  uint32_t depth = depth_[parent] + 1;
  if (depth > max_depth_) return parent;  // below a fold: into it
  if (depth == max_depth_) {
    if (fold_frame_ < 0) fold_frame_ = FrameFor(kDeeperFramesName);
    frame = static_cast<uint32_t>(fold_frame_);
    depth = max_depth_ + 1;
  }
  auto [node, inserted] =
      child_.Emplace((static_cast<uint64_t>(parent) << 32) | frame, static_cast<uint32_t>(p_.tree.size()));
  if (inserted) {
    p_.tree.push_back(TreeNode{parent, frame});
    depth_.push_back(depth);
    folds_ += depth > max_depth_;
  }
  return node;
}

uint32_t ProfileBuilder::Labels(uint32_t lane, int64_t step, int64_t device_lane, int32_t memory) {
  if (!labels_) {
    if (p_.label_sets.empty()) p_.label_sets.emplace_back();
    return 0;
  }
  LabelKey full{lane, step, device_lane, memory};
  if (last_labels_ < label_keys_.size() && label_keys_[last_labels_] == full) return last_labels_;
  // Called per piece: an integer key, not a string.
  uint64_t key = (static_cast<uint64_t>(lane) << 32) ^
                 (static_cast<uint64_t>(static_cast<uint32_t>(step)) * 0x9E3779B97F4A7C15ULL) ^
                 (static_cast<uint64_t>(device_lane + 1) << 40) ^ (static_cast<uint64_t>(memory + 1) << 52);
  auto range = label_index_.equal_range(key);
  for (auto it = range.first; it != range.second; ++it) {
    if (label_keys_[it->second] == full) return last_labels_ = it->second;
  }
  uint32_t id = static_cast<uint32_t>(p_.label_sets.size());
  label_index_.emplace(key, id);
  label_keys_.push_back(full);
  std::vector<Label> labels;
  if (lane != kNoLane) {
    const Lane& l = t_->lanes[lane];
    labels.push_back(TextOrNumberLabel(label_key::kPid, l.pid));
    labels.push_back(TextOrNumberLabel(label_key::kTid, l.tid));
    if (!l.thread_name.empty()) labels.push_back(Label{label_key::kThread, VisibleText(l.thread_name), 0, false});
  }
  if (rank_ >= 0) labels.push_back(Label{label_key::kRank, "", rank_, true});
  if (step >= 0) labels.push_back(Label{label_key::kStep, "", step, true});
  if (device_lane >= 0) {
    size_t d = static_cast<size_t>(device_lane);
    const std::string& name = m_->lanes[d].device_name;
    labels.push_back(Label{label_key::kDevice, name.empty() ? t_->lanes[d].pid : name, 0, false});
    labels.push_back(TextOrNumberLabel(label_key::kStream, t_->lanes[d].tid));
  }
  if (memory >= 0)
    labels.push_back(Label{label_key::kDevice, m_->memory[static_cast<size_t>(memory)].device, 0, false});
  p_.label_sets.push_back(std::move(labels));
  return last_labels_ = id;
}

uint32_t ProfileBuilder::AppendLabels(std::vector<Label> labels) {
  p_.label_sets.push_back(std::move(labels));
  label_keys_.push_back(LabelKey{~0u, 0, 0, 0});  // matches no live label set
  return static_cast<uint32_t>(p_.label_sets.size() - 1);
}

void ProfileBuilder::AppendSample(uint32_t node, uint32_t labels, std::vector<int64_t> values) {
  p_.samples.push_back(torch2pprof::Sample{node, labels, std::move(values)});
}

uint32_t ProfileBuilder::Sample(uint32_t node, uint32_t labels) {
  auto [sample, inserted] =
      sample_.Emplace((static_cast<uint64_t>(node) << 32) | labels, static_cast<uint32_t>(p_.samples.size()));
  if (inserted)
    p_.samples.push_back(torch2pprof::Sample{node, labels, std::vector<int64_t>(p_.sample_types.size(), 0)});
  return sample;
}

}  // namespace torch2pprof
