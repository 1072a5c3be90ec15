//! kineto-rocm tool library (placeholder until the tool lands).
