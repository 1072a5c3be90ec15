//! The simulated SDK's process-wide state: registration (tool discovery,
//! init/fini status), contexts and their services, buffers and the thread
//! that delivers them, the completion thread, correlation ids and their
//! retirement, kernel symbols and agents.
//!
//! Sources modelled (ROCm/rocm-systems, projects/rocprofiler-sdk, and the
//! older ROCm/rocprofiler-sdk tree with the same files):
//! - source/lib/rocprofiler-sdk/registration.cpp: init status 0 (not
//!   initialized) / -1 (tools' initialize running) / 1 (done);
//!   `rocprofiler_force_configure` returns ERROR_CONFIGURATION_LOCKED unless
//!   the status is 0, otherwise records the function and initializes at once;
//!   finalize calls the clients' finalizers, then deactivates contexts.
//! - source/lib/rocprofiler-sdk/callback_tracing.cpp and buffer.cpp: every
//!   configure call returns ERROR_CONFIGURATION_LOCKED when
//!   `get_init_status() > -1`, i.e. outside the tools' initialize.
//! - source/lib/rocprofiler-sdk/context/domain.cpp (`add_domain`): a kind
//!   <= NONE or past the version's LAST is ERROR_KIND_NOT_FOUND.
//! - source/lib/rocprofiler-sdk/buffer.cpp: buffer ids start at an offset
//!   (random in [255, 65535] there, fixed here); LOSSLESS allocates a second
//!   internal buffer so records keep landing while one is flushed; the
//!   callback gets the buffer's `drop_count`; `rocprofiler_flush_buffer`
//!   waits for the flush.
//! - source/lib/rocprofiler-sdk/external_correlation.cpp: the request
//!   callback gets (thread, context, kind, operation, internal correlation
//!   id, &external, data); a return of 0 means the value was set.
//! - fwd.h (ROCPROFILER_KERNEL_DISPATCH_ENQUEUE doc): contexts active when a
//!   kernel is enqueued are captured and still deliver its completion after
//!   they are stopped.
use rocprofiler_sys as sys;
use std::cell::{Cell, RefCell};
use std::collections::{BinaryHeap, HashMap};
use std::ffi::{c_char, c_void, CString};
use std::sync::atomic::{AtomicBool, AtomicI32, AtomicU32, AtomicU64, Ordering};
use std::sync::mpsc;
use std::sync::{Arc, Condvar, Mutex, MutexGuard, OnceLock, RwLock};
use std::time::Duration;

pub(crate) const CONTEXT_OFFSET: u64 = 0x100;
pub(crate) const BUFFER_OFFSET: u64 = 0x1000;
/// Slots per kind table (callback kinds < 32, buffer kinds < 64 in 1.3).
const KIND_SLOTS: usize = 64;

pub(crate) fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

// ---------------------------------------------------------------- clock, tid

/// CLOCK_MONOTONIC in nanoseconds (what rocprofiler_get_timestamp reports
/// here, and the clock of every record's timestamps).
pub(crate) fn now_ns() -> u64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: clock_gettime writes one timespec through a valid pointer.
    unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut ts) };
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}

thread_local! {
    static TID: Cell<u64> = const { Cell::new(0) };
    /// Correlation ids of the API calls in progress on this thread.
    static CORR_STACK: RefCell<Vec<u64>> = const { RefCell::new(Vec::new()) };
    static IS_DELIVERY_THREAD: Cell<bool> = const { Cell::new(false) };
}

/// The kernel thread id, as `rocprofiler_thread_id_t` is (gettid).
pub(crate) fn tid() -> u64 {
    TID.with(|t| {
        if t.get() == 0 {
            // SAFETY: gettid has no arguments and cannot fail.
            t.set(unsafe { libc::syscall(libc::SYS_gettid) } as u64);
        }
        t.get()
    })
}

pub(crate) fn push_corr(c: u64) {
    CORR_STACK.with(|s| s.borrow_mut().push(c));
}
pub(crate) fn pop_corr() {
    CORR_STACK.with(|s| {
        s.borrow_mut().pop();
    });
}
/// The innermost API call in progress on this thread (0 outside any).
pub(crate) fn current_corr() -> u64 {
    CORR_STACK.with(|s| s.borrow().last().copied().unwrap_or(0))
}

// ---------------------------------------------------------------- services

