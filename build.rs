//! Generates the C++ side of the cxx bridge (src/bridge.rs); compiles none
//! of it.
//!
//! cxx-build writes `kineto-rocm/src/bridge.rs.h` (the shared structs and the
//! extern "Rust" functions) and `bridge.rs.cc` (their C++ definitions, which
//! call this library's exported `cxxbridge1$...` symbols) under
//! `$CARGO_TARGET_DIR/cxxbridge/`. The C++ face (cpp/, built by the top level
//! CMakeLists.txt) is their one consumer and compiles them once, into
//! libkineto_rocm_kineto.so. Compiled into this cdylib as well, they would
//! only be a second, unreachable copy: a Rust cdylib exports Rust symbols
//! alone.
fn main() {
    // The returned cc::Build would compile the glue; the face compiles it.
    let _ = cxx_build::bridge("src/bridge.rs");
    // A SONAME, so that the C++ face records a plain DT_NEEDED entry and finds
    // the library next to itself ($ORIGIN) wherever it is installed.
    if std::env::var("CARGO_CFG_TARGET_OS").as_deref() == Ok("linux") {
        println!("cargo:rustc-cdylib-link-arg=-Wl,-soname,libkineto_rocm.so");
    }
    println!("cargo:rerun-if-changed=src/bridge.rs");
    println!("cargo:rerun-if-changed=build.rs");
}
