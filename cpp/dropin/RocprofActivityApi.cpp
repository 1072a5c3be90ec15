// kineto-rocm's drop-in for kineto's libkineto/src/RocprofActivityApi.cpp:
// kineto's RocprofActivityApi implemented on kineto-rocm's Rust core (see
// RocprofActivityApi.h for what kineto relies on and how it is kept).
#include "RocprofActivityApi.h"

#include "FaceGuard.h"
#include "MetricsConfig.h"
#include "Vocabulary.h"
#include "kineto-rocm/src/bridge.rs.h"
#include "rust/cxx.h"

#include "IActivityProfiler.h"
#include "ThreadUtil.h"
#include "libkineto.h"

#include <rocprofiler-sdk/buffer_tracing.h>
#include <rocprofiler-sdk/callback_tracing.h>

#include <algorithm>
#include <map>
#include <shared_mutex>
#include <unordered_set>
#include <utility>
#include <vector>

namespace KINETO_NAMESPACE {

namespace {

namespace kr = ::kineto_rocm;

// Our rows: kineto's row types plus what kineto-rocm knows. Each is used
// only through its kineto base (first and only base, so at offset 0).
struct KrAsyncRow : rocprofAsyncRow {
  KrAsyncRow(const rocprofAsyncRow& row, KinetoRocmRowInfo i)
      : rocprofAsyncRow(row), info(std::move(i)) {}
  KinetoRocmRowInfo info;
};

struct KrKernelRow : rocprofKernelRow {
  KrKernelRow(const rocprofKernelRow& row, KinetoRocmRowInfo i)
      : rocprofKernelRow(row), info(std::move(i)) {}
  KinetoRocmRowInfo info;
};

struct KrRow : rocprofRow {
  KrRow(const rocprofRow& row, KinetoRocmRowInfo i) : rocprofRow(row), info(std::move(i)) {}
  KinetoRocmRowInfo info;
};

// The rows of one processActivities call, in vectors reserved to their
// final size (addresses never move).
struct Generation {
  std::vector<KrAsyncRow> gpu;
  std::vector<KrKernelRow> launches;
  std::vector<KrRow> calls;
};

// Owns every delivered row for the process, and knows which address ranges
// hold them, for rowInfo().
class RowRegistry {
 public:
  void keep(std::unique_ptr<Generation> generation) {
    std::unique_lock<std::shared_mutex> lock(mutex_);
    add(generation->gpu);
    add(generation->launches);
    add(generation->calls);
    generations_.push_back(std::move(generation));
  }

  const KinetoRocmRowInfo* find(const rocprofBase* row) const {
    auto at = reinterpret_cast<uintptr_t>(row);
    std::shared_lock<std::shared_mutex> lock(mutex_);
    auto it = ranges_.upper_bound(at);
    if (it == ranges_.begin()) {
      return nullptr;
    }
    --it;
    const Range& r = it->second;
    if (at >= r.end || (at - it->first) % r.stride != 0) {
      return nullptr;
    }
    return r.info(row);
  }

 private:
  template <typename Row>
  static const KinetoRocmRowInfo* infoOf(const rocprofBase* row) {
    return &static_cast<const Row*>(row)->info;
  }

  template <typename Row>
  void add(const std::vector<Row>& rows) {
    if (rows.empty()) {
      return;
    }
    auto begin = reinterpret_cast<uintptr_t>(rows.data());
    ranges_[begin] = Range{begin + rows.size() * sizeof(Row), sizeof(Row), &infoOf<Row>};
  }

