//! Many random scenarios per class: never a wrong key or link, the summary
//! equal to the verdicts, single-thread windows attributed wherever the
//! evidence suffices, and a floor on what contended windows attribute.
//!
//! Seeds: `GA_MODEL_SEED` (decimal or 0x-hex) sets the run's base seed,
//! `GA_MODEL_SCALE` multiplies the number of scenarios (for a long hunt);
//! every failure names its class and scenario seed, and
//! `GA_MODEL_REPLAY=<class>:<scenario seed>` replays just that one with a
//! dump of its calls, records, truths and verdicts.

use graph_attribution::{KeyProof, KeyVerdict, LinkProof, LinkVerdict, Reason, SessionMemory};

use crate::check::{self, Tally};
use crate::gen::{self, Params};
use crate::rng::Rng;
use crate::sim::{Sim, Trace};

const DEFAULT_SEED: u64 = 0x6a5e_ed00_2026;

fn parse(s: &str) -> u64 {
    let s = s.trim();
    match s.strip_prefix("0x") {
        Some(hex) => u64::from_str_radix(hex, 16),
        None => s.parse(),
    }
    .unwrap_or_else(|_| panic!("not a seed: {s}"))
}

fn base_seed() -> u64 {
    std::env::var("GA_MODEL_SEED")
        .map(|s| parse(&s))
        .unwrap_or(DEFAULT_SEED)
}

fn scale() -> u64 {
    std::env::var("GA_MODEL_SCALE")
        .map(|s| parse(&s))
        .unwrap_or(1)
}

#[derive(Clone, Copy, Debug)]
struct Class {
    name: &'static str,
    params: Params,
    /// Several windows, some opening or closing mid-trace, some lossy.
    cut: bool,
    scenarios: u64,
}

const SINGLE_WHOLE: Class = Class {
    name: "single-thread, one window",
    params: Params {
        threads: 1,
        queues: 2,
        max_ops: 16,
        unknowns: false,
        kernels: 4,
        per_graph: 3,
    },
    cut: false,
    scenarios: 150,
};
const SINGLE_CUT: Class = Class {
    name: "single-thread, cut windows",
    params: Params {
        threads: 1,
        queues: 2,
        max_ops: 16,
        unknowns: false,
        kernels: 4,
        per_graph: 3,
    },
    cut: true,
    scenarios: 100,
};
const MULTI_WHOLE: Class = Class {
    name: "2-4 threads, one window",
    params: Params {
        threads: 0, // 2..=4, drawn per scenario
        queues: 2,
        max_ops: 10,
        unknowns: true,
        kernels: 4,
        per_graph: 3,
    },
    cut: false,
    scenarios: 200,
};
const MULTI_CUT: Class = Class {
    name: "2-4 threads, cut windows",
    params: Params {
        threads: 0,
        queues: 3,
        max_ops: 10,
        unknowns: true,
        kernels: 4,
        per_graph: 3,
    },
    cut: true,
    scenarios: 150,
};
const MULTI_DIVERSE: Class = Class {
    name: "2-4 threads, one window, 16 kernels",
    params: Params {
        threads: 0,
        queues: 2,
        max_ops: 10,
        unknowns: true,
        kernels: 16,
        per_graph: 6,
    },
    cut: false,
    scenarios: 100,
};

const MANY_SHARED: Class = Class {
    name: "6 threads, one window, 3 shared kernels",
    params: Params {
        threads: 6,
        queues: 3,
        max_ops: 10,
        unknowns: false,
        kernels: 3,
        per_graph: 3,
    },
    cut: false,
    scenarios: 60,
};

/// One scenario's windows: what went wrong, and the tallies.
struct Run {
    failures: Vec<String>,
    tally: Tally,
    /// The scheduler's longest run of one thread's steps.
    burst: u64,
}

