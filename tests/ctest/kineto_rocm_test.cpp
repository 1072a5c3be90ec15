// ctest suite in the style of kineto's RocmActivityProfilerTest: every test
// runs a simulated workload through the real tool library (rocprofiler-sim
// provides the SDK), drives the real kineto from torch 2.11 with our child
// profiler registered, and reads the trace kineto's own ChromeTraceLogger
// wrote. ctest runs each test in its own process (the simulator, kineto and
// the tool are process singletons).
#include "harness.h"

#include "kineto_rocm/RocmActivityApi.h"
#include "kineto_rocm/RocmChildProfiler.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <map>
#include <regex>
#include <set>
#include <sstream>
#include <string>

#include <unistd.h>

using kr_test::json;
using kr_test::Trace;
using kr_test::TraceOptions;

namespace {

#define REQUIRE_SIM()                                                        \
  do {                                                                       \
    if (!kr_test::simLoaded()) {                                             \
      GTEST_FAIL() << "simulator not loaded: " << kr_test::simLoadError();   \
    }                                                                        \
  } while (0)

bool envOn(const char* name) {
  const char* v = std::getenv(name);
  return v && (std::string(v) == "1" || std::string(v) == "true" ||
               std::string(v) == "yes" || std::string(v) == "on");
}

Trace traceOf(const std::string& test, std::vector<std::string> workloads,
              bool waitIdle = true, const std::string& runOptions = "") {
  EXPECT_TRUE(kr_test::registerChild());
  TraceOptions opt;
  for (auto& w : workloads) {
    opt.workloads.push_back(kr_test::workload(w));
  }
  opt.waitIdleBeforeStop = waitIdle;
  opt.runOptions = runOptions;
  Trace t = kr_test::traceWorkloads(test, opt);
  for (const auto& e : t.workloadErrors) {
    ADD_FAILURE() << e;
  }
  EXPECT_TRUE(t.doc.is_object()) << "kineto's trace is not valid JSON: " << t.path;
  return t;
}

// The one run the simulator did in this process.
const json& run0(const json& truth) {
  static const json empty = json::object();
  if (!truth.contains("runs") || truth["runs"].empty()) {
    return empty;
  }
  return truth["runs"][0];
}

std::vector<const json*> truthOps(const json& run, const std::string& kind) {
  std::vector<const json*> out;
  if (!run.contains("ops")) {
    return out;
  }
  for (const auto& op : run["ops"]) {
    if (op.value("kind", "") == kind) {
      out.push_back(&op);
    }
  }
  return out;
}

// The truth ops a trace shows under `cat` with attribution on: blit
// kernels are shown as the copies ("gpu_memcpy") and memsets
// ("gpu_memset") their proven calls made.
std::vector<const json*> shownOps(const json& run, const std::string& cat) {
  std::vector<const json*> out;
  if (!run.contains("ops")) {
    return out;
  }
  for (const auto& op : run["ops"]) {
    bool blit = op.value("blit", false);
    bool copy = op.value("kind", "") == "memcpy" || (blit && !op["direction"].is_null());
    std::string shown = copy ? "gpu_memcpy" : blit ? "gpu_memset" : "kernel";
    if (shown == cat) {
      out.push_back(&op);
    }
  }
  return out;
}

const json& args(const json& ev) {
  static const json empty = json::object();
  return ev.contains("args") ? ev["args"] : empty;
}

bool hasGraphFields(const json& ev) {
  return args(ev).contains("graph id") || args(ev).contains("graph node id");
}

// (pid, tid) -> sorted names
using LaneNames = std::map<std::pair<int64_t, int64_t>, std::multiset<std::string>>;

LaneNames lanesOf(const std::vector<const json*>& evs) {
  LaneNames out;
  for (const auto* ev : evs) {
    out[{(*ev)["pid"].get<int64_t>(), (*ev)["tid"].get<int64_t>()}].insert(
        (*ev)["name"].get<std::string>());
  }
  return out;
}

const kr_test::CpuOp* cpuOpNamed(const Trace& t, const std::string& name) {
  for (const auto& op : t.cpuOps) {
    if (op.name == name) {
      return &op;
    }
  }
  return nullptr;
}

} // namespace

