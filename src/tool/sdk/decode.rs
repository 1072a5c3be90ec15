//! Turns the SDK's buffer records into plain values.
//!
//! Why one place: this is the only code that reads memory the SDK owns by
//! layout. Every record is checked against its own `size` before a field is
//! read, so a truncated or foreign record is counted and skipped, never read
//! past its end. Decoding is written over byte slices so the fuzz target can
//! drive it with arbitrary input.
use activity_store::{AgentId, CopyDirection, GraphLaunch, HipApiCall, KernelDispatch, MemoryCopy};
use rocprofiler_sys::*;
use std::mem::{offset_of, size_of};

/// One decoded buffer record, as the activity store takes it.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Decoded {
    Kernel(KernelDispatch),
    Copy(MemoryCopy),
    Api(HipApiCall),
    GraphLaunch(GraphLaunch),
    Retired { correlation_id: u64 },
}

/// The most bytes of one record the decoder ever reads.
pub const LARGEST_RECORD: usize = {
    let sizes = [
        size_of::<rocprofiler_buffer_tracing_kernel_dispatch_record_t>(),
        size_of::<rocprofiler_buffer_tracing_memory_copy_record_t>(),
        size_of::<rocprofiler_buffer_tracing_hip_api_record_t>(),
        size_of::<rocprofiler_buffer_tracing_hip_graph_record_t>(),
        size_of::<rocprofiler_buffer_tracing_correlation_id_retirement_record_t>(),
    ];
    let mut largest = 0;
    let mut i = 0;
    while i < sizes.len() {
        if sizes[i] > largest {
            largest = sizes[i];
        }
        i += 1;
    }
    largest
};

/// Why a record was skipped. Each kind is warned about once.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Malformed {
    UnknownCategory,
    UnknownKind,
    Truncated,
    ZeroTimestamp,
    EndBeforeStart,
}

impl Malformed {
    pub const ALL: [Malformed; 5] = [
        Malformed::UnknownCategory,
        Malformed::UnknownKind,
        Malformed::Truncated,
        Malformed::ZeroTimestamp,
        Malformed::EndBeforeStart,
    ];

    pub fn describe(self) -> &'static str {
        match self {
            Malformed::UnknownCategory => "a record category this backend does not read",
            Malformed::UnknownKind => "a tracing kind this backend did not configure",
            Malformed::Truncated => "a payload smaller than its kind's fields",
            Malformed::ZeroTimestamp => "a zero timestamp",
            Malformed::EndBeforeStart => "an end timestamp before its start",
        }
    }
}

/// Where decoded records go, a method per kind.
///
/// Why not a returned [`Decoded`]: returned, a record was written field by
/// field and then copied out whole, and that copy stalled on the fields
/// just written (64% of decoding time in benches/pipeline's decode). Handed
/// to the method of its kind, inlined, it is written once, where it is
/// kept.
pub trait Records {
    fn kernel(&mut self, record: KernelDispatch);
    fn copy(&mut self, record: MemoryCopy);
    fn api_call(&mut self, record: HipApiCall);
    fn graph_launch(&mut self, record: GraphLaunch);
    fn retired(&mut self, correlation_id: u64);
}

/// Decodes the payload of one tracing record given its kind.
///
/// `payload` holds the bytes the header points at; the record's own leading
/// `size` field says how many of them are the record's.
pub fn decode(category: u32, kind: u32, payload: &[u8]) -> Result<Decoded, Malformed> {
    struct One(Option<Decoded>);
    impl Records for One {
        fn kernel(&mut self, record: KernelDispatch) {
            self.0 = Some(Decoded::Kernel(record));
        }
        fn copy(&mut self, record: MemoryCopy) {
            self.0 = Some(Decoded::Copy(record));
        }
        fn api_call(&mut self, record: HipApiCall) {
            self.0 = Some(Decoded::Api(record));
        }
        fn graph_launch(&mut self, record: GraphLaunch) {
            self.0 = Some(Decoded::GraphLaunch(record));
        }
        fn retired(&mut self, correlation_id: u64) {
            self.0 = Some(Decoded::Retired { correlation_id });
        }
    }
    let mut one = One(None);
    decode_into(category, kind, payload, &mut one)?;
    Ok(one.0.expect("a decoded record is handed on"))
}

