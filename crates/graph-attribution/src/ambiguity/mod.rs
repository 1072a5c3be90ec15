//! Which withheld records are provably ambiguous, which the evidence in
//! fact decides, and which stay undecided.
//!
//! Why: withholding is right only where the evidence cannot decide. When
//! rules 1 to 10 leave a record several candidates, either two complete
//! assignments of the window's records to its calls' outputs satisfy
//! every rule and give it different answers (it is *provably ambiguous*),
//! or every assignment gives it one answer, which the propagation did not
//! reach (it is *decided*, and the key or link is emitted), or the search
//! here could not tell within its budget (*undecided*: the work list for
//! the rules).
//!
//! The rules an assignment must keep ([`model`]): every record of the
//! problem on one of its remaining candidates (rules 1 to 5 and 8 left
//! them); every output at most one record and every mandatory output one
//! (rule 9); a node's record starting no earlier than those of the nodes it
//! waits for end, and a call's work no earlier than the work of the calls
//! enqueued before it on its stream (rule 10, as far as the user left its
//! assumptions).
//!
//! The questions are satisfiability questions ([`cnf`]), asked of a
//! CDCL solver, never of a heuristic that could claim what it did not
//! show:
//! - a first assignment of the whole problem;
//! - per withheld record, one near it that gives it another answer, the
//!   records farther away kept where the first has them: found, it and
//!   every record it moved are provably ambiguous (the two assignments are
//!   checked whole, by a check that shares nothing with the solver);
//! - else the same question of a relaxation, the records farther away
//!   dropped with every rule that names them: impossible there, it is
//!   impossible in the whole problem, and the record is decided.
//!
//! Neighbourhoods grow (the launches a record could be part of, then those
//! their records could be part of, ...) until one of the two answers
//! comes; every solve has a budget of solver steps, so the same window
//! gets the same answers whatever the machine.

mod cnf;
mod model;

use crate::calls::CallIndex;
use crate::evidence::Observations;
use crate::joint::Joint;
use crate::rules::time_order::Plan;

use cnf::{Instance, Outside};
use model::{consistent, Model, NONE};

/// Solver steps for the first assignment, and per question.
const FIRST_STEPS: u64 = 100_000;
const QUESTION_STEPS: u64 = 5_000;

/// Solver steps for every question of a window together. Why: a step is
/// about 12 us on the 2-core CI machine, and a window of 4,500 records
/// with 700 open ones asked everything at 5,000 steps a question took four
/// minutes; 300,000 bounds the classification near four seconds, and the
/// records left unasked stay undecided, never guessed.
const WINDOW_STEPS: u64 = 300_000;

/// How far neighbourhoods grow before a record is left undecided.
const MAX_RADIUS: usize = 3;

/// A bound on the records a neighbourhood holds.
const MAX_NEIGHBOURHOOD: usize = 5_000;

/// What a record's remaining question came to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Answer {
    /// Not asked, or no answer within the budget.
    Undecided,
    /// A second consistent assignment gives it another answer.
    Ambiguous,
    /// Every consistent assignment gives it this slot's answer.
    Decided(u32),
}

/// Per record, for its key and for its link.
#[derive(Debug)]
pub(crate) struct Classified {
    pub key: Vec<Answer>,
    pub link: Vec<Answer>,
}

impl Classified {
    fn undecided(n: usize) -> Classified {
        Classified {
            key: vec![Answer::Undecided; n],
            link: vec![Answer::Undecided; n],
        }
    }
}

