//! The experimental kernel-replay callback domain
//! (experimental/kernel_replay.h): at CONFIG the tool says how many times a
//! dispatch runs; each PASS runs it once more, from the same memory, with
//! the same dispatch id, before the application sees it complete.
use crate::enums::rocprofiler_status_t;
use crate::types::{
    rocprofiler_context_id_t, rocprofiler_kernel_dispatch_info_t, rocprofiler_user_data_t,
};

/// `rocprofiler_kernel_replay_pass_count_cb_t`: the passes a dispatch runs
/// (NULL or 1: not replayed; 0: until `replay_continue` says stop).
pub type rocprofiler_kernel_replay_pass_count_cb_t = Option<
    unsafe extern "C" fn(
        dispatch_info: rocprofiler_kernel_dispatch_info_t,
        user_data: rocprofiler_user_data_t,
    ) -> u64,
>;

/// `rocprofiler_kernel_replay_continue_cb_t`: after a pass, non-zero runs
/// another.
pub type rocprofiler_kernel_replay_continue_cb_t = Option<
    unsafe extern "C" fn(
        dispatch_info: rocprofiler_kernel_dispatch_info_t,
        current_pass: u64,
        total_passes: u64,
        user_data: rocprofiler_user_data_t,
    ) -> i32,
>;

/// `rocprofiler_kernel_replay_context_cb_t`: marks a started context on or
/// off for the rest of this dispatch's passes.
pub type rocprofiler_kernel_replay_context_cb_t =
    Option<unsafe extern "C" fn(context_id: rocprofiler_context_id_t) -> rocprofiler_status_t>;

/// `rocprofiler_callback_tracing_kernel_replay_data_t`: one flat payload for
/// CONFIG (the tool writes the two callbacks) and PASS (the SDK fills the
/// pass and the two context switches).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
pub struct rocprofiler_callback_tracing_kernel_replay_data_t {
    pub size: u64,
    pub dispatch_info: rocprofiler_kernel_dispatch_info_t,
    /// 0-indexed (PASS only).
    pub current_pass: u64,
    /// The pass count, or 0 for an open-ended loop (PASS only).
    pub total_passes: u64,
    pub replay_pass_count: rocprofiler_kernel_replay_pass_count_cb_t,
    pub replay_continue: rocprofiler_kernel_replay_continue_cb_t,
    pub replay_start_context: rocprofiler_kernel_replay_context_cb_t,
    pub replay_stop_context: rocprofiler_kernel_replay_context_cb_t,
}
