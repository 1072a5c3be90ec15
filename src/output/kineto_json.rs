//! Finished windows as kineto's chrome trace: GPU kernels and copies on
//! device lanes (pid = device, tid = stream), HIP runtime calls on their CPU
//! threads, ac2g flow arrows from each call to the work it launched, and the
//! attribution and completeness summary as trace metadata.
//!
//! Keys, value types and fixed strings come from src/vocabulary.rs, which
//! the C++ face reads through the bridge: both writers put the same args on
//! the same events (tests/ctest compares them event by event).
use super::chrome_trace::{Arg, ChromeTraceWriter, CompleteEvent, FlowEnd};
use crate::vocabulary::{self as vocab, name, MetadataKey as K};
use crate::window::FinishedWindow;
use std::collections::{HashMap, HashSet};
use std::io::{self, Write};

/// CPU threads are drawn in one process lane, after the devices.
const HOST_PID: u64 = 1_000_000;

/// A (pid, tid) row on a device: a stream, a stream-less kernel's HSA
/// queue, or the device's stream-less copies.
struct Lane {
    tid: u64,
    name: String,
}

impl Lane {
    fn stream(stream: u64) -> Lane {
        Lane {
            tid: stream,
            name: vocab::stream_lane_name(stream),
        }
    }

    fn copies() -> Lane {
        Lane {
            tid: vocab::COPY_LANE_ID.into(),
            name: vocab::COPY_LANE_NAME.to_string(),
        }
    }
}

/// Queue lanes get dense ids per device, in order of first use, above the
/// stream ids (kineto's lane ids are 32-bit).
#[derive(Default)]
struct QueueLanes(HashMap<(u64, u64), u64>);

impl QueueLanes {
    fn lane(&mut self, device: u64, queue: u64) -> Lane {
        let next = self.0.keys().filter(|(d, _)| *d == device).count() as u64;
        let tid = *self
            .0
            .entry((device, queue))
            .or_insert(u64::from(vocab::QUEUE_LANE_BASE) + next);
        Lane {
            tid,
            name: vocab::queue_lane_name(queue),
        }
    }
}

/// What one correlation id launched in a window.
#[derive(Default)]
struct Launched {
    kernels: u32,
    copies: u32,
    /// The first kernel's index in `window.kernels`.
    first_kernel: usize,
}

/// Launches by correlation id: flow arrows and the kernel-launch args of
/// runtime calls. Work whose launching call is unknown is left out.
fn launches_of(window: &FinishedWindow) -> HashMap<u64, Launched> {
    let mut out: HashMap<u64, Launched> = HashMap::new();
    for (index, kernel) in window.kernels.iter().enumerate() {
        if let Some(correlation) = kernel.correlation {
            let entry = out.entry(correlation).or_default();
            if entry.kernels == 0 {
                entry.first_kernel = index;
            }
            entry.kernels += 1;
        }
    }
    for correlation in window.copies.iter().filter_map(|c| c.correlation) {
        out.entry(correlation).or_default().copies += 1;
    }
    out
}

