//! Property test: random interleavings of several threads' graph launches
//! through a model of shared hardware queues, driven through the real
//! tracker on real threads, must never yield a wrong emitted pair.
//!
//! The queue model is the seed's hazard: work submitted on a stream waits on
//! its hardware queue until some thread flushes that queue, and the flushing
//! thread writes every waiting packet, its own or not. The external slot is
//! whatever that thread's tracker stack answers, and the record's
//! correlation id is that thread's current API call. Ground truth (which
//! exec, node and launch each dispatch really is) is kept on the side.

use std::collections::VecDeque;
use std::sync::mpsc::{channel, Receiver, Sender};
use std::sync::Arc;
use std::thread::JoinHandle;

use graph_attribution::{
    verify_window, ApiSpan, AttributionId, DispatchKind, DispatchObservation, ExecHandle,
    ExecIdentity, ExecKnowledge, GraphKey, LaunchCall, LaunchTracker, LaunchedExec, Ordinal,
    SdkLaunch, TrackerConfig, Verdict, VerificationSummary, WindowEvidence,
};

/// xorshift64*: deterministic, no crates.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
    fn chance(&mut self, percent: u64) -> bool {
        self.below(100) < percent
    }
}

enum Command {
    Enter(LaunchedExec, LaunchCall),
    Exit(LaunchedExec),
    Request,
}

/// A real OS thread that performs tracker calls on command, one at a time,
/// so the interleaving is exactly the one the driver chose.
struct Worker {
    commands: Sender<Command>,
    answers: Receiver<u64>,
    handle: JoinHandle<()>,
}

impl Worker {
    fn spawn(tracker: Arc<LaunchTracker>) -> Worker {
        let (commands, inbox) = channel::<Command>();
        let (outbox, answers) = channel::<u64>();
        let handle = std::thread::spawn(move || {
            for command in inbox {
                let answer = match command {
                    Command::Enter(exec, call) => {
                        tracker.enter_launch(exec, call);
                        0
                    }
                    Command::Exit(exec) => {
                        tracker.exit_launch(exec);
                        0
                    }
                    Command::Request => tracker.external_for_dispatch(),
                };
                if outbox.send(answer).is_err() {
                    break;
                }
            }
        });
        Worker {
            commands,
            answers,
            handle,
        }
    }

    fn call(&self, command: Command) -> u64 {
        self.commands.send(command).unwrap();
        self.answers.recv().unwrap()
    }
}

/// Who a dispatch really is.
#[derive(Clone, Copy)]
struct Truth {
    /// (exec id, node, launch correlation id) for graph work.
    graph: Option<(AttributionId, u32, u64)>,
    signature: u64,
}

struct SimThread {
    exec: LaunchedExec,
    attribution: AttributionId,
    queue: usize,
    /// The launch in progress, by correlation id.
    in_launch: Option<u64>,
    /// The API call the thread is in (its launch, or a plain kernel launch).
    current_call: u64,
    /// Faithful model: the open API call and its ENTER time.
    open_call: Option<(u64, u64)>,
    /// Faithful model: the launch in progress has appended its packets.
    enqueued: bool,
}

/// Which model a case runs.
#[derive(Clone, Copy)]
struct Config {
    /// Threads: `min_threads + below(extra_threads)`.
    min_threads: u64,
    extra_threads: u64,
    /// Queues: `1 + below(queue_choices)`.
    queue_choices: u64,
    /// The faithful model of HIP the contended rules assume (packets are
    /// appended after ENTER, in a separate step others may interleave with;
    /// a thread writes packets only inside an API call; every call has an
    /// ENTER/EXIT span), with the full evidence the tool gives: each
    /// launch's queue and count, API spans, a complete window. Off: the
    /// original model and evidence, unchanged.
    faithful: bool,
    /// Faithful model: percent of steps that are plain kernel launches
    /// (which make their queue ineligible for the contended rules).
    plain_percent: u64,
    /// Faithful model: windows that are calm (one thread per queue).
    calm_windows: bool,
    /// Every graph has the same node count (the contended rules handle a
    /// queue only when all its launches have one kernel count).
    uniform_nodes: bool,
    /// Faithful model, and the submission model the time-aware rule needs:
    /// a launch appends its packets as it ENTERs, before it can write any,
    /// and the evidence says so (`holder_writes_pending`). Off: a launch may
    /// write others' packets before appending its own.
    handoff: bool,
}

