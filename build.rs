//! Compiles the cxx bridge's C++ glue into the tool library and leaves the
//! generated header under target/cxxbridge/ for the C++ face (CMake) to use.
fn main() {
    cxx_build::bridge("src/bridge.rs")
        .std("c++17")
        .compile("kineto_rocm_bridge");
    println!("cargo:rerun-if-changed=src/bridge.rs");
}
