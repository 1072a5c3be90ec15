// kineto-rocm as a kineto child profiler (libkineto::IActivityProfiler).
//
// Unmodified PyTorch picks it up once registered:
//
//   import ctypes
//   ctypes.CDLL("libkineto_rocm_kineto.so", mode=ctypes.RTLD_GLOBAL).kineto_rocm_register_kineto_profiler()
//
// or from C/C++: kineto_rocm_register_kineto_profiler() (include/kineto_rocm.h)
// or kineto_rocm::registerKinetoProfiler(). Registering before or after
// libkineto_init works; the profiler joins from the next prepareTrace.
#pragma once

#include "kineto_rocm/RocmActivityApi.h"

#include <ActivityTraceInterface.h>
#include <IActivityProfiler.h>

#include <memory>
#include <set>
#include <string>
#include <unordered_map>
#include <vector>

namespace kineto_rocm {

class KINETO_ROCM_API RocmChildSession : public libkineto::IActivityProfilerSession {
 public:
  // `counters`: hardware counters to count for this trace (comma-separated
  // SDK names, from PyTorch's metrics config), or empty.
  RocmChildSession(std::set<libkineto::ActivityType> types, std::string counters);
  ~RocmChildSession() override;

  void start() override;
  void stop() override;
  std::vector<std::string> errors() override;
  void processTrace(libkineto::ActivityLogger& logger) override;
  void processTrace(
      libkineto::ActivityLogger& logger,
      libkineto::getLinkedActivityCallback getLinkedActivity,
      int64_t startTime,
      int64_t endTime) override;
  std::unique_ptr<libkineto::DeviceInfo> getDeviceInfo() override;
  std::vector<libkineto::ResourceInfo> getResourceInfos() override;
  std::unique_ptr<libkineto::CpuTraceBuffer> getTraceBuffer() override;
  void pushCorrelationId(uint64_t id) override;
  void popCorrelationId() override;
  void pushUserCorrelationId(uint64_t id) override;
  void popUserCorrelationId() override;
  std::unordered_map<std::string, std::string> getMetadata() override;

 private:
  std::set<libkineto::ActivityType> types_;
  std::string counters_;
  bool counting_ = false;
  std::vector<std::string> errors_;
  bool collecting_ = false;
  bool stopped_ = false;
  std::string unavailable_;
  std::vector<DeviceLaneInfo> devices_;
  std::vector<StreamLaneInfo> streams_;
  std::vector<std::string> summary_;
  int logged_ = 0;
};

class KINETO_ROCM_API RocmChildProfiler : public libkineto::IActivityProfiler {
 public:
  RocmChildProfiler();

  const std::string& name() const override;
  const std::set<libkineto::ActivityType>& availableActivities() const override;
  std::unique_ptr<libkineto::IActivityProfilerSession> configure(
      const std::set<libkineto::ActivityType>& activityTypes,
      const libkineto::Config& config) override;
  std::unique_ptr<libkineto::IActivityProfilerSession> configure(
      int64_t tsMs,
      int64_t durationMs,
      const std::set<libkineto::ActivityType>& activityTypes,
      const libkineto::Config& config) override;

 private:
  std::string name_;
  std::set<libkineto::ActivityType> available_;
};

// Registers the child profiler factory with libkineto::api() once per
// process; later calls do nothing. Returns false if kineto threw.
KINETO_ROCM_API bool registerKinetoProfiler();

enum class RegistrationResult { Registered, Refused, Failed };

// kineto-rocm as the only GPU collector (kineto_rocm_register_exclusive()):
// kineto not initialised yet -> libkineto_init(cpuOnly=true) (kineto's
// built-in GPU tracer stays off for the process; PyTorch then skips its own
// libkineto_init) and the child profiler is registered. kineto already
// initialised by someone else -> Refused, one line written saying what to
// do, nothing registered (kineto does not say whether that initialisation
// was CPU-only, so it is taken as GPU tracing on).
KINETO_ROCM_API RegistrationResult registerExclusive();

// GPU activities (kernels, copies, memsets) of a finished trace, by
// producer. `foreign` > 0: another backend collected in the same trace;
// `message` is then the one line written to the log.
struct SoleCollectorReport {
  uint64_t ours = 0;
  uint64_t foreign = 0;
  std::string message;
};
KINETO_ROCM_API SoleCollectorReport checkSoleCollector(
    libkineto::ActivityTraceInterface& trace);

} // namespace kineto_rocm
