//! The ROCm submission model, step by step.
//!
//! Threads run HIP calls one after another. Inside a call a thread CLAIMS
//! the next slot(s) of a hardware queue (queues are shared), WRITES them
//! (one or more steps, while other threads act), PUBLISHES them and RINGS
//! the doorbell. A ring processes, on the ringing thread, every published
//! slot from the queue's next unprocessed one up to the first claimed but
//! unpublished slot; each processed kernel or blit packet becomes a record
//! stamped with the call in progress on the *ringing* thread and the next
//! process-wide dispatch id. Barrier packets take slots but make no record.
//! Copy-engine (SDMA) copies are no queue packets: their record carries the
//! issuing call.
//!
//! A graph launch enqueues its exec's nodes in a topological order fixed per
//! exec (not creation order), each node on a queue fixed per exec (`None`:
//! the launching thread's stream), with a barrier packet before a node that
//! waits for a node on another queue (or on the copy engine), a barrier on
//! each side queue first (fork) and one on the launch queue last (join).
//! Consecutive packets for one queue may be claimed, written, published and
//! rung as one batch.
//!
//! On the GPU a queue runs its packets in slot order without overlap, a node
//! starts after every node it waits for has ended, work on a thread's stream
//! starts after the stream's earlier work has ended (a launch's side queues
//! and copy-engine roots wait for it, and a launch joins everything it ran
//! elsewhere back to the stream), and no two records start at the same time.
//!
//! Every step advances one clock by `STEP`, so host timestamps are distinct;
//! window edges are cut between steps.
//!
//! The model knows the truth of every record (the call that wrote it and,
//! for graph work, its exec's attribution id at launch and the node's
//! creation index); the evidence it hands the tool is only what the tool
//! would see.

use std::collections::{HashMap, HashSet, VecDeque};
use std::sync::Arc;

use graph_attribution::{
    AttributionId, BlitKind, Call, CallWork, Direction, ExecContents, ExecHandle, FillParts,
    GraphHandle, GraphStructure, HostKernel, KernelShape, NodeHandle, NodeWork, Observation,
    Observed, ObservedTable, Output, Span,
};

use crate::rng::Rng;

/// Host clock advance per micro-step.
pub const STEP: u64 = 10;

/// What a graph node does.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NodeKind {
    Kernel(HostKernel),
    /// A memset: one fill blit per part.
    Memset(FillParts),
    CopyD2D {
        bytes: u64,
    },
    /// A host<->device copy; `declared` false is hipMemcpyDefault (the tool
    /// sees no direction).
    CopyHost {
        direction: Direction,
        declared: bool,
        bytes: u64,
    },
    /// Empty, event or wait node: a barrier packet, no record.
    Empty,
}

#[derive(Clone, Debug)]
pub struct NodeDef {
    pub kind: NodeKind,
    /// Creation indices of the nodes it waits for (all earlier).
    pub deps: Vec<usize>,
    /// Added through a call the tool does not see (a lie in the evidence:
    /// only for the consistency test; keep such nodes last).
    pub untracked: bool,
}

impl NodeDef {
    pub fn new(kind: NodeKind, deps: &[usize]) -> NodeDef {
        NodeDef {
            kind,
            deps: deps.to_vec(),
            untracked: false,
        }
    }
}

#[derive(Clone, Debug, Default)]
pub struct GraphDef {
    pub nodes: Vec<NodeDef>,
}

impl GraphDef {
    /// Does node `later` wait, directly or not, for node `earlier`?
    pub fn depends_on(&self, later: usize, earlier: usize) -> bool {
        let mut stack = vec![later];
        let mut seen = HashSet::new();
        while let Some(n) = stack.pop() {
            for &d in &self.nodes[n].deps {
                if d == earlier {
                    return true;
                }
                if seen.insert(d) {
                    stack.push(d);
                }
            }
        }
        false
    }

    /// Are these nodes totally ordered by the dependencies?
    pub fn is_chain(&self, nodes: &[usize]) -> bool {
        let mut n = nodes.to_vec();
        n.sort_unstable();
        n.windows(2).all(|w| self.depends_on(w[1], w[0]))
    }

    /// How many records node `n` produces when it runs on the device.
    pub fn records(&self, n: usize) -> usize {
        match self.nodes[n].kind {
            NodeKind::Memset(fills) => fills.count(),
            _ => 1,
        }
    }

