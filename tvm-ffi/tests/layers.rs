//! The runtime's layering, checked on its sources: every `crate::<module>` path in a top-level
//! module names a module of the same or a lower layer, and never a root re-export (which would
//! hide the dependency). The layers are the ones drawn in the crate docs; run
//! `cargo test -p tvm-ffi-sdk --test layers -- --nocapture` to print the dependency table.
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// Top-level modules by layer, lowest first. Modules of one layer do not use each other.
const LAYERS: &[&[&str]] = &[
    &["diagnostic", "memory", "metadata"],
    &["object"],
    &["error"],
    &["value", "version"],
    &["function", "env"],
    &["container", "tensor"],
    &["reflection", "serialization", "structural"],
    &["enums", "module"],
    &["registry"],
];

/// `#[macro_export]` macros, which Rust places at the crate root.
const ROOT_MACROS: &[&str] = &["bail", "ensure"];

fn layer_of(module: &str) -> Option<usize> {
    LAYERS.iter().position(|layer| layer.contains(&module))
}

/// Source text without comments (so doc links to higher layers are not dependencies) and
/// without string literals (so messages naming paths are not either).
fn code_only(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let bytes = text.as_bytes();
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i..].starts_with(b"//") {
            while i < bytes.len() && bytes[i] != b'\n' {
                i += 1;
            }
        } else if bytes[i..].starts_with(b"/*") {
            i += 2;
            while i < bytes.len() && !bytes[i..].starts_with(b"*/") {
                i += 1;
            }
            i += 2;
        } else if bytes[i] == b'"' && (i == 0 || bytes[i - 1] != b'\'') {
            // A string literal (raw strings here contain no `crate::` paths worth keeping).
            i += 1;
            while i < bytes.len() && bytes[i] != b'"' {
                if bytes[i] == b'\\' {
                    i += 1;
                }
                i += 1;
            }
            i += 1;
            out.push_str("\"\"");
        } else {
            out.push(bytes[i] as char);
            i += 1;
        }
    }
    out
}

/// The first path segments after every `crate::` (and `$crate::`), including each item of a
/// `crate::{a, b::c}` group. `$crate::Name` (a public root type, in the body of a
/// `#[macro_export]` macro, which expands in the user's crate) is not an internal dependency.
fn crate_references(code: &str) -> Vec<String> {
    let mut found = Vec::new();
    let mut rest = code;
    while let Some(at) = rest.find("crate::") {
        let before = rest[..at].chars().last();
        let preceded_by_ident = before.is_some_and(|c| c.is_alphanumeric() || c == '_');
        let in_exported_macro = before == Some('$');
        rest = &rest[at + "crate::".len()..];
        if preceded_by_ident
            || (in_exported_macro && rest.starts_with(|c: char| c.is_ascii_uppercase()))
        {
            continue;
        }
        if let Some(group) = rest.strip_prefix('{') {
            let mut depth = 1;
            let mut item = String::new();
            let mut items = Vec::new();
            for c in group.chars() {
                match c {
                    '{' => depth += 1,
                    '}' => depth -= 1,
                    _ => {}
                }
                if depth == 0 {
                    break;
                }
                if depth == 1 && c == ',' {
                    items.push(std::mem::take(&mut item));
                } else {
                    item.push(c);
                }
            }
            items.push(item);
            for item in items {
                let first: String = item
                    .trim()
                    .chars()
                    .take_while(|c| c.is_alphanumeric() || *c == '_')
                    .collect();
                if !first.is_empty() {
                    found.push(first);
                }
            }
        } else {
            let first: String = rest
                .chars()
                .take_while(|c| c.is_alphanumeric() || *c == '_')
                .collect();
            found.push(first);
        }
    }
    found
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

#[test]
fn modules_only_use_lower_layers() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    rust_files(&src, &mut files);
    let mut uses: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    let mut problems = Vec::new();
    for file in &files {
        let relative = file.strip_prefix(&src).unwrap();
        let first = relative.components().next().unwrap().as_os_str();
        let module = first.to_str().unwrap().trim_end_matches(".rs").to_string();
        if module == "lib" {
            continue; // the root: docs, re-exports and `__private`
        }
        let Some(layer) = layer_of(&module) else {
            problems.push(format!(
                "`{module}` is not in LAYERS: give the new module a layer"
            ));
            continue;
        };
        let code = code_only(&std::fs::read_to_string(file).unwrap());
        for target in crate_references(&code) {
            if target == module {
                continue;
            }
            match layer_of(&target) {
                None if target == "sys" => {} // the raw ABI crate, below every layer
                // `#[macro_export]` macros live at the root by necessity.
                None if ROOT_MACROS.contains(&target.as_str()) => {}
                None => problems.push(format!(
                    "{}: `crate::{target}` names a root re-export or an unknown module; name \
                     the defining module (`crate::value::Any`, not `crate::Any`)",
                    relative.display()
                )),
                Some(target_layer) if target_layer >= layer => problems.push(format!(
                    "{}: `{module}` (layer {layer}) uses `{target}` (layer {target_layer}): a \
                     module may only use lower layers",
                    relative.display()
                )),
                Some(_) => {
                    uses.entry(module.clone()).or_default().insert(target);
                }
            }
        }
    }
    for (module, targets) in &uses {
        println!(
            "{module:>11} (layer {}) uses {}",
            layer_of(module).unwrap(),
            targets.iter().cloned().collect::<Vec<_>>().join(", ")
        );
    }
    assert!(
        problems.is_empty(),
        "layering violations:\n{}",
        problems.join("\n")
    );
    assert!(
        uses.contains_key("registry"),
        "the scan found no references at all"
    );
}

#[test]
fn the_scanner_sees_grouped_and_macro_paths() {
    let code = code_only(
        "use crate::{value::Any, error::{Error, Result}};\n// crate::registry in a comment\n\
         fn f() -> $crate::function::Function { \"crate::tensor\" }",
    );
    assert_eq!(
        crate_references(&code),
        vec!["value", "error", "function"],
        "comments and strings are ignored, groups are split"
    );
}
