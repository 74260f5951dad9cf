//! The layering of both crates, checked on their sources (`scripts/check-architecture.sh` runs
//! this test; `-- --nocapture` prints the dependency tables).
//!
//! Two rules, for any crate root and layer table:
//!
//! 1. **Folder membership.** Every top-level module of the crate belongs to a layer of its
//!    table, and its files only name modules of their own or lower layers. A path through a
//!    root re-export (`crate::Any`, `crate::object`) is refused: it hides the dependency (name
//!    the owning layer, `crate::base::value::Any`).
//! 2. **No import circles.** Inside every folder (the crate root included), the files and
//!    subfolders directly in it never use each other in a circle, directly or transitively. A
//!    use of an item that a folder's `mod.rs` re-exports counts as a use of the file that
//!    defines it; `mod.rs` itself is a node only for what it defines.
//!
//! A path counts wherever it is written outside comments and string literals: `use` trees
//! (with groups), paths in code, `crate::`, `$crate::`, `super::` and `self::` prefixes, and,
//! in a `mod.rs` or crate root, paths that start with one of its own submodules.
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// A crate and its layering.
struct CrateLayers {
    /// The crate's `src` folder, relative to the workspace root.
    src: &'static str,
    /// Top-level modules by layer, lowest first. A module may use modules of its own or lower
    /// layers; within a layer, only the cycle check applies.
    layers: &'static [&'static [&'static str]],
    /// `#[macro_export]` macros, which Rust places at the crate root.
    root_macros: &'static [&'static str],
    /// Import circles known today that a planned change removes: (folder relative to `src`,
    /// the files or subfolders of the circle, sorted). An entry whose circle is gone fails the
    /// test, so the table cannot outlive the fix.
    known_cycles: &'static [(&'static str, &'static [&'static str])],
}

/// The runtime: each layer is a folder (or, for the ABI, one file) of `tvm-ffi/src`.
const RUNTIME: CrateLayers = CrateLayers {
    src: "tvm-ffi/src",
    layers: &[
        &["abi"],      // the raw C ABI (tvm-ffi-sys), allocation failure, stderr diagnostics
        &["base"],     // object, error, value, lock
        &["call"],     // function, env, python
        &["data"],     // container, tensor, module
        &["traverse"], // structural walk, visit, map and mutate in Rust
        &["reflect"],  // reflection, enums, structural (re-exports traverse), serialization
        &["registry"], // load-time registration
    ],
    root_macros: &["bail", "ensure"],
    known_cycles: &[],
};

/// The procedural macros: shared front-end modules below the per-item code generation.
const MACROS: CrateLayers = CrateLayers {
    src: "tvm-ffi-macros/src",
    // serde_derive's shape: one front end (attributes parsed into an AST, checked), then code
    // generation per item kind; the stages run one way.
    layers: &[
        // `match_any`: the function-like `match_any!`, parsed and generated in one module (no
        // attributes, no item model); `dispatch`: `#[dispatch(..)]`, likewise (it uses only
        // `crate_path`).
        &["crate_path", "ctxt", "dispatch", "match_any"],
        &["attr"],
        &["ast"],
        &["check"],
        &["codegen"],
    ],
    root_macros: &[],
    known_cycles: &[],
};

#[test]
fn runtime_layers_and_no_cycles() {
    check(&RUNTIME);
}

