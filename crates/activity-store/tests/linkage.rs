//! CPU linkage: external id stacks, the correlation join, streams.

mod common;

use std::sync::{Arc, Barrier};
use std::thread;

use activity_store::{ActivityStore, ExternalDomain};
use common::{api_call, copy, graph_launch, kernel};

/// One column of every kernel row, gathered.
fn kernel_column<T>(
    frame: &activity_store::KernelFrame,
    of: impl Fn(activity_store::KernelRow) -> T,
) -> Vec<T> {
    frame.rows().map(of).collect()
}

#[test]
fn nested_pushes_link_each_launch_to_the_innermost_op() {
    let store = ActivityStore::default();
    let w = store.open_window(0).unwrap();
    store.push_external(ExternalDomain::Default, 100);
    store.capture_for_api_call(1);
    store.push_external(ExternalDomain::Default, 101);
    store.capture_for_api_call(2);
    assert_eq!(store.pop_external(ExternalDomain::Default), Some(101));
    store.capture_for_api_call(3);
    assert_eq!(store.pop_external(ExternalDomain::Default), Some(100));
    assert_eq!(store.pop_external(ExternalDomain::Default), None);
    store.capture_for_api_call(4); // nothing pushed
    store.push_kernels(&[kernel(1, 10), kernel(2, 20), kernel(3, 30), kernel(4, 40)]);
    store.close_window(w, 100).unwrap();
    let out = store.finalise(w).unwrap();
    assert_eq!(
        kernel_column(&out.kernels, |r| r.external_id_default),
        &[Some(100), Some(101), Some(100), None]
    );
    assert_eq!(
        kernel_column(&out.kernels, |r| r.external_id_user),
        &[None; 4]
    );
}

#[test]
fn the_two_domains_are_independent_stacks() {
    let store = ActivityStore::default();
    let w = store.open_window(0).unwrap();
    store.push_external(ExternalDomain::User, 7);
    store.push_external(ExternalDomain::Default, 100);
    store.capture_for_api_call(1);
    store.pop_external(ExternalDomain::Default);
    store.capture_for_api_call(2); // only the user range is left
    assert_eq!(store.pop_external(ExternalDomain::User), Some(7));
    store.push_kernels(&[kernel(1, 10), kernel(2, 20)]);
    store.push_api_calls(&[api_call(1, 9), api_call(2, 19)]);
    store.push_copy(copy(2, 21));
    store.close_window(w, 100).unwrap();
    let out = store.finalise(w).unwrap();
    assert_eq!(
        kernel_column(&out.kernels, |r| r.external_id_default),
        &[Some(100), None]
    );
    assert_eq!(
        kernel_column(&out.kernels, |r| r.external_id_user),
        &[Some(7), Some(7)]
    );
    assert_eq!(out.api_calls.external_id_default(), &[Some(100), None]);
    assert_eq!(out.api_calls.external_id_user(), &[Some(7), Some(7)]);
    assert_eq!(out.copies.external_id_user(), &[Some(7)]);
}

#[test]
fn every_dispatch_of_a_graph_launch_links_to_the_launching_op() {
    let store = ActivityStore::default();
    let w = store.open_window(0).unwrap();
    store.push_external(ExternalDomain::Default, 500);
    store.capture_for_api_call(77); // hipGraphLaunch's correlation id
    store.record_stream(77, 4);
    store.pop_external(ExternalDomain::Default);
    store.capture_for_api_call(78); // an eager launch with nothing pushed
    store.push_graph_launch(graph_launch(77, 5, 3));
    store.push_kernels(&[
        kernel(77, 10),
        kernel(77, 20),
        kernel(78, 25),
        kernel(77, 30),
    ]);
    store.close_window(w, 100).unwrap();
    let out = store.finalise(w).unwrap();
    assert_eq!(
        kernel_column(&out.kernels, |r| r.external_id_default),
        &[Some(500), Some(500), None, Some(500)]
    );
    assert_eq!(
        kernel_column(&out.kernels, |r| r.stream),
        &[Some(4), Some(4), None, Some(4)]
    );
    assert_eq!(out.graph_launches.external_id_default(), &[Some(500)]);
    assert_eq!(out.graph_launches.stream(), &[Some(4)]);
}