/// Scenario `k` of a class: every base seed gives other scenarios.
fn scenario_seed(base: u64, class: &Class, k: u64) -> u64 {
    let tag = class
        .name
        .bytes()
        .fold(0u64, |h, b| h.rotate_left(5) ^ b as u64);
    let mixed = Rng::new(base).next_u64() ^ tag;
    Rng::new(mixed ^ k.wrapping_mul(0x9e37_79b9_7f4a_7c15)).next_u64()
}

fn run(class: &Class, seed: u64, dump: bool) -> Run {
    let mut rng = Rng::new(seed);
    let mut params = class.params;
    if params.threads == 0 {
        params.threads = rng.range(2, 4);
    }
    let setup = gen::setup(&mut rng, params);
    if dump {
        eprintln!("{setup:#?}");
    }
    let mut sim = Sim::new(setup, rng.next_u64());
    let idle = rng.pick(&[0, 5, 20]);
    let burst = rng.pick(&[2, 4, 12, 40]);
    sim.run_random(&mut rng, idle, burst);
    let trace = sim.finish(&mut rng);
    let last = trace.end / crate::sim::STEP;
    let (cuts, lossy) = if class.cut {
        let n = rng.range(1, 3);
        let mut points: Vec<u64> = (0..n + 1).map(|_| rng.range(0, last)).collect();
        if rng.chance(50) {
            points[0] = 0;
        }
        if rng.chance(50) {
            points[n as usize] = last;
        }
        points.sort_unstable();
        points.dedup();
        if points.len() < 2 {
            points = vec![0, last];
        }
        let lossy: Vec<bool> = points.iter().map(|_| rng.chance(30)).collect();
        (points.into_iter().map(Trace::cut).collect(), lossy)
    } else {
        (vec![Trace::cut(0), Trace::cut(last)], Vec::new())
    };
    let windows = trace.windows(&cuts, &lossy, &mut rng);
    let kinds = check::kinds_per_node(&trace);
    let mut memory = SessionMemory::new();
    let mut alone = SessionMemory::new();
    let mut out = Run {
        failures: Vec::new(),
        tally: Tally::default(),
        burst,
    };
    let fail = |out: &mut Run, what: String| {
        out.failures
            .push(format!("{} scenario {seed:#x}: {what}", class.name))
    };
    for (wi, w) in windows.iter().enumerate() {
        let verdicts = check::attribute(&trace, w, &mut memory);
        // Launch runs are a shortcut through rules 1 to 3 and 6: deciding
        // every record on its own must give the same verdicts.
        let one_by_one = check::attribute_with(
            &trace,
            w,
            &mut alone,
            graph_attribution::attribute_window_record_by_record,
        );
        if (&one_by_one.keys, &one_by_one.links, &one_by_one.summary)
            != (&verdicts.keys, &verdicts.links, &verdicts.summary)
        {
            fail(
                &mut out,
                format!("window {wi}: launch runs changed verdicts: {:?} record by record, {:?} by runs",
                    one_by_one.summary, verdicts.summary),
            );
        }
        if dump {
            eprintln!(
                "window {wi}: open {} close {} complete {} open edge {:?}",
                w.open_ns, w.close_ns, w.complete, w.open_edge
            );
            for c in &w.calls {
                eprintln!(
                    "  call {} thread {} [{}, {}] {:?}",
                    c.correlation_id, c.thread_id, c.enter_ns, c.exit_ns, c.work
                );
            }
            let mut order: Vec<usize> = (0..w.observations.len()).collect();
            order.sort_by_key(|&i| (w.observations[i].dispatch_id, w.observations[i].start_ns));
            for i in order {
                eprintln!(
                    "  record {i}: {:?}\n    truth {:?}\n    {:?} / {:?}",
                    w.observations[i], w.truths[i], verdicts.keys[i], verdicts.links[i]
                );
            }
            eprintln!("  {}", verdicts.summary);
        }
        for wrong in check::wrongs(w, &verdicts) {
            fail(&mut out, format!("window {wi}: {wrong}"));
        }
        if check::recount(&verdicts) != verdicts.summary {
            fail(
                &mut out,
                format!(
                    "window {wi}: summary {:?} is not the verdicts' {:?}",
                    verdicts.summary,
                    check::recount(&verdicts)
                ),
            );
        }
        // The model holds every assumption the rules name, so rules 8 to 10
        // finding a window contradictory means they removed the truth.
        if let Some(n) = verdicts.summary.withheld_by.get(&Reason::Contradiction) {
            fail(
                &mut out,
                format!("window {wi}: {n} records of an honest window found contradictory"),
            );
        }
        if verdicts.summary.execs_contradicted > 0 {
            fail(
                &mut out,
                format!("window {wi}: an honest exec was found contradicting its graph"),
            );
        }
        out.tally.add(&trace, w, &verdicts);
        if params.threads == 1 {
            for i in 0..w.observations.len() {
                match check::provable(&trace, w, i, &kinds) {
                    Ok(()) => {
                        let keyed = matches!(
                            verdicts.keys[i],
                            KeyVerdict::Key { .. } | KeyVerdict::NotGraphed
                        );
                        let linked = matches!(verdicts.links[i], LinkVerdict::Linked { .. });
                        if !keyed || !linked {
                            fail(
                                &mut out,
                                format!(
                                    "window {wi}: record {i} ({:?}, truth {:?}) is provable but got {:?} / {:?}",
                                    w.observations[i], w.truths[i], verdicts.keys[i], verdicts.links[i]
                                ),
                            );
                        }
                    }
                    Err(why) => *out.tally.excused_by.entry(why).or_default() += 1,
                }
            }
        }
    }
    out
}

