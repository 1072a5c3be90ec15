// One workload traced through kineto's own ROCm profiler (RocmActivityProfiler
// driving kineto-rocm's RocprofActivityApi drop-in) and written by kineto's
// own ChromeTraceLogger, then checked against the simulator's ground truth:
// every kernel there, graph fields on every graph kernel (PyTorch's regex,
// CUPTI's packing, one key per node), and, when the workload marks CPU ops,
// each graph kernel linked to its op ("External id").
//
//   dropin_trace WORKLOAD OUT.json [--metrics NAMES]
//
// With --metrics, the trace is asked for as torch.profiler asks when its
// experimental config names profiler_metrics (CUDA_PROFILER_RANGE, and
// CUPTI_PROFILER_METRICS=NAMES in the config text): every kernel must then
// carry each counter with the simulator's value, and a second trace of the
// workload without the metrics must carry none.
//
// Prints what it measured and PASS/FAIL per check; exits 1 on a failure.
// kineto's own error counts ("Record counts: ... CPU GPU out-of-order = N")
// go to its log (KINETO_LOG_LEVEL=1), which scripts/kineto-dropin-check.sh
// reads.
#include <libkineto.h>
#include <time_since_epoch.h>

#include <nlohmann/json.hpp>

#include <chrono>
#include <cstdio>
#include <fstream>
#include <map>
#include <mutex>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

extern "C" {
int rocsim_run_workload_file(const char* path, const char* options, char** error);
int rocsim_wait_idle(uint64_t timeout_ns);
char* rocsim_ground_truth_json();
void rocsim_free_string(char* s);
void rocsim_set_marker_hook(void (*hook)(int, const char*, uint64_t, void*), void* data);
int hipDeviceSynchronize();
}

namespace {

using json = nlohmann::json;

int64_t nowNs() {
  return libkineto::timeSinceEpoch(std::chrono::system_clock::now());
}

struct CpuOp {
  std::string name;
  int32_t id = 0;
  int64_t start = 0;
  int64_t end = 0;
  int32_t tid = 0;
};

std::mutex gOpsMutex;
std::vector<CpuOp> gOps;
int32_t gNextId = 1000;
thread_local std::vector<CpuOp> tOpen;

// A workload marker is a CPU op, pushed to kineto as PyTorch pushes its ops.
void markerHook(int phase, const char* name, uint64_t tid, void* /*data*/) {
  auto& profiler = libkineto::api().activityProfiler();
  if (phase == 1) {
    CpuOp op;
    op.name = name ? name : "";
    {
      std::lock_guard<std::mutex> lock(gOpsMutex);
      op.id = gNextId++;
    }
    op.tid = static_cast<int32_t>(tid);
    op.start = nowNs();
    profiler.pushCorrelationId(static_cast<uint64_t>(op.id));
    tOpen.push_back(op);
  } else if (phase == 2 && !tOpen.empty()) {
    CpuOp op = tOpen.back();
    tOpen.pop_back();
    profiler.popCorrelationId();
    op.end = nowNs();
    std::lock_guard<std::mutex> lock(gOpsMutex);
    gOps.push_back(op);
  }
}

int failures = 0;

void check(bool ok, const std::string& what) {
  std::printf("%s: %s\n", ok ? "PASS" : "FAIL", what.c_str());
  failures += ok ? 0 : 1;
}

// Traces the workload once through kineto and saves kineto's trace to `out`.
bool traceOnce(
    const std::string& workload,
    const std::string& out,
    const std::set<libkineto::ActivityType>& types,
    const std::string& config,
    std::vector<CpuOp>& ops) {
  using libkineto::ActivityType;
  auto& profiler = libkineto::api().activityProfiler();
  {
    std::lock_guard<std::mutex> lock(gOpsMutex);
    gOps.clear();
  }
  profiler.prepareTrace(types, config);
  profiler.startTrace();
  const int64_t spanStart = nowNs();
  char* error = nullptr;
  if (rocsim_run_workload_file(workload.c_str(), nullptr, &error) != 0) {
    std::fprintf(stderr, "workload failed: %s\n", error ? error : "?");
    return false;
  }
  // As torch.profiler does before it stops: synchronise the device.
  hipDeviceSynchronize();

  auto cpu = std::make_unique<libkineto::CpuTraceBuffer>();
  cpu->span = libkineto::TraceSpan(spanStart, nowNs(), "dropin");
  {
    std::lock_guard<std::mutex> lock(gOpsMutex);
    ops = gOps;
  }
  for (const auto& op : ops) {
    cpu->emplace_activity(cpu->span, ActivityType::CPU_OP, op.name);
    auto& act = *cpu->activities.back();
    act.startTime = op.start;
    act.endTime = op.end;
    act.id = op.id;
    act.device = libkineto::processId();
    act.resource = op.tid;
    act.threadId = op.tid;
  }
  profiler.transferCpuTrace(std::move(cpu));
  auto trace = profiler.stopTrace();
  if (!trace) {
    std::fprintf(stderr, "stopTrace returned no trace\n");
    return false;
  }
  trace->save(out);
  return true;
}

json readTrace(const std::string& path, std::string* body) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  if (body != nullptr) {
    *body = text.str();
  }
  return json::parse(text.str(), nullptr, /*allow_exceptions=*/false);
}