  struct Range {
    uintptr_t end;
    size_t stride;
    const KinetoRocmRowInfo* (*info)(const rocprofBase*);
  };
  mutable std::shared_mutex mutex_;
  std::map<uintptr_t, Range> ranges_;
  std::vector<std::unique_ptr<Generation>> generations_;
};

RowRegistry& registry() {
  // Never destroyed: kineto's traces reference the rows until the process
  // ends, and may be saved from static destructors.
  static RowRegistry* r = new RowRegistry();
  return *r;
}

bool isGpuType(ActivityType t) {
  return t == ActivityType::CONCURRENT_KERNEL || t == ActivityType::GPU_MEMCPY ||
      t == ActivityType::CUDA_RUNTIME || t == ActivityType::CUDA_PROFILER_RANGE;
}

// A trace's counter group, asked for while the trace records: kineto starts
// child sessions after it enabled GPU tracing and stops them after it
// disabled it, so every dispatch of the capture is counted, and the values
// of dispatches in flight still reach their records.
class CountersSession : public IActivityProfilerSession {
 public:
  explicit CountersSession(std::string names) : names_(std::move(names)) {}
  ~CountersSession() override {
    release();
  }
  void start() override {
    kr::guard("counters start", [&] {
      try {
        kr::request_counters(names_);
        counting_ = true;
      } catch (const ::rust::Error& e) {
        errors_.push_back("kineto-rocm: counters " + names_ + ": " + e.what());
        kr::logLine(errors_.back());
      }
    });
  }
  void stop() override {
    release();
  }
  std::vector<std::string> errors() override {
    return errors_;
  }
  // The counted kernels are RocprofActivityApi's rows: nothing of its own.
  void processTrace(ActivityLogger& /*logger*/) override {}
  std::unique_ptr<DeviceInfo> getDeviceInfo() override {
    return nullptr;
  }
  std::vector<ResourceInfo> getResourceInfos() override {
    return {};
  }
  std::unique_ptr<CpuTraceBuffer> getTraceBuffer() override {
    return nullptr;
  }

 private:
  void release() {
    if (counting_) {
      counting_ = false;
      kr::guard("counters stop", [] { kr::release_counters(); });
    }
  }
  std::string names_;
  bool counting_ = false;
  std::vector<std::string> errors_;
};

class CountersProfiler : public IActivityProfiler {
 public:
  const std::string& name() const override {
    return name_;
  }
  const std::set<ActivityType>& availableActivities() const override {
    return available_;
  }
  std::unique_ptr<IActivityProfilerSession> configure(
      const std::set<ActivityType>& types,
      const Config& config) override {
    std::unique_ptr<IActivityProfilerSession> out;
    kr::guard("counters configure", [&] {
      std::string names = kr::countersAskedFor(config.source());
      if (!names.empty() && types.count(ActivityType::CUDA_PROFILER_RANGE) > 0) {
        out = std::make_unique<CountersSession>(std::move(names));
      }
    });
    return out;
  }
  std::unique_ptr<IActivityProfilerSession> configure(
      int64_t /*tsMs*/,
      int64_t /*durationMs*/,
      const std::set<ActivityType>& types,
      const Config& config) override {
    return configure(types, config);
  }

