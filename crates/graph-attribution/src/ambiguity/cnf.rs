//! A part of the assignment problem as a satisfiability problem.
//!
//! Some records are *free*; every other record is either *fixed* where a
//! known assignment has it (a witness found there is a whole assignment)
//! or *dropped* with every rule that names it (a relaxation: what it
//! cannot satisfy, no assignment can).
//!
//! Variables: one per free record and candidate slot left ("the record is
//! that slot's"); exactly one per record, at most one per slot, at least
//! one per mandatory slot. Time rules against fixed records remove
//! candidates outright; between free records they are clauses through
//! ladders (order encoding: a slot's or call's "its work ends at or after
//! T" literals), linear in the candidates instead of quadratic.

use std::cell::Cell;

use batsat::{lbool, Callbacks, Lit, SolverInterface};

use super::model::{Model, NONE};

/// Stops a solve after `limit` of the solver's checks (it checks after
/// each conflict): a bound on work that does not depend on the clock.
#[derive(Default)]
pub(super) struct Budget {
    checks: Cell<u64>,
    limit: Cell<u64>,
}

impl Callbacks for Budget {
    fn stop(&self) -> bool {
        let n = self.checks.get() + 1;
        self.checks.set(n);
        n > self.limit.get()
    }
}

type Solver = batsat::Solver<Budget>;

/// Where the records outside the free ones are.
#[derive(Clone, Copy)]
pub(super) enum Outside<'b> {
    /// On the slots this assignment gives them.
    Fixed(&'b [u32]),
    /// Not in the problem at all.
    Dropped,
}

/// One encoded part.
pub(super) struct Instance {
    solver: Solver,
    /// Per record: a free record's admissible slots and their literals.
    x: Vec<Vec<(u32, Lit)>>,
    /// A free record has no admissible slot, or a mandatory slot no
    /// record: no solve needed.
    impossible: bool,
}

fn aux(solver: &mut Solver) -> Lit {
    // Only propagated, never decided on: a model sets every free record,
    // and any auxiliary left unset can be false.
    Lit::new(solver.new_var(lbool::UNDEF, false), true)
}

/// At most one of `lits` (pairwise up to five, else Sinz's sequential
/// counter).
fn at_most_one(solver: &mut Solver, lits: &[Lit]) {
    let n = lits.len();
    if n <= 5 {
        for i in 0..n {
            for j in i + 1..n {
                solver.add_clause_reuse(&mut vec![!lits[i], !lits[j]]);
            }
        }
        return;
    }
    let s: Vec<Lit> = (0..n - 1).map(|_| aux(solver)).collect();
    solver.add_clause_reuse(&mut vec![!lits[0], s[0]]);
    for i in 1..n - 1 {
        solver.add_clause_reuse(&mut vec![!lits[i], s[i]]);
        solver.add_clause_reuse(&mut vec![!s[i - 1], s[i]]);
        solver.add_clause_reuse(&mut vec![!lits[i], !s[i - 1]]);
    }
    solver.add_clause_reuse(&mut vec![!lits[n - 1], !s[n - 2]]);
}

/// "Work ending at or after `thresholds[j]` is here" (`lits[j]`), for the
/// ends its candidates would bring: a candidate implies its end's rung,
/// each rung the one below. A rung may be true with no such end here,
/// which only forbids more, so a clause against a rung forbids exactly the
/// candidates at or above it.
struct Ladder {
    thresholds: Vec<u64>,
    lits: Vec<Lit>,
}

impl Ladder {
    fn new(solver: &mut Solver, members: &[(u64, Lit)]) -> Ladder {
        let mut thresholds: Vec<u64> = members.iter().map(|&(v, _)| v).collect();
        thresholds.sort_unstable();
        thresholds.dedup();
        let lits: Vec<Lit> = thresholds.iter().map(|_| aux(solver)).collect();
        for j in 1..lits.len() {
            solver.add_clause_reuse(&mut vec![!lits[j], lits[j - 1]]);
        }
        for &(v, l) in members {
            let j = thresholds.partition_point(|&t| t < v);
            solver.add_clause_reuse(&mut vec![!l, lits[j]]);
        }
        Ladder { thresholds, lits }
    }

    /// The rung "work ending after `t` is here", if a candidate's would.
    fn after(&self, t: u64) -> Option<Lit> {
        let j = self.thresholds.partition_point(|&x| x <= t);
        self.lits.get(j).copied()
    }
}

