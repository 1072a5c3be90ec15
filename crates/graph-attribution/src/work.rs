//! What work produces and what records show: the two sides the evidence
//! method matches.
//!
//! A HIP call says what it will put on the device (a kernel launch names
//! its host stub and launch shape, a copy its direction and size, a graph
//! launch its exec), and every completed record says what ran (kernel id
//! and launch shape, or a copy's direction and size). Neither side says
//! which call a record came from under shared queues; matching what could
//! have produced a record against what it shows is how the evidence method
//! finds out.

use std::fmt;

/// A copy's direction, as the HIP API and the copy records show it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Direction {
    HostToHost,
    HostToDevice,
    DeviceToHost,
    DeviceToDevice,
}

impl Direction {
    pub const ALL: [Direction; 4] = [
        Direction::HostToHost,
        Direction::HostToDevice,
        Direction::DeviceToHost,
        Direction::DeviceToDevice,
    ];
}

/// A kernel and the shape it was launched with: the kernel id the SDK puts
/// on its record, the grid in work-items (HIP's grid of blocks times the
/// block) and the block (workgroup) size.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct KernelShape {
    pub kernel_id: u64,
    pub grid: [u32; 3],
    pub block: [u32; 3],
}

/// Which of the runtime's own kernels a blit is (rocclr rocblit.hpp
/// `BlitName`: `__amd_rocclr_fillBuffer*` for memsets, `__amd_rocclr_copy*`
/// for copies).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum BlitKind {
    Fill,
    Copy,
    /// Another rocclr kernel (stream operations, the scheduler...): no HIP
    /// call the tool models produces one.
    Other,
}

impl BlitKind {
    /// The kind of a rocclr blit kernel, by its symbol name.
    pub fn of_kernel(name: &str) -> BlitKind {
        let name = name.trim_start_matches("__amd_rocclr_");
        if name.starts_with("fill") {
            BlitKind::Fill
        } else if name.starts_with("copy") {
            BlitKind::Copy
        } else {
            BlitKind::Other
        }
    }
}

/// The fill-blit records one memset produces, by the bytes each fills, in
/// dispatch order: 1 to 3. rocclr packs a 1-D fill into a head up to the
/// next 16-byte boundary, the 16-byte multiple after it and the tail left
/// over, each part that is not empty one `FillBufferAligned` dispatch,
/// written in that order (device/blit.cpp
/// `HostBlitManager::FillBufferInfo::PackInfo`, `kExtendedSize`; run by
/// device/rocm/rocblit.cpp `KernelBlitManager::fillBuffer1D`); a 2-D fill is
/// one `FillBufferAligned2D` dispatch (`fillBuffer2D`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct FillParts {
    bytes: [u64; 3],
    count: u8,
}

impl FillParts {
    /// The 16-byte unit rocclr aligns the middle of a fill to.
    const EXTENDED: u64 = 16;

    /// A 1-D fill of `bytes` bytes at device address `dst`; `None` for no
    /// bytes (ihipMemset returns before enqueueing anything).
    pub fn of_1d(dst: u64, bytes: u64) -> Option<FillParts> {
        if bytes == 0 {
            return None;
        }
        let head = (dst.next_multiple_of(Self::EXTENDED) - dst).min(bytes);
        let body = (bytes - head) / Self::EXTENDED * Self::EXTENDED;
        let tail = bytes - head - body;
        let mut parts = FillParts {
            bytes: [0; 3],
            count: 0,
        };
        for b in [head, body, tail].into_iter().filter(|&b| b > 0) {
            parts.bytes[usize::from(parts.count)] = b;
            parts.count += 1;
        }
        Some(parts)
    }

    /// A 2-D fill of `bytes` bytes in all: one dispatch.
    pub fn two_d(bytes: u64) -> FillParts {
        FillParts {
            bytes: [bytes, 0, 0],
            count: 1,
        }
    }

    /// The number of records, 1 to 3.
    pub fn count(self) -> usize {
        usize::from(self.count)
    }

    /// The bytes each record fills, in dispatch order.
    pub fn bytes(&self) -> &[u64] {
        &self.bytes[..self.count()]
    }
}

/// What one completed record shows about the work that produced it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Observed {
    /// A kernel the program launched.
    Kernel(KernelShape),
    /// One of the runtime's own blit kernels (rocclr's `__amd_rocclr_*`
    /// fills and buffer copies). The runtime picks the exact kernel and its
    /// shape itself, so a tool can only tell fills from copies.
    Blit(BlitKind),
    /// A copy-engine (SDMA) transfer.
    Copy { direction: Direction, bytes: u64 },
}

impl fmt::Display for Observed {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Observed::Kernel(k) => write!(
                f,
                "kernel {} grid {:?} block {:?}",
                k.kernel_id, k.grid, k.block
            ),
            Observed::Blit(kind) => write!(f, "{kind:?} blit kernel"),
            Observed::Copy { direction, bytes } => write!(f, "{direction:?} copy of {bytes} bytes"),
        }
    }
}