    /// What node `n` produces as the tool's structure describes it.
    pub fn output(&self, n: usize, kernels: &HashMap<u64, u64>) -> Option<Output> {
        match self.nodes[n].kind {
            NodeKind::Kernel(k) => Some(Output::Kernel(shape(k, kernels))),
            NodeKind::Memset(_) => Some(Output::Blit(BlitKind::Fill)),
            NodeKind::CopyD2D { .. } => Some(Output::Blit(BlitKind::Copy)),
            NodeKind::CopyHost {
                direction,
                declared,
                bytes,
            } => Some(Output::BlitOrCopy {
                direction: declared.then_some(direction),
                bytes,
            }),
            NodeKind::Empty => None,
        }
    }
}

/// How an exec runs its graph, fixed from instantiate (or update) on.
#[derive(Clone, Debug)]
pub struct Plan {
    /// A topological order of the nodes.
    pub order: Vec<usize>,
    /// Per node, its queue; `None`: the launching thread's stream.
    pub queues: Vec<Option<u64>>,
}

#[derive(Clone, Debug)]
pub enum Op {
    /// A call that does nothing on the device (a getter, an allocation).
    Getter,
    /// hipEventRecord and the like: one barrier packet on the stream.
    Marker,
    Kernel(HostKernel),
    /// A memset: one fill blit per part.
    Memset(FillParts),
    /// A device-to-device copy: a blit.
    CopyD2D,
    /// A host<->device copy: on the copy engine (`sdma`) or as a blit.
    CopyHost {
        direction: Direction,
        declared: bool,
        bytes: u64,
        sdma: bool,
    },
    Launch {
        exec: usize,
        /// Bit n: host-copy node n runs on the copy engine in this launch.
        sdma_nodes: u64,
        /// Bit i (mod 64): a batch ends after the launch's i-th packet.
        breaks: u64,
        /// The launch reaches the tool without its exec's attribution id.
        no_id: bool,
    },
    /// hipGraphExecUpdate: the exec runs `graph` under a new attribution id.
    Update {
        exec: usize,
        graph: usize,
        plan: Option<Plan>,
    },
    /// hipGraphExecDestroy then hipGraphInstantiate at the same handle.
    Reinstantiate {
        exec: usize,
        graph: usize,
        plan: Option<Plan>,
    },
}

impl Op {
    /// A launch of `exec`, one batch per queue run, host copies as blits.
    pub fn launch(exec: usize) -> Op {
        Op::Launch {
            exec,
            sdma_nodes: 0,
            breaks: 0,
            no_id: false,
        }
    }
}

#[derive(Clone, Debug)]
pub struct ThreadDef {
    /// The hardware queue of the thread's stream.
    pub queue: u64,
    pub ops: Vec<Op>,
}

#[derive(Clone, Debug)]
pub struct ExecDef {
    pub graph: usize,
    pub plan: Option<Plan>,
}

#[derive(Clone, Debug, Default)]
pub struct Setup {
    pub graphs: Vec<GraphDef>,
    /// Instantiated before anything runs.
    pub execs: Vec<ExecDef>,
    pub threads: Vec<ThreadDef>,
    /// Host stub -> kernel id, as the tool knows it.
    pub kernels: HashMap<u64, u64>,
    /// Queues a random plan may put nodes on.
    pub queues: Vec<u64>,
    /// Percent chance that a node of a random plan goes to another queue.
    pub side_percent: u64,
    /// Write steps per batch: 1 ..= max.
    pub max_write_steps: u64,
    /// A record starts up to this long after it was processed (0: at once,
    /// for hand-built schedules).
    pub gpu_jitter: u64,
}

/// The kernel id the SDK puts on a record (an unregistered stub still has
/// one; the tool just cannot resolve it).
pub fn shape(k: HostKernel, kernels: &HashMap<u64, u64>) -> KernelShape {
    KernelShape {
        kernel_id: kernels
            .get(&k.host_function)
            .copied()
            .unwrap_or(k.host_function + 1_000_000),
        grid: k.grid,
        block: k.block,
    }
}

/// What really produced a record.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Truth {
    /// The call that wrote the packet (or issued the copy).
    pub call: u64,
    pub graph: Option<GraphTruth>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct GraphTruth {
    /// The exec's attribution id at launch, as the launch's evidence has it.
    pub id: Option<AttributionId>,
    pub node: u32,
    /// Index into the model's graphs.
    pub graph: usize,
}

/// A completed record and its truth.
#[derive(Clone, Debug)]
pub struct Rec {
    pub observation: Observation,
    pub truth: Truth,
    /// When it was processed (a packet) or issued (a copy).
    pub time: u64,
    gpu: usize,
}