/// For each record still withheld (`open_key`, `open_link`): ambiguous,
/// decided, or undecided.
pub(crate) fn classify(
    index: &CallIndex<'_>,
    observations: &Observations,
    joint: &Joint,
    plan: &Plan,
    open_key: &[bool],
    open_link: &[bool],
) -> Classified {
    let n = observations.len();
    let mut out = Classified::undecided(n);
    let m = Model::new(index, observations, joint, plan);
    let asked = |r: usize| m.in_problem(r as u32) && (open_key[r] || open_link[r]);
    if !(0..n).any(asked) {
        return out;
    }
    let all: Vec<bool> = (0..n as u32).map(|r| m.in_problem(r)).collect();
    let mut whole = Instance::new(&m, &all, Outside::Dropped, None);
    if whole.solve(&[], FIRST_STEPS) != Some(true) {
        log::debug!("kineto-rocm: ambiguity: no first assignment within the budget");
        return out;
    }
    let mut base = vec![NONE; n];
    whole.write_into(&mut base);
    drop(whole);
    if !consistent(&m, &base) {
        log::warn!(
            "kineto-rocm: ambiguity: the solver's assignment failed the check; nothing classified"
        );
        return out;
    }
    let mut records_of_call: Vec<Vec<u32>> = vec![Vec::new(); m.enter.len()];
    for r in 0..n as u32 {
        for c in m.calls_of(r) {
            records_of_call[c as usize].push(r);
        }
    }
    let mut second = base.clone();
    let mut spent = 0u64;
    'records: for r in 0..n as u32 {
        for question in [Question::Key, Question::Link] {
            let (open, answer) = match question {
                Question::Key => (open_key[r as usize], out.key[r as usize]),
                Question::Link => (open_link[r as usize], out.link[r as usize]),
            };
            if !m.in_problem(r) || !open || answer != Answer::Undecided {
                continue;
            }
            let here = base[r as usize];
            let same = |s: u32| question.same(&m, s, here);
            let mut calls = m.calls_of(r);
            for _radius in 0..MAX_RADIUS {
                if spent > WINDOW_STEPS {
                    log::debug!("kineto-rocm: ambiguity: the window's budget is spent; the rest stay undecided");
                    break 'records;
                }
                let free = neighbourhood(&m, &records_of_call, &calls);
                if free.iter().filter(|&&f| f).count() > MAX_NEIGHBOURHOOD {
                    break;
                }
                // A second assignment near `r`, the rest as the first.
                let mut near = Instance::new(&m, &free, Outside::Fixed(&base), Some(&base));
                let off = near.off(r, same);
                let found = near.solve(&off, QUESTION_STEPS);
                spent += near.spent();
                if found == Some(true) {
                    second.copy_from_slice(&base);
                    near.write_into(&mut second);
                    if consistent(&m, &second) {
                        mark_differences(&m, &base, &second, &mut out);
                        break;
                    }
                    log::warn!("kineto-rocm: ambiguity: a second assignment failed the check");
                    break;
                }
                // None near: is there none at all? Ask a relaxation.
                let mut relaxed = Instance::new(&m, &free, Outside::Dropped, Some(&base));
                let off = relaxed.off(r, same);
                let found = relaxed.solve(&off, QUESTION_STEPS);
                spent += relaxed.spent();
                if found == Some(false) {
                    match question {
                        Question::Key => out.key[r as usize] = Answer::Decided(here),
                        Question::Link => out.link[r as usize] = Answer::Decided(here),
                    }
                    break;
                }
                calls = grow(&m, &records_of_call, &calls);
            }
        }
    }
    out
}

#[derive(Clone, Copy)]
enum Question {
    Key,
    Link,
}

impl Question {
    /// Does slot `s` give the same answer as slot `here`?
    fn same(self, m: &Model<'_>, s: u32, here: u32) -> bool {
        match self {
            Question::Key => m.slot_key[s as usize] == m.slot_key[here as usize],
            Question::Link => m.slot_call[s as usize] == m.slot_call[here as usize],
        }
    }
}

/// The records that may be part of `calls`.
fn neighbourhood(m: &Model<'_>, records_of_call: &[Vec<u32>], calls: &[u32]) -> Vec<bool> {
    let mut free = vec![false; m.records()];
    for &c in calls {
        for &r in &records_of_call[c as usize] {
            free[r as usize] = true;
        }
    }
    free
}

/// `calls` and every call their records may be part of.
fn grow(m: &Model<'_>, records_of_call: &[Vec<u32>], calls: &[u32]) -> Vec<u32> {
    let mut out: Vec<u32> = calls
        .iter()
        .flat_map(|&c| records_of_call[c as usize].iter())
        .flat_map(|&r| m.calls_of(r))
        .chain(calls.iter().copied())
        .collect();
    out.sort_unstable();
    out.dedup();
    out
}

/// Every record the two assignments give different keys or calls is
/// ambiguous in that.
fn mark_differences(m: &Model<'_>, base: &[u32], second: &[u32], out: &mut Classified) {
    for (r, (&a, &b)) in base.iter().zip(second).enumerate() {
        if a == NONE || b == NONE || a == b {
            continue;
        }
        if m.slot_key[a as usize] != m.slot_key[b as usize] {
            out.key[r] = Answer::Ambiguous;
        }
        if m.slot_call[a as usize] != m.slot_call[b as usize] {
            out.link[r] = Answer::Ambiguous;
        }
    }
}
