// The face inside a host it must never take down, as the only GPU collector,
// and speaking the same vocabulary as our own trace writer. Each test runs in
// its own process (ctest), so each sees kineto and the tool fresh.
#include "harness.h"

#include "kineto_rocm.h"
#include "kineto_rocm/RocmActivityApi.h"
#include "kineto_rocm/RocmChildProfiler.h"

#include <IActivityProfiler.h>
#include <libkineto.h>

#include <gtest/gtest.h>

#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

using kr_test::json;
using kr_test::Trace;
using kr_test::TraceOptions;

namespace {

std::vector<std::string> linesWith(const std::string& text, const std::string& needle) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) {
    if (line.find(needle) != std::string::npos) {
      out.push_back(line);
    }
  }
  return out;
}

Trace traceOf(const std::string& name, const std::vector<std::string>& workloads) {
  TraceOptions opt;
  for (const auto& w : workloads) {
    opt.workloads.push_back(kr_test::workload(w));
  }
  Trace t = kr_test::traceWorkloads(name, opt);
  for (const auto& e : t.workloadErrors) {
    ADD_FAILURE() << e;
  }
  EXPECT_TRUE(t.doc.is_object()) << "kineto's trace is not valid JSON: " << t.path;
  return t;
}

std::string metadataField(const Trace& t, const std::string& key) {
  if (!t.doc.contains("kineto_rocm")) {
    return "";
  }
  return t.doc["kineto_rocm"].value(key, "");
}

} // namespace

// KINETO_ROCM_TEST_PANIC_FINISHING_WINDOW=1 (ctest sets it for this test)
// makes the first window the core finishes panic. The panic must cost that
// window and nothing else: one log line, kineto writes the rest of its trace
// (the CPU op, the trace metadata), the process carries on, and the next
// profiling window collects everything.
TEST(FaultInjection, PanicFinishingAWindowCostsThatWindowOnly) {
  KR_REQUIRE_SETTING(std::getenv("KINETO_ROCM_TEST_PANIC_FINISHING_WINDOW") != nullptr,
                     "KINETO_ROCM_TEST_PANIC_FINISHING_WINDOW=1");
  ASSERT_TRUE(kr_test::simLoaded()) << kr_test::simLoadError();
  ASSERT_EQ(kineto_rocm_register_exclusive(), KINETO_ROCM_OK);
  Trace first;
  std::string err = kr_test::captureStderr([&] { first = traceOf("fault-1", {"eager-sync.json"}); });
  auto lines = linesWith(err, "kineto-rocm");
  ASSERT_EQ(lines.size(), 1u) << "stderr was:\n" << err;
  EXPECT_NE(lines[0].find("internal error"), std::string::npos) << lines[0];
  EXPECT_NE(lines[0].find("KINETO_ROCM_TEST_PANIC_FINISHING_WINDOW"), std::string::npos) << lines[0];
  EXPECT_TRUE(first.events("kernel").empty());
  EXPECT_EQ(first.events("cpu_op").size(), 1u) << "kineto lost the rest of its trace";
  EXPECT_EQ(metadataField(first, "status"), "collected");

  Trace second = traceOf("fault-2", {"eager-sync.json"});
  auto shown = kr_test::truthCounts(kr_test::groundTruth(), 1);
  ASSERT_EQ(shown.kernels + shown.copies, 14u);
  EXPECT_EQ(second.events("kernel").size(), shown.kernels);
  EXPECT_EQ(second.events("gpu_memcpy").size(), shown.copies);
  EXPECT_EQ(second.events("cpu_op").size(), 1u);
}