// Kernels, copies and runtime calls of a synchronised eager workload: every
// one arrives, with its name, on the lane (device pid, stream tid) where the
// simulator ran it. eager-sync.json launches 9 kernels and 5 copies (3 x 64
// KiB HtoD, 2 x 4 KiB DtoH); under the rocm model the two small copies run
// as blit kernels.
TEST(KinetoRocm, SyncTraceCountsAndNamesPerResource) {
  REQUIRE_SIM();
  Trace t = traceOf("sync", {"eager-sync.json"});
  json truth = kr_test::groundTruth();
  const json& run = run0(truth);
  auto shown = kr_test::truthCounts(truth, 0);
  ASSERT_EQ(shown.kernels, 9u);
  ASSERT_EQ(shown.copies, 5u);

  LaneNames expectKernels;
  for (const auto* op : shownOps(run, "kernel")) {
    expectKernels[{(*op)["device"].get<int64_t>(), (*op)["stream_id"].get<int64_t>()}].insert(
        (*op)["kernel_name"].get<std::string>());
  }
  LaneNames gotKernels = lanesOf(t.events("kernel"));
  EXPECT_EQ(gotKernels, expectKernels);
  EXPECT_EQ(t.events("kernel").size(), shown.kernels);

  std::map<std::pair<int64_t, int64_t>, int> expectCopies;
  int expectH2d = 0, expectD2h = 0;
  for (const auto* op : shownOps(run, "gpu_memcpy")) {
    ++expectCopies[{(*op)["device"].get<int64_t>(), (*op)["stream_id"].get<int64_t>()}];
    expectH2d += (*op)["direction"] == "host_to_device";
    expectD2h += (*op)["direction"] == "device_to_host";
  }
  std::map<std::pair<int64_t, int64_t>, int> gotCopies;
  int h2d = 0, d2h = 0;
  for (const auto* ev : t.events("gpu_memcpy")) {
    ++gotCopies[{(*ev)["pid"].get<int64_t>(), (*ev)["tid"].get<int64_t>()}];
    std::string name = (*ev)["name"];
    h2d += name == "Memcpy HtoD (Host -> Device)";
    d2h += name == "Memcpy DtoH (Device -> Host)";
  }
  EXPECT_EQ(gotCopies, expectCopies);
  EXPECT_EQ(h2d, expectH2d);
  EXPECT_EQ(d2h, expectD2h);
  EXPECT_EQ(h2d + d2h, static_cast<int>(shown.copies));

  // Runtime calls: on the workload thread, one launch call per kernel and
  // copy, in the CPU process.
  std::map<std::string, int> rt;
  int64_t tid = run["threads"][0].get<int64_t>();
  for (const auto* ev : t.events("cuda_runtime")) {
    EXPECT_EQ((*ev)["tid"].get<int64_t>(), tid) << ev->dump();
    EXPECT_EQ((*ev)["pid"].get<int64_t>(), static_cast<int64_t>(getpid()));
    ++rt[(*ev)["name"].get<std::string>()];
  }
  EXPECT_EQ(rt["hipLaunchKernel"], 9);
  EXPECT_EQ(rt["hipMemcpyAsync"], 5);
  EXPECT_GE(rt.size(), 2u);
}

// Records completing after stopTrace still land in the trace (no
// sleep-and-hope: the window waits for its correlation ids to retire).
TEST(KinetoRocm, InFlightRecordsLandAfterStop) {
  REQUIRE_SIM();
  Trace t = traceOf("inflight", {"eager-sync.json"}, /*waitIdle=*/false);
  auto shown = kr_test::truthCounts(kr_test::groundTruth(), 0);
  ASSERT_EQ(shown.kernels + shown.copies, 14u);
  EXPECT_EQ(t.events("kernel").size(), shown.kernels);
  EXPECT_EQ(t.events("gpu_memcpy").size(), shown.copies);
}

// ROCm metadata keys and values (kineto's RocmMetadataFields spellings),
// checked record by record against the simulator's ground truth.
TEST(KinetoRocm, RocmMetadataKeysAndValues) {
  REQUIRE_SIM();
  Trace t = traceOf("metadata", {"eager-sync.json"});
  json truth = kr_test::groundTruth();
  std::map<uint64_t, const json*> byDispatch;
  for (const auto* op : truthOps(run0(truth), "kernel")) {
    byDispatch[(*op)["dispatch_id"].get<uint64_t>()] = op;
  }
  auto kernels = t.events("kernel");
  ASSERT_FALSE(kernels.empty());
  for (const auto* ev : kernels) {
    const json& a = args(*ev);
    for (const char* key :
         {"device", "stream", "hsa_queue", "correlation", "kind", "kernel", "grid",
          "block", "shared memory", "dispatch id"}) {
      EXPECT_TRUE(a.contains(key)) << key << " missing: " << ev->dump();
    }
    EXPECT_EQ(a["kind"], "Dispatch Kernel");
    EXPECT_EQ(a["kernel"], (*ev)["name"]);
    EXPECT_EQ(a["device"].get<int64_t>(), (*ev)["pid"].get<int64_t>());
    EXPECT_EQ(a["stream"].get<int64_t>(), (*ev)["tid"].get<int64_t>());
    ASSERT_TRUE(a["grid"].is_array() && a["grid"].size() == 3) << ev->dump();
    ASSERT_TRUE(a["block"].is_array() && a["block"].size() == 3) << ev->dump();
    EXPECT_FALSE(hasGraphFields(*ev));
    auto it = byDispatch.find(a["dispatch id"].get<uint64_t>());
    ASSERT_NE(it, byDispatch.end()) << "no such dispatch in the ground truth: " << ev->dump();
    const json& op = *it->second;
    EXPECT_EQ(a["kernel"], op["kernel_name"]);
    EXPECT_EQ(a["device"].get<uint64_t>(), op["device"].get<uint64_t>());
    EXPECT_EQ(a["stream"].get<uint64_t>(), op["stream_id"].get<uint64_t>());
    EXPECT_EQ(a["hsa_queue"].get<uint64_t>(), op["queue_id"].get<uint64_t>());
    EXPECT_EQ(a["correlation"].get<uint64_t>(), op["record_correlation_id"].get<uint64_t>());
    EXPECT_EQ((*ev)["dur"].get<double>() * 1000.0,
              static_cast<double>(op["end_ns"].get<uint64_t>() - op["start_ns"].get<uint64_t>()));
  }
  std::map<std::string, uint64_t> bytesByKind;
  for (const auto* ev : t.events("gpu_memcpy")) {
    const json& a = args(*ev);
    for (const char* key : {"device", "stream", "correlation", "kind", "bytes"}) {
      EXPECT_TRUE(a.contains(key)) << key << " missing: " << ev->dump();
    }
    EXPECT_TRUE(a["bytes"].is_number_unsigned()) << ev->dump();
    bytesByKind[a["kind"].get<std::string>()] += a["bytes"].get<uint64_t>();
  }
  std::map<std::string, uint64_t> truthBytes;
  for (const auto* op : shownOps(run0(truth), "gpu_memcpy")) {
    std::string dir = (*op)["direction"];
    truthBytes[dir == "host_to_device" ? "HtoD" : dir == "device_to_host" ? "DtoH" : dir] +=
        (*op)["bytes"].get<uint64_t>();
  }
  EXPECT_EQ(truthBytes["HtoD"], 3u * 65536u) << "the 64 KiB copies run on the copy engine";
  EXPECT_EQ(bytesByKind, truthBytes);
}

