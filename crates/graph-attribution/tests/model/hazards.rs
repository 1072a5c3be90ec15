//! One small hand-scheduled scenario per hazard of ROCm's submission and
//! per attribution rule, each run through the model so that its evidence is
//! exactly what the tool would see. Threads are 0-based here (`thread_id`
//! is one more); correlation ids are handed out at ENTER, from 1.

use graph_attribution::{
    AttributedWindow, AttributionId, Direction, GraphKey, HostKernel, KeyProof, KeyVerdict,
    LinkProof, LinkVerdict, NodeId, Reason, SessionMemory,
};

use crate::check;
use crate::gen;
use crate::rng::Rng;
use crate::sim::{
    ExecDef, GraphDef, NodeDef, NodeKind, Op, Plan, Setup, Sim, Step, ThreadDef, Trace, Window,
};

const A: u64 = 0xa0;
const B: u64 = 0xa1;
const C: u64 = 0xa2;

fn k(stub: u64) -> HostKernel {
    HostKernel::from_blocks(stub, [4, 1, 1], [64, 1, 1])
}

fn kernel(stub: u64, deps: &[usize]) -> NodeDef {
    NodeDef::new(NodeKind::Kernel(k(stub)), deps)
}

fn graph(nodes: Vec<NodeDef>) -> GraphDef {
    GraphDef { nodes }
}

fn exec(graph: usize) -> ExecDef {
    ExecDef { graph, plan: None }
}

fn thread(queue: u64, ops: Vec<Op>) -> ThreadDef {
    ThreadDef { queue, ops }
}

fn sim(graphs: Vec<GraphDef>, execs: Vec<ExecDef>, threads: Vec<ThreadDef>) -> Sim {
    Sim::new(
        Setup {
            graphs,
            execs,
            threads,
            kernels: gen::kernels(),
            queues: Vec::new(),
            side_percent: 0,
            max_write_steps: 1,
            gpu_jitter: 0,
        },
        1,
    )
}

fn finish(sim: Sim) -> Trace {
    sim.finish(&mut Rng::new(7))
}

fn windows(trace: &Trace, cuts: &[u64]) -> Vec<Window> {
    trace.windows(cuts, &[], &mut Rng::new(7))
}

/// Attribute one window; panic on any wrong key or link, or a summary that
/// is not the verdicts'.
fn attribute(trace: &Trace, w: &Window, memory: &mut SessionMemory) -> AttributedWindow {
    let out = check::attribute(trace, w, memory);
    let wrongs = check::wrongs(w, &out);
    assert!(
        wrongs.is_empty(),
        "wrong pairs or links:\n{}",
        wrongs.join("\n")
    );
    assert_eq!(check::recount(&out), out.summary);
    out
}

/// The record written by call `call` for node `node` (`None`: eager).
fn find(w: &Window, call: u64, node: Option<u32>) -> usize {
    (0..w.truths.len())
        .find(|&i| w.truths[i].call == call && w.truths[i].graph.map(|g| g.node) == node)
        .unwrap_or_else(|| panic!("no record of call {call} node {node:?}"))
}

fn key(id: AttributionId, node: u32) -> GraphKey {
    GraphKey::new(id, NodeId(node))
}

fn keyed(key: GraphKey, proof: KeyProof) -> KeyVerdict {
    KeyVerdict::Key { key, proof }
}

fn linked(correlation_id: u64, proof: LinkProof) -> LinkVerdict {
    LinkVerdict::Linked {
        correlation_id,
        proof,
    }
}

