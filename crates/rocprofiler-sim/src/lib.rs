//! rocprofiler-sim: a simulated HIP runtime and rocprofiler-sdk.
//!
//! Built as `librocprofiler_sim.so`, it exports the SDK's C entry points
//! (`rocprofiler_*`) over a model of the HIP runtime, plus a small driver ABI
//! (`rocsim_*`, see [`driver`]) that runs JSON workloads ([`workload`]) and
//! reports the ground truth ([`truth`]), and the few HIP runtime calls kineto's
//! ROCm backend makes ([`hip`]). A process loads ONE copy of it with
//! dlopen(RTLD_NOW | RTLD_GLOBAL) ([`host`]); the model and SDK state are
//! crate-private so no host can run a second, in-process copy by accident.
//!
//! Layout: [`workload`] (format, parsing, validation: pure), [`model`] (the
//! submission model and its parameters), `runtime` (HIP calls, graphs,
//! execs, threads, and the `ideal` and `rocm` submission models), `sdk`
//! (registration, contexts, buffers, completion, correlation, tracing, the
//! C entry points), [`driver`] (rocsim_* C ABI), [`host`] (the loader),
//! [`truth`] (what really happened).
#![deny(unsafe_op_in_unsafe_fn)]

pub mod driver;
pub mod hip;
pub mod host;
pub mod model;
pub mod options;
pub(crate) mod runtime;
pub(crate) mod sdk;
pub mod truth;
pub mod workload;
