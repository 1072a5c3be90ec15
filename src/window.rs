//! A finished trace window: what the tool hands to a trace writer, in Rust
//! terms. Every record here is already attributed and linked; a field that
//! is `None` is unknown and is left out of the trace, never guessed.
//!
//! Why its own type: the writers (our JSON writer, the C++ face) read the
//! same window, and only the bridge (src/bridge.rs) needs its C++ shape.
pub use activity_store::CopyDirection;
pub use nonmax::NonMaxU64;
use std::num::NonZeroU64;

/// A record's graph node, vouched for or repaired by attribution.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct GraphNode {
    /// Never 0, which means "not graphed" (`graph_attribution`'s
    /// `AttributionId`): so an `Option<GraphNode>` takes no tag word.
    pub graph_id: NonZeroU64,
    /// Packed: above 2^53 for most nodes.
    pub graph_node_id: u64,
}

impl GraphNode {
    /// The node, or `None` for graph id 0 (not graphed).
    pub fn new(graph_id: u64, graph_node_id: u64) -> Option<GraphNode> {
        Some(GraphNode {
            graph_id: NonZeroU64::new(graph_id)?,
            graph_node_id,
        })
    }
}

/// What a runtime blit kernel did, once its HIP call (or graph node) is
/// proven: such a dispatch is shown as a memset or a copy, not a kernel.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Blit {
    /// hipMemset* or a memset node: `bytes` set to the byte `value`.
    Memset { bytes: u64, value: u32 },
    /// hipMemcpy* or a memcpy node run as a blit kernel.
    Copy {
        bytes: u64,
        direction: CopyDirection,
    },
}

/// One GPU kernel dispatch.
///
/// A window holds a million of these, so what few kernels carry (counters,
/// a blit, a replay pass, a thread trace) lives in [`KernelExtras`] behind
/// one pointer, and the optional ids are [`NonMaxU64`]s and the graph id a
/// `NonZeroU64`, whose `None` takes no tag word: 136 bytes a kernel, against
/// 280 with the extras inline and 184 with the tags, so a million-kernel
/// window first-touches 48 MB less (a first touch costs from 0.3 to several
/// us a page on the machines here: `scripts/bench-cost.sh`). No stream
/// handle, queue handle, SDK correlation id or kineto external id is
/// `u64::MAX`; [`id`] reads one that were as unknown.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct KernelActivity {
    /// Index into `FinishedWindow::kernel_names` (demangled) and
    /// `kernel_symbols` (the raw symbol).
    pub name_index: u32,
    pub device: u32,
    /// `None`: the kernel goes on a lane named after its HSA queue.
    pub stream: Option<NonMaxU64>,
    pub queue: u64,
    /// The launching call; `None`: no flow arrow, no External id.
    pub correlation: Option<NonMaxU64>,
    pub dispatch_id: u64,
    pub start_ns: u64,
    pub end_ns: u64,
    pub grid: [u32; 3],
    pub block: [u32; 3],
    pub lds_bytes: u32,
    pub scratch_bytes: u32,
    pub external_id: Option<NonMaxU64>,
    pub user_external_id: Option<NonMaxU64>,
    pub graph: Option<GraphNode>,
    /// `Some(queue)`: a graph replay's work on another hardware queue than
    /// its first node's, drawn on a branch lane of its launching stream.
    pub branch: Option<NonMaxU64>,
    /// `None`: nothing of [`KernelExtras`]; never a box of nothing when made
    /// by [`KernelExtras::boxed`].
    pub extras: Option<Box<KernelExtras>>,
}

// The window's footprint is a cost goal (issue 14): growing this row is a
// decision, not an accident.
#[cfg(target_pointer_width = "64")]
const _: () = assert!(std::mem::size_of::<KernelActivity>() <= 136);

/// An optional id as a kernel row keeps it.
pub fn id(value: Option<u64>) -> Option<NonMaxU64> {
    value.and_then(NonMaxU64::new)
}

/// What few kernels carry beside the common fields.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct KernelExtras {
    /// Hardware counter values by counter name, in the order asked for;
    /// only counters whose record came.
    pub counters: Vec<(String, f64)>,
    /// With counter dimensions asked for: each counter instance's value,
    /// keyed by `vocabulary::counter_instance_key`, after its counter's
    /// sum in `counters`; empty otherwise.
    pub counter_instances: Vec<(String, f64)>,
    /// `Some`: a runtime blit kernel proven to be this memset or copy.
    pub blit: Option<Blit>,
    /// `Some`: one pass of a dispatch kernel replay ran several times.
    pub replay: Option<ReplayPass>,
    /// `Some`: the files holding this pass's raw thread trace,
    /// comma-separated.
    pub thread_trace: Option<String>,
}

