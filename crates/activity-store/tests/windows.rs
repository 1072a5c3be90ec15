//! Bucketing by start time, several windows per session, and what is
//! refused where.

mod common;

use activity_store::{
    ActivityStore, Attributable, CopyDirection, DropCounts, KernelBatch, KernelDispatch,
    StoreConfig, WindowError, WindowId,
};
use common::{api_call, copy, graph_launch, kernel};

fn starts(frame: &activity_store::KernelFrame) -> Vec<u64> {
    frame.start_ns().to_vec()
}

#[test]
fn a_record_arriving_after_close_still_lands_in_the_window_its_start_names() {
    let store = ActivityStore::default();
    let w = store.open_window(1_000).unwrap();
    store.push_kernel(kernel(1, 1_100));
    store.close_window(w, 2_000).unwrap();
    // Delivered late by the completion thread, started before the stop.
    store.push_kernel(kernel(2, 1_900));
    store.push_kernel(kernel(3, 2_000)); // exactly at stop: inside
    let done = store.finalise(w).unwrap();
    assert_eq!(starts(&done.kernels), vec![1_100, 1_900, 2_000]);
    assert_eq!(store.drop_counts(), DropCounts::default());
}

#[test]
fn steps_one_two_and_four_five_of_six_each_come_out_whole() {
    // A loop of 6 steps of 1000 ns; the schedule records steps 1-2 and 4-5.
    let store = ActivityStore::default();
    let step = |n: u64| n * 1_000;
    let mut correlation = 0;
    let mut launch = |store: &ActivityStore, at: u64| {
        correlation += 1;
        store.push_kernel(kernel(correlation, at));
    };

    launch(&store, step(0) + 10); // step 0: no window
    let first = store.open_window(step(1)).unwrap();
    launch(&store, step(1) + 10);
    launch(&store, step(2) + 10);
    store.close_window(first, step(3) - 1).unwrap();
    launch(&store, step(3) + 10); // step 3: between windows
                                  // A straggler of step 2 delivered during step 3.
    launch(&store, step(2) + 900);
    let second = store.open_window(step(4)).unwrap();
    launch(&store, step(4) + 10);
    // Another step-2 straggler, delivered while the second window is open.
    launch(&store, step(2) + 950);
    launch(&store, step(5) + 10);
    store.close_window(second, step(6) - 1).unwrap();
    launch(&store, step(5) + 990); // late arrival for the second window

    // Finalise out of order: each must still hold exactly its own records.
    let second_out = store.finalise(second).unwrap();
    let first_out = store.finalise(first).unwrap();
    assert_eq!(starts(&first_out.kernels), vec![1_010, 2_010, 2_900, 2_950]);
    assert_eq!(starts(&second_out.kernels), vec![4_010, 5_010, 5_990]);
    assert_eq!(store.drop_counts().outside_windows, 2);
    assert_eq!(first_out.start_ns, 1_000);
    assert_eq!(first_out.stop_ns, 2_999);
    assert_eq!(store.resident_rows(), 0);
}

#[test]
fn records_outside_every_window_are_dropped_and_counted() {
    let store = ActivityStore::default();
    store.push_kernel(kernel(1, 50)); // before any window
    let w = store.open_window(100).unwrap();
    store.push_kernel(kernel(2, 99)); // just before start
    store.push_kernel(kernel(3, 150));
    store.close_window(w, 200).unwrap();
    store.push_kernel(kernel(4, 201)); // just after stop
    let out = store.finalise(w).unwrap();
    assert_eq!(out.kernels.len(), 1);
    assert_eq!(
        store.drop_counts(),
        DropCounts {
            outside_windows: 3,
            ..DropCounts::default()
        }
    );
}

#[test]
fn a_record_staged_while_open_that_started_after_the_stop_is_not_handed_out() {
    let store = ActivityStore::default();
    let w = store.open_window(100).unwrap();
    // Pushed while the window is open-ended, but the schedule then stops
    // the window at an earlier timestamp.
    store.push_kernel(kernel(1, 180));
    store.push_kernel(kernel(2, 250));
    store.close_window(w, 200).unwrap();
    let out = store.finalise(w).unwrap();
    assert_eq!(starts(&out.kernels), vec![180]);
    assert_eq!(store.drop_counts().outside_windows, 1);
    assert_eq!(out.stats.session_drops.outside_windows, 1);
}

