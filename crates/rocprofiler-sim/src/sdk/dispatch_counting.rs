//! The dispatch counting service, callback flavour
//! (dispatch_counting_service.h; counters/controller.cpp
//! `configure_dispatch`, counters/dispatch_handlers.cpp `queue_cb` and
//! `completed_cb`, counters/sample_processing.cpp): per-dispatch counters.
//!
//! - Configuring it names a context still being built (else
//!   ERROR_CONTEXT_INVALID: `get_mutable_registered_context` finds none);
//!   a context may hold several such services.
//! - `queue_cb`: when a kernel packet is intercepted, every active context's
//!   service with a dispatch callback is asked, with the dispatch's
//!   internal correlation id and dispatch info (no timestamps yet; the
//!   external correlation id is not modelled here), for a counter
//!   config; 0 collects nothing for that service.
//! - `process_callback_data`: once the dispatch completed, the record
//!   callback gets the dispatch data, now with its timestamps, one record
//!   per counter instance (`dispatch_id` and `agent_id` set) and the user
//!   data the dispatch callback wrote: each counter's instances in the
//!   catalog's instance order (the SDK's order is aqlprofile's sample
//!   order), their ids encoded as counters/id_decode.hpp does
//!   (dimensions.rs).
//! - A config made for another agent than the dispatch's collects nothing
//!   here (the SDK builds its packets from the config's agent; this model
//!   does not guess what that reads on another GPU).
use super::context::{contexts, with_building_ctx};
use super::counters::{config, counter_values};
use super::dimensions::{position, DIM_BITS};
use super::exports::guard;
use super::intercept::{dispatch_record, DispatchInfo};
use super::kernel_replay::switched_off;
use rocprofiler_sys as sys;
use std::ffi::c_void;
use std::sync::atomic::Ordering;

type Status = sys::rocprofiler_status_t;

/// One configured callback counting service.
#[derive(Clone)]
pub(crate) struct CountingService {
    dispatch: sys::rocprofiler_dispatch_counting_service_cb_t,
    dispatch_args: usize,
    record: sys::rocprofiler_dispatch_counting_record_cb_t,
    record_args: usize,
}

/// A dispatch one service asked counters for.
struct Pending {
    service: CountingService,
    agent: u64,
    counters: Vec<u64>,
    /// The user data the dispatch callback wrote (its value: the union
    /// holds a pointer, which may not cross threads as such).
    user_data: u64,
}

/// What the services asked of one dispatch; travels with the dispatch
/// until it completes.
#[derive(Default)]
pub(crate) struct Counting {
    /// The dispatch's correlation id and info, when a service asked.
    dispatch: Option<(u64, sys::rocprofiler_kernel_dispatch_info_t)>,
    pending: Vec<Pending>,
}

/// One dispatch's counter values, ready for the record callbacks.
#[derive(Default)]
pub(crate) struct Counted {
    /// Correlation id, dispatch info, start and end.
    dispatch: Option<(u64, sys::rocprofiler_kernel_dispatch_info_t, u64, u64)>,
    pending: Vec<(Pending, Vec<CounterValues>)>,
}

/// One counter's values: its id and each instance's (id, value).
pub(crate) struct CounterValues {
    pub counter: u64,
    pub instances: Vec<(u64, f64)>,
}

#[no_mangle]
pub extern "C" fn rocprofiler_configure_callback_dispatch_counting_service(
    context_id: sys::rocprofiler_context_id_t,
    dispatch_callback: sys::rocprofiler_dispatch_counting_service_cb_t,
    dispatch_callback_args: *mut c_void,
    record_callback: sys::rocprofiler_dispatch_counting_record_cb_t,
    record_callback_args: *mut c_void,
) -> Status {
    guard(|| {
        let service = CountingService {
            dispatch: dispatch_callback,
            dispatch_args: dispatch_callback_args as usize,
            record: record_callback,
            record_args: record_callback_args as usize,
        };
        match with_building_ctx(context_id.handle, |c| c.counting.push(service)) {
            Some(()) => Status::SUCCESS,
            None => Status::ERROR_CONTEXT_INVALID,
        }
    })
}

/// counters.cpp `rocprofiler_query_record_counter_id`.
#[no_mangle]
pub extern "C" fn rocprofiler_query_record_counter_id(
    id: sys::rocprofiler_counter_instance_id_t,
    counter_id: *mut sys::rocprofiler_counter_id_t,
) -> Status {
    guard(|| {
        if counter_id.is_null() {
            return Status::ERROR_INVALID_ARGUMENT;
        }
        // SAFETY: checked non-null; the caller's counter id.
        unsafe { (*counter_id).handle = id >> DIM_BITS };
        Status::SUCCESS
    })
}

