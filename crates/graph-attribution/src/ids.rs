//! Identifiers and the packed layout that the trace emits.
//!
//! The layout is CUPTI's, because that is what PyTorch reads back:
//! `graph node id = (graph id << 32) | node id`, and 0 means "not graphed".
//! Every type here exists so that a value which cannot be packed without
//! aliasing cannot be constructed in the first place.

use std::fmt;
use std::num::NonZeroU32;

/// The id under which an exec's dispatches are attributed: the high half of
/// the packed node id, and the trace's `graph id`.
///
/// It is never 0 (0 means "not graphed") and always fits 32 bits, so packing
/// can neither fail nor alias.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct AttributionId(NonZeroU32);

impl AttributionId {
    /// The id for `value`, or `None` for 0.
    pub const fn new(value: u32) -> Option<AttributionId> {
        match NonZeroU32::new(value) {
            Some(id) => Some(AttributionId(id)),
            None => None,
        }
    }

    /// The id for a wider value (an SDK exec id), or `None` when it is 0 or
    /// does not fit the 32-bit field.
    pub const fn from_u64(value: u64) -> Option<AttributionId> {
        if value > u32::MAX as u64 {
            return None;
        }
        AttributionId::new(value as u32)
    }

    /// The id as stored in the high half of a packed key.
    pub const fn get(self) -> u32 {
        self.0.get()
    }
}

impl fmt::Display for AttributionId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.get())
    }
}

/// A node's identity within its exec: the low half of the packed key.
///
/// The evidence method reports the node's creation index: the position of
/// the call that created it (hipGraphAdd*Node, in the graph's build order),
/// as CUPTI numbers CUDA graph nodes in creation order. Unlike the order in
/// which HIP dispatches the nodes, which depends on the runtime's segment
/// scheduling and, under contention, on which thread processed a packet,
/// the creation index is a property of the node that the graph-building
/// calls prove. The launch-stack method (the SDK's documented recipe, kept
/// for comparison) packs its dispatch ordinal here instead.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct NodeId(pub u32);

impl NodeId {
    /// The id as an index into an exec's node list.
    pub const fn index(self) -> usize {
        self.0 as usize
    }
}

impl fmt::Display for NodeId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.0)
    }
}

/// One (graph id, graph node id) pair: which exec, and which of its nodes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct GraphKey {
    pub graph_id: AttributionId,
    pub node: NodeId,
}

impl GraphKey {
    pub const fn new(graph_id: AttributionId, node: NodeId) -> GraphKey {
        GraphKey { graph_id, node }
    }

    /// The packed value the external-correlation slot carries and the trace
    /// emits as `graph node id`: `(id << 32) | node`. Never 0.
    pub const fn pack(self) -> u64 {
        ((self.graph_id.get() as u64) << 32) | self.node.0 as u64
    }

    /// The key a packed value names, or `None` for a value no key packs to:
    /// 0 ("not graphed") or a value whose id half is 0.
    pub const fn unpack(packed: u64) -> Option<GraphKey> {
        match AttributionId::new((packed >> 32) as u32) {
            Some(graph_id) => Some(GraphKey {
                graph_id,
                node: NodeId(packed as u32),
            }),
            None => None,
        }
    }

    /// The trace's `graph id` field.
    pub const fn graph_id(self) -> u64 {
        self.graph_id.get() as u64
    }

    /// The trace's `graph node id` field: the packed value, as CUPTI lays it
    /// out and PyTorch reads it (`>> 32` recovers the graph id).
    pub const fn graph_node_id(self) -> u64 {
        self.pack()
    }
}

impl fmt::Display for GraphKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "graph {} node {}", self.graph_id, self.node)
    }
}

/// A `hipGraphExec_t` as an opaque value. HIP reuses a destroyed exec's
/// address for the next instantiate, so a handle names an exec only between
/// its create and its destroy.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ExecHandle(pub u64);

/// The exec a launch callback names, in the form the SDK version gives it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum LaunchedExec {
    /// SDK 1.3+ HIP_GRAPH EXEC_LAUNCH: the process-monotonic exec id (from
    /// 1; 0 means "not a graph") and the handle.
    Sdk {
        graph_exec_id: u64,
        handle: ExecHandle,
    },
    /// SDK < 1.3: HIP_RUNTIME_API hipGraphLaunch, which only has the handle.
    Runtime { handle: ExecHandle },
}

impl LaunchedExec {
    pub const fn handle(self) -> ExecHandle {
        match self {
            LaunchedExec::Sdk { handle, .. } | LaunchedExec::Runtime { handle } => handle,
        }
    }
}

/// Where exec identities come from, which depends on the SDK version.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ExecIdentity {
    /// SDK 1.3+: HIP_GRAPH callbacks give a process-monotonic
    /// `graph_exec_id` from 1 plus the handle; the tracker uses the SDK's id.
    SdkGraphDomain,
    /// SDK < 1.3: only HIP_RUNTIME_API tracing of instantiate, launch,
    /// update and destroy gives handles; the tracker hands out its own
    /// process-monotonic ids from 1.
    RuntimeApi,
}

#[cfg(test)]
mod tests {
    use super::*;

    fn id(v: u32) -> AttributionId {
        AttributionId::new(v).unwrap()
    }

    #[test]
    fn packing_puts_the_id_high_and_the_node_low() {
        let key = GraphKey::new(id(1), NodeId(0));
        assert_eq!(key.pack(), 4_294_967_296);
        assert_eq!(key.graph_id(), 1);
        assert_eq!(key.graph_node_id() >> 32, 1);
        let key = GraphKey::new(id(0xFFFF_FFFF), NodeId(0xFFFF_FFFF));
        assert_eq!(key.pack(), u64::MAX);
        assert_eq!(GraphKey::new(id(7), NodeId(5)).pack(), (7 << 32) | 5);
    }

    #[test]
    fn unpack_inverts_pack_and_rejects_values_no_key_packs_to() {
        for (g, o) in [(1, 0), (1, 31), (0xFFFF_FFFF, 0), (123_456, 0xFFFF_FFFF)] {
            let key = GraphKey::new(id(g), NodeId(o));
            assert_eq!(GraphKey::unpack(key.pack()), Some(key));
        }
        assert_eq!(GraphKey::unpack(0), None);
        assert_eq!(GraphKey::unpack(5), None, "id half 0 is not graphed");
    }

    #[test]
    fn attribution_ids_refuse_zero_and_values_wider_than_32_bits() {
        assert_eq!(AttributionId::new(0), None);
        assert_eq!(AttributionId::from_u64(0), None);
        assert_eq!(AttributionId::from_u64(1 << 32), None);
        assert_eq!(AttributionId::from_u64(u32::MAX as u64), Some(id(u32::MAX)));
    }
}