const ORIGINAL: Config = Config {
    min_threads: 2,
    extra_threads: 4,
    queue_choices: 3,
    faithful: false,
    plain_percent: 0,
    calm_windows: true,
    uniform_nodes: false,
    handoff: false,
};

struct Case {
    rng: Rng,
    tracker: Arc<LaunchTracker>,
    workers: Vec<Worker>,
    threads: Vec<SimThread>,
    sequences: Vec<Vec<u64>>,
    queues: Vec<VecDeque<Truth>>,
    next_corr: u64,
    observations: Vec<DispatchObservation>,
    truths: Vec<Truth>,
    config: Config,
    clock: u64,
    spans: Vec<ApiSpan>,
    sdk_launches: Vec<SdkLaunch>,
}

impl Case {
    fn new(seed: u64, config: Config) -> Case {
        let mut rng = Rng(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1);
        let tracker = Arc::new(LaunchTracker::new(TrackerConfig::new(
            ExecIdentity::SdkGraphDomain,
        )));
        let thread_count = (config.min_threads + rng.below(config.extra_threads)) as usize;
        let queue_count = 1 + rng.below(config.queue_choices) as usize;
        // Kernel pool: small pools make graphs share kernels, 1 in 4 cases
        // every thread runs the same graph (the seed's benchmark).
        let pool = [3, 8, 1000][rng.below(3) as usize];
        let identical = rng.chance(25);
        let uniform = config.uniform_nodes.then(|| 1 + rng.below(6) as usize);
        let mut sequences: Vec<Vec<u64>> = Vec::new();
        let mut threads = Vec::new();
        let mut workers = Vec::new();
        for t in 0..thread_count {
            let sequence = if identical && t > 0 {
                sequences[0].clone()
            } else {
                let nodes = match uniform {
                    Some(nodes) => nodes,
                    None => 1 + rng.below(6) as usize,
                };
                (0..nodes).map(|_| 1 + rng.below(pool)).collect()
            };
            sequences.push(sequence);
            let exec = LaunchedExec::Sdk {
                graph_exec_id: t as u64 + 1,
                handle: ExecHandle(0x1000 * (t as u64 + 1)),
            };
            let attribution = tracker.exec_created(exec).unwrap();
            threads.push(SimThread {
                exec,
                attribution,
                queue: t % queue_count,
                in_launch: None,
                current_call: 0,
                open_call: None,
                enqueued: false,
            });
            workers.push(Worker::spawn(Arc::clone(&tracker)));
        }
        Case {
            rng,
            tracker,
            workers,
            threads,
            sequences,
            queues: vec![VecDeque::new(); queue_count],
            next_corr: 1,
            observations: Vec::new(),
            truths: Vec::new(),
            config,
            clock: 0,
            spans: Vec::new(),
            sdk_launches: Vec::new(),
        }
    }

    fn tick(&mut self) -> u64 {
        self.clock += 1;
        self.clock
    }

    /// Faithful model: thread `t` enters a new API call `corr`.
    fn open(&mut self, t: usize, corr: u64) {
        self.close(t);
        let now = self.tick();
        self.threads[t].open_call = Some((corr, now));
        self.threads[t].current_call = corr;
    }

    /// Faithful model: thread `t` leaves its API call.
    fn close(&mut self, t: usize) {
        if let Some((corr, enter)) = self.threads[t].open_call.take() {
            let exit = self.tick();
            self.spans.push(ApiSpan {
                correlation_id: corr,
                thread_id: t as u64 + 1,
                enter_ns: enter,
                exit_ns: exit,
            });
        }
    }

    /// Faithful model: launch in progress on `t` appends its packets.
    fn enqueue(&mut self, t: usize) {
        let Some(corr) = self.threads[t].in_launch else {
            return;
        };
        if std::mem::replace(&mut self.threads[t].enqueued, true) {
            return;
        }
        self.tick();
        let (attribution, queue) = (self.threads[t].attribution, self.threads[t].queue);
        for (node, &signature) in self.sequences[t].iter().enumerate() {
            self.queues[queue].push_back(Truth {
                graph: Some((attribution, node as u32, corr)),
                signature,
            });
        }
    }

