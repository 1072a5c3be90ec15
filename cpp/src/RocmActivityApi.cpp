// RocmActivityApi: finished windows from the Rust core -> kineto activities.
#include "kineto_rocm/RocmActivityApi.h"

#include "ActivityConvert.h"
#include "FaceGuard.h"
#include "KinetoCompat.h"
#include "kineto-rocm/src/bridge.rs.h"
#include "rust/cxx.h"

#include <ThreadUtil.h>

#include <algorithm>
#include <cinttypes>
#include <exception>
#include <map>
#include <tuple>
#include <unordered_map>
#include <utility>

namespace kineto_rocm {

using libkineto::ActivityType;
using libkineto::GenericTraceActivity;

namespace {

std::atomic<bool> gUnavailableLogged{false};

} // namespace

void logUnavailableOnce(const std::string& reason) {
  if (gUnavailableLogged.exchange(true)) {
    return;
  }
  guard("logUnavailableOnce", [&] { logLine("kineto-rocm: collecting nothing: " + reason); });
}

struct RocmActivityApi::State {
  std::set<ActivityType> mask;
  std::set<ActivityType> maskSnapshot;
  bool collecting = false;
  int64_t extraOffsetNs = 0;
  std::vector<rust::Vec<WindowActivities>> batches;
  std::vector<DeviceLaneInfo> lanes;
  std::vector<StreamLaneInfo> streams;
  std::vector<std::string> faceSummary;
};

RocmActivityApi::RocmActivityApi() : s_(std::make_unique<State>()) {}

RocmActivityApi::~RocmActivityApi() {
  // The singleton dies at exit: stop what is running, but never throw or
  // call into a core that may already be finalised by the SDK.
  guard("~RocmActivityApi", [&] {
    if (s_ && s_->collecting) {
      stop_collection();
    }
  });
}

RocmActivityApi& RocmActivityApi::singleton() {
  // Leaked on purpose: kineto and PyTorch call into the API from their own
  // static destructors.
  static RocmActivityApi* instance = new RocmActivityApi();
  return *instance;
}

// Per CPU op: a failure would repeat for every op, so it is logged once.
void RocmActivityApi::pushCorrelationID(uint64_t id, CorrelationFlowType type) {
  static std::atomic<bool> logged{false};
  guardOnce("pushCorrelationID", logged, [&] { push_correlation_id(id, type == User); });
}

void RocmActivityApi::popCorrelationID(CorrelationFlowType type) {
  static std::atomic<bool> logged{false};
  guardOnce("popCorrelationID", logged, [&] { pop_correlation_id(type == User); });
}

bool RocmActivityApi::isAvailable() const {
  return unavailableReason().empty();
}

std::string RocmActivityApi::unavailableReason() const {
  std::string why;
  guard("unavailableReason", [&] { why = std::string(unavailable_reason()); });
  return why;
}

std::string RocmActivityApi::requestCounters(const std::string& names) {
  std::string error;
  bool ok = guard("requestCounters", [&] {
    try {
      request_counters(names);
    } catch (const rust::Error& e) {
      error = e.what();
    }
  });
  if (!ok && error.empty()) {
    error = "requestCounters failed (see the log)";
  }
  return error;
}

void RocmActivityApi::releaseCounters() {
  guard("releaseCounters", [&] { release_counters(); });
}

bool RocmActivityApi::enableActivities(const std::set<ActivityType>& selected) {
  bool started = false;
  guard("enableActivities", [&] {
    std::lock_guard<std::mutex> lock(mutex_);
    for (auto t : selected) {
      s_->mask.insert(t);
    }
    if (s_->collecting) {
      started = true;
      return;
    }
    if (!convert::anyCollected(s_->mask)) {
      return;
    }
    std::string why = unavailableReason();
    if (!why.empty()) {
      logUnavailableOnce(why);
      return;
    }
    try {
      start_collection();
      s_->collecting = true;
      started = true;
    } catch (const rust::Error& e) {
      // Unavailable shows up here too when the SDK refused us at configure
      // or initialised without us.
      std::string again = unavailableReason();
      logUnavailableOnce(again.empty() ? std::string(e.what()) : again);
    }
  });
  return started;
}

void RocmActivityApi::disableActivities(const std::set<ActivityType>& selected) {
  guard("disableActivities", [&] {
    std::lock_guard<std::mutex> lock(mutex_);
    s_->maskSnapshot = s_->mask;
    for (auto t : selected) {
      s_->mask.erase(t);
    }
    if (s_->collecting && !convert::anyCollected(s_->mask)) {
      s_->collecting = false;
      stop_collection();
    }
  });
}

void RocmActivityApi::flushActivities() {
  guard("flushActivities", [&] {
    std::lock_guard<std::mutex> lock(mutex_);
    rust::Vec<WindowActivities> windows = take_finished_windows();
    if (!windows.empty()) {
      s_->batches.push_back(std::move(windows));
    }
  });
}

void RocmActivityApi::clearActivities() {
  guard("clearActivities", [&] {
    std::lock_guard<std::mutex> lock(mutex_);
    s_->batches.clear();
    s_->faceSummary.clear();
    clear_activities();
  });
}

void RocmActivityApi::teardownContext() {
  // kineto calls this on every reset; the SDK context lives for the
  // process, so there is nothing to tear down.
}

void RocmActivityApi::setTimeOffset(int64_t offsetNs) {
  std::lock_guard<std::mutex> lock(mutex_);
  s_->extraOffsetNs = offsetNs;
}

void RocmActivityApi::setMaxEvents(uint32_t maxEvents) {
  guard("setMaxEvents", [&] { set_max_events(maxEvents); });
}

int RocmActivityApi::processActivities(
    RowHandler handler,
    CorrelationHandler correlationHandler) {
  int count = 0;
  flushActivities();
  guard("processActivities", [&] {
    std::lock_guard<std::mutex> lock(mutex_);
    convert::Options opt;
    opt.mask = s_->maskSnapshot.empty() ? s_->mask : s_->maskSnapshot;
    opt.extraOffsetNs = s_->extraOffsetNs;
    convert::Lanes lanes;
    for (const auto& batch : s_->batches) {
      for (const auto& window : batch) {
        std::vector<convert::Row> rows = convert::buildRows(window, opt, lanes);
        // kineto links a row to its CPU op when it handles the row: the
        // correlation pairs go first.
        if (correlationHandler) {
          for (auto& row : rows) {
            if (row.hasExternal) {
              correlationHandler(row.correlation, row.external, Default);
            }
            if (row.hasUser) {
              correlationHandler(row.correlation, row.user, User);
            }
          }
        }
        for (auto& row : rows) {
          if (handler) {
            handler(*row.act);
          }
          ++count;
        }
      }
    }
    s_->lanes = lanes.devices();
    s_->streams = lanes.lanes();
  });
  return count;
}

int RocmActivityApi::processActivities(
    libkineto::ActivityLogger& logger,
    const libkineto::getLinkedActivityCallback& getLinked,
    int64_t startTime,
    int64_t endTime) {
  int count = 0;
  flushActivities();
  guard("processActivities", [&] {
    std::lock_guard<std::mutex> lock(mutex_);
    convert::Options opt;
    opt.mask = s_->maskSnapshot.empty() ? s_->mask : s_->maskSnapshot;
    opt.extraOffsetNs = s_->extraOffsetNs;
    opt.windowStart = startTime;
    opt.windowEnd = endTime;
    convert::Lanes lanes;
    convert::UserSpans userSpans;
    uint64_t linkedCount = 0;
    uint64_t unlinked = 0;
    uint64_t dropped = 0;
    for (const auto& batch : s_->batches) {
      for (const auto& window : batch) {
        std::vector<convert::Row> rows =
            convert::buildRows(window, opt, lanes, &dropped);
        for (auto& row : rows) {
          GenericTraceActivity& act = *row.act;
          if (row.hasExternal && getLinked) {
            act.linked = getLinked(static_cast<int32_t>(row.external));
            if (act.linked != nullptr) {
              ++linkedCount;
            } else {
              ++unlinked;
            }
          }
          if (row.hasUser && getLinked && row.kind != convert::Kind::Runtime) {
            if (const auto* user = getLinked(static_cast<int32_t>(row.user))) {
              userSpans.insertOrExtend(*user, act);
            }
          }
          logger.handleGenericActivity(act);
          ++count;
        }
      }
    }
    count += userSpans.log(logger);
    s_->lanes = lanes.devices();
    s_->streams = lanes.lanes();
    s_->faceSummary = {
        "face_logged=" + std::to_string(count),
        "face_linked_to_cpu_op=" + std::to_string(linkedCount),
        "face_cpu_op_not_found=" + std::to_string(unlinked),
        "face_outside_capture_window=" + std::to_string(dropped),
    };
  });
  return count;
}

std::vector<DeviceLaneInfo> RocmActivityApi::deviceLanes() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return s_->lanes;
}

