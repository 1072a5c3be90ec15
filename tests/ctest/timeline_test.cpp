// The ROCm timeline beyond kernels and copies, through kineto's own writer:
// tests/workloads/timeline.json (memsets, blit and SDMA copies, a peer copy,
// an event recorded and waited for, every kind of synchronisation, an eager
// host function, roctx ranges and a mark, and a graph with a memset node, a
// host node, an empty node and parallel branches, under mangled kernel
// names) traced by kineto with kineto-rocm registered, each item checked
// against the simulator's ground truth.
#include "harness.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <map>
#include <set>
#include <string>

using kr_test::json;
using kr_test::Trace;
using kr_test::TraceOptions;

namespace {

#define REQUIRE_SIM()                                                      \
  do {                                                                     \
    if (!kr_test::simLoaded()) {                                           \
      GTEST_FAIL() << "simulator not loaded: " << kr_test::simLoadError(); \
    }                                                                      \
  } while (0)

struct Traced {
  Trace t;
  json run;
};

Traced traceTimeline(const std::string& test) {
  EXPECT_TRUE(kr_test::registerChild());
  TraceOptions opt;
  opt.workloads.push_back(kr_test::workload("timeline.json"));
  Traced out{kr_test::traceWorkloads(test, opt), json::object()};
  for (const auto& e : out.t.workloadErrors) {
    ADD_FAILURE() << e;
  }
  EXPECT_TRUE(out.t.doc.is_object()) << "kineto's trace is not valid JSON: " << out.t.path;
  json truth = kr_test::groundTruth();
  if (truth.contains("runs") && !truth["runs"].empty()) {
    out.run = truth["runs"][0];
  }
  return out;
}

const json& args(const json& ev) {
  static const json empty = json::object();
  return ev.contains("args") ? ev["args"] : empty;
}

// Exact nanoseconds of a kineto "dur" (microseconds, three decimals).
uint64_t durNs(const json& ev) {
  return static_cast<uint64_t>(ev["dur"].get<double>() * 1000.0 + 0.5);
}

std::map<uint64_t, const json*> opsByDispatch(const json& run) {
  std::map<uint64_t, const json*> out;
  for (const auto& op : run["ops"]) {
    if (op.value("kind", "") == "kernel") {
      out[op["dispatch_id"].get<uint64_t>()] = &op;
    }
  }
  return out;
}

const json* callNamed(const json& run, const std::string& name) {
  for (const auto& c : run["calls"]) {
    if (c["name"] == name) {
      return &c;
    }
  }
  return nullptr;
}

std::string laneName(const Trace& t, int64_t pid, int64_t tid) {
  for (const auto& ev : t.doc["traceEvents"]) {
    if (ev.value("ph", "") == "M" && ev.value("name", "") == "thread_name" &&
        ev["pid"] == pid && ev["tid"] == tid) {
      return ev["args"]["name"].get<std::string>();
    }
  }
  return "";
}

// (device, stream) of every truth op, to find a stream's device.
std::map<uint64_t, int64_t> streamDevices(const json& run) {
  std::map<uint64_t, int64_t> out;
  for (const auto& op : run["ops"]) {
    out[op["stream_id"].get<uint64_t>()] = op["device"].get<int64_t>();
  }
  return out;
}

} // namespace

// hipMemsetAsync and the graph's memset node run as fill blit kernels; with
// their calls proven they are gpu_memset events with the call's (node's)
// bytes and value, the graph node keeping its graph fields. No runtime blit
// kernel is left among the kernels.
TEST(Timeline, MemsetsAreGpuMemsetsWithBytesAndValue) {
  REQUIRE_SIM();
  Traced x = traceTimeline("timeline-memsets");
  auto byDispatch = opsByDispatch(x.run);
  auto memsets = x.t.events("gpu_memset");
  ASSERT_EQ(memsets.size(), 4u) << "one eager memset and three replays of the memset node";
  int graphed = 0;
  for (const auto* ev : memsets) {
    const json& a = args(*ev);
    auto it = byDispatch.find(a.value("dispatch id", uint64_t{0}));
    ASSERT_NE(it, byDispatch.end()) << ev->dump();
    const json& op = *it->second;
    EXPECT_TRUE(op["blit"].get<bool>()) << ev->dump();
    EXPECT_EQ((*ev)["name"], "Memset (Device)");
    EXPECT_EQ(a["bytes"].get<uint64_t>(), op["bytes"].get<uint64_t>()) << ev->dump();
    EXPECT_EQ(a["value"].get<uint64_t>(), op["value"].get<uint64_t>()) << ev->dump();
    EXPECT_EQ(a["kernel"], "__amd_rocclr_fillBufferAligned");
    EXPECT_EQ((*ev)["pid"].get<int64_t>(), op["device"].get<int64_t>());
    EXPECT_EQ((*ev)["tid"].get<int64_t>(), op["stream_id"].get<int64_t>());
    if (a.contains("graph node id")) {
      ++graphed;
      EXPECT_EQ(a["graph node id"].get<uint64_t>() & 0xffffffffu,
                op["node_index"].get<uint64_t>());
    }
  }
  EXPECT_EQ(graphed, 3);
  for (const auto* ev : x.t.events("kernel")) {
    EXPECT_EQ((*ev)["name"].get<std::string>().rfind("__amd_rocclr_", 0), std::string::npos)
        << "a blit kernel left as a kernel: " << ev->dump();
  }
}

