//! Buffers and their delivery (buffer.cpp, buffer.hpp): records land in a
//! buffer; when it reaches its watermark, is flushed, or is full (LOSSLESS:
//! the producer blocks; DISCARD: the record is dropped and counted), the
//! tool's callback gets the batch on the SDK's own delivery thread. Buffer
//! ids start at an offset (random in [255, 65535] there, fixed here);
//! LOSSLESS allocates a second internal buffer so records keep landing while
//! one is flushed; `rocprofiler_flush_buffer` waits for the flush.
use super::os::lock;
use rocprofiler_sys as sys;
use std::cell::Cell;
use std::ffi::c_void;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc;
use std::sync::{Arc, Condvar, Mutex, OnceLock, RwLock};
use std::time::Duration;

pub(crate) const BUFFER_OFFSET: u64 = 0x1000;

thread_local! {
    static IS_DELIVERY_THREAD: Cell<bool> = const { Cell::new(false) };
}

fn on_delivery_thread() -> bool {
    IS_DELIVERY_THREAD.try_with(|d| d.get()).unwrap_or(false)
}

#[derive(Clone, Copy)]
pub(crate) enum Rec {
    Kernel(sys::rocprofiler_buffer_tracing_kernel_dispatch_record_t),
    Copy(sys::rocprofiler_buffer_tracing_memory_copy_record_t),
    Api(sys::rocprofiler_buffer_tracing_hip_api_record_t),
    Retire(sys::rocprofiler_buffer_tracing_correlation_id_retirement_record_t),
    Graph(sys::rocprofiler_buffer_tracing_hip_graph_record_t),
}

// SAFETY: records are plain data; their pointer-typed members (addresses,
// user data) are values handed to the tool, never dereferenced here.
unsafe impl Send for Rec {}

impl Rec {
    fn bytes(&self) -> usize {
        match self {
            Rec::Kernel(r) => r.size as usize,
            Rec::Copy(r) => r.size as usize,
            Rec::Api(r) => r.size as usize,
            Rec::Retire(r) => r.size as usize,
            Rec::Graph(r) => r.size as usize,
        }
    }
    fn header(&mut self) -> sys::rocprofiler_record_header_t {
        let (kind, payload): (u32, *mut c_void) = match self {
            Rec::Kernel(r) => (r.kind.0, r as *mut _ as *mut c_void),
            Rec::Copy(r) => (r.kind.0, r as *mut _ as *mut c_void),
            Rec::Api(r) => (r.kind.0, r as *mut _ as *mut c_void),
            Rec::Retire(r) => (r.kind.0, r as *mut _ as *mut c_void),
            Rec::Graph(r) => (r.kind.0, r as *mut _ as *mut c_void),
        };
        sys::rocprofiler_record_header_t {
            category: sys::rocprofiler_buffer_category_t::TRACING.0,
            kind,
            payload,
        }
    }
}

#[derive(Default)]
struct BufState {
    active: Vec<Rec>,
    bytes: usize,
    /// LOSSLESS only: the full half waiting to be delivered.
    spare: Option<Vec<Rec>>,
    /// Delivered halves, emptied, for records to land in again: the SDK
    /// allocates a buffer's memory once and clears it after each delivery
    /// (record_header_buffer.cpp: `allocate` in the constructor, `clear`
    /// keeps the capacity), so a run does not allocate its records anew.
    recycled: Vec<Vec<Rec>>,
    drop_count: u64,
    flush_requested: bool,
    holds_retirement: bool,
}

pub(crate) struct Buffer {
    pub handle: u64,
    pub context: u64,
    size: usize,
    watermark: usize,
    policy: sys::rocprofiler_buffer_policy_t,
    cb: sys::rocprofiler_buffer_tracing_cb_t,
    data: usize,
    state: Mutex<BufState>,
    drained: Condvar,
    destroyed: AtomicBool,
}

