//! kineto-rocm: a ROCm activity backend for kineto.
//!
//! This crate is the tool library the rocprofiler-sdk loads (it exports
//! `rocprofiler_configure`), plus the session API its C ABI, cxx bridge and
//! CLI drive. Collection, attribution and record keeping live in the crates
//! below (graph-attribution, activity-store); this crate wires them to the
//! SDK and hands finished windows to kineto or to our chrome-trace writer.
pub mod api;
pub mod bridge;
mod c_abi;
pub mod fault;
mod logging;
pub mod output;
mod panics;
pub mod tool;
pub mod vocabulary;