/// Rules 1-3. Thread 1's hipEventRecord claims slot 0; thread 0's launch
/// writes slot 1, rings (held up by slot 0) and returns; thread 1 then
/// publishes and rings, processing the launch's packet inside its own,
/// unrelated call. The record carries the event call's correlation id; the
/// evidence still proves its key and its launch.
#[test]
fn a_packet_processed_by_another_thread_after_its_launch_returned_gets_its_true_key_and_link() {
    let mut s = sim(
        vec![graph(vec![kernel(A, &[])])],
        vec![exec(0)],
        vec![thread(1, vec![Op::launch(0)]), thread(1, vec![Op::Marker])],
    );
    let id = s.exec_id(0);
    s.through(1, Step::Claim); // event record: call 1, slot 0
    s.finish_call(0); // launch: call 2, slot 1, rings, returns
    s.run_rest();
    let trace = finish(s);
    let w = trace.whole(&mut Rng::new(1));
    let launch = trace.calls.iter().find(|c| c.correlation_id == 2).unwrap();
    let r = find(&w, 2, Some(0));
    assert_eq!(
        w.observations[r].correlation_id, 1,
        "stamped with the event call"
    );
    assert!(trace.processed_after(r, &w, launch.exit_ns));
    let out = attribute(&trace, &w, &mut SessionMemory::new());
    assert_eq!(out.keys[r], keyed(key(id, 0), KeyProof::OnlyPossibleNode));
    assert_eq!(out.links[r], linked(2, LinkProof::OnlyPossibleCall));
}

/// Rules 1-3. Thread 1's eager kernel claims slot 0; thread 0's launch
/// claims slots 1-3 as one batch, writes, publishes and rings: nothing is
/// processed, the batch waits behind slot 0. Thread 1's ring processes all
/// four, so the launch's three records carry the eager call's id.
#[test]
fn a_batch_held_up_behind_another_threads_claimed_slot_keeps_its_keys_and_launch() {
    let mut s = sim(
        vec![graph(vec![
            kernel(A, &[]),
            kernel(B, &[0]),
            kernel(A, &[1]),
        ])],
        vec![exec(0)],
        vec![
            thread(1, vec![Op::launch(0)]),
            thread(1, vec![Op::Kernel(k(C))]),
        ],
    );
    let id = s.exec_id(0);
    s.through(1, Step::Claim); // eager kernel: call 1, slot 0
    s.through(0, Step::Ring); // launch: call 2, slots 1-3, held up
    s.run_rest();
    let trace = finish(s);
    let w = trace.whole(&mut Rng::new(1));
    let out = attribute(&trace, &w, &mut SessionMemory::new());
    for node in 0..3 {
        let r = find(&w, 2, Some(node));
        assert_eq!(w.observations[r].correlation_id, 1);
        assert!(
            out.keys[r].key() == Some(key(id, node)),
            "{:?}",
            out.keys[r]
        );
        assert_eq!(out.links[r], linked(2, LinkProof::OnlyPossibleCall));
    }
    // Node 1 is the only B; nodes 0 and 2 (both A) are a chain on one
    // queue of one thread.
    assert_eq!(
        out.keys[find(&w, 2, Some(1))],
        keyed(key(id, 1), KeyProof::OnlyPossibleNode)
    );
    let e = find(&w, 1, None);
    assert_eq!(out.keys[e], KeyVerdict::NotGraphed);
    assert_eq!(out.links[e], linked(1, LinkProof::OnlyPossibleCall));
}

/// Rules 1-3, the other way round: a launch processes another thread's
/// eager kernel (held up behind the launch's batch). The eager record
/// carries the launch's correlation id and is still proven eager, and
/// linked to its own call.
#[test]
fn a_launch_that_processes_another_threads_kernel_does_not_claim_it() {
    let mut s = sim(
        vec![graph(vec![kernel(A, &[]), kernel(B, &[0])])],
        vec![exec(0)],
        vec![
            thread(1, vec![Op::launch(0)]),
            thread(1, vec![Op::Kernel(k(A))]),
        ],
    );
    let id = s.exec_id(0);
    s.through(0, Step::Claim); // launch: call 1, slots 0-1
    s.through(1, Step::Ring); // eager A: call 2, slot 2, held up
    s.run_rest();
    let trace = finish(s);
    let w = trace.whole(&mut Rng::new(1));
    let out = attribute(&trace, &w, &mut SessionMemory::new());
    let e = find(&w, 2, None);
    assert_eq!(
        w.observations[e].correlation_id, 1,
        "stamped with the launch"
    );
    // The eager A and node 0's A could each be either by their candidates
    // (rules 1-3), and one thread produced only one of them (rule 5). But
    // node 0 must end before node 1 (B) starts, and the eager A ran after B
    // (its slot is after the launch's on the one queue): only the first A
    // can be node 0 (rules 9 and 10).
    let n0 = find(&w, 1, Some(0));
    assert_eq!(
        out.keys[n0],
        keyed(key(id, 0), KeyProof::OnlyConsistentAssignment)
    );
    assert_eq!(
        out.links[n0],
        linked(1, LinkProof::OnlyConsistentAssignment)
    );
    assert_eq!(out.keys[e], KeyVerdict::NotGraphed);
    assert_eq!(out.links[e], linked(2, LinkProof::OnlyConsistentAssignment));
    // Node 1's kernel (B) was produced by the launch only.
    let n1 = find(&w, 1, Some(1));
    assert_eq!(out.keys[n1], keyed(key(id, 1), KeyProof::OnlyPossibleNode));
    assert_eq!(out.links[n1], linked(1, LinkProof::OnlyPossibleCall));
}

