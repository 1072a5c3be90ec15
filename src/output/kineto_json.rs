//! Finished windows as kineto's chrome trace: GPU kernels and copies on
//! device lanes (pid = device, tid = stream), HIP runtime calls on their CPU
//! threads, ac2g flow arrows from each call to the work it launched, and the
//! attribution and completeness summary as trace metadata.
use super::chrome_trace::{Arg, ChromeTraceWriter, CompleteEvent, FlowEnd};
use crate::bridge::ffi::WindowActivities;
use std::collections::HashSet;
use std::io::{self, Write};

/// CPU threads are drawn in one process lane, after the devices.
const HOST_PID: u64 = 1_000_000;

/// Writes `windows` and returns the number of kernel events written.
pub fn write_windows<W: Write>(windows: &[WindowActivities], out: W) -> io::Result<usize> {
    let mut writer = ChromeTraceWriter::begin(out)?;
    let mut kernels_written = 0;
    let mut lanes_named: HashSet<(u64, Option<u64>)> = HashSet::new();
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
        let launched: HashSet<u64> = window
            .kernels
            .iter()
            .map(|k| k.correlation)
            .chain(window.copies.iter().map(|c| c.correlation))
            .collect();
        for call in &window.runtime {
            let mut args: Vec<(&str, Arg)> = vec![("correlation", Arg::Int(call.correlation))];
            if call.has_external_id {
                args.push(("External id", Arg::Int(call.external_id)));
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
            if launched.contains(&call.correlation) {
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
            if lanes_named.insert((kernel.device as u64, Some(kernel.stream))) {
                writer.lane_name(
                    kernel.device as u64,
                    Some(kernel.stream),
                    &format!("stream {}", kernel.stream),
                )?;
            }
            let name = window
                .kernel_names
                .get(kernel.name_index as usize)
                .map(String::as_str)
                .unwrap_or("kernel");
            let mut args: Vec<(&str, Arg)> = vec![
                ("device", Arg::Int(kernel.device as u64)),
                ("stream", Arg::Int(kernel.stream)),
                ("hsa_queue", Arg::Int(kernel.queue)),
                ("correlation", Arg::Int(kernel.correlation)),
                ("dispatch id", Arg::Int(kernel.dispatch_id)),
                ("kernel", Arg::Str(name)),
                (
                    "grid",
                    Arg::Dim3([kernel.grid_x, kernel.grid_y, kernel.grid_z]),
                ),
                (
                    "block",
                    Arg::Dim3([kernel.block_x, kernel.block_y, kernel.block_z]),
                ),
                ("shared memory", Arg::Int(kernel.lds_bytes as u64)),
                ("scratch memory", Arg::Int(kernel.scratch_bytes as u64)),
            ];
            if kernel.has_external_id {
                args.push(("External id", Arg::Int(kernel.external_id)));
            }
            if kernel.has_graph {
                args.push(("graph id", Arg::Int(kernel.graph_id)));
                args.push(("graph node id", Arg::Int(kernel.graph_node_id)));
            }
            writer.complete(&CompleteEvent {
                name,
                category: "kernel",
                pid: kernel.device as u64,
                tid: kernel.stream,
                start_ns: kernel.start_ns,
                end_ns: kernel.end_ns,
                args: &args,
            })?;
            if flows_finished.insert(kernel.correlation) {
                writer.flow(
                    FlowEnd::Finish,
                    kernel.correlation,
                    kernel.device as u64,
                    kernel.stream,
                    kernel.start_ns,
                )?;
            }
            kernels_written += 1;
        }
        for copy in &window.copies {
            let name = format!("Memcpy {}", copy.direction);
            let mut args: Vec<(&str, Arg)> = vec![
                ("device", Arg::Int(copy.device as u64)),
                ("stream", Arg::Int(copy.stream)),
                ("correlation", Arg::Int(copy.correlation)),
                ("bytes", Arg::Int(copy.bytes)),
            ];
            if copy.has_external_id {
                args.push(("External id", Arg::Int(copy.external_id)));
            }
            if copy.has_graph {
                args.push(("graph id", Arg::Int(copy.graph_id)));
                args.push(("graph node id", Arg::Int(copy.graph_node_id)));
            }
            writer.complete(&CompleteEvent {
                name: &name,
                category: "gpu_memcpy",
                pid: copy.device as u64,
                tid: copy.stream,
                start_ns: copy.start_ns,
                end_ns: copy.end_ns,
                args: &args,
            })?;
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
