// The names pprof shows: the frame's own, unless pprof's C++ simplifier would rewrite it.
#include "write/pprof_names.h"

#include <gtest/gtest.h>

#include "model/frame_names.h"

namespace torch2pprof {
namespace {

std::string Shown(const char* event) { return PprofFunctionName(MakeFrame(event)); }

TEST(PprofNames, NamesPprofWouldRewriteGetANameItShowsAsIs) {
  // Unaffected names stay as they are.
  EXPECT_EQ(Shown("aten::add"), "aten::add");
  EXPECT_EQ(Shown("cudaLaunchKernel"), "cudaLaunchKernel");
  EXPECT_EQ(Shown("ProfilerStep"), "ProfilerStep");
  // C++ signatures lose their parameter list and keep their template arguments.
  EXPECT_EQ(Shown("void k<4, F<float> >(int, F<float>)"), "void k<4, F<float> >");
  EXPECT_EQ(Shown("cask_cudnn::computeOffsetsKernel(cask_cudnn::ComputeOffsetsParams)"),
            "cask_cudnn::computeOffsetsKernel");
  // Others keep all their text but differ from the system name by a trailing space.
  EXPECT_EQ(Shown("Memcpy HtoD (Pageable -> Device)"), "Memcpy HtoD (Pageable -> Device) ");
  EXPECT_EQ(Shown("<built-in function linear>"), "<built-in function linear> ");
  EXPECT_EQ(Shown("void cutlass::Kernel<cfg>"), "void cutlass::Kernel<cfg> ");
  // Python frames differ from their system name already.
  EXPECT_EQ(Shown("x/site-packages/a/b.py(3): f"), "f a/b.py:3");
}

}  // namespace
}  // namespace torch2pprof
