//! The workload file format (documented in docs/workload-format.md).
//!
//! Parsing is pure (no simulator state), so hosts and tests may use it
//! directly. Every error names the file, the path to the offending field and
//! what was expected.
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, HashMap, HashSet};
use std::fmt;

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

/// One graph node: exactly one of `kernel` or `memcpy`.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Node {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kernel: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub memcpy: Option<Memcpy>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub deps: Vec<usize>,
}

#[derive(Clone, Copy, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Memcpy {
    pub bytes: u64,
    pub direction: Direction,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Direction {
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
    },
    /// hipMemcpyAsync on `stream`, `times` times.
    Memcpy {
        bytes: u64,
        direction: Direction,
        stream: String,
        #[serde(default = "one_u64")]
        times: u64,
    },
    /// A CPU-op marker: calls the host's marker hook (if any) with PUSH and
    /// the name; the tool may link device work to it.
    PushMarker { name: String },
    /// Calls the marker hook with POP.
    PopMarker {},
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

    /// Semantic checks serde cannot express. Err is (path, message).
    fn validate(&self) -> Result<(), (String, String)> {
        if self.devices == 0 || self.devices > 64 {
            return Err((
                "devices".into(),
                format!("expected 1 to 64 devices, got {}", self.devices),
            ));
        }
        if let Some(q) = self.hw_queues_per_device {
            if q == 0 || q > 1024 {
                return Err((
                    "hw_queues_per_device".into(),
                    format!("expected 1 to 1024 queues, got {q}"),
                ));
            }
        }
        let mut names = HashMap::new();
        for (gi, g) in self.graphs.iter().enumerate() {
            if let Some(prev) = names.insert(g.name.as_str(), gi) {
                return Err((
                    format!("graphs[{gi}].name"),
                    format!(
                        "expected a unique graph name; {:?} is also graphs[{prev}]",
                        g.name
                    ),
                ));
            }
            if g.nodes.is_empty() {
                return Err((
                    format!("graphs[{gi}].nodes"),
                    "expected at least one node".into(),
                ));
            }
            for (ni, n) in g.nodes.iter().enumerate() {
                let here = format!("graphs[{gi}].nodes[{ni}]");
                match (&n.kernel, &n.memcpy) {
                    (Some(k), None) if k.is_empty() => {
                        return Err((format!("{here}.kernel"), "expected a kernel name".into()))
                    }
                    (Some(_), None) | (None, Some(_)) => {}
                    _ => return Err((here, "expected exactly one of `kernel` or `memcpy`".into())),
                }
                for (di, d) in n.deps.iter().enumerate() {
                    if *d >= ni {
                        return Err((
                            format!("{here}.deps[{di}]"),
                            format!(
                                "expected the index of an earlier node (0..{ni}): a dependency must exist when the node is added; got {d}"
                            ),
                        ));
                    }
                }
            }
        }
        if self.threads.is_empty() {
            return Err(("threads".into(), "expected at least one thread".into()));
        }
        for (ti, t) in self.threads.iter().enumerate() {
            let mut streams: HashSet<&str> = HashSet::new();
            let mut execs: HashSet<&str> = HashSet::new();
            for (oi, op) in t.ops.iter().enumerate() {
                let here = format!("threads[{ti}].ops[{oi}]");
                let need_stream = |s: &str, field: &str, streams: &HashSet<&str>| {
                    if streams.contains(s) {
                        Ok(())
                    } else {
                        Err((
                            format!("{here}.{field}"),
                            format!("expected a stream this thread created earlier (create_stream), got {s:?}"),
                        ))
                    }
                };
                let need_exec = |e: &str, field: &str, execs: &HashSet<&str>| {
                    if execs.contains(e) {
                        Ok(())
                    } else {
                        Err((
                            format!("{here}.{field}"),
                            format!("expected an exec this thread instantiated earlier and has not destroyed, got {e:?}"),
                        ))
                    }
                };
                let need_graph = |g: &str, field: &str| {
                    if self.graph_index(g).is_some() {
                        Ok(())
                    } else {
                        Err((
                            format!("{here}.{field}"),
                            format!("expected the name of a graph in `graphs`, got {g:?}"),
                        ))
                    }
                };
                let need_device = |d: u32, field: &str| {
                    if d < self.devices {
                        Ok(())
                    } else {
                        Err((
                            format!("{here}.{field}"),
                            format!("expected a device index below {}, got {d}", self.devices),
                        ))
                    }
                };
                match op {
                    Op::CreateStream { name, device } => {
                        need_device(*device, "create_stream.device")?;
                        if !streams.insert(name) {
                            return Err((
                                format!("{here}.create_stream.name"),
                                format!("expected a new stream name, {name:?} exists"),
                            ));
                        }
                    }
                    Op::DestroyStream { name } => {
                        need_stream(name, "destroy_stream.name", &streams)?;
                        streams.remove(name.as_str());
                    }
                    Op::Instantiate {
                        graph,
                        exec,
                        device,
                    } => {
                        need_graph(graph, "instantiate.graph")?;
                        need_device(*device, "instantiate.device")?;
                        if !execs.insert(exec) {
                            return Err((
                                format!("{here}.instantiate.as"),
                                format!("expected a new exec name, {exec:?} is live"),
                            ));
                        }
                    }
                    Op::Launch { exec, stream, .. } => {
                        need_exec(exec, "launch.exec", &execs)?;
                        need_stream(stream, "launch.stream", &streams)?;
                    }
                    Op::Update { exec, graph } => {
                        need_exec(exec, "update.exec", &execs)?;
                        need_graph(graph, "update.graph")?;
                    }
                    Op::Destroy { exec } => {
                        need_exec(exec, "destroy.exec", &execs)?;
                        execs.remove(exec.as_str());
                    }
                    Op::Kernel { name, stream, .. } => {
                        if name.is_empty() {
                            return Err((
                                format!("{here}.kernel.name"),
                                "expected a kernel name".into(),
                            ));
                        }
                        need_stream(stream, "kernel.stream", &streams)?;
                    }
                    Op::Memcpy { stream, .. } => need_stream(stream, "memcpy.stream", &streams)?,
                    Op::PushMarker { .. } | Op::PopMarker {} => {}
                }
            }
        }
        Ok(())
    }
}