/// Rule 2 withholds. Two execs of one graph, launched by two threads onto
/// one queue at once: thread 0's ring processes both packets. Each record
/// is node 0 of one of two execs; nothing in the evidence says which.
#[test]
fn two_execs_of_one_graph_contending_on_one_queue_withhold_rather_than_guess() {
    let mut s = sim(
        vec![graph(vec![kernel(A, &[])])],
        vec![exec(0), exec(0)],
        vec![
            thread(1, vec![Op::launch(0)]),
            thread(1, vec![Op::launch(1)]),
        ],
    );
    s.through(0, Step::Claim); // exec 0: call 1, slot 0
    s.through(1, Step::Ring); // exec 1: call 2, slot 1, held up
    s.run_rest();
    let trace = finish(s);
    let w = trace.whole(&mut Rng::new(1));
    let out = attribute(&trace, &w, &mut SessionMemory::new());
    assert_eq!(w.observations.len(), 2);
    for i in 0..2 {
        assert_eq!(w.observations[i].correlation_id, 1);
        assert_eq!(out.keys[i], KeyVerdict::Withheld(Reason::ProvablyAmbiguous));
        assert_eq!(
            out.links[i],
            LinkVerdict::Unlinked(Reason::ProvablyAmbiguous)
        );
    }
}

/// Rule 2 keys, rule 3 withholds. One exec launched by two threads at
/// once: both records are node 0 of that exec, but which launch wrote
/// which is not in the evidence.
#[test]
fn one_exec_launched_from_two_threads_at_once_is_keyed_but_not_linked() {
    let mut s = sim(
        vec![graph(vec![kernel(A, &[])])],
        vec![exec(0)],
        vec![
            thread(1, vec![Op::launch(0)]),
            thread(1, vec![Op::launch(0)]),
        ],
    );
    let id = s.exec_id(0);
    s.through(0, Step::Claim);
    s.through(1, Step::Ring);
    s.run_rest();
    let trace = finish(s);
    let w = trace.whole(&mut Rng::new(1));
    let out = attribute(&trace, &w, &mut SessionMemory::new());
    for i in 0..2 {
        assert_eq!(out.keys[i], keyed(key(id, 0), KeyProof::OnlyPossibleNode));
        assert_eq!(
            out.links[i],
            LinkVerdict::Unlinked(Reason::ProvablyAmbiguous)
        );
    }
}