/// One micro-step kind, for scripted schedules.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Step {
    Enter,
    Claim,
    Write,
    Publish,
    Ring,
    Sdma,
    Exit,
}

#[derive(Clone, Debug)]
struct Packet {
    record: Option<(Observed, Truth)>,
    gpu: usize,
}

#[derive(Clone, Debug)]
enum Micro {
    Claim(u64, Vec<Packet>),
    Write,
    Publish,
    Ring(u64),
    Sdma(Observed, Truth, usize),
    Exit,
}

impl Micro {
    fn kind(&self) -> Step {
        match self {
            Micro::Claim(..) => Step::Claim,
            Micro::Write => Step::Write,
            Micro::Publish => Step::Publish,
            Micro::Ring(_) => Step::Ring,
            Micro::Sdma(..) => Step::Sdma,
            Micro::Exit => Step::Exit,
        }
    }
}

struct InCall {
    call: usize,
    steps: VecDeque<Micro>,
    claimed: Option<(u64, std::ops::Range<usize>)>,
}

struct ThreadState {
    queue: u64,
    ops: VecDeque<Op>,
    current: Option<InCall>,
    /// The GPU item the thread's stream's next work waits for (stream
    /// semantics: work on a stream runs in the order it was enqueued).
    stream_last: Option<usize>,
}

#[derive(Default)]
struct QueueState {
    slots: Vec<(Packet, bool)>,
    next: usize,
    last_item: Option<usize>,
}

#[derive(Clone, Debug, Default)]
struct GpuItem {
    ready: Option<u64>,
    deps: Vec<usize>,
    queue_pred: Option<usize>,
    seq: u64,
    start: u64,
    end: u64,
}

struct ExecState {
    handle: ExecHandle,
    id: AttributionId,
    graph: usize,
    plan: Plan,
}

pub struct Sim {
    rng: Rng,
    now: u64,
    structure: GraphStructure,
    graphs: Vec<GraphDef>,
    graph_handles: Vec<GraphHandle>,
    execs: Vec<ExecState>,
    next_id: u32,
    threads: Vec<ThreadState>,
    queues: HashMap<u64, QueueState>,
    calls: Vec<(Call, usize)>,
    records: Vec<Rec>,
    /// What the records show, interned as the tool's finishing does.
    observed: ObservedTable,
    gpu: Vec<GpuItem>,
    seq: u64,
    dispatch: u64,
    next_corr: u64,
    kernels: HashMap<u64, u64>,
    side_queues: Vec<u64>,
    side_percent: u64,
    max_write_steps: u64,
    gpu_jitter: u64,
}

impl Sim {
    pub fn new(setup: Setup, seed: u64) -> Sim {
        let structure = GraphStructure::new();
        let mut node_handle = 0u64;
        let mut graph_handles = Vec::new();
        for (g, graph) in setup.graphs.iter().enumerate() {
            let handle = GraphHandle(0x1000 + g as u64);
            structure.graph_created(handle);
            let mut handles = Vec::new();
            for node in &graph.nodes {
                node_handle += 1;
                let h = NodeHandle(node_handle);
                handles.push(h);
                if node.untracked {
                    continue;
                }
                let deps: Vec<NodeHandle> = node.deps.iter().map(|&d| handles[d]).collect();
                structure.node_added(handle, h, &deps, node_work(node.kind));
            }
            graph_handles.push(handle);
        }
        let mut sim = Sim {
            rng: Rng::new(seed),
            now: STEP,
            structure,
            graphs: setup.graphs,
            graph_handles,
            execs: Vec::new(),
            next_id: 1,
            threads: setup
                .threads
                .into_iter()
                .map(|t| ThreadState {
                    queue: t.queue,
                    ops: t.ops.into(),
                    current: None,
                    stream_last: None,
                })
                .collect(),
            queues: HashMap::new(),
            calls: Vec::new(),
            records: Vec::new(),
            observed: ObservedTable::default(),
            gpu: Vec::new(),
            seq: 0,
            dispatch: 0,
            next_corr: 1,
            kernels: setup.kernels,
            side_queues: setup.queues,
            side_percent: setup.side_percent,
            max_write_steps: setup.max_write_steps.max(1),
            gpu_jitter: setup.gpu_jitter,
        };
        for (e, exec) in setup.execs.into_iter().enumerate() {
            let handle = ExecHandle(0x7f00_0000 + e as u64);
            sim.structure
                .exec_instantiated(handle, sim.graph_handles[exec.graph]);
            let plan = exec.plan.unwrap_or_else(|| sim.random_plan(exec.graph));
            let id = sim.new_id();
            sim.execs.push(ExecState {
                handle,
                id,
                graph: exec.graph,
                plan,
            });
        }
        sim
    }

