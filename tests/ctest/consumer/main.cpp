// Links the face and the tool through the exported package and registers the
// child profiler with kineto; exits 0 when everything resolved and ran.
#include "kineto_rocm.h"
#include "kineto_rocm/RocmChildProfiler.h"

#include <libkineto.h>

#include <cstdio>

int main() {
  libkineto_init(/*cpuOnly=*/true, /*logOnError=*/true);
  if (kineto_rocm_register_kineto_profiler() != KINETO_ROCM_OK) {
    return 1;
  }
  auto& api = kineto_rocm::RocmActivityApi::singleton();
  // No simulator here: the tool must say why it collects nothing.
  const char* why = kineto_rocm_unavailable_reason();
  std::printf("available=%d reason=%s\n", api.isAvailable() ? 1 : 0, why ? why : "(none)");
  return api.isAvailable() == (why == nullptr) ? 0 : 2;
}