std::vector<std::string> splitNames(const std::string& list) {
  std::vector<std::string> out;
  std::stringstream in(list);
  for (std::string name; std::getline(in, name, ',');) {
    if (!name.empty()) {
      out.push_back(name);
    }
  }
  return out;
}

// The metrics trace and the plain trace after it (see the file comment).
int checkMetrics(const std::string& workload, const std::string& out, const std::string& names) {
  using libkineto::ActivityType;
  std::vector<CpuOp> ops;
  if (!traceOnce(workload, out,
                 {ActivityType::CPU_OP, ActivityType::EXTERNAL_CORRELATION,
                  ActivityType::CUDA_PROFILER_RANGE, ActivityType::CUDA_RUNTIME},
                 "ACTIVITIES_WARMUP_PERIOD_SECS=0\nCUPTI_PROFILER_METRICS=" + names +
                     "\nCUPTI_PROFILER_ENABLE_PER_KERNEL=true\n",
                 ops)) {
    return 2;
  }
  const std::string plainOut = out + ".after.json";
  if (!traceOnce(workload, plainOut,
                 {ActivityType::CPU_OP, ActivityType::CONCURRENT_KERNEL, ActivityType::CUDA_RUNTIME},
                 "", ops)) {
    return 2;
  }
  char* truthText = rocsim_ground_truth_json();
  json truth = json::parse(truthText, nullptr, /*allow_exceptions=*/false);
  rocsim_free_string(truthText);
  const auto counters = splitNames(names);

  json doc = readTrace(out, nullptr);
  std::map<uint64_t, const json*> counted;
  size_t truthKernels = 0;
  for (const auto& op : truth["runs"][0]["ops"]) {
    if (op.value("kind", "") == "kernel") {
      ++truthKernels;
      if (op.contains("counters") && !op["counters"].empty()) {
        counted[op["dispatch_id"].get<uint64_t>()] = &op;
      }
    }
  }
  size_t events = 0, right = 0;
  for (const auto& ev : doc["traceEvents"]) {
    if (ev.value("ph", "") != "X" || ev.value("cat", "") != "kernel") {
      continue;
    }
    ++events;
    const json& args = ev["args"];
    auto op = args.contains("dispatch id") ? counted.find(args["dispatch id"].get<uint64_t>())
                                           : counted.end();
    if (op == counted.end()) {
      continue;
    }
    bool all = true;
    for (const auto& name : counters) {
      all = all && args.contains(name) && args[name].is_number() &&
          args[name].get<double>() == (*op->second)["counters"][name].get<double>();
    }
    right += all;
  }
  json plain = readTrace(plainOut, nullptr);
  size_t plainKernels = 0, plainWithCounters = 0;
  for (const auto& ev : plain["traceEvents"]) {
    if (ev.value("ph", "") != "X" || ev.value("cat", "") != "kernel") {
      continue;
    }
    ++plainKernels;
    for (const auto& name : counters) {
      plainWithCounters += ev["args"].contains(name) ? 1 : 0;
    }
  }
  std::printf("workload: %s (metrics %s)\ntrace: %s\n", workload.c_str(), names.c_str(), out.c_str());
  std::printf("simulator kernels: %zu, counted: %zu; kernel events in kineto's trace: %zu, with every counter right: %zu\n",
              truthKernels, counted.size(), events, right);
  std::printf("the next trace, without metrics: %zu kernel events, %zu counter args\n", plainKernels,
              plainWithCounters);
  check(counted.size() == truthKernels, "the simulator counted every kernel of the metrics trace");
  check(events == counted.size() && right == events,
        "every counted kernel is in kineto's trace with each counter's true value");
  check(plainKernels > 0 && plainWithCounters == 0,
        "the next trace, which asks for no metrics, counts nothing");
  return failures == 0 ? 0 : 1;
}

} // namespace