// The headline: every graph-replay kernel of the 32-node x 200-replay
// workload (tests/workloads/graph-32x200.json) carries "graph id" and
// "graph node id" as bare integers in the JSON kineto's own writer produced:
// 32 keys, each seen 200 times, packed as (graph id << 32) | ordinal, and
// each key names the node the simulator really ran.
TEST(KinetoRocm, GraphIdsOn32x200Replays) {
  REQUIRE_SIM();
  ASSERT_FALSE(envOn("KINETO_ROCM_DISABLE_GRAPH_ATTRIBUTION"))
      << "KINETO_ROCM_DISABLE_GRAPH_ATTRIBUTION leaked into the test (ctest unsets it)";
  Trace t = traceOf("graph-32x200", {"graph-32x200.json"});
  json truth = kr_test::groundTruth();
  std::map<uint64_t, const json*> byDispatch;
  size_t graphed = 0;
  for (const auto* op : truthOps(run0(truth), "kernel")) {
    byDispatch[(*op)["dispatch_id"].get<uint64_t>()] = op;
    graphed += (*op)["graph_exec_id"].get<uint64_t>() != 0;
  }
  ASSERT_EQ(graphed, 6400u);

  // What PyTorch does: a regex over the text, bare digits only.
  std::regex nodeRe("\"graph node id\":\\s*(\\d+)");
  std::regex graphRe("\"graph id\":\\s*(\\d+)");
  auto count = [&](const std::regex& re) {
    return std::distance(
        std::sregex_iterator(t.text.begin(), t.text.end(), re), std::sregex_iterator());
  };
  EXPECT_EQ(count(nodeRe), 6400);
  EXPECT_EQ(count(graphRe), 6400);
  EXPECT_EQ(t.text.find("\"graph node id\": \""), std::string::npos) << "quoted value";

  std::map<uint64_t, int> perNode;
  std::map<uint64_t, std::set<std::string>> namesPerNode;
  std::map<uint64_t, std::set<uint32_t>> truthNodePerKey;
  std::set<uint64_t> graphIds;
  size_t kernels = 0;
  for (const auto* ev : t.events("kernel")) {
    ++kernels;
    const json& a = args(*ev);
    ASSERT_TRUE(a.contains("dispatch id")) << ev->dump();
    auto it = byDispatch.find(a["dispatch id"].get<uint64_t>());
    ASSERT_NE(it, byDispatch.end()) << ev->dump();
    const json& op = *it->second;
    if (op["graph_exec_id"].get<uint64_t>() == 0) {
      EXPECT_FALSE(hasGraphFields(*ev)) << "eager kernel with graph fields: " << ev->dump();
      continue;
    }
    ASSERT_TRUE(a.contains("graph id") && a.contains("graph node id")) << ev->dump();
    ASSERT_TRUE(a["graph id"].is_number_unsigned()) << ev->dump();
    ASSERT_TRUE(a["graph node id"].is_number_unsigned()) << ev->dump();
    uint64_t gid = a["graph id"].get<uint64_t>();
    uint64_t nid = a["graph node id"].get<uint64_t>();
    EXPECT_NE(gid, 0u);
    EXPECT_EQ(nid >> 32, gid) << ev->dump();
    EXPECT_EQ(nid & 0xffffffffu, op["node_index"].get<uint64_t>()) << ev->dump();
    graphIds.insert(gid);
    ++perNode[nid];
    namesPerNode[nid].insert((*ev)["name"].get<std::string>());
    truthNodePerKey[nid].insert(op["node_index"].get<uint32_t>());
  }
  EXPECT_EQ(kernels, byDispatch.size());
  EXPECT_EQ(graphIds.size(), 1u);
  EXPECT_EQ(perNode.size(), 32u);
  for (const auto& [nid, n] : perNode) {
    EXPECT_EQ(n, 200) << "graph node id " << nid;
    EXPECT_EQ(namesPerNode[nid].size(), 1u) << "graph node id " << nid;
    EXPECT_EQ(truthNodePerKey[nid].size(), 1u) << "graph node id " << nid << " names several nodes";
  }
}

// KINETO_ROCM_DISABLE_GRAPH_ATTRIBUTION=1 (ctest sets it for this test):
// the same workload, every kernel still there, no graph field anywhere.
TEST(KinetoRocm, NoGraphIdsWhenAttributionDisabled) {
  REQUIRE_SIM();
  KR_REQUIRE_SETTING(envOn("KINETO_ROCM_DISABLE_GRAPH_ATTRIBUTION"),
                     "KINETO_ROCM_DISABLE_GRAPH_ATTRIBUTION=1");
  Trace t = traceOf("graph-disabled", {"graph-32x200.json"});
  EXPECT_EQ(t.events("kernel").size(), 6400u);
  EXPECT_EQ(t.text.find("\"graph id\""), std::string::npos);
  EXPECT_EQ(t.text.find("\"graph node id\""), std::string::npos);
}

