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
//! and take no lock). The links are a log of entries in shards, one per
//! thread (a `Vec` under a lock only that thread takes while a window is
//! open), appended at API calls and read at finalisation, where a sorted
//! copy answers the join ([`LinkTable`]). Why not a concurrent map: an
//! eager loop records an entry per HIP call, and a map kept each in a
//! bucket of 40 bytes at a load of a half to seven eighths, hashed and
//! locked on every call; the log keeps 40 bytes and appends.
//!
//! Bounds: entries are recorded only while a window is open, tagged with
//! that window; they are dropped when neither that window nor the one opened
//! right after it is pending any more. The second window is kept because work
//! launched near a stop may start after it, inside the next window.

use std::cell::RefCell;

use std::cell::Cell;
use std::sync::{Mutex, MutexGuard, PoisonError};

use crate::staging::thread_shard;
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

    /// Takes the values `later` set, keeping the rest.
    fn merge(&mut self, later: &Entry) {
        let (mut link, set) = (self.link(), later.link());
        link.stream = set.stream.or(link.stream);
        link.external_id_default = set.external_id_default.or(link.external_id_default);
        link.external_id_user = set.external_id_user.or(link.external_id_user);
        self.set_link(link);
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

/// Shards of the link log: more than the threads that usually launch, so
/// two rarely share one.
const SHARDS: usize = 16;

/// How far back in its shard a thread looks for the entry of the call it
/// records for: the call in progress is its last, or one of the last few
/// when calls nest (a HIP call made from inside another).
const LOOK_BACK: usize = 4;

/// Correlation id -> stream and external ids, for the finalisation join.
#[derive(Debug)]
pub(crate) struct CorrelationLinks {
    shards: Box<[Mutex<Log>]>,
}

/// One shard's entries, by correlation id, in the order they were recorded.
type Log = Vec<(u64, Entry)>;

impl Default for CorrelationLinks {
    fn default() -> Self {
        Self {
            shards: (0..SHARDS).map(|_| Mutex::default()).collect(),
        }
    }
}

impl CorrelationLinks {
    fn shard(&self, index: usize) -> MutexGuard<'_, Log> {
        self.shards[index]
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
    }

    /// Changes this thread's entry for `correlation_id`, or appends one. An
    /// entry another thread appended for the same id is merged with it in
    /// [`CorrelationLinks::table`].
    fn update(&self, correlation_id: u64, window: WindowId, change: impl FnOnce(&mut Link)) {
        let mut shard = self.shard(thread_shard(SHARDS));
        let back = shard
            .iter()
            .rev()
            .take(LOOK_BACK)
            .position(|&(c, _)| c == correlation_id);
        let at = match back {
            Some(back) => shard.len() - 1 - back,
            None => {
                shard.push((correlation_id, Entry::new(window)));
                shard.len() - 1
            }
        };
        let entry = &mut shard[at].1;
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

    /// Every link recorded so far, one per correlation id, for a window's
    /// join. A thread records its calls in the order of their ids, so the
    /// shards are sorted runs and sorting their concatenation merges them.
    pub(crate) fn table(&self) -> LinkTable {
        let mut entries = Vec::with_capacity(self.len());
        for index in 0..self.shards.len() {
            entries.extend_from_slice(&self.shard(index));
        }
        entries.sort_by_key(|&(c, _)| c);
        // `dedup_by` hands the later of two equal ids first.
        entries.dedup_by(|(c, later), (kept_c, kept)| {
            let same = c == kept_c;
            if same {
                kept.merge(later);
            }
            same
        });
        LinkTable {
            entries,
            next: Cell::new(0),
        }
    }

    /// Drops every entry whose window is finished with: neither it nor the
    /// window opened after it is still pending.
    pub(crate) fn forget_finished(&self, pending: &[WindowId]) {
        for index in 0..self.shards.len() {
            let mut shard = self.shard(index);
            shard.retain(|(_, entry)| {
                let window = entry.window();
                let next = WindowId(window.0 + 1);
                pending.contains(&window) || pending.contains(&next)
            });
            shard.shrink_to_fit();
        }
    }

    /// Entries held (a correlation id recorded from two threads counts
    /// twice).
    pub(crate) fn len(&self) -> usize {
        (0..self.shards.len()).map(|i| self.shard(i).len()).sum()
    }
}

/// The links sorted by correlation id, looked up in about the order they
/// were recorded: a window's rows come sorted by start, and so mostly by
/// correlation id.
#[derive(Debug)]
pub(crate) struct LinkTable {
    entries: Vec<(u64, Entry)>,
    /// Where the last lookup's entry ended: the next one is mostly at or
    /// just after it.
    next: Cell<usize>,
}

/// Entries tried from the last lookup's before searching the whole table.
const LOOK_AHEAD: usize = 4;

impl LinkTable {
    pub(crate) fn get(&self, correlation_id: u64) -> Link {
        let next = self.next.get();
        let mut ahead = self.entries.iter().skip(next).take(LOOK_AHEAD);
        let found = match ahead.position(|&(c, _)| c == correlation_id) {
            Some(offset) => Some(next + offset),
            None => self
                .entries
                .binary_search_by_key(&correlation_id, |&(c, _)| c)
                .ok(),
        };
        match found {
            Some(i) => {
                self.next.set(i + 1);
                self.entries[i].1.link()
            }
            None => Link::default(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;

    /// Numbers below `m`: the store's own hasher over a counter from `seed`.
    fn below(seed: u64) -> impl FnMut(u64) -> u64 {
        use std::hash::Hasher;
        let mut n = seed;
        move |m| {
            n += 1;
            let mut hasher = crate::hash::CorrelationHasher::default();
            hasher.write_u64(n);
            hasher.finish() % m
        }
    }

    #[test]
    fn the_table_answers_as_a_map_of_every_update_would() {
        let mut next = below(17);
        for round in 0..40 {
            let links = CorrelationLinks::default();
            let window = WindowId(1);
            // Four threads, each recording its own calls in id order, some
            // calls nested (an inner call's entry between the outer call's
            // external ids and its stream), some recorded twice.
            let threads = 4;
            let calls: Vec<Vec<(u64, u8, u64)>> = (0..threads)
                .map(|t| {
                    let mut out = Vec::new();
                    let mut id = t;
                    for _ in 0..next(60) {
                        id += threads * (1 + next(3));
                        let (a, b) = (next(100), next(100));
                        match next(4) {
                            0 => out.push((id, 0, a)),
                            1 => out.push((id, 1, a)),
                            2 => out.extend([(id, 0, a), (id, 1, b)]),
                            _ => {
                                let inner = id + threads;
                                out.extend([(id, 0, a), (inner, 1, b), (id, 1, a + b)]);
                                id = inner;
                            }
                        }
                    }
                    out
                })
                .collect();
            std::thread::scope(|scope| {
                for thread_calls in &calls {
                    let links = &links;
                    scope.spawn(move || {
                        for &(id, what, value) in thread_calls {
                            match what {
                                0 => links.record_external(id, window, (Some(value), None)),
                                _ => links.record_stream(id, window, value),
                            }
                        }
                    });
                }
            });
            let mut want: HashMap<u64, Link> = HashMap::new();
            for &(id, what, value) in calls.iter().flatten() {
                let link = want.entry(id).or_default();
                match what {
                    0 => (link.external_id_default, link.external_id_user) = (Some(value), None),
                    _ => link.stream = Some(value),
                }
            }
            let table = links.table();
            let mut ids: Vec<u64> = want.keys().copied().collect();
            ids.sort_unstable();
            if round % 2 == 1 {
                // Out of order, and ids never recorded.
                ids.reverse();
                ids.extend([0, u64::MAX, 5 * 4 + 3]);
            }
            for id in ids {
                assert_eq!(
                    table.get(id),
                    want.get(&id).copied().unwrap_or_default(),
                    "id {id}"
                );
            }
        }
    }

    #[test]
    fn an_id_recorded_from_two_threads_keeps_what_each_set() {
        let links = CorrelationLinks::default();
        let window = WindowId(1);
        links.record_external(9, window, (Some(1), Some(2)));
        std::thread::scope(|scope| {
            scope.spawn(|| links.record_stream(9, window, 7));
        });
        let link = links.table().get(9);
        assert_eq!(
            link,
            Link {
                stream: Some(7),
                external_id_default: Some(1),
                external_id_user: Some(2),
            }
        );
    }

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
