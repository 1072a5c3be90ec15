//! The first of the Perfetto writer's two passes over the events: which
//! lanes exist and what they are called, which slices must go on a lane's
//! extra sub-tracks, and which slice each flow-arrow end binds to.
//!
//! Why a pass of its own: Perfetto draws a slice from a BEGIN and an END
//! packet, pairs them per track by nesting after ordering packets by time
//! (ties kept in file order), and cannot show two slices of one track that
//! overlap without nesting; a chrome trace can (kineto's viewer stacks
//! them). Which slices clash is known only once every slice of a lane has
//! been seen, so the layout is decided first and the events are then
//! written in one go, in the order the JSON writer writes them.
use crate::output::chrome_trace::{CompleteEvent, FlowEnd};
use crate::output::pftrace::DEPENDENCY_FLOW_ID;
use crate::output::sink::TraceSink;
use crate::vocabulary as vocab;
use std::collections::{BTreeMap, HashMap};
use std::io;

/// A lane of the chrome trace: (pid, tid).
pub type LaneKey = (u64, u64);

/// One slice as the layout needs it; `gen` is its position among slices.
#[derive(Clone, Copy, Debug)]
struct Slice {
    lane: u32,
    gen: u32,
    start: u64,
    end: u64,
}

/// Each counter track's index in `counters`, by pid then counter name (looked
/// up by `&str`, no allocation per sample).
pub type CounterIndex = HashMap<u64, HashMap<String, u32>>;

/// A flow end, before it is bound.
#[derive(Clone, Copy, Debug)]
pub struct Flow {
    pub end: FlowEnd,
    pub id: u64,
    pub lane: LaneKey,
    pub ts_ns: u64,
    /// The last slice written on the same lane before this flow, if any.
    after_slice: Option<u32>,
}

/// Collects the layout while the events stream past (a [`TraceSink`]).
#[derive(Default)]
pub struct LayoutPass {
    lanes: Vec<LaneKey>,
    lane_index: HashMap<LaneKey, u32>,
    slices: Vec<Slice>,
    last_slice_on_lane: HashMap<u32, u32>,
    flows: Vec<Flow>,
    process_names: BTreeMap<u64, String>,
    lane_names: HashMap<LaneKey, String>,
    /// Counter tracks (pid, counter), in order of first sample.
    counters: Vec<(u64, String)>,
    counter_index: CounterIndex,
    first_counter_ts: Option<u64>,
}

impl LayoutPass {
    fn lane(&mut self, key: LaneKey) -> u32 {
        let next = self.lanes.len() as u32;
        *self.lane_index.entry(key).or_insert_with(|| {
            self.lanes.push(key);
            next
        })
    }
}

impl TraceSink for LayoutPass {
    fn complete(&mut self, event: &CompleteEvent) -> io::Result<()> {
        let lane = self.lane((event.pid, event.tid));
        let gen = u32::try_from(self.slices.len())
            .map_err(|_| io::Error::other("more than 2^32 slices in one trace"))?;
        self.slices.push(Slice {
            lane,
            gen,
            start: event.start_ns,
            end: event.end_ns.max(event.start_ns),
        });
        self.last_slice_on_lane.insert(lane, gen);
        Ok(())
    }

    fn flow(&mut self, end: FlowEnd, id: u64, pid: u64, tid: u64, ts_ns: u64) -> io::Result<()> {
        let lane = self.lane((pid, tid));
        let after_slice = self.last_slice_on_lane.get(&lane).copied();
        self.flows.push(Flow {
            end,
            id,
            lane: (pid, tid),
            ts_ns,
            after_slice,
        });
        Ok(())
    }

    /// Perfetto's flow ids carry no category: a graph dependency arrow's id
    /// is marked with `DEPENDENCY_FLOW_ID` so a reader tells it from `ac2g`.
    fn flow_of(
        &mut self,
        category: &str,
        end: FlowEnd,
        id: u64,
        pid: u64,
        tid: u64,
        ts_ns: u64,
    ) -> io::Result<()> {
        if category == vocab::DEPENDENCY_FLOW {
            if id & DEPENDENCY_FLOW_ID != 0 {
                return Err(io::Error::other(format!(
                    "graph dependency arrow id {id} reaches bit 63"
                )));
            }
            self.flow(end, id | DEPENDENCY_FLOW_ID, pid, tid, ts_ns)
        } else {
            self.flow(end, id, pid, tid, ts_ns)
        }
    }

