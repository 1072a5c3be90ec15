//! The verifier's answer per dispatch, and the totals the log and the trace
//! metadata report.

use std::collections::BTreeMap;
use std::fmt;

use crate::ids::GraphKey;

/// What may be emitted for one dispatch.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Verdict {
    /// The slot was 0: not produced inside a tracked graph launch. No graph
    /// fields.
    NotGraphed,
    /// The tracker's key is consistent with everything known: emit it.
    Vouched(GraphKey),
    /// The tracker's answer was wrong or unverifiable, but what ran
    /// identifies the key: emit `key`. `correlation_id` is the launch the
    /// dispatch truly belongs to when exactly one launch can be its source
    /// (use it to link the dispatch to its CPU op); `None` means the
    /// record's own correlation id may name the wrong launch.
    Repaired {
        key: GraphKey,
        correlation_id: Option<u64>,
    },
    /// No pair can be emitted without risking a wrong one. The record keeps
    /// every other field.
    Withheld(WithholdReason),
}

impl Verdict {
    /// The key to emit, if any.
    pub fn emitted_key(&self) -> Option<GraphKey> {
        match *self {
            Verdict::Vouched(key) | Verdict::Repaired { key, .. } => Some(key),
            Verdict::NotGraphed | Verdict::Withheld(_) => None,
        }
    }
}

/// Why a graph dispatch's pair was withheld.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum WithholdReason {
    /// The slot held a value no key packs to (id half 0).
    MalformedKey,
    /// Its exec has no trusted sequence yet, and what ran matches no node of
    /// an exec that has one.
    UnknownExec,
    /// Its ordinal is past its exec's node count, and what ran matches no
    /// node of a known exec.
    OrdinalOutOfRange,
    /// What ran matches no node of any exec known in the window.
    NoEvidence,
    /// What ran matches nodes of several (exec, ordinal) keys.
    AmbiguousSignature,
    /// What ran also ran outside any graph in this window, so a stray
    /// ungraphed dispatch could be mistaken for the node.
    SignatureAlsoRunsUngraphed,
    /// More stray dispatches of this kind than launches missing one.
    CountMismatch,
    /// The key would have covered more than one kind of dispatch.
    KeyCoversSeveralKernels,
    /// An exec of the window whose sequence is not learned may run this
    /// kernel, so the one learned node that matches may not be its source.
    UnlearnedExecMayRunIt,
}

impl WithholdReason {
    pub const fn describe(self) -> &'static str {
        match self {
            WithholdReason::MalformedKey => "malformed key",
            WithholdReason::UnknownExec => "exec not learned",
            WithholdReason::OrdinalOutOfRange => "ordinal out of range",
            WithholdReason::NoEvidence => "no matching node",
            WithholdReason::AmbiguousSignature => "ambiguous signature",
            WithholdReason::SignatureAlsoRunsUngraphed => "kernel also ran ungraphed",
            WithholdReason::CountMismatch => "count mismatch",
            WithholdReason::KeyCoversSeveralKernels => "key covers several kernels",
            WithholdReason::UnlearnedExecMayRunIt => "an unlearned exec may run it",
        }
    }
}

impl fmt::Display for WithholdReason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.describe())
    }
}

/// Totals for one window (or several, [`VerificationSummary::merge`]d).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct VerificationSummary {
    /// Dispatch records examined.
    pub observations: u64,
    /// Records with no graph fields because they were not graphed.
    pub not_graphed: u64,
    /// Records emitted with a pair: `vouched + repaired`.
    pub attributed: u64,
    pub vouched: u64,
    pub repaired: u64,
    /// Repaired records given the correlation id of their true launch.
    pub relinked: u64,
    pub withheld_by_reason: BTreeMap<WithholdReason, u64>,
    /// Execs whose sequence became trusted in this window.
    pub execs_learned: u64,
    /// Windows in which contamination evidence stopped all learning.
    pub windows_not_learned_from: u64,
}

impl VerificationSummary {
    pub fn withheld(&self) -> u64 {
        self.withheld_by_reason.values().sum()
    }

    pub fn withheld_for(&self, reason: WithholdReason) -> u64 {
        self.withheld_by_reason.get(&reason).copied().unwrap_or(0)
    }

    pub(crate) fn count(&mut self, verdict: &Verdict) {
        self.observations += 1;
        match *verdict {
            Verdict::NotGraphed => self.not_graphed += 1,
            Verdict::Vouched(_) => {
                self.vouched += 1;
                self.attributed += 1;
            }
            Verdict::Repaired { correlation_id, .. } => {
                self.repaired += 1;
                self.attributed += 1;
                if correlation_id.is_some() {
                    self.relinked += 1;
                }
            }
            Verdict::Withheld(reason) => *self.withheld_by_reason.entry(reason).or_default() += 1,
        }
    }

    /// Add another window's totals to these.
    pub fn merge(&mut self, other: &VerificationSummary) {
        self.observations += other.observations;
        self.not_graphed += other.not_graphed;
        self.attributed += other.attributed;
        self.vouched += other.vouched;
        self.repaired += other.repaired;
        self.relinked += other.relinked;
        for (reason, n) in &other.withheld_by_reason {
            *self.withheld_by_reason.entry(*reason).or_default() += n;
        }
        self.execs_learned += other.execs_learned;
        self.windows_not_learned_from += other.windows_not_learned_from;
    }
}

impl fmt::Display for VerificationSummary {
    /// One line for the log and the trace metadata, e.g.
    /// `graph attribution: 1188 attributed (1176 vouched, 12 repaired, 12
    /// relinked), 4 withheld (ambiguous signature: 4), 40 not graphed`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "graph attribution: {} attributed ({} vouched, {} repaired, {} relinked), {} withheld",
            self.attributed,
            self.vouched,
            self.repaired,
            self.relinked,
            self.withheld()
        )?;
        if !self.withheld_by_reason.is_empty() {
            let reasons: Vec<String> = self
                .withheld_by_reason
                .iter()
                .map(|(reason, n)| format!("{reason}: {n}"))
                .collect();
            write!(f, " ({})", reasons.join(", "))?;
        }
        write!(f, ", {} not graphed", self.not_graphed)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ids::{AttributionId, Ordinal};

    #[test]
    fn the_summary_line_names_counts_and_reasons() {
        let key = GraphKey::new(AttributionId::new(1).unwrap(), Ordinal(0));
        let mut s = VerificationSummary::default();
        for v in [
            Verdict::Vouched(key),
            Verdict::Repaired {
                key,
                correlation_id: Some(3),
            },
            Verdict::Withheld(WithholdReason::AmbiguousSignature),
            Verdict::NotGraphed,
        ] {
            s.count(&v);
        }
        assert_eq!(
            s.to_string(),
            "graph attribution: 2 attributed (1 vouched, 1 repaired, 1 relinked), 1 withheld \
             (ambiguous signature: 1), 1 not graphed"
        );
        let mut total = s.clone();
        total.merge(&s);
        assert_eq!(total.attributed, 4);
        assert_eq!(total.withheld_for(WithholdReason::AmbiguousSignature), 2);
    }
}