#[test]
fn rows_after_the_stop_are_left_out_whether_staged_in_order_or_not() {
    // In order: the late rows are a tail.
    let store = ActivityStore::default();
    let w = store.open_window(0).unwrap();
    let in_order: Vec<_> = (0..5_000).map(|i| kernel(i + 1, 10 * i)).collect();
    store.push_kernels(&in_order);
    store.close_window(w, 10 * 3_999).unwrap();
    let out = store.finalise(w).unwrap();
    assert_eq!(
        starts(&out.kernels),
        (0..4_000).map(|i| 10 * i).collect::<Vec<_>>()
    );
    assert_eq!(out.stats.session_drops.outside_windows, 1_000);

    // Out of order, a late row between kept ones.
    let store = ActivityStore::default();
    let w = store.open_window(100).unwrap();
    store.push_kernels(&[kernel(1, 180), kernel(2, 250), kernel(3, 120)]);
    store.close_window(w, 200).unwrap();
    let out = store.finalise(w).unwrap();
    assert_eq!(starts(&out.kernels), vec![120, 180]);
    assert_eq!(out.kernels.correlation_id(), &[3, 1]);
    assert_eq!(out.stats.session_drops.outside_windows, 1);
}

#[test]
fn external_slots_stay_with_their_rows_from_the_first_one_on() {
    let store = ActivityStore::default();
    let w = store.open_window(0).unwrap();
    let mut records: Vec<_> = (0..5_000).map(|i| kernel(i / 32 + 1, 10 * i)).collect();
    records[10].external_slot = 77;
    records[4_500].external_slot = 99;
    store.push_kernels(&records);
    store.close_window(w, 10 * 4_899).unwrap();
    let out = store.finalise(w).unwrap();
    let slots: Vec<u64> = out.kernels.rows().map(|r| r.external_slot).collect();
    assert_eq!(slots.len(), 4_900);
    let carried: Vec<(usize, u64)> = slots
        .iter()
        .enumerate()
        .filter(|(_, &slot)| slot != 0)
        .map(|(i, &slot)| (i, slot))
        .collect();
    assert_eq!(carried, [(10, 77), (4_500, 99)]);
    let links: Vec<Option<u64>> = out
        .kernels
        .rows()
        .map(|r| r.launch_correlation_id)
        .collect();
    assert!(links
        .iter()
        .enumerate()
        .all(|(i, &l)| l == Some(i as u64 / 32 + 1)));
}

#[test]
fn rows_one_thread_staged_in_order_make_the_frame_sorting_makes() {
    // The same rows, staged by one thread in order (the frame takes them
    // run by run, unsorted) and split between two threads (the rows are
    // sorted): the same rows come out, routed or not.
    let records: Vec<_> = (0..9_000u64)
        .map(|i| {
            let mut r = kernel(i / 7 + 1, 10 * i);
            r.kernel_id = i % 5;
            r.queue = 3 + i % 2;
            r.external_slot = if i % 1_000 == 3 { i } else { 0 };
            r
        })
        .collect();
    let stop = 10 * 8_500;
    let frame = |threads: usize, routed: bool| {
        let store = ActivityStore::default();
        let w = store.open_window(0).unwrap();
        for c in 1..=records.len() as u64 / 7 + 1 {
            if routed {
                store.issue(c, 0);
            }
            store.record_stream(c, c % 3);
        }
        std::thread::scope(|s| {
            for part in records.chunks(records.len().div_ceil(threads)) {
                s.spawn(|| store.push_kernels(part));
            }
        });
        store.close_window(w, stop).unwrap();
        let out = store.finalise(w).unwrap();
        (
            out.kernels.rows().collect::<Vec<_>>(),
            out.stats.session_drops.outside_windows,
        )
    };
    for routed in [false, true] {
        let (one, late) = frame(1, routed);
        assert_eq!((frame(2, routed), routed), ((one.clone(), late), routed));
        let kept = if routed { records.len() } else { 8_501 };
        assert_eq!((one.len(), late), (kept, (records.len() - kept) as u64));
        assert_eq!(one[1_003].external_slot, 1_003);
        assert_eq!(one[1_004].launch_correlation_id, Some(1_004 / 7 + 1));
        assert_eq!(one[1_004].stream, Some((1_004 / 7 + 1) % 3));
    }
}