    fn lane_name(&mut self, pid: u64, tid: Option<u64>, name: &str) -> io::Result<()> {
        match tid {
            None => {
                self.process_names.insert(pid, name.to_string());
            }
            Some(tid) => {
                self.lane((pid, tid));
                self.lane_names.insert((pid, tid), name.to_string());
            }
        }
        Ok(())
    }

    fn counter(&mut self, pid: u64, name: &str, ts_ns: u64, _: f64) -> io::Result<()> {
        let by_name = self.counter_index.entry(pid).or_default();
        if !by_name.contains_key(name) {
            by_name.insert(name.to_string(), self.counters.len() as u32);
            self.counters.push((pid, name.to_string()));
        }
        self.first_counter_ts = Some(self.first_counter_ts.map_or(ts_ns, |t| t.min(ts_ns)));
        Ok(())
    }
}

/// A lane and the sub-tracks its slices need.
pub struct LanePlan {
    pub key: LaneKey,
    pub name: Option<String>,
    /// 1 when its slices nest; more when some overlap.
    pub subtracks: u32,
}

/// What the writing pass needs.
pub struct Layout {
    pub lanes: Vec<LanePlan>,
    pub process_names: BTreeMap<u64, String>,
    /// Per slice (in order): its lane's index and its sub-track.
    pub placement: Vec<(u32, u32)>,
    /// Flow ends bound to a slice, by the slice's position.
    pub bound_flows: HashMap<u32, Vec<(FlowEnd, u64)>>,
    /// Flow ends no slice encloses: written as instants on their lane.
    pub unbound_flows: Vec<Flow>,
    /// The earliest timestamp of the trace (metadata is placed there).
    pub first_ts_ns: u64,
    /// Counter tracks (pid, counter), and each one's index.
    pub counters: Vec<(u64, String)>,
    pub counter_index: CounterIndex,
}

impl LayoutPass {
    pub fn finish(self) -> Layout {
        let mut by_lane: Vec<Vec<Slice>> = vec![Vec::new(); self.lanes.len()];
        for slice in &self.slices {
            by_lane[slice.lane as usize].push(*slice);
        }
        let mut placement: Vec<(u32, u32)> = self.slices.iter().map(|s| (s.lane, 0)).collect();
        let mut lanes = Vec::with_capacity(self.lanes.len());
        for (index, slices) in by_lane.iter_mut().enumerate() {
            slices.sort_unstable_by_key(|s| (s.start, std::cmp::Reverse(s.end), s.gen));
            let mut subtracks: Vec<SubTrack> = Vec::new();
            for slice in slices.iter() {
                let at = match subtracks.iter_mut().position(|t| t.admits(slice)) {
                    Some(at) => at,
                    None => {
                        subtracks.push(SubTrack::default());
                        subtracks.len() - 1
                    }
                };
                subtracks[at].push(slice);
                placement[slice.gen as usize].1 = at as u32;
            }
            let key = self.lanes[index];
            lanes.push(LanePlan {
                key,
                name: self.lane_names.get(&key).cloned(),
                subtracks: subtracks.len().max(1) as u32,
            });
        }
        let mut bound_flows: HashMap<u32, Vec<(FlowEnd, u64)>> = HashMap::new();
        let mut unbound_flows = Vec::new();
        for flow in self.flows {
            let lane = self.lane_index[&flow.lane];
            let encloses = |s: &Slice| s.start <= flow.ts_ns && flow.ts_ns <= s.end;
            let bound = flow
                .after_slice
                .map(|gen| self.slices[gen as usize])
                .filter(encloses)
                .or_else(|| innermost_enclosing(&by_lane[lane as usize], flow.ts_ns));
            match bound {
                Some(slice) => bound_flows
                    .entry(slice.gen)
                    .or_default()
                    .push((flow.end, flow.id)),
                None => unbound_flows.push(flow),
            }
        }
        let first_ts_ns = self
            .slices
            .iter()
            .map(|s| s.start)
            .chain(unbound_flows.iter().map(|f| f.ts_ns))
            .chain(self.first_counter_ts)
            .min()
            .unwrap_or(0);
        Layout {
            lanes,
            process_names: self.process_names,
            placement,
            bound_flows,
            unbound_flows,
            first_ts_ns,
            counters: self.counters,
            counter_index: self.counter_index,
        }
    }
}