// Not yet initialised: kineto_rocm_register_exclusive() initialises kineto
// CPU-only (so PyTorch's own libkineto_init is skipped) and registers the
// child, which collects; the trace says kineto-rocm is the sole collector.
TEST(Registration, ExclusiveInitialisesKinetoCpuOnlyAndCollects) {
  ASSERT_TRUE(kr_test::simLoaded()) << kr_test::simLoadError();
  ASSERT_FALSE(libkineto::api().isProfilerRegistered());
  ASSERT_EQ(kineto_rocm_register_exclusive(), KINETO_ROCM_OK);
  EXPECT_TRUE(libkineto::api().isProfilerRegistered());
  EXPECT_EQ(kineto_rocm_registration_message(), nullptr);
  EXPECT_EQ(kineto_rocm_register_exclusive(), KINETO_ROCM_OK) << "not idempotent";
  Trace t = traceOf("exclusive", {"eager-sync.json"});
  auto shown = kr_test::truthCounts(kr_test::groundTruth(), 0);
  ASSERT_EQ(shown.kernels + shown.copies, 14u);
  EXPECT_EQ(t.events("kernel").size(), shown.kernels);
  EXPECT_EQ(t.events("gpu_memcpy").size(), shown.copies);
  EXPECT_EQ(metadataField(t, "status"), "collected");
  EXPECT_EQ(metadataField(t, "sole_collector").rfind("yes", 0), 0u)
      << metadataField(t, "sole_collector");
}

// Already initialised with GPU tracing (as a ROCm PyTorch does on its first
// profile, or at import with KINETO_USE_DAEMON): a distinct refusal code,
// one actionable line, and nothing registered.
TEST(Registration, ExclusiveRefusedWhenKinetoAlreadyInitialisedWithGpu) {
  libkineto_init(/*cpuOnly=*/false, /*logOnError=*/true);
  ASSERT_TRUE(libkineto::api().isProfilerRegistered());
  int rc = 0;
  std::string err = kr_test::captureStderr([&] { rc = kineto_rocm_register_exclusive(); });
  EXPECT_EQ(rc, KINETO_ROCM_REFUSED);
  auto lines = linesWith(err, "kineto-rocm");
  ASSERT_EQ(lines.size(), 1u) << "stderr was:\n" << err;
  EXPECT_EQ(lines[0].rfind("kineto-rocm: refused: kineto was initialised before", 0), 0u) << lines[0];
  EXPECT_NE(lines[0].find("before the first profile"), std::string::npos) << lines[0];
  EXPECT_NE(lines[0].find("KINETO_USE_DAEMON"), std::string::npos) << lines[0];
  const char* message = kineto_rocm_registration_message();
  ASSERT_NE(message, nullptr);
  EXPECT_EQ(std::string(message), lines[0]);
  EXPECT_EQ(kineto_rocm_register_exclusive(), KINETO_ROCM_REFUSED) << "refuses again";
}

namespace {

// Another GPU backend in the same kineto: a child that logs one kernel of
// its own per trace.
class ForeignSession : public libkineto::IActivityProfilerSession {
 public:
  void start() override {}
  void stop() override {}
  std::vector<std::string> errors() override {
    return {};
  }
  void processTrace(libkineto::ActivityLogger& logger) override {
    processTrace(logger, {}, 0, 0);
  }
  void processTrace(
      libkineto::ActivityLogger& logger,
      libkineto::getLinkedActivityCallback,
      int64_t startTime,
      int64_t /*endTime*/) override {
    static const libkineto::TraceSpan span(0, 0, "foreign");
    libkineto::GenericTraceActivity kernel(span, libkineto::ActivityType::CONCURRENT_KERNEL, "foreign_kernel");
    kernel.startTime = startTime + 1000;
    kernel.endTime = startTime + 2000;
    kernel.device = 0;
    kernel.resource = 77;
    logger.handleGenericActivity(kernel);
  }
  std::unique_ptr<libkineto::DeviceInfo> getDeviceInfo() override {
    return nullptr;
  }
  std::vector<libkineto::ResourceInfo> getResourceInfos() override {
    return {};
  }
  std::unique_ptr<libkineto::CpuTraceBuffer> getTraceBuffer() override {
    return nullptr;
  }
};

class ForeignProfiler : public libkineto::IActivityProfiler {
 public:
  const std::string& name() const override {
    return name_;
  }
  const std::set<libkineto::ActivityType>& availableActivities() const override {
    return types_;
  }
  std::unique_ptr<libkineto::IActivityProfilerSession> configure(
      const std::set<libkineto::ActivityType>&,
      const libkineto::Config&) override {
    return std::make_unique<ForeignSession>();
  }
  std::unique_ptr<libkineto::IActivityProfilerSession> configure(
      int64_t,
      int64_t,
      const std::set<libkineto::ActivityType>& types,
      const libkineto::Config& config) override {
    return configure(types, config);
  }