/// [`decode`], handing the record to `out` instead of returning it.
#[inline]
pub fn decode_into(
    category: u32,
    kind: u32,
    payload: &[u8],
    out: &mut impl Records,
) -> Result<(), Malformed> {
    if category != rocprofiler_buffer_category_t::TRACING.0 {
        return Err(Malformed::UnknownCategory);
    }
    let record = Record::new(payload)?;
    match rocprofiler_buffer_tracing_kind_t(kind) {
        rocprofiler_buffer_tracing_kind_t::KERNEL_DISPATCH => out.kernel(decode_kernel(&record)?),
        rocprofiler_buffer_tracing_kind_t::MEMORY_COPY => out.copy(decode_copy(&record)?),
        rocprofiler_buffer_tracing_kind_t::HIP_RUNTIME_API => out.api_call(decode_api(&record)?),
        rocprofiler_buffer_tracing_kind_t::HIP_GRAPH => {
            out.graph_launch(decode_graph_launch(&record)?)
        }
        rocprofiler_buffer_tracing_kind_t::CORRELATION_ID_RETIREMENT => {
            type R = rocprofiler_buffer_tracing_correlation_id_retirement_record_t;
            let record = record.fields::<{ size_of::<R>() }>()?;
            out.retired(record.u64_at(offset_of!(R, internal_correlation_id)))
        }
        _ => return Err(Malformed::UnknownKind),
    }
    Ok(())
}

/// A record's bytes, bounded by the smaller of the buffer and its `size`.
struct Record<'a> {
    bytes: &'a [u8],
}

impl<'a> Record<'a> {
    #[inline]
    fn new(payload: &'a [u8]) -> Result<Record<'a>, Malformed> {
        if payload.len() < 8 {
            return Err(Malformed::Truncated);
        }
        let declared = u64::from_ne_bytes(payload[..8].try_into().expect("8 bytes"));
        let usable = usize::try_from(declared)
            .unwrap_or(usize::MAX)
            .min(payload.len());
        Ok(Record {
            bytes: &payload[..usable],
        })
    }

    /// The record's first `N` bytes, whose fields are then read at
    /// constant offsets with no bounds check left; `Truncated` when the
    /// record declares fewer.
    #[inline]
    fn fields<const N: usize>(&self) -> Result<Fields<'a, N>, Malformed> {
        self.bytes
            .get(..N)
            .and_then(|bytes| bytes.try_into().ok())
            .map(Fields)
            .ok_or(Malformed::Truncated)
    }
}

/// A record's leading bytes, known to hold every field read.
struct Fields<'a, const N: usize>(&'a [u8; N]);

impl<const N: usize> Fields<'_, N> {
    #[inline]
    fn u64_at(&self, offset: usize) -> u64 {
        u64::from_ne_bytes(
            self.0[offset..offset + 8]
                .try_into()
                .expect("a field inside the record"),
        )
    }

    #[inline]
    fn u32_at(&self, offset: usize) -> u32 {
        u32::from_ne_bytes(
            self.0[offset..offset + 4]
                .try_into()
                .expect("a field inside the record"),
        )
    }

    #[inline]
    fn interval(&self, start: usize, end: usize) -> Result<(u64, u64), Malformed> {
        let (start, end) = (self.u64_at(start), self.u64_at(end));
        if start == 0 || end == 0 {
            Err(Malformed::ZeroTimestamp)
        } else if end < start {
            Err(Malformed::EndBeforeStart)
        } else {
            Ok((start, end))
        }
    }
}

