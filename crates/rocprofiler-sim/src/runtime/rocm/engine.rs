//! Which engine runs a copy or memset, and what a graph node becomes.
//!
//! - Memsets run as the blit kernel `__amd_rocclr_fillBufferAligned`
//!   (CLR-2024 rocblit.cpp `KernelBlitManager::fillBuffer1D`).
//! - Copies (CLR-2024 `KernelBlitManager::copyBuffer`): the blit kernel
//!   `__amd_rocclr_copyBuffer` when the size is at most
//!   GPU_FORCE_BLIT_COPY_SIZE (16 KiB) or neither side is host memory
//!   (device to device); otherwise an SDMA copy (`DmaBlitManager` ->
//!   hsa_amd_memory_async_copy, a MEMORY_COPY record). Host to host moves
//!   no device work.
//! - Graph nodes (CLR-SEG hip_graph_internal.hpp `GraphCaptureEnabled`):
//!   kernels, memsets and device-to-device 1-D copies (`hipCopyBuffer`,
//!   forced to BLIT) are captured as AQL packets and batched; other copies
//!   go through the command path (a blit kernel or an SDMA copy of their
//!   own) and break the batch.
use crate::workload::Direction;

/// GPU_FORCE_BLIT_COPY_SIZE, in bytes (rocsettings.cpp: 16 KiB).
const BLIT_COPY_MAX: u64 = 16 * 1024;

/// Where a copy of `bytes` in `direction` runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Engine {
    /// A blit kernel on the stream's queue.
    Blit,
    /// The device's SDMA copy engine.
    Sdma,
    /// The host: no device work.
    Host,
}

pub(crate) fn copy_engine(direction: Direction, bytes: u64) -> Engine {
    match direction {
        Direction::HostToHost => Engine::Host,
        Direction::DeviceToDevice => Engine::Blit,
        _ if bytes <= BLIT_COPY_MAX => Engine::Blit,
        _ => Engine::Sdma,
    }
}

/// Is a graph copy node captured into the launch's packet batches?
pub(crate) fn copy_node_captured(direction: Direction) -> bool {
    direction == Direction::DeviceToDevice
}
