//! A finalised window becomes a [`FinishedWindow`]: attributed (when graph
//! attribution is on), each record given its device, kernel name and links,
//! and a summary of what the window holds and what it may lack.
use super::attribution::{Attribution, WindowSpan};
use super::counters;
use super::devices::Devices;
use super::replay;
use super::thread_traces;
use super::timeline::{self, TimelineContext, TimelineEvidence};
use crate::window::{
    id, CopyActivity, DeviceLane, FinishedWindow, GraphNode, KernelActivity, KernelExtras,
    ReplayPass, RuntimeActivity,
};
use activity_store::{CopyDirection, FastMap, FinalisedWindow};
use rocprofiler_sys::hip_runtime_api_id;
use std::collections::HashMap;

/// What finishing a window reads from the session around it.
pub struct Context<'a> {
    /// `None`: graph attribution is off.
    pub attribution: Option<&'a Attribution>,
    /// Kernel id -> name, from the code-object callbacks.
    pub kernel_names: &'a HashMap<u64, String>,
    pub devices: &'a Devices,
    /// Records the SDK dropped this session (its buffer was full).
    pub sdk_dropped: u64,
    /// Add to an SDK timestamp to get system_clock nanoseconds.
    pub system_clock_offset_ns: i64,
    pub timeline: &'a TimelineEvidence,
}