/// Rules 4 and 5. A kernel run at three nodes on a dependency chain, the
/// middle one on another queue: each launch runs them one after the other,
/// and the launches run in stream order, so start times tell them apart
/// (by the launch's own records, or by the thread's whole stream).
#[test]
fn a_repeated_kernel_on_a_chain_is_told_apart_by_start_time() {
    let chain = graph(vec![kernel(A, &[]), kernel(A, &[0]), kernel(A, &[1])]);
    let plan = Plan {
        order: vec![0, 1, 2],
        queues: vec![None, Some(2), None],
    };
    let mut s = sim(
        vec![chain],
        vec![ExecDef {
            graph: 0,
            plan: Some(plan),
        }],
        vec![thread(1, vec![Op::launch(0), Op::launch(0)])],
    );
    let id = s.exec_id(0);
    s.run_rest();
    let trace = finish(s);
    let w = trace.whole(&mut Rng::new(3));
    let out = attribute(&trace, &w, &mut SessionMemory::new());
    for call in [1, 2] {
        for node in 0..3 {
            let r = find(&w, call, Some(node));
            assert_eq!(out.keys[r].key(), Some(key(id, node)));
            assert_eq!(
                out.links[r].correlation_id(),
                linked(call, LinkProof::OnlyPossibleCall).correlation_id()
            );
        }
    }
}

/// Rule 4's limit. The same kernel at two nodes that do not wait for each
/// other (branches of one root): either may run first, so the records are
/// linked to their launch but their nodes are withheld.
#[test]
fn a_repeated_kernel_on_parallel_branches_is_withheld() {
    let fork = graph(vec![kernel(B, &[]), kernel(A, &[0]), kernel(A, &[0])]);
    let plan = Plan {
        order: vec![0, 2, 1],
        queues: vec![None, Some(2), None],
    };
    let mut s = sim(
        vec![fork],
        vec![ExecDef {
            graph: 0,
            plan: Some(plan),
        }],
        vec![thread(1, vec![Op::launch(0)])],
    );
    let id = s.exec_id(0);
    s.run_rest();
    let trace = finish(s);
    let w = trace.whole(&mut Rng::new(3));
    let out = attribute(&trace, &w, &mut SessionMemory::new());
    assert_eq!(
        out.keys[find(&w, 1, Some(0))],
        keyed(key(id, 0), KeyProof::OnlyPossibleNode)
    );
    for node in [1, 2] {
        let r = find(&w, 1, Some(node));
        assert_eq!(out.keys[r], KeyVerdict::Withheld(Reason::ProvablyAmbiguous));
        assert_eq!(out.links[r], linked(1, LinkProof::OnlyPossibleCall));
    }
}

/// Rule 5. Thread 1's hipEventRecord holds slot 0 while thread 0 launches a
/// graph and then an eager kernel of the same kernel and shape; both wait
/// behind slot 0 and are processed in the event call. Each record could be
/// either call's (rule 2 withholds both fields), but every producer of that
/// kernel is on thread 0 and every record is on one queue: in dispatch
/// order they are thread 0's calls in order.
#[test]
fn one_threads_packets_on_one_queue_are_matched_in_queue_order() {
    let mut s = sim(
        vec![graph(vec![kernel(A, &[])])],
        vec![exec(0)],
        vec![
            thread(1, vec![Op::launch(0), Op::Kernel(k(A))]),
            thread(1, vec![Op::Marker]),
        ],
    );
    let id = s.exec_id(0);
    s.through(1, Step::Claim); // event record: call 1, slot 0
    s.finish_call(0); // launch: call 2, slot 1
    s.finish_call(0); // eager A: call 3, slot 2
    s.run_rest();
    let trace = finish(s);
    let w = trace.whole(&mut Rng::new(1));
    let out = attribute(&trace, &w, &mut SessionMemory::new());
    let (g, e) = (find(&w, 2, Some(0)), find(&w, 3, None));
    assert_eq!(w.observations[g].correlation_id, 1);
    assert_eq!(w.observations[e].correlation_id, 1);
    assert_eq!(out.keys[g], keyed(key(id, 0), KeyProof::QueueOrder));
    assert_eq!(out.links[g], linked(2, LinkProof::QueueOrder));
    assert_eq!(out.keys[e], KeyVerdict::NotGraphed);
    assert_eq!(out.links[e], linked(3, LinkProof::QueueOrder));

    // Rule 5 counts records, so it needs every one delivered. In a window
    // that may have lost some, the stream still decides: the eager kernel
    // was enqueued after the launch returned, so its record is the later
    // one, and no other assignment keeps that order.
    let mut lossy = trace.whole(&mut Rng::new(1));
    lossy.complete = false;
    let out = attribute(&trace, &lossy, &mut SessionMemory::new());
    let (g, e) = (find(&lossy, 2, Some(0)), find(&lossy, 3, None));
    assert_eq!(
        out.keys[g],
        keyed(key(id, 0), KeyProof::OnlyConsistentAssignment)
    );
    assert_eq!(out.links[e], linked(3, LinkProof::OnlyConsistentAssignment));
}