 private:
  std::string name_ = "foreign-gpu-backend";
  std::set<libkineto::ActivityType> types_ = {libkineto::ActivityType::CONCURRENT_KERNEL};
};

} // namespace

// The sole-collector check over a finished trace: GPU activities that are
// not ours are counted and reported in one line; alone, nothing is said.
TEST(SoleCollector, ForeignGpuActivityInTheSameTraceIsReported) {
  ASSERT_TRUE(kr_test::simLoaded()) << kr_test::simLoadError();
  ASSERT_EQ(kineto_rocm_register_exclusive(), KINETO_ROCM_OK);
  kr_test::initKineto();
  kr_test::installMarkerHook();
  auto& prof = libkineto::api().activityProfiler();
  std::set<libkineto::ActivityType> types = {
      libkineto::ActivityType::CPU_OP, libkineto::ActivityType::CONCURRENT_KERNEL,
      libkineto::ActivityType::GPU_MEMCPY, libkineto::ActivityType::CUDA_RUNTIME};
  auto traceOnce = [&] {
    prof.prepareTrace(types, "");
    prof.startTrace();
    EXPECT_EQ(kr_test::runWorkload(kr_test::workload("eager-sync.json")), "");
    kr_test::waitIdle();
    kr_test::takeCpuOps();
    return prof.stopTrace();
  };

  auto alone = traceOnce();
  ASSERT_NE(alone, nullptr);
  kineto_rocm::SoleCollectorReport report;
  std::string err = kr_test::captureStderr([&] { report = kineto_rocm::checkSoleCollector(*alone); });
  EXPECT_EQ(report.ours, 14u);
  EXPECT_EQ(report.foreign, 0u);
  EXPECT_TRUE(report.message.empty());
  EXPECT_TRUE(linesWith(err, "kineto-rocm").empty()) << err;

  prof.addChildActivityProfiler(std::make_unique<ForeignProfiler>());
  auto shared = traceOnce();
  ASSERT_NE(shared, nullptr);
  err = kr_test::captureStderr([&] { report = kineto_rocm::checkSoleCollector(*shared); });
  EXPECT_EQ(report.ours, 14u);
  EXPECT_EQ(report.foreign, 1u);
  auto lines = linesWith(err, "kineto-rocm");
  ASSERT_EQ(lines.size(), 1u) << err;
  EXPECT_EQ(lines[0], report.message);
  EXPECT_NE(report.message.find("1 GPU activities in this trace come from another backend"), std::string::npos)
      << report.message;
}

namespace {

// (category, name) -> every event's args as key -> JSON type, sorted.
using Signatures = std::map<std::pair<std::string, std::string>, std::multiset<std::string>>;

std::string typeOf(const json& v) {
  if (v.is_number_float()) {
    return "float";
  }
  if (v.is_number_integer()) {
    return "integer";
  }
  if (v.is_string()) {
    return "string";
  }
  if (v.is_array()) {
    for (const auto& e : v) {
      if (!e.is_number_integer()) {
        return "array";
      }
    }
    return "integer array";
  }
  return v.type_name();
}

Signatures signatures(const json& doc) {
  Signatures out;
  for (const auto& ev : doc["traceEvents"]) {
    std::string cat = ev.value("cat", "");
    if (ev.value("ph", "") != "X" ||
        (cat != "kernel" && cat != "gpu_memcpy" && cat != "cuda_runtime" &&
         cat != "gpu_memset" && cat != "cuda_sync" && cat != "cuda_event")) {
      continue;
    }
    std::string sig;
    for (const auto& [key, value] : ev["args"].items()) {
      sig += key + ":" + typeOf(value) + "; ";
    }
    out[{cat, ev["name"].get<std::string>()}].insert(sig);
  }
  return out;
}

// The same workloads through our own writer (kineto_rocm_write_trace), no
// kineto session: CPU op ids go straight to the core. Null when the trace is
// not valid JSON.
json oursOf(const std::string& path, const std::vector<std::string>& workloads) {
  kr_test::markersPushThroughApi(true);
  EXPECT_EQ(kineto_rocm_start(), KINETO_ROCM_OK);
  for (const auto& w : workloads) {
    EXPECT_EQ(kr_test::runWorkload(kr_test::workload(w)), "");
  }
  kr_test::waitIdle();
  EXPECT_EQ(kineto_rocm_stop(), KINETO_ROCM_OK);
  EXPECT_EQ(kineto_rocm_write_trace(path.c_str()), KINETO_ROCM_OK);
  kr_test::markersPushThroughApi(false);
  std::ifstream in(path);
  json doc = json::parse(in, nullptr, /*allow_exceptions=*/false);
  EXPECT_TRUE(doc.is_object()) << "our trace is not valid JSON: " << path;
  return doc.is_object() ? doc : json();
}

// Complete events per category, and how many of them carry a graph node id.
std::map<std::string, size_t> completeCounts(const json& doc) {
  std::map<std::string, size_t> out;
  for (const auto& ev : doc["traceEvents"]) {
    if (ev.value("ph", "") != "X") {
      continue;
    }
    std::string cat = ev.value("cat", "");
    ++out[cat];
    if (ev.contains("args") && ev["args"].contains("graph node id")) {
      ++out[cat + " with graph node id"];
    }
  }
  return out;
}

} // namespace

