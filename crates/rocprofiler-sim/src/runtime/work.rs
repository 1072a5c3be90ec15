//! Device work as both submission models see it: who asked for it, what it
//! is, and how long it runs.
use crate::workload::{Direction, Durations, DEFAULT_DIM};
use std::collections::HashMap;
use std::sync::Arc;

/// rocclr's blit kernels (rocblit.hpp `BlitName[]`): memsets and buffer
/// copies the runtime runs as kernels on the stream's queue.
pub(crate) const FILL_KERNEL: &str = "__amd_rocclr_fillBufferAligned";
pub(crate) const COPY_KERNEL: &str = "__amd_rocclr_copyBuffer";

/// The HIP call a unit of work came from (shared by the packets of a call).
pub(crate) struct Origin {
    pub launch_corr: u64,
    pub launching_thread: u64,
    pub exec_handle: u64,
    pub graph_exec_id: u64,
    pub exec_epoch: u32,
    pub graph: Option<Arc<str>>,
    pub stream_id: u64,
}

/// What a record-producing unit of work is.
#[derive(Clone)]
pub(crate) enum OpWork {
    Kernel {
        kernel_id: u64,
        name: Arc<str>,
        /// The record's grid_size: work-items per dimension.
        grid: [u32; 3],
        workgroup: [u32; 3],
        blit: bool,
        bytes: u64,
        direction: Option<Direction>,
        /// A fill blit's byte value.
        value: Option<u32>,
    },
    Copy {
        bytes: u64,
        direction: Direction,
        /// A peer copy's (source, destination) devices.
        peer: Option<(u32, u32)>,
    },
}

/// One kernel or copy that will produce a record.
pub(crate) struct DeviceOp {
    pub origin: Arc<Origin>,
    pub node_index: Option<u32>,
    pub ordinal: u32,
    /// The stream it is submitted on (an internal one included).
    pub exec_stream_id: u64,
    pub device: u32,
    pub work: OpWork,
    pub duration: u64,
}

/// A run's kernel symbols: name -> (kernel id, name).
pub(crate) type KernelTable = HashMap<String, (u64, Arc<str>)>;

fn mul(grid: [u32; 3], block: [u32; 3]) -> [u32; 3] {
    [
        grid[0].saturating_mul(block[0]),
        grid[1].saturating_mul(block[1]),
        grid[2].saturating_mul(block[2]),
    ]
}

/// A kernel launched with `grid` workgroups of `block` work-items.
pub(crate) fn kernel(
    kernels: &KernelTable,
    durations: &Durations,
    name: &str,
    grid: [u32; 3],
    block: [u32; 3],
) -> (OpWork, u64) {
    let (kernel_id, kname) = kernels[name].clone();
    (
        OpWork::Kernel {
            kernel_id,
            name: kname,
            grid: mul(grid, block),
            workgroup: block,
            blit: false,
            bytes: 0,
            direction: None,
            value: None,
        },
        durations.kernel(name),
    )
}

/// A blit kernel over `bytes`. Its geometry is this simulator's choice (the
/// sources give none): one work-item per 16 bytes in workgroups of 256; it
/// runs as long as a copy of the same size.
pub(crate) fn blit(
    kernels: &KernelTable,
    durations: &Durations,
    name: &str,
    bytes: u64,
    direction: Option<Direction>,
    value: Option<u32>,
) -> (OpWork, u64) {
    let (kernel_id, kname) = kernels[name].clone();
    let items = bytes.div_ceil(16).max(1);
    let groups = items
        .div_ceil(u64::from(DEFAULT_DIM[0]))
        .min(u64::from(u32::MAX / 256)) as u32;
    (
        OpWork::Kernel {
            kernel_id,
            name: kname,
            grid: [groups * 256, 1, 1],
            workgroup: DEFAULT_DIM,
            blit: true,
            bytes,
            direction,
            value,
        },
        durations.memcpy(bytes),
    )
}

/// A fill of `bytes` bytes at device address `dst` to the byte `value`.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Fill {
    pub dst: u64,
    pub bytes: u64,
    pub value: u32,
}

