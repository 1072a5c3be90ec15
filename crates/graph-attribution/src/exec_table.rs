//! Which attribution id a launched exec gets, and how that changes when an
//! exec is created, updated or destroyed.
//!
//! Launches read this on the hot path, so readers never lock: the table is
//! an immutable map behind an [`ArcSwap`], replaced copy-on-write by the
//! rare events under a writer mutex. With SDK 1.3 identities a launch does
//! not even read the map until some exec has been updated; until then it
//! pays one atomic load of `any_exec_updated` and a compare against the
//! re-key floor.
//!
//! Why forget on create and destroy: HIP hands a destroyed exec's address
//! to the next instantiate, so a handle names an exec only between its
//! create and its destroy; the new graph must never inherit the old id.
//!
//! Why updated execs get ids from the top of the 32-bit field downward:
//! hipGraphExecUpdate replaces the nodes behind a handle without changing
//! the SDK's id, so the old ordinals would name different kernels. A fresh
//! id drawn from 0xFFFF_FFFF downward can never meet an SDK id growing from
//! 1 without that being noticed (the floor check), and is recognisable in a
//! trace.

use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};

use arc_swap::ArcSwap;
use crossbeam_queue::ArrayQueue;

use crate::diagnostics::{Anomaly, Diagnostics};
use crate::ids::{AttributionId, ExecHandle, ExecIdentity, LaunchedExec};

/// One past the largest id the 32-bit field holds: the re-key floor before
/// any exec was updated.
const FIELD_END: u64 = 1 << 32;

/// How many destroyed or replaced attribution ids are kept for the verifier
/// to forget before the oldest are discarded (the verifier's knowledge is
/// then merely larger than it needs to be, never wrong).
const MAX_PENDING_FORGETS: usize = 1 << 16;

/// How many launches of never-instantiated execs (SDK < 1.3) wait for an id.
const UNSEEN_QUEUE_CAPACITY: usize = 256;

/// A cheap hasher for handles: they are addresses, not attacker-controlled,
/// and the hot path looks one up per launch in RuntimeApi mode.
#[derive(Default, Clone, Copy)]
pub struct HandleHasher(u64);

const MIX: u64 = 0x9E37_79B9_7F4A_7C15;

impl Hasher for HandleHasher {
    fn finish(&self) -> u64 {
        // The product's high bits are the well-mixed ones; fold them into
        // the low bits, which pick the bucket.
        self.0 ^ (self.0 >> 32)
    }

    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.write_u64(b as u64);
        }
    }

    fn write_u64(&mut self, value: u64) {
        self.0 = (self.0.rotate_left(23) ^ value).wrapping_mul(MIX);
    }
}

type ExecMap = HashMap<ExecHandle, ExecEntry, BuildHasherDefault<HandleHasher>>;

/// What the table knows about one live handle.
#[derive(Clone, Copy, Debug)]
struct ExecEntry {
    /// The SDK's id for the exec at this handle, when the SDK gave one; a
    /// launch whose id differs is not this entry's exec.
    sdk_id: Option<u64>,
    /// The id its dispatches are attributed to, or why they are not.
    attribution: Result<AttributionId, Anomaly>,
}

/// State only the rare-path writers touch.
struct WriterState {
    /// Highest id growing from the bottom of the field that has been seen
    /// (SDK ids at create) or handed out (our own ids); re-key ids must stay
    /// above it.
    highest_low_id: u64,
    /// Next id of our own (RuntimeApi identities).
    next_own_id: u64,
    /// Attribution ids that no future launch will carry: the verifier may
    /// forget what it learned about them.
    retired: Vec<AttributionId>,
}

/// The exec -> attribution id table.
pub struct ExecTable {
    identity: ExecIdentity,
    published: ArcSwap<ExecMap>,
    any_exec_updated: AtomicBool,
    /// Lowest id handed to an updated exec; [`FIELD_END`] until the first
    /// update. An id from the bottom must stay below it.
    rekey_floor: AtomicU64,
    writer: Mutex<WriterState>,
    unseen: ArrayQueue<ExecHandle>,
}

impl ExecTable {
    pub fn new(identity: ExecIdentity) -> ExecTable {
        ExecTable {
            identity,
            published: ArcSwap::from_pointee(ExecMap::default()),
            any_exec_updated: AtomicBool::new(false),
            rekey_floor: AtomicU64::new(FIELD_END),
            writer: Mutex::new(WriterState {
                highest_low_id: 0,
                next_own_id: 1,
                retired: Vec::new(),
            }),
            unseen: ArrayQueue::new(UNSEEN_QUEUE_CAPACITY),
        }
    }

