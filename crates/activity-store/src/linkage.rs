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

/// One correlation id's window and link, 32 bytes where the plain pair is
/// 56: the table holds an entry per HIP call of a window (a million in an
/// eager one), so the three `Option`s' tags ride in the window id's top
/// bits, which no window id reaches.
#[derive(Clone, Copy, Debug)]
struct Entry {
    /// The window id, and above [`Entry::ID_BITS`] which values are set.
    window_and_set: u64,
    stream: u64,
    external_id_default: u64,
    external_id_user: u64,
}

impl Entry {
    const ID_BITS: u32 = 61;
    const STREAM: u64 = 1 << 61;
    const DEFAULT: u64 = 1 << 62;
    const USER: u64 = 1 << 63;

    fn new(window: WindowId) -> Entry {
        assert!(window.0 >> Self::ID_BITS == 0, "window ids stay below 2^61");
        Entry {
            window_and_set: window.0,
            stream: 0,
            external_id_default: 0,
            external_id_user: 0,
        }
    }

    fn window(&self) -> WindowId {
        WindowId(self.window_and_set & ((1 << Self::ID_BITS) - 1))
    }

    fn link(&self) -> Link {
        let set = |flag: u64, value: u64| (self.window_and_set & flag != 0).then_some(value);
        Link {
            stream: set(Self::STREAM, self.stream),
            external_id_default: set(Self::DEFAULT, self.external_id_default),
            external_id_user: set(Self::USER, self.external_id_user),
        }
    }

    fn set_link(&mut self, link: Link) {
        let mut window_and_set = self.window().0;
        let mut put = |flag: u64, slot: &mut u64, value: Option<u64>| {
            *slot = value.unwrap_or(0);
            if value.is_some() {
                window_and_set |= flag;
            }
        };
        put(Self::STREAM, &mut self.stream, link.stream);
        put(
            Self::DEFAULT,
            &mut self.external_id_default,
            link.external_id_default,
        );
        put(
            Self::USER,
            &mut self.external_id_user,
            link.external_id_user,
        );
        self.window_and_set = window_and_set;
    }
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
        let mut entry = self
            .entries
            .entry(correlation_id)
            .or_insert_with(|| Entry::new(window));
        let mut link = entry.link();
        change(&mut link);
        entry.set_link(link);
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
            .map_or_else(Link::default, |entry| entry.link())
    }

    /// Drops every entry whose window is finished with: neither it nor the
    /// window opened after it is still pending.
    pub(crate) fn forget_finished(&self, pending: &[WindowId]) {
        self.entries.retain(|_, entry| {
            let window = entry.window();
            let next = WindowId(window.0 + 1);
            pending.contains(&window) || pending.contains(&next)
        });
        self.entries.shrink_to_fit();
    }

    pub(crate) fn len(&self) -> usize {
        self.entries.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_entry_keeps_its_window_and_every_link_it_is_given() {
        assert_eq!(std::mem::size_of::<Entry>(), 32);
        let values = [None, Some(0), Some(7), Some(u64::MAX)];
        for window in [1, 2, (1 << Entry::ID_BITS) - 1] {
            for stream in values {
                for external_id_default in values {
                    for external_id_user in values {
                        let link = Link {
                            stream,
                            external_id_default,
                            external_id_user,
                        };
                        let mut entry = Entry::new(WindowId(window));
                        entry.set_link(Link {
                            stream: Some(3),
                            external_id_default: Some(4),
                            external_id_user: Some(5),
                        });
                        entry.set_link(link);
                        assert_eq!((entry.window(), entry.link()), (WindowId(window), link));
                    }
                }
            }
        }
    }
}