impl Instance {
    /// Encodes the part of `m` where the records marked in `free` move;
    /// the solver tries each record on its slot in `hint` first.
    pub fn new(
        m: &Model<'_>,
        free: &[bool],
        outside: Outside<'_>,
        hint: Option<&[u32]>,
    ) -> Instance {
        let mut solver = Solver::new(Default::default(), Budget::default());
        let n = m.records();
        let timed = |r: u32| m.timed[r as usize];
        // Fixed records by slot, and per call what its fixed work spans.
        let fixed_at = |s: u32| -> u32 {
            match outside {
                Outside::Fixed(base) => {
                    let r = m.cands[s as usize]
                        .iter()
                        .copied()
                        .find(|&r| !free[r as usize] && base[r as usize] == s);
                    r.unwrap_or(NONE)
                }
                Outside::Dropped => NONE,
            }
        };
        let mut free_slots: Vec<u32> = (0..n as u32)
            .filter(|&r| free[r as usize])
            .flat_map(|r| m.domain[r as usize].iter().copied())
            .collect();
        free_slots.sort_unstable();
        free_slots.dedup();
        let mut fixed = vec![NONE; m.slot_call.len()];
        if let Outside::Fixed(_) = outside {
            for &s in &free_slots {
                fixed[s as usize] = fixed_at(s);
                for p in m.preds(s).chain(m.succs[s as usize].iter().copied()) {
                    fixed[p as usize] = fixed_at(p);
                }
            }
        }
        // Per stream touched, the fixed work before and after each place.
        let stream_bounds = StreamBounds::new(m, free, outside, &free_slots);
        let mut x: Vec<Vec<(u32, Lit)>> = vec![Vec::new(); n];
        let mut impossible = false;
        for r in 0..n as u32 {
            if !free[r as usize] {
                continue;
            }
            let (start, end) = (m.start[r as usize], m.end[r as usize]);
            for &s in &m.domain[r as usize] {
                if fixed[s as usize] != NONE {
                    continue;
                }
                if timed(r) {
                    let clash_before = m.preds(s).any(|p| {
                        let y = fixed[p as usize];
                        y != NONE && timed(y) && start < m.end[y as usize]
                    });
                    let clash_after = m.succs[s as usize].iter().any(|&q| {
                        let y = fixed[q as usize];
                        y != NONE && timed(y) && end > m.start[y as usize]
                    });
                    let (ends_before, starts_after) =
                        stream_bounds.around(m, m.slot_call[s as usize]);
                    if clash_before || clash_after || start < ends_before || end > starts_after {
                        continue;
                    }
                }
                // A phase, not a constraint: the solver still tries the
                // others; it is what it tries first.
                let phase = match hint {
                    Some(h) if h[r as usize] == s => lbool::TRUE,
                    Some(_) => lbool::FALSE,
                    None => lbool::UNDEF,
                };
                x[r as usize].push((s, Lit::new(solver.new_var(phase, true), true)));
            }
            if x[r as usize].is_empty() {
                impossible = true;
            }
        }
        let mut at: Vec<Vec<(u32, Lit)>> = vec![Vec::new(); m.slot_call.len()];
        for (r, list) in x.iter().enumerate() {
            if list.is_empty() {
                continue;
            }
            let lits: Vec<Lit> = list.iter().map(|&(_, l)| l).collect();
            solver.add_clause_reuse(&mut lits.clone());
            at_most_one(&mut solver, &lits);
            for &(s, l) in list {
                at[s as usize].push((r as u32, l));
            }
        }
        for &s in &free_slots {
            let lits: Vec<Lit> = at[s as usize].iter().map(|&(_, l)| l).collect();
            at_most_one(&mut solver, &lits);
            let must = m.mandatory(s)
                && match outside {
                    Outside::Fixed(_) => fixed[s as usize] == NONE,
                    Outside::Dropped => m.cands[s as usize].iter().all(|&r| free[r as usize]),
                };
            if must {
                if lits.is_empty() {
                    impossible = true;
                }
                solver.add_clause_reuse(&mut lits.clone());
            }
        }
        let ends = |list: &[(u32, Lit)]| -> Vec<(u64, Lit)> {
            list.iter()
                .filter(|&&(r, _)| timed(r))
                .map(|&(r, l)| (m.end[r as usize], l))
                .collect()
        };
        // Dependencies between free records.
        for &s in &free_slots {
            for p in m.preds(s) {
                let members = ends(&at[p as usize]);
                if members.is_empty() || at[s as usize].is_empty() {
                    continue;
                }
                let ladder = Ladder::new(&mut solver, &members);
                for &(r, l) in &at[s as usize] {
                    if let Some(late) = ladder.after(m.start[r as usize]).filter(|_| timed(r)) {
                        solver.add_clause_reuse(&mut vec![!l, !late]);
                    }
                }
            }
        }
        // Stream order between free records of two calls on a stream.
        let mut calls: Vec<u32> = free_slots
            .iter()
            .map(|&s| m.slot_call[s as usize])
            .collect();
        calls.dedup();
        let mut by_stream: std::collections::BTreeMap<u32, Vec<u32>> = Default::default();
        for &c in &calls {
            if let Some((si, _, _)) = m.plan.on_stream[c as usize] {
                by_stream.entry(si).or_default().push(c);
            }
        }
        for members in by_stream.values() {
            let of_call = |c: u32| -> Vec<(u32, Lit)> {
                m.call_slots(c)
                    .flat_map(|s| at[s as usize].iter().copied())
                    .collect()
            };
            let first_start: Vec<u64> = members
                .iter()
                .map(|&c| {
                    of_call(c)
                        .iter()
                        .filter(|&&(r, _)| timed(r))
                        .map(|&(r, _)| m.start[r as usize])
                        .min()
                        .unwrap_or(u64::MAX)
                })
                .collect();
            for &before in members {
                let work = ends(&of_call(before));
                let Some(&latest) = work.iter().map(|(e, _)| e).max() else {
                    continue;
                };
                let mut ladder: Option<Ladder> = None;
                for (j, &after) in members.iter().enumerate() {
                    if m.exit[before as usize] >= m.enter[after as usize]
                        || latest <= first_start[j]
                    {
                        continue;
                    }
                    let ladder = ladder.get_or_insert_with(|| Ladder::new(&mut solver, &work));
                    for (r, l) in of_call(after) {
                        if let Some(late) = ladder.after(m.start[r as usize]).filter(|_| timed(r)) {
                            solver.add_clause_reuse(&mut vec![!l, !late]);
                        }
                    }
                }
            }
        }
        Instance {
            solver,
            x,
            impossible,
        }
    }

