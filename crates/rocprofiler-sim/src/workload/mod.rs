//! The workload file format (documented in docs/workload-format.md).
//!
//! Parsing is pure (no simulator state), so hosts and tests may use it
//! directly. Every error names the file, the path to the offending field and
//! what was expected (the checks serde cannot express are in `validate`).
use crate::model::{RocmParams, SubmissionModel};
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, HashSet};
use std::fmt;

pub mod shipped;
mod validate;

/// A simulated rocprofiler-sdk version, written `"MAJOR.MINOR.PATCH"`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(try_from = "String", into = "String")]
pub struct SdkVersion {
    pub major: u32,
    pub minor: u32,
    pub patch: u32,
}

impl SdkVersion {
    pub const V1_0: SdkVersion = SdkVersion {
        major: 1,
        minor: 0,
        patch: 0,
    };
    pub const V1_3: SdkVersion = SdkVersion {
        major: 1,
        minor: 3,
        patch: 0,
    };

    /// `10000 * major + 100 * minor + patch`, as the SDK encodes it.
    pub fn encoded(self) -> u32 {
        rocprofiler_sys::encode_version(self.major, self.minor, self.patch)
    }

    pub fn from_encoded(v: u32) -> SdkVersion {
        SdkVersion {
            major: v / 10000,
            minor: (v / 100) % 100,
            patch: v % 100,
        }
    }

    /// Does this version have the HIP_GRAPH tracing domain (1.3.0+)?
    pub fn has_hip_graph(self) -> bool {
        self.encoded() >= rocprofiler_sys::HIP_GRAPH_DOMAIN_VERSION
    }
}

impl TryFrom<String> for SdkVersion {
    type Error = String;
    fn try_from(s: String) -> Result<Self, String> {
        s.parse()
    }
}

impl std::str::FromStr for SdkVersion {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        let bad =
            || format!("expected a version \"MAJOR.MINOR.PATCH\" such as \"1.3.0\", got {s:?}");
        let parts: Vec<&str> = s.split('.').collect();
        if parts.len() != 3 {
            return Err(bad());
        }
        let n = |p: &str, max: u32| p.parse::<u32>().ok().filter(|v| *v <= max);
        match (n(parts[0], 400), n(parts[1], 99), n(parts[2], 99)) {
            (Some(major), Some(minor), Some(patch)) => Ok(SdkVersion {
                major,
                minor,
                patch,
            }),
            _ => Err(bad()),
        }
    }
}

impl From<SdkVersion> for String {
    fn from(v: SdkVersion) -> String {
        v.to_string()
    }
}

impl fmt::Display for SdkVersion {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}.{}.{}", self.major, self.minor, self.patch)
    }
}

/// A whole workload file.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Workload {
    /// The simulated SDK version; HIP_GRAPH exists from 1.3.0.
    pub sdk_version: SdkVersion,
    /// Number of GPU agents (devices 0..devices).
    #[serde(default = "one")]
    pub devices: u32,
    /// HW queues per device; the GPU_MAX_HW_QUEUES environment variable
    /// overrides it, a run option overrides both; default 4 (HIP's default).
    #[serde(default)]
    pub hw_queues_per_device: Option<u32>,
    /// Simulated durations of kernels and copies.
    #[serde(default)]
    pub durations: Durations,
    /// Graph templates, each a DAG of kernel and memcpy nodes.
    #[serde(default)]
    pub graphs: Vec<Graph>,
    /// Hold every thread at a barrier after spawning so they start together.
    #[serde(default = "yes")]
    pub start_barrier: bool,
    /// Application threads and their operation lists.
    pub threads: Vec<Thread>,
    /// How work reaches the simulated GPU; the run option overrides it.
    #[serde(default)]
    pub submission_model: SubmissionModel,
    /// Parameters of the `rocm` model (each also read from its environment
    /// variable; run options override both).
    #[serde(default)]
    pub rocm: RocmParams,
    /// Execs instantiated on the run's setup thread before the application
    /// threads start; any thread may launch them by name.
    #[serde(default)]
    pub shared_execs: Vec<SharedExec>,
}

/// An exec every thread may launch (a thread-local exec of the same name
/// shadows it); no thread may update or destroy it.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SharedExec {
    pub name: String,
    pub graph: String,
    #[serde(default)]
    pub device: u32,
}

fn one() -> u32 {
    1
}
fn yes() -> bool {
    true
}
fn one_u64() -> u64 {
    1
}
fn is_zero(v: &u64) -> bool {
    *v == 0
}