/// Runs a class; returns its tally, panicking with the failures.
fn class(class: Class) -> Tally {
    let base = base_seed();
    if let Ok(replay) = std::env::var("GA_MODEL_REPLAY") {
        if let Some((name, seed)) = replay.rsplit_once(':') {
            if name == class.name {
                let r = run(&class, parse(seed), true);
                for f in &r.failures {
                    eprintln!("{f}");
                }
                assert!(r.failures.is_empty());
                return r.tally;
            }
        }
    }
    println!("GA_MODEL_SEED={base:#x} ({})", class.name);
    let started = std::time::Instant::now();
    let mut tally = Tally::default();
    let mut by_burst: std::collections::BTreeMap<u64, Tally> = Default::default();
    let mut failures = Vec::new();
    for k in 0..class.scenarios * scale() {
        let r = run(&class, scenario_seed(base, &class, k), false);
        tally.merge(&r.tally);
        by_burst.entry(r.burst).or_default().merge(&r.tally);
        failures.extend(r.failures);
    }
    println!("{} ({:?})", tally.line(class.name), started.elapsed());
    for (burst, t) in &by_burst {
        println!(
            "  threads run up to {burst:2} steps in a row: {} records, {:.1}% keyed or proven eager, {:.1}% linked",
            t.records,
            Tally::percent(t.decided, t.records),
            Tally::percent(t.linked, t.records)
        );
    }
    if !failures.is_empty() {
        let shown: Vec<&String> = failures.iter().take(8).collect();
        panic!(
            "{} failures with GA_MODEL_SEED={base:#x} (replay one with GA_MODEL_REPLAY='<class>:<seed>'):\n{}",
            failures.len(),
            shown
                .iter()
                .map(|s| s.as_str())
                .collect::<Vec<_>>()
                .join("\n")
        );
    }
    tally
}

/// Asserts a coverage floor, well below the least that the default seed
/// and 21 others measured (so another seed does not make it flaky).
fn floor(t: &Tally, name: &str, decided: f64, linked: f64) {
    let d = Tally::percent(t.decided, t.records);
    let l = Tally::percent(t.linked, t.records);
    assert!(
        d >= decided && l >= linked,
        "{name}: {d:.1}% keyed or proven eager (floor {decided}%), {l:.1}% linked (floor {linked}%)"
    );
}

