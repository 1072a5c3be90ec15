//! What may be emitted for each record, why, and the totals the log and the
//! trace metadata report.

use std::collections::BTreeMap;
use std::fmt;

use crate::ids::GraphKey;

/// Declares a fieldless enum with `ALL`, its variants in declaration
/// order, and `index`, a variant's place in `ALL`: the summary counts by
/// index into small arrays and reads each variant back from `ALL`.
macro_rules! counted_enum {
    (
        $(#[$meta:meta])*
        pub enum $t:ident {
            $( $(#[$variant_meta:meta])* $variant:ident, )+
        }
    ) => {
        $(#[$meta])*
        pub enum $t {
            $( $(#[$variant_meta])* $variant, )+
        }

        impl $t {
            pub(crate) const ALL: &'static [$t] = &[$($t::$variant),+];

            #[inline]
            pub(crate) const fn index(self) -> usize {
                self as usize
            }
        }
    };
}

/// The graph fields of one record.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum KeyVerdict {
    /// Emit this pair; `proof` names the rule that established it.
    Key { key: GraphKey, proof: KeyProof },
    /// The record is proven to come from eager (ungraphed) work, or from no
    /// graph node at all: no graph fields.
    NotGraphed,
    /// No pair can be emitted without risking a wrong one; the record keeps
    /// every other field.
    Withheld(Reason),
}

impl KeyVerdict {
    pub fn key(&self) -> Option<GraphKey> {
        match *self {
            KeyVerdict::Key { key, .. } => Some(key),
            _ => None,
        }
    }
}

/// The call a record is linked to (its `correlation`, External id, flow
/// arrow and stream lane come from that call).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LinkVerdict {
    Linked {
        correlation_id: u64,
        proof: LinkProof,
    },
    /// The launching call is not proven: emit no correlation, External id,
    /// arrow or stream.
    Unlinked(Reason),
}

impl LinkVerdict {
    pub fn correlation_id(&self) -> Option<u64> {
        match *self {
            LinkVerdict::Linked { correlation_id, .. } => Some(correlation_id),
            LinkVerdict::Unlinked(_) => None,
        }
    }
}

counted_enum! {
    /// How a key was proven (rules in `crate::attribute`).
    #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
    pub enum KeyProof {
        /// Every call that could have written the packet produces this one node
        /// of this exec (rule 2).
        OnlyPossibleNode,
        /// One thread's records of this kind on one queue, matched to its calls
        /// in dispatch order (rule 5).
        QueueOrder,
        /// One thread's records of this kind from calls on one stream, matched
        /// to its calls in start order (rule 5).
        StreamOrder,
        /// Nodes running the same kernel told apart by their dependencies
        /// (rule 4).
        DependencyOrder,
        /// Every assignment of the window's records to its calls' outputs that
        /// satisfies rules 8 to 10 gives this record this node (`crate::joint`).
        OnlyConsistentAssignment,
    }
}

counted_enum! {
    /// How a link was proven.
    #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
    pub enum LinkProof {
        /// Only one call could have written the packet (rule 3).
        OnlyPossibleCall,
        /// One thread's records of this kind on one queue, in dispatch order
        /// (rule 5).
        QueueOrder,
        /// One thread's records of this kind from calls on one stream, in start
        /// order (rule 5).
        StreamOrder,
        /// Every assignment of the window's records to its calls' outputs that
        /// satisfies rules 8 to 10 gives this record this call (`crate::joint`).
        OnlyConsistentAssignment,
    }
}

counted_enum! {
    /// Why a key or a link was withheld.
    #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
    pub enum Reason {
        /// Records of HIP calls were dropped in this window, so no call's
        /// neighbourhood is known whole.
        CallsDropped,
        /// The record was processed outside any HIP call the window recorded
        /// (the runtime's async thread, or a call whose record is missing).
        ProcessedOutsideKnownCall,
        /// A call that may have written the packet does work the tool cannot
        /// name (an API it does not model, a graph it could not follow).
        UnknownWorkNearby,
        /// Its queue may have held as many packets as it has slots, when ROCr
        /// defers processing and the two-hop rule does not hold.
        QueueMayHaveOverflowed,
        /// A call that may have written the packet ran across the window's
        /// start or stop, next to calls the tool did not see.
        WindowEdge,
        /// Several nodes, or eager and graph work, may have written it.
        Ambiguous,
        /// Its exec runs this kernel at several nodes that its dependencies do
        /// not order, or that the evidence could not tell apart.
        RepeatedKernel,
        /// Several calls may have written it.
        SeveralCalls,
        /// No call that may have written it produces such a record: what the
        /// tool knows of the graphs does not match what ran.
        NoProducer,
        /// Its exec has no attribution id (see the tracker's anomalies).
        ExecHasNoId,
        /// The key would have been emitted for records of different kernels.
        KeyCoversSeveralKernels,
        /// No assignment of the window's records to its calls' outputs satisfies
        /// rules 8 to 10: an assumption they rest on failed here, so nothing the
        /// records of this kind were given is trusted.
        Contradiction,
        /// Two assignments of the window's records to its calls' outputs
        /// satisfy every rule and give this record different answers: the
        /// evidence cannot decide (`crate::ambiguity`). Every other reason
        /// leaves the record undecided.
        ProvablyAmbiguous,
    }
}

impl Reason {
    pub const fn describe(self) -> &'static str {
        match self {
            Reason::CallsDropped => "call records dropped",
            Reason::ProcessedOutsideKnownCall => "processed outside a recorded call",
            Reason::UnknownWorkNearby => "unknown work nearby",
            Reason::QueueMayHaveOverflowed => "queue may have overflowed",
            Reason::WindowEdge => "window edge",
            Reason::Ambiguous => "several possible nodes",
            Reason::RepeatedKernel => "repeated kernel",
            Reason::SeveralCalls => "several possible calls",
            Reason::NoProducer => "no matching producer",
            Reason::ExecHasNoId => "exec has no id",
            Reason::KeyCoversSeveralKernels => "key covers several kernels",
            Reason::Contradiction => "evidence contradicts the assignment rules",
            Reason::ProvablyAmbiguous => "provably ambiguous",
        }
    }
}

impl fmt::Display for Reason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.describe())
    }
}