#[derive(Clone)]
pub(crate) struct CbService {
    pub cb: unsafe extern "C" fn(
        sys::rocprofiler_callback_tracing_record_t,
        *mut sys::rocprofiler_user_data_t,
        *mut c_void,
    ),
    pub data: usize,
    /// Empty = every operation.
    pub ops: Vec<i32>,
}

#[derive(Clone)]
pub(crate) struct BufService {
    pub buffer: u64,
    pub ops: Vec<i32>,
}

#[derive(Clone)]
pub(crate) struct ExtService {
    pub cb: unsafe extern "C" fn(
        sys::rocprofiler_thread_id_t,
        sys::rocprofiler_context_id_t,
        sys::rocprofiler_external_correlation_id_request_kind_t,
        sys::rocprofiler_tracing_operation_t,
        u64,
        *mut sys::rocprofiler_user_data_t,
        *mut c_void,
    ) -> i32,
    pub data: usize,
    /// Bit n set = request kind n asked for.
    pub kinds: u64,
}

fn op_selected(ops: &[i32], op: i32) -> bool {
    ops.is_empty() || ops.contains(&op)
}

pub(crate) struct Ctx {
    pub handle: u64,
    pub active: AtomicBool,
    pub cb: Vec<Option<CbService>>,
    pub buf: Vec<Option<BufService>>,
    pub ext: Option<ExtService>,
}

impl Ctx {
    fn new(handle: u64) -> Ctx {
        Ctx {
            handle,
            active: AtomicBool::new(false),
            cb: vec![None; KIND_SLOTS],
            buf: vec![None; KIND_SLOTS],
            ext: None,
        }
    }
    pub fn cb_for(&self, kind: u32, op: i32) -> Option<&CbService> {
        self.cb
            .get(kind as usize)?
            .as_ref()
            .filter(|s| op_selected(&s.ops, op))
    }
    pub fn buf_for(&self, kind: u32, op: i32) -> Option<u64> {
        self.buf
            .get(kind as usize)?
            .as_ref()
            .filter(|s| op_selected(&s.ops, op))
            .map(|s| s.buffer)
    }
    pub fn id(&self) -> sys::rocprofiler_context_id_t {
        sys::rocprofiler_context_id_t {
            handle: self.handle,
        }
    }
}

// ---------------------------------------------------------------- buffers