    fn corr(&mut self) -> u64 {
        self.next_corr += 1;
        self.next_corr
    }

    /// Thread `t` writes every packet waiting on its queue.
    fn flush(&mut self, t: usize) {
        let queue = self.threads[t].queue;
        let idle = self.config.faithful && self.threads[t].open_call.is_none();
        if idle {
            // A thread writes packets only inside an API call.
            let corr = self.corr();
            self.open(t, corr);
        }
        while let Some(truth) = self.queues[queue].pop_front() {
            let external = self.workers[t].call(Command::Request);
            let start_ns = if self.config.faithful {
                self.tick()
            } else {
                self.observations.len() as u64
            };
            self.observations.push(DispatchObservation {
                correlation_id: self.threads[t].current_call,
                external,
                signature: truth.signature,
                kind: DispatchKind::Kernel,
                queue_id: queue as u64 + 100,
                thread_id: t as u64 + 1,
                start_ns,
            });
            self.truths.push(truth);
        }
        if idle {
            self.close(t);
        }
    }

    fn enter(&mut self, t: usize) {
        let corr = self.corr();
        if self.config.faithful {
            self.open(t, corr);
            self.threads[t].enqueued = false;
            self.sdk_launches.push(SdkLaunch {
                correlation_id: corr,
                queue_id: self.threads[t].queue as u64 + 100,
                kernel_dispatch_count: self.sequences[t].len() as u32,
            });
        }
        let thread = &mut self.threads[t];
        thread.in_launch = Some(corr);
        thread.current_call = corr;
        let (exec, attribution, queue) = (thread.exec, thread.attribution, thread.queue);
        self.workers[t].call(Command::Enter(
            exec,
            LaunchCall {
                correlation_id: corr,
                thread_id: t as u64 + 1,
            },
        ));
        if self.config.handoff {
            self.enqueue(t); // before the launch can write anything
            return;
        }
        if self.config.faithful {
            return; // packets are appended in a later step
        }
        for (node, &signature) in self.sequences[t].iter().enumerate() {
            self.queues[queue].push_back(Truth {
                graph: Some((attribution, node as u32, corr)),
                signature,
            });
        }
    }

    fn exit(&mut self, t: usize) {
        if self.config.faithful && self.threads[t].in_launch.is_some() {
            self.enqueue(t); // before the call returns
        }
        if self.threads[t].in_launch.take().is_some() {
            self.workers[t].call(Command::Exit(self.threads[t].exec));
            if self.config.faithful {
                self.close(t);
            }
        }
    }

    /// A plain (ungraphed) kernel launch by an idle thread.
    fn plain_kernel(&mut self, t: usize, signature: u64) {
        let corr = self.corr();
        if self.config.faithful {
            self.open(t, corr);
        }
        self.threads[t].current_call = corr;
        let queue = self.threads[t].queue;
        self.queues[queue].push_back(Truth {
            graph: None,
            signature,
        });
    }

