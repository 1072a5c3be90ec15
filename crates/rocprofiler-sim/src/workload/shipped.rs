//! The workloads this repository ships, in their one home, `tests/workloads/`
//! (the ctest suite's own are in its `ctest/` folder, the adversarial ones in
//! `adversarial/`). This module is the only Rust code that knows where that
//! is: the CLI embeds its demo from here and the tests of every crate find
//! files through it.
use std::path::PathBuf;

macro_rules! dir {
    () => {
        concat!(env!("CARGO_MANIFEST_DIR"), "/../../tests/workloads")
    };
}

/// `tests/workloads/` of the source tree this crate was built from.
pub fn dir() -> PathBuf {
    PathBuf::from(dir!())
}

/// A shipped workload by file name (`"graph-32x200.json"`), or by path
/// below the folder (`"adversarial/..."`).
pub fn path(name: &str) -> PathBuf {
    dir().join(name)
}

/// The 32-node graph replayed 200 times (`graph-32x200.json`), embedded so
/// that the CLI's demo runs anywhere.
pub const GRAPH_32X200: &str = include_str!(concat!(dir!(), "/graph-32x200.json"));
