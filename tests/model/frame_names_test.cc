// Frames from event names: addresses and step numbers removed, Python file and line,
// names pprof would rewrite.
#include "model/frame_names.h"

#include <gtest/gtest.h>

namespace torch2pprof {
namespace {

TEST(FrameNames, MemoryAddressesAreRemovedFromFrames) {
  EXPECT_EQ(FrameSystemName("<built-in method add_ of Tensor object at 0x7f3a2c1d9e40>"),
            "<built-in method add_ of Tensor object>");
  EXPECT_EQ(FrameSystemName("a at 0x1 b at 0xFFf c"), "a b c");
  EXPECT_EQ(FrameSystemName("look at 0x"), "look at 0x");  // no digits: no address
  EXPECT_EQ(FrameSystemName("aten::add"), "aten::add");
}

TEST(FrameNames, StepFramesKeepNoNumber) {
  // The step label keeps N; the frame aggregates over steps and runs.
  EXPECT_EQ(FrameSystemName("ProfilerStep#3"), "ProfilerStep");
  EXPECT_EQ(FrameSystemName("ProfilerStep#12345"), "ProfilerStep");
  EXPECT_EQ(FrameSystemName("ProfilerStep#x"), "ProfilerStep#x");
  EXPECT_EQ(FrameSystemName("ProfilerStep#"), "ProfilerStep#");
}

TEST(FrameNames, PythonFramesGetFileLineAndAName) {
  Frame f = MakeFrame("/opt/venv/lib/python3.10/site-packages/torch/nn/modules/module.py(1194): _call_impl");
  EXPECT_EQ(f.filename, "/opt/venv/lib/python3.10/site-packages/torch/nn/modules/module.py");
  EXPECT_EQ(f.line, 1194);
  EXPECT_EQ(f.name, "_call_impl torch/nn/modules/module.py:1194");
  Frame g = MakeFrame("model.py(30): forward");
  EXPECT_EQ(g.name, "forward model.py:30");
  EXPECT_EQ(g.filename, "model.py");
  // The path may itself contain ".py(" ; the last well-formed match wins.
  Frame h = MakeFrame("odd.py(dir)/x.py(7): f");
  EXPECT_EQ(h.filename, "odd.py(dir)/x.py");
  EXPECT_EQ(h.line, 7);
  for (const char* not_python : {"nn.Module: Linear_0", "x.py(12)", "x.py(): f", "aten::mm"}) {
    Frame n = MakeFrame(not_python);
    EXPECT_EQ(n.filename, "") << not_python;
    EXPECT_EQ(n.line, 0) << not_python;
  }
}

TEST(FrameNames, EveryOutputReadsOneNameAndOneFunction) {
  // Any other frame is named, and is a function, exactly as its event.
  for (const char* name : {"aten::add", "void k<4, F<float> >(int, F<float>)", "Memcpy HtoD (Pageable -> Device)",
                           "<built-in function linear>", "nn.Module: Linear_0"}) {
    Frame f = MakeFrame(name);
    EXPECT_EQ(f.name, name);
    EXPECT_EQ(f.function, name);
    EXPECT_EQ(f.system_name, name);
  }
  // A Python frame's function is the function alone; its name adds the short path and line.
  Frame p = MakeFrame("/usr/lib/python3/site-packages/torch/nn/modules/module.py(1194): _call_impl");
  EXPECT_EQ(p.function, "_call_impl");
  EXPECT_EQ(p.name, "_call_impl torch/nn/modules/module.py:1194");
  EXPECT_EQ(MakeFrame("x.py(3): f(a, b)").function, "f(a, b)");
}

TEST(FrameNames, WithoutParametersDropsOnlyASignaturesParameterList) {
  EXPECT_EQ(WithoutParameters("void k<4, F<float> >(int, F<float>)"), "void k<4, F<float> >");
  EXPECT_EQ(WithoutParameters("cask_cudnn::computeOffsetsKernel(cask_cudnn::ComputeOffsetsParams)"),
            "cask_cudnn::computeOffsetsKernel");
  EXPECT_EQ(WithoutParameters("Memcpy HtoD (Pageable -> Device)"), "Memcpy HtoD (Pageable -> Device)");
  EXPECT_EQ(WithoutParameters("(x)"), "(x)");
  EXPECT_EQ(WithoutParameters("aten::mm"), "aten::mm");
}

}  // namespace
}  // namespace torch2pprof

namespace torch2pprof {
namespace {

TEST(FrameNames, TheWaitList) {
  for (const char* wait : {"<built-in method acquire of _thread.lock object>", "<built-in function sleep>",
                           "<built-in method poll of select.poll object>", "<built-in function select>",
                           "<built-in method get of _queue.SimpleQueue object>",
                           "<built-in method run_backward of torch._C._EngineBase object>",
                           "/usr/lib/python3.11/threading.py(355): wait", "threading.py(320): wait",
                           "/usr/lib/python3.11/queue.py(171): get", "/usr/lib/python3.11/selectors.py(415): select",
                           "/usr/lib/python3.11/multiprocessing/connection.py(1136): wait"}) {
    EXPECT_TRUE(IsBlockingWait(MakeFrame(wait))) << wait;
  }
  for (const char* work :
       {"cudaStreamSynchronize", "aten::item", "aten::_local_scalar_dense", "my_threading.py(3): wait",
        "/app/queue.py(3): put", "model.py(10): wait", "<built-in method acquire_lock of x>"}) {
    EXPECT_FALSE(IsBlockingWait(MakeFrame(work))) << work;
  }
  EXPECT_EQ(BackwardFrameName("autograd::engine::evaluate_function: AddmmBackward0"), "[backward] AddmmBackward0");
  EXPECT_EQ(BackwardFrameName("MulBackward0"), "[backward] MulBackward0");
}

}  // namespace
}  // namespace torch2pprof