// KINETO_ROCM_PMC=SQ_WAVES,GRBM_COUNT (ctest sets it for this test): every
// kernel in kineto's trace carries both counters, each the value the ground
// truth says its dispatch counted, next to its graph fields.
TEST(KinetoRocm, CountersOnEveryKernelEqualTheTruth) {
  REQUIRE_SIM();
  const char* pmc = std::getenv("KINETO_ROCM_PMC");
  KR_REQUIRE_SETTING(pmc && std::string(pmc) == "SQ_WAVES,GRBM_COUNT",
                     "KINETO_ROCM_PMC=SQ_WAVES,GRBM_COUNT");
  Trace t = traceOf("graph-32x200-counters", {"graph-32x200-marked.json"});
  json truth = kr_test::groundTruth();
  std::map<uint64_t, const json*> byDispatch;
  for (const auto* op : truthOps(run0(truth), "kernel")) {
    byDispatch[(*op)["dispatch_id"].get<uint64_t>()] = op;
  }
  size_t counted = 0, graphed = 0;
  for (const auto* ev : t.events("kernel")) {
    const json& a = args(*ev);
    auto op = byDispatch.find(a["dispatch id"].get<uint64_t>());
    ASSERT_NE(op, byDispatch.end()) << ev->dump();
    const json& expected = (*op->second)["counters"];
    for (const char* name : {"SQ_WAVES", "GRBM_COUNT"}) {
      ASSERT_TRUE(a.contains(name)) << ev->dump();
      EXPECT_TRUE(a[name].is_number_float()) << ev->dump();
      EXPECT_EQ(a[name].get<double>(), expected[name].get<double>()) << ev->dump();
    }
    ++counted;
    graphed += hasGraphFields(*ev);
  }
  EXPECT_EQ(counted, 6403u);
  EXPECT_EQ(graphed, 6400u);
}

// KINETO_ROCM_PMC=SQ_WAVES,GRBM_COUNT and KINETO_ROCM_COUNTER_DIMENSIONS=1
// (ctest sets both for this test): beside each counter's sum, every kernel
// in kineto's trace carries one arg per instance the ground truth says its
// dispatch recorded, keyed as src/vocabulary.rs counter_instance_key spells
// it, each the truth's value: the bridge's name/value pairs reach kineto's
// writer.
TEST(KinetoRocm, CounterInstancesReachKinetosTrace) {
  REQUIRE_SIM();
  const char* pmc = std::getenv("KINETO_ROCM_PMC");
  const char* dims = std::getenv("KINETO_ROCM_COUNTER_DIMENSIONS");
  KR_REQUIRE_SETTING(pmc && std::string(pmc) == "SQ_WAVES,GRBM_COUNT" && dims &&
                         std::string(dims) == "1",
                     "KINETO_ROCM_PMC=SQ_WAVES,GRBM_COUNT KINETO_ROCM_COUNTER_DIMENSIONS=1");
  Trace t = traceOf("eager-sync-instances", {"eager-sync.json"});
  json truth = kr_test::groundTruth();
  std::map<uint64_t, const json*> byDispatch;
  for (const auto* op : truthOps(run0(truth), "kernel")) {
    byDispatch[(*op)["dispatch_id"].get<uint64_t>()] = op;
  }
  const std::string prefix = "DIMENSION_";
  size_t counted = 0, instances = 0;
  for (const auto* ev : t.events("kernel")) {
    const json& a = args(*ev);
    auto op = byDispatch.find(a["dispatch id"].get<uint64_t>());
    ASSERT_NE(op, byDispatch.end()) << ev->dump();
    for (const auto& i : (*op->second)["counter_instances"]) {
      std::string key = i["counter"].get<std::string>() + "[";
      for (const auto& d : i["dimensions"]) {
        std::string name = d[0].get<std::string>();
        if (name.rfind(prefix, 0) == 0) name = name.substr(prefix.size());
        key += (key.back() == '[' ? "" : ",") + name + "=" + std::to_string(d[1].get<size_t>());
      }
      key += "]";
      ASSERT_TRUE(a.contains(key)) << key << " " << ev->dump();
      EXPECT_EQ(a[key].get<double>(), i["value"].get<double>()) << key;
      ++instances;
    }
    for (const char* name : {"SQ_WAVES", "GRBM_COUNT"}) {
      EXPECT_EQ(a[name].get<double>(), (*op->second)["counters"][name].get<double>());
    }
    ++counted;
  }
  EXPECT_GT(counted, 0u);
  // SQ per XCC and shader engine (8 x 4), GRBM per XCC (8).
  EXPECT_EQ(instances, counted * 40u);
}

