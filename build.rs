//! Generates the C++ side of the cxx bridge (src/bridge.rs).
//!
//! cxx-build writes `kineto-rocm/src/bridge.rs.h` (the shared structs and the
//! extern "Rust" functions) and `rust/cxx.h` under
//! `$CARGO_TARGET_DIR/cxxbridge/`, which the C++ face (cpp/, built by the top
//! level CMakeLists.txt) includes. The generated glue is compiled into this
//! crate's cdylib, so libkineto_rocm.so exports everything the face links.
fn main() {
    cxx_build::bridge("src/bridge.rs")
        .std("c++17")
        .flag_if_supported("-fvisibility=default")
        .compile("kineto_rocm_bridge");
    // A SONAME, so that the C++ face records a plain DT_NEEDED entry and finds
    // the library next to itself ($ORIGIN) wherever it is installed.
    if std::env::var("CARGO_CFG_TARGET_OS").as_deref() == Ok("linux") {
        println!("cargo:rustc-cdylib-link-arg=-Wl,-soname,libkineto_rocm.so");
    }
    println!("cargo:rerun-if-changed=src/bridge.rs");
    println!("cargo:rerun-if-changed=build.rs");
}