    pub fn identity(&self) -> ExecIdentity {
        self.identity
    }

    /// The attribution id for a launch of `exec`, or the reason it has none.
    /// Hot path: no lock, no allocation.
    #[inline]
    pub fn attribution_for_launch(&self, exec: LaunchedExec) -> Result<AttributionId, Anomaly> {
        match (self.identity, exec) {
            (
                ExecIdentity::SdkGraphDomain,
                LaunchedExec::Sdk {
                    graph_exec_id,
                    handle,
                },
            ) => {
                if self.any_exec_updated.load(Ordering::Acquire) {
                    if let Some(entry) = self.published.load().get(&handle) {
                        if entry.sdk_id.is_none_or(|id| id == graph_exec_id) {
                            return entry.attribution;
                        }
                    }
                }
                self.packable_sdk_id(graph_exec_id)
            }
            (ExecIdentity::SdkGraphDomain, LaunchedExec::Runtime { .. }) => {
                Err(Anomaly::IdentityModeMismatch)
            }
            (ExecIdentity::RuntimeApi, exec) => {
                match self.published.load().get(&exec.handle()) {
                    Some(entry) => entry.attribution,
                    None => {
                        // Remember it so the rare path can give it an id; a
                        // full queue only delays that.
                        let _ = self.unseen.push(exec.handle());
                        Err(Anomaly::LaunchOfUnseenExec)
                    }
                }
            }
        }
    }

    /// An SDK id as an attribution id, unless packing it would alias.
    #[inline]
    fn packable_sdk_id(&self, sdk_id: u64) -> Result<AttributionId, Anomaly> {
        let floor = self.rekey_floor.load(Ordering::Acquire);
        match AttributionId::from_u64(sdk_id) {
            Some(id) if sdk_id < floor => Ok(id),
            Some(_) => Err(Anomaly::ExecIdCollidesWithRekeyRange),
            None if sdk_id == 0 => Err(Anomaly::ExecIdZero),
            None => Err(Anomaly::ExecIdTooWide),
        }
    }

    fn lock(&self) -> MutexGuard<'_, WriterState> {
        // A panic while holding the lock cannot leave the state torn (every
        // write is a single assignment or push), so a poisoned lock is used.
        self.writer
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// An exec was created at `exec.handle()`: forget whatever lived there
    /// before and give it its id. Returns the id, or why it has none (the
    /// cause has been noted in `diagnostics`).
    pub fn exec_created(
        &self,
        exec: LaunchedExec,
        diagnostics: &Diagnostics,
    ) -> Result<AttributionId, Anomaly> {
        let mut writer = self.lock();
        let mut map = ExecMap::clone(&self.published.load());
        retire(&mut writer, map.remove(&exec.handle()));
        let (sdk_id, attribution) = match (self.identity, exec) {
            (ExecIdentity::SdkGraphDomain, LaunchedExec::Sdk { graph_exec_id, .. }) => {
                writer.highest_low_id = writer.highest_low_id.max(graph_exec_id);
                (Some(graph_exec_id), self.packable_sdk_id(graph_exec_id))
            }
            (ExecIdentity::SdkGraphDomain, LaunchedExec::Runtime { .. }) => {
                (None, Err(Anomaly::IdentityModeMismatch))
            }
            (ExecIdentity::RuntimeApi, _) => (None, self.next_own_id(&mut writer)),
        };
        if let Err(cause) = attribution {
            diagnostics.note(cause);
        }
        map.insert(
            exec.handle(),
            ExecEntry {
                sdk_id,
                attribution,
            },
        );
        self.published.store(Arc::new(map));
        // After the insert, so the handle being created is not adopted.
        self.adopt_unseen_locked(&mut writer, diagnostics);
        attribution
    }

    /// The id launches of the exec at `handle` carry now, if any.
    pub fn current_attribution(&self, handle: ExecHandle) -> Option<AttributionId> {
        self.published
            .load()
            .get(&handle)
            .and_then(|entry| entry.attribution.ok())
    }