/// Rule 7. A graph gained a second node through a call the tool did not
/// follow, running the same kernel as its first: every record of that
/// kernel would be keyed node 0, one of them wrongly. Its first launch ran
/// alone, in a complete window, and produced two records where its graph
/// says one: the exec is distrusted, its keys withheld then and after.
#[test]
fn an_exec_whose_launch_ran_an_extra_kernel_is_distrusted() {
    let mut lying = graph(vec![kernel(A, &[]), kernel(A, &[0])]);
    lying.nodes[1].untracked = true;
    let mut s = sim(
        vec![lying],
        vec![exec(0)],
        vec![thread(1, vec![Op::launch(0), Op::launch(0)])],
    );
    let id = s.exec_id(0);
    s.finish_call(0);
    let cut = s.cut_now();
    s.run_rest();
    let trace = finish(s);
    let ws = windows(&trace, &[Trace::cut(0), cut, trace.end + 5]);
    let mut memory = SessionMemory::new();
    let first = attribute(&trace, &ws[0], &mut memory);
    assert_eq!(first.summary.execs_contradicted, 1);
    assert!(memory.distrusts(id));
    let second = attribute(&trace, &ws[1], &mut memory);
    for (w, out) in [(&ws[0], &first), (&ws[1], &second)] {
        assert_eq!(w.observations.len(), 2);
        for key in &out.keys {
            assert_eq!(*key, KeyVerdict::Withheld(Reason::UnknownWorkNearby));
        }
    }
}

/// Rule 6, across windows: a key names one node, so it is never emitted for
/// two different kinds of work. A host-to-device copy node that one launch
/// ran as a blit and the next on the copy engine (rocclr picks per copy) is
/// one node whatever ran it, so both records keep its key.
#[test]
fn a_host_copy_node_keeps_its_key_whichever_engine_ran_it() {
    let copy = NodeDef::new(
        NodeKind::CopyHost {
            direction: Direction::HostToDevice,
            declared: true,
            bytes: 1 << 20,
        },
        &[],
    );
    let launch = |sdma_nodes| Op::Launch {
        exec: 0,
        sdma_nodes,
        breaks: 0,
        no_id: false,
    };
    let mut s = sim(
        vec![graph(vec![copy])],
        vec![exec(0)],
        vec![thread(1, vec![launch(0), launch(1)])],
    );
    let id = s.exec_id(0);
    s.finish_call(0);
    let cut = s.cut_now();
    s.run_rest();
    let trace = finish(s);
    let ws = windows(&trace, &[Trace::cut(0), cut, trace.end + 5]);
    let mut memory = SessionMemory::new();
    let first = attribute(&trace, &ws[0], &mut memory);
    assert_eq!(
        first.keys[0],
        keyed(key(id, 0), KeyProof::OnlyPossibleNode),
        "the blit"
    );
    let second = attribute(&trace, &ws[1], &mut memory);
    assert_eq!(
        second.keys[0],
        keyed(key(id, 0), KeyProof::OnlyPossibleNode),
        "the copy"
    );
}

