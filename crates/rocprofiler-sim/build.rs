//! tests/exe_tool.rs defines `rocprofiler_configure` in the test executable
//! itself, as a program that is its own tool does; the SDK can only find it
//! there if the executable exports it dynamically.
fn main() {
    println!("cargo:rustc-link-arg-tests=-Wl,--export-dynamic-symbol=rocprofiler_configure");
}