// PyTorch's experimental metrics config, as torch.profiler hands it to
// kineto (profiler_metrics, profiler_measure_per_kernel): CUPTI_PROFILER_*
// lines and the types {CUDA_PROFILER_RANGE} + CPU. Every kernel comes as a
// cuda_profiler_range carrying the counters the truth says its dispatch
// counted; the next trace, asking for none, counts nothing.
TEST(KinetoRocm, PyTorchMetricsConfigCountsEveryKernel) {
  REQUIRE_SIM();
  const char* pmc = std::getenv("KINETO_ROCM_PMC");
  KR_REQUIRE_SETTING(!pmc || std::string(pmc).empty(), "KINETO_ROCM_PMC unset");
  EXPECT_TRUE(kr_test::registerChild());
  using libkineto::ActivityType;
  TraceOptions opt;
  opt.workloads.push_back(kr_test::workload("graph-32x200-marked.json"));
  opt.types = {ActivityType::CUDA_PROFILER_RANGE, ActivityType::CPU_OP,
               ActivityType::USER_ANNOTATION, ActivityType::EXTERNAL_CORRELATION,
               ActivityType::CUDA_RUNTIME};
  opt.config =
      "ACTIVITIES_WARMUP_PERIOD_SECS=0\n"
      "CUPTI_PROFILER_METRICS=SQ_WAVES,GRBM_COUNT\n"
      "CUPTI_PROFILER_ENABLE_PER_KERNEL=true\n";
  Trace t = kr_test::traceWorkloads("metrics-config", opt);
  ASSERT_TRUE(t.workloadErrors.empty());
  json truth = kr_test::groundTruth();
  std::map<uint64_t, const json*> byDispatch;
  for (const auto* op : truthOps(run0(truth), "kernel")) {
    byDispatch[(*op)["dispatch_id"].get<uint64_t>()] = op;
  }
  size_t ranges = 0, graphed = 0;
  for (const auto* ev : t.events("cuda_profiler_range")) {
    const json& a = args(*ev);
    auto op = byDispatch.find(a["dispatch id"].get<uint64_t>());
    ASSERT_NE(op, byDispatch.end()) << ev->dump();
    EXPECT_EQ((*ev)["name"], (*op->second)["kernel_name"]) << ev->dump();
    const json& expected = (*op->second)["counters"];
    for (const char* name : {"SQ_WAVES", "GRBM_COUNT"}) {
      ASSERT_TRUE(a.contains(name)) << ev->dump();
      EXPECT_EQ(a[name].get<double>(), expected[name].get<double>()) << ev->dump();
    }
    ++ranges;
    graphed += hasGraphFields(*ev);
  }
  EXPECT_EQ(ranges, 6403u);
  EXPECT_EQ(graphed, 6400u);
  EXPECT_TRUE(t.events("kernel").empty()) << "kernels were not asked for";

  Trace after = traceOf("metrics-config-after", {"graph-32x200.json"});
  size_t kernels = 0;
  for (const auto* ev : after.events("kernel")) {
    EXPECT_FALSE(args(*ev).contains("SQ_WAVES")) << ev->dump();
    ++kernels;
  }
  EXPECT_EQ(kernels, 6400u);
}

// The 32x200 graph wrapped in a CPU op, plus eager kernels after it: graph
// kernels linked and attributed, eager ones neither attributed nor confused.
TEST(KinetoRocm, MarkedGraphReplaysLinkAndAttribute) {
  REQUIRE_SIM();
  Trace t = traceOf("graph-32x200-marked", {"graph-32x200-marked.json"});
  const auto* op = cpuOpNamed(t, "aten::graph_replay");
  ASSERT_NE(op, nullptr);
  int graphed = 0, eager = 0;
  for (const auto* ev : t.events("kernel")) {
    const json& a = args(*ev);
    if ((*ev)["name"] == "k_eager_after") {
      EXPECT_FALSE(hasGraphFields(*ev)) << ev->dump();
      EXPECT_FALSE(a.contains("External id")) << ev->dump();
      ++eager;
      continue;
    }
    EXPECT_TRUE(a.contains("graph node id")) << ev->dump();
    ASSERT_TRUE(a.contains("External id")) << ev->dump();
    EXPECT_EQ(a["External id"].get<int64_t>(), op->id);
    ++graphed;
  }
  EXPECT_EQ(graphed, 6400);
  EXPECT_EQ(eager, 3);
}

// Eight threads replaying their own graphs over shared hardware queues (the
// hazard where naive attribution aliases): whatever reaches kineto's trace
// is right. A key may be withheld (no fields), never wrong: every key names
// one (exec, node) of the ground truth and its node is the true creation
// index. The run pins the workload's 4 HW queues (a GPU_MAX_HW_QUEUES in
// the environment would otherwise give each thread a queue of its own), and
// the truth must show the hazard: packets processed by another thread.
TEST(KinetoRocm, ConcurrentReplaysNeverShowAWrongKey) {
  REQUIRE_SIM();
  Trace t = traceOf("concurrent-8", {"concurrent-8threads.json"}, true, R"({"hw_queues": 4})");
  json truth = kr_test::groundTruth();
  ASSERT_EQ(run0(truth).value("hw_queues_per_device", 0u), 4u);
  std::map<uint64_t, const json*> byDispatch;
  size_t foreign = 0;
  for (const auto* op : truthOps(run0(truth), "kernel")) {
    byDispatch[(*op)["dispatch_id"].get<uint64_t>()] = op;
    foreign += (*op)["processing_thread"] != (*op)["launching_thread"];
  }
  EXPECT_GT(foreign, 0u) << "no contention: the test would not test the hazard";
  std::map<uint64_t, std::set<std::pair<uint64_t, uint32_t>>> truthPerKey;
  std::map<uint64_t, std::set<uint64_t>> execPerGraphId;
  size_t attributed = 0, withheld = 0;
  for (const auto* ev : t.events("kernel")) {
    const json& a = args(*ev);
    auto it = byDispatch.find(a["dispatch id"].get<uint64_t>());
    ASSERT_NE(it, byDispatch.end()) << ev->dump();
    const json& op = *it->second;
    if (!a.contains("graph node id")) {
      EXPECT_FALSE(a.contains("graph id")) << ev->dump();
      ++withheld;
      continue;
    }
    ++attributed;
    uint64_t gid = a["graph id"].get<uint64_t>();
    uint64_t nid = a["graph node id"].get<uint64_t>();
    EXPECT_EQ(nid >> 32, gid);
    EXPECT_EQ(nid & 0xffffffffu, op["node_index"].get<uint64_t>()) << ev->dump();
    truthPerKey[nid].insert({op["exec_handle"].get<uint64_t>(), op["node_index"].get<uint32_t>()});
    execPerGraphId[gid].insert(op["exec_handle"].get<uint64_t>());
  }
  EXPECT_EQ(attributed + withheld, 8u * 6u * 100u);
  // Withholding everything would be "never wrong" too, and useless.
  EXPECT_GT(attributed, 0u) << "nothing attributed; the tool says: "
                            << t.doc.value("kineto_rocm", json::object()).dump();
  for (const auto& [nid, truths] : truthPerKey) {
    EXPECT_EQ(truths.size(), 1u) << "graph node id " << nid << " names several true nodes";
  }
  for (const auto& [gid, execs] : execPerGraphId) {
    EXPECT_EQ(execs.size(), 1u) << "graph id " << gid << " names several execs";
  }
  RecordProperty("attributed", static_cast<int>(attributed));
  RecordProperty("withheld", static_cast<int>(withheld));
  std::printf("concurrent-8threads: %zu attributed, %zu withheld, %zu processed by another thread\n",
              attributed, withheld, foreign);
}