#[test]
fn macro_crate_layers_and_no_cycles() {
    check(&MACROS);
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
            // A string literal (raw strings here contain no paths worth keeping).
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

fn is_ident(c: char) -> bool {
    c.is_alphanumeric() || c == '_'
}

/// The paths of a use tree starting at `rest` (just after `prefix::`): `a::b`, `a::{b, c::d}`,
/// `{self, a}`; each as its segments. `self` inside a group names the group's prefix.
fn use_tree(rest: &str) -> Vec<Vec<String>> {
    fn parse(s: &[char], i: &mut usize, prefix: Vec<String>, out: &mut Vec<Vec<String>>) {
        let mut path = prefix;
        loop {
            while *i < s.len() && s[*i].is_whitespace() {
                *i += 1;
            }
            if *i < s.len() && s[*i] == '{' {
                *i += 1;
                loop {
                    parse(s, i, path.clone(), out);
                    while *i < s.len() && s[*i].is_whitespace() {
                        *i += 1;
                    }
                    match s.get(*i) {
                        Some(',') => *i += 1,
                        Some('}') => {
                            *i += 1;
                            return;
                        }
                        _ => return,
                    }
                    while *i < s.len() && s[*i].is_whitespace() {
                        *i += 1;
                    }
                    if s.get(*i) == Some(&'}') {
                        *i += 1;
                        return;
                    }
                }
            }
            let start = *i;
            while *i < s.len() && is_ident(s[*i]) {
                *i += 1;
            }
            let segment: String = s[start..*i].iter().collect();
            if !segment.is_empty() && segment != "self" {
                path.push(segment);
            }
            if s.get(*i) == Some(&':') && s.get(*i + 1) == Some(&':') {
                *i += 2;
                continue;
            }
            // Skip a trailing `as alias`, generics or anything else up to the tree's end.
            while *i < s.len() && !matches!(s[*i], ',' | '}' | ';' | '{') {
                if s[*i] == '(' || s[*i] == ')' || s[*i] == '\n' {
                    break;
                }
                *i += 1;
            }
            out.push(path);
            return;
        }
    }
    let chars: Vec<char> = rest.chars().take(4000).collect();
    let mut out = Vec::new();
    parse(&chars, &mut 0, Vec::new(), &mut out);
    out
}

/// A module's path from the crate root, and whether it is a folder's `mod.rs` (or the root).
fn module_path(src: &Path, file: &Path) -> (Vec<String>, bool) {
    let relative = file.strip_prefix(src).unwrap();
    let mut segments: Vec<String> = relative
        .iter()
        .map(|s| s.to_str().unwrap().trim_end_matches(".rs").to_string())
        .collect();
    let last = segments.pop().unwrap();
    let facade = last == "mod" || (segments.is_empty() && last == "lib");
    if !facade {
        segments.push(last);
    }
    (segments, facade)
}

/// Every absolute path (from the crate root) that `code` of the module at `module` names.
/// `skip_reexports` leaves out `pub use` items (a facade's re-exports are declarations).
fn references(
    src: &Path,
    module: &[String],
    facade: bool,
    code: &str,
    skip_reexports: bool,
) -> Vec<Vec<String>> {
    let mut found = Vec::new();
    let children: BTreeSet<String> = if facade {
        submodules(&src.join(module.join("/")))
    } else {
        BTreeSet::new()
    };
    for line in statements(code) {
        let reexport = {
            let t = line.trim_start();
            t.starts_with("pub use")
                || t.starts_with("pub(crate) use")
                || t.starts_with("pub(super) use")
        };
        if skip_reexports && reexport {
            continue;
        }
        let chars: Vec<(usize, char)> = line.char_indices().collect();
        let mut k = 0;
        while k < chars.len() {
            let (at, c) = chars[k];
            let preceded = k > 0 && (is_ident(chars[k - 1].1) || chars[k - 1].1 == ':');
            if !is_ident(c) || preceded {
                k += 1;
                continue;
            }
            let word: String = line[at..].chars().take_while(|&c| is_ident(c)).collect();
            let after = &line[at + word.len()..];
            let dollar = k > 0 && chars[k - 1].1 == '$';
            k += word.chars().count();
            let Some(rest) = after.strip_prefix("::") else {
                continue;
            };
            let base: Option<Vec<String>> = match word.as_str() {
                "crate" => Some(Vec::new()),
                "self" => Some(module.to_vec()),
                "super" => {
                    let mut m = module.to_vec();
                    m.pop();
                    let mut rest = rest;
                    while let Some(r) = rest.strip_prefix("super::") {
                        m.pop();
                        rest = r;
                    }
                    for path in use_tree(rest) {
                        let mut full = m.clone();
                        full.extend(path);
                        found.push(full);
                    }
                    continue;
                }
                w if children.contains(w) => {
                    let mut m = module.to_vec();
                    m.push(w.to_string());
                    Some(m)
                }
                _ => None,
            };
            let Some(base) = base else { continue };
            // `$crate::Name` in a `#[macro_export]` macro is a public root path of the user's
            // crate, not an internal dependency.
            if dollar && word == "crate" && rest.starts_with(|c: char| c.is_ascii_uppercase()) {
                continue;
            }
            for path in use_tree(rest) {
                let mut full = base.clone();
                full.extend(path);
                found.push(full);
            }
        }
    }
    found
}

/// The code as pieces: each `use` statement whole (so that `pub use` can be recognised even
/// when it spans lines), other code line by line.
fn statements(code: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut pending = String::new();
    for line in code.split_inclusive('\n') {
        let t = line.trim_start();
        let starts_use = t.starts_with("use ")
            || t.starts_with("pub use ")
            || t.starts_with("pub(crate) use ")
            || t.starts_with("pub(super) use ");
        if !pending.is_empty() {
            pending.push_str(line);
            if line.contains(';') {
                out.push(std::mem::take(&mut pending));
            }
        } else if starts_use && !line.contains(';') {
            pending.push_str(line);
        } else {
            out.push(line.to_string());
        }
    }
    if !pending.is_empty() {
        out.push(pending);
    }
    out
}

fn submodules(dir: &Path) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    let Ok(entries) = std::fs::read_dir(dir) else {
        return out;
    };
    for entry in entries {
        let path = entry.unwrap().path();
        let name = path.file_name().unwrap().to_str().unwrap().to_string();
        if path.is_dir() {
            out.insert(name);
        } else if let Some(stem) = name.strip_suffix(".rs") {
            if stem != "mod" && stem != "lib" {
                out.insert(stem.to_string());
            }
        }
    }
    out
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

/// The file (as its module path and whether it is a facade) that defines what `path` names,
/// following the re-exports of `mod.rs` files; `None` for paths outside the crate's files.
struct Resolver<'a> {
    src: &'a Path,
}

