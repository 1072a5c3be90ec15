//! The per-node counter table: for each (graph id, node ordinal), the mean
//! of each hardware counter over the node's replays. Why per node: a
//! graph's node keys are stable from replay to replay, so its counters can
//! be joined across launches, which no per-dispatch view gives.
use crate::trace::GpuEvent;
use serde::Serialize;
use std::collections::BTreeMap;

#[derive(Clone, Debug, Serialize)]
pub struct NodeCounters {
    pub graph_id: u64,
    pub ordinal: u32,
    pub kernel: String,
    /// Replays whose event carried counters.
    pub count: usize,
    /// Each counter's mean over the replays that carried it, in first-seen order.
    pub means: Vec<(String, f64)>,
}

pub fn node_rows(events: &[GpuEvent]) -> Vec<NodeCounters> {
    type Sums = Vec<(String, f64, usize)>;
    let mut groups: BTreeMap<(u64, u32), (String, usize, Sums)> = BTreeMap::new();
    for event in events.iter().filter(|e| !e.counters.is_empty()) {
        let (Some((graph_id, _)), Some(ordinal)) = (event.graph, event.ordinal()) else {
            continue;
        };
        let (_, count, sums) = groups
            .entry((graph_id, ordinal))
            .or_insert_with(|| (event.name.to_string(), 0, Vec::new()));
        *count += 1;
        for (name, value) in &event.counters {
            match sums.iter_mut().find(|(n, _, _)| n == name) {
                Some((_, sum, n)) => {
                    *sum += value;
                    *n += 1;
                }
                None => sums.push((name.clone(), *value, 1)),
            }
        }
    }
    groups
        .into_iter()
        .map(
            |((graph_id, ordinal), (kernel, count, sums))| NodeCounters {
                graph_id,
                ordinal,
                kernel,
                count,
                means: sums
                    .into_iter()
                    .map(|(name, sum, n)| (name, sum / n as f64))
                    .collect(),
            },
        )
        .collect()
}

/// The counters of any row, in first-seen order: the table's columns
/// (rows of different steps can carry different groups).
pub fn columns(rows: &[NodeCounters]) -> Vec<&str> {
    let mut names: Vec<&str> = Vec::new();
    for (name, _) in rows.iter().flat_map(|r| &r.means) {
        if !names.contains(&name.as_str()) {
            names.push(name);
        }
    }
    names
}

pub fn print(rows: &[NodeCounters]) {
    let names = columns(rows);
    let mut header = format!(
        "{:>9} {:>5}  {:<28} {:>6}",
        "graph id", "node", "kernel", "count"
    );
    for name in &names {
        header.push_str(&format!(" {:>16}", format!("mean {name}")));
    }
    println!("{header}");
    for row in rows {
        let mut line = format!(
            "{:>9} {:>5}  {:<28} {:>6}",
            row.graph_id, row.ordinal, row.kernel, row.count
        );
        for name in &names {
            match row.means.iter().find(|(n, _)| n == name) {
                Some((_, mean)) => line.push_str(&format!(" {mean:>16.1}")),
                None => line.push_str(&format!(" {:>16}", "-")),
            }
        }
        println!("{line}");
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::trace::GpuCategory;
    use std::sync::Arc;

    fn event(node: u32, counters: &[(&str, f64)]) -> GpuEvent {
        GpuEvent {
            name: Arc::from("k"),
            category: GpuCategory::Kernel,
            pid: 0,
            tid: 1,
            start_ns: 0,
            end_ns: 10,
            device: Some(0),
            stream: Some(1),
            dispatch_id: Some(1),
            correlation: None,
            external_id: None,
            graph: Some((1, (1 << 32) | u64::from(node))),
            bytes: None,
            direction: None,
            counters: counters.iter().map(|(n, v)| (n.to_string(), *v)).collect(),
            value: None,
            mangled_name: None,
            src_device: None,
            dst_device: None,
            replay_pass: None,
            thread_trace: None,
            counter_instances: Vec::new(),
        }
    }

    #[test]
    fn each_node_gets_the_mean_of_its_replays() {
        let events = [
            event(0, &[("SQ_WAVES", 10.0), ("GRBM_COUNT", 100.0)]),
            event(1, &[("SQ_WAVES", 5.0)]),
            event(0, &[("SQ_WAVES", 20.0), ("GRBM_COUNT", 300.0)]),
            event(1, &[]),
        ];
        let rows = node_rows(&events);
        assert_eq!(rows.len(), 2);
        assert_eq!((rows[0].ordinal, rows[0].count), (0, 2));
        assert_eq!(
            rows[0].means,
            vec![("SQ_WAVES".into(), 15.0), ("GRBM_COUNT".into(), 200.0)]
        );
        assert_eq!(
            (rows[1].ordinal, rows[1].count),
            (1, 1),
            "replays without counters are not counted"
        );
        assert_eq!(rows[1].means, vec![("SQ_WAVES".into(), 5.0)]);
    }

    #[test]
    fn columns_are_every_rows_counters_in_first_seen_order() {
        let mut later = event(0, &[("GRBM_GUI_ACTIVE", 7.0)]);
        later.graph = Some((2, 2 << 32));
        let rows = node_rows(&[event(0, &[("SQ_WAVES", 1.0), ("GRBM_COUNT", 2.0)]), later]);
        assert_eq!(
            columns(&rows),
            ["SQ_WAVES", "GRBM_COUNT", "GRBM_GUI_ACTIVE"]
        );
    }

    #[test]
    fn eager_kernels_have_no_row() {
        let mut eager = event(0, &[("SQ_WAVES", 1.0)]);
        eager.graph = None;
        assert!(node_rows(&[eager]).is_empty());
    }
}