/// Totals for one window (or several, [`Summary::merge`]d).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Summary {
    pub records: u64,
    pub not_graphed: u64,
    pub attributed_by: BTreeMap<KeyProof, u64>,
    pub withheld_by: BTreeMap<Reason, u64>,
    pub linked_by: BTreeMap<LinkProof, u64>,
    pub unlinked_by: BTreeMap<Reason, u64>,
    /// Execs found to run something other than their graph-building calls
    /// said (their keys are withheld from then on).
    pub execs_contradicted: u64,
    /// Hardware queues that may have held as many packets as they have
    /// slots: ROCr may then process some of their packets later, on its
    /// async thread, so the window may be missing records.
    pub queues_may_have_overflowed: u64,
}

/// Adds the non-zero `counts` of `variants` (by index) to `map`.
fn add_counts<K: Ord + Copy>(map: &mut BTreeMap<K, u64>, variants: &[K], counts: &[u64]) {
    for (variant, &n) in variants.iter().zip(counts) {
        if n > 0 {
            *map.entry(*variant).or_default() += n;
        }
    }
}

/// How many of `items` fall in each class. Four lanes of counters, so that
/// a run of one class (most of a window) does not wait on one counter's
/// store before its next increment: with one, that wait was a quarter of
/// attributing a window of one launch at a time.
fn tally<T, const N: usize>(items: &[T], class: impl Fn(&T) -> usize) -> [u64; N] {
    let mut lanes = [[0u64; N]; 4];
    let mut quads = items.chunks_exact(4);
    for quad in &mut quads {
        for (lane, item) in lanes.iter_mut().zip(quad) {
            lane[class(item)] += 1;
        }
    }
    for item in quads.remainder() {
        lanes[0][class(item)] += 1;
    }
    std::array::from_fn(|c| lanes.iter().map(|lane| lane[c]).sum())
}

fn total<K>(m: &BTreeMap<K, u64>) -> u64 {
    m.values().sum()
}

impl Summary {
    pub fn attributed(&self) -> u64 {
        total(&self.attributed_by)
    }
    pub fn withheld(&self) -> u64 {
        total(&self.withheld_by)
    }
    pub fn linked(&self) -> u64 {
        total(&self.linked_by)
    }
    pub fn unlinked(&self) -> u64 {
        total(&self.unlinked_by)
    }

    #[cfg(test)]
    pub(crate) fn count(&mut self, key: &KeyVerdict, link: &LinkVerdict) {
        self.count_all(std::slice::from_ref(key), std::slice::from_ref(link));
    }