/// Exec lifecycle. Thread 0 launches an exec, updates it to another graph
/// and launches it again; thread 1's launch of the same exec, still under
/// the old id, overlaps the new launch and processes its packets. No record
/// is keyed with an id its launch did not have.
#[test]
fn an_updated_exec_keys_each_launch_with_the_id_it_had_at_launch() {
    let graphs = vec![
        graph(vec![kernel(A, &[])]),
        graph(vec![kernel(A, &[]), kernel(B, &[0])]),
    ];
    let update = Op::Update {
        exec: 0,
        graph: 1,
        plan: None,
    };
    let mut s = sim(
        graphs,
        vec![exec(0)],
        vec![
            thread(1, vec![Op::launch(0), update, Op::launch(0)]),
            thread(1, vec![Op::launch(0)]),
        ],
    );
    let old = s.exec_id(0);
    s.finish_call(0); // call 1: old id
    s.through(1, Step::Claim); // call 2: old id, slot 1 held
    s.finish_call(0); // call 3: the update
    let new = s.exec_id(0);
    assert_ne!(old, new);
    s.through(0, Step::Ring); // call 4: new id, slots 2-3 wait behind slot 1
    s.run_rest();
    let trace = finish(s);
    let w = trace.whole(&mut Rng::new(1));
    let out = attribute(&trace, &w, &mut SessionMemory::new());
    assert_eq!(
        out.keys[find(&w, 1, Some(0))],
        keyed(key(old, 0), KeyProof::OnlyPossibleNode)
    );
    let b = find(&w, 4, Some(1));
    assert_eq!(
        w.observations[b].correlation_id, 2,
        "processed by the old launch"
    );
    assert_eq!(out.keys[b], keyed(key(new, 1), KeyProof::OnlyPossibleNode));
    assert_eq!(out.links[b], linked(4, LinkProof::OnlyPossibleCall));
    // Node 0 of the old and of the new exec run the same kernel in
    // overlapping launches: withheld.
    for r in [find(&w, 2, Some(0)), find(&w, 4, Some(0))] {
        assert_eq!(out.keys[r], KeyVerdict::Withheld(Reason::ProvablyAmbiguous));
    }
}

/// Exec lifecycle. Destroyed and instantiated again at the same handle: the
/// launches after carry the new id.
#[test]
fn a_reinstantiated_exec_keys_its_launches_with_the_new_id() {
    let reinstantiate = Op::Reinstantiate {
        exec: 0,
        graph: 0,
        plan: None,
    };
    let mut s = sim(
        vec![graph(vec![kernel(A, &[]), kernel(B, &[0])])],
        vec![exec(0)],
        vec![thread(1, vec![Op::launch(0), reinstantiate, Op::launch(0)])],
    );
    let old = s.exec_id(0);
    s.finish_call(0);
    s.finish_call(0);
    let new = s.exec_id(0);
    s.run_rest();
    let trace = finish(s);
    let w = trace.whole(&mut Rng::new(1));
    let out = attribute(&trace, &w, &mut SessionMemory::new());
    for (call, id) in [(1, old), (3, new)] {
        for node in 0..2 {
            assert_eq!(
                out.keys[find(&w, call, Some(node))].key(),
                Some(key(id, node))
            );
        }
    }
}

/// Window edges. The window opens while thread 0's launch is in flight
/// (its call is an open-edge span: the tool never saw what it was); thread
/// 1's kernel, held up behind it, is processed by it. Both records come
/// from a call the window did not record: withheld. Thread 1's next kernel,
/// after the launch returned, is proven.
#[test]
fn a_window_that_opens_while_a_launch_is_in_flight_withholds_what_it_processed() {
    let mut s = sim(
        vec![graph(vec![kernel(A, &[])])],
        vec![exec(0)],
        vec![
            thread(1, vec![Op::launch(0)]),
            thread(1, vec![Op::Kernel(k(B)), Op::Kernel(k(B))]),
        ],
    );
    s.through(0, Step::Claim); // launch: call 1, slot 0
    let open = s.cut_now();
    s.through(1, Step::Ring); // kernel: call 2, slot 1, held up
    s.finish_call(0); // processes both
    s.run_rest(); // kernel: call 3
    let trace = finish(s);
    let ws = windows(&trace, &[open, trace.end + 5]);
    let w = &ws[0];
    assert_eq!(w.open_edge.len(), 1);
    assert!(w.calls.iter().all(|c| c.correlation_id != 1));
    let out = attribute(&trace, w, &mut SessionMemory::new());
    for r in [find(w, 1, Some(0)), find(w, 2, None)] {
        assert_eq!(
            out.keys[r],
            KeyVerdict::Withheld(Reason::ProcessedOutsideKnownCall)
        );
        assert_eq!(
            out.links[r],
            LinkVerdict::Unlinked(Reason::ProcessedOutsideKnownCall)
        );
    }
    let later = find(w, 3, None);
    assert_eq!(out.keys[later], KeyVerdict::NotGraphed);
    assert_eq!(out.links[later], linked(3, LinkProof::OnlyPossibleCall));
}

