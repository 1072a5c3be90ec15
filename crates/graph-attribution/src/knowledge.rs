//! What the verifier has learned about each exec: the sequence of node
//! signatures one launch produces, by ordinal.
//!
//! Why it persists across windows: a window in which threads contend for a
//! hardware queue cannot teach anything trustworthy, but it can still be
//! checked and repaired against what calmer windows taught. A sequence is
//! trusted ("confirmed") only after it was seen identically in enough clean,
//! uncontended launches; a confirmed sequence is never overwritten, so keys
//! emitted in different windows agree with each other.
//!
//! Bounded by live execs: call [`ExecKnowledge::forget`] with the ids the
//! tracker retires (destroyed, replaced or updated execs) once their last
//! window has been verified.

use std::collections::HashMap;

use crate::evidence::NodeSignature;
use crate::ids::AttributionId;

/// Clean launches that must agree before a sequence is trusted, by default.
pub const DEFAULT_CONFIRMATIONS: u32 = 2;

#[derive(Clone, Debug)]
enum Learning {
    Provisional {
        sequence: Box<[NodeSignature]>,
        sightings: u32,
    },
    Confirmed(Box<[NodeSignature]>),
}

/// What a clean sighting did to the knowledge of its exec.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Sighting {
    /// Counted towards confirmation.
    Provisional,
    /// This sighting made the sequence trusted.
    Confirmed,
    /// Matches the trusted sequence.
    AlreadyKnown,
    /// Differs from the trusted sequence, which stays.
    Contradicts,
}

/// Learned node-signature sequences per attribution id.
#[derive(Clone, Debug)]
pub struct ExecKnowledge {
    execs: HashMap<AttributionId, Learning>,
    confirmations: u32,
}

impl Default for ExecKnowledge {
    fn default() -> Self {
        ExecKnowledge::new()
    }
}

impl ExecKnowledge {
    pub fn new() -> ExecKnowledge {
        ExecKnowledge::with_confirmations(DEFAULT_CONFIRMATIONS)
    }

    /// Knowledge that trusts a sequence after `confirmations` (at least 1)
    /// identical clean sightings.
    pub fn with_confirmations(confirmations: u32) -> ExecKnowledge {
        ExecKnowledge {
            execs: HashMap::new(),
            confirmations: confirmations.max(1),
        }
    }

    /// The trusted sequence of `exec`, by ordinal.
    pub fn sequence(&self, exec: AttributionId) -> Option<&[NodeSignature]> {
        match self.execs.get(&exec) {
            Some(Learning::Confirmed(sequence)) => Some(sequence),
            _ => None,
        }
    }

    /// Whether `exec` has a trusted sequence.
    pub fn knows(&self, exec: AttributionId) -> bool {
        self.sequence(exec).is_some()
    }

    /// Drop everything about `exec` (destroyed, replaced or updated).
    pub fn forget(&mut self, exec: AttributionId) {
        self.execs.remove(&exec);
    }

    /// Execs with anything learned, trusted or not.
    pub fn len(&self) -> usize {
        self.execs.len()
    }

    pub fn is_empty(&self) -> bool {
        self.execs.is_empty()
    }

    /// Record `sightings` clean launches of `exec` that all produced
    /// `sequence`.
    pub fn record_sighting(
        &mut self,
        exec: AttributionId,
        sequence: &[NodeSignature],
        sightings: u32,
    ) -> Sighting {
        let needed = self.confirmations;
        let promote = |seen: u32| {
            if seen >= needed {
                (Learning::Confirmed(sequence.into()), Sighting::Confirmed)
            } else {
                (
                    Learning::Provisional {
                        sequence: sequence.into(),
                        sightings: seen,
                    },
                    Sighting::Provisional,
                )
            }
        };
        let (next, outcome) = match self.execs.get(&exec) {
            Some(Learning::Confirmed(known)) => {
                return if **known == *sequence {
                    Sighting::AlreadyKnown
                } else {
                    Sighting::Contradicts
                };
            }
            Some(Learning::Provisional {
                sequence: seen_before,
                sightings: before,
            }) if **seen_before == *sequence => promote(before.saturating_add(sightings)),
            // Nothing yet, or a provisional sequence this one disagrees with:
            // start over from this sighting.
            _ => promote(sightings),
        };
        self.execs.insert(exec, next);
        outcome
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::evidence::DispatchKind;

    fn seq(sigs: &[u64]) -> Vec<NodeSignature> {
        sigs.iter()
            .map(|&signature| NodeSignature {
                kind: DispatchKind::Kernel,
                signature,
            })
            .collect()
    }

    #[test]
    fn a_sequence_is_trusted_after_enough_agreeing_sightings_and_then_kept() {
        let id = AttributionId::new(1).unwrap();
        let mut k = ExecKnowledge::new();
        assert_eq!(
            k.record_sighting(id, &seq(&[1, 2]), 1),
            Sighting::Provisional
        );
        assert!(!k.knows(id));
        assert_eq!(
            k.record_sighting(id, &seq(&[1, 3]), 1),
            Sighting::Provisional
        );
        assert_eq!(k.record_sighting(id, &seq(&[1, 3]), 1), Sighting::Confirmed);
        assert_eq!(k.sequence(id), Some(&seq(&[1, 3])[..]));
        assert_eq!(k.record_sighting(id, &seq(&[9]), 5), Sighting::Contradicts);
        assert_eq!(k.sequence(id), Some(&seq(&[1, 3])[..]));
        k.forget(id);
        assert!(k.is_empty());
    }
}
