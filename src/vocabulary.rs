//! One vocabulary for every trace writer: the args keys, their JSON value
//! types and the fixed strings (kinds, copy names).
//!
//! Our JSON writer (src/output/kineto_json.rs) reads this table directly;
//! the C++ face reads it through the bridge (`metadata_key_name`,
//! `metadata_key_type`, `copy_kind`, ...), so the two cannot spell a key
//! differently. Names follow kineto's MetadataFieldCatalog.h where kineto
//! has the key (RocmMetadataFields, and CudaMetadataFields' graph keys,
//! which PyTorch reads as `"graph node id":\s*(\d+)`); the types are
//! kineto's field types.
//!
//! Besides these keys, a kernel's hardware counters are args keyed by the
//! counter's SDK name (`SQ_WAVES`: upper case, so never one of the keys
//! here), each a Float (the SDK's values are doubles; dimensions summed),
//! and, with dimensions asked for, one Float per counter instance keyed by
//! [`counter_instance_key`].
use activity_store::CopyDirection;

/// Every args key a trace writer puts on a GPU or runtime event. The
/// bridge's `MetadataKey` lists the same keys in the same order.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MetadataKey {
    Device,
    Stream,
    HsaQueue,
    Correlation,
    Cid,
    DispatchId,
    Kind,
    Kernel,
    Grid,
    Block,
    SharedMemory,
    ScratchMemory,
    Bytes,
    MemoryBandwidth,
    SrcDevice,
    DstDevice,
    GraphId,
    GraphNodeId,
    Value,
    MangledName,
    CudaSyncKind,
    WaitOnStream,
    WaitOnEventRecordCorrelation,
    WaitOnEventId,
    EventId,
    HostFunction,
    Timing,
    OverheadCount,
    ReplayPass,
    ThreadTrace,
}

/// The JSON type of a key's value, the same in every writer.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ValueType {
    /// Signed integer.
    Int,
    /// Unsigned integer (above 2^53 for graph node ids).
    Uint,
    Float,
    /// Quoted string.
    Str,
    /// `[x, y, z]`, a JSON array of integers.
    IntArray,
}

/// One args key.
#[derive(Clone, Copy, Debug)]
pub struct KeySpec {
    pub key: MetadataKey,
    pub name: &'static str,
    pub value: ValueType,
}

const fn key(key: MetadataKey, name: &'static str, value: ValueType) -> KeySpec {
    KeySpec { key, name, value }
}

/// Every key, in `MetadataKey` order.
pub const CATALOG: [KeySpec; 30] = [
    key(MetadataKey::Device, "device", ValueType::Int),
    key(MetadataKey::Stream, "stream", ValueType::Int),
    key(MetadataKey::HsaQueue, "hsa_queue", ValueType::Uint),
    key(MetadataKey::Correlation, "correlation", ValueType::Uint),
    key(MetadataKey::Cid, "cid", ValueType::Uint),
    key(MetadataKey::DispatchId, "dispatch id", ValueType::Uint),
    key(MetadataKey::Kind, "kind", ValueType::Str),
    key(MetadataKey::Kernel, "kernel", ValueType::Str),
    key(MetadataKey::Grid, "grid", ValueType::IntArray),
    key(MetadataKey::Block, "block", ValueType::IntArray),
    key(MetadataKey::SharedMemory, "shared memory", ValueType::Uint),
    key(
        MetadataKey::ScratchMemory,
        "scratch memory",
        ValueType::Uint,
    ),
    key(MetadataKey::Bytes, "bytes", ValueType::Uint),
    key(
        MetadataKey::MemoryBandwidth,
        "memory bandwidth (GB/s)",
        ValueType::Float,
    ),
    key(MetadataKey::SrcDevice, "src device", ValueType::Int),
    key(MetadataKey::DstDevice, "dst device", ValueType::Int),
    key(MetadataKey::GraphId, "graph id", ValueType::Uint),
    key(MetadataKey::GraphNodeId, "graph node id", ValueType::Uint),
    // A memset's byte value (CUPTI's memset record has it; kineto's CUPTI
    // path does not write it).
    key(MetadataKey::Value, "value", ValueType::Uint),
    // The raw kernel symbol when the name shown is demangled.
    key(MetadataKey::MangledName, "mangled name", ValueType::Str),
    // kineto's CudaMetadataFields sync keys, spelled and typed as there.
    key(MetadataKey::CudaSyncKind, "cuda_sync_kind", ValueType::Str),
    key(MetadataKey::WaitOnStream, "wait_on_stream", ValueType::Int),
    key(
        MetadataKey::WaitOnEventRecordCorrelation,
        "wait_on_cuda_event_record_corr_id",
        ValueType::Int,
    ),
    key(
        MetadataKey::WaitOnEventId,
        "wait_on_cuda_event_id",
        ValueType::Uint,
    ),
    key(MetadataKey::EventId, "event_id", ValueType::Uint),
    key(MetadataKey::HostFunction, "host function", ValueType::Uint),
    // How a span's times were found when they are not the SDK's own.
    key(MetadataKey::Timing, "timing", ValueType::Str),
    key(
        MetadataKey::OverheadCount,
        "overhead count",
        ValueType::Uint,
    ),
    // Which kernel-replay pass a kernel event is (rocprofv3's counter
    // records call it `replay_pass`); every pass has the one dispatch id.
    key(MetadataKey::ReplayPass, "replay pass", ValueType::Uint),
    // The files of a pass's raw thread trace, comma-separated.
    key(MetadataKey::ThreadTrace, "thread trace", ValueType::Str),
];

