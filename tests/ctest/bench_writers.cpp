// Trace writing, side by side in one process: kineto's ChromeTraceLogger
// (torch 2.11's libkineto, fed through the C++ face, whose
// cpp/src/ActivityConvert.cpp turns the tool's window into kineto
// activities) against our own JSON writer (src/output/kineto_json.rs), on
// the same workload. A benchmark, not a test (it is built only when asked
// for and never registered with ctest): scripts/bench-writers.sh builds it,
// runs it and prints the ratio.
//
//   kineto_rocm_bench_writers WORKLOAD OUT_DIR [REPS]
//
// kineto: REPS traces of WORKLOAD (prepareTrace, startTrace, the workload,
// stopTrace, where the face converts the window), each saved once to
// OUT_DIR/kineto.json as PyTorch saves a trace: save() replays the trace's
// activities into a ChromeTraceLogger, and only save() is timed.
// ours: one tool window of WORKLOAD (kineto_rocm_start/stop, no kineto
// session), written REPS times to OUT_DIR/ours.json by
// kineto_rocm_write_traces. The window is finished before the first write,
// and the tool times each write itself (src/output/mod.rs logs it at info:
// KINETO_ROCM_LOG=info), so only writing is timed.
//
// The workload runs in virtual time without jitter, so each run produces
// the same events. Prints one JSON object: each writer's seconds per run and
// bytes; the script checks that both files hold the same events.
#include "harness.h"

#include "kineto_rocm.h"

#include <libkineto.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

namespace {

constexpr const char* kRunOptions =
    R"({"virtual_time": true, "jitter_ns": 0, "record_truth": false})";

[[noreturn]] void fail(const std::string& what) {
  std::cerr << "kineto_rocm_bench_writers: " << what << "\n";
  std::exit(1);
}

void runWorkload(const std::string& workload) {
  std::string err = kr_test::runWorkload(workload, kRunOptions);
  if (!err.empty()) {
    fail(err);
  }
  if (!kr_test::waitIdle(600'000'000'000ull)) {
    fail("the simulator did not go idle");
  }
}

std::string list(const std::vector<double>& values) {
  std::ostringstream out;
  out << "[";
  for (size_t i = 0; i < values.size(); ++i) {
    out << (i ? ", " : "") << values[i];
  }
  out << "]";
  return out.str();
}

} // namespace

int main(int argc, char** argv) {
  if (argc < 3) {
    fail("usage: kineto_rocm_bench_writers WORKLOAD OUT_DIR [REPS]");
  }
  const std::string workload = argv[1];
  const std::string dir = argv[2];
  const int reps = argc > 3 ? std::atoi(argv[3]) : 3;
  if (reps < 1) {
    fail("REPS must be at least 1");
  }
  kr_test::loadSimulatorUnlessDisabled();
  if (!kr_test::simLoaded()) {
    fail(kr_test::simLoadError());
  }
  kr_test::initKineto();
  if (!kr_test::registerChild()) {
    fail("kineto_rocm_register_kineto_profiler failed");
  }

  using libkineto::ActivityType;
  const std::set<ActivityType> types = {
      ActivityType::CONCURRENT_KERNEL, ActivityType::GPU_MEMCPY, ActivityType::GPU_MEMSET,
      ActivityType::CUDA_RUNTIME,      ActivityType::CUDA_SYNC,  ActivityType::CUDA_EVENT,
      ActivityType::OVERHEAD};
  const std::string kinetoPath = dir + "/kineto.json";
  std::vector<double> kinetoSeconds;
  for (int rep = 0; rep < reps; ++rep) {
    std::cerr << "kineto: trace " << rep + 1 << " of " << reps << " ...\n";
    auto& profiler = libkineto::api().activityProfiler();
    profiler.prepareTrace(types, "");
    profiler.startTrace();
    runWorkload(workload);
    auto trace = profiler.stopTrace();
    if (!trace) {
      fail("stopTrace returned no trace");
    }
    auto started = std::chrono::steady_clock::now();
    trace->save(kinetoPath);
    kinetoSeconds.push_back(
        std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count());
  }
  const auto kinetoBytes = std::filesystem::file_size(kinetoPath);

  std::cerr << "ours: one window, written " << reps << " times ...\n";
  if (kineto_rocm_start() != KINETO_ROCM_OK) {
    fail("kineto_rocm_start failed");
  }
  runWorkload(workload);
  if (kineto_rocm_stop() != KINETO_ROCM_OK) {
    fail("kineto_rocm_stop failed");
  }
  const std::string oursPath = dir + "/ours.json";
  const std::vector<const char*> paths(reps, oursPath.c_str());
  const std::vector<int> formats(reps, 0);
  int status = 0;
  std::string log = kr_test::captureStderr([&] {
    status = kineto_rocm_write_traces(paths.data(), formats.data(), reps, 0);
  });
  if (status != KINETO_ROCM_OK) {
    fail("kineto_rocm_write_traces failed: " + log);
  }
  // "kineto-rocm: wrote PATH (Json): BYTES bytes, KERNELS kernels, in SECONDS s"
  const std::regex line(R"(wrote \S+ \(Json\): (\d+) bytes, \d+ kernels, in ([\d.]+) s)");
  std::vector<double> oursSeconds;
  unsigned long long oursBytes = 0;
  for (std::sregex_iterator m(log.begin(), log.end(), line), end; m != end; ++m) {
    oursBytes = std::stoull((*m)[1]);
    oursSeconds.push_back(std::stod((*m)[2]));
  }
  if (static_cast<int>(oursSeconds.size()) != reps) {
    fail("expected " + std::to_string(reps) +
         " write lines from the tool (is KINETO_ROCM_LOG=info set?), got:\n" + log);
  }

  std::cout << "{\"kineto\": {\"path\": \"" << kinetoPath << "\", \"bytes\": " << kinetoBytes
            << ", \"seconds\": " << list(kinetoSeconds) << "}, \"ours\": {\"path\": \""
            << oursPath << "\", \"bytes\": " << oursBytes << ", \"seconds\": "
            << list(oursSeconds) << "}}" << std::endl;
  return 0;
}
