//! Random programs for the model: few kernels and shapes (so graphs repeat
//! kernels and eager launches share them), several execs of one graph,
//! updates and re-instantiation, all queues shared.

use std::collections::HashMap;

use graph_attribution::{Direction, FillParts, HostKernel};

use crate::rng::Rng;
use crate::sim::{ExecDef, GraphDef, NodeDef, NodeKind, Op, Setup, ThreadDef};

/// Host stubs 0xa0.. (as many as `Params::kernels` says); each resolves
/// to kernel id `stub - 0xa0 + 7`.
pub const STUBS: u64 = 16;
/// Launched now and then, never registered with the tool.
pub const UNREGISTERED: u64 = 0xbad;
const BYTES: [u64; 2] = [4096, 1 << 20];

/// A memset's parts: sizes and offsets around rocclr's 16-byte unit.
fn fill(rng: &mut Rng) -> FillParts {
    const FILL_BYTES: [u64; 5] = [4096, 100, 12, 28, 1 << 20];
    let dst = 0x1000 + 4 * rng.below(4);
    FillParts::of_1d(dst, rng.pick(&FILL_BYTES)).expect("a fill of at least one byte")
}

#[derive(Clone, Copy, Debug)]
pub struct Params {
    pub threads: u64,
    pub queues: u64,
    pub max_ops: u64,
    /// Unregistered stubs and launches without an attribution id.
    pub unknowns: bool,
    /// Distinct kernels the program uses (few: graphs repeat kernels and
    /// overlapping calls produce the same ones).
    pub kernels: u64,
    /// Most distinct kernels in one graph.
    pub per_graph: u64,
}

pub fn kernels() -> HashMap<u64, u64> {
    (0xa0..0xa0 + STUBS).map(|s| (s, s - 0xa0 + 7)).collect()
}

fn kernel(rng: &mut Rng, stubs: &[u64]) -> HostKernel {
    let grid = rng.pick(&[4, 8]);
    HostKernel::from_blocks(rng.pick(stubs), [grid, 1, 1], [64, 1, 1])
}

fn host_copy(rng: &mut Rng) -> (Direction, bool, u64) {
    (
        rng.pick(&[Direction::HostToDevice, Direction::DeviceToHost]),
        rng.chance(70),
        rng.pick(&BYTES),
    )
}

fn stubs(p: Params) -> Vec<u64> {
    (0xa0..0xa0 + p.kernels.min(STUBS)).collect()
}

pub fn graph(rng: &mut Rng, p: Params) -> GraphDef {
    let n = rng.range(1, 6) as usize;
    // Few distinct kernels per graph, so nodes repeat them.
    let all = stubs(p);
    let stubs: Vec<u64> = (0..rng.range(1, p.per_graph))
        .map(|_| rng.pick(&all))
        .collect();
    // Some graphs are mostly host copies (staging pipelines): copies of
    // one direction and several sizes, on the copy engine or as blits.
    let copies = rng.chance(25);
    let mut nodes = Vec::with_capacity(n);
    for i in 0..n {
        let roll = if copies && rng.chance(70) {
            80
        } else {
            rng.below(100)
        };
        let kind = match roll {
            0..=54 => NodeKind::Kernel(kernel(rng, &stubs)),
            55..=66 => NodeKind::Memset(fill(rng)),
            67..=74 => NodeKind::CopyD2D {
                bytes: rng.pick(&BYTES),
            },
            75..=91 => {
                let (direction, declared, bytes) = host_copy(rng);
                NodeKind::CopyHost {
                    direction,
                    declared,
                    bytes,
                }
            }
            _ => NodeKind::Empty,
        };
        let mut deps = Vec::new();
        if i > 0 && rng.chance(55) {
            deps.push(i - 1);
        }
        for d in 0..i.saturating_sub(1) {
            if rng.chance(25) {
                deps.push(d);
            }
        }
        nodes.push(NodeDef::new(kind, &deps));
    }
    GraphDef { nodes }
}

pub fn setup(rng: &mut Rng, p: Params) -> Setup {
    let graphs: Vec<GraphDef> = (0..rng.range(1, 3)).map(|_| graph(rng, p)).collect();
    let execs: Vec<ExecDef> = (0..rng.range(1, 4))
        .map(|_| ExecDef {
            graph: rng.below(graphs.len() as u64) as usize,
            plan: None,
        })
        .collect();
    let queues: Vec<u64> = (1..=p.queues).collect();
    let threads = (0..p.threads)
        .map(|_| ThreadDef {
            queue: rng.pick(&queues),
            ops: (0..rng.range(3, p.max_ops))
                .map(|_| op(rng, p, graphs.len(), execs.len()))
                .collect(),
        })
        .collect();
    Setup {
        graphs,
        execs,
        threads,
        kernels: kernels(),
        queues,
        side_percent: rng.pick(&[0, 20, 40]),
        max_write_steps: rng.range(1, 3),
        gpu_jitter: rng.pick(&[0, 30]),
    }
}

fn op(rng: &mut Rng, p: Params, graphs: usize, execs: usize) -> Op {
    let exec = rng.below(execs as u64) as usize;
    match rng.below(100) {
        0..=34 => Op::Launch {
            exec,
            sdma_nodes: rng.next_u64(),
            breaks: if rng.chance(50) { 0 } else { rng.next_u64() },
            no_id: p.unknowns && rng.chance(3),
        },
        35..=54 => {
            let stubs = if p.unknowns && rng.chance(5) {
                vec![UNREGISTERED]
            } else {
                stubs(p)
            };
            Op::Kernel(kernel(rng, &stubs))
        }
        55..=63 => Op::Getter,
        64..=68 => Op::Marker,
        69..=73 => Op::Memset(fill(rng)),
        74..=78 => Op::CopyD2D,
        79..=93 => {
            let (direction, declared, bytes) = host_copy(rng);
            Op::CopyHost {
                direction,
                declared,
                bytes,
                sdma: rng.chance(50),
            }
        }
        _ => {
            let graph = rng.below(graphs as u64) as usize;
            if rng.chance(50) {
                Op::Update {
                    exec,
                    graph,
                    plan: None,
                }
            } else {
                Op::Reinstantiate {
                    exec,
                    graph,
                    plan: None,
                }
            }
        }
    }
}