// Eager kernels never carry graph fields; graph kernels and graph copies do
// (graph-linked.json: 3 launches of 4 kernels and a device-to-device copy,
// which the rocm model runs as a blit kernel; 3 eager kernels). Which is
// which comes from the truth, by dispatch id.
TEST(KinetoRocm, EagerKernelsHaveNoGraphFields) {
  REQUIRE_SIM();
  Trace t = traceOf("eager-vs-graph", {"graph-linked.json"});
  json truth = kr_test::groundTruth();
  std::map<uint64_t, const json*> byDispatch;
  size_t truthGraphKernels = 0;
  for (const auto* op : shownOps(run0(truth), "kernel")) {
    byDispatch[(*op)["dispatch_id"].get<uint64_t>()] = op;
    truthGraphKernels += (*op)["graph_exec_id"].get<uint64_t>() != 0;
  }
  // The copy nodes run as blit kernels and are shown as copies.
  auto truthCopies = shownOps(run0(truth), "gpu_memcpy");
  ASSERT_EQ(truthGraphKernels + truthCopies.size(), 15u);
  size_t graphKernels = 0, eagerKernels = 0, graphCopies = 0;
  for (const auto* ev : t.events("kernel")) {
    auto it = byDispatch.find(args(*ev).value("dispatch id", uint64_t{0}));
    ASSERT_NE(it, byDispatch.end()) << ev->dump();
    if ((*it->second)["graph_exec_id"].get<uint64_t>() != 0) {
      EXPECT_TRUE(args(*ev).contains("graph node id")) << ev->dump();
      ++graphKernels;
    } else {
      EXPECT_FALSE(hasGraphFields(*ev)) << ev->dump();
      ++eagerKernels;
    }
  }
  for (const auto* op : truthCopies) {
    EXPECT_NE((*op)["graph_exec_id"].get<uint64_t>(), 0u) << "the workload's copies are graph nodes";
  }
  for (const auto* ev : t.events("gpu_memcpy")) {
    EXPECT_TRUE(args(*ev).contains("graph node id")) << ev->dump();
    ++graphCopies;
  }
  EXPECT_EQ(graphKernels, truthGraphKernels);
  EXPECT_EQ(eagerKernels, 3u);
  EXPECT_EQ(graphCopies, truthCopies.size());
}

// GPU -> CPU linkage: device work launched inside a pushed correlation id
// names its CPU op ("External id") and is tied to its launch call by an
// ac2g flow; all on kineto's clock (launch inside the op, kernel after it).
// Each kernel's op is the one the truth says its launching call ran inside
// (the call's innermost marker).
TEST(KinetoRocm, GpuWorkLinksToCpuOp) {
  REQUIRE_SIM();
  Trace t = traceOf("linkage", {"graph-linked.json"});
  const auto* replay = cpuOpNamed(t, "aten::graph_replay");
  const auto* eagerOp = cpuOpNamed(t, "aten::eager_op");
  ASSERT_NE(replay, nullptr);
  ASSERT_NE(eagerOp, nullptr);
  json truth = kr_test::groundTruth();
  std::map<uint64_t, std::string> markerOfCall;
  for (const auto& call : run0(truth)["calls"]) {
    markerOfCall[call["correlation_id"].get<uint64_t>()] =
        call["marker"].is_null() ? "" : call["marker"].get<std::string>();
  }
  std::map<uint64_t, std::string> markerOfDispatch;
  std::map<std::string, int> truthPerMarker;
  for (const auto* op : shownOps(run0(truth), "kernel")) {
    const std::string& marker = markerOfCall[(*op)["launch_correlation_id"].get<uint64_t>()];
    markerOfDispatch[(*op)["dispatch_id"].get<uint64_t>()] = marker;
    ++truthPerMarker[marker];
  }
  ASSERT_EQ(truthPerMarker["aten::eager_op"], 2);
  ASSERT_EQ(truthPerMarker[""], 1);
  ASSERT_GE(truthPerMarker["aten::graph_replay"], 12);

  std::map<int64_t, int64_t> flowStartTs; // flow id -> ts
  std::set<int64_t> flowEnds;
  for (const auto& ev : t.doc["traceEvents"]) {
    if (ev.value("cat", "") != "ac2g") {
      continue;
    }
    if (ev.value("ph", "") == "s") {
      flowStartTs[ev["id"].get<int64_t>()] = t.tsNs(ev);
    } else if (ev.value("ph", "") == "f") {
      flowEnds.insert(ev["id"].get<int64_t>());
    }
  }

  std::map<std::string, int> linked;
  for (const auto* ev : t.events("kernel")) {
    const json& a = args(*ev);
    auto it = markerOfDispatch.find(a.value("dispatch id", uint64_t{0}));
    ASSERT_NE(it, markerOfDispatch.end()) << ev->dump();
    const std::string& marker = it->second;
    ++linked[marker];
    if (marker.empty()) {
      EXPECT_FALSE(a.contains("External id")) << ev->dump();
      continue;
    }
    ASSERT_TRUE(a.contains("External id")) << ev->dump();
    const auto* op = cpuOpNamed(t, marker);
    ASSERT_NE(op, nullptr) << marker;
    EXPECT_EQ(a["External id"].get<int64_t>(), op->id) << "truth: launched inside " << marker
                                                       << ": " << ev->dump();
    EXPECT_GE(t.tsNs(*ev), op->start) << "kernel before its CPU op: clock mismatch";
  }
  EXPECT_EQ(linked, truthPerMarker);

  // The launch calls: linked to the op, inside it, flow start present.
  int launches = 0;
  for (const auto* ev : t.events("cuda_runtime")) {
    if ((*ev)["name"] != "hipGraphLaunch") {
      continue;
    }
    ++launches;
    const json& a = args(*ev);
    ASSERT_TRUE(a.contains("External id")) << ev->dump();
    EXPECT_EQ(a["External id"].get<int64_t>(), replay->id);
    int64_t ts = t.tsNs(*ev);
    EXPECT_GE(ts, replay->start);
    EXPECT_LE(ts, replay->end);
  }
  EXPECT_EQ(launches, 3);
  EXPECT_FALSE(flowStartTs.empty());
  for (int64_t id : flowEnds) {
    EXPECT_TRUE(flowStartTs.count(id)) << "ac2g flow " << id << " has no start";
  }
  EXPECT_GE(flowEnds.size(), 4u); // 3 graph launches + at least one eager launch
}

