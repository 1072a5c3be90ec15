// kineto-rocm: a drop-in for kineto's ROCm activity API.
//
// Same shape as kineto's RocprofActivityApi (libkineto/src/RocprofActivityApi.h),
// the object kineto's RocmActivityProfiler drives: a singleton, static
// push/popCorrelationID, enable/disable/clear/flushActivities over a
// std::set<ActivityType>, teardownContext, setMaxEvents and a
// processActivities(row handler, correlation handler). Collection, graph
// attribution and verification happen in the Rust core (reached through the
// cxx bridge in src/bridge.rs); this class only turns finished windows into
// kineto activities.
//
// Rows are libkineto::GenericTraceActivity objects that already carry kineto's
// category (kernel / gpu_memcpy / cuda_runtime), ROCm metadata keys (device,
// stream, hsa_queue, correlation, kind, grid, block, bytes, ...) and, for
// kernels and copies the verifier vouched for, "graph id" / "graph node id"
// as bare unsigned integers. Timestamps are system_clock nanoseconds, the
// clock kineto stamps CPU ops with.
//
// Nothing here throws: a failure (a C++ exception, or a panic the core
// turned into an internal error) is logged as one line and the call does
// nothing.
//
// Include with the kineto headers of the torch you load on the include path
// and KINETO_NAMESPACE=libkineto, FMT_HEADER_ONLY defined (the exported CMake
// target kineto-rocm::kineto sets both).
#pragma once

#include <ActivityType.h>
#include <GenericTraceActivity.h>
#include <IActivityProfiler.h>
#include <output_base.h>

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <vector>

// Symbols the face exports (the library is built with hidden visibility).
#ifndef KINETO_ROCM_API
#define KINETO_ROCM_API __attribute__((visibility("default")))
#endif

namespace kineto_rocm {

// A GPU lane as the trace names it (from the Rust side's DeviceLane list).
struct DeviceLaneInfo {
  int32_t device = 0;
  std::string name;
};

// One lane (kineto resource) of a GPU seen in the processed windows: a
// stream ("stream N", id = stream), a stream-less kernel's HSA queue ("HW
// queue 0x..."), or a device's stream-less copies ("copies").
struct StreamLaneInfo {
  int32_t device = 0;
  int32_t id = 0;
  std::string name;
};

class KINETO_ROCM_API RocmActivityApi {
 public:
  enum CorrelationFlowType { Default, User };

  using RowHandler = std::function<void(const libkineto::GenericTraceActivity&)>;
  // (correlation id, external id, domain): kineto's correlation handler shape.
  using CorrelationHandler =
      std::function<void(uint64_t, uint64_t, CorrelationFlowType)>;

  RocmActivityApi();
  RocmActivityApi(const RocmActivityApi&) = delete;
  RocmActivityApi& operator=(const RocmActivityApi&) = delete;
  virtual ~RocmActivityApi();

  static RocmActivityApi& singleton();

  // What kineto (and PyTorch through it) pushes per CPU op / user annotation.
  static void pushCorrelationID(uint64_t id, CorrelationFlowType type);
  static void popCorrelationID(CorrelationFlowType type);

  // False when the process has no rocprofiler-sdk (or it refused us);
  // unavailableReason() then says why, in one line.
  virtual bool isAvailable() const;
  std::string unavailableReason() const;

  // Starts collection for the selected types (the first enable of a trace
  // starts the Rust session). Returns false when nothing will be collected.
  bool enableActivities(const std::set<libkineto::ActivityType>& selected);
  // Stops collection; what is in flight still lands in this window.
  void disableActivities(const std::set<libkineto::ActivityType>& selected);
  // Waits (bounded, Rust side) for stopped windows and takes them over.
  void flushActivities();
  // Drops everything collected and not processed (also in the Rust core).
  void clearActivities();
  // Counts these hardware counters (comma-separated SDK names) on every
  // dispatch from now on; kernels then carry their values. Returns the
  // error line, empty on success.
  std::string requestCounters(const std::string& names);
  // Stops counting; values already counted stay.
  void releaseCounters();
  // Stops collection if still running; keeps the SDK context for reuse.
  void teardownContext();
  // Extra nanoseconds added to every converted timestamp; the SDK ->
  // system_clock offset itself comes per window.
  void setTimeOffset(int64_t offsetNs);
  void setMaxEvents(uint32_t maxEvents);
  void setMaxBufferSize(int64_t /*size*/) {}

  // kineto's shape: every row that passes the activity mask, then every
  // (correlation, external id, domain) pair. Returns the number of rows.
  int processActivities(RowHandler handler, CorrelationHandler correlationHandler);

  // Straight into a kineto logger: rows linked to CPU ops via getLinked
  // ("External id" and ac2g flows), GPU user-annotation spans; records that
  // ended before startTime are dropped (0/0: keep all; work launched in the
  // trace and run after endTime stays). Returns the number logged.
  int processActivities(
      libkineto::ActivityLogger& logger,
      const libkineto::getLinkedActivityCallback& getLinked,
      int64_t startTime,
      int64_t endTime);

  // From the windows processed last: GPU processes and their lanes.
  std::vector<DeviceLaneInfo> deviceLanes() const;
  std::vector<StreamLaneInfo> streamLanes() const;
  // `key=value` summary lines of the windows (attribution counts,
  // completeness, drops) plus the face's own counters.
  std::vector<std::string> summary() const;

  // Never set: collection does not stop early (records beyond setMaxEvents
  // are dropped and counted in the trace metadata). kineto reads it as
  // "stopped early".
  std::atomic_bool stopCollection{false};

 private:
  struct State;
  std::unique_ptr<State> s_;
  mutable std::mutex mutex_;
};

// Logs `kineto-rocm: collecting nothing: <reason>` to stderr, once per
// process whatever the number of callers.
KINETO_ROCM_API void logUnavailableOnce(const std::string& reason);

} // namespace kineto_rocm