/// counters.cpp `rocprofiler_query_record_dimension_position`
/// (id_decode.hpp `rec_to_dim_pos`): the position the instance id holds
/// for a dimension; a dimension the counter lacks reads 0.
#[no_mangle]
pub extern "C" fn rocprofiler_query_record_dimension_position(
    id: sys::rocprofiler_counter_instance_id_t,
    dim: sys::rocprofiler_counter_dimension_id_t,
    pos: *mut usize,
) -> Status {
    guard(|| {
        if pos.is_null() {
            return Status::ERROR_INVALID_ARGUMENT;
        }
        // SAFETY: checked non-null; the caller's position.
        unsafe { *pos = position(id, dim) as usize };
        Status::SUCCESS
    })
}

/// Asks every active context's counting services which counters to
/// collect for a dispatch intercepted under `info.corr`.
pub(crate) fn request(info: &DispatchInfo) -> Counting {
    let dispatch_info = dispatch_record(info, 0, 0).dispatch_info;
    let data = service_data(info.corr, dispatch_info, 0, 0);
    let mut pending = Vec::new();
    for c in contexts() {
        if c.counting.is_empty() || !c.active.load(Ordering::Acquire) || switched_off(c.handle) {
            continue;
        }
        for service in &c.counting {
            let Some(cb) = service.dispatch else {
                continue;
            };
            let mut chosen = sys::rocprofiler_counter_config_id_t::default();
            let mut user_data = sys::rocprofiler_user_data_t::default();
            // SAFETY: the tool's dispatch callback with valid out-pointers.
            unsafe {
                cb(
                    data,
                    &mut chosen,
                    &mut user_data,
                    service.dispatch_args as *mut c_void,
                )
            };
            let Some(cfg) = config(chosen.handle) else {
                continue;
            };
            if cfg.agent != info.agent {
                continue;
            }
            pending.push(Pending {
                service: service.clone(),
                agent: cfg.agent,
                counters: cfg.counters,
                user_data: user_data.value(),
            });
        }
    }
    if pending.is_empty() {
        return Counting::default();
    }
    Counting {
        dispatch: Some((info.corr, dispatch_info)),
        pending,
    }
}

fn service_data(
    corr: u64,
    dispatch_info: sys::rocprofiler_kernel_dispatch_info_t,
    start: u64,
    end: u64,
) -> sys::rocprofiler_dispatch_counting_service_data_t {
    sys::rocprofiler_dispatch_counting_service_data_t {
        size: std::mem::size_of::<sys::rocprofiler_dispatch_counting_service_data_t>() as u64,
        correlation_id: sys::rocprofiler_async_correlation_id_t {
            internal: corr,
            external: Default::default(),
        },
        start_timestamp: start,
        end_timestamp: end,
        dispatch_info,
    }
}

impl Counting {
    /// The values the dispatch counted, once it ran from `start` to `end`.
    pub(crate) fn count(self, start: u64, end: u64) -> Counted {
        let Some((corr, d)) = self.dispatch else {
            return Counted::default();
        };
        let grid = [d.grid_size.x, d.grid_size.y, d.grid_size.z];
        let block = [d.workgroup_size.x, d.workgroup_size.y, d.workgroup_size.z];
        let pending = self
            .pending
            .into_iter()
            .map(|p| {
                let values = p
                    .counters
                    .iter()
                    .filter_map(|&counter| {
                        let instances = counter_values(
                            counter,
                            d.kernel_id,
                            grid,
                            block,
                            end.saturating_sub(start),
                        )?;
                        Some(CounterValues { counter, instances })
                    })
                    .collect();
                (p, values)
            })
            .collect();
        Counted {
            dispatch: Some((corr, d, start, end)),
            pending,
        }
    }
}

impl Counted {
    /// Each counter collected (by any service) and its instances' values.
    pub(crate) fn values(&self) -> impl Iterator<Item = &CounterValues> + '_ {
        self.pending.iter().flat_map(|(_, v)| v.iter())
    }

    /// Hands each service its records (the SDK's consumer thread).
    pub(crate) fn deliver(self) {
        let Some((corr, info, start, end)) = self.dispatch else {
            return;
        };
        let data = service_data(corr, info, start, end);
        for (p, values) in self.pending {
            let Some(cb) = p.service.record else {
                continue;
            };
            let mut records: Vec<sys::rocprofiler_counter_record_t> = values
                .iter()
                .flat_map(|c| c.instances.iter())
                .map(|&(id, value)| sys::rocprofiler_counter_record_t {
                    id,
                    counter_value: value,
                    dispatch_id: data.dispatch_info.dispatch_id,
                    user_data: Default::default(),
                    agent_id: sys::rocprofiler_agent_id_t { handle: p.agent },
                })
                .collect();
            // SAFETY: the tool's record callback; `records` outlives the call.
            unsafe {
                cb(
                    data,
                    records.as_mut_ptr(),
                    records.len(),
                    sys::rocprofiler_user_data_t::from_value(p.user_data),
                    p.service.record_args as *mut c_void,
                )
            };
        }
    }
}
