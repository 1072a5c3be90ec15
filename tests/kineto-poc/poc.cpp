// Proof of concept: a child profiler registered with the real libkineto that
// ships in torch 2.11.0's libtorch_cpu.so gets its activities written by
// kineto's own ChromeTraceLogger, with the metadata kineto-rocm needs.
//
//   kineto_poc <mode> <trace.json> [--quiet]
//
// mode selects when the child profiler factory is registered:
//   before-init   before libkineto_init()            (queued by LibkinetoApi)
//   after-init    after libkineto_init(), before initProfilerIfRegistered()
//   late          after initProfilerIfRegistered() (added to the live profiler)
//   second-trace  after a first trace was already taken; checked on the second
//
// KINETO_POC_HANDOFF=1 logs by pointer and hands ownership to kineto through
// getTraceBuffer() instead of letting kineto copy each activity.
//
// The program checks the written JSON itself and exits non-zero on failure.

#include <libkineto.h>
#include <output_base.h> // ActivityLogger; needs -DKINETO_NAMESPACE=libkineto
#include <time_since_epoch.h>

#include <chrono>
#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <regex>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

namespace {

using libkineto::ActivityType;

// The clock kineto uses for its own stamps (captureWindowStartTime_, the
// chrome trace base time, PyTorch's CPU ops after conversion): nanoseconds
// since the Unix epoch from std::chrono::system_clock (CLOCK_REALTIME).
int64_t kinetoNowNs() {
  return libkineto::timeSinceEpoch(std::chrono::system_clock::now());
}

// A deliberately wrong clock, used once as a control.
int64_t steadyNowNs() {
  return libkineto::timeSinceEpoch(std::chrono::steady_clock::now());
}

constexpr int32_t kCpuOpCorrelation = 4242; // "External id" of the CPU op
constexpr int32_t kLaunchCorrelation = 7;   // runtime-call -> kernel flow id
constexpr int32_t kGpuPid = 0;              // device index = trace pid
constexpr int32_t kStream = 3;              // stream id = trace tid
constexpr int32_t kControlStream = 99;
constexpr uint64_t kExecGraphId = 5;

struct KernelStamp {
  std::string name;
  int64_t start;
  int64_t end;
  uint64_t nodeId;
};

// What the fake "GPU" recorded while the trace was running.
struct Recording {
  uint64_t launchExternalId = 0; // top of the pushCorrelationId stack at launch
  int64_t launchStart = 0;
  int64_t launchEnd = 0;
  int32_t launchTid = 0;
  std::vector<KernelStamp> kernels;
  int64_t controlStart = 0;
};

class PocSession : public libkineto::IActivityProfilerSession {
 public:
  explicit PocSession(Recording* rec) : rec_(rec) {}

  void start() override {
    status_ = libkineto::TraceStatus::RECORDING;
  }
  void stop() override {
    status_ = libkineto::TraceStatus::PROCESSING;
  }
  std::vector<std::string> errors() override {
    return {};
  }

  void processTrace(libkineto::ActivityLogger& logger) override {
    processTrace(logger, [](int32_t) { return nullptr; }, 0, 0);
  }

