// The words results and stages share about a trace: what an event is (its role, from its
// category) and a device as the trace's header describes it.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace torch2pprof {

// What an event is, from its category (case-insensitive; old and new spellings).
enum class Role {
  kOther,             // any other category
  kOperator,          // cpu_op, Operator, python; and events without a category (torch 1.13's exporter)
  kRuntime,           // cuda_runtime, Runtime, mtia_runtime, ..., and cuda_driver
  kKernel,            // kernel; MTIA's mtia_ccp_events, its device work
  kMemcpy,            // gpu_memcpy, Memcpy
  kMemset,            // gpu_memset, Memset
  kUserAnnotation,    // user_annotation (host side)
  kDeviceAnnotation,  // gpu_user_annotation: marks device time; never a step, an operator or work
  kPythonFunction,    // python_function
  kTrace,             // Trace: the profiler's own span (skipped by the loader)
};
// The one rule: the loader (what an event's link holds, the Python repair) and the model
// (everything else) both ask it.
Role RoleOfCategory(std::string_view category);
const char* RoleName(Role role);
// Device-side work: kernels, memcpy, memset (MTIA's device events count as kernels).
inline bool IsDeviceRole(Role r) { return r == Role::kKernel || r == Role::kMemcpy || r == Role::kMemset; }

// One entry of the header's deviceProperties; -1 / "" where absent or of a wrong type.
struct DeviceInfo {
  int64_t id = -1;
  std::string device;  // "cuda:0"
  std::string name;
  int64_t total_memory = -1;  // bytes; -1 unknown
  int64_t sms = -1;           // streaming multiprocessors
  std::string compute;        // "8.0"
};

}  // namespace torch2pprof