impl Resolver<'_> {
    /// The deepest module that `path` walks into, and the rest of the path.
    fn module_of<'p>(&self, path: &'p [String]) -> (Vec<String>, &'p [String]) {
        let mut dir = self.src.to_path_buf();
        let mut module = Vec::new();
        for (i, segment) in path.iter().enumerate() {
            if dir.join(segment).is_dir() {
                dir = dir.join(segment);
                module.push(segment.clone());
            } else if dir.join(format!("{segment}.rs")).is_file() {
                module.push(segment.clone());
                return (module, &path[i + 1..]);
            } else {
                return (module, &path[i..]);
            }
        }
        (module, &[])
    }

    /// The module that defines the item `path` names (following a facade's re-exports).
    fn defining_module(&self, path: &[String], depth: usize) -> Vec<String> {
        let (module, rest) = self.module_of(path);
        let folder = self.src.join(module.join("/"));
        let Some(item) = rest.first() else {
            return module;
        };
        if depth > 8 || !folder.is_dir() {
            return module;
        }
        // A facade (`mod.rs`) re-export of `item` names the file that defines it.
        let facade = if module.is_empty() {
            folder.join("lib.rs")
        } else {
            folder.join("mod.rs")
        };
        let Ok(text) = std::fs::read_to_string(&facade) else {
            return module;
        };
        let code = code_only(&text);
        for statement in statements(&code) {
            let t = statement.trim_start();
            let Some(tree) = ["pub use ", "pub(crate) use ", "pub(super) use "]
                .iter()
                .find_map(|p| t.strip_prefix(p))
            else {
                continue;
            };
            for target in resolve_use(&module, &folder, tree) {
                let alias = alias_of(tree, target.last());
                if target.last() == Some(item) || alias.as_deref() == Some(item.as_str()) {
                    return self.defining_module(&target, depth + 1);
                }
            }
        }
        module
    }
}

/// The absolute paths a facade's `use` tree names (relative to the facade's module).
fn resolve_use(module: &[String], folder: &Path, tree: &str) -> Vec<Vec<String>> {
    let children = submodules(folder);
    let tree = tree.trim_start();
    let (base, rest): (Vec<String>, &str) = if let Some(rest) = tree.strip_prefix("crate::") {
        (Vec::new(), rest)
    } else if let Some(rest) = tree.strip_prefix("self::") {
        (module.to_vec(), rest)
    } else if let Some(rest) = tree.strip_prefix("super::") {
        let mut m = module.to_vec();
        m.pop();
        (m, rest)
    } else {
        let first: String = tree.chars().take_while(|&c| is_ident(c)).collect();
        if !children.contains(&first) {
            return Vec::new();
        }
        (module.to_vec(), tree)
    };
    use_tree(rest)
        .into_iter()
        .map(|p| {
            let mut full = base.clone();
            full.extend(p);
            full
        })
        .collect()
}

/// The `as` alias given to the item ending in `name` within a use tree, if any.
fn alias_of(tree: &str, name: Option<&String>) -> Option<String> {
    let name = name?;
    let at = tree.find(&format!("{name} as "))?;
    let rest = &tree[at + name.len() + 4..];
    Some(
        rest.trim_start()
            .chars()
            .take_while(|&c| is_ident(c))
            .collect(),
    )
}

