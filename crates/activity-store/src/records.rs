//! Plain input records, one per SDK activity the tool decodes.
//!
//! The tool library owns the FFI; by the time a record reaches the store it
//! is a `Copy` struct of integers, so this crate never sees an SDK type and
//! never dereferences a pointer it did not make. Each struct mirrors one
//! rocprofiler-sdk buffer record kind, keeping only the fields the trace
//! writers and the graph-attribution verifier read.

/// An HSA agent (a GPU or CPU), by the SDK's opaque 64-bit handle.
///
/// A newtype so that an agent handle can never be passed where a queue or a
/// correlation id was meant.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct AgentId(pub u64);

/// Which way a memory copy went, as the SDK's MEMORY_COPY operation says.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum CopyDirection {
    HostToHost,
    HostToDevice,
    DeviceToHost,
    DeviceToDevice,
    /// An operation this build does not know; kept rather than dropped so
    /// the copy still shows on the timeline.
    #[default]
    Unknown,
}

/// One completed kernel dispatch (buffer kind KERNEL_DISPATCH).
///
/// There is no stream on the SDK record; the store joins one from
/// [`crate::ActivityStore::record_stream`] at finalisation.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct KernelDispatch {
    pub agent: AgentId,
    pub queue: u64,
    /// The SDK's internal correlation id; every dispatch of one graph launch
    /// shares the hipGraphLaunch call's id.
    pub correlation_id: u64,
    /// The raw `correlation_id.external` value the external-correlation
    /// request callback answered (the packed graph attribution slot).
    pub external_slot: u64,
    pub thread_id: u64,
    pub kernel_id: u64,
    pub dispatch_id: u64,
    pub grid: [u32; 3],
    pub workgroup: [u32; 3],
    /// Group segment (LDS) bytes.
    pub lds_bytes: u32,
    /// Private segment (scratch) bytes.
    pub scratch_bytes: u32,
    pub start_ns: u64,
    pub end_ns: u64,
}

/// One completed memory copy (buffer kind MEMORY_COPY).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct MemoryCopy {
    pub direction: CopyDirection,
    pub src_agent: AgentId,
    pub dst_agent: AgentId,
    pub bytes: u64,
    pub correlation_id: u64,
    pub external_slot: u64,
    pub thread_id: u64,
    pub start_ns: u64,
    pub end_ns: u64,
}

/// One HIP runtime API call (buffer kind HIP_RUNTIME_API).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct HipApiCall {
    /// The SDK's HIP runtime API operation number.
    pub operation: i32,
    pub correlation_id: u64,
    pub thread_id: u64,
    pub start_ns: u64,
    pub end_ns: u64,
}

/// One HIP graph launch (buffer kind HIP_GRAPH, SDK 1.3+).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct GraphLaunch {
    pub correlation_id: u64,
    /// Process-monotonic exec id from the SDK, from 1; 0 means not a graph.
    pub graph_exec_id: u64,
    pub kernel_dispatch_count: u64,
    pub thread_id: u64,
    pub agent: AgentId,
    pub queue: u64,
    pub start_ns: u64,
    pub end_ns: u64,
}

/// What the store needs to know about any record to bucket and stage it.
///
/// Sealed by being crate-private: the four kinds above are the whole set.
pub(crate) trait Timed: Copy {
    fn start_ns(&self) -> u64;
    fn end_ns(&self) -> u64;

    /// A record that ends before it starts cannot be drawn and would poison
    /// duration sums downstream; it is dropped and counted as malformed.
    fn is_well_formed(&self) -> bool {
        self.end_ns() >= self.start_ns()
    }
}

macro_rules! impl_timed {
    ($($kind:ty),*) => {$(
        impl Timed for $kind {
            fn start_ns(&self) -> u64 { self.start_ns }
            fn end_ns(&self) -> u64 { self.end_ns }
        }
    )*};
}

impl_timed!(KernelDispatch, MemoryCopy, HipApiCall, GraphLaunch);
