/*
 * kineto-rocm C ABI.
 *
 * The tool library exports rocprofiler_configure, so rocprofiler-sdk finds it
 * by symbol (a loaded library) or through ROCP_TOOL_LIBRARIES. These calls
 * drive a profiling session without kineto; kineto itself uses the C++ face
 * (RocmActivityApi, the child profiler). Every call is safe to make on a
 * machine without ROCm: it returns KINETO_ROCM_UNAVAILABLE and
 * kineto_rocm_unavailable_reason() says why.
 */
#ifndef KINETO_ROCM_H
#define KINETO_ROCM_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

enum kineto_rocm_status {
    KINETO_ROCM_OK = 0,
    KINETO_ROCM_UNAVAILABLE = 1, /* no rocprofiler-sdk: nothing collected */
    KINETO_ROCM_SDK_ERROR = 2,   /* the SDK returned an error status */
    KINETO_ROCM_USAGE_ERROR = 3, /* wrong order or bad argument */
    KINETO_ROCM_IO_ERROR = 4,    /* the trace file could not be written */
    KINETO_ROCM_INTERNAL_ERROR = 5, /* a bug (a caught panic); the call's
                                       result is lost, nothing else */
    KINETO_ROCM_REFUSED = 6,     /* kineto_rocm_register_exclusive: kineto was
                                    initialised before us, so its built-in GPU
                                    tracer may collect too; nothing registered */
};

/* Starts a trace window (configuring the SDK first if it has not been). */
int kineto_rocm_start(void);
/* Stops the current window; records still in flight land in it. */
int kineto_rocm_stop(void);
/* Counts these hardware counters (comma-separated SDK names, e.g.
 * "SQ_WAVES,GRBM_COUNT") on every dispatch from now on, in place of any
 * group asked for before; kernel events carry their values. */
int kineto_rocm_request_counters(const char* names);
/* Stops counting; values already counted stay. */
int kineto_rocm_release_counters(void);
/* Application mode's dispatch thread trace (KINETO_ROCM_THREAD_TRACE set at
 * initialisation, no kernel-replay plan; on from the start): non-zero traces
 * every dispatch the kernel filters select from now on, 0 none. Without the
 * trace's settings it changes nothing. */
int kineto_rocm_set_thread_trace(int on);
/* Waits (bounded) for stopped windows to complete and writes them as one
 * kineto-format chrome trace to `path`. */
int kineto_rocm_write_trace(const char* path);
/* The same windows to `count` files: paths[i] in formats[i], 0 = kineto's
 * JSON, 1 = Perfetto protobuf (.pftrace) gzip-compressed at gzip_level 1
 * (fast) to 9 (smallest), or uncompressed at 0. */
int kineto_rocm_write_traces(const char* const* paths, const int* formats, int count,
                             int gzip_level);
/* CPU-op correlation ids, as kineto pushes them: domain 0 = default, 1 = user. */
void kineto_rocm_push_correlation_id(uint64_t id, int domain);
void kineto_rocm_pop_correlation_id(int domain);
/* NULL when collecting is possible; else a static line saying why not. */
const char* kineto_rocm_unavailable_reason(void);
/* Registers the kineto child profiler with libkineto::api() (C++ face). */
int kineto_rocm_register_kineto_profiler(void);
/* Makes kineto-rocm the only GPU collector (C++ face): when kineto is not
 * initialised yet, initialises it CPU-only (its built-in GPU tracer stays
 * off for the process) and registers the child profiler; returns
 * KINETO_ROCM_OK. When something initialised kineto earlier, registers
 * nothing, writes one line saying what to do and returns
 * KINETO_ROCM_REFUSED. kineto_rocm_registration_message() returns that line
 * (NULL after a success), valid until the next kineto_rocm_register_exclusive(). */
int kineto_rocm_register_exclusive(void);
const char* kineto_rocm_registration_message(void);

#ifdef __cplusplus
}
#endif

#endif