// User annotations (pushUserCorrelationId, as record_function does) become
// gpu_user_annotation spans on the GPU lane covering the work they launched.
TEST(KinetoRocm, UserAnnotationSpansOnGpuLane) {
  REQUIRE_SIM();
  Trace t = traceOf("user-annotation", {"graph-linked.json"});
  const auto* user = cpuOpNamed(t, "user:annotated_region");
  ASSERT_NE(user, nullptr);
  EXPECT_TRUE(user->user);
  auto spans = t.events("gpu_user_annotation");
  ASSERT_EQ(spans.size(), 1u) << t.path;
  const json& span = *spans[0];
  EXPECT_EQ(span["name"], "user:annotated_region");
  int64_t s = t.tsNs(span);
  int64_t e = s + static_cast<int64_t>(span["dur"].get<double>() * 1000.0 + 0.5);
  int covered = 0;
  for (const auto* ev : t.events("kernel")) {
    if ((*ev)["name"] == "k_eager") {
      EXPECT_EQ((*ev)["pid"], span["pid"]);
      EXPECT_EQ((*ev)["tid"], span["tid"]);
      EXPECT_GE(t.tsNs(*ev), s);
      EXPECT_LE(t.tsNs(*ev), e);
      ++covered;
    }
  }
  EXPECT_EQ(covered, 2);
}

// Several GPUs: one GPU process per device, named from the tool's lane list,
// and one named lane per stream.
TEST(KinetoRocm, DeviceAndStreamLanesNamed) {
  REQUIRE_SIM();
  Trace t = traceOf("lanes", {"multi-gpu.json"});
  json truth = kr_test::groundTruth();
  std::set<int64_t> devices;
  std::set<std::pair<int64_t, int64_t>> streams;
  for (const auto* op : truthOps(run0(truth), "kernel")) {
    devices.insert((*op)["device"].get<int64_t>());
    streams.insert({(*op)["device"].get<int64_t>(), (*op)["stream_id"].get<int64_t>()});
  }
  ASSERT_EQ(devices.size(), 3u);
  std::map<int64_t, std::string> processNames;
  std::set<std::pair<int64_t, int64_t>> namedThreads;
  for (const auto& ev : t.doc["traceEvents"]) {
    if (ev.value("ph", "") != "M") {
      continue;
    }
    if (ev.value("name", "") == "process_name") {
      processNames[ev["pid"].get<int64_t>()] = ev["args"]["name"].get<std::string>();
    } else if (ev.value("name", "") == "thread_name") {
      std::string n = ev["args"]["name"];
      if (n.rfind("stream ", 0) == 0) {
        namedThreads.insert({ev["pid"].get<int64_t>(), ev["tid"].get<int64_t>()});
      }
    }
  }
  for (int64_t d : devices) {
    ASSERT_TRUE(processNames.count(d)) << "GPU " << d << " has no process_name";
    EXPECT_FALSE(processNames[d].empty());
  }
  for (const auto& s : streams) {
    EXPECT_TRUE(namedThreads.count(s)) << "no lane name for device " << s.first
                                       << " stream " << s.second;
  }
  std::map<int64_t, int> perDevice, truthPerDevice;
  for (const auto* ev : t.events("kernel")) {
    ++perDevice[(*ev)["pid"].get<int64_t>()];
  }
  for (const auto* op : truthOps(run0(truth), "kernel")) {
    ++truthPerDevice[(*op)["device"].get<int64_t>()];
  }
  EXPECT_EQ(truthPerDevice[0], 2);
  EXPECT_EQ(truthPerDevice[1], 4);
  EXPECT_GE(truthPerDevice[2], 4) << "4 kernels, and the copy if it ran as a blit";
  EXPECT_EQ(perDevice, truthPerDevice);
}

// Registered after kineto initialised and after a first trace: the child
// joins from the next prepareTrace and collects.
TEST(KinetoRocm, LateRegistrationStillCollects) {
  REQUIRE_SIM();
  kr_test::initKineto();
  TraceOptions opt;
  Trace first = kr_test::traceWorkloads("late-first", opt);
  EXPECT_TRUE(first.events("kernel").empty());
  ASSERT_TRUE(kr_test::registerChild());
  ASSERT_TRUE(kr_test::registerChild()); // idempotent
  opt.workloads.push_back(kr_test::workload("eager-sync.json"));
  Trace second = kr_test::traceWorkloads("late-second", opt);
  EXPECT_TRUE(second.workloadErrors.empty());
  auto shown = kr_test::truthCounts(kr_test::groundTruth(), 0);
  ASSERT_EQ(shown.kernels + shown.copies, 14u);
  EXPECT_EQ(second.events("kernel").size(), shown.kernels);
  EXPECT_EQ(second.events("gpu_memcpy").size(), shown.copies);
}