/// One record a unit of work produces, as far as its HIP call can tell.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Output {
    Kernel(KernelShape),
    /// A fill: a blit kernel.
    Blit(BlitKind),
    /// A copy: rocclr runs it as a blit kernel or on the copy engine
    /// depending on its size, the memory's kind and the devices involved
    /// (rocblit.cpp `KernelBlitManager::copyBuffer`), which a tool cannot
    /// see. `None` direction: `hipMemcpyDefault`, any direction.
    BlitOrCopy {
        direction: Option<Direction>,
        bytes: u64,
    },
}

impl Output {
    /// Could this output be the record `observed`?
    pub fn matches(&self, observed: &Observed) -> bool {
        match (self, observed) {
            (Output::Kernel(a), Observed::Kernel(b)) => a == b,
            (Output::Blit(a), Observed::Blit(b)) => a == b && *a != BlitKind::Other,
            (Output::BlitOrCopy { .. }, Observed::Blit(BlitKind::Copy)) => true,
            (
                Output::BlitOrCopy { direction, bytes },
                Observed::Copy {
                    direction: d,
                    bytes: b,
                },
            ) => direction.is_none_or(|dir| dir == *d) && bytes == b,
            _ => false,
        }
    }

    /// The match keys this output is indexed under.
    pub(crate) fn keys(&self) -> impl Iterator<Item = MatchKey> {
        let (first, copies): (MatchKey, &'static [Direction]) = match *self {
            Output::Kernel(shape) => (MatchKey::Kernel(shape), &[]),
            Output::Blit(kind) => (MatchKey::Blit(kind), &[]),
            Output::BlitOrCopy {
                direction: None, ..
            } => (MatchKey::Blit(BlitKind::Copy), &Direction::ALL),
            Output::BlitOrCopy {
                direction: Some(d), ..
            } => (
                MatchKey::Blit(BlitKind::Copy),
                match d {
                    Direction::HostToHost => &[Direction::HostToHost],
                    Direction::HostToDevice => &[Direction::HostToDevice],
                    Direction::DeviceToHost => &[Direction::DeviceToHost],
                    Direction::DeviceToDevice => &[Direction::DeviceToDevice],
                },
            ),
        };
        std::iter::once(first).chain(copies.iter().map(|&d| MatchKey::Copy(d)))
    }

    /// Outputs that may turn out as either of two kinds of record cannot be
    /// counted exactly per kind.
    pub(crate) fn is_alternative(&self) -> bool {
        matches!(self, Output::BlitOrCopy { .. })
    }
}

/// Where records and outputs meet: records are looked up, outputs indexed,
/// under these.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub(crate) enum MatchKey {
    Kernel(KernelShape),
    Blit(BlitKind),
    Copy(Direction),
}

impl MatchKey {
    pub(crate) fn of(observed: &Observed) -> MatchKey {
        match *observed {
            Observed::Kernel(shape) => MatchKey::Kernel(shape),
            Observed::Blit(kind) => MatchKey::Blit(kind),
            Observed::Copy { direction, .. } => MatchKey::Copy(direction),
        }
    }
}

/// The host stub a kernel is launched through (hipLaunchKernel's
/// `function_address`, a kernel node's `func`), before it is resolved to
/// the kernel id records carry.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct HostKernel {
    pub host_function: u64,
    /// Work-items per dimension (HIP's grid of blocks times the block).
    pub grid: [u32; 3],
    pub block: [u32; 3],
}

impl HostKernel {
    /// `grid_blocks` in blocks, as HIP's launch calls take it.
    pub fn from_blocks(host_function: u64, grid_blocks: [u32; 3], block: [u32; 3]) -> HostKernel {
        HostKernel {
            host_function,
            grid: [
                grid_blocks[0].saturating_mul(block[0]),
                grid_blocks[1].saturating_mul(block[1]),
                grid_blocks[2].saturating_mul(block[2]),
            ],
            block,
        }
    }
}

/// Resolves host stubs to kernel ids (CODE_OBJECT
/// HOST_KERNEL_SYMBOL_REGISTER gives both).
pub trait KernelLookup {
    fn kernel_id(&self, host_function: u64) -> Option<u64>;
}

impl<S: std::hash::BuildHasher> KernelLookup for std::collections::HashMap<u64, u64, S> {
    fn kernel_id(&self, host_function: u64) -> Option<u64> {
        self.get(&host_function).copied()
    }
}