/// One record owned by a buffer until it is delivered.
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
                    let full = std::mem::take(&mut st.active);
                    st.spare = Some(full);
                    st.bytes = 0;
                    st.flush_requested = true;
                    request_flush(self.handle, None);
                    continue;
                }
                if IS_DELIVERY_THREAD.with(|d| d.get()) {
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
        let active = std::mem::take(&mut st.active);
        if !active.is_empty() {
            batches.push(active);
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
    let Some(buf) = sdk().buffer(handle) else {
        return;
    };
    if lock(&buf.state).holds_retirement {
        for other in sdk().all_buffers() {
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
    if IS_DELIVERY_THREAD.with(|d| d.get()) {
        flush_now(handle);
        return;
    }
    let (tx, rx) = mpsc::sync_channel(1);
    request_flush(handle, Some(tx));
    let _ = rx.recv();
}

// ---------------------------------------------------------------- completion

/// Device work whose records are delivered when it completes.
pub(crate) struct Completion {
    pub end_ns: u64,
    pub seq: u64,
    pub wait: bool,
    pub corr: u64,
    pub rec: Rec,
    /// (context index, buffer, external value) captured at write time.
    pub deliveries: Vec<(usize, u64, u64)>,
}

impl PartialEq for Completion {
    fn eq(&self, o: &Self) -> bool {
        (self.end_ns, self.seq) == (o.end_ns, o.seq)
    }
}
impl Eq for Completion {}
impl PartialOrd for Completion {
    fn partial_cmp(&self, o: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(o))
    }
}
impl Ord for Completion {
    /// Reversed: BinaryHeap pops the earliest completion first.
    fn cmp(&self, o: &Self) -> std::cmp::Ordering {
        (o.end_ns, o.seq).cmp(&(self.end_ns, self.seq))
    }
}

#[derive(Default)]
struct CompletionQueue {
    heap: BinaryHeap<Completion>,
    outstanding: u64,
    started: bool,
}

// ---------------------------------------------------------------- the SDK

pub(crate) struct ToolClient {
    pub initialize: sys::rocprofiler_tool_initialize_t,
    pub finalize: sys::rocprofiler_tool_finalize_t,
    pub tool_data: usize,
    pub finalized: AtomicBool,
    pub handle: u32,
}

struct CorrState {
    pending: u64,
    api_done: bool,
    /// Context indices (bits) that want CORRELATION_ID_RETIREMENT for it.
    mask: u64,
}

pub(crate) struct Agents {
    pub list: Vec<sys::rocprofiler_agent_v0_t>,
}
// SAFETY: the agents' raw pointers name leaked, immutable C strings.
unsafe impl Send for Agents {}
// SAFETY: as above; the data is never written after creation.
unsafe impl Sync for Agents {}

pub(crate) struct Sdk {
    pub version: AtomicU32,
    pub init_status: AtomicI32,
    pub fini_status: AtomicI32,
    lifecycle: Mutex<()>,
    pub clients: Mutex<Vec<Arc<ToolClient>>>,
    building: Mutex<Vec<Ctx>>,
    frozen: OnceLock<Vec<Ctx>>,
    buffers: RwLock<Vec<Option<Arc<Buffer>>>>,
    corr_next: AtomicU64,
    retire_enabled: AtomicBool,
    retire: Mutex<HashMap<u64, CorrState>>,
    completions: Mutex<CompletionQueue>,
    work: Condvar,
    idle: Condvar,
    completion_seq: AtomicU64,
    pub agents: OnceLock<Agents>,
    kernels: Mutex<(HashMap<String, u64>, Vec<CString>)>,
}

pub(crate) fn sdk() -> &'static Sdk {
    static SDK: OnceLock<Sdk> = OnceLock::new();
    SDK.get_or_init(|| Sdk {
        version: AtomicU32::new(default_version()),
        init_status: AtomicI32::new(0),
        fini_status: AtomicI32::new(0),
        lifecycle: Mutex::new(()),
        clients: Mutex::new(Vec::new()),
        building: Mutex::new(Vec::new()),
        frozen: OnceLock::new(),
        buffers: RwLock::new(Vec::new()),
        corr_next: AtomicU64::new(1),
        retire_enabled: AtomicBool::new(false),
        retire: Mutex::new(HashMap::new()),
        completions: Mutex::new(CompletionQueue::default()),
        work: Condvar::new(),
        idle: Condvar::new(),
        completion_seq: AtomicU64::new(0),
        agents: OnceLock::new(),
        kernels: Mutex::new((HashMap::new(), Vec::new())),
    })
}

/// ROCSIM_SDK_VERSION ("1.0.0") if set and valid, else 1.3.0.
fn default_version() -> u32 {
    std::env::var("ROCSIM_SDK_VERSION")
        .ok()
        .and_then(|v| v.parse::<crate::workload::SdkVersion>().ok())
        .map(|v| v.encoded())
        .unwrap_or(10300)
}

impl Sdk {
    pub fn version(&self) -> u32 {
        self.version.load(Ordering::Acquire)
    }

    /// One past the last callback tracing kind this version has.
    pub fn callback_kind_last(&self) -> u32 {
        if self.version() >= sys::HIP_GRAPH_DOMAIN_VERSION {
            sys::rocprofiler_callback_tracing_kind_t::HIP_GRAPH.0 + 1
        } else {
            sys::rocprofiler_callback_tracing_kind_t::HIP_GRAPH.0
        }
    }

    pub fn buffer_kind_last(&self) -> u32 {
        if self.version() >= sys::HIP_GRAPH_DOMAIN_VERSION {
            sys::rocprofiler_buffer_tracing_kind_t::HIP_GRAPH.0 + 1
        } else {
            sys::rocprofiler_buffer_tracing_kind_t::HIP_GRAPH.0
        }
    }

    /// Configuration is open only while the tools' initialize runs.
    pub fn configuration_open(&self) -> bool {
        self.init_status.load(Ordering::Acquire) == -1
    }

    pub fn contexts(&self) -> &[Ctx] {
        self.frozen.get().map(|v| v.as_slice()).unwrap_or(&[])
    }

    pub fn create_context(&self) -> u64 {
        let mut b = lock(&self.building);
        let handle = CONTEXT_OFFSET + b.len() as u64;
        b.push(Ctx::new(handle));
        handle
    }

    /// Runs `f` on the context while it can still be configured.
    pub fn with_building_ctx<R>(&self, handle: u64, f: impl FnOnce(&mut Ctx) -> R) -> Option<R> {
        if self.frozen.get().is_some() {
            return None;
        }
        let mut b = lock(&self.building);
        b.iter_mut().find(|c| c.handle == handle).map(f)
    }

    /// Runs `f` on a context whether or not configuration has ended.
    pub fn with_ctx<R>(&self, handle: u64, f: impl FnOnce(&Ctx) -> R) -> Option<R> {
        if let Some(v) = self.frozen.get() {
            return v.iter().find(|c| c.handle == handle).map(f);
        }
        let b = lock(&self.building);
        b.iter().find(|c| c.handle == handle).map(f)
    }

    pub fn next_corr(&self) -> u64 {
        self.corr_next.fetch_add(1, Ordering::Relaxed)
    }

    pub fn create_buffer(
        &self,
        context: u64,
        size: usize,
        watermark: usize,
        policy: sys::rocprofiler_buffer_policy_t,
        cb: sys::rocprofiler_buffer_tracing_cb_t,
        data: *mut c_void,
    ) -> u64 {
        let mut bufs = self.buffers.write().unwrap_or_else(|p| p.into_inner());
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

    pub fn buffer(&self, handle: u64) -> Option<Arc<Buffer>> {
        let idx = handle.checked_sub(BUFFER_OFFSET)? as usize;
        let bufs = self.buffers.read().unwrap_or_else(|p| p.into_inner());
        bufs.get(idx)?.clone()
    }

    pub fn destroy_buffer(&self, handle: u64) -> bool {
        let Some(idx) = handle.checked_sub(BUFFER_OFFSET) else {
            return false;
        };
        let mut bufs = self.buffers.write().unwrap_or_else(|p| p.into_inner());
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

    fn all_buffers(&self) -> Vec<Arc<Buffer>> {
        let bufs = self.buffers.read().unwrap_or_else(|p| p.into_inner());
        bufs.iter().flatten().cloned().collect()
    }

    pub fn push_record(&self, buffer: u64, rec: Rec) {
        if let Some(b) = self.buffer(buffer) {
            b.push(rec);
        }
    }

    /// Flushes every buffer and waits for the callbacks.
    pub fn flush_all(&self) {
        for b in self.all_buffers() {
            flush_and_wait(b.handle);
        }
    }

    // ------------------------------------------------------------ init / fini

    /// The runtime's first use: find tools, configure and initialize them,
    /// then lock configuration. Idempotent.
    pub fn initialize(&self, forced: Option<sys::rocprofiler_configure_func_t>) {
        let _g = lock(&self.lifecycle);
        if self.init_status.load(Ordering::Acquire) != 0 {
            return;
        }
        self.init_status.store(-1, Ordering::Release);
        let mut configure_fns: Vec<usize> = Vec::new();
        if let Some(Some(f)) = forced {
            configure_fns.push(f as usize);
        }
        for f in crate::sdk::discovery::discover() {
            if !configure_fns.contains(&f) {
                configure_fns.push(f);
            }
        }
        let runtime_version = CString::new(format!(
            "rocprofiler-sim {}",
            crate::workload::SdkVersion::from_encoded(self.version())
        ))
        .unwrap_or_default();
        let mut results = Vec::new();
        for (priority, f) in configure_fns.iter().enumerate() {
            // SAFETY: `f` is the address of a `rocprofiler_configure` exported
            // by a loaded library (or handed to rocprofiler_force_configure).
            let configure: unsafe extern "C" fn(
                u32,
                *const c_char,
                u32,
                *mut sys::rocprofiler_client_id_t,
            )
                -> *mut sys::rocprofiler_tool_configure_result_t =
                unsafe { std::mem::transmute::<usize, _>(*f) };
            let mut client = sys::rocprofiler_client_id_t {
                size: std::mem::size_of::<sys::rocprofiler_client_id_t>(),
                name: std::ptr::null(),
                handle: priority as u32,
            };
            // SAFETY: a tool's configure with valid arguments; `client` lives
            // across the call.
            let result = unsafe {
                configure(
                    self.version(),
                    runtime_version.as_ptr(),
                    priority as u32,
                    &mut client,
                )
            };
            if result.is_null() {
                continue;
            }
            // SAFETY: a non-null result points to the tool's configure result,
            // which the SDK contract keeps alive until finalization.
            let r = unsafe { &*result };
            results.push(Arc::new(ToolClient {
                initialize: r.initialize,
                finalize: r.finalize,
                tool_data: r.tool_data as usize,
                finalized: AtomicBool::new(false),
                handle: priority as u32,
            }));
        }
        *lock(&self.clients) = results.clone();
        for c in &results {
            if let Some(init) = c.initialize {
                // SAFETY: the tool's initialize with our finalize function and
                // its own tool_data.
                let rc = unsafe { init(Some(client_finalize), c.tool_data as *mut c_void) };
                if rc != 0 {
                    c.finalized.store(true, Ordering::Release);
                }
            }
        }
        let ctxs = std::mem::take(&mut *lock(&self.building));
        let retire = ctxs.iter().any(|c| {
            c.buf[sys::rocprofiler_buffer_tracing_kind_t::CORRELATION_ID_RETIREMENT.0 as usize]
                .is_some()
        });
        self.retire_enabled.store(retire, Ordering::Release);
        let _ = self.frozen.set(ctxs);
        self.init_status.store(1, Ordering::Release);
    }

    /// The driver's shutdown: deliver what is in flight, call the tools'
    /// finalize, deactivate every context.
    pub fn finalize(&self, timeout_ns: u64) {
        let _g = lock(&self.lifecycle);
        if self.fini_status.load(Ordering::Acquire) != 0 {
            return;
        }
        self.fini_status.store(-1, Ordering::Release);
        self.wait_idle(timeout_ns);
        if self.init_status.load(Ordering::Acquire) > 0 {
            let clients = lock(&self.clients).clone();
            for c in clients {
                finalize_client(&c);
            }
        }
        self.flush_all();
        for c in self.contexts() {
            c.active.store(false, Ordering::Release);
        }
        self.fini_status.store(1, Ordering::Release);
    }

    // ------------------------------------------------------------ completion

    pub fn complete_later(&self, c: Completion) {
        let mut q = lock(&self.completions);
        if !q.started {
            q.started = true;
            std::thread::Builder::new()
                .name("rocsim-completion".into())
                .spawn(completion_thread)
                .expect("spawn the completion thread");
        }
        q.outstanding += 1;
        q.heap.push(c);
        drop(q);
        self.work.notify_one();
    }

    pub fn completion_seq(&self) -> u64 {
        self.completion_seq.fetch_add(1, Ordering::Relaxed)
    }

    /// Waits until every completion was delivered, then flushes every buffer.
    /// False on timeout.
    pub fn wait_idle(&self, timeout_ns: u64) -> bool {
        let deadline = now_ns().saturating_add(timeout_ns);
        let mut q = lock(&self.completions);
        while q.outstanding > 0 {
            let now = now_ns();
            if now >= deadline {
                return false;
            }
            q = self
                .idle
                .wait_timeout(q, Duration::from_nanos((deadline - now).min(50_000_000)))
                .unwrap_or_else(|p| p.into_inner())
                .0;
        }
        drop(q);
        self.flush_all();
        true
    }

    // ------------------------------------------------------------ retirement

    pub fn retirement_enabled(&self) -> bool {
        self.retire_enabled.load(Ordering::Acquire)
    }

    /// An API call took `corr`; `mask` = contexts that want its retirement.
    pub fn corr_begin(&self, corr: u64, mask: u64) {
        if mask != 0 {
            lock(&self.retire).insert(
                corr,
                CorrState {
                    pending: 0,
                    api_done: false,
                    mask,
                },
            );
        }
    }

    pub fn corr_async_added(&self, corr: u64) {
        if let Some(s) = lock(&self.retire).get_mut(&corr) {
            s.pending += 1;
        }
    }

    pub fn corr_api_done(&self, corr: u64) {
        let retired = {
            let mut m = lock(&self.retire);
            match m.get_mut(&corr) {
                Some(s) => {
                    s.api_done = true;
                    if s.pending == 0 {
                        m.remove(&corr).map(|s| s.mask)
                    } else {
                        None
                    }
                }
                None => None,
            }
        };
        if let Some(mask) = retired {
            self.retire_corr(corr, mask);
        }
    }

    fn corr_async_delivered(&self, corr: u64) {
        let retired = {
            let mut m = lock(&self.retire);
            match m.get_mut(&corr) {
                Some(s) => {
                    s.pending = s.pending.saturating_sub(1);
                    if s.pending == 0 && s.api_done {
                        m.remove(&corr).map(|s| s.mask)
                    } else {
                        None
                    }
                }
                None => None,
            }
        };
        if let Some(mask) = retired {
            self.retire_corr(corr, mask);
        }
    }

    fn retire_corr(&self, corr: u64, mask: u64) {
        let kind = sys::rocprofiler_buffer_tracing_kind_t::CORRELATION_ID_RETIREMENT;
        for (i, c) in self.contexts().iter().enumerate() {
            if i < 64 && mask & (1 << i) != 0 {
                if let Some(b) = c.buf_for(kind.0, 0) {
                    self.push_record(
                        b,
                        Rec::Retire(
                            sys::rocprofiler_buffer_tracing_correlation_id_retirement_record_t {
                                size: std::mem::size_of::<
                                    sys::rocprofiler_buffer_tracing_correlation_id_retirement_record_t,
                                >() as u64,
                                kind,
                                timestamp: now_ns(),
                                internal_correlation_id: corr,
                            },
                        ),
                    );
                }
            }
        }
    }

    // ------------------------------------------------------------ kernels

    /// The kernel's id; registers it (CODE_OBJECT kernel symbol callback) the
    /// first time the name is seen.
    pub fn kernel_id(&self, name: &str) -> u64 {
        let (id, fresh, ptr) = {
            let mut k = lock(&self.kernels);
            if let Some(id) = k.0.get(name) {
                return *id;
            }
            let id = k.0.len() as u64 + 1;
            k.0.insert(name.to_string(), id);
            let c = CString::new(name.replace('\0', "?")).unwrap_or_default();
            let ptr = c.as_ptr();
            // The CString's heap bytes never move or free: tools may keep the pointer.
            k.1.push(c);
            (id, true, ptr)
        };
        if fresh {
            crate::sdk::trace::kernel_symbol_registered(id, ptr);
        }
        id
    }
}

extern "C" fn client_finalize(client: sys::rocprofiler_client_id_t) {
    let _ = std::panic::catch_unwind(|| {
        let clients = lock(&sdk().clients).clone();
        if let Some(c) = clients.iter().find(|c| c.handle == client.handle) {
            finalize_client(c);
        }
    });
}

fn finalize_client(c: &ToolClient) {
    if c.finalized.swap(true, Ordering::AcqRel) {
        return;
    }
    if let Some(fin) = c.finalize {
        // SAFETY: the tool's finalize with its own tool_data, called once.
        unsafe { fin(c.tool_data as *mut c_void) };
    }
}

fn completion_thread() {
    let s = sdk();
    loop {
        let item = {
            let mut q = lock(&s.completions);
            loop {
                match q.heap.peek() {
                    None => {
                        q = s.work.wait(q).unwrap_or_else(|p| p.into_inner());
                    }
                    Some(top) => {
                        let now = now_ns();
                        if top.wait && top.end_ns > now {
                            let d = Duration::from_nanos(top.end_ns - now);
                            q = s
                                .work
                                .wait_timeout(q, d)
                                .unwrap_or_else(|p| p.into_inner())
                                .0;
                        } else {
                            break;
                        }
                    }
                }
            }
            q.heap.pop().expect("peeked")
        };
        deliver_completion(s, item);
        let mut q = lock(&s.completions);
        q.outstanding -= 1;
        if q.outstanding == 0 {
            s.idle.notify_all();
        }
    }
}

fn deliver_completion(s: &Sdk, item: Completion) {
    for &(_, buffer, external) in &item.deliveries {
        let mut rec = item.rec;
        match &mut rec {
            Rec::Kernel(r) => r.correlation_id.external = external_value(external),
            Rec::Copy(r) => r.correlation_id.external = external_value(external),
            _ => {}
        }
        s.push_record(buffer, rec);
    }
    if s.retirement_enabled() {
        s.corr_async_delivered(item.corr);
    }
}

fn external_value(v: u64) -> sys::rocprofiler_user_data_t {
    sys::rocprofiler_user_data_t::from_value(v)
}