#[test]
fn a_record_for_a_finalised_window_is_counted_late_not_outside() {
    let store = ActivityStore::default();
    let w = store.open_window(100).unwrap();
    store.close_window(w, 200).unwrap();
    store.finalise(w).unwrap();
    store.push_kernel(kernel(1, 150));
    store.push_copy(copy(2, 160));
    let drops = store.drop_counts();
    assert_eq!(drops.after_finalise, 2);
    assert_eq!(drops.outside_windows, 0);
}

#[test]
fn late_work_of_a_finalised_window_is_not_placed_in_the_next_one() {
    // A call issued in window 0 whose kernel ran (and was delivered) only
    // after window 0 was finalised at its deadline, while window 1 is open.
    let store = ActivityStore::default();
    let first = store.open_window(100).unwrap();
    store.issue(7, 150);
    store.close_window(first, 200).unwrap();
    let second = store.open_window(300).unwrap();
    store.finalise(first).unwrap();
    store.push_kernel(kernel(7, 350)); // starts inside window 1
    store.issue(8, 360);
    store.push_kernel(kernel(8, 370));
    store.close_window(second, 400).unwrap();
    let done = store.finalise(second).unwrap();
    assert_eq!(
        done.kernels.correlation_id(),
        &[8],
        "only window 1's own work"
    );
    assert_eq!(store.drop_counts().after_finalise, 1);
}

#[test]
fn work_of_no_known_call_after_the_stop_makes_the_window_incomplete() {
    // A record processed on the runtime's async thread carries a correlation
    // id no call issued; if it starts after the window stopped, no window
    // can be named as its own, and the window says something may be missing.
    let store = ActivityStore::default();
    let w = store.open_window(100).unwrap();
    store.issue(1, 150);
    store.push_kernel(kernel(1, 160));
    store.retire(1);
    store.close_window(w, 200).unwrap();
    store.push_kernel(kernel(99, 250)); // id 99 was never issued
    let done = store.finalise(w).unwrap();
    assert_eq!(done.kernels.len(), 1);
    assert_eq!(
        done.completeness,
        activity_store::Completeness::Incomplete {
            outstanding: 0,
            unplaced: 1
        }
    );
    // Once another window is open, such a record is that window's business.
    let next = store.open_window(300).unwrap();
    store.push_kernel(kernel(98, 310));
    store.close_window(next, 400).unwrap();
    assert!(store.finalise(next).unwrap().completeness.is_complete());
}

#[test]
fn malformed_records_are_dropped_and_counted() {
    let store = ActivityStore::default();
    let w = store.open_window(100).unwrap();
    let mut backwards = kernel(1, 150);
    backwards.end_ns = 140;
    store.push_kernels(&[kernel(2, 120), backwards, kernel(3, 130)]);
    store.count_malformed(2); // the tool could not decode two records
    store.close_window(w, 200).unwrap();
    let out = store.finalise(w).unwrap();
    assert_eq!(starts(&out.kernels), vec![120, 130]);
    assert_eq!(store.drop_counts().malformed, 3);
}

#[test]
fn one_batch_spanning_two_windows_and_gaps_is_split_by_start() {
    let store = ActivityStore::default();
    let a = store.open_window(100).unwrap();
    store.close_window(a, 200).unwrap();
    let b = store.open_window(300).unwrap();
    store.close_window(b, 400).unwrap();
    store.push_kernels(&[
        kernel(1, 150),
        kernel(2, 350),
        kernel(3, 250),
        kernel(4, 160),
        kernel(5, 399),
    ]);
    assert_eq!(starts(&store.finalise(a).unwrap().kernels), vec![150, 160]);
    assert_eq!(starts(&store.finalise(b).unwrap().kernels), vec![350, 399]);
    assert_eq!(store.drop_counts().outside_windows, 1);
}

