// Bridge records (src/bridge.rs) -> libkineto::GenericTraceActivity.
//
// Internal to the C++ face. Categories follow kineto's ROCm backend: kernels
// are CONCURRENT_KERNEL ("kernel"), copies GPU_MEMCPY ("gpu_memcpy"), HIP API
// calls CUDA_RUNTIME ("cuda_runtime"). Keys, value types and fixed strings
// come from the core's one vocabulary (Vocabulary.h), the same our JSON
// writer uses.
#pragma once

#include "kineto-rocm/src/bridge.rs.h"

#include <ActivityType.h>
#include <GenericTraceActivity.h>
#include <IActivityProfiler.h>
#include <output_base.h>

#include <cstdint>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <tuple>
#include <vector>

namespace kineto_rocm {
struct DeviceLaneInfo;
struct StreamLaneInfo;
} // namespace kineto_rocm

namespace kineto_rocm::convert {

// Kernel, Copy (memsets and blit copies included) and Runtime rows link to
// CPU ops; Other rows (syncs, events, host functions, annotations,
// dependency carriers, overhead) carry what they need themselves.
enum class Kind { Kernel, Copy, Runtime, Other };

struct Options {
  std::set<libkineto::ActivityType> mask;
  int64_t extraOffsetNs = 0;
  // Capture window in kineto's clock (kineto leaves filtering to child
  // profilers): records that ended before windowStart are dropped; later
  // ones are kept (device work belongs to its launch's window). 0/0 keeps
  // everything.
  int64_t windowStart = 0;
  int64_t windowEnd = 0;
};

struct Row {
  Kind kind = Kind::Kernel;
  std::unique_ptr<libkineto::GenericTraceActivity> act;
  // False: the launching call is unknown (no link, no user span).
  bool hasCorrelation = true;
  uint64_t correlation = 0;
  bool hasExternal = false;
  uint64_t external = 0;
  bool hasUser = false;
  uint64_t user = 0;
};

// GPU processes and their lanes seen while converting: one per stream
// (id = stream), per stream-less kernel's HSA queue (dense ids from the
// vocabulary's queue_lane_base, per device), and one for a device's
// stream-less copies. Ids stay stable across the windows of one trace.
class Lanes {
 public:
  void addDevice(uint32_t device, const std::string& name);
  int32_t stream(int32_t device, uint64_t stream);
  int32_t queue(int32_t device, uint64_t queue);
  int32_t copies(int32_t device);
  // A graph replay's branch lane of `stream` for HSA queue `queue`.
  int32_t branch(int32_t device, uint64_t stream, uint64_t queue);
  // A device's lane for syncs that wait on the whole device.
  int32_t syncs(int32_t device);
  // The backend's overhead lane in the CPU process `pid`.
  int32_t overhead(int32_t pid);
  std::vector<DeviceLaneInfo> devices() const;
  std::vector<StreamLaneInfo> lanes() const;

 private:
  std::map<int32_t, std::string> devices_;
  std::map<std::pair<int32_t, int32_t>, std::string> lanes_;
  std::map<std::pair<int32_t, uint64_t>, int32_t> queueIds_;
  std::map<int32_t, int32_t> queuesPerDevice_;
  std::map<std::tuple<int32_t, uint64_t, uint64_t>, int32_t> branchIds_;
  std::map<int32_t, int32_t> branchesPerDevice_;
  // CPU-side lanes (named, but not GPU processes).
  std::set<int32_t> cpuPids_;
};

// kineto's GPU user-annotation spans: one per (device, stream, annotation),
// covering every GPU activity the annotation launched there.
class UserSpans {
 public:
  void insertOrExtend(
      const libkineto::ITraceActivity& user,
      const libkineto::GenericTraceActivity& gpu);
  int log(libkineto::ActivityLogger& logger) const;

 private:
  std::map<std::tuple<int32_t, int32_t, int64_t>, libkineto::GenericTraceActivity>
      spans_;
};

// True when the set asks for anything this backend produces.
bool anyCollected(const std::set<libkineto::ActivityType>& types);

// A span that outlives every trace: GenericTraceActivity keeps a pointer to
// it and kineto copies our activities into traces saved after our session is
// gone.
const libkineto::TraceSpan& traceSpan();

// Converts one window. `dropped` counts records outside the capture window.
std::vector<Row> buildRows(
    const WindowActivities& window,
    const Options& opt,
    Lanes& lanes,
    uint64_t* dropped = nullptr);

// ac2g flow id for a correlation id: never 0, kept clear of the low ids
// CUPTI's own flows use when both backends write into one trace.
uint32_t flowIdFor(uint64_t correlation);

// JSON string escaping for values written with addMetadataQuoted (kineto
// writes them verbatim between quotes).
std::string jsonEscape(const std::string& s);

} // namespace kineto_rocm::convert
