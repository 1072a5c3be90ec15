//! The checks of a workload that serde cannot express. Err is (path to the
//! field, what was expected).
use super::{Node, Op, Workload};
use std::collections::{HashMap, HashSet};

type Check = Result<(), (String, String)>;

fn dims(here: &str, field: &str, v: Option<[u32; 3]>) -> Check {
    match v {
        Some(d) if d.contains(&0) => Err((
            format!("{here}.{field}"),
            format!("expected three dimensions of at least 1, got {d:?}"),
        )),
        _ => Ok(()),
    }
}

/// A fill HIP accepts: at least one byte (ihipMemset does nothing for
/// none), starting within the first MiB of its allocation.
fn fill(here: &str, bytes: u64, offset: u64) -> Check {
    if bytes == 0 {
        return Err((format!("{here}.bytes"), "expected at least one byte".into()));
    }
    if offset >= 1 << 20 {
        return Err((
            format!("{here}.offset"),
            format!("expected an offset below 1 MiB (1048576), got {offset}"),
        ));
    }
    Ok(())
}

fn node(here: &str, ni: usize, n: &Node) -> Check {
    let kinds = n.kernel.is_some() as u8
        + n.memcpy.is_some() as u8
        + n.memset.is_some() as u8
        + n.host.is_some() as u8
        + n.empty as u8
        + n.event_record.is_some() as u8
        + n.event_wait.is_some() as u8;
    if kinds != 1 {
        return Err((
            here.to_string(),
            "expected exactly one of `kernel`, `memcpy`, `memset`, `host`, `empty`, `event_record` or `event_wait`".into(),
        ));
    }
    for (field, v) in [
        ("event_record", &n.event_record),
        ("event_wait", &n.event_wait),
    ] {
        if v.as_deref() == Some("") {
            return Err((format!("{here}.{field}"), "expected an event name".into()));
        }
    }
    if n.kernel.as_deref() == Some("") {
        return Err((format!("{here}.kernel"), "expected a kernel name".into()));
    }
    if n.kernel.is_none() && (n.grid.is_some() || n.block.is_some()) {
        let field = if n.grid.is_some() { "grid" } else { "block" };
        return Err((
            format!("{here}.{field}"),
            "expected only on a kernel node".into(),
        ));
    }
    dims(here, "grid", n.grid)?;
    dims(here, "block", n.block)?;
    if let Some(m) = &n.memset {
        fill(&format!("{here}.memset"), m.bytes, m.offset)?;
    }
    for (di, d) in n.deps.iter().enumerate() {
        if *d >= ni {
            return Err((
                format!("{here}.deps[{di}]"),
                format!(
                    "expected the index of an earlier node (0..{ni}): a dependency must exist when the node is added; got {d}"
                ),
            ));
        }
        if n.deps[..di].contains(d) {
            return Err((
                format!("{here}.deps[{di}]"),
                format!("expected distinct dependencies; {d} is listed twice"),
            ));
        }
    }
    Ok(())
}