pub fn spec(key: MetadataKey) -> KeySpec {
    let spec = CATALOG[key as usize];
    debug_assert_eq!(spec.key, key, "CATALOG out of MetadataKey order");
    spec
}

pub fn name(key: MetadataKey) -> &'static str {
    spec(key).name
}

/// The "kind" arg of a kernel dispatch (kineto's ROCm backend says the same).
pub const KERNEL_KIND: &str = "Dispatch Kernel";

/// The "kind" arg of a copy.
pub fn copy_kind(direction: CopyDirection) -> &'static str {
    match direction {
        CopyDirection::HostToHost => "HtoH",
        CopyDirection::HostToDevice => "HtoD",
        CopyDirection::DeviceToHost => "DtoH",
        CopyDirection::DeviceToDevice => "DtoD",
        CopyDirection::Unknown => "Unknown",
    }
}

/// A copy's event name, as kineto's ROCm and CUPTI backends name copies.
pub fn copy_event_name(direction: CopyDirection) -> &'static str {
    match direction {
        CopyDirection::HostToHost => "Memcpy HtoH (Host -> Host)",
        CopyDirection::HostToDevice => "Memcpy HtoD (Host -> Device)",
        CopyDirection::DeviceToHost => "Memcpy DtoH (Device -> Host)",
        CopyDirection::DeviceToDevice => "Memcpy DtoD (Device -> Device)",
        CopyDirection::Unknown => "Memcpy Unknown (? -> ?)",
    }
}

/// A memset's event name (CUPTI's, for device memory).
pub const MEMSET_NAME: &str = "Memset (Device)";
/// The "kind" arg of a memset.
pub const MEMSET_KIND: &str = "Memset";

/// A copy between two devices (CUPTI's MEMCPY2 peer copies are named so).
pub const PEER_COPY_NAME: &str = "Memcpy PtoP (Device -> Device)";
pub const PEER_COPY_KIND: &str = "PtoP";

/// A sync span's name and "cuda_sync_kind", as CUPTI's sync records say.
pub fn sync_name(kind: crate::window::SyncKind) -> &'static str {
    use crate::window::SyncKind as S;
    match kind {
        S::Stream => "Stream Sync",
        S::Device => "Context Sync",
        S::Event => "Event Sync",
        S::StreamWaitEvent => "Stream Wait Event",
    }
}

/// A hipEventRecord's event name.
pub const EVENT_RECORD_NAME: &str = "Event Record";
/// A host function's event name.
pub const HOST_FN_NAME: &str = "Host Function";
/// The "timing" arg of spans bounded by their neighbours, not measured.
pub const TIMING_BOUNDS: &str =
    "bounds: after the work it waits for, before the work that waits for it";
/// The "timing" arg of an event record: the end of the work it captures.
pub const TIMING_EVENT: &str = "end of the stream's work before the record";

/// Overhead event names.
pub const OVERHEAD_BUFFER: &str = "kineto-rocm: SDK buffer processing";
pub const OVERHEAD_FINISH: &str = "kineto-rocm: window finishing (attribution)";
pub const OVERHEAD_DROPPED: &str = "kineto-rocm: SDK records dropped";