/// The strongly connected components with more than one node (Tarjan).
fn cycles(graph: &BTreeMap<String, BTreeSet<String>>) -> Vec<Vec<String>> {
    struct State<'g> {
        graph: &'g BTreeMap<String, BTreeSet<String>>,
        index: BTreeMap<&'g str, usize>,
        low: BTreeMap<&'g str, usize>,
        stack: Vec<&'g str>,
        on_stack: BTreeSet<&'g str>,
        out: Vec<Vec<String>>,
    }
    fn visit<'g>(s: &mut State<'g>, v: &'g str) {
        let i = s.index.len();
        s.index.insert(v, i);
        s.low.insert(v, i);
        s.stack.push(v);
        s.on_stack.insert(v);
        if let Some(targets) = s.graph.get(v) {
            for w in targets {
                let w = w.as_str();
                if !s.index.contains_key(w) {
                    visit(s, w);
                    let low = s.low[v].min(s.low[w]);
                    s.low.insert(v, low);
                } else if s.on_stack.contains(w) {
                    let low = s.low[v].min(s.index[w]);
                    s.low.insert(v, low);
                }
            }
        }
        if s.low[v] == s.index[v] {
            let mut component = Vec::new();
            while let Some(w) = s.stack.pop() {
                s.on_stack.remove(w);
                component.push(w.to_string());
                if w == v {
                    break;
                }
            }
            if component.len() > 1 {
                component.sort();
                s.out.push(component);
            }
        }
    }
    let mut state = State {
        graph,
        index: BTreeMap::new(),
        low: BTreeMap::new(),
        stack: Vec::new(),
        on_stack: BTreeSet::new(),
        out: Vec::new(),
    };
    let nodes: BTreeSet<&str> = graph
        .iter()
        .flat_map(|(k, v)| std::iter::once(k.as_str()).chain(v.iter().map(String::as_str)))
        .collect();
    for node in nodes {
        if !state.index.contains_key(node) {
            visit(&mut state, node);
        }
    }
    state.out
}

