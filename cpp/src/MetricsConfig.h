// What a kineto config asks of the hardware counters, read the same way by
// both faces (the child profiler and the drop-in RocprofActivityApi):
// PyTorch writes its experimental config's profiler_metrics as
// CUPTI_PROFILER_METRICS, a comma-separated list of counter names, into the
// config text it hands kineto (torch/csrc/autograd/profiler_kineto.cpp).
#pragma once

#include <string>

namespace kineto_rocm {

// The counters `configText` names in CUPTI_PROFILER_METRICS (the last such
// line wins, as kineto's parser keeps the last value); empty when none.
inline std::string countersAskedFor(const std::string& configText) {
  auto trim = [](const std::string& s) {
    size_t b = s.find_first_not_of(" \t\r");
    size_t e = s.find_last_not_of(" \t\r");
    return b == std::string::npos ? std::string() : s.substr(b, e - b + 1);
  };
  std::string out;
  size_t at = 0;
  while (at <= configText.size()) {
    size_t end = configText.find('\n', at);
    if (end == std::string::npos) {
      end = configText.size();
    }
    std::string line = configText.substr(at, end - at);
    at = end + 1;
    size_t eq = line.find('=');
    if (eq != std::string::npos && trim(line.substr(0, eq)) == "CUPTI_PROFILER_METRICS") {
      out = trim(line.substr(eq + 1));
    }
  }
  return out;
}

} // namespace kineto_rocm