// Two traces in one process: the second has only its own records.
TEST(KinetoRocm, SecondTraceHasOnlyItsOwnRecords) {
  REQUIRE_SIM();
  Trace a = traceOf("two-a", {"eager-sync.json"});
  Trace b = traceOf("two-b", {"eager-sync.json"});
  json truth = kr_test::groundTruth();
  auto first = kr_test::truthCounts(truth, 0);
  auto second = kr_test::truthCounts(truth, 1);
  ASSERT_EQ(first.kernels + first.copies, 14u);
  ASSERT_EQ(second.kernels + second.copies, 14u);
  EXPECT_EQ(a.events("kernel").size(), first.kernels);
  EXPECT_EQ(a.events("gpu_memcpy").size(), first.copies);
  EXPECT_EQ(b.events("kernel").size(), second.kernels);
  EXPECT_EQ(b.events("gpu_memcpy").size(), second.copies);
}

// The kineto-shaped API on its own: rows + correlation pairs, as kineto's
// RocmActivityProfiler consumes them.
TEST(RocmActivityApi, ProcessActivitiesRowsAndCorrelations) {
  REQUIRE_SIM();
  using libkineto::ActivityType;
  auto& api = kineto_rocm::RocmActivityApi::singleton();
  kr_test::initKineto();
  kr_test::installMarkerHook();
  ASSERT_TRUE(api.isAvailable()) << api.unavailableReason();
  std::set<ActivityType> types = {
      ActivityType::CONCURRENT_KERNEL, ActivityType::GPU_MEMCPY, ActivityType::CUDA_RUNTIME};
  api.clearActivities();
  ASSERT_TRUE(api.enableActivities(types));
  // No kineto session here: the workload's marker pushes its CPU op id
  // through the API on the workload thread.
  kr_test::markersPushThroughApi(true);
  kr_test::takeCpuOps();
  EXPECT_EQ(kr_test::runWorkload(kr_test::workload("eager-sync.json")), "");
  kr_test::waitIdle();
  auto ops = kr_test::takeCpuOps();
  ASSERT_EQ(ops.size(), 1u);
  api.disableActivities(types);
  api.flushActivities();
  std::map<std::string, int> cats;
  std::map<uint64_t, uint64_t> corr;
  int rows = api.processActivities(
      [&](const libkineto::GenericTraceActivity& act) {
        ++cats[libkineto::toString(act.type())];
        EXPECT_GT(act.startTime, 0);
        EXPECT_GE(act.endTime, act.startTime);
      },
      [&](uint64_t c, uint64_t ext, kineto_rocm::RocmActivityApi::CorrelationFlowType type) {
        if (type == kineto_rocm::RocmActivityApi::Default) {
          corr[c] = ext;
        }
      });
  auto shown = kr_test::truthCounts(kr_test::groundTruth(), 0);
  ASSERT_EQ(shown.kernels + shown.copies, 14u);
  EXPECT_EQ(cats["kernel"], static_cast<int>(shown.kernels));
  EXPECT_EQ(cats["gpu_memcpy"], static_cast<int>(shown.copies));
  EXPECT_GE(cats["cuda_runtime"], 14);
  EXPECT_EQ(rows, cats["kernel"] + cats["gpu_memcpy"] + cats["cuda_runtime"]);
  EXPECT_FALSE(corr.empty());
  EXPECT_EQ(corr.size(), 14u); // 9 kernel + 5 copy launches under the marker
  for (const auto& [c, ext] : corr) {
    EXPECT_EQ(ext, static_cast<uint64_t>(ops[0].id)) << "correlation " << c;
  }
  api.clearActivities();
}

// No ROCm runtime at all (ctest runs this without the simulator): the
// plugin says why in ONE line, kineto carries on and writes its trace.
TEST(Unavailable, OneLineAndKinetoCarriesOn) {
  KR_REQUIRE_SETTING(!kr_test::simLoaded(), "KINETO_ROCM_TEST_NO_SIM=1");
  kr_test::initKineto();
  ASSERT_TRUE(kr_test::registerChild());
  Trace first, second;
  std::string err = kr_test::captureStderr([&] {
    TraceOptions opt;
    first = kr_test::traceWorkloads("unavailable-1", opt);
    second = kr_test::traceWorkloads("unavailable-2", opt);
  });
  int lines = 0;
  std::istringstream in(err);
  for (std::string line; std::getline(in, line);) {
    lines += line.find("kineto-rocm") != std::string::npos;
  }
  EXPECT_EQ(lines, 1) << "stderr was:\n" << err;
  EXPECT_NE(err.find("kineto-rocm: collecting nothing: "), std::string::npos) << err;
  for (const Trace* t : {&first, &second}) {
    ASSERT_TRUE(t->doc.is_object()) << t->path;
    EXPECT_TRUE(t->events("kernel").empty());
    ASSERT_TRUE(t->doc.contains("kineto_rocm")) << t->path;
    std::string status = t->doc["kineto_rocm"].value("status", "");
    EXPECT_NE(status.find("collecting nothing"), std::string::npos) << status;
  }
  auto& api = kineto_rocm::RocmActivityApi::singleton();
  EXPECT_FALSE(api.isAvailable());
  EXPECT_FALSE(api.unavailableReason().empty());
}

int main(int argc, char** argv) {
  kr_test::loadSimulatorUnlessDisabled();
  ::testing::InitGoogleTest(&argc, argv);
  return RUN_ALL_TESTS();
}