    /// One window of random steps; `calm` windows launch one thread at a
    /// time, each writing its own packets, as a single-threaded replay does.
    fn window(&mut self, calm: bool) {
        let mut steps = 20 + self.rng.below(60);
        if self.config.faithful {
            // About as many steps per thread however many threads there are.
            steps *= (self.threads.len() as u64 / 2).max(1);
        }
        // A calm window lets one thread per queue run, so what is learned
        // there is not the product of sharing a queue.
        let pick = self.rng.next() as usize;
        let calm_threads: Vec<usize> = (0..self.queues.len())
            .filter_map(|q| {
                let sharing: Vec<usize> = (0..self.threads.len())
                    .filter(|&t| self.threads[t].queue == q)
                    .collect();
                (!sharing.is_empty()).then(|| sharing[pick % sharing.len()])
            })
            .collect();
        for _ in 0..steps {
            let t = if calm {
                calm_threads[self.rng.below(calm_threads.len() as u64) as usize]
            } else {
                self.rng.below(self.threads.len() as u64) as usize
            };
            if calm {
                if self.queues.iter().any(|q| !q.is_empty()) {
                    unreachable!("calm windows leave nothing waiting");
                }
                self.enter(t);
                if self.config.faithful {
                    self.enqueue(t);
                }
                self.flush(t);
                self.exit(t);
                continue;
            }
            if self.config.faithful {
                self.faithful_step(t);
                continue;
            }
            match (self.threads[t].in_launch.is_some(), self.rng.below(10)) {
                (false, 0..=5) => {
                    self.enter(t);
                    if self.rng.chance(50) {
                        self.flush(t);
                    }
                }
                (false, 6..=7) => {
                    let signature = 1 + self.rng.below(8);
                    self.plain_kernel(t, signature);
                    if self.rng.chance(50) {
                        self.flush(t);
                    }
                }
                (false, _) => self.flush(t),
                (true, 0..=4) => self.flush(t),
                (true, _) => self.exit(t),
            }
        }
        // Close the window: everyone leaves its launch, then whatever still
        // waits is written by an idle thread (slot 0).
        for t in 0..self.threads.len() {
            if self.rng.chance(50) {
                self.flush(t);
            }
            self.exit(t);
        }
        for t in 0..self.threads.len() {
            if self.config.faithful {
                self.close(t);
                self.flush(t); // in a fresh call
                continue;
            }
            self.threads[t].current_call = self.next_corr + 1;
            self.next_corr += 1;
            self.flush(t);
        }
    }

    /// One step of thread `t` in the faithful model.
    fn faithful_step(&mut self, t: usize) {
        let in_launch = self.threads[t].in_launch.is_some();
        let roll = self.rng.below(100);
        if !in_launch {
            if roll < self.config.plain_percent {
                let signature = 1 + self.rng.below(8);
                self.plain_kernel(t, signature);
                if self.rng.chance(50) {
                    self.flush(t);
                }
                self.close(t);
            } else if roll < 85 {
                self.enter(t);
            } else {
                self.flush(t);
            }
        } else if !self.threads[t].enqueued {
            match roll {
                0..=59 => {
                    self.enqueue(t);
                    if self.rng.chance(50) {
                        self.flush(t);
                    }
                }
                _ => self.flush(t),
            }
        } else {
            match roll {
                0..=49 => self.flush(t),
                _ => self.exit(t),
            }
        }
    }
}

#[derive(Default)]
struct Tally {
    summary: VerificationSummary,
    wrong_pairs: Vec<String>,
    wrong_links: Vec<String>,
}

fn run_case(seed: u64, config: Config, tally: &mut Tally) {
    let mut case = Case::new(seed, config);
    let mut knowledge = ExecKnowledge::new();
    for w in 0..8 {
        let calm = config.calm_windows && w < 4 && case.rng.chance(70);
        case.window(calm);
        let launches = case.tracker.drain_launches();
        let evidence = if config.faithful {
            WindowEvidence {
                sdk_launches: Some(&case.sdk_launches),
                api_spans: &case.spans,
                dispatches_complete: true,
                holder_writes_pending: config.handoff,
                ..WindowEvidence::new(&case.observations, &launches)
            }
        } else {
            WindowEvidence::new(&case.observations, &launches)
        };
        let out = verify_window(&evidence, &mut knowledge);
        for ((o, truth), verdict) in case
            .observations
            .iter()
            .zip(&case.truths)
            .zip(&out.verdicts)
        {
            let Some(emitted) = verdict.emitted_key() else {
                continue;
            };
            let expected = truth
                .graph
                .map(|(exec, node, _)| GraphKey::new(exec, Ordinal(node)));
            if expected != Some(emitted) {
                tally.wrong_pairs.push(format!(
                    "seed {seed} window {w}: {verdict:?} for {o:?}, truly {expected:?}"
                ));
            }
            if let Verdict::Repaired {
                correlation_id: Some(corr),
                ..
            } = verdict
            {
                if truth.graph.map(|(_, _, launch)| launch) != Some(*corr) {
                    tally.wrong_links.push(format!(
                        "seed {seed} window {w}: linked to {corr} for {o:?}"
                    ));
                }
            }
        }
        if std::env::var("SIMDEBUG").is_ok() {
            eprintln!("seed {seed} w{w} calm={calm} {}", out.summary);
        }
        tally.summary.merge(&out.summary);
        case.observations.clear();
        case.truths.clear();
        case.spans.clear();
        case.sdk_launches.clear();
    }
    let Case { workers, .. } = case;
    for worker in workers {
        drop(worker.commands);
        worker.handle.join().unwrap();
    }
}

