// pstats: cProfile's marshal dict, keyed by the function each frame is (Frame::function).
#include "torch2pprof/output.h"

#include <gtest/gtest.h>

#include "model/frame_names.h"
#include "torch2pprof/error.h"

namespace torch2pprof {
namespace {

// marshal's string: 'u', its length as 4 little-endian bytes, its bytes.
std::string MarshalStr(const std::string& s) {
  std::string out = "u";
  for (int i = 0; i < 4; ++i) out += static_cast<char>((s.size() >> (8 * i)) & 0xFF);
  return out + s;
}

Profile TwoFrames() {
  Profile p;
  p.sample_types = {{"calls", "count"}, {"wall", "nanoseconds"}, {"work", "nanoseconds"}, {"alloc_space", "bytes"}};
  p.default_sample_type = "work";
  p.frames = {MakeFrame("/venv/lib/python3.11/site-packages/torch/nn/modules/module.py(1194): _call_impl"),
              MakeFrame("void k<4, F<float> >(int, F<float>)")};
  p.tree = {{0, 0}, {0, 0}, {1, 1}};
  p.label_sets = {{}};
  p.samples = {{1, 0, {1, 3000, 1000, 0}}, {2, 0, {1, 2000, 2000, 0}}};
  return p;
}

TEST(PstatsWriter, FramesAreKeyedByTheirFunctionFileAndLine) {
  std::string out = WritePstats(TwoFrames());
  // A Python frame: (its file, its line, its function) -- the function alone.
  EXPECT_NE(out.find(MarshalStr("/venv/lib/python3.11/site-packages/torch/nn/modules/module.py")), std::string::npos);
  EXPECT_NE(out.find(MarshalStr("_call_impl")), std::string::npos);
  EXPECT_EQ(out.find("module.py:1194"), std::string::npos);
  // Any other frame: ("~", 0, its name), the C++ parameter list kept.
  EXPECT_NE(out.find(MarshalStr("void k<4, F<float> >(int, F<float>)")), std::string::npos);
}

TEST(PstatsWriter, TimesAreTheProfilesDefaultTypeUnlessOneIsNamed) {
  // The default is work: 3 us and 3 us inclusive at the top; wall would be 5 us.
  EXPECT_EQ(WritePstats(TwoFrames()), WritePstats(TwoFrames(), "work"));
  EXPECT_NE(WritePstats(TwoFrames()), WritePstats(TwoFrames(), "wall"));
  EXPECT_THROW(WritePstats(TwoFrames(), "alloc_space"), Error);  // bytes are no time
}

}  // namespace
}  // namespace torch2pprof