    fn new_id(&mut self) -> AttributionId {
        let id = AttributionId::new(self.next_id).unwrap();
        self.next_id += 1;
        id
    }

    /// The attribution id exec `e` has now.
    pub fn exec_id(&self, e: usize) -> AttributionId {
        self.execs[e].id
    }

    fn random_plan(&mut self, graph: usize) -> Plan {
        let nodes = &self.graphs[graph].nodes;
        let mut done = vec![false; nodes.len()];
        let mut order = Vec::with_capacity(nodes.len());
        while order.len() < nodes.len() {
            let ready: Vec<usize> = (0..nodes.len())
                .filter(|&n| !done[n] && nodes[n].deps.iter().all(|&d| done[d]))
                .collect();
            let n = ready[self.rng.below(ready.len() as u64) as usize];
            done[n] = true;
            order.push(n);
        }
        let queues = (0..nodes.len())
            .map(|_| {
                (!self.side_queues.is_empty() && self.rng.chance(self.side_percent)).then(|| {
                    self.side_queues[self.rng.below(self.side_queues.len() as u64) as usize]
                })
            })
            .collect();
        Plan { order, queues }
    }

    /// A window edge between the last step and the next.
    pub fn cut_now(&self) -> u64 {
        self.now + STEP / 2
    }

    /// Let time pass with nobody acting.
    pub fn idle(&mut self, steps: u64) {
        self.now += steps * STEP;
    }

    pub fn done(&self) -> bool {
        self.threads
            .iter()
            .all(|t| t.current.is_none() && t.ops.is_empty())
    }

    /// The kind of thread `t`'s next micro-step, `None` when it is done.
    pub fn next(&self, t: usize) -> Option<Step> {
        let thread = &self.threads[t];
        match &thread.current {
            Some(c) => c.steps.front().map(Micro::kind),
            None => (!thread.ops.is_empty()).then_some(Step::Enter),
        }
    }

    /// Step thread `t` until its next micro-step is `kind`.
    pub fn until(&mut self, t: usize, kind: Step) {
        while self.next(t) != Some(kind) {
            assert!(self.next(t).is_some(), "thread {t} never reaches {kind:?}");
            self.step(t);
        }
    }

    /// Step thread `t` until it has performed `kind`.
    pub fn through(&mut self, t: usize, kind: Step) {
        self.until(t, kind);
        self.step(t);
    }

    /// Run thread `t`'s current (or next) call to its EXIT.
    pub fn finish_call(&mut self, t: usize) {
        self.through(t, Step::Exit);
    }

    /// Run every thread, in turn, to the end of its program.
    pub fn run_rest(&mut self) {
        while !self.done() {
            for t in 0..self.threads.len() {
                while self.next(t).is_some() {
                    self.step(t);
                }
            }
        }
    }

    /// Interleave every thread's micro-steps at random until all are done.
    /// `burst`: the most micro-steps one thread takes in a row (small:
    /// calls overlap all the time; large: threads mostly take turns).
    pub fn run_random(&mut self, rng: &mut Rng, idle_percent: u64, burst: u64) {
        let n = self.threads.len();
        while !self.done() {
            if rng.chance(idle_percent) {
                self.idle(1 + rng.below(3));
                continue;
            }
            let live: Vec<usize> = (0..n).filter(|&t| self.next(t).is_some()).collect();
            let t = live[rng.below(live.len() as u64) as usize];
            for _ in 0..rng.range(1, burst) {
                if self.next(t).is_none() {
                    break;
                }
                self.step(t);
            }
        }
    }

