//! What a user asks of the hardware counters, before anything runs.
//!
//! Why its own crate: the job file's rules (seed 004, rocprofv3's
//! `job_replay_mode`) and the kernel-replay pass plan decide what a run
//! collects, and every one of them must be testable without an SDK, a
//! simulator or a GPU. Nothing here does I/O beyond reading the job file.
//!
//! - [`schema`]: the job file's fields, as serde reads them (JSON or YAML).
//! - [`load`]: reading a file, with errors naming the file and the field.
//! - [`job`]: one job checked: exactly one service, counters or the thread
//!   trace, and its own run options.
//! - [`fold`](mod@fold): how jobs become runs: each job a profiler step
//!   (`application`, the default) or all jobs the passes of one
//!   kernel-replay run (`kernel`), and every combination refused.
//! - [`iterations`]: `kernel_iteration_range`, which launches of a kernel
//!   are profiled.
//! - [`plan`]: which pass collects which counter group, and where the
//!   thread-trace pass goes.
//! - [`agent_plan`]: one agent's passes, skipping the groups it cannot
//!   collect and saying so.
//! - [`describe`]: the runs and passes as a user reads them.
pub mod agent_plan;
pub mod describe;
pub mod error;
pub mod fold;
pub mod iterations;
pub mod job;
pub mod load;
pub mod plan;
pub mod schema;

pub use agent_plan::{AgentPlan, SkippedGroup};
pub use error::{JobError, JobErrors};
pub use fold::{fold, CommandLine, Plan, Replay, Run, RunCollection};
pub use iterations::IterationRange;
pub use job::{Job, RunOptions, Service, ThreadTrace};
pub use load::{load_file, parse_str, Format};
pub use plan::{thread_trace_pass_index, PassKind, PassLayout};
pub use schema::{JobFields, JobFile, JobReplayMode, ReplayMode};