impl Buffer {
    fn push(&self, rec: Rec) {
        if self.destroyed.load(Ordering::Acquire) {
            return;
        }
        let need = rec.bytes();
        let is_retire = matches!(rec, Rec::Retire(_));
        let mut st = lock(&self.state);
        loop {
            if st.bytes + need <= self.size || st.active.is_empty() {
                st.active.push(rec);
                st.bytes += need;
                st.holds_retirement |= is_retire;
                if st.bytes >= self.watermark && !st.flush_requested {
                    st.flush_requested = true;
                    request_flush(self.handle, None);
                }
                return;
            }
            if self.policy == sys::rocprofiler_buffer_policy_t::LOSSLESS {
                if st.spare.is_none() {
                    // Swap halves and ask for the full one to be delivered.
                    let next = st.recycled.pop().unwrap_or_default();
                    let full = std::mem::replace(&mut st.active, next);
                    st.spare = Some(full);
                    st.bytes = 0;
                    st.flush_requested = true;
                    request_flush(self.handle, None);
                    continue;
                }
                if on_delivery_thread() {
                    // Never block the thread that would unblock us.
                    drop(st);
                    deliver_buffer(self);
                    st = lock(&self.state);
                    continue;
                }
                // Both halves full: the producer blocks (LOSSLESS).
                st = self
                    .drained
                    .wait_timeout(st, Duration::from_millis(50))
                    .unwrap_or_else(|p| p.into_inner())
                    .0;
                continue;
            }
            // DISCARD (and NONE): the record is lost and counted.
            st.drop_count += 1;
            if !st.flush_requested {
                st.flush_requested = true;
                request_flush(self.handle, None);
            }
            return;
        }
    }

    fn has_records(&self) -> bool {
        let st = lock(&self.state);
        !st.active.is_empty() || st.spare.is_some()
    }
}

/// Delivers what `buf` holds through its callback, on the calling thread.
fn deliver_buffer(buf: &Buffer) {
    let (batches, drops) = {
        let mut st = lock(&buf.state);
        let mut batches = Vec::new();
        if let Some(s) = st.spare.take() {
            batches.push(s);
        }
        if !st.active.is_empty() {
            let next = st.recycled.pop().unwrap_or_default();
            batches.push(std::mem::replace(&mut st.active, next));
        }
        st.bytes = 0;
        st.flush_requested = false;
        st.holds_retirement = false;
        buf.drained.notify_all();
        (batches, st.drop_count)
    };
    let Some(cb) = buf.cb else { return };
    for mut batch in batches {
        if batch.is_empty() {
            continue;
        }
        let mut headers: Vec<sys::rocprofiler_record_header_t> =
            batch.iter_mut().map(|r| r.header()).collect();
        let mut ptrs: Vec<*mut sys::rocprofiler_record_header_t> =
            headers.iter_mut().map(|h| h as *mut _).collect();
        // SAFETY: `cb` is the tool's buffer callback; the header array and the
        // records it points to live until the call returns.
        unsafe {
            cb(
                sys::rocprofiler_context_id_t {
                    handle: buf.context,
                },
                sys::rocprofiler_buffer_id_t { handle: buf.handle },
                ptrs.as_mut_ptr(),
                ptrs.len(),
                buf.data as *mut c_void,
                drops,
            )
        };
        batch.clear();
        let mut st = lock(&buf.state);
        // At most the two halves a buffer has.
        if st.recycled.len() < 2 {
            st.recycled.push(batch);
        }
    }
}

enum DeliveryMsg {
    Flush(u64, Option<mpsc::SyncSender<()>>),
}

