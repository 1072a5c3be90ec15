// The SDK initialised before kineto-rocm was loaded. This program does not
// link the face or the tool: it loads the simulator, runs a workload (the
// runtime's first use: the SDK initialises and finds no kineto-rocm), and
// only then dlopens the face, registers the child profiler and profiles with
// kineto. The SDK will never configure a tool loaded after it initialised;
// kineto-rocm must say so, with what to do, in the log and in the trace.
#include <libkineto.h>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <dlfcn.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>

namespace {

const char* kExpected =
    "unavailable: the SDK initialised before kineto-rocm was loaded; load it before the first HIP call or list it in ROCP_TOOL_LIBRARIES";

template <typename F>
F sym(void* handle, const char* name) {
  return reinterpret_cast<F>(dlsym(handle, name));
}

std::string runWorkload(void* sim, const std::string& path) {
  using RunFile = int (*)(const char*, const char*, char**);
  using Wait = int (*)(uint64_t);
  auto run = sym<RunFile>(sim, "rocsim_run_workload_file");
  auto wait = sym<Wait>(sim, "rocsim_wait_idle");
  if (run == nullptr || wait == nullptr) {
    return "the simulator lacks rocsim_run_workload_file/rocsim_wait_idle";
  }
  char* err = nullptr;
  if (run(path.c_str(), nullptr, &err) != 0) {
    return std::string("workload failed: ") + (err ? err : "?");
  }
  wait(10'000'000'000ull);
  return "";
}

// Everything written to fd 2 while `f` runs (echoed afterwards).
template <typename F>
std::string captureStderr(F&& f) {
  std::fflush(stderr);
  char tmpl[] = "/tmp/kr-late-XXXXXX";
  int fd = mkstemp(tmpl);
  int saved = dup(2);
  dup2(fd, 2);
  f();
  std::fflush(stderr);
  dup2(saved, 2);
  close(saved);
  close(fd);
  std::ifstream in(tmpl);
  std::stringstream ss;
  ss << in.rdbuf();
  unlink(tmpl);
  std::fwrite(ss.str().data(), 1, ss.str().size(), stderr);
  return ss.str();
}

} // namespace

TEST(LateSdk, ReportsUnavailableWithWhatToDo) {
  void* sim = dlopen(KINETO_ROCM_SIM_LIB, RTLD_NOW | RTLD_GLOBAL);
  ASSERT_NE(sim, nullptr) << dlerror();
  const std::string workload = std::string(KINETO_ROCM_TEST_WORKLOADS) + "/eager-sync.json";
  ASSERT_EQ(runWorkload(sim, workload), "");
  using IsInitialized = int (*)(int*);
  int initialized = 0;
  sym<IsInitialized>(sim, "rocprofiler_is_initialized")(&initialized);
  ASSERT_EQ(initialized, 1) << "the SDK should have initialised at the first workload";

  libkineto_init(/*cpuOnly=*/true, /*logOnError=*/true);
  void* face = dlopen(KINETO_ROCM_FACE_LIB, RTLD_NOW | RTLD_GLOBAL);
  ASSERT_NE(face, nullptr) << dlerror();
  using Register = int (*)();
  ASSERT_EQ(sym<Register>(face, "kineto_rocm_register_kineto_profiler")(), 0);
  libkineto::api().initProfilerIfRegistered();

  const std::string path = std::string(KINETO_ROCM_TRACE_DIR) + "/late-sdk.json";
  std::string err = captureStderr([&] {
    auto& prof = libkineto::api().activityProfiler();
    prof.prepareTrace(
        {libkineto::ActivityType::CPU_OP, libkineto::ActivityType::CONCURRENT_KERNEL,
         libkineto::ActivityType::GPU_MEMCPY, libkineto::ActivityType::CUDA_RUNTIME},
        "");
    prof.startTrace();
    EXPECT_EQ(runWorkload(sim, workload), "");
    auto trace = prof.stopTrace();
    ASSERT_NE(trace, nullptr);
    trace->save(path);
  });

  int lines = 0;
  std::string line;
  std::istringstream in(err);
  for (std::string l; std::getline(in, l);) {
    if (l.find("kineto-rocm") != std::string::npos) {
      ++lines;
      line = l;
    }
  }
  EXPECT_EQ(lines, 1) << "stderr was:\n" << err;
  EXPECT_NE(line.find(kExpected), std::string::npos) << line;

  std::ifstream file(path);
  auto doc = nlohmann::json::parse(file, nullptr, /*allow_exceptions=*/false);
  ASSERT_TRUE(doc.is_object()) << path;
  for (const auto& ev : doc["traceEvents"]) {
    EXPECT_NE(ev.value("cat", ""), "kernel") << "kernels collected without a configured tool?";
  }
  ASSERT_TRUE(doc.contains("kineto_rocm")) << path;
  std::string status = doc["kineto_rocm"].value("status", "");
  EXPECT_NE(status.find(kExpected), std::string::npos) << status;
}
