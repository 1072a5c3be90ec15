//! Linking GPU records to the CPU ops that caused them, as kineto does.
//!
//! PyTorch pushes an external correlation id (its op's id) before running an
//! op and pops it after, on the op's thread, in two domains: Default (every
//! op) and User (record_function ranges). The tool calls
//! `capture_for_api_call` at each HIP API call's ENTER, which copies the
//! current tops, keyed by the call's correlation id; every kernel, copy and
//! API row carrying that correlation id is given those ids at finalisation.
//! A graph replay's dispatches all carry the hipGraphLaunch call's
//! correlation id, so they all link to the op that launched the graph. The
//! same table carries the stream of each correlation id, which the tool
//! learns from HIP_STREAM SET callbacks (dispatch records have no stream).
//!
//! Locking: the id stacks are thread-local (push and pop run on every CPU op
//! and take no lock). The correlation table is a sharded concurrent map
//! (`DashMap`), written from application threads at API calls and read at
//! finalisation.
//!
//! Bounds: entries are recorded only while a window is open, tagged with
//! that window; they are dropped when neither that window nor the one opened
//! right after it is pending any more. The second window is kept because work
//! launched near a stop may start after it, inside the next window.

use std::cell::RefCell;

use dashmap::DashMap;

use crate::hash::BuildCorrelationHasher;
use crate::windows::WindowId;

/// The two external correlation domains kineto keeps per thread.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ExternalDomain {
    /// One id per profiled CPU op.
    Default,
    /// User annotations (record_function ranges).
    User,
}

/// What is known about one correlation id's CPU side.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct Link {
    pub(crate) stream: Option<u64>,
    pub(crate) external_id_default: Option<u64>,
    pub(crate) external_id_user: Option<u64>,
}

#[derive(Clone, Copy, Debug)]
struct Entry {
    window: WindowId,
    link: Link,
}

/// This thread's external id stacks for one store.
#[derive(Debug)]
struct ThreadStacks {
    store: u64,
    default: Vec<u64>,
    user: Vec<u64>,
}

impl ThreadStacks {
    fn stack(&mut self, domain: ExternalDomain) -> &mut Vec<u64> {
        match domain {
            ExternalDomain::Default => &mut self.default,
            ExternalDomain::User => &mut self.user,
        }
    }
}

thread_local! {
    /// Stacks per store, so that two stores in one process (tests) never
    /// see each other's ids. Almost always one entry; a slot is removed when
    /// both its stacks are empty, so a dropped store leaves nothing behind
    /// on a thread that balanced its pushes.
    static EXTERNAL_STACKS: RefCell<Vec<ThreadStacks>> = const { RefCell::new(Vec::new()) };
}

pub(crate) fn push_external(store: u64, domain: ExternalDomain, id: u64) {
    EXTERNAL_STACKS.with_borrow_mut(|all| {
        let slot = match all.iter().position(|s| s.store == store) {
            Some(index) => &mut all[index],
            None => {
                all.push(ThreadStacks {
                    store,
                    default: Vec::new(),
                    user: Vec::new(),
                });
                let last = all.len() - 1;
                &mut all[last]
            }
        };
        slot.stack(domain).push(id);
    });
}

pub(crate) fn pop_external(store: u64, domain: ExternalDomain) -> Option<u64> {
    EXTERNAL_STACKS.with_borrow_mut(|all| {
        let index = all.iter().position(|s| s.store == store)?;
        let popped = all[index].stack(domain).pop();
        if all[index].default.is_empty() && all[index].user.is_empty() {
            all.swap_remove(index);
        }
        popped
    })
}

/// The tops of this thread's two stacks, `(default, user)`.
pub(crate) fn current_external(store: u64) -> (Option<u64>, Option<u64>) {
    EXTERNAL_STACKS.with_borrow(|all| {
        all.iter()
            .find(|s| s.store == store)
            .map_or((None, None), |s| {
                (s.default.last().copied(), s.user.last().copied())
            })
    })
}

/// Correlation id -> stream and external ids, for the finalisation join.
#[derive(Debug, Default)]
pub(crate) struct CorrelationLinks {
    entries: DashMap<u64, Entry, BuildCorrelationHasher>,
}

impl CorrelationLinks {
    fn update(&self, correlation_id: u64, window: WindowId, change: impl FnOnce(&mut Link)) {
        let mut entry = self.entries.entry(correlation_id).or_insert(Entry {
            window,
            link: Link::default(),
        });
        change(&mut entry.link);
    }

    pub(crate) fn record_external(
        &self,
        correlation_id: u64,
        window: WindowId,
        (external_id_default, external_id_user): (Option<u64>, Option<u64>),
    ) {
        self.update(correlation_id, window, |link| {
            link.external_id_default = external_id_default;
            link.external_id_user = external_id_user;
        });
    }

    pub(crate) fn record_stream(&self, correlation_id: u64, window: WindowId, stream: u64) {
        self.update(correlation_id, window, |link| link.stream = Some(stream));
    }

    pub(crate) fn get(&self, correlation_id: u64) -> Link {
        self.entries
            .get(&correlation_id)
            .map_or_else(Link::default, |entry| entry.link)
    }

    /// Drops every entry whose window is finished with: neither it nor the
    /// window opened after it is still pending.
    pub(crate) fn forget_finished(&self, pending: &[WindowId]) {
        self.entries.retain(|_, entry| {
            let next = WindowId(entry.window.0 + 1);
            pending.contains(&entry.window) || pending.contains(&next)
        });
        self.entries.shrink_to_fit();
    }

    pub(crate) fn len(&self) -> usize {
        self.entries.len()
    }
}