/// Simulated execution time of device work.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Durations {
    /// Duration of a kernel not listed in `kernel_ns`.
    #[serde(default = "default_kernel_ns")]
    pub default_kernel_ns: u64,
    /// Per kernel-name durations.
    #[serde(default)]
    pub kernel_ns: BTreeMap<String, u64>,
    /// Copy duration = `memcpy_base_ns + bytes / memcpy_bytes_per_ns`.
    #[serde(default = "default_memcpy_base_ns")]
    pub memcpy_base_ns: u64,
    #[serde(default = "default_memcpy_bw")]
    pub memcpy_bytes_per_ns: f64,
}

fn default_kernel_ns() -> u64 {
    4_000
}
fn default_memcpy_base_ns() -> u64 {
    1_000
}
fn default_memcpy_bw() -> f64 {
    16.0
}

impl Default for Durations {
    fn default() -> Self {
        Durations {
            default_kernel_ns: default_kernel_ns(),
            kernel_ns: BTreeMap::new(),
            memcpy_base_ns: default_memcpy_base_ns(),
            memcpy_bytes_per_ns: default_memcpy_bw(),
        }
    }
}

impl Durations {
    pub fn kernel(&self, name: &str) -> u64 {
        self.kernel_ns
            .get(name)
            .copied()
            .unwrap_or(self.default_kernel_ns)
            .max(1)
    }
    pub fn memcpy(&self, bytes: u64) -> u64 {
        let bw = if self.memcpy_bytes_per_ns > 0.0 {
            self.memcpy_bytes_per_ns
        } else {
            default_memcpy_bw()
        };
        (self.memcpy_base_ns + (bytes as f64 / bw) as u64).max(1)
    }
}

/// A graph template (what hipGraphCreate + hipGraphAdd*Node build).
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Graph {
    pub name: String,
    /// Nodes in creation order; a node's `deps` name earlier nodes only, as a
    /// dependency must exist when hipGraphAdd*Node is called.
    pub nodes: Vec<Node>,
}

/// One graph node: exactly one of `kernel`, `memcpy`, `memset`, `host`,
/// `empty`, `event_record` or `event_wait`.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Node {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kernel: Option<String>,
    /// Kernel nodes: workgroups per dimension (default [256, 1, 1]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub grid: Option<[u32; 3]>,
    /// Kernel nodes: work-items per workgroup (default [256, 1, 1]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub block: Option<[u32; 3]>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub memcpy: Option<Memcpy>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub memset: Option<Memset>,
    /// A host node (hipGraphAddHostNode): a host function of this many
    /// microseconds the graph waits for.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub host: Option<HostFn>,
    /// An empty node (hipGraphAddEmptyNode): only a dependency point.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub empty: bool,
    /// An event-record node (hipGraphAddEventRecordNode) of the graph's
    /// event of this name: each replay records it once the node's
    /// dependencies have run. The graph's events are created (hipEventCreate)
    /// when the graph is built.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub event_record: Option<String>,
    /// An event-wait node (hipGraphAddEventWaitNode): the replay's later
    /// nodes wait for the last record of the graph's event of this name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub event_wait: Option<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub deps: Vec<usize>,
}

/// A host function's run time.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct HostFn {
    /// How long the function runs, in microseconds.
    pub us: u64,
}

/// What a graph node does.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NodeWork<'a> {
    Kernel {
        name: &'a str,
        grid: [u32; 3],
        block: [u32; 3],
    },
    Memcpy(Memcpy),
    Memset(Memset),
    Host(HostFn),
    Empty,
    /// The graph's event of this name.
    EventRecord(&'a str),
    EventWait(&'a str),
}

impl NodeWork<'_> {
    /// Whether the node is device work (a kernel, a copy or a memset), not
    /// a host function or a marker.
    pub fn dispatches(&self) -> bool {
        matches!(
            self,
            NodeWork::Kernel { .. } | NodeWork::Memcpy(_) | NodeWork::Memset(_)
        )
    }
}

/// The default launch geometry of a kernel: [256, 1, 1] both ways.
pub const DEFAULT_DIM: [u32; 3] = [256, 1, 1];