std::vector<StreamLaneInfo> RocmActivityApi::streamLanes() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return s_->streams;
}

std::vector<std::string> RocmActivityApi::summary() const {
  std::vector<std::string> out;
  guard("summary", [&] {
    std::lock_guard<std::mutex> lock(mutex_);
    uint64_t windows = 0, kernels = 0, copies = 0, runtime = 0, graphed = 0;
    for (const auto& batch : s_->batches) {
      for (const auto& window : batch) {
        ++windows;
        kernels += window.kernels.size();
        copies += window.copies.size();
        runtime += window.runtime.size();
        for (const auto& k : window.kernels) {
          graphed += k.has_graph ? 1 : 0;
        }
        for (const auto& c : window.copies) {
          graphed += c.has_graph ? 1 : 0;
        }
        for (const auto& line : window.summary) {
          out.emplace_back(std::string(line));
        }
      }
    }
    out.push_back("windows=" + std::to_string(windows));
    out.push_back("kernels=" + std::to_string(kernels));
    out.push_back("copies=" + std::to_string(copies));
    out.push_back("runtime_calls=" + std::to_string(runtime));
    out.push_back("graph_attributed=" + std::to_string(graphed));
    out.insert(out.end(), s_->faceSummary.begin(), s_->faceSummary.end());
  });
  return out;
}

} // namespace kineto_rocm