/// hipGraphInstantiate's flattening: a topological order of the DAG in which
/// ties (several ready nodes) go to the node created first. Returns node
/// indices in submission order.
pub fn flatten(graph: &Graph) -> Vec<usize> {
    let n = graph.nodes.len();
    let mut indegree = vec![0usize; n];
    let mut children = vec![Vec::new(); n];
    for (i, node) in graph.nodes.iter().enumerate() {
        for &d in &node.deps {
            indegree[i] += 1;
            children[d].push(i);
        }
    }
    let mut ready: std::collections::BinaryHeap<std::cmp::Reverse<usize>> = (0..n)
        .filter(|&i| indegree[i] == 0)
        .map(std::cmp::Reverse)
        .collect();
    let mut order = Vec::with_capacity(n);
    while let Some(std::cmp::Reverse(i)) = ready.pop() {
        order.push(i);
        for &c in &children[i] {
            indegree[c] -= 1;
            if indegree[c] == 0 {
                ready.push(std::cmp::Reverse(c));
            }
        }
    }
    order
}

#[cfg(test)]
mod tests {
    use super::*;

    fn node(k: &str, deps: &[usize]) -> Node {
        Node {
            kernel: Some(k.into()),
            memcpy: None,
            deps: deps.to_vec(),
        }
    }

    #[test]
    fn flatten_is_topological_with_creation_order_ties() {
        // root -> 4 independent -> join, the four created in order 1..=4.
        let g = Graph {
            name: "g".into(),
            nodes: vec![
                node("r", &[]),
                node("a", &[0]),
                node("b", &[0]),
                node("c", &[0]),
                node("d", &[0]),
                node("j", &[1, 2, 3, 4]),
            ],
        };
        assert_eq!(flatten(&g), vec![0, 1, 2, 3, 4, 5]);
        // A later-created root is still submitted before a dependent of the first.
        let g = Graph {
            name: "g".into(),
            nodes: vec![node("r0", &[]), node("x", &[0]), node("r1", &[])],
        };
        assert_eq!(flatten(&g), vec![0, 1, 2]);
        let g = Graph {
            name: "g".into(),
            nodes: vec![
                node("r0", &[]),
                node("r1", &[]),
                node("x", &[1]),
                node("y", &[0]),
            ],
        };
        assert_eq!(flatten(&g), vec![0, 1, 2, 3]);
    }

    #[test]
    fn version_parsing() {
        assert_eq!("1.3.0".parse::<SdkVersion>().unwrap().encoded(), 10300);
        assert!("1.3".parse::<SdkVersion>().is_err());
        assert!(SdkVersion::V1_3.has_hip_graph());
        assert!(!SdkVersion::V1_0.has_hip_graph());
    }
}