int main(int argc, char** argv) {
  const bool metrics = argc == 5 && std::string(argv[3]) == "--metrics";
  if (argc != 3 && !metrics) {
    std::fprintf(stderr, "usage: dropin_trace WORKLOAD OUT.json [--metrics NAMES]\n");
    return 2;
  }
  const std::string workload = argv[1];
  const std::string out = argv[2];

  // What PyTorch does on a GPU machine: kineto with its GPU backend on.
  libkineto_init(/*cpuOnly=*/false, /*logOnError=*/true);
  libkineto::api().initProfilerIfRegistered();
  rocsim_set_marker_hook(&markerHook, nullptr);
  if (metrics) {
    return checkMetrics(workload, out, argv[4]);
  }

  using libkineto::ActivityType;
  std::vector<CpuOp> ops;
  if (!traceOnce(workload, out,
                 {ActivityType::CPU_OP, ActivityType::EXTERNAL_CORRELATION,
                  ActivityType::CONCURRENT_KERNEL, ActivityType::GPU_MEMCPY,
                  ActivityType::CUDA_RUNTIME},
                 "", ops)) {
    return 2;
  }

  std::string body;
  json doc = readTrace(out, &body);
  if (!doc.is_object()) {
    std::fprintf(stderr, "kineto wrote no valid JSON to %s\n", out.c_str());
    return 1;
  }
  char* truthText = rocsim_ground_truth_json();
  json truth = json::parse(truthText, nullptr, /*allow_exceptions=*/false);
  rocsim_free_string(truthText);

  std::map<uint64_t, const json*> byDispatch;
  std::map<std::pair<uint64_t, uint64_t>, int> truthPerNode;
  size_t truthGraphed = 0;
  for (const auto& op : truth["runs"][0]["ops"]) {
    if (op.value("kind", "") != "kernel") {
      continue;
    }
    byDispatch[op["dispatch_id"].get<uint64_t>()] = &op;
    if (op["graph_exec_id"].get<uint64_t>() != 0) {
      ++truthGraphed;
      ++truthPerNode[{op["exec_handle"].get<uint64_t>(), op["node_index"].get<uint64_t>()}];
    }
  }

  const CpuOp* graphOp = nullptr;
  for (const auto& op : ops) {
    if (op.name == "aten::graph_replay") {
      graphOp = &op;
    }
  }

  size_t kernels = 0, graphed = 0, withFields = 0, packedRight = 0, linked = 0;
  size_t linkedRight = 0, eagerLinked = 0, missingDispatch = 0;
  std::map<uint64_t, int> perKey;
  std::map<uint64_t, std::set<std::string>> namesPerKey;
  std::set<uint64_t> graphIds;
  for (const auto& ev : doc["traceEvents"]) {
    if (ev.value("ph", "") != "X" || ev.value("cat", "") != "kernel") {
      continue;
    }
    ++kernels;
    const json& args = ev["args"];
    auto it = args.contains("dispatch id")
        ? byDispatch.find(args["dispatch id"].get<uint64_t>())
        : byDispatch.end();
    if (it == byDispatch.end()) {
      ++missingDispatch;
      continue;
    }
    const json& op = *it->second;
    bool isGraph = op["graph_exec_id"].get<uint64_t>() != 0;
    if (!isGraph) {
      eagerLinked += args.contains("External id") ? 1 : 0;
      continue;
    }
    ++graphed;
    if (!(args.contains("graph id") && args.contains("graph node id") &&
          args["graph id"].is_number_unsigned() && args["graph node id"].is_number_unsigned())) {
      continue;
    }
    ++withFields;
    uint64_t gid = args["graph id"].get<uint64_t>();
    uint64_t nid = args["graph node id"].get<uint64_t>();
    graphIds.insert(gid);
    ++perKey[nid];
    namesPerKey[nid].insert(ev["name"].get<std::string>());
    packedRight += (nid >> 32) == gid && (nid & 0xffffffffu) == op["node_index"].get<uint64_t>();
    if (args.contains("External id")) {
      ++linked;
      linkedRight += graphOp != nullptr && args["External id"].get<int64_t>() == graphOp->id;
    }
  }
  // What PyTorch does: a regex over the text, bare digits only.
  std::regex nodeRe("\"graph node id\":\\s*(\\d+)");
  auto regexHits =
      std::distance(std::sregex_iterator(body.begin(), body.end(), nodeRe), std::sregex_iterator());

  int keysWithOneName = 0;
  for (const auto& [nid, names] : namesPerKey) {
    keysWithOneName += names.size() == 1;
  }
  std::set<int> countsPerKey;
  for (const auto& [nid, n] : perKey) {
    countsPerKey.insert(n);
  }

  std::printf("workload: %s\ntrace: %s\n", workload.c_str(), out.c_str());
  std::printf("kernels in kineto's trace: %zu (simulator ran %zu)\n", kernels, byDispatch.size());
  std::printf("graph kernels: %zu (simulator: %zu); with graph id and graph node id: %zu\n",
              graphed, truthGraphed, withFields);
  std::printf("PyTorch's regex \"graph node id\":\\s*(\\d+) matches: %ld\n", static_cast<long>(regexHits));
  std::printf("graph ids: %zu; graph node ids: %zu (simulator: %zu nodes)", graphIds.size(),
              perKey.size(), truthPerNode.size());
  for (int n : countsPerKey) {
    std::printf("; %d kernels per key", n);
  }
  std::printf("\n");
  std::printf("graph kernels with External id: %zu (CPU op \"aten::graph_replay\": %s)\n", linked,
              graphOp ? std::to_string(graphOp->id).c_str() : "none");

  check(kernels == byDispatch.size() && missingDispatch == 0, "every kernel the simulator ran is in kineto's trace");
  check(graphed == truthGraphed && withFields == graphed, "every graph kernel carries graph id and graph node id");
  check(static_cast<size_t>(regexHits) == withFields, "PyTorch's regex reads every graph node id");
  check(packedRight == withFields, "graph node id = (graph id << 32) | the true node's creation index");
  check(perKey.size() == truthPerNode.size() && keysWithOneName == static_cast<int>(perKey.size()),
        "one key per graph node, each naming one kernel");
  if (graphOp != nullptr) {
    check(linked == graphed && linkedRight == graphed,
          "every graph kernel links to the CPU op that launched it");
    check(eagerLinked == 0, "kernels launched outside the CPU op link to nothing");
  } else {
    check(linked == 0, "no CPU op, no External id");
  }
  return failures == 0 ? 0 : 1;
}