fn delivery_sender() -> &'static Mutex<mpsc::Sender<DeliveryMsg>> {
    static TX: OnceLock<Mutex<mpsc::Sender<DeliveryMsg>>> = OnceLock::new();
    TX.get_or_init(|| {
        let (tx, rx) = mpsc::channel::<DeliveryMsg>();
        std::thread::Builder::new()
            .name("rocsim-buffers".into())
            .spawn(move || {
                IS_DELIVERY_THREAD.with(|d| d.set(true));
                while let Ok(DeliveryMsg::Flush(handle, ack)) = rx.recv() {
                    flush_now(handle);
                    if let Some(ack) = ack {
                        let _ = ack.send(());
                    }
                }
            })
            .expect("spawn the buffer delivery thread");
        Mutex::new(tx)
    })
}

/// Flushes `handle` on this thread; a buffer holding retirement records first
/// lets every other buffer deliver, so a retirement never overtakes the
/// records of its correlation id.
fn flush_now(handle: u64) {
    let Some(buf) = buffer(handle) else {
        return;
    };
    if lock(&buf.state).holds_retirement {
        for other in all_buffers() {
            if other.handle != handle && other.has_records() {
                deliver_buffer(&other);
            }
        }
    }
    deliver_buffer(&buf);
}

fn request_flush(handle: u64, ack: Option<mpsc::SyncSender<()>>) {
    let _ = lock(delivery_sender()).send(DeliveryMsg::Flush(handle, ack));
}

/// Flushes a buffer and waits until its callback returned.
pub(crate) fn flush_and_wait(handle: u64) {
    if on_delivery_thread() {
        flush_now(handle);
        return;
    }
    let (tx, rx) = mpsc::sync_channel(1);
    request_flush(handle, Some(tx));
    let _ = rx.recv();
}

fn registry() -> &'static RwLock<Vec<Option<Arc<Buffer>>>> {
    static B: OnceLock<RwLock<Vec<Option<Arc<Buffer>>>>> = OnceLock::new();
    B.get_or_init(|| RwLock::new(Vec::new()))
}

pub(crate) fn create_buffer(
    context: u64,
    size: usize,
    watermark: usize,
    policy: sys::rocprofiler_buffer_policy_t,
    cb: sys::rocprofiler_buffer_tracing_cb_t,
    data: *mut c_void,
) -> u64 {
    let mut bufs = registry().write().unwrap_or_else(|p| p.into_inner());
    let handle = BUFFER_OFFSET + bufs.len() as u64;
    bufs.push(Some(Arc::new(Buffer {
        handle,
        context,
        size,
        watermark: watermark.clamp(1, size.max(1)),
        policy,
        cb,
        data: data as usize,
        state: Mutex::new(BufState::default()),
        drained: Condvar::new(),
        destroyed: AtomicBool::new(false),
    })));
    drop(bufs);
    delivery_sender();
    handle
}

pub(crate) fn buffer(handle: u64) -> Option<Arc<Buffer>> {
    let idx = handle.checked_sub(BUFFER_OFFSET)? as usize;
    let bufs = registry().read().unwrap_or_else(|p| p.into_inner());
    bufs.get(idx)?.clone()
}

pub(crate) fn destroy_buffer(handle: u64) -> bool {
    let Some(idx) = handle.checked_sub(BUFFER_OFFSET) else {
        return false;
    };
    let mut bufs = registry().write().unwrap_or_else(|p| p.into_inner());
    match bufs.get_mut(idx as usize) {
        Some(slot @ Some(_)) => {
            if let Some(b) = slot.take() {
                b.destroyed.store(true, Ordering::Release);
            }
            true
        }
        _ => false,
    }
}

fn all_buffers() -> Vec<Arc<Buffer>> {
    let bufs = registry().read().unwrap_or_else(|p| p.into_inner());
    bufs.iter().flatten().cloned().collect()
}

pub(crate) fn push_record(buffer_handle: u64, rec: Rec) {
    if let Some(b) = buffer(buffer_handle) {
        b.push(rec);
    }
}

/// Flushes every buffer and waits for the callbacks.
pub(crate) fn flush_all() {
    for b in all_buffers() {
        flush_and_wait(b.handle);
    }
}