    /// One micro-step of thread `t`.
    pub fn step(&mut self, t: usize) {
        self.now += STEP;
        let now = self.now;
        if self.threads[t].current.is_none() {
            let op = self.threads[t].ops.pop_front().expect("thread has ops");
            self.enter(t, op);
            return;
        }
        let current = self.threads[t].current.as_mut().unwrap();
        let call = current.call;
        let micro = current.steps.pop_front().expect("a call ends with Exit");
        match micro {
            Micro::Claim(queue, packets) => {
                let q = self.queues.entry(queue).or_default();
                let first = q.slots.len();
                for p in packets {
                    let item = &mut self.gpu[p.gpu];
                    item.queue_pred = q.last_item;
                    item.seq = self.seq;
                    self.seq += 1;
                    q.last_item = Some(p.gpu);
                    q.slots.push((p, false));
                }
                let last = q.slots.len();
                self.threads[t].current.as_mut().unwrap().claimed = Some((queue, first..last));
            }
            Micro::Write => {}
            Micro::Publish => {
                let (queue, range) = current.claimed.take().expect("publish after claim");
                let q = self.queues.get_mut(&queue).unwrap();
                for slot in &mut q.slots[range] {
                    slot.1 = true;
                }
            }
            Micro::Ring(queue) => {
                let corr = self.calls[call].0.correlation_id;
                let q = self.queues.get_mut(&queue).unwrap();
                while q.next < q.slots.len() && q.slots[q.next].1 {
                    let packet = q.slots[q.next].0.clone();
                    q.next += 1;
                    self.gpu[packet.gpu].ready = Some(now);
                    if let Some((observed, truth)) = packet.record {
                        self.dispatch += 1;
                        self.records.push(Rec {
                            observation: Observation {
                                correlation_id: corr,
                                observed: self.observed.intern(observed),
                                queue_id: queue,
                                dispatch_id: Some(self.dispatch),
                                start_ns: 0,
                                end_ns: 0,
                            },
                            truth,
                            time: now,
                            gpu: packet.gpu,
                        });
                    }
                }
            }
            Micro::Sdma(observed, truth, gpu) => {
                let corr = self.calls[call].0.correlation_id;
                let item = &mut self.gpu[gpu];
                item.ready = Some(now);
                item.seq = self.seq;
                self.seq += 1;
                self.records.push(Rec {
                    observation: Observation {
                        correlation_id: corr,
                        observed: self.observed.intern(observed),
                        queue_id: 0,
                        dispatch_id: None,
                        start_ns: 0,
                        end_ns: 0,
                    },
                    truth,
                    time: now,
                    gpu,
                });
            }
            Micro::Exit => {
                self.calls[call].0.exit_ns = now;
                self.threads[t].current = None;
            }
        }
    }

    fn item(&mut self, deps: Vec<usize>) -> usize {
        self.gpu.push(GpuItem {
            deps,
            ..GpuItem::default()
        });
        self.gpu.len() - 1
    }

    fn write_steps(&mut self) -> u64 {
        1 + self.rng.below(self.max_write_steps)
    }

    /// Claim, write, publish, ring.
    fn batch(&mut self, steps: &mut VecDeque<Micro>, queue: u64, packets: Vec<Packet>) {
        steps.push_back(Micro::Claim(queue, packets));
        for _ in 0..self.write_steps() {
            steps.push_back(Micro::Write);
        }
        steps.push_back(Micro::Publish);
        steps.push_back(Micro::Ring(queue));
    }