fn check(table: &CrateLayers) {
    let workspace = Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap();
    let src = workspace.join(table.src);
    let resolver = Resolver { src: &src };
    let layer_of = |module: &str| table.layers.iter().position(|l| l.contains(&module));
    let mut files = Vec::new();
    rust_files(&src, &mut files);
    files.sort();
    let mut problems = Vec::new();
    let mut layer_uses: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    // folder -> (node -> nodes it uses), nodes being the folder's files and subfolders.
    let mut folder_graphs: BTreeMap<String, BTreeMap<String, BTreeSet<String>>> = BTreeMap::new();
    for file in &files {
        let relative = format!(
            "{}/{}",
            table.src,
            file.strip_prefix(&src).unwrap().display()
        );
        let (module, facade) = module_path(&src, file);
        let mut code = code_only(&std::fs::read_to_string(file).unwrap());
        // Unit tests (a `#[cfg(test)]` module at the end of a file) are no part of the layering.
        if let Some(at) = code.find("#[cfg(test)]") {
            code.truncate(at);
        }
        let top = module.first().cloned();
        let layer = match &top {
            None => None, // the crate root: docs, declarations, re-exports
            Some(top) => match layer_of(top) {
                Some(layer) => Some(layer),
                None => {
                    problems.push(format!(
                        "{relative}: the top-level module `{top}` is in no layer of the table \
                         for {}: give it one",
                        table.src
                    ));
                    continue;
                }
            },
        };
        // The node this file is inside each enclosing folder: the child on its way down, or
        // `mod.rs` (`lib.rs`) for the folder's facade.
        let node_in = |folder_depth: usize| -> String {
            if folder_depth < module.len() {
                let child = &module[folder_depth];
                let is_dir = src.join(module[..=folder_depth].join("/")).is_dir();
                if is_dir {
                    child.clone()
                } else {
                    format!("{child}.rs")
                }
            } else if folder_depth == 0 {
                "lib.rs".to_string()
            } else {
                "mod.rs".to_string()
            }
        };
        for path in references(&src, &module, facade, &code, facade) {
            let Some(first) = path.first() else { continue };
            // Folder membership: the top-level module a path names.
            if let Some(layer) = layer {
                if first != top.as_ref().unwrap() {
                    match layer_of(first) {
                        Some(target) if target > layer => problems.push(format!(
                            "{relative}: `{}` (layer {layer}) uses `{first}` (layer {target}): a \
                             module may only use its own or lower layers",
                            top.as_ref().unwrap()
                        )),
                        Some(_) => {
                            layer_uses
                                .entry(top.clone().unwrap())
                                .or_default()
                                .insert(first.clone());
                        }
                        None if table.root_macros.contains(&first.as_str()) => {}
                        None if first == "__private" => {}
                        None => problems.push(format!(
                            "{relative}: `crate::{}` names a root re-export or an unknown module; \
                             name the module of the layer that defines it",
                            path.join("::")
                        )),
                    }
                }
            }
            // Circles: the defining module, compared with this file in every common folder.
            let target = resolver.defining_module(&path, 0);
            let target_is_facade = src.join(target.join("/")).is_dir();
            let common = module
                .iter()
                .zip(&target)
                .take_while(|(a, b)| a == b)
                .count();
            // The innermost folder holding both: there they are two different entries (a
            // file, a subfolder, or the folder's own `mod.rs` for what it defines).
            let folder_depth = common;
            let from = node_in(folder_depth);
            let to = if folder_depth < target.len() {
                let child = &target[folder_depth];
                if src.join(target[..=folder_depth].join("/")).is_dir() {
                    child.clone()
                } else {
                    format!("{child}.rs")
                }
            } else if target_is_facade || folder_depth == 0 {
                if folder_depth == 0 {
                    "lib.rs".to_string()
                } else {
                    "mod.rs".to_string()
                }
            } else {
                continue;
            };
            if from == to {
                continue;
            }
            let folder = module[..folder_depth].join("/");
            folder_graphs
                .entry(folder)
                .or_default()
                .entry(from)
                .or_default()
                .insert(to);
        }
    }
    let mut found_cycles = BTreeSet::new();
    for (folder, graph) in &folder_graphs {
        for component in cycles(graph) {
            let known = table.known_cycles.iter().any(|(f, members)| {
                f == folder && members.iter().map(|m| m.to_string()).eq(component.clone())
            });
            found_cycles.insert((folder.clone(), component.clone()));
            let shown = match folder.as_str() {
                "" => table.src.to_string(),
                _ => format!("{}/{folder}", table.src),
            };
            let edges: Vec<String> = component
                .iter()
                .flat_map(|a| {
                    graph[a]
                        .iter()
                        .filter(|b| component.contains(b))
                        .map(move |b| format!("{a} -> {b}"))
                })
                .collect();
            let label = if known {
                "known circle (to be removed)"
            } else {
                "circle"
            };
            println!("{shown}: {label} {}", edges.join(", "));
            if !known {
                problems.push(format!(
                    "{shown}: {} use each other in a circle; move what they share to a lower \
                     file of the folder",
                    component.join(", ")
                ));
            }
        }
    }
    for (folder, members) in table.known_cycles {
        let members: Vec<String> = members.iter().map(|m| m.to_string()).collect();
        if !found_cycles.contains(&(folder.to_string(), members.clone())) {
            problems.push(format!(
                "{}/{folder}: the known circle {} is gone: remove it from `known_cycles`",
                table.src,
                members.join(", ")
            ));
        }
    }
    println!("{}: layers", table.src);
    for (module, targets) in &layer_uses {
        println!(
            "{module:>12} (layer {}) uses {}",
            layer_of(module).unwrap(),
            targets.iter().cloned().collect::<Vec<_>>().join(", ")
        );
    }
    assert!(
        problems.is_empty(),
        "{}: layering violations:\n{}",
        table.src,
        problems.join("\n")
    );
    assert!(
        !folder_graphs.is_empty(),
        "{}: the scan found no references at all",
        table.src
    );
}

#[test]
fn the_scanner_sees_grouped_relative_and_macro_paths() {
    let code = code_only(
        "use crate::{base::value::Any, base::error::{Error, Result}};\n// crate::registry in a \
         comment\nfn f() -> $crate::call::function::Function { \"crate::data\" }\n\
         use super::{view::TensorView, self};\n",
    );
    let found = references(
        Path::new("/nonexistent"),
        &["data".into(), "tensor".into(), "check".into()],
        false,
        &code,
        false,
    );
    let found: Vec<String> = found.iter().map(|p| p.join("::")).collect();
    assert_eq!(
        found,
        vec![
            "base::value::Any",
            "base::error::Error",
            "base::error::Result",
            "call::function::Function",
            "data::tensor::view::TensorView",
            "data::tensor",
        ],
        "comments and strings are ignored, groups are split, `super` is resolved"
    );
}

#[test]
fn circles_are_found() {
    let mut graph: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for (a, b) in [("a", "b"), ("b", "c"), ("c", "a"), ("c", "d")] {
        graph.entry(a.into()).or_default().insert(b.into());
    }
    assert_eq!(cycles(&graph), vec![vec!["a", "b", "c"]]);
}