pub fn finish(mut window: FinalisedWindow, span: &WindowSpan, cx: &Context) -> FinishedWindow {
    let devices = cx.devices;
    let mut summary = Vec::new();
    let mut may_miss_records = false;
    let mut launches = HashMap::new();
    let mut links_proven = false;
    if let Some(attribution) = cx.attribution {
        let drops = window.stats.session_drops;
        // Every record of the window's calls is here: its correlation ids
        // all retired and nothing was dropped.
        let calls_complete = window.stats.over_limit == 0
            && drops.over_limit == 0
            && drops.malformed == 0
            && cx.sdk_dropped == 0;
        let complete =
            calls_complete && window.completeness.is_complete() && drops.after_finalise == 0;
        let attributed = attribution.attribute(&mut window, span, complete, calls_complete);
        summary.extend(attributed.lines);
        may_miss_records = attributed.overflowed;
        launches = attributed.launches;
        links_proven = attributed.links_proven;
    } else {
        summary.push("graph_attribution=disabled".to_string());
    }
    let mut kernel_names: Vec<String> = Vec::new();
    let mut kernel_symbols: Vec<String> = Vec::new();
    let k = &window.kernels;
    // What depends on a kernel's launch shape (its name) or place (its
    // device) alone is worked out once per distinct one, not per record.
    let mut name_index: FastMap<u64, u32> = FastMap::default();
    let shape_names: Vec<u32> = k
        .launch_shapes()
        .iter()
        .map(|shape| {
            *name_index.entry(shape.kernel_id).or_insert_with(|| {
                let symbol = cx
                    .kernel_names
                    .get(&shape.kernel_id)
                    .cloned()
                    .unwrap_or_else(|| format!("kernel_{}", shape.kernel_id));
                kernel_names.push(timeline::demangle(&symbol));
                kernel_symbols.push(symbol);
                (kernel_names.len() - 1) as u32
            })
        })
        .collect();
    let place_devices: Vec<u32> = k
        .places()
        .iter()
        .map(|p| devices.index_of(p.agent.0))
        .collect();
    let (shape_ids, place_ids) = (k.launch_shape_ids(), k.place_ids());
    let (starts, ends, dispatches) = (k.start_ns(), k.end_ns(), k.dispatch_id());
    let mut kernels = Vec::with_capacity(k.len());
    let mut unnumbered_passes = 0u64;
    for row in 0..k.len() {
        let (shape_id, place_id) = (shape_ids[row] as usize, place_ids[row] as usize);
        let shape = &k.launch_shapes()[shape_id];
        let link = k.link(row);
        let (start_ns, end_ns, dispatch_id) = (starts[row], ends[row], dispatches[row]);
        let kernel = KernelActivity {
            name_index: shape_names[shape_id],
            device: place_devices[place_id],
            stream: id(link.stream),
            queue: k.places()[place_id].queue,
            correlation: id(link.launch_correlation_id),
            dispatch_id,
            start_ns,
            end_ns,
            grid: shape.grid,
            block: shape.workgroup,
            lds_bytes: shape.lds_bytes,
            scratch_bytes: shape.scratch_bytes,
            external_id: id(link.external_id_default),
            user_external_id: id(link.external_id_user),
            graph: k
                .graph_key(row)
                .and_then(|(graph_id, graph_node_id)| GraphNode::new(graph_id, graph_node_id)),
            branch: None,
            extras: None,
        };
        match replay::passes_of(dispatch_id, start_ns, end_ns) {
            None => {
                let extras = pass_extras(
                    counters::take(dispatch_id, 0),
                    thread_traces::take(dispatch_id, 0),
                    None,
                );
                kernels.push(KernelActivity { extras, ..kernel })
            }
            Some(passes) => {
                for pass in passes {
                    unnumbered_passes += u64::from(pass.number.is_none());
                    let extras = pass_extras(
                        pass.number
                            .map(|p| counters::take(dispatch_id, p))
                            .unwrap_or_default(),
                        pass.number
                            .and_then(|p| thread_traces::take(dispatch_id, p)),
                        pass.number.map(|pass_number| ReplayPass {
                            pass: pass_number,
                            passes: pass.passes,
                        }),
                    );
                    kernels.push(KernelActivity {
                        start_ns: pass.start_ns,
                        end_ns: pass.end_ns,
                        extras,
                        ..kernel.clone()
                    });
                }
            }
        }
    }
    if unnumbered_passes > 0 {
        summary.push(format!(
            "replay_passes_unnumbered={unnumbered_passes} (a replayed dispatch's passes did not all arrive in its window)"
        ));
    }
    let copies = window
        .copies
        .rows()
        .map(|row| {
            let device_agent = if row.direction == CopyDirection::DeviceToHost {
                row.src_agent
            } else {
                row.dst_agent
            };
            CopyActivity {
                direction: row.direction,
                device: devices.index_of(device_agent.0),
                stream: row.stream,
                correlation: row.launch_correlation_id,
                bytes: row.bytes,
                src_device: device_or_host(devices, row.src_agent.0),
                dst_device: device_or_host(devices, row.dst_agent.0),
                start_ns: row.start_ns,
                end_ns: row.end_ns,
                external_id: row.external_id_default,
                graph: graph_node(row.graph_id, row.graph_node_id),
            }
        })
        .collect();
    let runtime = window
        .api_calls
        .rows()
        .map(|row| RuntimeActivity {
            name: hip_runtime_api_id::name(row.operation).unwrap_or("hipApi"),
            cid: row.operation as u32,
            thread_id: row.thread_id,
            correlation: row.correlation_id,
            start_ns: row.start_ns,
            end_ns: row.end_ns,
            external_id: row.external_id_default,
        })
        .collect();
    summary.push(
        match (window.completeness.is_complete(), may_miss_records) {
            (true, true) => "completeness=incomplete (a hardware queue may have overflowed: \
                             records ROCr processed later on its async thread may be missing)"
                .to_string(),
            _ => format!("completeness={}", window.completeness),
        },
    );
    summary.push(format!("window_records={}", window.stats.records()));
    summary.push(format!("dropped={}", window.stats.session_drops));
    summary.push(format!("sdk_dropped={}", cx.sdk_dropped));
    let mut out = FinishedWindow {
        kernel_names,
        kernel_symbols,
        kernels,
        copies,
        runtime,
        devices: devices
            .lanes()
            .into_iter()
            .map(|(device, name)| DeviceLane { device, name })
            .collect(),
        system_clock_offset_ns: cx.system_clock_offset_ns,
        ..FinishedWindow::default()
    };
    let tcx = TimelineContext {
        links_proven,
        launches: &launches,
        closed_ns: span.closed_ns,
    };
    timeline::finish(cx.timeline, &window, &mut out, &tcx, &mut summary);
    out.summary = summary;
    out
}

/// One dispatch pass's extras. Nearly every kernel has none: then nothing
/// is built, which a call of `KernelExtras::boxed` on an empty value would
/// (about 100 instructions a kernel in finishing).
#[inline]
fn pass_extras(
    taken: counters::Taken,
    thread_trace: Option<String>,
    replay: Option<ReplayPass>,
) -> Option<Box<KernelExtras>> {
    // Taken apart first: dropping the empty vectors is then inline, where
    // dropping a `Taken` is a call.
    let counters::Taken { sums, instances } = taken;
    if sums.is_empty() && instances.is_empty() && thread_trace.is_none() && replay.is_none() {
        return None;
    }
    KernelExtras {
        counters: sums,
        counter_instances: instances,
        thread_trace,
        replay,
        ..KernelExtras::default()
    }
    .boxed()
}

/// Both halves of a key, or none: a record is never shown half-attributed.
fn graph_node(graph_id: Option<u64>, graph_node_id: Option<u64>) -> Option<GraphNode> {
    GraphNode::new(graph_id?, graph_node_id?)
}

fn device_or_host(devices: &Devices, agent: u64) -> i64 {
    if devices.knows(agent) {
        devices.index_of(agent) as i64
    } else {
        -1
    }
}