    /// The literals that keep record `r` off every slot `excluded` names.
    pub fn off(&self, r: u32, excluded: impl Fn(u32) -> bool) -> Vec<Lit> {
        self.x[r as usize]
            .iter()
            .filter(|&&(s, _)| excluded(s))
            .map(|&(_, l)| !l)
            .collect()
    }

    /// Solves under `assumptions` within `limit` checks: `Some(true)` with
    /// an assignment, `Some(false)` proven impossible, `None` out of budget.
    pub fn solve(&mut self, assumptions: &[Lit], limit: u64) -> Option<bool> {
        if self.impossible {
            return Some(false);
        }
        self.solver.cb().checks.set(0);
        self.solver.cb().limit.set(limit);
        match self.solver.solve_limited(assumptions) {
            v if v == lbool::TRUE => Some(true),
            v if v == lbool::FALSE => Some(false),
            _ => None,
        }
    }

    /// The checks the last solve spent.
    pub fn spent(&self) -> u64 {
        self.solver.cb().checks.get()
    }

    /// After a solve that found one: the free records' slots, written
    /// into `assignment`.
    pub fn write_into(&self, assignment: &mut [u32]) {
        for (r, list) in self.x.iter().enumerate() {
            if let Some(&(s, _)) = list
                .iter()
                .find(|&&(_, l)| self.solver.value_lit(l) == lbool::TRUE)
            {
                assignment[r] = s;
            }
        }
    }
}

/// Per stream a free record may run on: the latest end of the fixed work
/// of the calls before each place and the earliest start of that after.
struct StreamBounds {
    /// Per stream (by the plan's index): prefix maxima by EXIT, suffix
    /// minima by ENTER; empty for streams no free record touches.
    ends: Vec<Vec<u64>>,
    starts: Vec<Vec<u64>>,
}

impl StreamBounds {
    fn new(m: &Model<'_>, free: &[bool], outside: Outside<'_>, free_slots: &[u32]) -> StreamBounds {
        let streams = m.by_exit.len();
        let mut out = StreamBounds {
            ends: vec![Vec::new(); streams],
            starts: vec![Vec::new(); streams],
        };
        let Outside::Fixed(base) = outside else {
            return out;
        };
        let mut touched = vec![false; streams];
        for &s in free_slots {
            if let Some((si, _, _)) = m.plan.on_stream[m.slot_call[s as usize] as usize] {
                touched[si as usize] = true;
            }
        }
        let fixed_span = |c: u32| -> (u64, u64) {
            let (mut hi, mut lo) = (0u64, u64::MAX);
            for s in m.call_slots(c) {
                for &r in &m.cands[s as usize] {
                    if !free[r as usize] && base[r as usize] == s && m.timed[r as usize] {
                        hi = hi.max(m.end[r as usize]);
                        lo = lo.min(m.start[r as usize]);
                    }
                }
            }
            (hi, lo)
        };
        for si in (0..streams).filter(|&si| touched[si]) {
            let mut hi = 0u64;
            out.ends[si] = std::iter::once(0)
                .chain(m.by_exit[si].iter().map(|&c| {
                    hi = hi.max(fixed_span(c).0);
                    hi
                }))
                .collect();
            let mut lo = u64::MAX;
            let mut suffix: Vec<u64> = m.by_enter[si]
                .iter()
                .rev()
                .map(|&c| {
                    lo = lo.min(fixed_span(c).1);
                    lo
                })
                .collect();
            suffix.reverse();
            suffix.push(u64::MAX);
            out.starts[si] = suffix;
        }
        out
    }

    /// For call `c`: the latest end of fixed work enqueued before it on
    /// its stream, and the earliest start of fixed work enqueued after.
    fn around(&self, m: &Model<'_>, c: u32) -> (u64, u64) {
        match m.stream_sides(c) {
            Some((si, before, after)) if !self.ends[si].is_empty() => {
                (self.ends[si][before], self.starts[si][after])
            }
            _ => (0, u64::MAX),
        }
    }
}
