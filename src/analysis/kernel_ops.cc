// Device work by the operator that launched it, and how much of the kernel time ran on
// Tensor Cores (torch-tb-profiler's kernel view and its Tensor Core figures).
#include <algorithm>
#include <iterator>
#include <map>
#include <string>
#include <tuple>
#include <vector>

#include "analysis/stages.h"

namespace torch2pprof::analysis {

namespace {

bool Contains(std::string_view s, std::string_view part) { return s.find(part) != std::string_view::npos; }

bool StartsWith(std::string_view s, std::string_view prefix) { return s.substr(0, prefix.size()) == prefix; }

}  // namespace

// The operators autocast runs in lower precision, whose kernels can use Tensor Cores:
// torch-tb-profiler's TC_OP_Allowlist (profiler/tensor_core.py), its backward names
// matched as prefixes (torch 2 writes MmBackward0), and scaled dot product attention.
bool IsTensorCoreEligible(std::string_view op) {
  static constexpr std::string_view kOps[] = {"aten::_convolution",
                                              "aten::conv1d",
                                              "aten::conv2d",
                                              "aten::conv3d",
                                              "aten::conv_tbc",
                                              "aten::conv_transpose1d",
                                              "aten::conv_transpose2d",
                                              "aten::conv_transpose3d",
                                              "aten::convolution",
                                              "aten::cudnn_convolution",
                                              "aten::cudnn_convolution_transpose",
                                              "aten::prelu",
                                              "aten::addmm",
                                              "aten::addmv",
                                              "aten::addr",
                                              "aten::matmul",
                                              "aten::mm",
                                              "aten::mv",
                                              "aten::linear",
                                              "aten::addbmm",
                                              "aten::baddbmm",
                                              "aten::bmm",
                                              "aten::chain_matmul",
                                              "aten::linalg_multi_dot",
                                              "aten::_thnn_fused_lstm_cell",
                                              "aten::_thnn_fused_gru_cell",
                                              "aten::lstm_cell",
                                              "aten::gru_cell",
                                              "aten::rnn_tanh_cell",
                                              "aten::rnn_relu_cell",
                                              "aten::cudnn_convolution_transpose_backward",
                                              "aten::cudnn_convolution_backward_weight",
                                              "aten::addmm_",
                                              "aten::cudnn_convolution_transpose_backward_weight",
                                              "aten::cudnn_convolution_transpose_backward_input",
                                              "aten::cudnn_convolution_backward_input",
                                              "aten::cudnn_convolution_backward",
                                              "aten::convolution_backward"};
  static constexpr std::string_view kPrefixes[] = {"CudnnConvolutionBackward",
                                                   "BmmBackward",
                                                   "CudnnConvolutionTransposeBackward",
                                                   "MmBackward",
                                                   "AddmvBackward",
                                                   "MvBackward",
                                                   "AddmmBackward",
                                                   "AddbmmBackward",
                                                   "aten::_scaled_dot_product_",
                                                   "aten::scaled_dot_product_attention",
                                                   "aten::_flash_attention",
                                                   "aten::_efficient_attention"};
  if (std::find(std::begin(kOps), std::end(kOps), op) != std::end(kOps)) return true;
  return std::any_of(std::begin(kPrefixes), std::end(kPrefixes), [&](std::string_view p) { return StartsWith(op, p); });
}

bool IsTensorCoreKernel(std::string_view name) {
  // torch-tb-profiler's TC_Allowlist (after NVIDIA's PyProf): parts of the names of
  // cuBLAS and cuDNN kernels up to Ampere that use Tensor Cores.
  static constexpr std::string_view kTbParts[] = {"h884",
                                                  "s884",
                                                  "h1688",
                                                  "s1688",
                                                  "hmma",
                                                  "i8816",
                                                  "16816",
                                                  "dgrad_1x1_stride_2x2",
                                                  "first_layer_wgrad_kernel",
                                                  "conv1x1",
                                                  "conv2d_c1_k1",
                                                  "direct_group",
                                                  "xmma_implicit_gemm",
                                                  "xmma_sparse_conv",
                                                  "xmma_warp_specialized_implicit_gemm",
                                                  "xmma_gemm",
                                                  "xmma_sparse_gemm",
                                                  "c1688"};
  // Hopper and later, and the libraries the list predates: cuBLAS's nvjet GEMMs (H100
  // traces: "nvjet_sm90_tst_128x128_..."), cuDNN's sm90 xmma convolutions
  // ("sm90_xmma_fprop_implicit_gemm_f16f16..."), warpgroup MMA (wgmma, Hopper's Tensor Core
  // instruction), CUTLASS's tensorop kernels ("cutlass_80_tensorop_s16816gemm_..."),
  // FlashAttention's ("flash_fwd_kernel", "flash_bwd_..."), CUTLASS's fmha (PyTorch's
  // memory-efficient attention) in half precision, the warp matrix multiply-accumulate
  // API (wmma: nvcuda::wmma, as cuDNN's Ampere attention "sdpa_sm80_flash_fprop_wmma_f16"),
  // and cuDNN's fused flash attention ("cudnn_generated_fort_native_sdpa_sm90_flash_fprop_
  // wgmma_f16...", "..._flash_bprop_...").
  static constexpr std::string_view kLaterParts[] = {"nvjet",     "xmma", "wgmma", "tensorop",    "flash_fwd",
                                                     "flash_bwd", "fmha", "wmma",  "flash_fprop", "flash_bprop"};
  // xmma kernels that multiply with FP32 FMA ("..._ffma_...") run on the CUDA cores;
  // the list's "xmma_gemm" takes them for Tensor Core kernels (an FP32 GEMM on an H100
  // would read as all Tensor Cores).
  if (Contains(name, "ffma")) return false;
  // PyTorch's memory-efficient attention (CUTLASS fmha, "fmha_cutlassF_f32_aligned_64x64_
  // rf_sm80"): in float it runs on the Tensor Cores from compute capability 8.0 on
  // (OpClassTensorOp with OpMultiplyAddFastF32, 3xTF32: DefaultGemmType in
  // aten/src/ATen/native/transformers/cuda/mem_eff_attention/gemm_kernel_utils.h); its
  // float kernels for sm50, sm70 and sm75 are SIMT.
  if (Contains(name, "fmha") && Contains(name, "_f32_")) {
    return !(Contains(name, "_sm50") || Contains(name, "_sm70") || Contains(name, "_sm75"));
  }
  // AMD's matrix cores: Tensile's GEMMs name their MFMA instruction ("Cijk_..._MI16x16x1_...",
  // "MI32x32x2": the MatrixInstruction of Tensile's solution names), and kernels that say mfma.
  for (std::string_view p : {"_MI16x16", "_MI32x32", "_MI4x4", "mfma", "MFMA"}) {
    if (Contains(name, p)) return true;
  }
  auto in = [&](const auto& parts) {
    return std::any_of(std::begin(parts), std::end(parts), [&](std::string_view p) { return Contains(name, p); });
  };
  return in(kTbParts) || in(kLaterParts);
}

namespace {

// A matmul or convolution kernel by its name, where no operator says so (a graph's replay).
bool LooksLikeMatmul(std::string_view name) {
  for (std::string_view p : {"gemm", "GEMM", "conv", "Conv", "fprop", "dgrad", "wgrad", "matmul", "Cijk_"}) {
    if (Contains(name, p)) return true;
  }
  return false;
}

bool LowPrecisionName(std::string_view name) {
  for (std::string_view p : {"BFloat16", "bfloat16", "c10::Half", "__half", "float16", "bf16", "fp16", "f16", "hgemm",
                             "i8", "int8", "fp8", "e4m3", "e5m2"}) {
    if (Contains(name, p)) return true;
  }
  return false;
}

}  // namespace

bool IsFp32MatmulKernel(std::string_view kernel, std::string_view launching_op) {
  if (IsTensorCoreKernel(kernel) || LowPrecisionName(kernel)) return false;
  if (!launching_op.empty()) return IsTensorCoreEligible(launching_op) && LooksLikeMatmul(kernel);
  return LooksLikeMatmul(kernel);
}

uint32_t OperatorOf(const std::vector<std::pair<uint32_t, uint32_t>>& launchers, uint32_t e) {
  auto it = std::lower_bound(launchers.begin(), launchers.end(), std::make_pair(e, uint32_t{0}));
  return it != launchers.end() && it->first == e ? it->second : UINT32_MAX;
}

namespace {

constexpr uint32_t kNone = UINT32_MAX;

std::string OperatorName(const Trace& t, uint32_t op) {
  return op == kNone ? std::string("(no operator)") : std::string(t.strings.Get(op));
}

}  // namespace

std::vector<SyncRow> Synchronizations(const Events& ev, const std::vector<std::pair<uint32_t, uint32_t>>& launchers,
                                      const StepScope& scope) {
  std::map<std::pair<std::string_view, uint32_t>, SyncRow> by;
  for (const uint32_t e : ev.RuntimeEvents()) {
    if (!IsSyncCall(ev.Name(e))) continue;
    // The profiler's own synchronizations, when it starts and stops, fall outside the steps.
    if (AnalysedHostStep(ev, ev.Iv(e).lane, ev.Iv(e).start_ns, scope) < 0) continue;
    SyncRow& r = by[{ev.Name(e), OperatorOf(launchers, static_cast<uint32_t>(e))}];
    ++r.count;
    r.total_ns += ev.Dur(e);
  }
  std::vector<SyncRow> rows;
  for (auto& [key, r] : by) {
    r.call = std::string(key.first);
    r.op = OperatorName(ev.trace(), key.second);
    rows.push_back(std::move(r));
  }
  std::stable_sort(rows.begin(), rows.end(), [](const SyncRow& x, const SyncRow& y) {
    return std::tie(y.total_ns, x.call, x.op) < std::tie(x.total_ns, y.call, y.op);
  });
  return rows;
}

KernelOpsResult KernelsByOperator(const Events& ev, const std::vector<std::pair<uint32_t, uint32_t>>& launchers) {
  const TraceModel& m = ev.model();
  const Trace& t = ev.trace();
  // The launching operator's name id of device event e, or kNone.
  auto op_of = [&](size_t e) {
    const Launch* l = m.LaunchOf(static_cast<uint32_t>(e));
    return !l || l->host_event == Launch::kNoEvent ? kNone : OperatorOf(launchers, l->host_event);
  };
  // Whether each kernel name is a Tensor Core kernel, decided once per name: -1 not yet.
  std::vector<int8_t> tc_name(t.strings.size(), -1);
  std::map<std::pair<uint32_t, uint32_t>, KernelOpRow> rows;  // (operator, kernel name)
  std::map<uint32_t, TensorCoreOp> ops;
  KernelOpsResult out;
  for (const uint32_t e : ev.DeviceEvents()) {
    const Role role = ev.RoleOf(e);
    const uint32_t op = op_of(e);
    const int64_t dur = ev.Dur(e);
    int8_t& known = tc_name[ev.Iv(e).name];
    if (known < 0) known = IsTensorCoreKernel(ev.Name(e)) ? 1 : 0;
    const bool tc = role == Role::kKernel && known == 1;
    KernelOpRow& r = rows[{op, ev.Iv(e).name}];
    r.min_ns = r.calls == 0 ? dur : std::min(r.min_ns, dur);
    r.max_ns = std::max(r.max_ns, dur);
    ++r.calls;
    r.total_ns += dur;
    r.tensor_cores = tc;
    if (role != Role::kKernel) {
      const int64_t bytes = ev.CopyBytes(e);
      if (bytes >= 0) r.bytes = std::max<int64_t>(r.bytes, 0) + bytes;
      continue;
    }
    out.tensor_cores.kernel_ns += dur;
    TensorCoreOp& o = ops[op];
    o.kernel_ns += dur;
    if (tc) out.tensor_cores.tensor_core_ns += dur, o.tensor_core_ns += dur;
  }
  auto name = [&](uint32_t op) { return OperatorName(t, op); };
  for (auto& [key, r] : rows) {
    r.op = name(key.first);
    r.kernel = std::string(t.strings.Get(key.second));
    out.rows.push_back(std::move(r));
  }
  std::stable_sort(out.rows.begin(), out.rows.end(), [](const KernelOpRow& x, const KernelOpRow& y) {
    return std::tie(y.total_ns, x.op, x.kernel) < std::tie(x.total_ns, y.op, y.kernel);
  });
  for (auto& [op, o] : ops) {
    o.op = name(op);
    o.eligible = op != kNone && IsTensorCoreEligible(o.op);
    out.tensor_cores.ops.push_back(std::move(o));
  }
  std::stable_sort(out.tensor_cores.ops.begin(), out.tensor_cores.ops.end(),
                   [](const TensorCoreOp& x, const TensorCoreOp& y) {
                     return std::tie(y.kernel_ns, x.op) < std::tie(x.kernel_ns, y.op);
                   });
  return out;
}

}  // namespace torch2pprof::analysis