    /// Counts every record's pair: by class index into small arrays, one
    /// pass over the keys and one over the links, and only then into the
    /// maps.
    pub(crate) fn count_all(&mut self, keys: &[KeyVerdict], links: &[LinkVerdict]) {
        const PROOFS: usize = KeyProof::ALL.len();
        const REASONS: usize = Reason::ALL.len();
        // Keys: proofs, then not graphed, then the reasons withheld.
        let by_key: [u64; PROOFS + 1 + REASONS] = tally(keys, |key| match *key {
            KeyVerdict::Key { proof, .. } => proof.index(),
            KeyVerdict::NotGraphed => PROOFS,
            KeyVerdict::Withheld(reason) => PROOFS + 1 + reason.index(),
        });
        const LINK_PROOFS: usize = LinkProof::ALL.len();
        let by_link: [u64; LINK_PROOFS + REASONS] = tally(links, |link| match *link {
            LinkVerdict::Linked { proof, .. } => proof.index(),
            LinkVerdict::Unlinked(reason) => LINK_PROOFS + reason.index(),
        });
        self.records += keys.len() as u64;
        self.not_graphed += by_key[PROOFS];
        add_counts(&mut self.attributed_by, KeyProof::ALL, &by_key[..PROOFS]);
        add_counts(&mut self.withheld_by, Reason::ALL, &by_key[PROOFS + 1..]);
        add_counts(&mut self.linked_by, LinkProof::ALL, &by_link[..LINK_PROOFS]);
        add_counts(&mut self.unlinked_by, Reason::ALL, &by_link[LINK_PROOFS..]);
    }

    pub fn merge(&mut self, other: &Summary) {
        self.records += other.records;
        self.not_graphed += other.not_graphed;
        for (k, n) in &other.attributed_by {
            *self.attributed_by.entry(*k).or_default() += n;
        }
        for (k, n) in &other.withheld_by {
            *self.withheld_by.entry(*k).or_default() += n;
        }
        for (k, n) in &other.linked_by {
            *self.linked_by.entry(*k).or_default() += n;
        }
        for (k, n) in &other.unlinked_by {
            *self.unlinked_by.entry(*k).or_default() += n;
        }
        self.execs_contradicted += other.execs_contradicted;
        self.queues_may_have_overflowed += other.queues_may_have_overflowed;
    }
}

fn reasons(f: &mut fmt::Formatter<'_>, m: &BTreeMap<Reason, u64>) -> fmt::Result {
    if !m.is_empty() {
        let parts: Vec<String> = m.iter().map(|(r, n)| format!("{r}: {n}")).collect();
        write!(f, " ({})", parts.join(", "))?;
    }
    Ok(())
}