    fn next_own_id(&self, writer: &mut WriterState) -> Result<AttributionId, Anomaly> {
        let candidate = writer.next_own_id;
        if candidate >= self.rekey_floor.load(Ordering::Acquire) {
            return Err(Anomaly::RuntimeIdsExhausted);
        }
        let id = AttributionId::from_u64(candidate).ok_or(Anomaly::RuntimeIdsExhausted)?;
        writer.next_own_id += 1;
        writer.highest_low_id = writer.highest_low_id.max(candidate);
        Ok(id)
    }

    /// The exec at `handle` was destroyed: forget it, so the next exec HIP
    /// places at that address starts afresh.
    pub fn exec_destroyed(&self, handle: ExecHandle) {
        let mut writer = self.lock();
        let mut map = ExecMap::clone(&self.published.load());
        if let Some(old) = map.remove(&handle) {
            retire(&mut writer, Some(old));
            self.published.store(Arc::new(map));
        }
    }

    /// hipGraphExecUpdate returned hipSuccess for `handle`: its ordinals now
    /// name other nodes, so it gets a fresh id from the top of the field
    /// downward. Returns the new id, or why there is none.
    pub fn exec_updated(
        &self,
        handle: ExecHandle,
        diagnostics: &Diagnostics,
    ) -> Result<AttributionId, Anomaly> {
        let mut writer = self.lock();
        let mut map = ExecMap::clone(&self.published.load());
        let old = map.remove(&handle);
        let sdk_id = old.and_then(|entry| entry.sdk_id);
        retire(&mut writer, old);

        let floor = self.rekey_floor.load(Ordering::Acquire);
        let fresh = floor - 1;
        let attribution = if fresh > writer.highest_low_id {
            match AttributionId::from_u64(fresh) {
                Some(id) => {
                    self.rekey_floor.store(fresh, Ordering::Release);
                    Ok(id)
                }
                None => Err(Anomaly::RekeyRangeExhausted),
            }
        } else {
            Err(Anomaly::RekeyRangeExhausted)
        };
        if let Err(cause) = attribution {
            diagnostics.note(cause);
        }
        map.insert(
            handle,
            ExecEntry {
                sdk_id,
                attribution,
            },
        );
        self.published.store(Arc::new(map));
        // Published after the map, so a launch that sees the flag sees the
        // entry.
        self.any_exec_updated.store(true, Ordering::Release);
        self.adopt_unseen_locked(&mut writer, diagnostics);
        attribution
    }

    /// Give ids to execs that were launched without their instantiate having
    /// been seen (SDK < 1.3, tracking started late). Their launches so far
    /// stay unattributed; later ones are attributed. Rare path.
    pub fn adopt_unseen_execs(&self, diagnostics: &Diagnostics) {
        let mut writer = self.lock();
        self.adopt_unseen_locked(&mut writer, diagnostics);
    }

    fn adopt_unseen_locked(&self, writer: &mut WriterState, diagnostics: &Diagnostics) {
        if self.identity != ExecIdentity::RuntimeApi || self.unseen.is_empty() {
            return;
        }
        let mut map = ExecMap::clone(&self.published.load());
        let mut changed = false;
        while let Some(handle) = self.unseen.pop() {
            if map.contains_key(&handle) {
                continue;
            }
            let attribution = self.next_own_id(writer);
            if let Err(cause) = attribution {
                diagnostics.note(cause);
            }
            map.insert(
                handle,
                ExecEntry {
                    sdk_id: None,
                    attribution,
                },
            );
            changed = true;
        }
        if changed {
            self.published.store(Arc::new(map));
        }
    }

    /// Attribution ids no future launch will carry (their execs were
    /// destroyed, replaced or updated), oldest first. The verifier forgets
    /// what it learned about them once it has verified their last window.
    pub fn take_retired(&self) -> Vec<AttributionId> {
        std::mem::take(&mut self.lock().retired)
    }

    /// Lowest id handed to an updated exec so far, if any exec was updated.
    pub fn rekey_floor(&self) -> Option<AttributionId> {
        let floor = self.rekey_floor.load(Ordering::Acquire);
        if floor == FIELD_END {
            None
        } else {
            AttributionId::from_u64(floor)
        }
    }

