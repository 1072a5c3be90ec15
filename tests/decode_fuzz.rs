//! A bounded fuzz of the buffer-record decoder: valid records of every kind
//! the tool reads, mutated at random (bytes flipped, sizes lied about,
//! payloads cut short, kinds and categories changed). The decoder must never
//! panic or read past the bytes it was given, and whatever it accepts must be
//! well formed. Runs for KINETO_ROCM_FUZZ_SECONDS (default 2) in every test
//! run, from KINETO_ROCM_FUZZ_SEED (decimal or 0x-hex; the default is
//! printed, so is the seed of every run).
use kineto_rocm::tool::sdk::decode::{decode, Decoded, Malformed};
use rocprofiler_sys::*;
use std::mem::size_of;
use std::time::{Duration, Instant};

const DEFAULT_SEED: u64 = 0x9E37_79B9_7F4A_7C15;

/// xorshift64*: deterministic, seedable, no dependency.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n.max(1)
    }
}

fn bytes_of<T: Copy>(value: &T) -> Vec<u8> {
    let mut out = vec![0u8; size_of::<T>()];
    // SAFETY: T is a plain #[repr(C)] record; copying its bytes is defined.
    unsafe {
        std::ptr::copy_nonoverlapping(value as *const T as *const u8, out.as_mut_ptr(), out.len())
    };
    out
}

fn seeds() -> Vec<(u32, Vec<u8>)> {
    let kernel = rocprofiler_buffer_tracing_kernel_dispatch_record_t {
        size: size_of::<rocprofiler_buffer_tracing_kernel_dispatch_record_t>() as u64,
        kind: rocprofiler_buffer_tracing_kind_t::KERNEL_DISPATCH,
        operation: rocprofiler_kernel_dispatch_operation_t::COMPLETE,
        correlation_id: rocprofiler_async_correlation_id_t {
            internal: 5,
            external: rocprofiler_user_data_t::from_value((1 << 32) | 3),
        },
        thread_id: 9,
        start_timestamp: 1_000,
        end_timestamp: 2_000,
        dispatch_info: rocprofiler_kernel_dispatch_info_t {
            kernel_id: 4,
            dispatch_id: 8,
            ..Default::default()
        },
    };
    let copy = rocprofiler_buffer_tracing_memory_copy_record_t {
        size: size_of::<rocprofiler_buffer_tracing_memory_copy_record_t>() as u64,
        kind: rocprofiler_buffer_tracing_kind_t::MEMORY_COPY,
        operation: rocprofiler_memory_copy_operation_t::HOST_TO_DEVICE,
        correlation_id: Default::default(),
        thread_id: 1,
        start_timestamp: 10,
        end_timestamp: 20,
        dst_agent_id: Default::default(),
        src_agent_id: Default::default(),
        bytes: 64,
        dst_address: Default::default(),
        src_address: Default::default(),
    };
    let api = rocprofiler_buffer_tracing_hip_api_record_t {
        size: size_of::<rocprofiler_buffer_tracing_hip_api_record_t>() as u64,
        kind: rocprofiler_buffer_tracing_kind_t::HIP_RUNTIME_API,
        operation: hip_runtime_api_id::hipGraphLaunch,
        correlation_id: Default::default(),
        start_timestamp: 1,
        end_timestamp: 2,
        thread_id: 3,
    };
    let graph = rocprofiler_buffer_tracing_hip_graph_record_t {
        size: size_of::<rocprofiler_buffer_tracing_hip_graph_record_t>() as u64,
        kind: rocprofiler_buffer_tracing_kind_t::HIP_GRAPH,
        operation: 0,
        correlation_id: Default::default(),
        thread_id: 1,
        start_timestamp: 5,
        end_timestamp: 6,
        agent_id: Default::default(),
        queue_id: Default::default(),
        graph_exec_id: rocprofiler_graph_exec_id_t { handle: 1 },
        kernel_dispatch_count: 32,
    };
    let retired = rocprofiler_buffer_tracing_correlation_id_retirement_record_t {
        size: size_of::<rocprofiler_buffer_tracing_correlation_id_retirement_record_t>() as u64,
        kind: rocprofiler_buffer_tracing_kind_t::CORRELATION_ID_RETIREMENT,
        timestamp: 1,
        internal_correlation_id: 5,
    };
    vec![
        (kernel.kind.0, bytes_of(&kernel)),
        (copy.kind.0, bytes_of(&copy)),
        (api.kind.0, bytes_of(&api)),
        (graph.kind.0, bytes_of(&graph)),
        (retired.kind.0, bytes_of(&retired)),
    ]
}

