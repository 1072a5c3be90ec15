// The face inside a host it must never take down, speaking the same
// vocabulary as our own trace writer. Each test runs in
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
  if (std::getenv("KINETO_ROCM_TEST_PANIC_FINISHING_WINDOW") == nullptr) {
    GTEST_SKIP() << "run with KINETO_ROCM_TEST_PANIC_FINISHING_WINDOW=1 (ctest does)";
  }
  ASSERT_TRUE(kr_test::simLoaded()) << kr_test::simLoadError();
  ASSERT_TRUE(kr_test::registerChild());
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
  EXPECT_EQ(second.events("kernel").size(), 9u);
  EXPECT_EQ(second.events("gpu_memcpy").size(), 5u);
  EXPECT_EQ(second.events("cpu_op").size(), 1u);
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
        (cat != "kernel" && cat != "gpu_memcpy" && cat != "cuda_runtime")) {
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

} // namespace

// One vocabulary: the same workloads through kineto's writer (the C++ face)
// and through our own writer (kineto_rocm_write_trace) give every event the
// same args keys with the same JSON value types.
TEST(Writers, KinetoAndOurWriterPutTheSameArgsOnEveryEvent) {
  ASSERT_TRUE(kr_test::simLoaded()) << kr_test::simLoadError();
  ASSERT_TRUE(kr_test::registerChild());
  const std::vector<std::string> workloads = {"graph-linked.json", "eager-sync.json"};
  Trace viaKineto = traceOf("writers-kineto", workloads);

  // Our writer, no kineto session: CPU op ids go straight to the core.
  kr_test::markersPushThroughApi(true);
  ASSERT_EQ(kineto_rocm_start(), KINETO_ROCM_OK);
  for (const auto& w : workloads) {
    EXPECT_EQ(kr_test::runWorkload(kr_test::workload(w)), "");
  }
  kr_test::waitIdle();
  ASSERT_EQ(kineto_rocm_stop(), KINETO_ROCM_OK);
  std::string path = viaKineto.path + ".ours.json";
  ASSERT_EQ(kineto_rocm_write_trace(path.c_str()), KINETO_ROCM_OK);
  kr_test::markersPushThroughApi(false);
  std::ifstream in(path);
  json ours = json::parse(in, nullptr, /*allow_exceptions=*/false);
  ASSERT_TRUE(ours.is_object()) << path;

  Signatures a = signatures(viaKineto.doc);
  Signatures b = signatures(ours);
  size_t events = 0;
  for (const auto& [what, sigs] : a) {
    events += sigs.size();
  }
  // 12 graph kernels + 3 eager + 9, 3 graph copies + 5, and their calls.
  EXPECT_GE(events, 24u + 8u + 20u);
  for (const auto& [what, sigs] : a) {
    auto it = b.find(what);
    ASSERT_NE(it, b.end()) << what.first << " " << what.second << " only in kineto's trace";
    EXPECT_EQ(sigs, it->second) << what.first << " " << what.second;
  }
  for (const auto& [what, sigs] : b) {
    EXPECT_TRUE(a.count(what)) << what.first << " " << what.second << " only in our trace";
  }
}