impl Node {
    /// The node's work (validated: exactly one kind).
    pub fn work(&self) -> NodeWork<'_> {
        match (&self.kernel, self.memcpy, self.memset, self.host) {
            (Some(k), ..) => NodeWork::Kernel {
                name: k,
                grid: self.grid.unwrap_or(DEFAULT_DIM),
                block: self.block.unwrap_or(DEFAULT_DIM),
            },
            (None, Some(m), ..) => NodeWork::Memcpy(m),
            (None, None, Some(m), _) => NodeWork::Memset(m),
            (None, None, None, Some(h)) => NodeWork::Host(h),
            (None, None, None, None) => match (&self.event_record, &self.event_wait) {
                (Some(e), _) => NodeWork::EventRecord(e),
                (None, Some(e)) => NodeWork::EventWait(e),
                (None, None) => NodeWork::Empty,
            },
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Memcpy {
    pub bytes: u64,
    pub direction: Direction,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Memset {
    pub bytes: u64,
    /// The byte value written.
    #[serde(default)]
    pub value: u32,
    /// Where the fill starts, in bytes past the start of its (16-byte
    /// aligned) allocation: an unaligned start costs HIP a dispatch of its
    /// own (see `runtime::work::fill`).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub offset: u64,
}

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Direction {
    #[default]
    HostToHost,
    HostToDevice,
    DeviceToHost,
    DeviceToDevice,
}

impl Direction {
    /// `rocprofiler_memory_copy_operation_t` value.
    pub fn sdk_operation(self) -> u32 {
        match self {
            Direction::HostToHost => 1,
            Direction::HostToDevice => 2,
            Direction::DeviceToHost => 3,
            Direction::DeviceToDevice => 4,
        }
    }
    /// `hipMemcpyKind` value.
    pub fn hip_kind(self) -> i32 {
        match self {
            Direction::HostToHost => 0,
            Direction::HostToDevice => 1,
            Direction::DeviceToHost => 2,
            Direction::DeviceToDevice => 3,
        }
    }
}

/// One application thread.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Thread {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    pub ops: Vec<Op>,
}

/// One operation of a thread; stream and exec names are scoped to the thread.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", deny_unknown_fields)]
pub enum Op {
    /// hipStreamCreate on `device`.
    CreateStream {
        name: String,
        #[serde(default)]
        device: u32,
    },
    /// hipStreamDestroy.
    DestroyStream { name: String },
    /// hipGraphInstantiate of graph `graph`, the exec named `as`.
    Instantiate {
        graph: String,
        #[serde(rename = "as")]
        exec: String,
        #[serde(default)]
        device: u32,
    },
    /// hipGraphLaunch of `exec` on `stream`, `times` times.
    Launch {
        exec: String,
        stream: String,
        #[serde(default = "one_u64")]
        times: u64,
    },
    /// hipGraphExecUpdate of `exec` to the nodes of `graph`.
    Update { exec: String, graph: String },
    /// hipGraphExecDestroy.
    Destroy { exec: String },
    /// hipLaunchKernel of kernel `name` on `stream`, `times` times.
    Kernel {
        name: String,
        stream: String,
        #[serde(default = "one_u64")]
        times: u64,
        /// Workgroups per dimension (default [256, 1, 1]).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        grid: Option<[u32; 3]>,
        /// Work-items per workgroup (default [256, 1, 1]).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        block: Option<[u32; 3]>,
    },
    /// hipMemcpyAsync on `stream`, `times` times.
    Memcpy {
        bytes: u64,
        direction: Direction,
        stream: String,
        #[serde(default = "one_u64")]
        times: u64,
    },
    /// hipMemsetAsync of `bytes` bytes to `value` on `stream`, `times` times,
    /// `offset` bytes past the start of an allocation.
    Memset {
        bytes: u64,
        #[serde(default)]
        value: u32,
        #[serde(default)]
        offset: u64,
        stream: String,
        #[serde(default = "one_u64")]
        times: u64,
    },
    /// The thread idles for `us` microseconds, outside any HIP call.
    Sleep { us: u64 },
    /// A CPU-op marker: calls the host's marker hook (if any) with PUSH and
    /// the name; the tool may link device work to it.
    PushMarker { name: String },
    /// Calls the marker hook with POP.
    PopMarker {},
    /// hipMemcpyPeerAsync of `bytes` from device `src_device` to
    /// `dst_device`, issued on `stream`, `times` times.
    MemcpyPeer {
        bytes: u64,
        src_device: u32,
        dst_device: u32,
        stream: String,
        #[serde(default = "one_u64")]
        times: u64,
    },
    /// hipEventCreate: an event named `name` (thread-scoped).
    CreateEvent { name: String },
    /// hipEventRecord of `event` on `stream`.
    RecordEvent { event: String, stream: String },
    /// hipStreamWaitEvent: `stream` waits for `event`'s last record.
    WaitEvent { stream: String, event: String },
    /// hipEventSynchronize: the thread waits for `event`.
    SynchronizeEvent { event: String },
    /// hipStreamSynchronize: the thread waits for `stream`'s work.
    SynchronizeStream { stream: String },
    /// hipSetDevice(`device`), then hipDeviceSynchronize: the thread waits
    /// for every stream of the device.
    SynchronizeDevice {
        #[serde(default)]
        device: u32,
    },
    /// hipLaunchHostFunc on `stream`: a host function of `us` microseconds
    /// the stream waits for.
    HostFunc {
        stream: String,
        us: u64,
        #[serde(default = "one_u64")]
        times: u64,
    },
    /// roctxMarkA(`message`).
    RoctxMark { message: String },
    /// roctxRangePushA(`message`).
    RoctxPush { message: String },
    /// roctxRangePop().
    RoctxPop {},
    /// roctxRangeStartA(`message`); the range is named `as` for its stop.
    RoctxStart {
        message: String,
        #[serde(rename = "as")]
        range: String,
    },
    /// roctxRangeStop of the range started `as` this name.
    RoctxStop { range: String },
}

/// Why a workload was rejected: which file, where in it, and what was expected.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct WorkloadError {
    pub file: String,
    /// Path to the field, e.g. `threads[0].ops[2].launch.times`; `.` for the root.
    pub path: String,
    pub message: String,
}

impl fmt::Display for WorkloadError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "workload {}: at `{}`: {}",
            self.file, self.path, self.message
        )
    }
}