fn check_accepted(record: &Decoded) {
    let (start, end) = match record {
        Decoded::Kernel(k) => (k.start_ns, k.end_ns),
        Decoded::Copy(c) => (c.start_ns, c.end_ns),
        Decoded::Api(a) => (a.start_ns, a.end_ns),
        Decoded::GraphLaunch(g) => (g.start_ns, g.end_ns),
        Decoded::Retired { .. } => return,
    };
    assert!(
        start != 0 && end != 0 && start <= end,
        "accepted {record:?}"
    );
}

#[test]
fn the_decoder_survives_mutated_records() {
    let seconds = std::env::var("KINETO_ROCM_FUZZ_SECONDS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(2);
    let deadline = Instant::now() + Duration::from_secs(seconds);
    let seeds = seeds();
    let tracing = rocprofiler_buffer_category_t::TRACING.0;
    let seed = std::env::var("KINETO_ROCM_FUZZ_SEED").map_or(DEFAULT_SEED, |s| {
        let s = s.trim();
        match s.strip_prefix("0x") {
            Some(hex) => u64::from_str_radix(hex, 16),
            None => s.parse(),
        }
        .unwrap_or_else(|_| panic!("KINETO_ROCM_FUZZ_SEED: not a seed: {s}"))
    });
    eprintln!("decoder fuzz: KINETO_ROCM_FUZZ_SEED={seed:#x} (default {DEFAULT_SEED:#x})");
    // xorshift never leaves 0.
    let mut rng = Rng(seed.max(1));
    let (mut cases, mut accepted) = (0u64, 0u64);
    let mut rejected = std::collections::HashMap::<Malformed, u64>::new();
    // The seeds decode as themselves.
    for (kind, bytes) in &seeds {
        check_accepted(&decode(tracing, *kind, bytes).expect("seed decodes"));
    }
    while Instant::now() < deadline || cases < 10_000 {
        let (mut kind, seed) = seeds[rng.below(seeds.len() as u64) as usize].clone();
        let mut bytes = seed;
        let mut category = tracing;
        for _ in 0..=rng.below(4) {
            match rng.below(6) {
                0 if !bytes.is_empty() => {
                    let at = rng.below(bytes.len() as u64) as usize;
                    bytes[at] ^= 1 << rng.below(8);
                }
                1 => bytes.truncate(rng.below(bytes.len() as u64 + 1) as usize),
                2 if bytes.len() >= 8 => {
                    let lie = [0, 4, 8, 16, rng.below(4096), u64::MAX][rng.below(6) as usize];
                    bytes[..8].copy_from_slice(&lie.to_ne_bytes());
                }
                3 => kind = rng.below(40) as u32,
                4 => category = rng.below(5) as u32,
                _ if !bytes.is_empty() => {
                    let at = rng.below(bytes.len() as u64) as usize;
                    let field = at - at % 8;
                    if field + 8 <= bytes.len() {
                        bytes[field..field + 8].copy_from_slice(&rng.next().to_ne_bytes());
                    }
                }
                _ => {}
            }
        }
        match decode(category, kind, &bytes) {
            Ok(record) => {
                check_accepted(&record);
                accepted += 1;
            }
            Err(defect) => *rejected.entry(defect).or_default() += 1,
        }
        cases += 1;
    }
    eprintln!("decoder fuzz: {cases} cases, {accepted} accepted, rejected by defect: {rejected:?}");
    // Both paths exercised: mutants the decoder must read, and each defect.
    assert!(
        accepted > 0,
        "the fuzz never produced a record the decoder accepts"
    );
    for defect in [
        Malformed::Truncated,
        Malformed::UnknownKind,
        Malformed::UnknownCategory,
    ] {
        assert!(
            rejected.get(&defect).copied().unwrap_or(0) > 0,
            "the fuzz never produced {defect:?}"
        );
    }
}