// What scripts/bench-writers.sh times, at the shipped scale: the 32x200
// graph workload through kineto's writer (the C++ face) and through ours
// gives both every kernel, with its graph node id, and every runtime call.
TEST(Writers, KinetoAndOurWriterWriteEveryEventOfTheGraphWorkload) {
  ASSERT_TRUE(kr_test::simLoaded()) << kr_test::simLoadError();
  ASSERT_TRUE(kr_test::registerChild());
  const std::vector<std::string> workloads = {"graph-32x200.json"};
  Trace viaKineto = traceOf("writers-count-kineto", workloads);
  json ours = oursOf(viaKineto.path + ".ours.json", workloads);
  ASSERT_TRUE(ours.is_object());
  auto kineto = completeCounts(viaKineto.doc);
  auto our = completeCounts(ours);
  EXPECT_EQ(kineto["kernel"], 6400u);
  EXPECT_EQ(kineto["kernel with graph node id"], 6400u);
  EXPECT_GE(kineto["cuda_runtime"], 200u);
  for (const char* what : {"kernel", "kernel with graph node id", "cuda_runtime"}) {
    EXPECT_EQ(our[what], kineto[what]) << what;
  }
}

// One vocabulary: the same workloads through kineto's writer (the C++ face)
// and through our own writer (kineto_rocm_write_trace) give every event the
// same args keys with the same JSON value types.
TEST(Writers, KinetoAndOurWriterPutTheSameArgsOnEveryEvent) {
  ASSERT_TRUE(kr_test::simLoaded()) << kr_test::simLoadError();
  ASSERT_TRUE(kr_test::registerChild());
  const std::vector<std::string> workloads = {"graph-linked.json", "eager-sync.json",
                                             "timeline.json"};
  Trace viaKineto = traceOf("writers-kineto", workloads);
  json ours = oursOf(viaKineto.path + ".ours.json", workloads);
  ASSERT_TRUE(ours.is_object());

  Signatures a = signatures(viaKineto.doc);
  Signatures b = signatures(ours);
  size_t events = 0;
  for (const auto& [what, sigs] : a) {
    events += sigs.size();
  }
  // 12 graph kernels + 3 eager + 9, 3 graph copies + 5, and their calls;
  // the timeline's 16 kernels, 3 copies, 4 memsets, 4 syncs, 4 host
  // functions, 1 event record and 32 calls.
  EXPECT_GE(events, 24u + 8u + 20u + 64u);
  for (const auto& [what, sigs] : a) {
    auto it = b.find(what);
    ASSERT_NE(it, b.end()) << what.first << " " << what.second << " only in kineto's trace";
    EXPECT_EQ(sigs, it->second) << what.first << " " << what.second;
  }
  for (const auto& [what, sigs] : b) {
    EXPECT_TRUE(a.count(what)) << what.first << " " << what.second << " only in our trace";
  }
}