impl Workload {
    pub(super) fn validate(&self) -> Check {
        if self.devices == 0 || self.devices > 64 {
            return Err((
                "devices".into(),
                format!("expected 1 to 64 devices, got {}", self.devices),
            ));
        }
        if let Some(q) = self.hw_queues_per_device {
            if q == 0 || q > 1024 {
                return Err((
                    "hw_queues_per_device".into(),
                    format!("expected 1 to 1024 queues, got {q}"),
                ));
            }
        }
        self.rocm
            .check()
            .map_err(|(f, m)| (format!("rocm.{f}"), m))?;
        let mut names = HashMap::new();
        for (gi, g) in self.graphs.iter().enumerate() {
            if let Some(prev) = names.insert(g.name.as_str(), gi) {
                return Err((
                    format!("graphs[{gi}].name"),
                    format!(
                        "expected a unique graph name; {:?} is also graphs[{prev}]",
                        g.name
                    ),
                ));
            }
            if g.nodes.is_empty() {
                return Err((
                    format!("graphs[{gi}].nodes"),
                    "expected at least one node".into(),
                ));
            }
            for (ni, n) in g.nodes.iter().enumerate() {
                node(&format!("graphs[{gi}].nodes[{ni}]"), ni, n)?;
            }
        }
        let mut shared: HashMap<&str, usize> = HashMap::new();
        for (si, e) in self.shared_execs.iter().enumerate() {
            let here = format!("shared_execs[{si}]");
            if self.graph_index(&e.graph).is_none() {
                return Err((
                    format!("{here}.graph"),
                    format!(
                        "expected the name of a graph in `graphs`, got {:?}",
                        e.graph
                    ),
                ));
            }
            if e.device >= self.devices {
                return Err((
                    format!("{here}.device"),
                    format!(
                        "expected a device index below {}, got {}",
                        self.devices, e.device
                    ),
                ));
            }
            if let Some(prev) = shared.insert(e.name.as_str(), si) {
                return Err((
                    format!("{here}.name"),
                    format!(
                        "expected a unique shared exec name; {:?} is also shared_execs[{prev}]",
                        e.name
                    ),
                ));
            }
        }
        if self.threads.is_empty() {
            return Err(("threads".into(), "expected at least one thread".into()));
        }
        for (ti, t) in self.threads.iter().enumerate() {
            self.validate_thread(ti, &t.ops, &shared)?;
        }
        Ok(())
    }

