#include "load/folded_reader.h"

#include <algorithm>
#include <deque>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "base/utf8.h"
#include "load/byte_source.h"
#include "torch2pprof/error.h"

namespace torch2pprof {

namespace {

// Where torch's export_stacks frame "path(123):_func" has its "):_" (the frame text of
// FunctionEvent.stack, "path(123): func", with ' ', ';', '\t' and '\n' written as '_'), or
// npos for a frame of another kind.
size_t ExportStacksColon(std::string_view frame) {
  const size_t colon = frame.rfind("):_");
  if (colon == std::string_view::npos || colon + 3 == frame.size()) return std::string_view::npos;
  size_t d = colon;
  while (d > 0 && frame[d - 1] >= '0' && frame[d - 1] <= '9') --d;
  return d < colon && d > 1 && frame[d - 1] == '(' ? colon : std::string_view::npos;
}

// torch's export_stacks writes each ' ' of a stack entry as '_'. Its entries take four
// forms whose spaces are known, and those are given back: Python frames "path.py(12):
// func", modules "nn.Module: Linear_0", built-ins "<built-in function NAME>" and
// "<built-in method NAME of TYPE object at 0x...>" (NAME and TYPE are identifiers, which
// hold no space; NAME ends at the first "_of_"). Other entries stay as written.
std::string FromExportStacks(std::string text) {
  auto starts = [&](std::string_view p) { return text.compare(0, p.size(), p) == 0; };
  const size_t colon = ExportStacksColon(text);
  if (colon != std::string::npos) {
    text[colon + 2] = ' ';
  } else if (starts("nn.Module:_")) {
    text[10] = ' ';
  } else if (starts("<built-in_function_") && text.back() == '>') {
    text[9] = text[18] = ' ';
  } else if (starts("<built-in_method_") && text.back() == '>') {
    const size_t of = text.find("_of_", 17);
    size_t object = text.rfind("_object_at_0x");
    if (object == std::string::npos && text.size() >= 8 && text.compare(text.size() - 8, 8, "_object>") == 0) {
      object = text.size() - 8;
    }
    if (of != std::string::npos && object != std::string::npos && of < object) {
      text[9] = text[16] = text[of] = text[of + 3] = text[object] = ' ';
      if (object + 7 < text.size() - 1) text[object + 7] = text[object + 10] = ' ';  // " at 0x"
    }
  }
  return text;
}

class FoldedReader {
 public:
  FoldedReader(const std::string& file, uint32_t max_depth) : file_(file), max_depth_(std::max(2u, max_depth)) {
    nodes_.push_back({0, 0});
    values_.push_back(0);
  }

  void Line(std::string_view line, uint64_t offset) {
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    if (line.empty()) return;
    for (size_t i = 0; i < line.size();) {
      const auto c = static_cast<unsigned char>(line[i]);
      if (c < 0x20 && c != '\t')
        Fail(offset + i, "expected text in a line of folded stacks, found a control character");
      const size_t n = Utf8SequenceAt(line, i);
      if (n == 0) Fail(offset + i, "expected UTF-8 text in a line of folded stacks, found bytes of no character");
      i += n;
    }
    const size_t space = line.rfind(' ');
    if (space == std::string_view::npos || space == 0) {
      Fail(offset, "expected a line of folded stacks: frames separated by ';', a space and an integer value");
    }
    const int64_t value = Value(line.substr(space + 1), offset + space + 1);
    const std::string_view frames = line.substr(0, space);
    size_t count = static_cast<size_t>(std::count(frames.begin(), frames.end(), ';')) + 1;
    uint32_t node = 0;
    size_t depth = 0;
    for (size_t at = 0; at <= frames.size(); ++depth) {
      size_t end = std::min(frames.find(';', at), frames.size());
      if (end == at) Fail(offset + at, "expected a frame's name between ';'s, found none (';;', or ';' at an end)");
      if (count > max_depth_ && depth + 1 == max_depth_) {  // the rest as one frame
        node = Child(node, kDeeperFramesName);
        break;
      }
      node = Child(node, frames.substr(at, end - at));
      at = end + 1;
    }
    if (__builtin_add_overflow(values_[node], value, &values_[node])) {
      Fail(offset, "expected values that sum within 64 bits for one stack");
    }
  }