 private:
  std::string name_ = "kineto-rocm counters";
  std::set<ActivityType> available_{ActivityType::CUDA_PROFILER_RANGE};
};

// A row whose launching call is unknown gets an id that is negative both as
// kineto's int64 correlation (no flow arrow, compared with no other row) and
// as the int32 it looks CPU ops up by (never a CPU op).
uint64_t unknownCorrelationId() {
  static std::atomic<uint32_t> next{0};
  return 0x8000000080000000ull | (next.fetch_add(1) & 0x7fffffffu);
}

uint32_t copyOperation(kr::CopyDirection d) {
  switch (d) {
    case kr::CopyDirection::HostToHost:
      return ROCPROFILER_MEMORY_COPY_HOST_TO_HOST;
    case kr::CopyDirection::HostToDevice:
      return ROCPROFILER_MEMORY_COPY_HOST_TO_DEVICE;
    case kr::CopyDirection::DeviceToHost:
      return ROCPROFILER_MEMORY_COPY_DEVICE_TO_HOST;
    case kr::CopyDirection::DeviceToDevice:
      return ROCPROFILER_MEMORY_COPY_DEVICE_TO_DEVICE;
    default:
      return ROCPROFILER_MEMORY_COPY_NONE;
  }
}

void logUnavailableOnce(const std::string& why) {
  static std::atomic<bool> logged{false};
  if (!logged.exchange(true)) {
    kr::logLine("kineto-rocm: collecting nothing: " + why);
  }
}

} // namespace

struct RocprofActivityApi::State {
  std::set<ActivityType> mask;
  std::set<ActivityType> maskSnapshot;
  bool collecting = false;
  int64_t extraOffsetNs = 0;
  std::vector<::rust::Vec<kr::WindowActivities>> pending;
};

RocprofActivityApi& RocprofActivityApi::singleton() {
  static RocprofActivityApi instance;
  return instance;
}

// kineto makes this singleton while it builds its profiler, before it adds
// the child profilers registered so far, so the factory registered here is
// among them.
RocprofActivityApi::RocprofActivityApi() : s_(std::make_unique<State>()) {
  kr::guard("registering the counters profiler", [] {
    libkineto::api().registerProfilerFactory(
        [] { return std::make_unique<CountersProfiler>(); });
  });
}

RocprofActivityApi::~RocprofActivityApi() {
  disableActivities(std::set<ActivityType>());
}

// Per CPU op: a failure would repeat for every op, so it is logged once.
void RocprofActivityApi::pushCorrelationID(int id, CorrelationFlowType type) {
  static std::atomic<bool> logged{false};
  kr::guardOnce("pushCorrelationID", logged, [&] {
    kr::push_correlation_id(static_cast<uint32_t>(id), type == User);
  });
}

void RocprofActivityApi::popCorrelationID(CorrelationFlowType type) {
  static std::atomic<bool> logged{false};
  kr::guardOnce("popCorrelationID", logged, [&] { kr::pop_correlation_id(type == User); });
}

void RocprofActivityApi::setMaxEvents(uint32_t maxEvents) {
  kr::guard("setMaxEvents", [&] { kr::set_max_events(maxEvents); });
}

void RocprofActivityApi::setMaxBufferSize(int64_t /*size*/) {
  // The SDK buffer is sized by KINETO_ROCM_BUFFER_BYTES; records beyond
  // setMaxEvents are dropped and counted.
}

void RocprofActivityApi::setTimeOffset(timestamp_t toffset) {
  std::lock_guard<std::mutex> lock(mutex_);
  s_->extraOffsetNs = static_cast<int64_t>(toffset);
}

void RocprofActivityApi::enableActivities(const std::set<ActivityType>& selected) {
  kr::guard("enableActivities", [&] {
    std::lock_guard<std::mutex> lock(mutex_);
    s_->mask.insert(selected.begin(), selected.end());
    if (s_->collecting || std::none_of(s_->mask.begin(), s_->mask.end(), isGpuType)) {
      return;
    }
    try {
      kr::start_collection();
      s_->collecting = true;
    } catch (const ::rust::Error& e) {
      std::string why(kr::unavailable_reason());
      logUnavailableOnce(why.empty() ? std::string(e.what()) : why);
    }
  });
}

void RocprofActivityApi::disableActivities(const std::set<ActivityType>& selected) {
  kr::guard("disableActivities", [&] {
    std::lock_guard<std::mutex> lock(mutex_);
    s_->maskSnapshot = s_->mask;
    for (auto t : selected) {
      s_->mask.erase(t);
    }
    if (s_->collecting) {
      s_->collecting = false;
      kr::stop_collection();
    }
  });
}

void RocprofActivityApi::flushActivities() {
  kr::guard("flushActivities", [&] {
    std::lock_guard<std::mutex> lock(mutex_);
    ::rust::Vec<kr::WindowActivities> windows = kr::take_finished_windows();
    if (!windows.empty()) {
      s_->pending.push_back(std::move(windows));
    }
  });
}

void RocprofActivityApi::clearActivities() {
  kr::guard("clearActivities", [&] {
    std::lock_guard<std::mutex> lock(mutex_);
    s_->pending.clear();
    kr::clear_activities();
  });
}

const KinetoRocmRowInfo* RocprofActivityApi::rowInfo(const rocprofBase* row) {
  return registry().find(row);
}

int RocprofActivityApi::processActivities(
    std::function<void(const rocprofBase*)> handler,
    std::function<void(uint64_t, uint64_t, RocLogger::CorrelationDomain)>
        correlationHandler) {
  int count = 0;
  flushActivities();
  kr::guard("processActivities", [&] {
    std::lock_guard<std::mutex> lock(mutex_);
    const auto& mask = s_->maskSnapshot.empty() ? s_->mask : s_->maskSnapshot;
    const bool wantKernels = mask.count(ActivityType::CONCURRENT_KERNEL) > 0;
    // Counted kernels only, as CUPTI's range profiler gives kineto.
    const bool wantRanges = mask.count(ActivityType::CUDA_PROFILER_RANGE) > 0;
    const bool wantCopies = mask.count(ActivityType::GPU_MEMCPY) > 0;
    const bool wantRuntime = mask.count(ActivityType::CUDA_RUNTIME) > 0;

    auto generation = std::make_unique<Generation>();
    size_t gpu = 0, calls = 0;
    for (const auto& batch : s_->pending) {
      for (const auto& w : batch) {
        gpu += (wantKernels || wantRanges ? w.kernels.size() : 0) +
            (wantCopies ? w.copies.size() : 0);
        calls += wantRuntime ? w.runtime.size() : 0;
      }
    }
    generation->gpu.reserve(gpu);
    generation->launches.reserve(calls);
    generation->calls.reserve(calls);

    std::vector<std::pair<uint64_t, uint64_t>> pairs[2];
    std::unordered_set<uint64_t> paired[2];
    auto pair = [&](int domain, uint64_t correlation, uint64_t external) {
      if (paired[domain].insert(correlation).second) {
        pairs[domain].emplace_back(correlation, external);
      }
    };
    const uint32_t pid = static_cast<uint32_t>(processId());

    for (const auto& batch : s_->pending) {
      for (const auto& w : batch) {
        const int64_t offset = w.system_clock_offset_ns + s_->extraOffsetNs;
        auto at = [offset](uint64_t sdkNs) {
          return static_cast<uint64_t>(static_cast<int64_t>(sdkNs) + offset);
        };
        const auto launches = kr::vocab::launchesOf(w);
        auto kernelName = [&](uint32_t index) {
          return index < w.kernel_names.size() ? std::string(w.kernel_names[index])
                                               : std::string("<unknown kernel>");
        };

        if (wantKernels || wantRanges) {
          for (const auto& k : w.kernels) {
            if (!wantKernels && k.counter_names.empty()) {
              continue;
            }
            KinetoRocmRowInfo info;
            info.kind = KinetoRocmRowInfo::Kind::Kernel;
            info.hasCorrelation = k.has_correlation;
            info.correlation = k.correlation;
            info.hasStream = k.has_stream;
            info.stream = k.stream;
            info.dispatchId = k.dispatch_id;
            info.grid[0] = k.grid_x;
            info.grid[1] = k.grid_y;
            info.grid[2] = k.grid_z;
            info.block[0] = k.block_x;
            info.block[1] = k.block_y;
            info.block[2] = k.block_z;
            info.sharedMemory = k.lds_bytes;
            info.scratchMemory = k.scratch_bytes;
            info.hasGraph = k.has_graph;
            info.graphId = k.graph_id;
            info.graphNodeId = k.graph_node_id;
            for (size_t i = 0; i < k.counter_names.size() && i < k.counter_values.size(); ++i) {
              info.counters.emplace_back(std::string(k.counter_names[i]), k.counter_values[i]);
            }
            rocprofAsyncRow row(
                k.has_correlation ? k.correlation : unknownCorrelationId(),
                ROCPROFILER_BUFFER_TRACING_KERNEL_DISPATCH,
                ROCPROFILER_KERNEL_DISPATCH_COMPLETE,
                ROCPROFILER_KERNEL_DISPATCH_COMPLETE,
                static_cast<int>(k.device),
                k.queue,
                at(k.start_ns),
                at(k.end_ns),
                kernelName(k.name_index));
            // 0 makes kineto fall back to the HSA queue's lane.
            row.stream = k.has_stream ? k.stream : 0;
            generation->gpu.emplace_back(row, std::move(info));
            if (k.has_correlation && k.has_external_id) {
              pair(0, k.correlation, k.external_id);
            }
            if (k.has_correlation && k.has_user_external_id) {
              pair(1, k.correlation, k.user_external_id);
            }
          }
        }
        if (wantCopies) {
          for (const auto& c : w.copies) {
            KinetoRocmRowInfo info;
            info.kind = KinetoRocmRowInfo::Kind::Copy;
            info.hasCorrelation = c.has_correlation;
            info.correlation = c.correlation;
            info.hasStream = c.has_stream;
            info.stream = c.stream;
            info.copyDirection = static_cast<uint8_t>(c.direction);
            info.bytes = c.bytes;
            info.srcDevice = c.src_device;
            info.dstDevice = c.dst_device;
            info.hasGraph = c.has_graph;
            info.graphId = c.graph_id;
            info.graphNodeId = c.graph_node_id;
            uint32_t op = copyOperation(c.direction);
            // Copies run on no HSA queue the SDK reports.
            rocprofAsyncRow row(
                c.has_correlation ? c.correlation : unknownCorrelationId(),
                ROCPROFILER_BUFFER_TRACING_MEMORY_COPY,
                op,
                op,
                static_cast<int>(c.device),
                0,
                at(c.start_ns),
                at(c.end_ns),
                std::string());
            row.stream = c.has_stream ? c.stream : 0;
            generation->gpu.emplace_back(row, std::move(info));
            if (c.has_correlation && c.has_external_id) {
              pair(0, c.correlation, c.external_id);
            }
          }
        }
        if (wantRuntime) {
          for (const auto& r : w.runtime) {
            KinetoRocmRowInfo info;
            info.kind = KinetoRocmRowInfo::Kind::Runtime;
            info.correlation = r.correlation;
            auto launch = launches.find(r.correlation);
            info.launchedGpuWork = launch != launches.end() &&
                ((wantKernels && launch->second.kernels > 0) ||
                 (wantCopies && launch->second.copies > 0));
            if (r.has_external_id) {
              pair(0, r.correlation, r.external_id);
            }
            const uint32_t tid = static_cast<uint32_t>(r.thread_id);
            if (launch != launches.end() && launch->second.isKernelLaunch()) {
              const auto& k = w.kernels[launch->second.firstKernel];
              info.launchedKernel = kernelName(k.name_index);
              info.grid[0] = k.grid_x;
              info.grid[1] = k.grid_y;
              info.grid[2] = k.grid_z;
              info.block[0] = k.block_x;
              info.block[1] = k.block_y;
              info.block[2] = k.block_z;
              info.sharedMemory = k.lds_bytes;
              rocprofKernelRow row(
                  r.correlation,
                  ROCPROFILER_CALLBACK_TRACING_HIP_RUNTIME_API,
                  r.cid,
                  pid,
                  tid,
                  at(r.start_ns),
                  at(r.end_ns),
                  nullptr,
                  nullptr,
                  k.grid_x,
                  k.grid_y,
                  k.grid_z,
                  k.block_x,
                  k.block_y,
                  k.block_z,
                  k.lds_bytes,
                  k.has_stream ? reinterpret_cast<hipStream_t>(k.stream) : nullptr);
              generation->launches.emplace_back(row, std::move(info));
            } else {
              rocprofRow row(
                  r.correlation,
                  ROCPROFILER_CALLBACK_TRACING_HIP_RUNTIME_API,
                  r.cid,
                  pid,
                  tid,
                  at(r.start_ns),
                  at(r.end_ns));
              generation->calls.emplace_back(row, std::move(info));
            }
          }
        }
      }
    }
    s_->pending.clear();

    // kineto links a row to its CPU op when it handles the row: pairs first.
    if (correlationHandler) {
      for (const auto& [correlation, external] : pairs[0]) {
        correlationHandler(correlation, external, RocLogger::CorrelationDomain::Domain0);
      }
      for (const auto& [correlation, external] : pairs[1]) {
        correlationHandler(correlation, external, RocLogger::CorrelationDomain::Domain1);
      }
    }
    // Then each launch call before the work it launched.
    std::vector<const rocprofBase*> runtime;
    runtime.reserve(generation->launches.size() + generation->calls.size());
    for (const auto& row : generation->launches) {
      runtime.push_back(&row);
    }
    for (const auto& row : generation->calls) {
      runtime.push_back(&row);
    }
    std::vector<const rocprofBase*> gpuRows;
    gpuRows.reserve(generation->gpu.size());
    for (const auto& row : generation->gpu) {
      gpuRows.push_back(&row);
    }
    auto byStart = [](const rocprofBase* a, const rocprofBase* b) { return a->begin < b->begin; };
    std::stable_sort(runtime.begin(), runtime.end(), byStart);
    std::stable_sort(gpuRows.begin(), gpuRows.end(), byStart);
    registry().keep(std::move(generation));
    if (handler) {
      for (const auto* row : runtime) {
        handler(row);
        ++count;
      }
      for (const auto* row : gpuRows) {
        handler(row);
        ++count;
      }
    }
  });
  return count;
}

} // namespace KINETO_NAMESPACE