/// Window edges. The window closes while thread 0's launch is still
/// writing; thread 1's kernel overlapped it. The launch may have met calls
/// the window never saw: both records are withheld.
#[test]
fn calls_running_past_the_windows_close_withhold_their_neighbourhood() {
    let mut s = sim(
        vec![graph(vec![kernel(A, &[])])],
        vec![exec(0)],
        vec![
            thread(1, vec![Op::launch(0)]),
            thread(2, vec![Op::Kernel(k(B))]),
        ],
    );
    s.through(0, Step::Claim);
    s.finish_call(1);
    let close = s.cut_now();
    s.run_rest();
    let trace = finish(s);
    let ws = windows(&trace, &[Trace::cut(0), close]);
    let out = attribute(&trace, &ws[0], &mut SessionMemory::new());
    assert_eq!(ws[0].observations.len(), 2);
    for i in 0..2 {
        assert_eq!(out.keys[i], KeyVerdict::Withheld(Reason::WindowEdge));
    }
}

/// Rule 4 groups a launch's linked records by *match key*, which for a
/// copy is its direction only, but takes the nodes to pair them with from
/// the first record's full shape (direction *and size*). Nodes 0 -> 1 are
/// 1 MiB host-to-device copies, node 2 a 4 KiB one on its own; node 0 and
/// node 2 run on the copy engine, node 1 as a blit, node 2 first. The
/// 1 MiB copy record is `RepeatedKernel` (nodes 0 and 1), the 4 KiB one
/// keyed node 2. The group (launch, host-to-device copies) holds both;
/// taking the nodes from the 1 MiB record gives two nodes (0, 1) on a
/// chain for two records, so the rule pairs them by start time: the 4 KiB
/// copy with node 0 (it then withholds that one, as it disagrees with node
/// 2) and the 1 MiB copy of node 0 with node 1, which it emits: a wrong
/// pair, from one thread's one launch in a complete window.
#[test]
fn dependency_order_never_pairs_copies_of_different_sizes() {
    let copy = |bytes| NodeKind::CopyHost {
        direction: Direction::HostToDevice,
        declared: true,
        bytes,
    };
    let chain = graph(vec![
        NodeDef::new(copy(1 << 20), &[]),
        NodeDef::new(copy(1 << 20), &[0]),
        NodeDef::new(copy(4096), &[]),
    ]);
    let plan = Plan {
        order: vec![2, 0, 1],
        queues: vec![None; 3],
    };
    let launch = Op::Launch {
        exec: 0,
        sdma_nodes: 0b101,
        breaks: 0,
        no_id: false,
    };
    let mut s = sim(
        vec![chain],
        vec![ExecDef {
            graph: 0,
            plan: Some(plan),
        }],
        vec![thread(1, vec![launch])],
    );
    let id = s.exec_id(0);
    s.run_rest();
    let trace = finish(s);
    let mut w = trace.whole(&mut Rng::new(1));
    // The rule takes the shape from the group's first record.
    let first = find(&w, 1, Some(0));
    w.observations.swap(0, first);
    w.truths.swap(0, first);
    let out = check::attribute(&trace, &w, &mut SessionMemory::new());
    let r = find(&w, 1, Some(0));
    assert_ne!(
        out.keys[r].key(),
        Some(key(id, 1)),
        "the copy-engine copy of node 0 was emitted as node 1: {:?}",
        out.keys[r]
    );
    let wrongs = check::wrongs(&w, &out);
    assert!(wrongs.is_empty(), "{}", wrongs.join("\n"));
}
