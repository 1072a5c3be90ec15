//! Which threads are inside a packet-writing HIP call when a trace window
//! opens.
//!
//! Why: a record can be processed by a call that overlaps the call which
//! wrote its packet, or by a call that overlaps a third one that overlaps
//! both (graph-attribution's two-hop rule). A call already in flight when
//! the window opened is not in the window's records, so the attribution
//! rules must know it was there, and when it ended, to withhold what it may
//! have touched. The callback context that feeds this runs for the whole
//! session, not only inside windows.
//!
//! Cost: per packet-writing call, two relaxed atomic stores to this
//! thread's slot (and the edges' lock at EXIT only for a call that was in
//! flight when a window opened); a new thread takes the registry lock once.

use graph_attribution::Span;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

/// One thread's current call: its ENTER time, 0 when it is in none.
#[derive(Debug)]
struct Slot {
    thread_id: u64,
    entered_ns: AtomicU64,
}

/// One window's opening edge: the calls in flight when it opened, closed as
/// their EXIT arrives.
#[derive(Debug)]
struct Edge {
    opened_ns: u64,
    spans: Vec<Span>,
}

#[derive(Debug, Default)]
pub struct Presence {
    slots: Mutex<Vec<Arc<Slot>>>,
    /// Windows opened and not yet finished (a window can be finished after
    /// the next one opened).
    edges: Mutex<Vec<Edge>>,
    /// When the last window opened: a call that entered after it is in no
    /// window's opening edge, so its EXIT takes no lock.
    last_opened_ns: AtomicU64,
}

thread_local! {
    static SLOT: std::cell::OnceCell<Arc<Slot>> = const { std::cell::OnceCell::new() };
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

impl Presence {
    /// `f` of this thread's slot (registered on its first call).
    fn with_slot<R>(&self, thread_id: u64, f: impl FnOnce(&Slot) -> R) -> Option<R> {
        SLOT.try_with(|cell| {
            f(cell.get_or_init(|| {
                let slot = Arc::new(Slot {
                    thread_id,
                    entered_ns: AtomicU64::new(0),
                });
                lock(&self.slots).push(slot.clone());
                slot
            }))
        })
        .ok()
    }

    /// A packet-writing call entered on this thread at `now_ns`.
    pub fn entered(&self, thread_id: u64, now_ns: u64) {
        self.with_slot(thread_id, |slot| {
            slot.entered_ns.store(now_ns.max(1), Ordering::Relaxed)
        });
    }

    /// That call exited at `now_ns`: if it was in flight when the open window
    /// opened, its span is complete.
    pub fn exited(&self, thread_id: u64, now_ns: u64) {
        // SeqCst here and where a window opens: if that opening read this
        // call as in flight, this load sees when it opened (x86 pays
        // nothing more for it: the swap is a locked instruction anyway).
        let entered = self
            .with_slot(thread_id, |slot| slot.entered_ns.swap(0, Ordering::SeqCst))
            .unwrap_or(0);
        if entered == 0 || entered >= self.last_opened_ns.load(Ordering::SeqCst) {
            return;
        }
        for edge in lock(&self.edges).iter_mut() {
            if entered < edge.opened_ns {
                if let Some(span) = edge.spans.iter_mut().find(|s| {
                    s.thread_id == thread_id && s.enter_ns == entered && s.exit_ns.is_none()
                }) {
                    span.exit_ns = Some(now_ns);
                }
            }
        }
    }

    /// A window opens at `now_ns`: remember every call in flight.
    pub fn window_opened(&self, now_ns: u64) {
        // Before the calls in flight are read: a call that exits after
        // that read then looks for the edge.
        self.last_opened_ns.fetch_max(now_ns, Ordering::SeqCst);
        let spans = self.in_flight();
        lock(&self.edges).push(Edge {
            opened_ns: now_ns,
            spans,
        });
    }

    /// Packet-writing calls in flight now (the window being finished has no
    /// record of them yet).
    pub fn in_flight(&self) -> Vec<Span> {
        lock(&self.slots)
            .iter()
            .filter_map(|slot| match slot.entered_ns.load(Ordering::SeqCst) {
                0 => None,
                entered => Some(Span {
                    thread_id: slot.thread_id,
                    enter_ns: entered,
                    exit_ns: None,
                }),
            })
            .collect()
    }

    /// The calls that were in flight when the window opened at `opened_ns`
    /// (an exit of `None`: still in flight now); forgets that window.
    pub fn take_open_edge(&self, opened_ns: u64) -> Vec<Span> {
        let mut edges = lock(&self.edges);
        match edges.iter().position(|e| e.opened_ns == opened_ns) {
            Some(i) => edges.swap_remove(i).spans,
            None => Vec::new(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn calls_in_flight_at_open_are_reported_with_their_exit() {
        let p = Arc::new(Presence::default());
        let other = {
            let p = p.clone();
            std::thread::spawn(move || p.entered(2, 50))
        };
        other.join().unwrap();
        p.entered(1, 90);
        p.exited(1, 95); // ended before the window
        p.window_opened(100);
        let spans = p.take_open_edge(100);
        assert_eq!(
            spans,
            vec![Span {
                thread_id: 2,
                enter_ns: 50,
                exit_ns: None
            }]
        );
    }

    #[test]
    fn an_exit_after_the_open_completes_the_span() {
        let p = Presence::default();
        p.entered(7, 10);
        p.window_opened(20);
        p.exited(7, 30);
        p.entered(7, 40); // a call inside the window is not an edge
        p.window_opened(50); // the next window, opened before this one is finished
        p.exited(7, 45);
        assert_eq!(
            p.take_open_edge(20),
            vec![Span {
                thread_id: 7,
                enter_ns: 10,
                exit_ns: Some(30)
            }]
        );
        assert_eq!(
            p.take_open_edge(50),
            vec![Span {
                thread_id: 7,
                enter_ns: 40,
                exit_ns: Some(45)
            }]
        );
        assert_eq!(p.take_open_edge(50), Vec::new(), "taken once");
    }
}