impl fmt::Display for Summary {
    /// One line for the log and the trace metadata, e.g.
    /// `graph attribution: 6400 attributed, 0 withheld, 0 not graphed;
    /// links: 6400 linked, 0 unlinked`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "graph attribution: {} attributed, {} withheld",
            self.attributed(),
            self.withheld()
        )?;
        reasons(f, &self.withheld_by)?;
        write!(
            f,
            ", {} not graphed; links: {} linked, {} unlinked",
            self.not_graphed,
            self.linked(),
            self.unlinked()
        )?;
        reasons(f, &self.unlinked_by)?;
        if self.execs_contradicted > 0 {
            write!(
                f,
                "; {} execs contradicted their graphs",
                self.execs_contradicted
            )?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ids::{AttributionId, NodeId};

    #[test]
    fn the_summary_line_names_counts_and_reasons() {
        let key = GraphKey::new(AttributionId::new(1).unwrap(), NodeId(0));
        let mut s = Summary::default();
        s.count(
            &KeyVerdict::Key {
                key,
                proof: KeyProof::OnlyPossibleNode,
            },
            &LinkVerdict::Linked {
                correlation_id: 3,
                proof: LinkProof::OnlyPossibleCall,
            },
        );
        s.count(
            &KeyVerdict::Withheld(Reason::Ambiguous),
            &LinkVerdict::Unlinked(Reason::SeveralCalls),
        );
        s.count(
            &KeyVerdict::NotGraphed,
            &LinkVerdict::Unlinked(Reason::SeveralCalls),
        );
        assert_eq!(
            s.to_string(),
            "graph attribution: 1 attributed, 1 withheld (several possible nodes: 1), 1 not graphed; \
             links: 1 linked, 2 unlinked (several possible calls: 2)"
        );
        let mut t = s.clone();
        t.merge(&s);
        assert_eq!(t.attributed(), 2);
        assert_eq!(t.unlinked(), 4);
    }

    #[test]
    fn counting_a_window_at_once_equals_counting_each_pair() {
        let key = GraphKey::new(AttributionId::new(1).unwrap(), NodeId(0));
        let keys: Vec<KeyVerdict> = (0..1003)
            .map(|i| match i % 7 {
                0 | 3 => KeyVerdict::NotGraphed,
                1 => KeyVerdict::Withheld(Reason::ALL[i % Reason::ALL.len()]),
                _ => KeyVerdict::Key {
                    key,
                    proof: KeyProof::ALL[i % KeyProof::ALL.len()],
                },
            })
            .collect();
        let links: Vec<LinkVerdict> = (0..1003)
            .map(|i| match i % 5 {
                0 => LinkVerdict::Unlinked(Reason::ALL[i % Reason::ALL.len()]),
                _ => LinkVerdict::Linked {
                    correlation_id: i as u64,
                    proof: LinkProof::ALL[i % LinkProof::ALL.len()],
                },
            })
            .collect();
        let mut whole = Summary::default();
        whole.count_all(&keys, &links);
        let mut each = Summary::default();
        for (k, l) in keys.iter().zip(&links) {
            each.count(k, l);
        }
        assert_eq!(whole, each);
        assert_eq!(whole.records, 1003);
        assert_eq!(
            whole.attributed() + whole.withheld() + whole.not_graphed,
            1003
        );
        assert_eq!(whole.linked() + whole.unlinked(), 1003);
        assert!(whole.withheld_by.len() > 1 && whole.attributed_by.len() > 1);
    }

    #[test]
    fn every_variant_is_listed_at_its_place() {
        for (i, p) in KeyProof::ALL.iter().enumerate() {
            assert_eq!(p.index(), i, "{p:?}");
        }
        for (i, p) in LinkProof::ALL.iter().enumerate() {
            assert_eq!(p.index(), i, "{p:?}");
        }
        for (i, r) in Reason::ALL.iter().enumerate() {
            assert_eq!(r.index(), i, "{r:?}");
        }
    }

    #[test]
    fn a_window_is_counted_as_its_records_one_by_one() {
        let mut next = crate::test_rng::below(5);
        let key = GraphKey::new(AttributionId::new(1).unwrap(), NodeId(0));
        for _ in 0..200 {
            let n = next(40) as usize;
            let keys: Vec<KeyVerdict> = (0..n)
                .map(|_| match next(3) {
                    0 => KeyVerdict::Key {
                        key,
                        proof: KeyProof::ALL[next(KeyProof::ALL.len() as u64) as usize],
                    },
                    1 => KeyVerdict::NotGraphed,
                    _ => KeyVerdict::Withheld(Reason::ALL[next(Reason::ALL.len() as u64) as usize]),
                })
                .collect();
            let links: Vec<LinkVerdict> = (0..n)
                .map(|i| match next(2) {
                    0 => LinkVerdict::Linked {
                        correlation_id: i as u64,
                        proof: LinkProof::ALL[next(LinkProof::ALL.len() as u64) as usize],
                    },
                    _ => {
                        LinkVerdict::Unlinked(Reason::ALL[next(Reason::ALL.len() as u64) as usize])
                    }
                })
                .collect();
            let mut want = Summary::default();
            for (k, l) in keys.iter().zip(&links) {
                want.records += 1;
                match *k {
                    KeyVerdict::Key { proof, .. } => {
                        *want.attributed_by.entry(proof).or_default() += 1
                    }
                    KeyVerdict::NotGraphed => want.not_graphed += 1,
                    KeyVerdict::Withheld(r) => *want.withheld_by.entry(r).or_default() += 1,
                }
                match *l {
                    LinkVerdict::Linked { proof, .. } => {
                        *want.linked_by.entry(proof).or_default() += 1
                    }
                    LinkVerdict::Unlinked(r) => *want.unlinked_by.entry(r).or_default() += 1,
                }
            }
            let mut got = Summary::default();
            got.count_all(&keys, &links);
            assert_eq!(got, want);
        }
    }
}