// The 4 KiB copy runs as a copy blit kernel: a gpu_memcpy with its bytes
// and direction; the 1 MiB one is an SDMA copy.
TEST(Timeline, BlitCopiesAreGpuMemcpy) {
  REQUIRE_SIM();
  Traced x = traceTimeline("timeline-blit-copies");
  int blits = 0, sdma = 0;
  for (const auto* ev : x.t.events("gpu_memcpy")) {
    const json& a = args(*ev);
    if (a.contains("dispatch id")) {
      ++blits;
      EXPECT_EQ(a["kernel"], "__amd_rocclr_copyBuffer");
      EXPECT_EQ(a["bytes"].get<uint64_t>(), 4096u);
      EXPECT_EQ(a["kind"], "HtoD");
      EXPECT_EQ((*ev)["name"], "Memcpy HtoD (Host -> Device)");
    } else if (a["kind"] == "HtoD") {
      ++sdma;
      EXPECT_EQ(a["bytes"].get<uint64_t>(), 1048576u);
    }
  }
  EXPECT_EQ(blits, 1);
  EXPECT_EQ(sdma, 1);
}

// hipMemcpyPeerAsync from device 1 to device 0 on a stream of device 1: on
// the issuing device's lane, with its source and destination devices.
TEST(Timeline, PeerCopyOnTheIssuingDevice) {
  REQUIRE_SIM();
  Traced x = traceTimeline("timeline-peer");
  auto peers = x.t.eventsNamed("Memcpy PtoP (Device -> Device)");
  ASSERT_EQ(peers.size(), 1u);
  const json& ev = *peers[0];
  EXPECT_EQ(ev["cat"], "gpu_memcpy");
  EXPECT_EQ(ev["pid"].get<int64_t>(), 1);
  EXPECT_EQ(args(ev)["src device"].get<int64_t>(), 1);
  EXPECT_EQ(args(ev)["dst device"].get<int64_t>(), 0);
  EXPECT_EQ(args(ev)["bytes"].get<uint64_t>(), 262144u);
  EXPECT_EQ(args(ev)["kind"], "PtoP");
  const json* call = callNamed(x.run, "hipMemcpyPeerAsync");
  ASSERT_NE(call, nullptr);
  EXPECT_EQ(args(ev)["correlation"].get<uint64_t>(), (*call)["correlation_id"].get<uint64_t>());
  EXPECT_EQ(ev["tid"].get<uint64_t>(), (*call)["stream_id"].get<uint64_t>());
}