/// One thread, one window over the whole run: every record whose key and
/// call the evidence proves (`check::provable`) is keyed and linked, which
/// `run` checks record by record. What stays withheld is by design:
/// repeated kernels at nodes the dependencies do not order, repeated
/// kernels on a chain whose sibling ran on the copy engine, and host-copy
/// nodes seen both as a blit and as a copy (rule 6). Measured over 22
/// seeds: at least 62.8% (mean 68.1%) keyed or proven eager, at least
/// 96.1% (mean 96.9%) linked.
#[test]
fn single_thread_one_window() {
    let t = class(SINGLE_WHOLE);
    assert!(t.records > 1000, "enough records to mean something");
    floor(&t, SINGLE_WHOLE.name, 55.0, 90.0);
    assert!(t.keyed_by.contains_key(&KeyProof::DependencyOrder));
    assert!(t.keyed_by.contains_key(&KeyProof::QueueOrder));
}

/// One thread, windows that open and close mid-run (calls in flight at
/// either edge, records processed before the first window opened, lost
/// records): as above, plus what the edges withhold by design. Measured:
/// at least 44.9% (mean 50.3%) keyed or proven eager, at least 65.6%
/// (mean 70.1%) linked.
#[test]
fn single_thread_cut_windows() {
    let t = class(SINGLE_CUT);
    assert!(t.records > 500);
    floor(&t, SINGLE_CUT.name, 35.0, 50.0);
}

/// 2-4 threads on shared queues, one window: no wrong key or link, and a
/// share attributed all the same, including records another thread
/// processed. Measured over 22 seeds: at least 31.0% (mean 33.5%) keyed or
/// proven eager, at least 30.9% (mean 33.6%) linked (heavily interleaved
/// scenarios ~30%, threads mostly taking turns ~45%); of the records
/// processed by another call, ~20% keyed or proven eager.
#[test]
fn contended_one_window() {
    let t = class(MULTI_WHOLE);
    assert!(t.records > 1000);
    assert!(
        t.foreign_thread > 200 && t.after_exit > 100,
        "the hazards happen"
    );
    assert!(t.foreign_decided > 0 && t.foreign_linked > 0);
    floor(&t, MULTI_WHOLE.name, 20.0, 20.0);
}

/// 2-4 threads, windows cut mid-run, some lossy. Measured: at least 14.8%
/// (mean 18.5%) keyed or proven eager, at least 18.1% (mean 20.9%) linked
/// (most records are near a window edge).
#[test]
fn contended_cut_windows() {
    let t = class(MULTI_CUT);
    assert!(t.records > 500);
    floor(&t, MULTI_CUT.name, 8.0, 8.0);
}

/// Six threads launching graphs and eager kernels from 3 kernels on 3
/// queues: nearly every record has several candidates, the case rules 8 to
/// 10 are for. No wrong key or link, no honest window found contradictory,
/// and some records decided only by the joint assignment.
#[test]
fn many_threads_sharing_kernels() {
    let t = class(MANY_SHARED);
    assert!(t.records > 1000);
    assert!(t.keyed_by.contains_key(&KeyProof::OnlyConsistentAssignment));
    assert!(t
        .linked_by
        .contains_key(&LinkProof::OnlyConsistentAssignment));
}

/// As `contended_one_window`, with 16 kernels instead of 4 (graphs of up to
/// 6 distinct kernels): overlapping calls less often produce the same
/// kernel, as in programs with more than a handful of kernels. Measured
/// over 22 seeds: at least 32.8% (mean 37.4%) keyed or proven eager, at
/// least 31.3% (mean 35.1%) linked: little more than with 4 kernels, as
/// what stays withheld is mostly blits (all alike) and the nodes of
/// several execs of one graph, or of an exec before and after an update,
/// whose launches overlap.
#[test]
fn contended_one_window_diverse_kernels() {
    let t = class(MULTI_DIVERSE);
    assert!(t.records > 500);
    floor(&t, MULTI_DIVERSE.name, 20.0, 20.0);
}