#[test]
fn every_kind_comes_out_in_its_own_frame_sorted_by_start() {
    let store = ActivityStore::default();
    let w = store.open_window(0).unwrap();
    store.push_kernels(&[kernel(2, 30), kernel(1, 10)]);
    store.push_copies(&[copy(4, 25), copy(3, 5)]);
    store.push_api_calls(&[api_call(2, 20), api_call(1, 2)]);
    store.push_graph_launch(graph_launch(9, 40, 3));
    store.close_window(w, 1_000).unwrap();
    let out = store.finalise(w).unwrap();

    assert_eq!(out.kernels.correlation_id(), &[1, 2]);
    assert_eq!(out.copies.start_ns(), &[5, 25]);
    assert_eq!(out.copies.direction(), &[CopyDirection::HostToDevice; 2]);
    assert_eq!(out.api_calls.operation(), &[3, 3]);
    assert_eq!(out.api_calls.correlation_id(), &[1, 2]);
    assert_eq!(out.graph_launches.kernel_dispatch_count(), &[3]);
    assert_eq!(out.stats.kernels, 2);
    assert_eq!(out.stats.copies, 2);
    assert_eq!(out.stats.api_calls, 2);
    assert_eq!(out.stats.graph_launches, 1);
    assert_eq!(out.stats.records(), 7);

    let row = out.kernels.row(1).unwrap();
    assert_eq!(row.start_ns, 30);
    assert_eq!(row.grid, [256, 1, 1]);
    assert_eq!(row.stream, None);
    assert!(out.kernels.row(2).is_none());
    assert_eq!(out.kernels.rows().map(|r| r.correlation_id).sum::<u64>(), 3);
}

#[test]
fn the_verifier_fills_graph_keys_in_place() {
    let store = ActivityStore::default();
    let w = store.open_window(0).unwrap();
    store.push_kernels(&[kernel(1, 10), kernel(1, 20)]);
    store.close_window(w, 100).unwrap();
    let mut out = store.finalise(w).unwrap();
    assert!(out.kernels.rows().all(|r| r.graph_id.is_none()));
    out.kernels.set_graph_key(1, 5, (5 << 32) | 1);
    assert_eq!(
        out.kernels.row(1).unwrap().graph_node_id,
        Some((5 << 32) | 1)
    );
    assert_eq!(out.kernels.row(0).unwrap().graph_id, None);
}

#[test]
fn window_misuse_is_refused_with_a_reason() {
    let store = ActivityStore::default();
    let w = store.open_window(100).unwrap();
    assert_eq!(
        store.open_window(150),
        Err(WindowError::AnotherWindowOpen { open: w })
    );
    assert_eq!(store.finalise(w).unwrap_err(), WindowError::NotClosed(w));
    assert_eq!(
        store.close_window(w, 50),
        Err(WindowError::StopBeforeStart {
            start_ns: 100,
            stop_ns: 50
        })
    );
    store.close_window(w, 200).unwrap();
    assert_eq!(
        store.close_window(w, 300),
        Err(WindowError::AlreadyClosed(w))
    );
    assert_eq!(
        store.open_window(200),
        Err(WindowError::StartsBeforePreviousStop {
            start_ns: 200,
            previous_stop_ns: 200
        })
    );
    store.finalise(w).unwrap();
    assert_eq!(
        store.finalise(w).unwrap_err(),
        WindowError::AlreadyFinalised(w)
    );
    // An id this store never handed out (from another store).
    let other = ActivityStore::default();
    let first = other.open_window(0).unwrap();
    other.close_window(first, 1).unwrap();
    let never: WindowId = other.open_window(2).unwrap();
    assert_eq!(
        store.finalise(never).unwrap_err(),
        WindowError::Unknown(never)
    );
    // Display says why, for the log.
    assert!(WindowError::NotClosed(w).to_string().contains("still open"));
}

#[test]
fn drop_counts_display_names_every_reason() {
    let drops = DropCounts {
        outside_windows: 1,
        after_finalise: 2,
        over_limit: 3,
        malformed: 4,
    };
    assert_eq!(
        drops.to_string(),
        "10 dropped (1 outside windows, 2 after finalise, 3 over limit, 4 malformed)"
    );
    let _ = StoreConfig::default();
}

#[test]
fn device_work_started_after_stop_stays_in_its_launch_window() {
    let store = ActivityStore::default();
    let first = store.open_window(100).unwrap();
    store.issue(7, 150); // the launch call, inside the first window
    store.close_window(first, 200).unwrap();
    let second = store.open_window(300).unwrap();
    store.issue(8, 350);
    // The GPU ran launch 7's kernel after the first window stopped, even
    // after the second opened; launch 8's kernel ran inside the second.
    store.push_kernel(common::kernel(7, 320));
    store.push_kernel(common::kernel(8, 360));
    store.retire(7);
    store.retire(8);
    store.close_window(second, 400).unwrap();
    let first = store.finalise(first).unwrap();
    let second = store.finalise(second).unwrap();
    assert_eq!(first.kernels.correlation_id(), &[7]);
    assert_eq!(second.kernels.correlation_id(), &[8]);
    assert_eq!(store.drop_counts().total(), 0);
    assert_eq!(store.resident_correlations(), 0);
}