  void processTrace(
      libkineto::ActivityLogger& logger,
      libkineto::getLinkedActivityCallback getLinkedActivity,
      int64_t startTime,
      int64_t endTime) override {
    window_ = {startTime, endTime};
    // kineto forwards pushCorrelationId(id) (PyTorch pushes each op's id)
    // to every live session; the id captured at launch finds the CPU op.
    const libkineto::ITraceActivity* cpuOp =
        getLinkedActivity(static_cast<int32_t>(rec_->launchExternalId));
    linkedFound_ = cpuOp != nullptr;

    // Host-side launch call (ROCm backends use the CUDA_RUNTIME type for HIP
    // API calls too); starts the ac2g flow arrow.
    auto launch = std::make_unique<libkineto::GenericTraceActivity>(
        span_, ActivityType::CUDA_RUNTIME, "hipGraphLaunch");
    launch->startTime = rec_->launchStart;
    launch->endTime = rec_->launchEnd;
    launch->id = kLaunchCorrelation;
    launch->device = libkineto::processId();
    launch->resource = rec_->launchTid;
    launch->threadId = rec_->launchTid;
    launch->linked = cpuOp;
    launch->flow.id = kLaunchCorrelation;
    launch->flow.type = libkineto::kLinkAsyncCpuGpu;
    launch->flow.start = true;
    launch->addMetadata("correlation", kLaunchCorrelation);
    owned_.push_back(std::move(launch));

    for (const auto& k : rec_->kernels) {
      auto act = std::make_unique<libkineto::GenericTraceActivity>(
          span_, ActivityType::CONCURRENT_KERNEL, k.name);
      act->startTime = k.start;
      act->endTime = k.end;
      act->id = kLaunchCorrelation;
      act->device = kGpuPid;
      act->resource = kStream;
      act->threadId = kStream;
      act->linked = cpuOp; // -> "External id": <cpu op correlation>
      act->flow.id = kLaunchCorrelation;
      act->flow.type = libkineto::kLinkAsyncCpuGpu;
      act->flow.start = false;
      // Unquoted values: addMetadata formats with fmt "{}" and the JSON
      // writer emits it bare; addMetadataQuoted would quote it.
      act->addMetadata("device", kGpuPid);
      act->addMetadata("stream", kStream);
      act->addMetadata("correlation", kLaunchCorrelation);
      act->addMetadata("graph id", kExecGraphId);
      act->addMetadata("graph node id", k.nodeId);
      act->addMetadataQuoted("kernel", k.name);
      owned_.push_back(std::move(act));
    }

    // Control: a kernel stamped with steady_clock instead of system_clock.
    auto control = std::make_unique<libkineto::GenericTraceActivity>(
        span_, ActivityType::CONCURRENT_KERNEL, "control_steady_clock");
    control->startTime = rec_->controlStart;
    control->endTime = rec_->controlStart + 1000;
    control->device = kGpuPid;
    control->resource = kControlStream;
    owned_.push_back(std::move(control));

    // Lifetime: stopTrace() runs processTrace into a MemoryTraceLogger, then
    // resets the profiler (destroying this session) before save() writes
    // JSON. So either
    //  - handleGenericActivity(act): the MemoryTraceLogger copies it (default), or
    //  - handleActivity(act): only a pointer is kept; ownership must go to
    //    kineto through getTraceBuffer() (adds a "Spans" lane for the buffer).
    if (handOff()) {
      for (const auto& act : owned_) {
        logger.handleActivity(*act);
      }
    } else {
      for (const auto& act : owned_) {
        logger.handleGenericActivity(*act);
      }
      owned_.clear();
    }
  }

  static bool handOff() {
    const char* v = std::getenv("KINETO_POC_HANDOFF");
    return v != nullptr && std::string(v) == "1";
  }

  std::unique_ptr<libkineto::DeviceInfo> getDeviceInfo() override {
    return std::make_unique<libkineto::DeviceInfo>(
        kGpuPid, kGpuPid + libkineto::kExceedMaxPid, "AMD Instinct (poc)",
        "GPU 0");
  }

  std::vector<libkineto::ResourceInfo> getResourceInfos() override {
    return {
        libkineto::ResourceInfo(kGpuPid, kStream, kStream, "stream 3"),
        libkineto::ResourceInfo(
            kGpuPid, kControlStream, kControlStream, "control (wrong clock)"),
    };
  }

  std::unique_ptr<libkineto::CpuTraceBuffer> getTraceBuffer() override {
    if (owned_.empty()) {
      return nullptr;
    }
    auto buf = std::make_unique<libkineto::CpuTraceBuffer>();
    buf->span = libkineto::TraceSpan(window_.first, window_.second, "rocm-poc");
    buf->gpuOpCount = static_cast<int>(owned_.size());
    for (auto& a : owned_) {
      buf->activities.push_back(std::move(a));
    }
    owned_.clear();
    return buf;
  }

  void pushCorrelationId(uint64_t id) override {
    correlationStack().push_back(id);
  }
  void popCorrelationId() override {
    if (!correlationStack().empty()) {
      correlationStack().pop_back();
    }
  }
  static std::vector<uint64_t>& correlationStack() {
    static thread_local std::vector<uint64_t> stack;
    return stack;
  }

  std::unordered_map<std::string, std::string> getMetadata() override {
    return {{"kineto_rocm_poc", "\"1\""}};
  }

  static inline bool linkedFound_ = false;
  static inline std::pair<int64_t, int64_t> window_{0, 0};

 private:
  Recording* rec_;
  libkineto::TraceSpan span_{0, 0, "rocm-poc"};
  std::deque<std::unique_ptr<libkineto::GenericTraceActivity>> owned_;
};

class PocProfiler : public libkineto::IActivityProfiler {
 public:
  explicit PocProfiler(Recording* rec) : rec_(rec) {}

  const std::string& name() const override {
    return name_;
  }
  const std::set<ActivityType>& availableActivities() const override {
    return types_;
  }

  std::unique_ptr<libkineto::IActivityProfilerSession> configure(
      const std::set<ActivityType>& activity_types,
      const libkineto::Config& /*config*/) override {
    ++configured;
    if (activity_types.count(ActivityType::CONCURRENT_KERNEL) == 0) {
      return nullptr;
    }
    return std::make_unique<PocSession>(rec_);
  }