/// The innermost slice of a lane (sorted by start, then longest first) that
/// encloses `ts`: the latest-starting one that is still open at `ts`.
fn innermost_enclosing(sorted: &[Slice], ts: u64) -> Option<Slice> {
    let upto = sorted.partition_point(|s| s.start <= ts);
    sorted[..upto].iter().rev().find(|s| s.end >= ts).copied()
}

/// One Perfetto track's worth of a lane: slices that pair up correctly.
///
/// Slices arrive sorted by start (longest first). `open` is the chain of
/// slices enclosing the current start, innermost last. A reader orders the
/// packets by time and keeps file order on ties, and each slice's BEGIN and
/// END are written together in slice order (`gen`), so besides nesting,
/// shared endpoints need the right slice order: a slice that ends where the
/// next starts must come first; of two sharing a start the outer first; of
/// two sharing an end the inner first.
#[derive(Default)]
struct SubTrack {
    open: Vec<Slice>,
    /// The latest end passed, and the highest `gen` of the slices that
    /// ended exactly there.
    closed: Option<(u64, u32)>,
}

impl SubTrack {
    fn admits(&mut self, slice: &Slice) -> bool {
        while let Some(top) = self.open.last().copied() {
            if top.end > slice.start {
                break;
            }
            self.open.pop();
            self.closed = match self.closed {
                Some((end, gen)) if end == top.end => Some((end, gen.max(top.gen))),
                _ => Some((top.end, top.gen)),
            };
        }
        if let Some((end, gen)) = self.closed {
            if end == slice.start && gen > slice.gen {
                return false;
            }
        }
        let Some(top) = self.open.last() else {
            return true;
        };
        if slice.end > top.end {
            return false;
        }
        let identical = slice.start == top.start && slice.end == top.end;
        if identical {
            return true;
        }
        if slice.end == top.end && slice.gen > top.gen {
            return false;
        }
        !(slice.start == top.start && top.gen > slice.gen)
    }

