//! kineto-rocm: a ROCm activity backend for kineto.
//!
//! This crate is the tool library the rocprofiler-sdk loads (it exports
//! `rocprofiler_configure`), plus the session its C ABI and cxx bridge
//! drive. Collection, attribution and record keeping live in the crates
//! below (graph-attribution, activity-store); this crate wires them to the
//! SDK and hands finished windows to kineto or to our chrome-trace writer.
//!
//! Modules import only modules listed after them (docs/architecture.md):
//! the faces (the recorder among them), the writers, the session functions, the tool (SDK adapter,
//! session, window finishing), and the leaves everything shares.
mod bridge;
mod c_abi;
mod error;
mod fault;
pub mod heap;
mod logging;
pub mod output;
mod panics;
mod recorder;
pub mod session;
pub mod tool;
mod vocabulary;
pub mod window;