/// Writes `windows` and returns the number of kernel events written.
pub fn write_windows<W: Write>(windows: &[FinishedWindow], out: W) -> io::Result<usize> {
    let mut writer = ChromeTraceWriter::begin(out)?;
    let mut kernels_written = 0;
    let mut lanes_named: HashSet<(u64, Option<u64>)> = HashSet::new();
    let mut queue_lanes = QueueLanes::default();
    let mut summary_lines: Vec<String> = Vec::new();
    for (index, window) in windows.iter().enumerate() {
        for lane in &window.devices {
            if lanes_named.insert((lane.device as u64, None)) {
                writer.lane_name(
                    lane.device as u64,
                    None,
                    &format!("GPU {} ({})", lane.device, lane.name),
                )?;
            }
        }
        if lanes_named.insert((HOST_PID, None)) {
            writer.lane_name(HOST_PID, None, "CPU (HIP runtime)")?;
        }
        let launched = launches_of(window);
        let kernel_name = |index: u32| {
            window
                .kernel_names
                .get(index as usize)
                .map(String::as_str)
                .unwrap_or("kernel")
        };
        for call in &window.runtime {
            let mut args: Vec<(&str, Arg)> = vec![
                (name(K::Cid), Arg::Int(call.cid.into())),
                (name(K::Correlation), Arg::Int(call.correlation)),
            ];
            if let Some(external_id) = call.external_id {
                args.push(("External id", Arg::Int(external_id)));
            }
            let launch = launched.get(&call.correlation);
            // A call that launched exactly one kernel and nothing else is a
            // kernel launch: it names the kernel and its shape.
            if let Some(l) = launch.filter(|l| l.kernels == 1 && l.copies == 0) {
                let kernel = &window.kernels[l.first_kernel];
                args.extend([
                    (name(K::Kernel), Arg::Str(kernel_name(kernel.name_index))),
                    (name(K::Grid), Arg::Dim3(kernel.grid)),
                    (name(K::Block), Arg::Dim3(kernel.block)),
                    (name(K::SharedMemory), Arg::Int(kernel.lds_bytes.into())),
                ]);
            }
            writer.complete(&CompleteEvent {
                name: call.name,
                category: "cuda_runtime",
                pid: HOST_PID,
                tid: call.thread_id,
                start_ns: call.start_ns,
                end_ns: call.end_ns,
                args: &args,
            })?;
            if launch.is_some() {
                writer.flow(
                    FlowEnd::Start,
                    call.correlation,
                    HOST_PID,
                    call.thread_id,
                    call.start_ns,
                )?;
            }
        }
        let mut flows_finished: HashSet<u64> = HashSet::new();
        for kernel in &window.kernels {
            let device = kernel.device as u64;
            let lane = match kernel.stream {
                Some(stream) => Lane::stream(stream),
                None => queue_lanes.lane(device, kernel.queue),
            };
            if lanes_named.insert((device, Some(lane.tid))) {
                writer.lane_name(device, Some(lane.tid), &lane.name)?;
            }
            let name_of_kernel = kernel_name(kernel.name_index);
            let mut args: Vec<(&str, Arg)> = vec![(name(K::Device), Arg::Int(device))];
            if let Some(stream) = kernel.stream {
                args.push((name(K::Stream), Arg::Int(stream)));
            }
            args.push((name(K::HsaQueue), Arg::Int(kernel.queue)));
            if let Some(correlation) = kernel.correlation {
                args.push((name(K::Correlation), Arg::Int(correlation)));
            }
            args.extend([
                (name(K::DispatchId), Arg::Int(kernel.dispatch_id)),
                (name(K::Kind), Arg::Str(vocab::KERNEL_KIND)),
                (name(K::Kernel), Arg::Str(name_of_kernel)),
                (name(K::Grid), Arg::Dim3(kernel.grid)),
                (name(K::Block), Arg::Dim3(kernel.block)),
                (name(K::SharedMemory), Arg::Int(kernel.lds_bytes.into())),
                (
                    name(K::ScratchMemory),
                    Arg::Int(kernel.scratch_bytes.into()),
                ),
            ]);
            if let (Some(_), Some(external_id)) = (kernel.correlation, kernel.external_id) {
                args.push(("External id", Arg::Int(external_id)));
            }
            if let Some(graph) = kernel.graph {
                args.push((name(K::GraphId), Arg::Int(graph.graph_id)));
                args.push((name(K::GraphNodeId), Arg::Int(graph.graph_node_id)));
            }
            for (counter, value) in &kernel.counters {
                args.push((counter.as_str(), Arg::Float(*value)));
            }
            writer.complete(&CompleteEvent {
                name: name_of_kernel,
                category: "kernel",
                pid: device,
                tid: lane.tid,
                start_ns: kernel.start_ns,
                end_ns: kernel.end_ns,
                args: &args,
            })?;
            if let Some(correlation) = kernel.correlation.filter(|c| flows_finished.insert(*c)) {
                writer.flow(
                    FlowEnd::Finish,
                    correlation,
                    device,
                    lane.tid,
                    kernel.start_ns,
                )?;
            }
            kernels_written += 1;
        }
        for copy in &window.copies {
            let device = copy.device as u64;
            let lane = copy.stream.map_or_else(Lane::copies, Lane::stream);
            if lanes_named.insert((device, Some(lane.tid))) {
                writer.lane_name(device, Some(lane.tid), &lane.name)?;
            }
            let mut args: Vec<(&str, Arg)> = vec![(name(K::Device), Arg::Int(device))];
            if let Some(stream) = copy.stream {
                args.push((name(K::Stream), Arg::Int(stream)));
            }
            // Copies run on no HSA queue the SDK reports: 0, as kineto writes.
            args.push((name(K::HsaQueue), Arg::Int(0)));
            if let Some(correlation) = copy.correlation {
                args.push((name(K::Correlation), Arg::Int(correlation)));
            }
            args.extend([
                (name(K::Kind), Arg::Str(vocab::copy_kind(copy.direction))),
                (name(K::Bytes), Arg::Int(copy.bytes)),
            ]);
            if copy.end_ns > copy.start_ns {
                // bytes per ns = GB/s
                let gbps = copy.bytes as f64 / (copy.end_ns - copy.start_ns) as f64;
                args.push((name(K::MemoryBandwidth), Arg::Float(gbps)));
            }
            args.extend([
                (name(K::SrcDevice), Arg::Signed(copy.src_device)),
                (name(K::DstDevice), Arg::Signed(copy.dst_device)),
            ]);
            if let (Some(_), Some(external_id)) = (copy.correlation, copy.external_id) {
                args.push(("External id", Arg::Int(external_id)));
            }
            if let Some(graph) = copy.graph {
                args.push((name(K::GraphId), Arg::Int(graph.graph_id)));
                args.push((name(K::GraphNodeId), Arg::Int(graph.graph_node_id)));
            }
            writer.complete(&CompleteEvent {
                name: vocab::copy_event_name(copy.direction),
                category: "gpu_memcpy",
                pid: device,
                tid: lane.tid,
                start_ns: copy.start_ns,
                end_ns: copy.end_ns,
                args: &args,
            })?;
            if let Some(correlation) = copy.correlation.filter(|c| flows_finished.insert(*c)) {
                writer.flow(
                    FlowEnd::Finish,
                    correlation,
                    device,
                    lane.tid,
                    copy.start_ns,
                )?;
            }
        }
        summary_lines.extend(
            window
                .summary
                .iter()
                .map(|line| format!("window {index}: {line}")),
        );
    }
    let metadata = serde_json::to_string(&summary_lines).expect("strings serialise");
    writer.finish(&[("kineto_rocm", metadata)])?;
    Ok(kernels_written)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::window::{CopyActivity, CopyDirection, KernelActivity, RuntimeActivity};
    use serde_json::Value;

    fn kernel(correlation: u64, stream: Option<u64>, linked: bool) -> KernelActivity {
        KernelActivity {
            name_index: 0,
            device: 1,
            stream,
            queue: 0x7f00_0000_1000,
            correlation: linked.then_some(correlation),
            dispatch_id: correlation,
            start_ns: 2_000,
            end_ns: 3_000,
            grid: [256, 1, 1],
            block: [64, 1, 1],
            lds_bytes: 0,
            scratch_bytes: 0,
            external_id: Some(42),
            user_external_id: None,
            graph: None,
            counters: Vec::new(),
        }
    }

    fn copy(stream: Option<u64>, linked: bool) -> CopyActivity {
        CopyActivity {
            direction: CopyDirection::HostToDevice,
            device: 1,
            stream,
            correlation: linked.then_some(9),
            bytes: 4096,
            src_device: -1,
            dst_device: 1,
            start_ns: 4_000,
            end_ns: 5_000,
            external_id: Some(42),
            graph: None,
        }
    }

    fn launch(correlation: u64) -> RuntimeActivity {
        RuntimeActivity {
            name: "hipLaunchKernel",
            cid: 7,
            thread_id: 11,
            correlation,
            start_ns: 1_000,
            end_ns: 1_500,
            external_id: Some(42),
        }
    }

    fn trace(window: FinishedWindow) -> Value {
        let mut out = Vec::new();
        write_windows(&[window], &mut out).unwrap();
        serde_json::from_slice(&out).expect("valid JSON")
    }

    fn complete<'a>(doc: &'a Value, cat: &str) -> Vec<&'a Value> {
        doc["traceEvents"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|e| e["ph"] == "X" && e["cat"] == cat)
            .collect()
    }

    fn flow_ids(doc: &Value, ph: &str) -> Vec<u64> {
        doc["traceEvents"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|e| e["ph"] == ph)
            .map(|e| e["id"].as_u64().unwrap())
            .collect()
    }

    fn lane_names(doc: &Value) -> Vec<(u64, String)> {
        doc["traceEvents"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|e| e["name"] == "thread_name" && e["pid"] == 1)
            .map(|e| {
                (
                    e["tid"].as_u64().unwrap(),
                    e["args"]["name"].as_str().unwrap().to_string(),
                )
            })
            .collect()
    }

    #[test]
    fn known_stream_and_launch_give_stream_lane_correlation_flow_and_external_id() {
        let doc = trace(FinishedWindow {
            kernel_names: vec!["k".into()],
            kernels: vec![kernel(5, Some(3), true)],
            runtime: vec![launch(5)],
            ..Default::default()
        });
        let k = complete(&doc, "kernel")[0];
        assert_eq!(k["tid"], 3);
        assert_eq!(k["args"]["stream"], 3);
        assert_eq!(k["args"]["correlation"], 5);
        assert_eq!(k["args"]["External id"], 42);
        assert_eq!(k["args"]["grid"], serde_json::json!([256, 1, 1]));
        assert_eq!(flow_ids(&doc, "s"), vec![5]);
        assert_eq!(flow_ids(&doc, "f"), vec![5]);
        // The launch call names the one kernel it launched.
        let call = complete(&doc, "cuda_runtime")[0];
        assert_eq!(call["args"]["cid"], 7);
        assert_eq!(call["args"]["kernel"], "k");
        assert_eq!(call["args"]["block"], serde_json::json!([64, 1, 1]));
        assert_eq!(lane_names(&doc), vec![(3, "stream 3".to_string())]);
    }

    #[test]
    fn unknown_launch_gives_no_correlation_flow_or_external_id() {
        let doc = trace(FinishedWindow {
            kernel_names: vec!["k".into()],
            kernels: vec![kernel(5, Some(3), false)],
            copies: vec![copy(Some(3), false)],
            runtime: vec![launch(5)],
            ..Default::default()
        });
        for event in complete(&doc, "kernel")
            .into_iter()
            .chain(complete(&doc, "gpu_memcpy"))
        {
            let args = event["args"].as_object().unwrap();
            assert!(!args.contains_key("correlation"), "{event}");
            assert!(!args.contains_key("External id"), "{event}");
        }
        assert!(flow_ids(&doc, "s").is_empty() && flow_ids(&doc, "f").is_empty());
        let call = complete(&doc, "cuda_runtime")[0];
        assert!(call["args"].get("kernel").is_none(), "{call}");
    }

    #[test]
    fn unknown_stream_puts_kernels_on_their_queue_lane_and_copies_on_the_copy_lane() {
        let mut other_queue = kernel(6, None, true);
        other_queue.queue = 0x7f00_0000_2000;
        let doc = trace(FinishedWindow {
            kernel_names: vec!["k".into()],
            kernels: vec![kernel(5, None, true), other_queue, kernel(7, None, true)],
            copies: vec![copy(None, true)],
            ..Default::default()
        });
        let kernels = complete(&doc, "kernel");
        let base = u64::from(vocab::QUEUE_LANE_BASE);
        let tids: Vec<u64> = kernels.iter().map(|k| k["tid"].as_u64().unwrap()).collect();
        assert_eq!(tids, vec![base, base + 1, base]);
        for k in &kernels {
            assert!(k["args"].get("stream").is_none(), "{k}");
        }
        let c = complete(&doc, "gpu_memcpy")[0];
        assert_eq!(c["tid"], u64::from(vocab::COPY_LANE_ID));
        assert!(c["args"].get("stream").is_none(), "{c}");
        assert_eq!(c["args"]["hsa_queue"], 0);
        let mut names = lane_names(&doc);
        names.sort();
        assert_eq!(
            names,
            vec![
                (u64::from(vocab::COPY_LANE_ID), "copies".to_string()),
                (base, "HW queue 0x7f0000001000".to_string()),
                (base + 1, "HW queue 0x7f0000002000".to_string()),
            ]
        );
    }

    #[test]
    fn every_arg_has_the_catalog_type() {
        let doc = trace(FinishedWindow {
            kernel_names: vec!["k".into()],
            kernels: vec![kernel(5, Some(3), true)],
            copies: vec![copy(Some(3), true)],
            runtime: vec![launch(5)],
            ..Default::default()
        });
        let by_name: HashMap<&str, vocab::ValueType> = vocab::CATALOG
            .iter()
            .map(|spec| (spec.name, spec.value))
            .collect();
        let mut checked = 0;
        for event in doc["traceEvents"].as_array().unwrap() {
            if event["ph"] != "X" {
                continue;
            }
            for (key, value) in event["args"].as_object().unwrap() {
                if key == "External id" {
                    continue;
                }
                use vocab::ValueType as T;
                let want = by_name
                    .get(key.as_str())
                    .unwrap_or_else(|| panic!("{key} not in the catalog"));
                let ok = match *want {
                    T::Int => value.is_i64(),
                    T::Uint => value.is_u64(),
                    T::Float => value.is_f64(),
                    T::Str => value.is_string(),
                    T::IntArray => value
                        .as_array()
                        .is_some_and(|a| a.iter().all(Value::is_i64)),
                };
                assert!(ok, "{key} = {value} is not {want:?}");
                checked += 1;
            }
        }
        assert!(checked > 20, "only {checked} args checked");
    }
}
