//! Memory follows the pending windows, not the session: once a window is
//! finalised, nothing of its records or correlations stays behind.

mod common;

use activity_store::{ActivityStore, ExternalDomain};
use common::{api_call, graph_launch, kernel};

#[test]
fn finalising_every_window_leaves_nothing_resident() {
    let store = ActivityStore::default();
    let mut correlation = 0u64;
    for k in 0..20u64 {
        let base = k * 10_000;
        let w = store.open_window(base).unwrap();
        for i in 0..1_000u64 {
            correlation += 1;
            let at = base + i;
            store.push_external(ExternalDomain::Default, correlation);
            store.capture_for_api_call(correlation);
            store.record_stream(correlation, 1);
            store.issue(correlation, at);
            store.pop_external(ExternalDomain::Default);
            store.push_api_call(api_call(correlation, at));
            store.push_kernel(kernel(correlation, at + 1));
            store.retire(correlation);
        }
        assert_eq!(store.resident_rows(), 2_000);
        assert!(store.resident_correlations() >= 1_000);
        store.close_window(w, base + 5_000).unwrap();
        let out = store.finalise(w).unwrap();
        assert_eq!(out.kernels.len(), 1_000);
        assert!(out.completeness.is_complete());
        assert_eq!(store.resident_rows(), 0);
        assert_eq!(store.resident_correlations(), 0, "after window {k}");
    }
}

#[test]
fn back_to_back_windows_keep_at_most_the_previous_windows_links() {
    // Each window opens before the previous one is finalised (a schedule
    // with no gap): links of the previous window are kept for stragglers
    // that start in the next one, but no further back.
    let store = ActivityStore::default();
    let launches = 500u64;
    let mut previous = None;
    let mut peak = 0;
    for k in 0..30u64 {
        let base = k * 10_000;
        let w = store.open_window(base).unwrap();
        if let Some(previous) = previous {
            store.finalise(previous).unwrap();
        }
        for i in 0..launches {
            let correlation = k * launches + i + 1;
            store.push_external(ExternalDomain::User, k);
            store.capture_for_api_call(correlation);
            store.pop_external(ExternalDomain::User);
            store.push_graph_launch(graph_launch(correlation, base + i, 1));
        }
        peak = peak.max(store.resident_correlations());
        store.close_window(w, base + 9_000).unwrap();
        previous = Some(w);
    }
    assert!(peak <= 2 * launches as usize, "peak {peak}");
    let last = store.finalise(previous.unwrap()).unwrap();
    assert_eq!(last.graph_launches.external_id_user(), &[Some(29); 500]);
    assert_eq!(store.resident_correlations(), 0);
    assert_eq!(store.resident_rows(), 0);
}
