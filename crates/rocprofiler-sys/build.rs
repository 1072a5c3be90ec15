//! When `ROCPROFILER_SDK_INCLUDE_DIR` names the SDK's headers (one directory,
//! or several separated by ':' for the HIP and HSA headers they include),
//! generate the SDK's own declarations with bindgen so `tests/layout.rs` can
//! compare ours against them. Without it the layout test is ignored and says
//! why.
use std::env;
use std::path::PathBuf;

fn main() {
    println!("cargo:rerun-if-env-changed=ROCPROFILER_SDK_INCLUDE_DIR");
    println!("cargo:rustc-check-cfg=cfg(has_sdk_headers)");
    println!("cargo:rustc-check-cfg=cfg(sdk_has_hip_graph)");
    let Ok(dirs) = env::var("ROCPROFILER_SDK_INCLUDE_DIR") else {
        return;
    };
    let dirs: Vec<&str> = dirs.split(':').filter(|d| !d.is_empty()).collect();
    if dirs.is_empty() {
        return;
    }
    let mut builder = bindgen::Builder::default()
        .header_contents(
            "kineto_rocm_layout.h",
            "#include <rocprofiler-sdk/rocprofiler.h>\n#include <rocprofiler-sdk/registration.h>\n",
        )
        .allowlist_type("rocprofiler_.*")
        .derive_default(false)
        .layout_tests(false)
        .clang_arg("-x")
        .clang_arg("c++")
        .clang_arg("-D__HIP_PLATFORM_AMD__");
    for dir in &dirs {
        builder = builder.clang_arg(format!("-I{dir}"));
    }
    let bindings = builder.generate().unwrap_or_else(|e| {
        panic!("bindgen over the headers in ROCPROFILER_SDK_INCLUDE_DIR={dirs:?} failed: {e}")
    });
    let out = PathBuf::from(env::var("OUT_DIR").unwrap()).join("sdk_bindings.rs");
    bindings.write_to_file(&out).expect("write sdk_bindings.rs");
    println!("cargo:rustc-cfg=has_sdk_headers");
    // The HIP_GRAPH domain exists from SDK 1.3 on; compare its types only then.
    let generated = std::fs::read_to_string(&out).unwrap_or_default();
    if generated.contains("rocprofiler_callback_tracing_hip_graph_data_t") {
        println!("cargo:rustc-cfg=sdk_has_hip_graph");
    }
}