// One cuda_sync span per synchronising call, named as CUPTI names them,
// lasting exactly the call, on the lane of what it waited on; waits name
// the event's last record and its stream.
TEST(Timeline, SyncSpansPointAtWhatTheyWaitedOn) {
  REQUIRE_SIM();
  Traced x = traceTimeline("timeline-syncs");
  auto devices = streamDevices(x.run);
  const std::map<std::string, std::string> names = {
      {"hipStreamSynchronize", "Stream Sync"},
      {"hipDeviceSynchronize", "Context Sync"},
      {"hipEventSynchronize", "Event Sync"},
      {"hipStreamWaitEvent", "Stream Wait Event"}};
  std::map<uint64_t, const json*> byCorrelation;
  for (const auto* ev : x.t.events("cuda_sync")) {
    if ((*ev)["name"] != "Host Function") {
      byCorrelation[args(*ev)["correlation"].get<uint64_t>()] = ev;
    }
  }
  EXPECT_EQ(byCorrelation.size(), 4u);
  for (const auto& [call, name] : names) {
    const json* c = callNamed(x.run, call);
    ASSERT_NE(c, nullptr) << call;
    auto it = byCorrelation.find((*c)["correlation_id"].get<uint64_t>());
    ASSERT_NE(it, byCorrelation.end()) << call << " has no cuda_sync span";
    const json& ev = *it->second;
    const json& a = args(ev);
    EXPECT_EQ(ev["name"], name);
    EXPECT_EQ(a["cuda_sync_kind"], name);
    EXPECT_EQ(durNs(ev), (*c)["exit_ns"].get<uint64_t>() - (*c)["enter_ns"].get<uint64_t>())
        << call;
    if (call == "hipStreamSynchronize" || call == "hipStreamWaitEvent") {
      uint64_t stream = (*c)["stream_id"].get<uint64_t>();
      EXPECT_EQ(ev["tid"].get<uint64_t>(), stream) << call;
      EXPECT_EQ(ev["pid"].get<int64_t>(), devices[stream]) << call;
    } else {
      EXPECT_EQ(laneName(x.t, ev["pid"].get<int64_t>(), ev["tid"].get<int64_t>()), "syncs")
          << call;
    }
    if (call == "hipDeviceSynchronize") {
      EXPECT_EQ(ev["pid"].get<int64_t>(), (*c)["device"].get<int64_t>());
    }
    if (call == "hipEventSynchronize" || call == "hipStreamWaitEvent") {
      uint64_t record = (*c)["waited_record_correlation_id"].get<uint64_t>();
      EXPECT_EQ(a["wait_on_cuda_event_record_corr_id"].get<int64_t>(),
                static_cast<int64_t>(record));
      const json* rec = callNamed(x.run, "hipEventRecord");
      ASSERT_NE(rec, nullptr);
      EXPECT_EQ((*rec)["correlation_id"].get<uint64_t>(), record);
      EXPECT_EQ(a["wait_on_stream"].get<int64_t>(), (*rec)["stream_id"].get<int64_t>());
      EXPECT_EQ(a["wait_on_cuda_event_id"].get<uint64_t>(), (*c)["event"].get<uint64_t>());
    }
  }
}

// hipEventRecord: a cuda_event on its stream's lane, at the end of the
// work it captures (here the kernel before it on that stream).
TEST(Timeline, EventRecordAtTheEndOfTheWorkItCaptures) {
  REQUIRE_SIM();
  Traced x = traceTimeline("timeline-events");
  auto events = x.t.events("cuda_event");
  ASSERT_EQ(events.size(), 1u);
  const json& ev = *events[0];
  const json& truth = x.run["events"][0];
  EXPECT_EQ(ev["name"], "Event Record");
  EXPECT_EQ(args(ev)["event_id"].get<uint64_t>(), truth["event"].get<uint64_t>());
  EXPECT_EQ(args(ev)["correlation"].get<uint64_t>(),
            truth["record_correlation_id"].get<uint64_t>());
  EXPECT_EQ(ev["pid"].get<int64_t>(), truth["device"].get<int64_t>());
  EXPECT_EQ(ev["tid"].get<uint64_t>(), truth["stream_id"].get<uint64_t>());
  const json* vecAdd = nullptr;
  for (const auto* k : x.t.events("kernel")) {
    if (args(*k).value("mangled name", "") == "_Z6vecAddPfS_S_i") {
      vecAdd = k;
    }
  }
  ASSERT_NE(vecAdd, nullptr);
  EXPECT_EQ(x.t.tsNs(ev), x.t.tsNs(*vecAdd) + static_cast<int64_t>(durNs(*vecAdd)));
}

// Host functions: spans on the stream that waited for them, containing
// their true run (the truth's duration fits inside); the graph's host node
// carries its graph key.
TEST(Timeline, HostFunctionsOnTheStreamThatWaits) {
  REQUIRE_SIM();
  Traced x = traceTimeline("timeline-host-functions");
  auto all = x.t.eventsNamed("Host Function");
  ASSERT_EQ(all.size(), x.run["host_functions"].size());
  ASSERT_EQ(all.size(), 4u) << "one hipLaunchHostFunc and three replays of the host node";
  for (const auto& truth : x.run["host_functions"]) {
    const json* found = nullptr;
    for (const auto* ev : all) {
      const json& a = args(*ev);
      bool node = truth["node_index"].is_null()
          ? !a.contains("graph node id")
          : a.contains("graph node id") &&
              (a["graph node id"].get<uint64_t>() & 0xffffffffu) ==
                  truth["node_index"].get<uint64_t>();
      if (node && a["correlation"] == truth["launch_correlation_id"]) {
        found = ev;
      }
    }
    ASSERT_NE(found, nullptr) << truth.dump();
    EXPECT_EQ((*found)["cat"], "cuda_sync");
    EXPECT_EQ((*found)["pid"].get<int64_t>(), truth["device"].get<int64_t>());
    EXPECT_EQ((*found)["tid"].get<uint64_t>(), truth["stream_id"].get<uint64_t>());
    EXPECT_GE(durNs(*found), truth["end_ns"].get<uint64_t>() - truth["start_ns"].get<uint64_t>());
    EXPECT_EQ(args(*found)["timing"].get<std::string>().rfind("bounds", 0), 0u);
  }
}