impl KernelExtras {
    /// These extras as a kernel holds them: `None` when there are none.
    pub fn boxed(self) -> Option<Box<KernelExtras>> {
        let empty = self.counters.is_empty()
            && self.counter_instances.is_empty()
            && self.blit.is_none()
            && self.replay.is_none()
            && self.thread_trace.is_none();
        (!empty).then(|| Box::new(self))
    }
}

impl KernelActivity {
    pub fn stream(&self) -> Option<u64> {
        self.stream.map(u64::from)
    }

    pub fn correlation(&self) -> Option<u64> {
        self.correlation.map(u64::from)
    }

    pub fn external_id(&self) -> Option<u64> {
        self.external_id.map(u64::from)
    }

    pub fn user_external_id(&self) -> Option<u64> {
        self.user_external_id.map(u64::from)
    }

    pub fn branch(&self) -> Option<u64> {
        self.branch.map(u64::from)
    }

    pub fn counters(&self) -> &[(String, f64)] {
        self.extras.as_deref().map_or(&[], |e| &e.counters)
    }

    pub fn counter_instances(&self) -> &[(String, f64)] {
        self.extras.as_deref().map_or(&[], |e| &e.counter_instances)
    }

    pub fn blit(&self) -> Option<Blit> {
        self.extras.as_deref().and_then(|e| e.blit)
    }

    pub fn replay(&self) -> Option<ReplayPass> {
        self.extras.as_deref().and_then(|e| e.replay)
    }

    pub fn thread_trace(&self) -> Option<&str> {
        self.extras
            .as_deref()
            .and_then(|e| e.thread_trace.as_deref())
    }

    /// The extras, made empty first if there were none.
    pub fn extras_mut(&mut self) -> &mut KernelExtras {
        self.extras.get_or_insert_with(Box::default)
    }
}

/// Which pass of a replayed dispatch a kernel event is. Every pass has the
/// dispatch's one dispatch id and launch; counters differ by pass.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ReplayPass {
    /// 0-based.
    pub pass: u32,
    pub passes: u32,
}

/// One memory copy. Copies run on no HSA queue the SDK reports.
#[derive(Clone, Debug, PartialEq)]
pub struct CopyActivity {
    pub direction: CopyDirection,
    pub device: u32,
    /// `None`: the copy goes on its device's "copies" lane.
    pub stream: Option<u64>,
    pub correlation: Option<u64>,
    pub bytes: u64,
    /// -1: the host.
    pub src_device: i64,
    pub dst_device: i64,
    pub start_ns: u64,
    pub end_ns: u64,
    pub external_id: Option<u64>,
    pub graph: Option<GraphNode>,
}

/// Which synchronisation a call is, named as CUPTI's sync records are.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SyncKind {
    /// hipStreamSynchronize: "Stream Sync".
    Stream,
    /// hipDeviceSynchronize: "Context Sync".
    Device,
    /// hipEventSynchronize: "Event Sync".
    Event,
    /// hipStreamWaitEvent: "Stream Wait Event".
    StreamWaitEvent,
}

/// A synchronising HIP call, as kineto's cuda_sync span: the call's CPU
/// times on the device lane of what it waited on.
#[derive(Clone, Debug, PartialEq)]
pub struct SyncActivity {
    pub kind: SyncKind,
    pub thread_id: u64,
    pub correlation: u64,
    pub start_ns: u64,
    pub end_ns: u64,
    /// `None`: the device is unknown; drawn on the calling thread.
    pub device: Option<u32>,
    /// The stream synchronised or made to wait.
    pub stream: Option<u64>,
    /// The hipEvent_t synchronised or waited for.
    pub event: Option<u64>,
    /// The stream that recorded the event, and that record's call.
    pub wait_on_stream: Option<u64>,
    pub wait_on_record_correlation: Option<u64>,
    pub external_id: Option<u64>,
}

/// A hipEventRecord or a graph event-record node's record in one replay,
/// as kineto's cuda_event: a point on the recording stream's lane where the
/// work it captures has ended.
#[derive(Clone, Debug, PartialEq)]
pub struct EventActivity {
    pub event: u64,
    pub thread_id: u64,
    pub correlation: u64,
    pub device: Option<u32>,
    pub stream: Option<u64>,
    /// The end of the last proven device work of the stream issued before
    /// the record, or the record call's start when there is none; for a
    /// graph node, the end of its proven predecessors in the replay.
    pub ts_ns: u64,
    pub external_id: Option<u64>,
    /// The event-record node, for a graph's record (`correlation` is then
    /// the hipGraphLaunch's).
    pub graph: Option<GraphNode>,
}

/// A host function the stream (or graph) waited for, bounded by what the
/// SDK shows: it cannot start before the stream's work before it ended, and
/// the stream's next work cannot start before it returned.
#[derive(Clone, Debug, PartialEq)]
pub struct HostFnActivity {
    pub device: u32,
    pub stream: u64,
    pub correlation: u64,
    pub function: u64,
    pub start_ns: u64,
    pub end_ns: u64,
    pub graph: Option<GraphNode>,
    pub branch: Option<u64>,
    pub external_id: Option<u64>,
}

