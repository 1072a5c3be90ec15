//! The session: what was collected, window by window, from the first start
//! to process exit. Fed by the SDK adapter above; hands closed windows to
//! window finishing below.
pub mod collector;
