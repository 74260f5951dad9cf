//! Copies each ```rust block of `docs/hooks.md` into a module of its own
//! (`$OUT_DIR/hook_docs.rs`), so that the library registers exactly the types and hooks that
//! the page shows (and that run as doctests of `tvm-ffi-tests`). An example's `fn main` stays
//! an unused function here.
use std::fmt::Write as _;
use std::path::PathBuf;

fn main() {
    let manifest = PathBuf::from(std::env::var("CARGO_MANIFEST_DIR").unwrap());
    let page = manifest.join("../../docs/hooks.md");
    println!("cargo:rerun-if-changed={}", page.display());
    let text = std::fs::read_to_string(&page).expect("docs/hooks.md is readable");
    let mut out = String::new();
    let mut block: Option<String> = None;
    let mut count = 0;
    for line in text.lines() {
        match &mut block {
            None if line.trim_end() == "```rust" => block = Some(String::new()),
            None => {}
            Some(code) if line.trim_end() == "```" => {
                writeln!(out, "#[allow(dead_code)]\nmod example_{count} {{\n{code}}}").unwrap();
                count += 1;
                block = None;
            }
            Some(code) => {
                code.push_str(line);
                code.push('\n');
            }
        }
    }
    assert!(count > 0, "docs/hooks.md has no ```rust examples");
    let dest = PathBuf::from(std::env::var("OUT_DIR").unwrap()).join("hook_docs.rs");
    std::fs::write(dest, out).unwrap();
}