impl std::error::Error for WorkloadError {}

impl Workload {
    /// Parses and validates a workload; `file` names it in errors.
    pub fn parse(text: &str, file: &str) -> Result<Workload, WorkloadError> {
        let de = &mut serde_json::Deserializer::from_str(text);
        let workload: Workload = serde_path_to_error::deserialize(de).map_err(|e| {
            let path = e.path().to_string();
            WorkloadError {
                file: file.to_string(),
                path,
                message: e.into_inner().to_string(),
            }
        })?;
        workload
            .validate()
            .map_err(|(path, message)| WorkloadError {
                file: file.to_string(),
                path,
                message,
            })?;
        Ok(workload)
    }

    /// Reads, parses and validates a workload file.
    pub fn load(path: &std::path::Path) -> Result<Workload, WorkloadError> {
        let file = path.display().to_string();
        let text = std::fs::read_to_string(path).map_err(|e| WorkloadError {
            file: file.clone(),
            path: ".".into(),
            message: format!("cannot read the file: {e}"),
        })?;
        Workload::parse(&text, &file)
    }

    pub fn graph_index(&self, name: &str) -> Option<usize> {
        self.graphs.iter().position(|g| g.name == name)
    }

    /// Every kernel name, in order of first appearance (graphs first, then
    /// eager launches by thread).
    pub fn kernel_names(&self) -> Vec<String> {
        let mut seen = HashSet::new();
        let mut out = Vec::new();
        let mut add = |n: &String| {
            if seen.insert(n.clone()) {
                out.push(n.clone());
            }
        };
        for g in &self.graphs {
            for n in &g.nodes {
                if let Some(k) = &n.kernel {
                    add(k);
                }
            }
        }
        for t in &self.threads {
            for op in &t.ops {
                if let Op::Kernel { name, .. } = op {
                    add(name);
                }
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn version_parsing() {
        assert_eq!("1.3.0".parse::<SdkVersion>().unwrap().encoded(), 10300);
        assert!("1.3".parse::<SdkVersion>().is_err());
        assert!(SdkVersion::V1_3.has_hip_graph());
        assert!(!SdkVersion::V1_0.has_hip_graph());
    }

    #[test]
    fn a_fill_needs_a_byte_and_an_offset_inside_its_allocation() {
        let with = |memset: &str| {
            let text = format!(
                r#"{{"sdk_version": "1.3.0", "graphs": [{{"name": "g", "nodes": [{{"memset": {memset}}}]}}], "threads": [{{"name": "t", "ops": []}}]}}"#
            );
            Workload::parse(&text, "w.json")
                .err()
                .map(|e| (e.path, e.message))
        };
        assert_eq!(with(r#"{"bytes": 100, "offset": 4}"#), None);
        let (path, why) = with(r#"{"bytes": 0}"#).expect("no bytes");
        assert_eq!(path, "graphs[0].nodes[0].memset.bytes");
        assert!(why.contains("at least one byte"), "{why}");
        let (path, why) = with(r#"{"bytes": 8, "offset": 1048576}"#).expect("far offset");
        assert_eq!(path, "graphs[0].nodes[0].memset.offset");
        assert!(why.contains("below 1 MiB"), "{why}");
    }
}