    fn enter(&mut self, t: usize, op: Op) {
        let corr = self.next_corr;
        self.next_corr += 1;
        let queue = self.threads[t].queue;
        let eager = Truth {
            call: corr,
            graph: None,
        };
        let mut steps = VecDeque::new();
        let after: Vec<usize> = self.threads[t].stream_last.into_iter().collect();
        let gpu_before = self.gpu.len();
        let work = match op {
            Op::Getter => CallWork::NoDevice,
            Op::Marker => {
                let gpu = self.item(after.clone());
                self.batch(&mut steps, queue, vec![Packet { record: None, gpu }]);
                CallWork::Barrier
            }
            Op::Kernel(k) => {
                let gpu = self.item(after.clone());
                let observed = Observed::Kernel(shape(k, &self.kernels));
                let record = Some((observed, eager));
                self.batch(&mut steps, queue, vec![Packet { record, gpu }]);
                CallWork::Kernel(k)
            }
            Op::Memset(fills) => {
                // The parts run in order on the stream's queue.
                let mut packets = Vec::new();
                let mut waits = after.clone();
                for _ in 0..fills.count() {
                    let gpu = self.item(waits);
                    let record = Some((Observed::Blit(BlitKind::Fill), eager));
                    packets.push(Packet { record, gpu });
                    waits = vec![gpu];
                }
                self.batch(&mut steps, queue, packets);
                CallWork::Fill(fills)
            }
            Op::CopyD2D => {
                let gpu = self.item(after.clone());
                let record = Some((Observed::Blit(BlitKind::Copy), eager));
                self.batch(&mut steps, queue, vec![Packet { record, gpu }]);
                CallWork::Output(Output::Blit(BlitKind::Copy))
            }
            Op::CopyHost {
                direction,
                declared,
                bytes,
                sdma,
            } => {
                let gpu = self.item(after.clone());
                if sdma {
                    steps.push_back(Micro::Sdma(Observed::Copy { direction, bytes }, eager, gpu));
                } else {
                    let record = Some((Observed::Blit(BlitKind::Copy), eager));
                    self.batch(&mut steps, queue, vec![Packet { record, gpu }]);
                }
                CallWork::Output(Output::BlitOrCopy {
                    direction: declared.then_some(direction),
                    bytes,
                })
            }
            Op::Launch {
                exec,
                sdma_nodes,
                breaks,
                no_id,
            } => self.launch(
                &mut steps, queue, corr, exec, sdma_nodes, breaks, no_id, &after,
            ),
            Op::Update { exec, graph, plan } => {
                let handle = self.execs[exec].handle;
                self.structure
                    .exec_updated(handle, self.graph_handles[graph]);
                self.replace(exec, graph, plan);
                CallWork::NoDevice
            }
            Op::Reinstantiate { exec, graph, plan } => {
                let handle = self.execs[exec].handle;
                self.structure.exec_destroyed(handle);
                self.structure
                    .exec_instantiated(handle, self.graph_handles[graph]);
                self.replace(exec, graph, plan);
                CallWork::NoDevice
            }
        };
        // The stream's next work waits for this op's last GPU item.
        if self.gpu.len() > gpu_before {
            self.threads[t].stream_last = Some(self.gpu.len() - 1);
        }
        steps.push_back(Micro::Exit);
        self.calls.push((
            Call {
                correlation_id: corr,
                thread_id: t as u64 + 1,
                enter_ns: self.now,
                exit_ns: u64::MAX,
                // One stream per thread, on the thread's queue.
                stream: Some(t as u64 + 1),
                work,
            },
            t,
        ));
        self.threads[t].current = Some(InCall {
            call: self.calls.len() - 1,
            steps,
            claimed: None,
        });
    }

    fn replace(&mut self, exec: usize, graph: usize, plan: Option<Plan>) {
        let plan = plan.unwrap_or_else(|| self.random_plan(graph));
        let id = self.new_id();
        let state = &mut self.execs[exec];
        state.graph = graph;
        state.plan = plan;
        state.id = id;
    }

