//! The root crate's modules import downward only, as docs/architecture.md
//! draws them: every `crate::` or `super::` path in a module (tests aside)
//! names a module of a lower layer or of its own layer, and the modules of
//! one layer import each other without a cycle. And `unsafe` stays in the
//! FFI modules.
use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

/// Top to bottom; a module belongs to the first layer one of whose prefixes
/// it starts with.
const LAYERS: &[&[&str]] = &[
    &["bridge", "c_abi", "recorder"],
    &["output"],
    &["session"],
    &["tool::sdk"],
    &["tool::session"],
    &["tool::finish"],
    &[
        "error",
        "window",
        "vocabulary",
        "fault",
        "logging",
        "panics",
        "heap",
    ],
];

fn layer_of(module: &str) -> Option<usize> {
    LAYERS.iter().position(|prefixes| {
        prefixes
            .iter()
            .any(|p| module == *p || module.starts_with(&format!("{p}::")))
    })
}

/// Module path (`tool::sdk::callbacks`) -> the file's source before its tests.
fn modules(dir: &Path, prefix: &[String], out: &mut BTreeMap<String, String>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        let name = path.file_stem().unwrap().to_str().unwrap().to_string();
        if path.is_dir() {
            let mut inner = prefix.to_vec();
            inner.push(name);
            modules(&path, &inner, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            let mut module = prefix.to_vec();
            if name != "mod" && name != "lib" {
                module.push(name);
            }
            let text = std::fs::read_to_string(&path).unwrap();
            let code = text.split("#[cfg(test)]").next().unwrap().to_string();
            out.insert(module.join("::"), code);
        }
    }
}

/// The modules a path names: the longest known module prefix of it.
fn target(path: &[String], known: &BTreeMap<String, String>) -> Option<String> {
    (1..=path.len())
        .rev()
        .map(|n| path[..n].join("::"))
        .find(|m| known.contains_key(m))
}

fn is_ident(c: char) -> bool {
    c.is_ascii_alphanumeric() || c == '_'
}

/// Every `crate::...`, `super::...` path in `code`, with `use x::{a, b}`
/// groups expanded one level, resolved against `module`.
fn paths(module: &str, code: &str) -> Vec<Vec<String>> {
    let here: Vec<String> = module
        .split("::")
        .filter(|s| !s.is_empty())
        .map(String::from)
        .collect();
    let mut out = Vec::new();
    let mut rest = code;
    while let Some(at) = rest.find(['c', 's']) {
        let tail = &rest[at..];
        let preceded_by_ident = rest[..at].chars().next_back().is_some_and(is_ident);
        let start = ["crate::", "super::"]
            .iter()
            .find(|p| tail.starts_with(**p))
            .filter(|_| !preceded_by_ident);
        let Some(_) = start else {
            rest = &tail[1..];
            continue;
        };
        let end = tail
            .find(|c: char| !(is_ident(c) || c == ':'))
            .unwrap_or(tail.len());
        let mut segments: Vec<&str> = tail[..end].split("::").filter(|s| !s.is_empty()).collect();
        let mut base: Vec<String> = Vec::new();
        if segments[0] == "crate" {
            segments.remove(0);
        } else {
            base = here.clone();
            while segments.first() == Some(&"super") {
                segments.remove(0);
                base.pop();
            }
        }
        base.extend(segments.iter().map(|s| s.to_string()));
        let group = tail[end..].starts_with('{');
        if group {
            let close = tail[end..].find('}').unwrap() + end;
            for item in tail[end + 1..close].split(',') {
                let item: String = item.trim().chars().take_while(|&c| is_ident(c)).collect();
                let mut path = base.clone();
                if !item.is_empty() && item != "self" {
                    path.push(item);
                }
                out.push(path);
            }
        } else {
            out.push(base);
        }
        rest = &tail[end..];
    }
    out
}

/// Every module of src/, before its tests.
fn sources() -> BTreeMap<String, String> {
    let mut known = BTreeMap::new();
    modules(
        &Path::new(env!("CARGO_MANIFEST_DIR")).join("src"),
        &[],
        &mut known,
    );
    known
}

#[test]
fn unsafe_only_in_the_ffi_modules() {
    const FFI: &[&str] = &["bridge", "c_abi", "recorder", "tool::sdk", "heap"];
    for (module, code) in sources() {
        let ffi = FFI
            .iter()
            .any(|p| module == *p || module.starts_with(&format!("{p}::")));
        let uses_unsafe = ["unsafe {", "unsafe fn", "unsafe impl", "unsafe extern"]
            .iter()
            .any(|u| code.contains(u));
        assert!(
            ffi || !uses_unsafe,
            "unsafe in {module}, outside the FFI modules"
        );
    }
}

#[test]
fn modules_import_downward_only_and_without_cycles() {
    let known = sources();
    let mut imports: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    let mut upward = Vec::new();
    for (module, code) in &known {
        let Some(layer) = layer_of(module) else {
            // lib.rs and tool/mod.rs only declare modules.
            assert!(paths(module, code).is_empty(), "{module} is in no layer");
            continue;
        };
        for path in paths(module, code) {
            let Some(dep) = target(&path, &known) else {
                continue;
            };
            if dep.is_empty() || dep == *module || module.starts_with(&format!("{dep}::")) {
                continue;
            }
            let dep_layer = layer_of(&dep).unwrap_or_else(|| panic!("{dep} is in no layer"));
            if dep_layer < layer {
                upward.push(format!("{module} -> {dep}"));
            }
            imports.entry(module.clone()).or_default().insert(dep);
        }
    }
    assert!(upward.is_empty(), "imports up a layer: {upward:#?}");
    assert!(
        imports.contains_key("tool::sdk::callbacks") && imports.contains_key("bridge"),
        "the scan found no imports: {imports:#?}"
    );
    for start in imports.keys() {
        let mut seen = BTreeSet::new();
        let mut stack: Vec<&String> = imports[start].iter().collect();
        while let Some(next) = stack.pop() {
            assert!(next != start, "{start} imports itself through {seen:?}");
            if seen.insert(next.clone()) {
                stack.extend(imports.get(next).into_iter().flatten());
            }
        }
    }
}