// roctx: a push/pop range and a start/stop range as user annotations on
// the calling thread, the mark as a point, and the device work launched
// inside "iteration" under a gpu_user_annotation span on each lane it ran.
TEST(Timeline, RoctxRangesOnTheThreadAndOverTheirDeviceWork) {
  REQUIRE_SIM();
  Traced x = traceTimeline("timeline-roctx");
  int64_t thread = x.run["threads"][0].get<int64_t>();
  std::map<std::string, const json*> cpu;
  for (const auto* ev : x.t.events("user_annotation")) {
    if ((*ev)["tid"].get<int64_t>() == thread) {
      cpu[(*ev)["name"].get<std::string>()] = ev;
    }
  }
  ASSERT_EQ(cpu.count("iteration"), 1u);
  ASSERT_EQ(cpu.count("sync phase"), 1u);
  ASSERT_EQ(cpu.count("graph next"), 1u);
  EXPECT_EQ(durNs(*cpu["graph next"]), 0u);
  for (const auto& m : x.run["markers"]) {
    const json& ev = *cpu[m["message"].get<std::string>()];
    EXPECT_LE(durNs(ev), m["end_ns"].get<uint64_t>() - m["start_ns"].get<uint64_t>())
        << m.dump();
  }
  std::set<std::pair<int64_t, int64_t>> lanes;
  for (const auto* ev : x.t.events("gpu_user_annotation")) {
    if ((*ev)["name"] == "iteration") {
      lanes.insert({(*ev)["pid"].get<int64_t>(), (*ev)["tid"].get<int64_t>()});
    }
  }
  // The eager work on two streams and the graph's branch lane.
  EXPECT_GE(lanes.size(), 3u);
  // Every kernel launched inside the range lies inside its lane's span.
  for (const auto* k : x.t.events("kernel")) {
    if ((*k)["name"] == "peer_warmup") {
      continue; // launched after the pop
    }
    bool covered = false;
    for (const auto* ev : x.t.events("gpu_user_annotation")) {
      if ((*ev)["name"] == "iteration" && (*ev)["pid"] == (*k)["pid"] && (*ev)["tid"] == (*k)["tid"] &&
          x.t.tsNs(*ev) <= x.t.tsNs(*k) &&
          x.t.tsNs(*ev) + static_cast<int64_t>(durNs(*ev)) >=
              x.t.tsNs(*k) + static_cast<int64_t>(durNs(*k))) {
        covered = true;
      }
    }
    EXPECT_TRUE(covered) << k->dump();
  }
}

// Kernel names demangled (cpp_demangle), the raw symbol in "mangled name".
TEST(Timeline, KernelNamesDemangledWithTheRawSymbolKept) {
  REQUIRE_SIM();
  Traced x = traceTimeline("timeline-names");
  auto byDispatch = opsByDispatch(x.run);
  int demangled = 0;
  for (const auto* ev : x.t.events("kernel")) {
    const json& a = args(*ev);
    const json& op = *byDispatch.at(a["dispatch id"].get<uint64_t>());
    std::string raw = op["kernel_name"];
    if (raw.rfind("_Z", 0) == 0) {
      ++demangled;
      EXPECT_EQ(a["mangled name"], raw);
      EXPECT_NE((*ev)["name"], raw);
      EXPECT_EQ(a["kernel"], (*ev)["name"]);
    } else {
      EXPECT_FALSE(a.contains("mangled name")) << ev->dump();
      EXPECT_EQ((*ev)["name"], raw);
    }
  }
  EXPECT_EQ(demangled, 15);
  EXPECT_EQ(x.t.eventsNamed("vecAdd(float*, float*, float*, int)").size(), 1u);
  EXPECT_EQ(x.t.eventsNamed("void math::reduce<float>(float*, int)").size(), 3u);
}