    #[allow(clippy::too_many_arguments)]
    fn launch(
        &mut self,
        steps: &mut VecDeque<Micro>,
        launch_queue: u64,
        corr: u64,
        exec: usize,
        sdma_nodes: u64,
        breaks: u64,
        no_id: bool,
        after: &[usize],
    ) -> CallWork {
        let contents: Arc<ExecContents> = self.structure.exec_contents(self.execs[exec].handle);
        let state = &self.execs[exec];
        let id = (!no_id).then_some(state.id);
        let graph_index = state.graph;
        let graph = self.graphs[graph_index].clone();
        let plan = state.plan.clone();
        let queue_of = |n: usize| plan.queues[n].unwrap_or(launch_queue);
        // (queue, packet) or a copy-engine copy, in issue order.
        enum Issue {
            Packet(u64, Packet),
            Sdma(Observed, Truth, usize),
        }
        let mut issues = Vec::new();
        let mut side: Vec<u64> = (0..graph.nodes.len())
            .map(queue_of)
            .filter(|&q| q != launch_queue)
            .collect();
        side.sort_unstable();
        side.dedup();
        // A launch runs after the stream's earlier work: the side queues'
        // fork barriers, and copy-engine roots, wait for it.
        for &q in &side {
            let gpu = self.item(after.to_vec());
            issues.push(Issue::Packet(q, Packet { record: None, gpu }));
        }
        // The GPU item that ends each node, and where it ran (None: copy engine).
        let mut ends: Vec<Option<(usize, Option<u64>)>> = vec![None; graph.nodes.len()];
        for &n in &plan.order {
            let node = &graph.nodes[n];
            let mut deps: Vec<usize> = node.deps.iter().map(|&d| ends[d].unwrap().0).collect();
            if node.deps.is_empty() {
                deps.extend_from_slice(after);
            }
            let truth = Truth {
                call: corr,
                graph: Some(GraphTruth {
                    id,
                    node: n as u32,
                    graph: graph_index,
                }),
            };
            if let NodeKind::CopyHost {
                direction, bytes, ..
            } = node.kind
            {
                if sdma_nodes >> (n % 64) & 1 == 1 {
                    let gpu = self.item(deps);
                    issues.push(Issue::Sdma(Observed::Copy { direction, bytes }, truth, gpu));
                    ends[n] = Some((gpu, None));
                    continue;
                }
            }
            let q = queue_of(n);
            let cross: Vec<usize> = node
                .deps
                .iter()
                .filter(|&&d| ends[d].unwrap().1 != Some(q))
                .map(|&d| ends[d].unwrap().0)
                .collect();
            if !cross.is_empty() {
                let gpu = self.item(cross);
                issues.push(Issue::Packet(q, Packet { record: None, gpu }));
            }
            if let NodeKind::Memset(fills) = node.kind {
                // The parts run in order on the node's queue.
                let mut waits = deps;
                for _ in 0..fills.count() {
                    let gpu = self.item(waits);
                    let record = Some((Observed::Blit(BlitKind::Fill), truth));
                    issues.push(Issue::Packet(q, Packet { record, gpu }));
                    waits = vec![gpu];
                }
                ends[n] = Some((waits[0], Some(q)));
                continue;
            }
            let record = match node.kind {
                NodeKind::Kernel(k) => Some(Observed::Kernel(shape(k, &self.kernels))),
                NodeKind::Memset(_) => unreachable!("handled above"),
                NodeKind::CopyD2D { .. } | NodeKind::CopyHost { .. } => {
                    Some(Observed::Blit(BlitKind::Copy))
                }
                NodeKind::Empty => None,
            };
            let gpu = self.item(deps);
            issues.push(Issue::Packet(
                q,
                Packet {
                    record: record.map(|o| (o, truth)),
                    gpu,
                },
            ));
            ends[n] = Some((gpu, Some(q)));
        }
        // Everything that ran off the launch queue joins back to it before the
        // stream's next work (the final marker).
        if ends.iter().flatten().any(|(_, q)| *q != Some(launch_queue)) {
            let joined: Vec<usize> = ends
                .iter()
                .flatten()
                .filter(|(_, q)| *q != Some(launch_queue))
                .map(|(g, _)| *g)
                .collect();
            let gpu = self.item(joined);
            issues.push(Issue::Packet(launch_queue, Packet { record: None, gpu }));
        }
        // Batches: runs of packets for one queue, cut where `breaks` says.
        let mut batch: Option<(u64, Vec<Packet>)> = None;
        let mut index = 0u64;
        for issue in issues {
            match issue {
                Issue::Packet(q, packet) => {
                    if let Some((bq, packets)) = batch.take() {
                        if bq == q {
                            batch = Some((bq, packets));
                        } else {
                            self.batch(steps, bq, packets);
                        }
                    }
                    batch.get_or_insert_with(|| (q, Vec::new())).1.push(packet);
                    if breaks >> (index % 64) & 1 == 1 {
                        let (bq, packets) = batch.take().unwrap();
                        self.batch(steps, bq, packets);
                    }
                    index += 1;
                }
                Issue::Sdma(observed, truth, gpu) => {
                    if let Some((bq, packets)) = batch.take() {
                        self.batch(steps, bq, packets);
                    }
                    steps.push_back(Micro::Sdma(observed, truth, gpu));
                }
            }
        }
        if let Some((bq, packets)) = batch.take() {
            self.batch(steps, bq, packets);
        }
        CallWork::Graph {
            graph_id: id,
            exec: contents,
        }
    }

    /// Run the GPU and hand back the finished trace.
    pub fn finish(mut self, rng: &mut Rng) -> Trace {
        self.run_rest();
        for q in self.queues.values() {
            assert_eq!(q.next, q.slots.len(), "every slot was processed");
        }
        // Every constraint points to an item claimed (or issued) earlier.
        let mut order: Vec<usize> = (0..self.gpu.len()).collect();
        order.sort_unstable_by_key(|&i| self.gpu[i].seq);
        let mut used = HashSet::new();
        for i in order {
            let item = &self.gpu[i];
            let mut start = item.ready.expect("processed") + rng.below(self.gpu_jitter + 1);
            if let Some(p) = item.queue_pred {
                start = start.max(self.gpu[p].end + 1);
            }
            for &d in &item.deps {
                start = start.max(self.gpu[d].end + 1);
            }
            while !used.insert(start) {
                start += 1;
            }
            let item = &mut self.gpu[i];
            item.start = start;
            item.end = start + 1 + rng.below(40);
        }
        for r in &mut self.records {
            r.observation.start_ns = self.gpu[r.gpu].start;
            r.observation.end_ns = self.gpu[r.gpu].end;
        }
        Trace {
            calls: self.calls.into_iter().map(|(c, _)| c).collect(),
            records: self.records,
            observed: self.observed.values().to_vec(),
            kernels: self.kernels,
            graphs: self.graphs,
            end: self.now,
        }
    }
}