    fn push(&mut self, slice: &Slice) {
        self.open.push(*slice);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Lays out slices given as (start, end) in writing order; returns each
    /// slice's sub-track.
    fn layout(slices: &[(u64, u64)]) -> Vec<u32> {
        let mut pass = LayoutPass::default();
        for &(start, end) in slices {
            pass.complete(&CompleteEvent {
                name: "s",
                category: "kernel",
                pid: 0,
                tid: 1,
                start_ns: start,
                end_ns: end,
                args: &[],
            })
            .unwrap();
        }
        pass.finish().placement.iter().map(|p| p.1).collect()
    }

    /// What a trace reader does with the packets: order (ts, file order),
    /// pair BEGIN/END per sub-track as a stack; returns (start, end) per slice.
    fn as_read(slices: &[(u64, u64)], tracks: &[u32]) -> Vec<(u64, u64)> {
        let mut packets: Vec<(u64, usize, u32, bool, usize)> = Vec::new();
        for (i, (&(s, e), &t)) in slices.iter().zip(tracks).enumerate() {
            packets.push((s, 2 * i, t, true, i));
            packets.push((e, 2 * i + 1, t, false, i));
        }
        packets.sort_by_key(|p| (p.0, p.1));
        let mut stacks: HashMap<u32, Vec<usize>> = HashMap::new();
        let mut out = vec![(0, 0); slices.len()];
        for (ts, _, track, begin, slice) in packets {
            let stack = stacks.entry(track).or_default();
            if begin {
                out[slice].0 = ts;
                stack.push(slice);
            } else {
                let closed = stack.pop().expect("an END without a BEGIN");
                out[closed].1 = ts;
            }
        }
        out
    }

    fn reads_back(slices: &[(u64, u64)]) -> Vec<u32> {
        let tracks = layout(slices);
        assert_eq!(as_read(slices, &tracks), slices, "tracks {tracks:?}");
        tracks
    }

    #[test]
    fn back_to_back_slices_share_a_track_whatever_their_order() {
        assert_eq!(reads_back(&[(0, 10), (10, 20), (20, 30)]), vec![0, 0, 0]);
        // Written latest first: each END meets the next BEGIN at the same
        // time in the wrong file order, so they cannot share a track.
        let tracks = reads_back(&[(20, 30), (10, 20), (0, 10)]);
        assert!(tracks.iter().any(|&t| t > 0), "{tracks:?}");
        assert_eq!(reads_back(&[(20, 30), (0, 10)]), vec![0, 0]);
    }

    #[test]
    fn nesting_shares_a_track_and_overlap_does_not() {
        assert_eq!(reads_back(&[(0, 100), (10, 20), (30, 40)]), vec![0, 0, 0]);
        assert_eq!(reads_back(&[(10, 20), (0, 100)]), vec![0, 0]);
        assert_eq!(reads_back(&[(0, 50), (40, 90)]), vec![0, 1]);
        assert_eq!(reads_back(&[(0, 50), (40, 90), (45, 95)]), vec![0, 1, 2]);
        assert_eq!(reads_back(&[(0, 50), (40, 90), (60, 95)]), vec![0, 1, 0]);
    }

    #[test]
    fn shared_endpoints_keep_the_pairing_right() {
        // Same start: the outer must be written first.
        assert_eq!(reads_back(&[(0, 100), (0, 10)]), vec![0, 0]);
        let tracks = reads_back(&[(0, 10), (0, 100)]);
        assert_ne!(tracks[0], tracks[1]);
        // Same end: the inner must be written first.
        assert_eq!(reads_back(&[(50, 100), (0, 100)]), vec![0, 0]);
        let tracks = reads_back(&[(0, 100), (50, 100)]);
        assert_ne!(tracks[0], tracks[1]);
        // Identical and empty slices.
        assert_eq!(reads_back(&[(5, 9), (5, 9)]), vec![0, 0]);
        reads_back(&[(5, 5), (5, 9), (0, 5), (9, 9)]);
    }

    #[test]
    fn random_slices_always_read_back_as_written() {
        let mut state = 0x2545_f491_4f6c_dd1du64;
        let mut next = |n: u64| {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state % n
        };
        for _ in 0..300 {
            let slices: Vec<(u64, u64)> = (0..next(12) + 1)
                .map(|_| {
                    let start = next(20);
                    (start, start + next(8))
                })
                .collect();
            reads_back(&slices);
        }
    }

    #[test]
    fn a_flow_binds_to_the_slice_written_before_it_or_the_one_enclosing_it() {
        let mut pass = LayoutPass::default();
        let slice = |pass: &mut LayoutPass, tid, start, end| {
            pass.complete(&CompleteEvent {
                name: "s",
                category: "kernel",
                pid: 0,
                tid,
                start_ns: start,
                end_ns: end,
                args: &[],
            })
            .unwrap()
        };
        slice(&mut pass, 1, 0, 100);
        slice(&mut pass, 1, 10, 20);
        pass.flow(FlowEnd::Finish, 7, 0, 1, 10).unwrap();
        pass.flow(FlowEnd::Start, 8, 0, 1, 50).unwrap();
        pass.flow(FlowEnd::Start, 9, 0, 2, 50).unwrap();
        let layout = pass.finish();
        assert_eq!(layout.bound_flows[&1], vec![(FlowEnd::Finish, 7)]);
        assert_eq!(layout.bound_flows[&0], vec![(FlowEnd::Start, 8)]);
        assert_eq!(layout.unbound_flows.len(), 1);
        assert_eq!(layout.unbound_flows[0].id, 9);
    }
}