// Lanes: one per (device, stream), named by stream; a replay's work on its
// exec's parallel-branch queues goes on lanes named after the launching
// stream, so no two events of one lane overlap.
TEST(Timeline, BranchLanesNamedAfterTheLaunchingStream) {
  REQUIRE_SIM();
  Traced x = traceTimeline("timeline-lanes");
  const json* launch = callNamed(x.run, "hipGraphLaunch");
  ASSERT_NE(launch, nullptr);
  std::string stream = std::to_string((*launch)["stream_id"].get<uint64_t>());
  std::set<std::pair<int64_t, int64_t>> graphLanes;
  std::map<std::pair<int64_t, int64_t>, std::vector<std::pair<int64_t, int64_t>>> spans;
  for (const std::string cat : {"kernel", "gpu_memset", "gpu_memcpy"}) {
    for (const auto* ev : x.t.events(cat)) {
      std::pair<int64_t, int64_t> lane{(*ev)["pid"].get<int64_t>(), (*ev)["tid"].get<int64_t>()};
      spans[lane].push_back({x.t.tsNs(*ev), x.t.tsNs(*ev) + static_cast<int64_t>(durNs(*ev))});
      if (args(*ev).contains("graph node id")) {
        graphLanes.insert(lane);
      }
    }
  }
  EXPECT_GE(graphLanes.size(), 2u) << "the branches ran on two queues";
  for (const auto& lane : graphLanes) {
    std::string name = laneName(x.t, lane.first, lane.second);
    EXPECT_EQ(name.rfind("stream " + stream, 0), 0u) << name;
  }
  for (auto& [lane, list] : spans) {
    std::sort(list.begin(), list.end());
    for (size_t i = 1; i < list.size(); ++i) {
      EXPECT_LE(list[i - 1].second, list[i].first)
          << "overlap on " << laneName(x.t, lane.first, lane.second);
    }
  }
}

// The backend's own costs as kineto overhead events: SDK buffer processing
// and the window's finishing, each with its count.
TEST(Timeline, OverheadEventsOfTheBackend) {
  REQUIRE_SIM();
  Traced x = traceTimeline("timeline-overhead");
  std::set<std::string> names;
  for (const auto* ev : x.t.events("overhead")) {
    names.insert((*ev)["name"].get<std::string>());
    EXPECT_TRUE(args(*ev).contains("overhead count")) << ev->dump();
  }
  EXPECT_TRUE(names.count("kineto-rocm: SDK buffer processing"));
  EXPECT_TRUE(names.count("kineto-rocm: window finishing (attribution)"));
}

// Graph dependency arrows are opt-in: off by default, no arrow and no
// carrier.
TEST(Timeline, NoDependencyArrowsByDefault) {
  REQUIRE_SIM();
  Traced x = traceTimeline("timeline-no-arrows");
  EXPECT_TRUE(x.t.eventsNamed("graph dependency").empty());
}

// With KINETO_ROCM_GRAPH_DEPENDENCY_ARROWS=1 (ctest sets it): per replay,
// one arrow per dependency between shown nodes, collapsed through the empty
// node (branchB -> reduce), through kineto's fwdbwd flows between
// zero-length carriers on the two events.
TEST(Timeline, DependencyArrowsWhenAskedFor) {
  REQUIRE_SIM();
  const char* on = std::getenv("KINETO_ROCM_GRAPH_DEPENDENCY_ARROWS");
  KR_REQUIRE_SETTING(on && std::string(on) == "1", "KINETO_ROCM_GRAPH_DEPENDENCY_ARROWS=1");
  Traced x = traceTimeline("timeline-arrows");
  std::map<int64_t, int> starts, finishes;
  for (const auto& ev : x.t.doc["traceEvents"]) {
    if (ev.value("cat", "") == "fwdbwd") {
      (ev["ph"] == "s" ? starts : finishes)[ev["id"].get<int64_t>()]++;
    }
  }
  // 6 edges (0->1, 0->2, 1->3, 3->4, 4->6, 2->6 through the empty node 5)
  // per replay, 3 replays.
  EXPECT_EQ(starts.size(), 18u);
  EXPECT_EQ(finishes.size(), 18u);
  for (const auto& [id, n] : starts) {
    EXPECT_EQ(n, 1);
    EXPECT_EQ(finishes[id], 1) << "flow " << id;
  }
  EXPECT_EQ(x.t.eventsNamed("graph dependency").size(), 36u);
}