impl HostKernel {
    /// The output this launch produces, once its stub is known.
    pub fn resolve(&self, kernels: &dyn KernelLookup) -> Option<Output> {
        kernels.kernel_id(self.host_function).map(|kernel_id| {
            Output::Kernel(KernelShape {
                kernel_id,
                grid: self.grid,
                block: self.block,
            })
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_fill_is_one_record_per_part_around_16_byte_boundaries() {
        let parts = |dst, bytes| FillParts::of_1d(dst, bytes).map(|p| p.bytes().to_vec());
        assert_eq!(parts(0x1000, 4096), Some(vec![4096]));
        assert_eq!(parts(0x1000, 100), Some(vec![96, 4]));
        assert_eq!(parts(0x1000, 12), Some(vec![12]));
        assert_eq!(parts(0x1004, 100), Some(vec![12, 80, 8]));
        assert_eq!(parts(0x1004, 8), Some(vec![8]));
        assert_eq!(parts(0x1004, 28), Some(vec![12, 16]));
        assert_eq!(parts(0x1000, 0), None);
        assert_eq!(FillParts::two_d(640).bytes(), [640]);
    }

    fn shape(kernel_id: u64) -> KernelShape {
        KernelShape {
            kernel_id,
            grid: [65536, 1, 1],
            block: [256, 1, 1],
        }
    }

    #[test]
    fn outputs_match_only_records_they_could_be() {
        let k = Output::Kernel(shape(1));
        assert!(k.matches(&Observed::Kernel(shape(1))));
        assert!(!k.matches(&Observed::Kernel(shape(2))));
        let mut wider = shape(1);
        wider.grid[0] *= 2;
        assert!(
            !k.matches(&Observed::Kernel(wider)),
            "same kernel, other shape"
        );
        assert!(!k.matches(&Observed::Blit(BlitKind::Copy)));
        assert!(Output::Blit(BlitKind::Fill).matches(&Observed::Blit(BlitKind::Fill)));
        assert!(!Output::Blit(BlitKind::Fill).matches(&Observed::Blit(BlitKind::Copy)));
        assert!(!Output::Blit(BlitKind::Other).matches(&Observed::Blit(BlitKind::Other)));
        let h2d = Output::BlitOrCopy {
            direction: Some(Direction::HostToDevice),
            bytes: 4096,
        };
        assert!(h2d.matches(&Observed::Blit(BlitKind::Copy)));
        assert!(!h2d.matches(&Observed::Blit(BlitKind::Fill)));
        assert!(h2d.matches(&Observed::Copy {
            direction: Direction::HostToDevice,
            bytes: 4096
        }));
        assert!(!h2d.matches(&Observed::Copy {
            direction: Direction::DeviceToHost,
            bytes: 4096
        }));
        assert!(!h2d.matches(&Observed::Copy {
            direction: Direction::HostToDevice,
            bytes: 8192
        }));
        let any = Output::BlitOrCopy {
            direction: None,
            bytes: 1,
        };
        assert!(any.matches(&Observed::Copy {
            direction: Direction::DeviceToHost,
            bytes: 1
        }));
    }

    #[test]
    fn an_output_is_indexed_under_every_key_a_matching_record_has() {
        let outputs = [
            Output::Kernel(shape(3)),
            Output::Blit(BlitKind::Fill),
            Output::Blit(BlitKind::Copy),
            Output::BlitOrCopy {
                direction: Some(Direction::DeviceToHost),
                bytes: 10,
            },
            Output::BlitOrCopy {
                direction: None,
                bytes: 10,
            },
        ];
        let records = [
            Observed::Kernel(shape(3)),
            Observed::Blit(BlitKind::Fill),
            Observed::Blit(BlitKind::Copy),
            Observed::Copy {
                direction: Direction::DeviceToHost,
                bytes: 10,
            },
            Observed::Copy {
                direction: Direction::HostToDevice,
                bytes: 10,
            },
        ];
        for output in outputs {
            let keys: Vec<MatchKey> = output.keys().collect();
            for record in records {
                if output.matches(&record) {
                    assert!(
                        keys.contains(&MatchKey::of(&record)),
                        "{output:?} {record:?}"
                    );
                }
            }
        }
    }

    #[test]
    fn blit_kernels_are_told_apart_by_their_family() {
        assert_eq!(
            BlitKind::of_kernel("__amd_rocclr_fillBufferAligned"),
            BlitKind::Fill
        );
        assert_eq!(
            BlitKind::of_kernel("__amd_rocclr_fillBufferAligned2D"),
            BlitKind::Fill
        );
        assert_eq!(
            BlitKind::of_kernel("__amd_rocclr_copyBuffer"),
            BlitKind::Copy
        );
        assert_eq!(
            BlitKind::of_kernel("__amd_rocclr_copyBufferRectAligned"),
            BlitKind::Copy
        );
        assert_eq!(
            BlitKind::of_kernel("__amd_rocclr_streamOpsWrite"),
            BlitKind::Other
        );
    }

    #[test]
    fn a_launch_in_blocks_becomes_work_items() {
        let k = HostKernel::from_blocks(7, [256, 2, 1], [64, 1, 1]);
        assert_eq!(k.grid, [16384, 2, 1]);
        let lookup: std::collections::HashMap<u64, u64> = [(7, 42)].into_iter().collect();
        assert_eq!(
            k.resolve(&lookup),
            Some(Output::Kernel(KernelShape {
                kernel_id: 42,
                grid: [16384, 2, 1],
                block: [64, 1, 1]
            }))
        );
        assert_eq!(
            HostKernel::from_blocks(8, [1, 1, 1], [1, 1, 1]).resolve(&lookup),
            None
        );
    }
}