#[inline(always)]
fn decode_kernel(record: &Record) -> Result<KernelDispatch, Malformed> {
    type R = rocprofiler_buffer_tracing_kernel_dispatch_record_t;
    type I = rocprofiler_kernel_dispatch_info_t;
    // The dispatch info's reserved tail is not needed; SDKs that shrink the
    // record's declared size below the last field read are rejected.
    const INFO: usize = offset_of!(R, dispatch_info);
    let record = record.fields::<{ INFO + offset_of!(I, reserved_padding) }>()?;
    let (start_ns, end_ns) =
        record.interval(offset_of!(R, start_timestamp), offset_of!(R, end_timestamp))?;
    let dim3 = |at: usize| {
        [
            record.u32_at(at),
            record.u32_at(at + 4),
            record.u32_at(at + 8),
        ]
    };
    Ok(KernelDispatch {
        correlation_id: record.u64_at(offset_of!(R, correlation_id)),
        external_slot: record.u64_at(offset_of!(R, correlation_id) + 8),
        thread_id: record.u64_at(offset_of!(R, thread_id)),
        start_ns,
        end_ns,
        agent: AgentId(record.u64_at(INFO + offset_of!(I, agent_id))),
        queue: record.u64_at(INFO + offset_of!(I, queue_id)),
        kernel_id: record.u64_at(INFO + offset_of!(I, kernel_id)),
        dispatch_id: record.u64_at(INFO + offset_of!(I, dispatch_id)),
        scratch_bytes: record.u32_at(INFO + offset_of!(I, private_segment_size)),
        lds_bytes: record.u32_at(INFO + offset_of!(I, group_segment_size)),
        workgroup: dim3(INFO + offset_of!(I, workgroup_size)),
        grid: dim3(INFO + offset_of!(I, grid_size)),
    })
}

fn decode_copy(record: &Record) -> Result<MemoryCopy, Malformed> {
    type R = rocprofiler_buffer_tracing_memory_copy_record_t;
    let record = record.fields::<{ offset_of!(R, dst_address) }>()?;
    let (start_ns, end_ns) =
        record.interval(offset_of!(R, start_timestamp), offset_of!(R, end_timestamp))?;
    Ok(MemoryCopy {
        direction: copy_direction(record.u32_at(offset_of!(R, operation))),
        correlation_id: record.u64_at(offset_of!(R, correlation_id)),
        external_slot: record.u64_at(offset_of!(R, correlation_id) + 8),
        thread_id: record.u64_at(offset_of!(R, thread_id)),
        start_ns,
        end_ns,
        dst_agent: AgentId(record.u64_at(offset_of!(R, dst_agent_id))),
        src_agent: AgentId(record.u64_at(offset_of!(R, src_agent_id))),
        bytes: record.u64_at(offset_of!(R, bytes)),
    })
}

fn copy_direction(operation: u32) -> CopyDirection {
    match rocprofiler_memory_copy_operation_t(operation) {
        rocprofiler_memory_copy_operation_t::HOST_TO_HOST => CopyDirection::HostToHost,
        rocprofiler_memory_copy_operation_t::HOST_TO_DEVICE => CopyDirection::HostToDevice,
        rocprofiler_memory_copy_operation_t::DEVICE_TO_HOST => CopyDirection::DeviceToHost,
        rocprofiler_memory_copy_operation_t::DEVICE_TO_DEVICE => CopyDirection::DeviceToDevice,
        _ => CopyDirection::Unknown,
    }
}

fn decode_api(record: &Record) -> Result<HipApiCall, Malformed> {
    type R = rocprofiler_buffer_tracing_hip_api_record_t;
    let record = record.fields::<{ size_of::<R>() }>()?;
    let (start_ns, end_ns) =
        record.interval(offset_of!(R, start_timestamp), offset_of!(R, end_timestamp))?;
    Ok(HipApiCall {
        operation: record.u32_at(offset_of!(R, operation)) as i32,
        correlation_id: record.u64_at(offset_of!(R, correlation_id)),
        thread_id: record.u64_at(offset_of!(R, thread_id)),
        start_ns,
        end_ns,
    })
}

