#include "harness.h"

#include "kineto_rocm.h"
#include "kineto_rocm/RocmActivityApi.h"

#include <time_since_epoch.h>

#include <dlfcn.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <mutex>
#include <sstream>
#include <stdexcept>

#ifndef KINETO_ROCM_SIM_LIB
#define KINETO_ROCM_SIM_LIB ""
#endif
#ifndef KINETO_ROCM_TEST_WORKLOADS
#define KINETO_ROCM_TEST_WORKLOADS ""
#endif
#ifndef KINETO_ROCM_SHARED_WORKLOADS
#define KINETO_ROCM_SHARED_WORKLOADS ""
#endif
#ifndef KINETO_ROCM_TRACE_DIR
#define KINETO_ROCM_TRACE_DIR "."
#endif

namespace kr_test {

namespace {

using RunFileFn = int (*)(const char*, const char*, char**);
using WaitFn = int (*)(uint64_t);
using TruthFn = char* (*)();
using FreeFn = void (*)(char*);
using MarkerHook = void (*)(int, const char*, uint64_t, void*);
using SetHookFn = void (*)(MarkerHook, void*);

struct Sim {
  void* handle = nullptr;
  RunFileFn runFile = nullptr;
  WaitFn waitIdle = nullptr;
  TruthFn truth = nullptr;
  FreeFn freeString = nullptr;
  SetHookFn setHook = nullptr;
  std::string error = "not loaded";
};

Sim& sim() {
  static Sim s;
  return s;
}

template <typename F>
F sym(void* h, const char* name) {
  return reinterpret_cast<F>(dlsym(h, name));
}

int64_t nowNs() {
  return libkineto::timeSinceEpoch(std::chrono::system_clock::now());
}

std::mutex gOpsMutex;
std::vector<CpuOp> gOps;
std::atomic<int32_t> gNextId{1000};
std::atomic<bool> gThroughApi{false};

void push(bool user, uint64_t id) {
  using Api = kineto_rocm::RocmActivityApi;
  if (gThroughApi) {
    Api::pushCorrelationID(id, user ? Api::User : Api::Default);
  } else if (user) {
    libkineto::api().activityProfiler().pushUserCorrelationId(id);
  } else {
    libkineto::api().activityProfiler().pushCorrelationId(id);
  }
}

void pop(bool user) {
  using Api = kineto_rocm::RocmActivityApi;
  if (gThroughApi) {
    Api::popCorrelationID(user ? Api::User : Api::Default);
  } else if (user) {
    libkineto::api().activityProfiler().popUserCorrelationId();
  } else {
    libkineto::api().activityProfiler().popCorrelationId();
  }
}

struct OpenOp {
  CpuOp op;
};
thread_local std::vector<OpenOp> tOpen;

void markerHook(int phase, const char* name, uint64_t tid, void* /*data*/) {
  if (phase == 1) {
    OpenOp open;
    open.op.name = name ? name : "";
    open.op.id = gNextId.fetch_add(1);
    open.op.user = open.op.name.rfind("user:", 0) == 0;
    open.op.tid = static_cast<int32_t>(tid);
    open.op.start = nowNs();
    push(open.op.user, static_cast<uint64_t>(open.op.id));
    tOpen.push_back(open);
  } else if (phase == 2 && !tOpen.empty()) {
    OpenOp open = tOpen.back();
    tOpen.pop_back();
    pop(open.op.user);
    open.op.end = nowNs();
    std::lock_guard<std::mutex> lock(gOpsMutex);
    gOps.push_back(open.op);
  }
}

std::string slurp(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

} // namespace

void loadSimulatorUnlessDisabled() {
  const char* off = std::getenv("KINETO_ROCM_TEST_NO_SIM");
  if (off && std::string(off) == "1") {
    sim().error = "disabled by KINETO_ROCM_TEST_NO_SIM=1";
    return;
  }
  const char* env = std::getenv("KINETO_ROCM_SIM_LIB");
  std::string path = env && *env ? env : KINETO_ROCM_SIM_LIB;
  if (path.empty()) {
    sim().error = "no simulator library configured";
    return;
  }
  void* h = dlopen(path.c_str(), RTLD_NOW | RTLD_GLOBAL);
  if (!h) {
    const char* e = dlerror();
    sim().error = path + ": " + (e ? e : "dlopen failed");
    return;
  }
  Sim& s = sim();
  s.handle = h;
  s.runFile = sym<RunFileFn>(h, "rocsim_run_workload_file");
  s.waitIdle = sym<WaitFn>(h, "rocsim_wait_idle");
  s.truth = sym<TruthFn>(h, "rocsim_ground_truth_json");
  s.freeString = sym<FreeFn>(h, "rocsim_free_string");
  s.setHook = sym<SetHookFn>(h, "rocsim_set_marker_hook");
  if (!s.runFile || !s.waitIdle || !s.truth || !s.freeString || !s.setHook) {
    s.error = path + ": missing rocsim_* driver entry points";
    s.handle = nullptr;
    return;
  }
  s.error.clear();
}

bool simLoaded() {
  return sim().handle != nullptr;
}

const std::string& simLoadError() {
  return sim().error;
}

std::string runWorkload(const std::string& path, const std::string& options) {
  if (!simLoaded()) {
    return "simulator not loaded: " + sim().error;
  }
  char* err = nullptr;
  int rc = sim().runFile(path.c_str(), options.empty() ? nullptr : options.c_str(), &err);
  if (rc == 0) {
    return "";
  }
  std::string msg = "rocsim_run_workload_file(" + path + ") = " + std::to_string(rc);
  if (err) {
    msg += ": ";
    msg += err;
    sim().freeString(err);
  }
  return msg;
}

bool waitIdle(uint64_t timeoutNs) {
  return simLoaded() && sim().waitIdle(timeoutNs) == 0;
}

json groundTruth() {
  if (!simLoaded()) {
    return json::object();
  }
  char* s = sim().truth();
  if (!s) {
    return json::object();
  }
  json j = json::parse(s, nullptr, /*allow_exceptions=*/false);
  sim().freeString(s);
  return j;
}

TruthCounts truthCounts(const json& truth, size_t run) {
  TruthCounts out;
  if (!truth.contains("runs") || truth["runs"].size() <= run) {
    return out;
  }
  for (const auto& op : truth["runs"][run]["ops"]) {
    if (op.value("kind", "") == "memcpy") {
      ++out.copies;
    } else if (!op.value("blit", false)) {
      ++out.kernels;
    } else if (!op["direction"].is_null()) {
      ++out.copyBlits;
      ++out.copies;
    } else {
      ++out.memsets;
    }
  }
  return out;
}

bool underCtest() {
  const char* v = std::getenv("KINETO_ROCM_CTEST");
  return v && std::string(v) == "1";
}

std::string workload(const std::string& name) {
  std::string own = std::string(KINETO_ROCM_TEST_WORKLOADS) + "/" + name;
  if (access(own.c_str(), R_OK) == 0) {
    return own;
  }
  return std::string(KINETO_ROCM_SHARED_WORKLOADS) + "/" + name;
}

void installMarkerHook() {
  if (simLoaded()) {
    sim().setHook(&markerHook, nullptr);
  }
}

void markersPushThroughApi(bool on) {
  gThroughApi = on;
}

std::vector<CpuOp> takeCpuOps() {
  std::lock_guard<std::mutex> lock(gOpsMutex);
  std::vector<CpuOp> out;
  out.swap(gOps);
  return out;
}

void initKineto() {
  // As PyTorch's prepareTrace does: initialise only when nobody has.
  static std::once_flag once;
  std::call_once(once, [] {
    if (!libkineto::api().isProfilerRegistered()) {
      libkineto_init(/*cpuOnly=*/true, /*logOnError=*/true);
    }
    if (!libkineto::api().isProfilerInitialized()) {
      libkineto::api().initProfilerIfRegistered();
    }
  });
}

bool registerChild() {
  return kineto_rocm_register_kineto_profiler() == KINETO_ROCM_OK;
}

std::vector<const json*> Trace::events(const std::string& cat) const {
  std::vector<const json*> out;
  if (!doc.contains("traceEvents")) {
    return out;
  }
  for (const auto& ev : doc["traceEvents"]) {
    if (ev.value("cat", "") == cat && ev.value("ph", "") == "X") {
      out.push_back(&ev);
    }
  }
  return out;
}

std::vector<const json*> Trace::eventsNamed(const std::string& name) const {
  std::vector<const json*> out;
  if (!doc.contains("traceEvents")) {
    return out;
  }
  for (const auto& ev : doc["traceEvents"]) {
    if (ev.value("name", "") == name) {
      out.push_back(&ev);
    }
  }
  return out;
}

int64_t Trace::tsNs(const json& ev) const {
  // ts is microseconds with 3 decimals: keep the nanoseconds exact.
  double us = ev.at("ts").get<double>();
  return baseNs + static_cast<int64_t>(us * 1000.0 + (us >= 0 ? 0.5 : -0.5));
}

Trace traceWorkloads(const std::string& testName, const TraceOptions& opt) {
  using libkineto::ActivityType;
  initKineto();
  installMarkerHook();
  takeCpuOps();

  Trace t;
  t.path = std::string(KINETO_ROCM_TRACE_DIR) + "/" + testName + ".json";
  std::set<ActivityType> types = {
      ActivityType::CPU_OP,
      ActivityType::USER_ANNOTATION,
      ActivityType::GPU_USER_ANNOTATION,
      ActivityType::EXTERNAL_CORRELATION,
      ActivityType::CONCURRENT_KERNEL,
      ActivityType::GPU_MEMCPY,
      ActivityType::GPU_MEMSET,
      ActivityType::CUDA_RUNTIME,
      ActivityType::CUDA_SYNC,
      ActivityType::CUDA_EVENT,
      ActivityType::OVERHEAD};
  if (!opt.types.empty()) {
    types = opt.types;
  }
  auto& prof = libkineto::api().activityProfiler();
  prof.prepareTrace(types, opt.config);
  prof.startTrace();
  int64_t spanStart = nowNs();

  for (const auto& w : opt.workloads) {
    std::string err = runWorkload(w, opt.runOptions);
    if (!err.empty()) {
      t.workloadErrors.push_back(err);
    }
  }
  if (opt.waitIdleBeforeStop) {
    waitIdle();
  }

  // Hand the CPU ops to kineto the way PyTorch does.
  t.cpuOps = takeCpuOps();
  auto cpu = std::make_unique<libkineto::CpuTraceBuffer>();
  cpu->span = libkineto::TraceSpan(spanStart, nowNs(), "ctest");
  for (const auto& op : t.cpuOps) {
    cpu->emplace_activity(
        cpu->span,
        op.user ? ActivityType::USER_ANNOTATION : ActivityType::CPU_OP,
        op.name);
    auto& act = *cpu->activities.back();
    act.startTime = op.start;
    act.endTime = op.end;
    act.id = op.id;
    act.device = libkineto::processId();
    act.resource = op.tid;
    act.threadId = op.tid;
  }
  prof.transferCpuTrace(std::move(cpu));

  auto trace = prof.stopTrace();
  if (!trace) {
    throw std::runtime_error("stopTrace returned null");
  }
  trace->save(t.path);
  // The truth beside it, for scripts/torch_profiler_check.py --check-trace.
  std::ofstream(t.path.substr(0, t.path.size() - 5) + ".truth.json") << groundTruth().dump();
  t.text = slurp(t.path);
  t.doc = json::parse(t.text, nullptr, /*allow_exceptions=*/false);
  if (t.doc.is_object() && t.doc.contains("baseTimeNanoseconds")) {
    t.baseNs = t.doc["baseTimeNanoseconds"].get<int64_t>();
  }
  return t;
}

std::string captureStderr(const std::function<void()>& f) {
  std::fflush(stderr);
  char tmpl[] = "/tmp/kr-stderr-XXXXXX";
  int fd = mkstemp(tmpl);
  if (fd < 0) {
    f();
    return "";
  }
  int saved = dup(2);
  dup2(fd, 2);
  try {
    f();
  } catch (...) {
    std::fflush(stderr);
    dup2(saved, 2);
    close(saved);
    close(fd);
    unlink(tmpl);
    throw;
  }
  std::fflush(stderr);
  dup2(saved, 2);
  close(saved);
  close(fd);
  std::string out = slurp(tmpl);
  unlink(tmpl);
  // Echo it so ctest's output still shows it.
  std::fwrite(out.data(), 1, out.size(), stderr);
  return out;
}

} // namespace kr_test