  // The one kineto 2.11 actually calls (CuptiActivityProfiler::
  // configureChildProfilers passes start ms and duration ms).
  std::unique_ptr<libkineto::IActivityProfilerSession> configure(
      int64_t /*ts_ms*/,
      int64_t /*duration_ms*/,
      const std::set<ActivityType>& activity_types,
      const libkineto::Config& config) override {
    return configure(activity_types, config);
  }

  static inline int configured = 0;

 private:
  Recording* rec_;
  std::string name_{"rocm-poc"};
  std::set<ActivityType> types_{
      ActivityType::CONCURRENT_KERNEL,
      ActivityType::GPU_MEMCPY,
      ActivityType::GPU_MEMSET,
      ActivityType::CUDA_RUNTIME};
};

Recording gRecording;
int gFactoryCalls = 0;

void registerPoc() {
  libkineto::api().registerProfilerFactory(
      []() -> std::unique_ptr<libkineto::IActivityProfiler> {
        ++gFactoryCalls;
        return std::make_unique<PocProfiler>(&gRecording);
      });
}

void spin(std::chrono::microseconds d) {
  auto end = std::chrono::steady_clock::now() + d;
  while (std::chrono::steady_clock::now() < end) {
  }
}

// One profiled region: a CPU op (handed to kineto the way PyTorch does,
// through transferCpuTrace) that launches a "graph" of three kernels.
void runTrace(const std::string& path) {
  std::set<ActivityType> types = {
      ActivityType::CPU_OP,
      ActivityType::CONCURRENT_KERNEL,
      ActivityType::GPU_MEMCPY,
      ActivityType::CUDA_RUNTIME};
  auto& prof = libkineto::api().activityProfiler();
  prof.prepareTrace(types, "");
  prof.startTrace();

  gRecording = Recording{};
  auto cpu = std::make_unique<libkineto::CpuTraceBuffer>();
  int64_t opStart = kinetoNowNs();
  spin(std::chrono::microseconds(50));
  prof.pushCorrelationId(kCpuOpCorrelation); // what PyTorch does per op
  gRecording.launchTid = libkineto::systemThreadId();
  if (!PocSession::correlationStack().empty()) {
    gRecording.launchExternalId = PocSession::correlationStack().back();
  }
  gRecording.launchStart = kinetoNowNs();
  spin(std::chrono::microseconds(20));
  gRecording.launchEnd = kinetoNowNs();
  int64_t t = gRecording.launchEnd + 5000;
  for (uint32_t node = 1; node <= 3; ++node) {
    gRecording.kernels.push_back(
        {"poc_kernel_" + std::to_string(node), t, t + 30000,
         (kExecGraphId << 32) | node});
    t += 40000;
  }
  prof.popCorrelationId();
  gRecording.controlStart = steadyNowNs();
  spin(std::chrono::microseconds(200));
  int64_t opEnd = kinetoNowNs();

  cpu->span = libkineto::TraceSpan(opStart, opEnd, "poc-step");
  cpu->gpuOpCount = 3;
  cpu->emplace_activity(cpu->span, ActivityType::CPU_OP, "aten::poc_graph_replay");
  auto& op = *cpu->activities.back();
  op.startTime = opStart;
  op.endTime = opEnd;
  op.id = kCpuOpCorrelation;
  op.device = libkineto::processId();
  op.resource = libkineto::systemThreadId();
  op.threadId = libkineto::systemThreadId();
  prof.transferCpuTrace(std::move(cpu));

  auto trace = prof.stopTrace();
  if (!trace) {
    std::cerr << "stopTrace returned null\n";
    std::exit(2);
  }
  trace->save(path);
}

std::string slurp(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

int failures = 0;
void check(bool ok, const std::string& what) {
  std::cout << (ok ? "PASS " : "FAIL ") << what << "\n";
  if (!ok) {
    ++failures;
  }
}

// Returns the absolute ns of the "ts" of the first event whose text matches.
bool eventTsNs(const std::string& json, const std::string& name, int64_t base,
               int64_t* out) {
  std::regex re("\"name\": \"" + name +
                "\", \"pid\": [-0-9]+, \"tid\": [-0-9]+,\\s*\"ts\": ([0-9]+)\\.([0-9]{3})");
  std::smatch m;
  if (!std::regex_search(json, m, re)) {
    return false;
  }
  *out = base + std::stoll(m[1]) * 1000 + std::stoll(m[2]);
  return true;
}

} // namespace

int main(int argc, char** argv) {
  if (argc < 3) {
    std::cerr << "usage: " << argv[0]
              << " before-init|after-init|late|second-trace trace.json [--quiet]\n";
    return 64;
  }
  std::string mode = argv[1];
  std::string path = argv[2];
  bool quiet = argc > 3 && std::string(argv[3]) == "--quiet";

  if (mode == "before-init") {
    registerPoc();
  }
  libkineto_init(/*cpuOnly=*/true, /*logOnError=*/true);
  if (mode == "after-init") {
    registerPoc();
  }
  libkineto::api().initProfilerIfRegistered();
  if (mode == "late") {
    registerPoc();
  }
  if (mode == "second-trace") {
    runTrace(path + ".first");
    check(PocProfiler::configured == 0, "no child before registration");
    registerPoc();
  }
  runTrace(path);

  std::string json = slurp(path);
  if (!quiet) {
    std::cout << json << "\n";
  }

  std::smatch m;
  int64_t base = 0;
  check(std::regex_search(json, m, std::regex("\"baseTimeNanoseconds\": ([0-9]+)")),
        "trace has baseTimeNanoseconds");
  if (!m.empty()) {
    base = std::stoll(m[1]);
  }
  check(gFactoryCalls == 1, "factory called exactly once");
  check(PocProfiler::configured >= 1, "child profiler configured by kineto");
  check(gRecording.launchExternalId == kCpuOpCorrelation,
        "session saw pushCorrelationId(4242) from activityProfiler()");
  check(PocSession::linkedFound_, "getLinkedActivity found the CPU op by correlation id");

  std::regex nodeRe("\"graph node id\": ([0-9]+)");
  int nodes = 0;
  for (auto it = std::sregex_iterator(json.begin(), json.end(), nodeRe);
       it != std::sregex_iterator(); ++it) {
    uint64_t v = std::stoull((*it)[1]);
    nodes += (v >> 32) == kExecGraphId ? 1 : 0;
  }
  check(nodes == 3, "3 kernels carry \"graph node id\": <bare digits> (exec id in high 32 bits)");
  check(std::regex_search(json, std::regex("\"graph id\": 5[,\\s]")),
        "\"graph id\": 5 unquoted");
  check(std::regex_search(json, std::regex("\"cat\": \"kernel\", \"name\": \"poc_kernel_1\"")),
        "kernel written with cat \"kernel\"");
  check(std::regex_search(json, std::regex("\"External id\": 4242")),
        "kernel linked to CPU op (External id 4242)");
  check(std::regex_search(json, std::regex("\"ph\": \"s\", \"id\": 7, .*\\n?.*\"cat\": \"ac2g\"")) &&
            std::regex_search(json, std::regex("\"ph\": \"f\", \"id\": 7,")),
        "ac2g flow start (runtime) and end (kernel)");
  check(json.find("\"name\": \"AMD Instinct (poc)\"") != std::string::npos,
        "GPU process named from getDeviceInfo");
  check(json.find("\"name\": \"stream 3\"") != std::string::npos,
        "GPU lane named from getResourceInfos");

  // Clock: kernels stamped with system_clock ns come back exactly; kineto's
  // own capture-window start (the ts of the process_name metadata it writes
  // at captureWindowStartTime_) precedes them, the CPU op encloses them.
  int64_t k1 = 0, cpuOp = 0, launch = 0;
  bool haveK1 = eventTsNs(json, "poc_kernel_1", base, &k1);
  bool haveOp = eventTsNs(json, "aten::poc_graph_replay", base, &cpuOp);
  bool haveLaunch = eventTsNs(json, "hipGraphLaunch", base, &launch);
  check(haveK1 && k1 == gRecording.kernels[0].start,
        "kernel ts round-trips: baseTimeNanoseconds + ts*1000 == system_clock ns stamped");
  check(haveOp && haveLaunch && cpuOp <= launch && launch < k1,
        "CPU op <= launch < kernel on one time axis");
  std::regex winRe("\"name\": \"process_name\", \"ph\": \"M\", \"ts\": ([0-9]+)\\.([0-9]{3})");
  if (std::regex_search(json, m, winRe)) {
    int64_t win = base + std::stoll(m[1]) * 1000 + std::stoll(m[2]);
    check(win <= cpuOp && win == PocSession::window_.first,
          "kineto's own capture start (system_clock) == processTrace startTime <= our events");
  } else {
    check(false, "process_name metadata present");
  }
  check(PocSession::window_.first <= gRecording.kernels[0].start &&
            gRecording.kernels[2].end <= PocSession::window_.second + 1000000,
        "processTrace(start,end) window is in the same clock as our stamps");
  check(std::regex_search(json, std::regex(
            "\"name\": \"control_steady_clock\", \"pid\": 0, \"tid\": 99,\\s*\"ts\": 0\\.000")),
        "control: a steady_clock stamp is clamped to ts 0 (wrong clock)");

  std::cout << (failures ? "FAILED" : "ALL PASSED") << " (" << mode << ")\n";
  return failures ? 1 : 0;
}