  Profile Finish(const std::string& source_file) && {
    Profile p;
    // export_stacks wrote the file when its frames hold no space and some are its Python frames.
    const bool torch = export_stacks_ > 0 && spaced_ == 0;
    p.sample_types = {torch ? ValueType{"time", "microseconds"} : ValueType{"samples", "count"}};
    p.default_sample_type = p.sample_types[0].type;
    p.period_type = p.sample_types[0];
    p.period = 1;
    p.source_file = source_file;
    p.comments.push_back(
        torch ? "folded stacks of torch's export_stacks: each value an event's self time in microseconds by the "
                "metric export_stacks was given (self_cpu_time_total or self_cuda_time_total), under its Python stack"
              : "folded stacks: each value as the file gave it");
    for (std::string& text : texts_) {
      Frame f;
      f.name = f.function = f.system_name = torch ? FromExportStacks(std::move(text)) : std::move(text);
      p.frames.push_back(std::move(f));
    }
    for (const auto& [parent, frame] : nodes_) p.tree.push_back(TreeNode{parent, frame});
    p.label_sets.emplace_back();
    for (uint32_t n = 1; n < nodes_.size(); ++n) {
      if (values_[n] != 0) p.samples.push_back(Sample{n, 0, {values_[n]}});  // only a line's last frame has one
    }
    return p;
  }

 private:
  [[noreturn]] void Fail(uint64_t offset, const std::string& what) const {
    ThrowInput(file_, static_cast<int64_t>(offset), what);
  }

  int64_t Value(std::string_view text, uint64_t offset) const {
    const bool negative = !text.empty() && text[0] == '-';
    if (negative) text.remove_prefix(1);
    if (text.empty()) Fail(offset, "expected an integer value after the last space of a line of folded stacks");
    int64_t v = 0;
    for (char c : text) {
      if (c < '0' || c > '9') Fail(offset, "expected an integer value after the last space of a line of folded stacks");
      if (__builtin_mul_overflow(v, 10, &v) || __builtin_add_overflow(v, c - '0', &v)) {
        Fail(offset, "expected a value within 64 bits");
      }
    }
    return negative ? -v : v;
  }

  uint32_t Child(uint32_t parent, std::string_view text) {
    auto it = frame_of_.find(text);
    if (it == frame_of_.end()) {
      const std::string& kept = texts_.emplace_back(text);  // a deque: the key stays where it is
      it = frame_of_.emplace(kept, static_cast<uint32_t>(texts_.size() - 1)).first;
      if (ExportStacksColon(text) != std::string_view::npos) ++export_stacks_;
      if (text.find(' ') != std::string_view::npos) ++spaced_;
    }
    const uint64_t key = uint64_t{parent} << 32 | it->second;
    auto [child, created] = child_of_.try_emplace(key, static_cast<uint32_t>(nodes_.size()));
    if (created) {
      nodes_.push_back({parent, it->second});
      values_.push_back(0);
    }
    return child->second;
  }

  const std::string& file_;
  const uint32_t max_depth_;
  std::deque<std::string> texts_;                            // each frame's text once
  std::unordered_map<std::string_view, uint32_t> frame_of_;  // text (in texts_) -> its index
  size_t export_stacks_ = 0;                                 // texts_ that are export_stacks' Python frames
  size_t spaced_ = 0;                                        // texts_ with a space
  std::unordered_map<uint64_t, uint32_t> child_of_;          // (parent, frame) -> node
  std::vector<std::pair<uint32_t, uint32_t>> nodes_;         // (parent, frame); [0] the root
  std::vector<int64_t> values_;                              // by node: the lines ending there, summed
};

}  // namespace

Profile ReadFolded(ByteSource& source, const LoadOptions& options) {
  FoldedReader reader(source.name(), options.max_depth);
  std::string buffer(1 << 20, '\0');
  std::string partial;      // a line cut by a read
  uint64_t base = 0;        // the offset of buffer[0]
  uint64_t line_start = 0;  // the offset of the line being read
  for (;;) {
    const size_t n = source.Read(buffer.data(), buffer.size());
    if (n == 0) break;
    const std::string_view chunk(buffer.data(), n);
    for (size_t at = 0; at < chunk.size();) {
      const size_t end = chunk.find('\n', at);
      if (end == std::string_view::npos) {
        partial.append(chunk.substr(at));
        break;
      }
      if (partial.empty()) {
        reader.Line(chunk.substr(at, end - at), line_start);
      } else {
        partial.append(chunk.substr(at, end - at));
        reader.Line(partial, line_start);
        partial.clear();
      }
      at = end + 1;
      line_start = base + at;
    }
    base += n;
  }
  reader.Line(partial, line_start);  // a last line without its '\n'
  return std::move(reader).Finish(source.name());
}

}  // namespace torch2pprof