#[test]
fn device_work_of_unknown_launches_is_placed_by_start_time() {
    let store = ActivityStore::default();
    let window = store.open_window(100).unwrap();
    store.push_kernel(common::kernel(99, 150)); // never issued: by start time
    store.push_kernel(common::kernel(98, 250)); // never issued, after the stop
    store.close_window(window, 200).unwrap();
    let window = store.finalise(window).unwrap();
    assert_eq!(window.kernels.correlation_id(), &[99]);
    assert_eq!(store.drop_counts().outside_windows, 1);
}

#[test]
fn a_batch_split_between_windows_gives_each_only_the_shapes_its_rows_name() {
    // One batch's tables hold every shape it saw; a window's frame must
    // name only those of the rows staged in it, first seen first.
    let store = ActivityStore::default();
    let first = store.open_window(1_000).unwrap();
    store.close_window(first, 2_000).unwrap();
    let second = store.open_window(3_000).unwrap();
    let with_kernel = |correlation_id, start_ns, kernel_id| KernelDispatch {
        kernel_id,
        ..kernel(correlation_id, start_ns)
    };
    let mut batch: KernelBatch = [
        with_kernel(1, 1_100, 7),
        with_kernel(2, 3_100, 8),
        with_kernel(3, 1_200, 9),
        with_kernel(4, 3_200, 7),
    ]
    .into_iter()
    .collect();
    store.push_kernel_batch(&batch);
    // Reused, as the tool reuses its batch: the kept tables name 7, 8, 9.
    batch.clear();
    batch.push(with_kernel(5, 3_300, 9));
    batch.push(with_kernel(6, 3_400, 8));
    store.push_kernel_batch(&batch);
    store.close_window(second, 4_000).unwrap();
    let kernels_of = |frame: &activity_store::KernelFrame| -> Vec<u64> {
        let shapes = frame.launch_shapes();
        frame
            .launch_shape_ids()
            .iter()
            .map(|&s| shapes[s as usize].kernel_id)
            .collect()
    };
    let first_out = store.finalise(first).unwrap();
    let shapes_of = |frame: &activity_store::KernelFrame| -> Vec<u64> {
        frame.launch_shapes().iter().map(|s| s.kernel_id).collect()
    };
    assert_eq!(shapes_of(&first_out.kernels), vec![7, 9]);
    assert_eq!(kernels_of(&first_out.kernels), vec![7, 9]);
    let second_out = store.finalise(second).unwrap();
    assert_eq!(shapes_of(&second_out.kernels), vec![8, 7, 9]);
    assert_eq!(kernels_of(&second_out.kernels), vec![8, 7, 9, 8]);
}

#[test]
fn rows_out_of_order_far_into_a_window_come_out_sorted_and_whole() {
    // One thread's rows, in order but for one swapped pair far into the
    // window, and a tail that started after the stop: finalising must not
    // keep what it appended before it found the pair.
    let rows = 10_000u64;
    let record = |i: u64| KernelDispatch {
        external_slot: i % 3,
        kernel_id: i % 5,
        ..kernel(1 + i / 4, 1_000 + 10 * i)
    };
    let mut order: Vec<u64> = (0..rows).collect();
    for swapped in [None, Some(9_000usize)] {
        if let Some(at) = swapped {
            order.swap(at, at + 1);
        }
        let store = ActivityStore::default();
        let w = store.open_window(1_000).unwrap();
        store.push_kernels(&order.iter().map(|&i| record(i)).collect::<Vec<_>>());
        let stop = 1_000 + 10 * (rows - 100);
        store.close_window(w, stop).unwrap();
        let done = store.finalise(w).unwrap();
        let want: Vec<KernelDispatch> = (0..=rows - 100).map(record).collect();
        assert_eq!(done.kernels.len(), want.len(), "swapped at {swapped:?}");
        for (row, want) in done.kernels.rows().zip(&want) {
            assert_eq!(
                (row.start_ns, row.correlation_id, row.launch_correlation_id),
                (
                    want.start_ns,
                    want.correlation_id,
                    Some(want.correlation_id)
                ),
            );
            assert_eq!(
                (row.kernel_id, row.external_slot),
                (want.kernel_id, want.external_slot)
            );
        }
        assert_eq!(
            store.drop_counts().outside_windows,
            99,
            "swapped at {swapped:?}"
        );
    }
}
