// kineto-rocm's drop-in for kineto's libkineto/src/RocprofLogger.cpp: only
// what kineto's unmodified sources reference of RocprofLogger (init.cpp:
// ensureRegistered; RocprofActivity.h: opString). kineto's file defines a
// rocprofiler-sdk tool (rocprofiler_configure, its contexts and buffers);
// this one does not, so kineto-rocm's tool is the only one in the process.
#include "RocprofLogger.h"

#include "FaceGuard.h"
#include "kineto-rocm/src/bridge.rs.h"

#include <rocprofiler-sdk/buffer_tracing.h>
#include <rocprofiler-sdk/callback_tracing.h>

#include <atomic>
#include <string>

// kineto calls this from libkineto_init when GPU tracing is on: the SDK must
// configure the tool before the runtime's first use, or never will.
void RocprofLogger::ensureRegistered() {
  try {
    kineto_rocm::register_tool();
  } catch (const std::exception& e) {
    static std::atomic<bool> logged{false};
    if (!logged.exchange(true)) {
      kineto_rocm::logLine(std::string("kineto-rocm: collecting nothing: ") + e.what());
    }
  }
}

namespace {

std::string unknownOperation(rocprofiler_tracing_operation_t op) {
  return "<unknown operation:" + std::to_string(op) + ">";
}

} // namespace

std::string RocprofLogger::opString(
    rocprofiler_callback_tracing_kind_t kind,
    rocprofiler_tracing_operation_t op) {
  const char* name = nullptr;
  uint64_t length = 0;
  if (rocprofiler_query_callback_tracing_kind_operation_name(kind, op, &name, &length) !=
          ROCPROFILER_STATUS_SUCCESS ||
      name == nullptr) {
    return unknownOperation(op);
  }
  return std::string(name, length);
}

std::string RocprofLogger::opString(
    rocprofiler_buffer_tracing_kind_t kind,
    rocprofiler_tracing_operation_t op) {
  const char* name = nullptr;
  uint64_t length = 0;
  if (rocprofiler_query_buffer_tracing_kind_operation_name(kind, op, &name, &length) !=
          ROCPROFILER_STATUS_SUCCESS ||
      name == nullptr) {
    return unknownOperation(op);
  }
  return std::string(name, length);
}