#[test]
fn random_interleavings_never_emit_a_wrong_pair() {
    let mut tally = Tally::default();
    for seed in 1..=200 {
        run_case(seed, ORIGINAL, &mut tally);
    }
    let s = &tally.summary;
    println!("{s}");
    assert!(
        tally.wrong_pairs.is_empty(),
        "{} wrong pairs, e.g.\n{}",
        tally.wrong_pairs.len(),
        tally.wrong_pairs[..tally.wrong_pairs.len().min(10)].join("\n")
    );
    assert!(
        tally.wrong_links.is_empty(),
        "{} wrong links, e.g.\n{}",
        tally.wrong_links.len(),
        tally.wrong_links[..tally.wrong_links.len().min(10)].join("\n")
    );
    // Not vacuous: the model produced every outcome.
    assert!(
        s.vouched > 0 && s.repaired > 0 && s.withheld() > 0 && s.not_graphed > 0,
        "{s}"
    );
}

fn check(tally: &Tally) {
    assert!(
        tally.wrong_pairs.is_empty(),
        "{} wrong pairs, e.g.\n{}",
        tally.wrong_pairs.len(),
        tally.wrong_pairs[..tally.wrong_pairs.len().min(10)].join("\n")
    );
    assert!(
        tally.wrong_links.is_empty(),
        "{} wrong links, e.g.\n{}",
        tally.wrong_links.len(),
        tally.wrong_links[..tally.wrong_links.len().min(10)].join("\n")
    );
}

/// The original mix of threads and queues, in the faithful model with the
/// full evidence (so the contended rules run), plain kernels included.
#[test]
fn faithful_interleavings_with_full_evidence_never_emit_a_wrong_pair() {
    let config = Config {
        faithful: true,
        plain_percent: 10,
        ..ORIGINAL
    };
    let mut tally = Tally::default();
    for seed in 1..=200 {
        run_case(seed, config, &mut tally);
    }
    println!("{}", tally.summary);
    check(&tally);
}

/// 8 to 15 threads on one or two queues, no calm window: nearly every
/// launch is contended. Nothing wrong may be emitted, and the contended
/// rules must still attribute a substantial share.
#[test]
fn many_threads_on_few_queues_attribute_most_and_never_wrongly() {
    let config = Config {
        min_threads: 8,
        extra_threads: 8,
        queue_choices: 2,
        faithful: true,
        plain_percent: 0,
        calm_windows: false,
        uniform_nodes: true,
        handoff: false,
    };
    let mut tally = Tally::default();
    for seed in 1..=60 {
        run_case(seed, config, &mut tally);
    }
    let s = &tally.summary;
    let graphed = s.attributed + s.withheld();
    let share = s.attributed as f64 / graphed.max(1) as f64;
    println!(
        "{s}\nattributed share of graphed records: {:.1}%",
        100.0 * share
    );
    check(&tally);
    assert!(share >= 0.5, "attributed share {share:.3}: {s}");
}

/// The faithful model with the submission model the time-aware rule
/// assumes (a launch appends before it writes): threads whose calls do not
/// overlap no longer count as contention, and nothing wrong may come of it.
#[test]
fn handoff_interleavings_never_emit_a_wrong_pair() {
    for (config, seeds) in [
        (
            Config {
                faithful: true,
                plain_percent: 10,
                handoff: true,
                ..ORIGINAL
            },
            1..=200,
        ),
        (
            Config {
                min_threads: 8,
                extra_threads: 8,
                queue_choices: 2,
                faithful: true,
                plain_percent: 0,
                calm_windows: false,
                uniform_nodes: true,
                handoff: true,
            },
            1..=60,
        ),
    ] {
        let mut tally = Tally::default();
        for seed in seeds {
            run_case(seed, config, &mut tally);
        }
        println!("{}", tally.summary);
        check(&tally);
    }
}
