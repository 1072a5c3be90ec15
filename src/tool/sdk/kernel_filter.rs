//! Which dispatches collect counters: rocprofv3's kernel filters.
//! `KINETO_ROCM_KERNEL_INCLUDE_REGEX` and `KINETO_ROCM_KERNEL_EXCLUDE_REGEX`
//! select kernels by demangled name; `KINETO_ROCM_KERNEL_ITERATION_RANGE`
//! (rocprofv3's `[1-3, 7]` grammar) keeps only those launches of each
//! selected kernel, counted from 1 per kernel in the order the SDK asks
//! (rocprofiler-sdk-tool tool.cpp `is_targeted_kernel`). The CLI writes
//! them from a job file's run options.
//!
//! The filter decides once per logical dispatch, because the launch count
//! is state: kernel replay asks it at CONFIG (once for all the dispatch's
//! passes, seed 004), application mode at the counting or thread-trace
//! service's dispatch callback; a second service asking about the same
//! dispatch on the same thread (the SDK calls them one after the other for
//! a submission) gets the first answer, so the count advances once.
use super::tool;
use crate::error::ToolError;
use crate::tool::finish::timeline::demangle;
use counter_jobs::IterationRange;
use dashmap::DashMap;
use once_cell::sync::OnceCell;
use regex::Regex;
use std::cell::Cell;

pub const INCLUDE_ENV: &str = "KINETO_ROCM_KERNEL_INCLUDE_REGEX";
pub const EXCLUDE_ENV: &str = "KINETO_ROCM_KERNEL_EXCLUDE_REGEX";
pub const ITERATION_ENV: &str = "KINETO_ROCM_KERNEL_ITERATION_RANGE";

pub struct KernelFilter {
    include: Option<Regex>,
    exclude: Option<Regex>,
    iterations: Option<IterationRange>,
    /// Kernel id -> selected by name (demangled once per kernel).
    by_name: DashMap<u64, bool>,
    /// Kernel id -> launches the filter has seen of it.
    launches: DashMap<u64, u64>,
}

/// `None` inside: no filter, every dispatch is selected.
static FILTER: OnceCell<Option<KernelFilter>> = OnceCell::new();

thread_local! {
    /// The last dispatch this thread decided: (dispatch id, selected).
    static DECIDED: Cell<Option<(u64, bool)>> = const { Cell::new(None) };
}

fn regex_from_env(name: &str) -> Result<Option<Regex>, ToolError> {
    match std::env::var(name) {
        Ok(v) if !v.is_empty() => Regex::new(&v).map(Some).map_err(|e| {
            ToolError::Unavailable(format!("{name}={v:?} is not a regular expression: {e}"))
        }),
        _ => Ok(None),
    }
}

/// Reads the filter from the environment, once; a bad value is an error
/// naming the variable.
pub fn configure() -> Result<(), ToolError> {
    let iterations = match std::env::var(ITERATION_ENV) {
        Ok(v) => IterationRange::parse([v.as_str()])
            .map_err(|e| ToolError::Unavailable(format!("{ITERATION_ENV}: {e}")))?,
        Err(_) => None,
    };
    let filter = KernelFilter {
        include: regex_from_env(INCLUDE_ENV)?,
        exclude: regex_from_env(EXCLUDE_ENV)?,
        iterations,
        by_name: DashMap::new(),
        launches: DashMap::new(),
    };
    let any = filter.include.is_some() || filter.exclude.is_some() || filter.iterations.is_some();
    if let Some(r) = &filter.iterations {
        log::info!("kineto-rocm: counters on launches {r} of each selected kernel");
    }
    let _ = FILTER.set(any.then_some(filter));
    Ok(())
}

impl KernelFilter {
    fn by_name(&self, kernel_id: u64) -> bool {
        if self.include.is_none() && self.exclude.is_none() {
            return true;
        }
        if let Some(known) = self.by_name.get(&kernel_id) {
            return *known;
        }
        // A kernel whose symbol is not known yet is not selected, and not
        // remembered: its code object may register later.
        let Some(symbol) = tool::get().and_then(|t| t.collector.kernel_symbol(kernel_id)) else {
            return false;
        };
        let name = demangle(&symbol);
        let selected = self.include.as_ref().is_none_or(|r| r.is_match(&name))
            && !self.exclude.as_ref().is_some_and(|r| r.is_match(&name));
        self.by_name.insert(kernel_id, selected);
        selected
    }

    fn selects(&self, kernel_id: u64) -> bool {
        if !self.by_name(kernel_id) {
            return false;
        }
        let Some(range) = &self.iterations else {
            return true;
        };
        let launch = {
            let mut seen = self.launches.entry(kernel_id).or_insert(0);
            *seen += 1;
            *seen
        };
        range.contains(launch)
    }
}

/// Does logical dispatch `dispatch_id` of `kernel_id` collect? The first
/// ask about a dispatch advances the kernel's launch count; asking again
/// about it on the same thread gives the same answer.
pub fn selects(kernel_id: u64, dispatch_id: u64) -> bool {
    match FILTER.get() {
        Some(Some(filter)) => decide(filter, kernel_id, dispatch_id),
        _ => true,
    }
}

fn decide(filter: &KernelFilter, kernel_id: u64, dispatch_id: u64) -> bool {
    if let Some((last, selected)) = DECIDED.with(Cell::get) {
        if last == dispatch_id {
            return selected;
        }
    }
    let selected = filter.selects(kernel_id);
    DECIDED.with(|d| d.set(Some((dispatch_id, selected))));
    selected
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_dispatch_advances_its_kernels_count_once_however_often_asked() {
        let filter = KernelFilter {
            include: None,
            exclude: None,
            iterations: IterationRange::parse(["[2-3]"]).unwrap(),
            by_name: DashMap::new(),
            launches: DashMap::new(),
        };
        // (kernel, dispatch): kernel 1's launches 1..4, kernel 2's 1..2,
        // interleaved; each dispatch asked twice (two services).
        let asks = [(1, 10), (2, 11), (1, 12), (1, 13), (2, 14), (1, 15)];
        let got: Vec<bool> = asks
            .iter()
            .map(|&(k, d)| {
                let first = decide(&filter, k, d);
                assert_eq!(decide(&filter, k, d), first, "dispatch {d} asked again");
                first
            })
            .collect();
        assert_eq!(got, [false, false, true, true, true, false]);
    }
}