/// A graph dependency arrow: kineto writes flows of two kinds only, so the
/// arrows are fwdbwd flows between zero-length carrier events named so.
pub const DEPENDENCY_FLOW: &str = "fwdbwd";
pub const DEPENDENCY_NAME: &str = "graph dependency";

/// A hardware counter's samples ("ph": "C"), kineto's category for them
/// (ActivityType HARDWARE_COUNTERS, "hardware_counters").
pub const COUNTER_CATEGORY: &str = "hardware_counters";

/// The SDK's prefix of every dimension name (`DIMENSION_XCC`), left out of
/// instance keys.
const DIMENSION_PREFIX: &str = "DIMENSION_";

/// The args key of one counter instance: the counter's name, then its
/// position in each dimension in brackets, by the SDK's dimension name
/// without `DIMENSION_`, in the order given (the tool gives them by the
/// SDK's dimension id): `SQ_WAVES[XCC=0,SHADER_ENGINE=1,INSTANCE=0]`.
pub fn counter_instance_key(counter: &str, positions: &[(&str, usize)]) -> String {
    let dims: Vec<String> = positions
        .iter()
        .map(|(name, pos)| {
            let short = name.strip_prefix(DIMENSION_PREFIX).unwrap_or(name);
            format!("{short}={pos}")
        })
        .collect();
    format!("{counter}[{}]", dims.join(","))
}

/// A stream's lane (tid = the stream id).
pub fn stream_lane_name(stream: u64) -> String {
    format!("stream {stream}")
}

/// A stream-less kernel is drawn on its HSA queue's lane, per device; those
/// lanes get ids from here up, in order of first use (kineto's lane ids are
/// 32-bit, queue handles are not).
pub const QUEUE_LANE_BASE: u32 = 0x4000_0000;

pub fn queue_lane_name(queue: u64) -> String {
    format!("HW queue {queue:#x}")
}

/// A graph replay's work on another hardware queue than its first node's
/// goes on a branch lane of its launching stream; those lanes get ids from
/// here up, dense per device, in order of first use.
pub const BRANCH_LANE_BASE: u32 = 0x2000_0000;

pub fn branch_lane_name(stream: u64, queue: u64) -> String {
    format!("stream {stream} graph branch (HW queue {queue:#x})")
}

/// Syncs that wait on a whole device (hipDeviceSynchronize) or on an event
/// of an unknown stream are drawn on one lane per device.
pub const SYNC_LANE_ID: u32 = 0x3fff_fffe;
pub const SYNC_LANE_NAME: &str = "syncs";

/// The backend's overhead events go on this thread lane of the process.
pub const OVERHEAD_TID: u32 = 0x3fff_fffd;
pub const OVERHEAD_LANE_NAME: &str = "kineto-rocm overhead";

/// Stream-less copies are drawn on one lane per device.
pub const COPY_LANE_ID: u32 = 0x3fff_ffff;
pub const COPY_LANE_NAME: &str = "copies";

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_catalog_is_indexed_by_key_and_spells_each_key_once() {
        let mut names = std::collections::HashSet::new();
        for (index, spec) in CATALOG.iter().enumerate() {
            assert_eq!(spec.key as usize, index, "{spec:?} out of order");
            assert!(names.insert(spec.name), "{} spelled twice", spec.name);
        }
    }

    #[test]
    fn graph_keys_are_the_ones_pytorch_reads() {
        assert_eq!(name(MetadataKey::GraphNodeId), "graph node id");
        assert_eq!(name(MetadataKey::GraphId), "graph id");
        assert_eq!(spec(MetadataKey::GraphNodeId).value, ValueType::Uint);
    }

    #[test]
    fn a_counter_instance_key_names_each_dimension_without_the_sdk_prefix() {
        assert_eq!(
            counter_instance_key(
                "SQ_WAVES",
                &[
                    ("DIMENSION_XCC", 0),
                    ("DIMENSION_SHADER_ENGINE", 3),
                    ("DIMENSION_INSTANCE", 0)
                ]
            ),
            "SQ_WAVES[XCC=0,SHADER_ENGINE=3,INSTANCE=0]"
        );
        assert_eq!(counter_instance_key("X", &[("AGENT", 2)]), "X[AGENT=2]");
    }
}