    /// How many handles the table holds (live execs it knows).
    pub fn len(&self) -> usize {
        self.published.load().len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

fn retire(writer: &mut WriterState, old: Option<ExecEntry>) {
    if let Some(Ok(id)) = old.map(|entry| entry.attribution) {
        if writer.retired.len() >= MAX_PENDING_FORGETS {
            writer.retired.remove(0);
        }
        writer.retired.push(id);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sdk(id: u64, handle: u64) -> LaunchedExec {
        LaunchedExec::Sdk {
            graph_exec_id: id,
            handle: ExecHandle(handle),
        }
    }

    fn rt(handle: u64) -> LaunchedExec {
        LaunchedExec::Runtime {
            handle: ExecHandle(handle),
        }
    }

    fn raw(r: Result<AttributionId, Anomaly>) -> Result<u32, Anomaly> {
        r.map(AttributionId::get)
    }

    #[test]
    fn sdk_ids_are_used_as_they_are_until_an_update() {
        let d = Diagnostics::default();
        let t = ExecTable::new(ExecIdentity::SdkGraphDomain);
        assert_eq!(raw(t.exec_created(sdk(1, 0x1000), &d)), Ok(1));
        assert_eq!(raw(t.attribution_for_launch(sdk(1, 0x1000))), Ok(1));
        // A launch whose create was not seen still carries the SDK's id.
        assert_eq!(raw(t.attribution_for_launch(sdk(9, 0x9000))), Ok(9));
        assert_eq!(t.rekey_floor(), None);
    }

    #[test]
    fn updates_draw_fresh_ids_from_the_top_downward() {
        let d = Diagnostics::default();
        let t = ExecTable::new(ExecIdentity::SdkGraphDomain);
        t.exec_created(sdk(1, 0xA), &d).unwrap();
        t.exec_created(sdk(2, 0xB), &d).unwrap();
        assert_eq!(raw(t.exec_updated(ExecHandle(0xA), &d)), Ok(0xFFFF_FFFF));
        assert_eq!(raw(t.exec_updated(ExecHandle(0xB), &d)), Ok(0xFFFF_FFFE));
        assert_eq!(raw(t.exec_updated(ExecHandle(0xA), &d)), Ok(0xFFFF_FFFD));
        assert_eq!(raw(t.attribution_for_launch(sdk(1, 0xA))), Ok(0xFFFF_FFFD));
        assert_eq!(raw(t.attribution_for_launch(sdk(2, 0xB))), Ok(0xFFFF_FFFE));
        // An exec never updated keeps the SDK's id.
        assert_eq!(raw(t.attribution_for_launch(sdk(3, 0xC))), Ok(3));
        // Each replaced id is retired for the verifier to forget.
        let retired: Vec<u32> = t
            .take_retired()
            .into_iter()
            .map(AttributionId::get)
            .collect();
        assert_eq!(retired, vec![1, 2, 0xFFFF_FFFF]);
    }

    #[test]
    fn a_reused_handle_never_inherits_the_updated_id() {
        let d = Diagnostics::default();
        let t = ExecTable::new(ExecIdentity::SdkGraphDomain);
        t.exec_created(sdk(1, 0xA), &d).unwrap();
        t.exec_updated(ExecHandle(0xA), &d).unwrap();
        t.exec_destroyed(ExecHandle(0xA));
        // HIP hands the same address to the next instantiate.
        assert_eq!(raw(t.exec_created(sdk(2, 0xA), &d)), Ok(2));
        assert_eq!(raw(t.attribution_for_launch(sdk(2, 0xA))), Ok(2));
        // Even without the destroy, a create forgets the handle's past.
        t.exec_updated(ExecHandle(0xA), &d).unwrap();
        assert_eq!(raw(t.exec_created(sdk(3, 0xA), &d)), Ok(3));
        assert_eq!(raw(t.attribution_for_launch(sdk(3, 0xA))), Ok(3));
    }

    #[test]
    fn a_stale_entry_for_another_sdk_id_is_not_applied() {
        let d = Diagnostics::default();
        let t = ExecTable::new(ExecIdentity::SdkGraphDomain);
        t.exec_created(sdk(1, 0xA), &d).unwrap();
        t.exec_updated(ExecHandle(0xA), &d).unwrap();
        // Destroy and re-create were missed, but the SDK id tells them apart.
        assert_eq!(raw(t.attribution_for_launch(sdk(5, 0xA))), Ok(5));
    }

    #[test]
    fn unpackable_sdk_ids_drop_attribution_instead_of_aliasing() {
        let d = Diagnostics::default();
        let t = ExecTable::new(ExecIdentity::SdkGraphDomain);
        assert_eq!(
            t.exec_created(sdk(1 << 32, 0xA), &d),
            Err(Anomaly::ExecIdTooWide)
        );
        assert_eq!(
            t.attribution_for_launch(sdk(1 << 32, 0xA)),
            Err(Anomaly::ExecIdTooWide)
        );
        assert_eq!(
            t.attribution_for_launch(sdk((1 << 32) + 1, 0xB)),
            Err(Anomaly::ExecIdTooWide)
        );
        assert_eq!(
            t.attribution_for_launch(sdk(0, 0xC)),
            Err(Anomaly::ExecIdZero)
        );
        assert_eq!(d.count(Anomaly::ExecIdTooWide), 1);
    }

    #[test]
    fn an_sdk_id_reaching_the_rekey_range_is_dropped() {
        let d = Diagnostics::default();
        let t = ExecTable::new(ExecIdentity::SdkGraphDomain);
        t.exec_created(sdk(1, 0xA), &d).unwrap();
        t.exec_updated(ExecHandle(0xA), &d).unwrap(); // 0xFFFF_FFFF
        assert_eq!(
            t.exec_created(sdk(0xFFFF_FFFF, 0xB), &d),
            Err(Anomaly::ExecIdCollidesWithRekeyRange)
        );
        assert_eq!(
            t.attribution_for_launch(sdk(0xFFFF_FFFF, 0xB)),
            Err(Anomaly::ExecIdCollidesWithRekeyRange)
        );
        // The updated exec keeps its id: nothing aliases it.
        assert_eq!(raw(t.attribution_for_launch(sdk(1, 0xA))), Ok(0xFFFF_FFFF));
        assert_eq!(
            raw(t.attribution_for_launch(sdk(0xFFFF_FFFE, 0xC))),
            Ok(0xFFFF_FFFE)
        );
    }

    #[test]
    fn the_rekey_range_never_descends_onto_an_id_already_seen() {
        let d = Diagnostics::default();
        let t = ExecTable::new(ExecIdentity::SdkGraphDomain);
        t.exec_created(sdk(0xFFFF_FFFE, 0xA), &d).unwrap();
        assert_eq!(raw(t.exec_updated(ExecHandle(0xA), &d)), Ok(0xFFFF_FFFF));
        assert_eq!(
            t.exec_updated(ExecHandle(0xA), &d),
            Err(Anomaly::RekeyRangeExhausted)
        );
        assert_eq!(
            t.attribution_for_launch(sdk(0xFFFF_FFFE, 0xA)),
            Err(Anomaly::RekeyRangeExhausted)
        );
    }

    #[test]
    fn runtime_identities_are_handed_out_from_one_and_forgotten_on_destroy() {
        let d = Diagnostics::default();
        let t = ExecTable::new(ExecIdentity::RuntimeApi);
        assert_eq!(raw(t.exec_created(rt(0xA), &d)), Ok(1));
        assert_eq!(raw(t.exec_created(rt(0xB), &d)), Ok(2));
        assert_eq!(raw(t.attribution_for_launch(rt(0xA))), Ok(1));
        t.exec_destroyed(ExecHandle(0xA));
        assert_eq!(
            t.attribution_for_launch(rt(0xA)),
            Err(Anomaly::LaunchOfUnseenExec)
        );
        assert_eq!(raw(t.exec_created(rt(0xA), &d)), Ok(3));
        assert_eq!(raw(t.exec_updated(ExecHandle(0xA), &d)), Ok(0xFFFF_FFFF));
        assert_eq!(raw(t.attribution_for_launch(rt(0xA))), Ok(0xFFFF_FFFF));
    }

    #[test]
    fn execs_launched_before_their_instantiate_was_seen_are_adopted_later() {
        let d = Diagnostics::default();
        let t = ExecTable::new(ExecIdentity::RuntimeApi);
        assert_eq!(
            t.attribution_for_launch(rt(0xA)),
            Err(Anomaly::LaunchOfUnseenExec)
        );
        t.adopt_unseen_execs(&d);
        assert_eq!(raw(t.attribution_for_launch(rt(0xA))), Ok(1));
    }

    #[test]
    fn launches_in_the_wrong_form_are_not_attributed() {
        let t = ExecTable::new(ExecIdentity::SdkGraphDomain);
        assert_eq!(
            t.attribution_for_launch(rt(0xA)),
            Err(Anomaly::IdentityModeMismatch)
        );
    }
}
