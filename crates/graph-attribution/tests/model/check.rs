//! Runs the tool on a model window and holds its answers to the truth.

use std::collections::{BTreeMap, HashMap, HashSet};

use graph_attribution::{
    attribute_window, AttributedWindow, AttributionId, KeyProof, KeyVerdict, LinkProof,
    LinkVerdict, Observations, Observed, Reason, SessionMemory, Summary, WindowEvidence,
};

use crate::sim::{Trace, Truth, Window};

pub fn attribute(trace: &Trace, w: &Window, memory: &mut SessionMemory) -> AttributedWindow {
    attribute_with(trace, w, memory, attribute_window)
}

/// As [`attribute`], with another entry point of the same signature.
pub fn attribute_with(
    trace: &Trace,
    w: &Window,
    memory: &mut SessionMemory,
    attribute: fn(&WindowEvidence<'_>, &mut SessionMemory) -> AttributedWindow,
) -> AttributedWindow {
    let observations: Observations = w.observations.iter().copied().collect();
    let evidence = WindowEvidence {
        observations: &observations,
        observed: &trace.observed,
        calls: &w.calls,
        open_edge: &w.open_edge,
        close_ns: w.close_ns,
        complete: w.complete,
        calls_complete: true,
        queue_slots: graph_attribution::evidence::DEFAULT_QUEUE_SLOTS,
        kernels: &trace.kernels,
    };
    attribute(&evidence, memory)
}

/// Every key and link the tool emitted that the truth contradicts.
pub fn wrongs(w: &Window, out: &AttributedWindow) -> Vec<String> {
    let mut bad = Vec::new();
    for (i, (truth, o)) in w.truths.iter().zip(&w.observations).enumerate() {
        match out.keys[i] {
            KeyVerdict::Key { key, proof } => {
                let right = truth
                    .graph
                    .is_some_and(|g| g.id == Some(key.graph_id) && g.node == key.node.0);
                if !right {
                    bad.push(format!(
                        "record {i} ({:?}, processed in call {}): key {key} by {proof:?}, truth {truth:?}",
                        o.observed, o.correlation_id
                    ));
                }
            }
            KeyVerdict::NotGraphed if truth.graph.is_some() => bad.push(format!(
                "record {i} ({:?}, processed in call {}): not graphed, truth {truth:?}",
                o.observed, o.correlation_id
            )),
            _ => {}
        }
        if let LinkVerdict::Linked {
            correlation_id,
            proof,
        } = out.links[i]
        {
            if correlation_id != truth.call {
                bad.push(format!(
                    "record {i} ({:?}, processed in call {}): linked to call {correlation_id} by {proof:?}, truth call {}",
                    o.observed, o.correlation_id, truth.call
                ));
            }
        }
    }
    bad
}

/// The summary, recounted from the verdicts.
pub fn recount(out: &AttributedWindow) -> Summary {
    let mut s = Summary {
        records: out.keys.len() as u64,
        execs_contradicted: out.summary.execs_contradicted,
        ..Summary::default()
    };
    for (key, link) in out.keys.iter().zip(&out.links) {
        match *key {
            KeyVerdict::Key { proof, .. } => *s.attributed_by.entry(proof).or_default() += 1,
            KeyVerdict::NotGraphed => s.not_graphed += 1,
            KeyVerdict::Withheld(r) => *s.withheld_by.entry(r).or_default() += 1,
        }
        match *link {
            LinkVerdict::Linked { proof, .. } => *s.linked_by.entry(proof).or_default() += 1,
            LinkVerdict::Unlinked(r) => *s.unlinked_by.entry(r).or_default() += 1,
        }
    }
    s
}

/// Counts over many windows.
#[derive(Clone, Debug, Default)]
pub struct Tally {
    pub records: u64,
    pub graph_records: u64,
    /// Key or proven not graphed.
    pub decided: u64,
    pub keyed: u64,
    pub linked: u64,
    pub keyed_by: BTreeMap<KeyProof, u64>,
    pub linked_by: BTreeMap<LinkProof, u64>,
    pub withheld_by: BTreeMap<Reason, u64>,
    pub unlinked_by: BTreeMap<Reason, u64>,
    /// Records the rules cannot prove by design, by why (single thread).
    pub excused_by: BTreeMap<&'static str, u64>,
    pub contradicted: u64,
    /// Records processed (stamped) by a call other than their writer, on
    /// another thread, and after their writer's EXIT; and how many of the
    /// first were keyed (or proven eager) and linked all the same.
    pub foreign: u64,
    pub foreign_thread: u64,
    pub after_exit: u64,
    pub foreign_decided: u64,
    pub foreign_linked: u64,
}

impl Tally {
    pub fn add(&mut self, trace: &Trace, w: &Window, out: &AttributedWindow) {
        self.records += w.observations.len() as u64;
        self.contradicted += out.summary.execs_contradicted;
        let call = |corr: u64| {
            trace
                .calls
                .iter()
                .find(|c| c.correlation_id == corr)
                .expect("every record names a call")
        };
        for (i, t) in w.truths.iter().enumerate() {
            let processing = call(w.observations[i].correlation_id);
            if processing.correlation_id != t.call {
                let writer = call(t.call);
                self.foreign += 1;
                self.foreign_thread += (processing.thread_id != writer.thread_id) as u64;
                self.after_exit += (processing.thread_id != writer.thread_id
                    && w.observations[i].dispatch_id.is_some()
                    && trace.processed_after(i, w, writer.exit_ns))
                    as u64;
                self.foreign_decided +=
                    matches!(out.keys[i], KeyVerdict::Key { .. } | KeyVerdict::NotGraphed) as u64;
                self.foreign_linked += matches!(out.links[i], LinkVerdict::Linked { .. }) as u64;
            }
            self.graph_records += t.graph.is_some() as u64;
            match out.keys[i] {
                KeyVerdict::Key { proof, .. } => {
                    self.decided += 1;
                    self.keyed += 1;
                    *self.keyed_by.entry(proof).or_default() += 1;
                }
                KeyVerdict::NotGraphed => self.decided += 1,
                KeyVerdict::Withheld(r) => *self.withheld_by.entry(r).or_default() += 1,
            }
            match out.links[i] {
                LinkVerdict::Linked { proof, .. } => {
                    self.linked += 1;
                    *self.linked_by.entry(proof).or_default() += 1;
                }
                LinkVerdict::Unlinked(r) => *self.unlinked_by.entry(r).or_default() += 1,
            }
        }
    }

    pub fn merge(&mut self, o: &Tally) {
        self.records += o.records;
        self.graph_records += o.graph_records;
        self.decided += o.decided;
        self.keyed += o.keyed;
        self.linked += o.linked;
        self.contradicted += o.contradicted;
        self.foreign += o.foreign;
        self.foreign_thread += o.foreign_thread;
        self.after_exit += o.after_exit;
        self.foreign_decided += o.foreign_decided;
        self.foreign_linked += o.foreign_linked;
        for (k, v) in &o.keyed_by {
            *self.keyed_by.entry(*k).or_default() += v;
        }
        for (k, v) in &o.linked_by {
            *self.linked_by.entry(*k).or_default() += v;
        }
        for (k, v) in &o.withheld_by {
            *self.withheld_by.entry(*k).or_default() += v;
        }
        for (k, v) in &o.unlinked_by {
            *self.unlinked_by.entry(*k).or_default() += v;
        }
        for (k, v) in &o.excused_by {
            *self.excused_by.entry(k).or_default() += v;
        }
    }

    pub fn percent(n: u64, of: u64) -> f64 {
        if of == 0 {
            100.0
        } else {
            100.0 * n as f64 / of as f64
        }
    }

    pub fn line(&self, name: &str) -> String {
        format!(
            "{name}: {} records ({} graph): {:.1}% keyed or proven eager ({:.1}% of graph records keyed), {:.1}% linked; \
             {} processed by another call ({} on another thread, {} after their launch's EXIT), of which {:.1}% keyed or proven eager, {:.1}% linked; \
             keyed by {:?}; linked by {:?}; withheld {:?}; unlinked {:?}; excused {:?}",
            self.records,
            self.graph_records,
            Tally::percent(self.decided, self.records),
            Tally::percent(self.keyed, self.graph_records),
            Tally::percent(self.linked, self.records),
            self.foreign,
            self.foreign_thread,
            self.after_exit,
            Tally::percent(self.foreign_decided, self.foreign),
            Tally::percent(self.foreign_linked, self.foreign),
            self.keyed_by,
            self.linked_by,
            self.withheld_by,
            self.unlinked_by,
            self.excused_by,
        )
    }
}

/// The kinds of record each (exec id, node) produced over the whole trace.
pub fn kinds_per_node(trace: &Trace) -> HashMap<(AttributionId, u32), HashSet<Observed>> {
    let mut m: HashMap<(AttributionId, u32), HashSet<Observed>> = HashMap::new();
    for r in &trace.records {
        if let Some(g) = r.truth.graph {
            if let Some(id) = g.id {
                m.entry((id, g.node))
                    .or_default()
                    .insert(trace.observed[r.observation.observed.index()]);
            }
        }
    }
    m
}

/// For a window of a single-thread program: `Ok` when the evidence proves
/// record `i`'s key and call, or why the rules cannot by design.
pub fn provable(
    trace: &Trace,
    w: &Window,
    i: usize,
    kinds: &HashMap<(AttributionId, u32), HashSet<Observed>>,
) -> Result<(), &'static str> {
    let o = &w.observations[i];
    let truth: Truth = w.truths[i];
    let Some(p) = w
        .calls
        .iter()
        .find(|c| c.correlation_id == o.correlation_id)
    else {
        return Err("processed by a call in flight when the window opened");
    };
    if p.exit_ns > w.close_ns {
        return Err("processed by a call still in flight when the window closed");
    }
    let Some(g) = truth.graph else {
        return Ok(());
    };
    let Some(id) = g.id else {
        return Err("exec without attribution id");
    };
    if kinds[&(id, g.node)].len() > 1 {
        return Err("host-copy node seen both as a blit and as a copy (rule 6)");
    }
    let graph = &trace.graphs[g.graph];
    let same: Vec<usize> = (0..graph.nodes.len())
        .filter(|&n| {
            graph
                .output(n, &trace.kernels)
                .is_some_and(|out| out.matches(&trace.observed[o.observed.index()]))
        })
        .collect();
    if same.len() <= 1 {
        return Ok(());
    }
    if !graph.is_chain(&same) {
        return Err("repeated kernel at nodes the dependencies do not order");
    }
    let delivered = w
        .observations
        .iter()
        .zip(&w.truths)
        .filter(|(x, t)| t.call == truth.call && x.observed == o.observed)
        .count();
    if delivered != same.iter().map(|&n| graph.records(n)).sum::<usize>() {
        return Err("repeated kernel on a chain, a sibling record missing or a copy");
    }
    Ok(())
}
