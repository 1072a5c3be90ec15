// kineto-rocm's drop-in for kineto's libkineto/src/RocprofActivityApi.h:
// the same class (libkineto::RocprofActivityApi), the same public interface,
// virtual where kineto's is, driven unmodified by kineto's
// RocmActivityProfiler. Collection, graph attribution and verification run
// in kineto-rocm's Rust core (through the cxx bridge); this class hands
// kineto its rows.
//
// What kineto relies on, and this class keeps:
// - processActivities delivers every (correlation id, CPU op id) pair
//   before any row, because kineto links a row to its CPU op when it handles
//   the row; then the HIP runtime rows, then the GPU rows (kineto's CPU/GPU
//   order check compares each GPU row with the first row it saw under the
//   same correlation id, so the launch call must come first).
// - Rows are kineto's row types (RocLogger.h). kineto's GpuActivity and
//   RuntimeActivity keep a reference to their row inside every trace built
//   from it, and nothing tells the backend when the last such trace is
//   gone, so delivered rows live for the process, as kineto's own do (its
//   clearLogs drops the pointers without freeing them).
// - stopCollection is never set: collection does not stop early (records
//   beyond setMaxEvents are dropped and counted by the core).
//
// What a row of ours carries beyond kineto's row types (graph id and node
// id, dispatch id, the real stream, whether the launching call is known,
// hardware counters) is read by kineto-rocm's RocprofActivity_inl.h through
// rowInfo().
// - Counters from PyTorch's experimental config: kineto hands its config to
//   child profilers only, so the constructor registers one
//   ("kineto-rocm counters") that reads CUPTI_PROFILER_METRICS and asks the
//   core for that group for the trace. With CUDA_PROFILER_RANGE asked for
//   (what torch.profiler asks when profiler_metrics is set), each counted
//   kernel is a row with its counters as args, even when kernels were not
//   asked for.
#pragma once
#ifdef HAS_ROCTRACER

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "RocprofLogger.h"

#include "ActivityType.h"
#include "GenericTraceActivity.h"

namespace KINETO_NAMESPACE {

using namespace libkineto;

// What kineto-rocm knows about one of its rows beyond kineto's row types.
struct KinetoRocmRowInfo {
  enum class Kind { Kernel, Copy, Runtime };
  Kind kind = Kind::Kernel;
  // False: the launching call is unknown; the row's id is negative to
  // kineto (no flow, no CPU link) and it carries no "correlation" arg.
  bool hasCorrelation = true;
  uint64_t correlation = 0;
  // False: the stream is unknown; kineto puts the row on its HSA queue's
  // lane and it carries no "stream" arg.
  bool hasStream = true;
  uint64_t stream = 0;
  uint64_t dispatchId = 0;
  uint32_t grid[3] = {0, 0, 0};
  uint32_t block[3] = {0, 0, 0};
  uint64_t sharedMemory = 0;
  uint64_t scratchMemory = 0;
  bool hasGraph = false;
  uint64_t graphId = 0;
  uint64_t graphNodeId = 0;
  // Copies.
  uint8_t copyDirection = 0;
  uint64_t bytes = 0;
  int64_t srcDevice = -1;
  int64_t dstDevice = -1;
  // Runtime rows: the work the call launched in this trace.
  bool launchedGpuWork = false;
  // A runtime call that launched exactly one kernel: its name.
  std::string launchedKernel;
  // Kernels: hardware counters (SDK name, value), when a group was counted.
  std::vector<std::pair<std::string, double>> counters;
};

class RocprofActivityApi {
 public:
  enum CorrelationFlowType { Default, User };

  RocprofActivityApi();
  RocprofActivityApi(const RocprofActivityApi&) = delete;
  RocprofActivityApi& operator=(const RocprofActivityApi&) = delete;

  virtual ~RocprofActivityApi();

  static RocprofActivityApi& singleton();

  static void pushCorrelationID(int id, CorrelationFlowType type);
  static void popCorrelationID(CorrelationFlowType type);

  void enableActivities(const std::set<ActivityType>& selected_activities);
  void disableActivities(const std::set<ActivityType>& selected_activities);
  // Waits (bounded, in the core) for stopped windows to complete.
  void flushActivities();
  // Drops what was collected and not yet delivered; delivered rows stay.
  void clearActivities();
  // kineto calls this on every reset; the SDK context lives for the process.
  void teardownContext() {}
  // Added to every timestamp, read as a signed offset (kineto passes
  // timestamp_t; a negative offset arrives as its two's complement).
  void setTimeOffset(timestamp_t toffset);
  void setMaxEvents(uint32_t maxEvents);

  virtual int processActivities(
      std::function<void(const rocprofBase*)> handler,
      std::function<void(uint64_t, uint64_t, RocLogger::CorrelationDomain)>
          correlationHandler);

  void setMaxBufferSize(int64_t size);

  std::atomic_bool stopCollection{false};

  // kineto-rocm: what one of our rows carries beyond kineto's row types;
  // nullptr for rows kineto-rocm did not make (kineto's test builds its own).
  static const KinetoRocmRowInfo* rowInfo(const rocprofBase* row);

 private:
  struct State;
  std::unique_ptr<State> s_;
  std::mutex mutex_;
};

} // namespace KINETO_NAMESPACE
#endif