    fn validate_thread(&self, ti: usize, ops: &[Op], shared: &HashMap<&str, usize>) -> Check {
        let mut streams: HashSet<&str> = HashSet::new();
        let mut execs: HashSet<&str> = HashSet::new();
        let mut events: HashSet<&str> = HashSet::new();
        let mut ranges: HashSet<&str> = HashSet::new();
        for (oi, op) in ops.iter().enumerate() {
            let here = format!("threads[{ti}].ops[{oi}]");
            let need_stream = |s: &str, field: &str, streams: &HashSet<&str>| {
                if streams.contains(s) {
                    Ok(())
                } else {
                    Err((
                        format!("{here}.{field}"),
                        format!("expected a stream this thread created earlier (create_stream), got {s:?}"),
                    ))
                }
            };
            // Update and destroy need an exec of this thread: a shared exec
            // belongs to the setup thread.
            let need_own_exec = |e: &str, field: &str, execs: &HashSet<&str>| {
                if execs.contains(e) {
                    Ok(())
                } else if let Some(si) = shared.get(e) {
                    Err((
                        format!("{here}.{field}"),
                        format!("expected an exec this thread instantiated; {e:?} is shared_execs[{si}], which no thread may update or destroy"),
                    ))
                } else {
                    Err((
                        format!("{here}.{field}"),
                        format!("expected an exec this thread instantiated earlier and has not destroyed, got {e:?}"),
                    ))
                }
            };
            let need_graph = |g: &str, field: &str| {
                if self.graph_index(g).is_some() {
                    Ok(())
                } else {
                    Err((
                        format!("{here}.{field}"),
                        format!("expected the name of a graph in `graphs`, got {g:?}"),
                    ))
                }
            };
            let need_device = |d: u32, field: &str| {
                if d < self.devices {
                    Ok(())
                } else {
                    Err((
                        format!("{here}.{field}"),
                        format!("expected a device index below {}, got {d}", self.devices),
                    ))
                }
            };
            match op {
                Op::CreateStream { name, device } => {
                    need_device(*device, "create_stream.device")?;
                    if !streams.insert(name) {
                        return Err((
                            format!("{here}.create_stream.name"),
                            format!("expected a new stream name, {name:?} exists"),
                        ));
                    }
                }
                Op::DestroyStream { name } => {
                    need_stream(name, "destroy_stream.name", &streams)?;
                    streams.remove(name.as_str());
                }
                Op::Instantiate {
                    graph,
                    exec,
                    device,
                } => {
                    need_graph(graph, "instantiate.graph")?;
                    need_device(*device, "instantiate.device")?;
                    if !execs.insert(exec) {
                        return Err((
                            format!("{here}.instantiate.as"),
                            format!("expected a new exec name, {exec:?} is live"),
                        ));
                    }
                }
                Op::Launch { exec, stream, .. } => {
                    if !execs.contains(exec.as_str()) && !shared.contains_key(exec.as_str()) {
                        return Err((
                            format!("{here}.launch.exec"),
                            format!("expected an exec this thread instantiated earlier and has not destroyed, or a shared exec, got {exec:?}"),
                        ));
                    }
                    need_stream(stream, "launch.stream", &streams)?;
                }
                Op::Update { exec, graph } => {
                    need_own_exec(exec, "update.exec", &execs)?;
                    need_graph(graph, "update.graph")?;
                }
                Op::Destroy { exec } => {
                    need_own_exec(exec, "destroy.exec", &execs)?;
                    execs.remove(exec.as_str());
                }
                Op::Kernel {
                    name,
                    stream,
                    grid,
                    block,
                    ..
                } => {
                    if name.is_empty() {
                        return Err((
                            format!("{here}.kernel.name"),
                            "expected a kernel name".into(),
                        ));
                    }
                    dims(&here, "kernel.grid", *grid)?;
                    dims(&here, "kernel.block", *block)?;
                    need_stream(stream, "kernel.stream", &streams)?;
                }
                Op::Memcpy { stream, .. } => need_stream(stream, "memcpy.stream", &streams)?,
                Op::Memset {
                    stream,
                    bytes,
                    offset,
                    ..
                } => {
                    fill(&format!("{here}.memset"), *bytes, *offset)?;
                    need_stream(stream, "memset.stream", &streams)?
                }
                Op::Sleep { .. } | Op::PushMarker { .. } | Op::PopMarker {} => {}
                Op::MemcpyPeer {
                    stream,
                    src_device,
                    dst_device,
                    ..
                } => {
                    need_stream(stream, "memcpy_peer.stream", &streams)?;
                    need_device(*src_device, "memcpy_peer.src_device")?;
                    need_device(*dst_device, "memcpy_peer.dst_device")?;
                }
                Op::CreateEvent { name } => {
                    if !events.insert(name) {
                        return Err((
                            format!("{here}.create_event.name"),
                            format!("expected a new event name, {name:?} exists"),
                        ));
                    }
                }
                Op::RecordEvent { event, stream } | Op::WaitEvent { stream, event } => {
                    let what = if matches!(op, Op::RecordEvent { .. }) {
                        "record_event"
                    } else {
                        "wait_event"
                    };
                    need_stream(stream, &format!("{what}.stream"), &streams)?;
                    if !events.contains(event.as_str()) {
                        return Err((
                            format!("{here}.{what}.event"),
                            format!("expected an event this thread created earlier (create_event), got {event:?}"),
                        ));
                    }
                }
                Op::SynchronizeEvent { event } => {
                    if !events.contains(event.as_str()) {
                        return Err((
                            format!("{here}.synchronize_event.event"),
                            format!("expected an event this thread created earlier (create_event), got {event:?}"),
                        ));
                    }
                }
                Op::SynchronizeStream { stream } => {
                    need_stream(stream, "synchronize_stream.stream", &streams)?
                }
                Op::SynchronizeDevice { device } => {
                    need_device(*device, "synchronize_device.device")?
                }
                Op::HostFunc { stream, .. } => need_stream(stream, "host_func.stream", &streams)?,
                Op::RoctxMark { .. } | Op::RoctxPush { .. } | Op::RoctxPop {} => {}
                Op::RoctxStart { range, .. } => {
                    if !ranges.insert(range) {
                        return Err((
                            format!("{here}.roctx_start.as"),
                            format!("expected a new range name, {range:?} is running"),
                        ));
                    }
                }
                Op::RoctxStop { range } => {
                    if !ranges.remove(range.as_str()) {
                        return Err((
                            format!("{here}.roctx_stop.range"),
                            format!("expected a range this thread started (roctx_start) and has not stopped, got {range:?}"),
                        ));
                    }
                }
            }
        }
        Ok(())
    }
}