/// The fill blits of one memset, in the order they are dispatched. rocclr
/// packs a fill into up to three `FillBufferAligned` dispatches
/// (device/blit.cpp `HostBlitManager::FillBufferInfo::PackInfo`, run by
/// device/rocm/rocblit.cpp `KernelBlitManager::fillBuffer1D`): the head up to
/// the next 16-byte boundary (`kExtendedSize`), the 16-byte multiple after
/// it, and the tail left over; each part that is not empty is one kernel.
pub(crate) fn fill_parts(dst: u64, bytes: u64) -> Vec<u64> {
    const EXTENDED: u64 = 16;
    let head = (dst.next_multiple_of(EXTENDED) - dst).min(bytes);
    let body = (bytes - head) / EXTENDED * EXTENDED;
    let tail = bytes - head - body;
    [head, body, tail].into_iter().filter(|&b| b > 0).collect()
}

/// The blit kernels of a memset (see `fill_parts`).
pub(crate) fn fill(kernels: &KernelTable, durations: &Durations, f: Fill) -> Vec<(OpWork, u64)> {
    fill_parts(f.dst, f.bytes)
        .into_iter()
        .map(|part| blit(kernels, durations, FILL_KERNEL, part, None, Some(f.value)))
        .collect()
}

/// A copy run by a copy engine (a MEMORY_COPY record).
pub(crate) fn copy(durations: &Durations, bytes: u64, direction: Direction) -> (OpWork, u64) {
    (
        OpWork::Copy {
            bytes,
            direction,
            peer: None,
        },
        durations.memcpy(bytes),
    )
}

/// A peer copy from device `src` to device `dst`, on a copy engine.
pub(crate) fn peer_copy(durations: &Durations, bytes: u64, src: u32, dst: u32) -> (OpWork, u64) {
    (
        OpWork::Copy {
            bytes,
            direction: Direction::DeviceToDevice,
            peer: Some((src, dst)),
        },
        durations.memcpy(bytes),
    )
}

/// (source, destination) agents of a copy `peer` or to or from device
/// `gpu_agent`.
pub(crate) fn copy_agents_of(
    direction: Direction,
    gpu_agent: u64,
    peer: Option<(u32, u32)>,
) -> (u64, u64) {
    match peer {
        Some((src, dst)) => (
            crate::sdk::agents::agent_handle(src + 1),
            crate::sdk::agents::agent_handle(dst + 1),
        ),
        None => copy_agents(direction, gpu_agent),
    }
}

/// (source, destination) agents of a copy to or from device `gpu_agent`.
pub(crate) fn copy_agents(direction: Direction, gpu_agent: u64) -> (u64, u64) {
    let cpu = crate::sdk::agents::agent_handle(0);
    match direction {
        Direction::HostToHost => (cpu, cpu),
        Direction::HostToDevice => (cpu, gpu_agent),
        Direction::DeviceToHost => (gpu_agent, cpu),
        Direction::DeviceToDevice => (gpu_agent, gpu_agent),
    }
}

/// The MEMORY_COPY operation of a direction.
pub(crate) fn copy_operation(
    direction: Direction,
) -> rocprofiler_sys::rocprofiler_memory_copy_operation_t {
    rocprofiler_sys::rocprofiler_memory_copy_operation_t(direction.sdk_operation())
}

#[cfg(test)]
mod tests {
    use super::fill_parts;

    #[test]
    fn a_fill_is_cut_at_16_byte_boundaries() {
        assert_eq!(fill_parts(0x1000, 4096), [4096]);
        assert_eq!(fill_parts(0x1000, 100), [96, 4]);
        assert_eq!(fill_parts(0x1000, 12), [12]);
        assert_eq!(fill_parts(0x1004, 100), [12, 80, 8]);
        assert_eq!(fill_parts(0x1004, 8), [8]);
        assert_eq!(fill_parts(0x1004, 28), [12, 16]);
        assert_eq!(fill_parts(0x1000, 0), Vec::<u64>::new());
    }
}
