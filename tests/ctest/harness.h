// Test harness: the simulator (loaded with dlopen RTLD_GLOBAL, driven through
// its rocsim_* C ABI), CPU ops made from the workload's markers, and a kineto
// trace written by kineto's own ChromeTraceLogger and read back.
#pragma once

#include <libkineto.h>

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <cstdint>
#include <functional>
#include <set>
#include <string>
#include <vector>

namespace kr_test {

using json = nlohmann::json;

// ---- simulator ------------------------------------------------------------

// Loads librocprofiler_sim.so (path from KINETO_ROCM_SIM_LIB, else the
// compiled-in default) unless KINETO_ROCM_TEST_NO_SIM=1. Called from main()
// before anything touches the tool library.
void loadSimulatorUnlessDisabled();
bool simLoaded();
const std::string& simLoadError();

// Runs a workload file; returns "" or the simulator's error.
std::string runWorkload(const std::string& path, const std::string& options = "");
// rocsim_wait_idle: every completion delivered and buffer flushed.
bool waitIdle(uint64_t timeoutNs = 10'000'000'000ull);
json groundTruth();

// What run `run` of the ground truth shows on the device, as the trace
// shows it with attribution on (every blit kernel's call proven): kernels
// (blit kernels excluded), copies (SDMA copies, and the `copyBlits` copies
// run as blit kernels, all gpu_memcpy) and memsets (fill blit kernels,
// gpu_memset). Under the default rocm submission model a copy of at most
// 16 KiB or between device buffers runs as a blit kernel.
struct TruthCounts {
  size_t kernels = 0;
  size_t copyBlits = 0;
  size_t copies = 0;
  size_t memsets = 0;
};
TruthCounts truthCounts(const json& truth, size_t run);

// Under ctest (which sets KINETO_ROCM_CTEST=1 and the environment each test
// needs, tests/ctest/CMakeLists.txt).
bool underCtest();

// Path of a workload: tests/workloads/ctest/<name> (this suite's own) if
// there, else the shared tests/workloads/<name> (graph-32x200.json).
std::string workload(const std::string& name);

// ---- CPU ops from markers ---------------------------------------------------

// A marker PUSH becomes a CPU op: kineto's pushCorrelationId(id) (or, for a
// name starting with "user:", pushUserCorrelationId(id)) on the workload
// thread, as PyTorch does per op; POP pops it and records the op.
struct CpuOp {
  std::string name;
  int32_t id = 0;
  bool user = false;
  int64_t start = 0;
  int64_t end = 0;
  int32_t tid = 0;
};
void installMarkerHook();
// Without a kineto session (RocmActivityApi tests): the hook pushes through
// kineto_rocm::RocmActivityApi::push/popCorrelationID instead of kineto.
void markersPushThroughApi(bool on);
std::vector<CpuOp> takeCpuOps();

// ---- kineto -------------------------------------------------------------------

// Once, as PyTorch's prepareTrace: libkineto_init(cpuOnly) unless kineto is
// already registered, then initProfilerIfRegistered.
void initKineto();
bool registerChild(); // kineto_rocm_register_kineto_profiler() == 0

struct TraceOptions {
  std::vector<std::string> workloads;
  bool waitIdleBeforeStop = true;
  std::string runOptions;
  // The activity types and config text prepareTrace gets (PyTorch's, for
  // its experimental metrics config); empty: every GPU type, no config.
  std::set<libkineto::ActivityType> types;
  std::string config;
};

struct Trace {
  std::string path;
  std::string text; // the file kineto wrote
  json doc;
  int64_t baseNs = 0;
  std::vector<CpuOp> cpuOps;
  std::vector<std::string> workloadErrors;

  std::vector<const json*> events(const std::string& cat) const;
  std::vector<const json*> eventsNamed(const std::string& name) const;
  // Absolute system_clock ns of an event's ts (baseTimeNanoseconds + ts).
  int64_t tsNs(const json& ev) const;
};

// prepareTrace/startTrace, the workloads, CPU ops handed over like PyTorch
// does (transferCpuTrace), stopTrace, save(path), read back. The ground truth
// so far is written beside it (<testName>.truth.json).
Trace traceWorkloads(const std::string& testName, const TraceOptions& opt);

// Captures everything written to fd 2 while `f` runs.
std::string captureStderr(const std::function<void()>& f);

} // namespace kr_test

// A test that needs a setting ctest gives it: run by hand without it, the
// test skips; under ctest a missing setting is a broken suite and fails.
#define KR_REQUIRE_SETTING(present, what)                                     \
  do {                                                                        \
    if (!(present)) {                                                         \
      if (kr_test::underCtest()) {                                            \
        GTEST_FAIL() << "ctest did not give this test " << (what);            \
      }                                                                       \
      GTEST_SKIP() << "needs " << (what) << " (ctest sets it)";               \
    }                                                                         \
  } while (0)