/// A roctx mark or range on its CPU thread (kineto's user_annotation).
#[derive(Clone, Debug, PartialEq)]
pub struct Annotation {
    pub name: String,
    pub thread_id: u64,
    pub start_ns: u64,
    pub end_ns: u64,
    /// Unique in the window: the gpu_user_annotation spans of the range
    /// carry it.
    pub id: u64,
    /// roctxRangeStartA/Stop (process-wide) rather than push/pop or a mark.
    pub process_wide: bool,
}

/// The device work a roctx range enclosed on one lane (kineto's
/// gpu_user_annotation).
#[derive(Clone, Debug, PartialEq)]
pub struct GpuAnnotation {
    pub name: String,
    /// `Annotation::id` of the range.
    pub id: u64,
    pub device: u32,
    pub stream: u64,
    pub branch: Option<u64>,
    pub start_ns: u64,
    pub end_ns: u64,
}

/// A GPU event a dependency arrow ends at.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum GpuRef {
    /// Index into `kernels`.
    Kernel(usize),
    /// Index into `copies`.
    Copy(usize),
    /// Index into `host_functions`.
    HostFn(usize),
}

/// A graph dependency between two nodes of one replay, both shown.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Dependency {
    pub from: GpuRef,
    pub to: GpuRef,
}

/// The backend's own cost (kineto's overhead events).
#[derive(Clone, Debug, PartialEq)]
pub struct Overhead {
    pub name: &'static str,
    pub start_ns: u64,
    pub end_ns: u64,
    /// Records processed, or dropped.
    pub count: u64,
}

/// One HIP runtime call, on its CPU thread.
#[derive(Clone, Debug, PartialEq)]
pub struct RuntimeActivity {
    pub name: &'static str,
    /// The SDK's HIP runtime API operation id (kineto's "cid").
    pub cid: u32,
    pub thread_id: u64,
    pub correlation: u64,
    pub start_ns: u64,
    pub end_ns: u64,
    pub external_id: Option<u64>,
}

/// A GPU as kineto names its lane.
#[derive(Clone, Debug, PartialEq)]
pub struct DeviceLane {
    pub device: u32,
    pub name: String,
}

/// Everything one finished trace window produced.
#[derive(Clone, Debug, Default)]
pub struct FinishedWindow {
    /// Demangled kernel names.
    pub kernel_names: Vec<String>,
    /// The raw symbols, by the same index.
    pub kernel_symbols: Vec<String>,
    pub kernels: Vec<KernelActivity>,
    pub copies: Vec<CopyActivity>,
    pub runtime: Vec<RuntimeActivity>,
    pub syncs: Vec<SyncActivity>,
    pub events: Vec<EventActivity>,
    pub host_functions: Vec<HostFnActivity>,
    pub annotations: Vec<Annotation>,
    pub gpu_annotations: Vec<GpuAnnotation>,
    /// Empty unless KINETO_ROCM_GRAPH_DEPENDENCY_ARROWS is on.
    pub dependencies: Vec<Dependency>,
    pub overheads: Vec<Overhead>,
    pub devices: Vec<DeviceLane>,
    /// Add to an SDK timestamp to get system_clock nanoseconds (kineto's clock).
    pub system_clock_offset_ns: i64,
    /// `key=value` lines for the trace metadata: attribution counts,
    /// completeness, drops.
    pub summary: Vec<String>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_kernel_holds_extras_only_when_it_has_some() {
        assert_eq!(KernelExtras::default().boxed(), None);
        let counted = KernelExtras {
            counters: vec![("SQ_WAVES".into(), 1.0)],
            ..KernelExtras::default()
        };
        let kernel = KernelActivity {
            extras: counted.clone().boxed(),
            ..KernelActivity::default()
        };
        assert_eq!(kernel.counters(), counted.counters.as_slice());
        let blit = Blit::Memset { bytes: 4, value: 0 };
        let pass = ReplayPass { pass: 1, passes: 2 };
        for extras in [
            KernelExtras {
                blit: Some(blit),
                ..KernelExtras::default()
            },
            KernelExtras {
                replay: Some(pass),
                ..KernelExtras::default()
            },
            KernelExtras {
                thread_trace: Some("t.att".into()),
                ..KernelExtras::default()
            },
        ] {
            assert!(extras.boxed().is_some());
        }
        let mut plain = KernelActivity::default();
        assert_eq!(
            (plain.blit(), plain.replay(), plain.thread_trace()),
            (None, None, None)
        );
        plain.extras_mut().blit = Some(blit);
        assert_eq!(plain.blit(), Some(blit));
    }
}