fn decode_graph_launch(record: &Record) -> Result<GraphLaunch, Malformed> {
    type R = rocprofiler_buffer_tracing_hip_graph_record_t;
    let record = record.fields::<{ size_of::<R>() }>()?;
    let (start_ns, end_ns) =
        record.interval(offset_of!(R, start_timestamp), offset_of!(R, end_timestamp))?;
    Ok(GraphLaunch {
        correlation_id: record.u64_at(offset_of!(R, correlation_id)),
        thread_id: record.u64_at(offset_of!(R, thread_id)),
        start_ns,
        end_ns,
        agent: AgentId(record.u64_at(offset_of!(R, agent_id))),
        queue: record.u64_at(offset_of!(R, queue_id)),
        graph_exec_id: record.u64_at(offset_of!(R, graph_exec_id)),
        kernel_dispatch_count: record.u64_at(offset_of!(R, kernel_dispatch_count)),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn bytes_of<T: Copy>(value: &T) -> Vec<u8> {
        let size = size_of::<T>();
        let mut out = vec![0u8; size];
        // SAFETY: T is a plain #[repr(C)] record; copying its bytes is defined.
        unsafe {
            std::ptr::copy_nonoverlapping(value as *const T as *const u8, out.as_mut_ptr(), size)
        };
        out
    }

    fn kernel(start: u64, end: u64) -> rocprofiler_buffer_tracing_kernel_dispatch_record_t {
        rocprofiler_buffer_tracing_kernel_dispatch_record_t {
            size: size_of::<rocprofiler_buffer_tracing_kernel_dispatch_record_t>() as u64,
            kind: rocprofiler_buffer_tracing_kind_t::KERNEL_DISPATCH,
            operation: rocprofiler_kernel_dispatch_operation_t::COMPLETE,
            correlation_id: rocprofiler_async_correlation_id_t {
                internal: 7,
                external: rocprofiler_user_data_t::from_value((3 << 32) | 5),
            },
            thread_id: 11,
            start_timestamp: start,
            end_timestamp: end,
            dispatch_info: rocprofiler_kernel_dispatch_info_t {
                agent_id: rocprofiler_agent_id_t { handle: 2 },
                queue_id: rocprofiler_queue_id_t { handle: 9 },
                kernel_id: 42,
                dispatch_id: 1000,
                group_segment_size: 64,
                private_segment_size: 16,
                workgroup_size: rocprofiler_dim3_t { x: 256, y: 1, z: 1 },
                grid_size: rocprofiler_dim3_t {
                    x: 4096,
                    y: 2,
                    z: 1,
                },
                ..Default::default()
            },
        }
    }

    const TRACING: u32 = rocprofiler_buffer_category_t::TRACING.0;
    const KERNEL: u32 = rocprofiler_buffer_tracing_kind_t::KERNEL_DISPATCH.0;

    #[test]
    fn kernel_fields_come_from_their_offsets() {
        let decoded = decode(TRACING, KERNEL, &bytes_of(&kernel(100, 200))).unwrap();
        let Decoded::Kernel(k) = decoded else {
            panic!("not a kernel: {decoded:?}")
        };
        assert_eq!(
            (k.correlation_id, k.external_slot, k.thread_id),
            (7, (3 << 32) | 5, 11)
        );
        assert_eq!(
            (k.start_ns, k.end_ns, k.agent, k.queue),
            (100, 200, AgentId(2), 9)
        );
        assert_eq!(
            (k.kernel_id, k.dispatch_id, k.lds_bytes, k.scratch_bytes),
            (42, 1000, 64, 16)
        );
        assert_eq!((k.workgroup, k.grid), ([256, 1, 1], [4096, 2, 1]));
    }

    #[test]
    fn malformed_records_are_named_not_read() {
        let good = bytes_of(&kernel(100, 200));
        assert_eq!(
            decode(TRACING, KERNEL, &good[..40]),
            Err(Malformed::Truncated)
        );
        let mut short_size = good.clone();
        short_size[..8].copy_from_slice(&40u64.to_ne_bytes());
        assert_eq!(
            decode(TRACING, KERNEL, &short_size),
            Err(Malformed::Truncated)
        );
        assert_eq!(
            decode(TRACING, KERNEL, &bytes_of(&kernel(0, 200))),
            Err(Malformed::ZeroTimestamp)
        );
        assert_eq!(
            decode(TRACING, KERNEL, &bytes_of(&kernel(300, 200))),
            Err(Malformed::EndBeforeStart)
        );
        assert_eq!(decode(TRACING, 999, &good), Err(Malformed::UnknownKind));
        assert_eq!(decode(2, KERNEL, &good), Err(Malformed::UnknownCategory));
        assert_eq!(decode(TRACING, KERNEL, &[]), Err(Malformed::Truncated));
    }

    #[test]
    fn retirement_carries_its_correlation_id() {
        let record = rocprofiler_buffer_tracing_correlation_id_retirement_record_t {
            size: 32,
            kind: rocprofiler_buffer_tracing_kind_t::CORRELATION_ID_RETIREMENT,
            timestamp: 5,
            internal_correlation_id: 77,
        };
        let kind = rocprofiler_buffer_tracing_kind_t::CORRELATION_ID_RETIREMENT.0;
        assert_eq!(
            decode(TRACING, kind, &bytes_of(&record)),
            Ok(Decoded::Retired { correlation_id: 77 })
        );
    }
}