#[test]
fn streams_join_by_correlation_and_stay_none_when_unknown() {
    let store = ActivityStore::default();
    let w = store.open_window(0).unwrap();
    store.record_stream(1, 10);
    store.record_stream(2, 20);
    store.push_kernels(&[kernel(1, 10), kernel(3, 30)]);
    store.push_copy(copy(2, 15));
    store.close_window(w, 100).unwrap();
    let out = store.finalise(w).unwrap();
    assert_eq!(kernel_column(&out.kernels, |r| r.stream), &[Some(10), None]);
    assert_eq!(out.copies.stream(), &[Some(20)]);
}

#[test]
fn nothing_is_recorded_while_no_window_is_open() {
    let store = ActivityStore::default();
    store.push_external(ExternalDomain::Default, 1);
    store.capture_for_api_call(1);
    store.record_stream(1, 3);
    assert_eq!(store.resident_correlations(), 0);
    store.pop_external(ExternalDomain::Default);
}

#[test]
fn stacks_are_per_thread_and_launches_link_to_their_own_thread() {
    let store = Arc::new(ActivityStore::default());
    let w = store.open_window(0).unwrap();
    let threads = 4u64;
    let launches = 500u64;
    let barrier = Arc::new(Barrier::new(threads as usize));
    let handles: Vec<_> = (0..threads)
        .map(|t| {
            let store = Arc::clone(&store);
            let barrier = Arc::clone(&barrier);
            thread::spawn(move || {
                barrier.wait();
                for i in 0..launches {
                    let op = t * 1_000_000 + i;
                    let correlation = t * launches + i + 1;
                    store.push_external(ExternalDomain::Default, op);
                    store.capture_for_api_call(correlation);
                    store.pop_external(ExternalDomain::Default);
                    store.push_kernel(kernel(correlation, correlation));
                }
            })
        })
        .collect();
    for handle in handles {
        handle.join().unwrap();
    }
    store.close_window(w, u64::MAX).unwrap();
    let out = store.finalise(w).unwrap();
    assert_eq!(out.kernels.len() as u64, threads * launches);
    for row in out.kernels.rows() {
        let t = (row.correlation_id - 1) / launches;
        let i = (row.correlation_id - 1) % launches;
        assert_eq!(row.external_id_default, Some(t * 1_000_000 + i));
    }
    // Another thread's stack is not this thread's.
    store.push_external(ExternalDomain::User, 9);
    let other = Arc::clone(&store);
    let seen = thread::spawn(move || other.pop_external(ExternalDomain::User))
        .join()
        .unwrap();
    assert_eq!(seen, None);
    assert_eq!(store.pop_external(ExternalDomain::User), Some(9));
}

#[test]
fn two_stores_on_one_thread_do_not_share_stacks() {
    let a = ActivityStore::default();
    let b = ActivityStore::default();
    a.push_external(ExternalDomain::Default, 1);
    assert_eq!(b.pop_external(ExternalDomain::Default), None);
    assert_eq!(a.pop_external(ExternalDomain::Default), Some(1));
}

#[test]
fn work_launched_before_a_stop_that_starts_in_the_next_window_keeps_its_link() {
    let store = ActivityStore::default();
    let first = store.open_window(0).unwrap();
    store.push_external(ExternalDomain::Default, 42);
    store.capture_for_api_call(1);
    store.record_stream(1, 6);
    store.pop_external(ExternalDomain::Default);
    store.close_window(first, 100).unwrap();
    let second = store.open_window(101).unwrap();
    // The first window is finalised while the second is open.
    store.finalise(first).unwrap();
    store.push_kernel(kernel(1, 150));
    store.close_window(second, 200).unwrap();
    let out = store.finalise(second).unwrap();
    assert_eq!(
        kernel_column(&out.kernels, |r| r.external_id_default),
        &[Some(42)]
    );
    assert_eq!(kernel_column(&out.kernels, |r| r.stream), &[Some(6)]);
    assert_eq!(store.resident_correlations(), 0);
}
