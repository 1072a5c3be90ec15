#include "kineto_rocm/RocmChildProfiler.h"

#include "ActivityConvert.h"
#include "FaceGuard.h"
#include "KinetoCompat.h"
#include "MetricsConfig.h"
#pragma GCC visibility push(default)
#include "kineto_rocm.h"
#pragma GCC visibility pop

#include <libkineto.h>

#include <ActivityTraceInterface.h>

#include <atomic>
#include <exception>
#include <mutex>
#include <string>

namespace kineto_rocm {

using libkineto::ActivityType;

namespace {

// How kineto was initialised, as far as kineto-rocm knows: only
// kineto_rocm_register_exclusive() can say its built-in GPU tracer is off
// (kineto does not expose its cpuOnly flag).
std::atomic<bool> gKinetoCpuOnlyByUs{false};

const char* kSoleCollectorYes =
    "yes: kineto-rocm initialised kineto CPU-only (kineto_rocm_register_exclusive), so kineto's built-in GPU tracer is off";
const char* kSoleCollectorUnverified =
    "unverified: kineto was initialised by its host, and a ROCm PyTorch does so with kineto's built-in GPU tracer on (GPU work then appears twice); call kineto_rocm_register_exclusive() before the first profile";

std::string soleCollectorStatus() {
  return gKinetoCpuOnlyByUs ? kSoleCollectorYes : kSoleCollectorUnverified;
}

bool isNumber(const std::string& v) {
  if (v.empty()) {
    return false;
  }
  size_t i = (v[0] == '-') ? 1 : 0;
  bool digits = false;
  bool dot = false;
  for (; i < v.size(); ++i) {
    if (v[i] >= '0' && v[i] <= '9') {
      digits = true;
    } else if (v[i] == '.' && !dot) {
      dot = true;
    } else {
      return false;
    }
  }
  return digits;
}

// `key=value` lines -> one JSON object (kineto writes metadata values raw).
// Lines without `=` are collected, in order, under "notes".
std::string summaryJson(const std::vector<std::string>& lines) {
  std::string out = "{";
  std::vector<std::string> notes;
  bool first = true;
  for (const auto& line : lines) {
    auto eq = line.find('=');
    if (eq == std::string::npos || eq == 0) {
      notes.push_back(line);
      continue;
    }
    std::string key = line.substr(0, eq);
    std::string value = line.substr(eq + 1);
    if (!first) {
      out += ", ";
    }
    first = false;
    out += "\"" + convert::jsonEscape(key) + "\": ";
    out += isNumber(value) ? value : "\"" + convert::jsonEscape(value) + "\"";
  }
  if (!notes.empty()) {
    out += first ? "" : ", ";
    out += "\"notes\": [";
    for (size_t i = 0; i < notes.size(); ++i) {
      out += (i ? ", \"" : "\"") + convert::jsonEscape(notes[i]) + "\"";
    }
    out += "]";
  }
  out += "}";
  return out;
}

} // namespace

RocmChildSession::RocmChildSession(std::set<ActivityType> types, std::string counters)
    : types_(std::move(types)), counters_(std::move(counters)) {}

RocmChildSession::~RocmChildSession() {
  guard("~RocmChildSession", [&] {
    if (counting_) {
      RocmActivityApi::singleton().releaseCounters();
    }
    if (collecting_ && !stopped_) {
      RocmActivityApi::singleton().disableActivities(types_);
    }
  });
}

void RocmChildSession::start() {
  guard("start", [&] {
    auto& api = RocmActivityApi::singleton();
    api.clearActivities();
    if (!counters_.empty() && types_.count(ActivityType::CUDA_PROFILER_RANGE) > 0) {
      std::string error = api.requestCounters(counters_);
      if (error.empty()) {
        counting_ = true;
      } else {
        errors_.push_back("kineto-rocm: counters " + counters_ + ": " + error);
        logLine(errors_.back());
      }
    }
    collecting_ = api.enableActivities(types_);
    if (!collecting_) {
      // Asked after the attempt: an SDK that initialised without us is only
      // found out when collection is asked for.
      unavailable_ = api.unavailableReason();
      if (unavailable_.empty()) {
        unavailable_ = "collection did not start (see the log)";
      }
    } else if (!gKinetoCpuOnlyByUs) {
      static std::atomic<bool> logged{false};
      if (!logged.exchange(true)) {
        logLine(std::string("kineto-rocm: sole GPU collector ") + kSoleCollectorUnverified);
      }
    }
    status_ = libkineto::TraceStatus::RECORDING;
  });
}

void RocmChildSession::stop() {
  guard("stop", [&] {
    auto& api = RocmActivityApi::singleton();
    if (counting_) {
      api.releaseCounters();
      counting_ = false;
    }
    if (collecting_ && !stopped_) {
      api.disableActivities(types_);
      // kineto asks for getMetadata() before processTrace(): take the
      // finished windows now (a bounded wait in the core) so the trace
      // metadata can say what was collected, attributed and withheld.
      api.flushActivities();
      summary_ = api.summary();
    }
    stopped_ = true;
    status_ = libkineto::TraceStatus::PROCESSING;
  });
}

std::vector<std::string> RocmChildSession::errors() {
  return errors_;
}

void RocmChildSession::processTrace(libkineto::ActivityLogger& logger) {
  processTrace(logger, libkineto::getLinkedActivityCallback(), 0, 0);
}

void RocmChildSession::processTrace(
    libkineto::ActivityLogger& logger,
    libkineto::getLinkedActivityCallback getLinkedActivity,
    int64_t startTime,
    int64_t endTime) {
  guard("processTrace", [&] {
    if (!collecting_) {
      return;
    }
    auto& api = RocmActivityApi::singleton();
    logged_ = api.processActivities(logger, getLinkedActivity, startTime, endTime);
    devices_ = api.deviceLanes();
    streams_ = api.streamLanes();
    // kineto names one GPU process per session (getDeviceInfo); the others
    // are named here, at the capture start like kineto's own.
    for (size_t i = 1; i < devices_.size(); ++i) {
      auto info = compat::makeDeviceInfo(
          devices_[i].device,
          devices_[i].device + libkineto::kExceedMaxPid,
          devices_[i].name,
          "GPU " + std::to_string(devices_[i].device));
      logger.handleDeviceInfo(*info, static_cast<uint64_t>(startTime));
    }
    // The windows are in the trace now; free them.
    api.clearActivities();
  });
}

std::unique_ptr<libkineto::DeviceInfo> RocmChildSession::getDeviceInfo() {
  std::unique_ptr<libkineto::DeviceInfo> out;
  guard("getDeviceInfo", [&] {
    if (devices_.empty()) {
      return;
    }
    const auto& d = devices_.front();
    out = compat::makeDeviceInfo(
        d.device,
        d.device + libkineto::kExceedMaxPid,
        d.name,
        "GPU " + std::to_string(d.device));
  });
  return out;
}

std::vector<libkineto::ResourceInfo> RocmChildSession::getResourceInfos() {
  std::vector<libkineto::ResourceInfo> out;
  guard("getResourceInfos", [&] {
    for (const auto& lane : streams_) {
      out.push_back(compat::makeResourceInfo(lane.device, lane.id, lane.id, lane.name));
    }
  });
  return out;
}

std::unique_ptr<libkineto::CpuTraceBuffer> RocmChildSession::getTraceBuffer() {
  // Activities were copied into kineto's logger in processTrace.
  return nullptr;
}

void RocmChildSession::pushCorrelationId(uint64_t id) {
  RocmActivityApi::pushCorrelationID(id, RocmActivityApi::Default);
}

void RocmChildSession::popCorrelationId() {
  RocmActivityApi::popCorrelationID(RocmActivityApi::Default);
}

void RocmChildSession::pushUserCorrelationId(uint64_t id) {
  RocmActivityApi::pushCorrelationID(id, RocmActivityApi::User);
}

void RocmChildSession::popUserCorrelationId() {
  RocmActivityApi::popCorrelationID(RocmActivityApi::User);
}

std::unordered_map<std::string, std::string> RocmChildSession::getMetadata() {
  std::unordered_map<std::string, std::string> out;
  guard("getMetadata", [&] {
    std::vector<std::string> lines;
    if (!unavailable_.empty()) {
      lines.push_back("status=collecting nothing: " + unavailable_);
    } else {
      lines.push_back("status=collected");
      lines.push_back("sole_collector=" + soleCollectorStatus());
    }
    lines.insert(lines.end(), summary_.begin(), summary_.end());
    out.emplace("kineto_rocm", summaryJson(lines));
  });
  return out;
}

RocmChildProfiler::RocmChildProfiler()
    : name_("kineto-rocm"),
      available_{
          ActivityType::CONCURRENT_KERNEL,
          ActivityType::GPU_MEMCPY,
          ActivityType::GPU_MEMSET,
          ActivityType::CUDA_RUNTIME,
          ActivityType::GPU_USER_ANNOTATION,
          ActivityType::USER_ANNOTATION,
          ActivityType::CUDA_SYNC,
          ActivityType::CUDA_EVENT,
          ActivityType::OVERHEAD,
          ActivityType::CUDA_PROFILER_RANGE} {}

const std::string& RocmChildProfiler::name() const {
  return name_;
}

const std::set<ActivityType>& RocmChildProfiler::availableActivities() const {
  return available_;
}

std::unique_ptr<libkineto::IActivityProfilerSession> RocmChildProfiler::configure(
    const std::set<ActivityType>& activityTypes,
    const libkineto::Config& config) {
  std::unique_ptr<libkineto::IActivityProfilerSession> out;
  guard("configure", [&] {
    if (!convert::anyCollected(activityTypes)) {
      return; // sit this trace out
    }
    std::set<ActivityType> mine;
    for (auto t : activityTypes) {
      if (available_.count(t)) {
        mine.insert(t);
      }
    }
    std::string why = RocmActivityApi::singleton().unavailableReason();
    if (!why.empty()) {
      logUnavailableOnce(why);
    }
    out = std::make_unique<RocmChildSession>(std::move(mine), countersAskedFor(config.source()));
  });
  return out;
}

std::unique_ptr<libkineto::IActivityProfilerSession> RocmChildProfiler::configure(
    int64_t /*tsMs*/,
    int64_t /*durationMs*/,
    const std::set<ActivityType>& activityTypes,
    const libkineto::Config& config) {
  return configure(activityTypes, config);
}

bool registerKinetoProfiler() {
  static std::atomic<bool> registered{false};
  if (registered.exchange(true)) {
    return true;
  }
  bool ok = guard("registerKinetoProfiler", [] {
    libkineto::api().registerProfilerFactory(
        []() -> std::unique_ptr<libkineto::IActivityProfiler> {
          try {
            return std::make_unique<RocmChildProfiler>();
          } catch (...) {
            return nullptr;
          }
        });
  });
  if (!ok) {
    registered = false;
  }
  return ok;
}

namespace {

std::mutex gRegistrationMutex;
// The refusal line of the last kineto_rocm_register_exclusive(), or empty.
std::string gRegistrationMessage;

const char* kRefusal =
    "kineto-rocm: refused: kineto was initialised before kineto-rocm registered (a profile already ran, or KINETO_USE_DAEMON is set), so kineto's own GPU tracer may collect too and kineto-rocm did not register; call kineto_rocm_register_exclusive() right after importing torch, before the first profile, with KINETO_USE_DAEMON unset";

} // namespace

RegistrationResult registerExclusive() {
  std::lock_guard<std::mutex> lock(gRegistrationMutex);
  RegistrationResult result = RegistrationResult::Failed;
  guard("registerExclusive", [&] {
    if (!gKinetoCpuOnlyByUs && libkineto::api().isProfilerRegistered()) {
      gRegistrationMessage = kRefusal;
      logLine(gRegistrationMessage);
      result = RegistrationResult::Refused;
      return;
    }
    if (!gKinetoCpuOnlyByUs) {
      // PyTorch calls libkineto_init only when no profiler is registered
      // yet, so this choice holds for the process.
      libkineto_init(/*cpuOnly=*/true, /*logOnError=*/true);
      // What PyTorch does after its own libkineto_init (KINETO_LOG_LEVEL
      // still overrides).
      libkineto::api().suppressLogMessages();
      gKinetoCpuOnlyByUs = true;
    }
    gRegistrationMessage.clear();
    result = registerKinetoProfiler() ? RegistrationResult::Registered
                                      : RegistrationResult::Failed;
  });
  return result;
}

SoleCollectorReport checkSoleCollector(libkineto::ActivityTraceInterface& trace) {
  SoleCollectorReport report;
  guard("checkSoleCollector", [&] {
    const auto* activities = trace.activities();
    if (activities == nullptr) {
      return;
    }
    const libkineto::TraceSpan* ours = &convert::traceSpan();
    for (const libkineto::ITraceActivity* act : *activities) {
      auto type = act->type();
      if (type != ActivityType::CONCURRENT_KERNEL && type != ActivityType::GPU_MEMCPY &&
          type != ActivityType::GPU_MEMSET) {
        continue;
      }
      if (act->traceSpan() == ours) {
        ++report.ours;
      } else {
        ++report.foreign;
      }
    }
    if (report.foreign > 0) {
      report.message = "kineto-rocm: not the only GPU collector: " +
          std::to_string(report.foreign) + " GPU activities in this trace come from another backend (" +
          std::to_string(report.ours) +
          " from kineto-rocm); call kineto_rocm_register_exclusive() before the first profile";
      logLine(report.message);
    }
  });
  return report;
}

} // namespace kineto_rocm

extern "C" KINETO_ROCM_API int kineto_rocm_register_kineto_profiler(void) {
  return kineto_rocm::registerKinetoProfiler() ? KINETO_ROCM_OK : KINETO_ROCM_USAGE_ERROR;
}

extern "C" KINETO_ROCM_API int kineto_rocm_register_exclusive(void) {
  switch (kineto_rocm::registerExclusive()) {
    case kineto_rocm::RegistrationResult::Registered:
      return KINETO_ROCM_OK;
    case kineto_rocm::RegistrationResult::Refused:
      return KINETO_ROCM_REFUSED;
    case kineto_rocm::RegistrationResult::Failed:
      break;
  }
  return KINETO_ROCM_USAGE_ERROR;
}

extern "C" KINETO_ROCM_API const char* kineto_rocm_registration_message(void) {
  std::lock_guard<std::mutex> lock(kineto_rocm::gRegistrationMutex);
  return kineto_rocm::gRegistrationMessage.empty() ? nullptr
                                                   : kineto_rocm::gRegistrationMessage.c_str();
}