fn node_work(kind: NodeKind) -> NodeWork {
    match kind {
        NodeKind::Kernel(k) => NodeWork::Kernel(k),
        NodeKind::Memset(fills) => NodeWork::Memset(fills),
        NodeKind::CopyD2D { bytes } => NodeWork::Memcpy {
            direction: Some(Direction::DeviceToDevice),
            bytes,
        },
        NodeKind::CopyHost {
            direction,
            declared,
            bytes,
        } => NodeWork::Memcpy {
            direction: declared.then_some(direction),
            bytes,
        },
        NodeKind::Empty => NodeWork::NoDispatch,
    }
}

/// Everything that happened, host and device.
pub struct Trace {
    pub calls: Vec<Call>,
    pub records: Vec<Rec>,
    /// What the records show, by their observations' ids.
    pub observed: Vec<Observed>,
    pub kernels: HashMap<u64, u64>,
    pub graphs: Vec<GraphDef>,
    /// After the last step.
    pub end: u64,
}

/// One window as the tool sees it, with the truth of each record.
pub struct Window {
    pub observations: Vec<Observation>,
    pub truths: Vec<Truth>,
    pub calls: Vec<Call>,
    pub open_edge: Vec<Span>,
    pub open_ns: u64,
    pub close_ns: u64,
    pub complete: bool,
}

impl Trace {
    /// Was record `i` of window `w` processed after `time`?
    pub fn processed_after(&self, i: usize, w: &Window, time: u64) -> bool {
        let o = &w.observations[i];
        self.records
            .iter()
            .find(|r| r.observation == *o)
            .is_some_and(|r| r.time > time)
    }

    /// A cut time between steps, after `steps` steps.
    pub fn cut(steps: u64) -> u64 {
        steps * STEP + STEP / 2
    }

    /// Consecutive windows between the cut times (use [`Trace::cut`]): the
    /// calls each saw ENTER, the calls in flight at its opening as spans,
    /// and the records processed by its calls. The first window also has the
    /// records that calls in flight at its opening processed after it
    /// opened. When `lossy[i]`, window i is incomplete and each of its
    /// records is lost with a 15% chance.
    pub fn windows(&self, cuts: &[u64], lossy: &[bool], rng: &mut Rng) -> Vec<Window> {
        assert!(cuts.windows(2).all(|w| w[0] < w[1]));
        assert!(cuts.iter().all(|c| c % STEP != 0), "cut between steps");
        let enter_of: HashMap<u64, u64> = self
            .calls
            .iter()
            .map(|c| (c.correlation_id, c.enter_ns))
            .collect();
        let mut out = Vec::new();
        for (i, w) in cuts.windows(2).enumerate() {
            let (open, close) = (w[0], w[1]);
            let calls: Vec<Call> = self
                .calls
                .iter()
                .filter(|c| c.enter_ns > open && c.enter_ns < close)
                .cloned()
                .collect();
            let ids: HashSet<u64> = calls.iter().map(|c| c.correlation_id).collect();
            let open_edge: Vec<Span> = self
                .calls
                .iter()
                .filter(|c| c.enter_ns < open && c.exit_ns > open)
                .map(|c| Span {
                    thread_id: c.thread_id,
                    enter_ns: c.enter_ns,
                    exit_ns: (c.exit_ns < close).then_some(c.exit_ns),
                })
                .collect();
            let mut picked: Vec<&Rec> = self
                .records
                .iter()
                .filter(|r| {
                    ids.contains(&r.observation.correlation_id)
                        || (i == 0
                            && enter_of[&r.observation.correlation_id] < open
                            && r.time > open)
                })
                .collect();
            let lossy = lossy.get(i).copied().unwrap_or(false);
            if lossy {
                picked.retain(|_| !rng.chance(15));
            }
            rng.shuffle(&mut picked);
            out.push(Window {
                observations: picked.iter().map(|r| r.observation).collect(),
                truths: picked.iter().map(|r| r.truth).collect(),
                calls,
                open_edge,
                open_ns: open,
                close_ns: close,
                complete: !lossy,
            });
        }
        out
    }

    /// One window over everything, complete.
    pub fn whole(&self, rng: &mut Rng) -> Window {
        self.windows(&[Trace::cut(0), self.end + STEP / 2], &[], rng)
            .pop()
            .unwrap()
    }
}
