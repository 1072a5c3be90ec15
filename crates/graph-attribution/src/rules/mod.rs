//! The attribution rules, one per file, in the order they run (see
//! `crate::attribute` for the list and the assumptions each rests on).
pub(crate) mod backlog;
pub(crate) mod candidates;
pub(crate) mod consistency;
pub(crate) mod dependency_order;
pub(crate) mod exact_cover;
pub(crate) mod one_kernel_per_key;
pub(crate) mod processing_order;
pub(crate) mod queue_order;
pub(crate) mod time_order;
