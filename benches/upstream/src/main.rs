//! This SDK (`tvm_ffi`) against Apache's consumer crate (`upstream` = `tvm-ffi` 0.1.15) on the
//! same Rust-side operations over the same runtime, in one process: each operation runs in
//! alternating rounds for both crates; the best round of each is reported in ns per operation
//! with the ratio SDK / upstream (below 1.0: the SDK is faster).
//!
//! Usage: `bench_upstream [iterations per round] [rounds]` (`bash benches/upstream.sh`).
use std::hint::black_box;
use std::time::Instant;

mod ast;

/// One operation, written once against each crate; each closure runs `n` iterations.
struct Case {
    name: &'static str,
    what: &'static str,
    sdk: Box<dyn FnMut(u64)>,
    upstream: Box<dyn FnMut(u64)>,
    /// Operations per call of a closure with `n` < `per` (a whole traversal of `per` values
    /// runs at least once).
    per: u64,
}

fn best_ns(f: &mut dyn FnMut(u64), n: u64, per: u64) -> f64 {
    let start = Instant::now();
    f(n);
    // A closure runs whole units of `per` operations, at least one.
    let done = (n / per).max(1) * per;
    start.elapsed().as_nanos() as f64 / done as f64
}

fn cases() -> Vec<Case> {
    let mut out = Vec::new();

    // A C++ function of the runtime (libtvm_ffi registers `testing.echo`).
    let f_sdk = tvm_ffi::Function::get_global_required("testing.echo").unwrap();
    let f_up = upstream::Function::get_global("testing.echo").unwrap();
    out.push(Case {
        name: "call",
        what: "testing.echo(i) -> i64, a C++ function",
        sdk: Box::new(move |n| {
            for i in 0..n as i64 {
                black_box(f_sdk.call_as::<i64, _>((black_box(i),)).unwrap());
            }
        }),
        upstream: Box::new(move |n| {
            for i in 0..n as i64 {
                let r = f_up.call_tuple((black_box(i),)).unwrap();
                black_box(i64::try_from(r).unwrap());
            }
        }),
        per: 1,
    });

    out.push(Case {
        name: "any.i64",
        what: "i64 -> Any -> i64",
        sdk: Box::new(|n| {
            for i in 0..n as i64 {
                black_box(tvm_ffi::Any::new(black_box(i)).cast::<i64>().unwrap());
            }
        }),
        upstream: Box::new(|n| {
            for i in 0..n as i64 {
                black_box(i64::try_from(upstream::Any::from(black_box(i))).unwrap());
            }
        }),
        per: 1,
    });

    let values: Vec<i64> = (0..1000).collect();
    let a_sdk = tvm_ffi::Array::new(values.clone()).unwrap();
    let a_up = upstream::Array::new(values.clone());
    let (a1, a2) = (a_sdk.clone(), a_up.clone());
    out.push(Case {
        name: "array.get",
        what: "a.get(i) on a 1000-element Array<i64>",
        sdk: Box::new(move |n| {
            for i in 0..n as usize {
                black_box(a1.get(black_box(i % 1000)));
            }
        }),
        upstream: Box::new(move |n| {
            for i in 0..n as usize {
                black_box(a2.get(black_box(i % 1000)).unwrap());
            }
        }),
        per: 1,
    });
    let (a1, a2) = (a_sdk.clone(), a_up.clone());
    out.push(Case {
        name: "array.iterate",
        what: "one element of `for x in &a` (Array<i64>, 1000)",
        sdk: Box::new(move |n| {
            for _ in 0..n / 1000 {
                for x in &a1 {
                    black_box(x);
                }
            }
        }),
        upstream: Box::new(move |n| {
            for _ in 0..n / 1000 {
                for x in a2.iter() {
                    black_box(x);
                }
            }
        }),
        per: 1,
    });
    let (v1, v2) = (values.clone(), values.clone());
    out.push(Case {
        name: "array.build",
        what: "Array<i64> of 1000 from a Vec (per element)",
        sdk: Box::new(move |n| {
            for _ in 0..n / 1000 {
                black_box(tvm_ffi::Array::from(black_box(v1.clone())));
            }
        }),
        upstream: Box::new(move |n| {
            for _ in 0..n / 1000 {
                black_box(upstream::Array::new(black_box(v2.clone())));
            }
        }),
        per: 1,
    });
    out.push(Case {
        name: "array.collect",
        what: "Array<i64> of 1000 collected from a range (per element)",
        sdk: Box::new(move |n| {
            for _ in 0..n / 1000 {
                black_box((0..black_box(1000i64)).collect::<tvm_ffi::Array<i64>>());
            }
        }),
        upstream: Box::new(move |n| {
            for _ in 0..n / 1000 {
                black_box((0..black_box(1000i64)).collect::<upstream::Array<i64>>());
            }
        }),
        per: 1,
    });
    let (any_sdk, any_up) = (
        tvm_ffi::Any::new(a_sdk.clone()),
        upstream::Any::from(a_up.clone()),
    );
    out.push(Case {
        name: "cast.array",
        what: "Any holding an Array of 1000 i64 -> Array<i64> (checked)",
        sdk: Box::new(move |n| {
            for _ in 0..n {
                black_box(any_sdk.clone().cast::<tvm_ffi::Array<i64>>().unwrap());
            }
        }),
        upstream: Box::new(move |n| {
            for _ in 0..n {
                black_box(upstream::Array::<i64>::try_from(any_up.clone()).unwrap());
            }
        }),
        per: 1,
    });

    let pairs: Vec<(i64, i64)> = (0..1000).map(|i| (i, i * 2)).collect();
    let m_sdk: tvm_ffi::Map<i64, i64> = tvm_ffi::Map::new(pairs.clone()).unwrap();
    let m_up: upstream::Map<i64, i64> = pairs.iter().copied().collect();
    out.push(Case {
        name: "map.get",
        what: "m.get(k) on a 1000-entry Map<i64, i64>",
        sdk: Box::new(move |n| {
            for i in 0..n as i64 {
                black_box(m_sdk.get(black_box(i % 1000)));
            }
        }),
        upstream: Box::new(move |n| {
            for i in 0..n as i64 {
                black_box(m_up.get(&black_box(i % 1000)).unwrap());
            }
        }),
        per: 1,
    });

    // A tree of 10^5 values: an array of 1000 arrays of 99 integers (1 + 1000 + 99 000).
    let leaves: Vec<i64> = (0..99).collect();
    let tree_sdk =
        tvm_ffi::Array::new((0..1000).map(|_| tvm_ffi::Array::new(leaves.clone()).unwrap()))
            .unwrap();
    let tree_up = upstream::Array::new(
        (0..1000)
            .map(|_| upstream::Array::new(leaves.clone()))
            .collect::<Vec<_>>(),
    );
    const TREE_NODES: u64 = 100_001;
    let (t1, t2) = (tree_sdk.clone(), tree_up.clone());
    out.push(Case {
        name: "walk.tree",
        what: "structural walk of a 10^5-value tree, |v: i64| counts (per value)",
        sdk: Box::new(move |n| {
            use tvm_ffi::structural::{walk, WalkOrder, WalkResult};
            for _ in 0..(n / TREE_NODES).max(1) {
                let mut count = 0u64;
                let done = walk(
                    &t1,
                    |v: i64| {
                        count += black_box(v) as u64 & 1;
                        WalkResult::Advance
                    },
                    WalkOrder::PreOrder,
                )
                .unwrap();
                black_box((done, count));
            }
        }),
        upstream: Box::new(move |n| {
            use upstream::{structural_walk, WalkOrder, WalkResult};
            for _ in 0..(n / TREE_NODES).max(1) {
                let mut count = 0u64;
                let done = structural_walk(
                    &t2,
                    |v: i64| {
                        count += black_box(v) as u64 & 1;
                        WalkResult::Advance
                    },
                    WalkOrder::PreOrder,
                )
                .unwrap();
                black_box((done.is_none(), count));
            }
        }),
        per: TREE_NODES,
    });
    let (t1, t2) = (tree_sdk.clone(), tree_up.clone());
    out.push(Case {
        name: "map.unchanged",
        what: "structural map of the 10^5-value tree, |v: i64| v: the same root back (per value)",
        sdk: Box::new(move |n| {
            use tvm_ffi::structural::{map, WalkOrder};
            for _ in 0..(n / TREE_NODES).max(1) {
                let out = map(
                    t1.clone(),
                    |v: i64| tvm_ffi::Any::new(v),
                    WalkOrder::PostOrder,
                )
                .unwrap();
                black_box(out);
            }
        }),
        upstream: Box::new(move |n| {
            use upstream::{structural_map, WalkOrder};
            for _ in 0..(n / TREE_NODES).max(1) {
                let out = structural_map(
                    t2.clone(),
                    |v: i64| upstream::Any::from(v),
                    WalkOrder::PostOrder,
                )
                .unwrap();
                black_box(out);
            }
        }),
        per: TREE_NODES,
    });

    // `match_any!` over 20 arms naming final leaf types, each leaf in turn (both crates use a
    // table keyed by type index for such a match).
    let (leaves_sdk, leaves_up) = (ast::sdk::all(), ast::upstream_ast::all());
    for (a, b) in leaves_sdk.iter().zip(&leaves_up) {
        let label = ast::sdk::classify(a);
        assert!(label != "unsupported" && label == ast::upstream_ast::classify(b));
    }
    out.push(Case {
        name: "match",
        what: "match_any! over 20 final leaf types (per match)",
        sdk: Box::new(move |n| {
            for i in 0..n as usize {
                black_box(ast::sdk::classify(black_box(&leaves_sdk[i % 20])));
            }
        }),
        upstream: Box::new(move |n| {
            for i in 0..n as usize {
                black_box(ast::upstream_ast::classify(black_box(&leaves_up[i % 20])));
            }
        }),
        per: 1,
    });

    let text = "a string of exactly 32 bytes ok!";
    out.push(Case {
        name: "string.new",
        what: "String from a 32-byte &str",
        sdk: Box::new(move |n| {
            for _ in 0..n {
                black_box(tvm_ffi::String::from(black_box(text)));
            }
        }),
        upstream: Box::new(move |n| {
            for _ in 0..n {
                black_box(upstream::String::from(black_box(text)));
            }
        }),
        per: 1,
    });
    out
}

/// Loads the wheel's C++ test library (`testing.echo` lives there), as `import tvm_ffi` does.
fn load_cpp_testing_library() {
    extern "C" {
        fn dlopen(filename: *const std::ffi::c_char, flags: i32) -> *mut std::ffi::c_void;
    }
    let path = format!("{}/libtvm_ffi_testing.so", tvm_ffi::build_info::LIBDIR);
    let c = std::ffi::CString::new(path.clone()).unwrap();
    // SAFETY: dlopen with a valid path, RTLD_NOW | RTLD_GLOBAL; the handle is kept.
    let handle = unsafe { dlopen(c.as_ptr(), 0x2 | 0x100) };
    assert!(!handle.is_null(), "cannot load {path}");
}

fn main() {
    load_cpp_testing_library();
    let mut args = std::env::args().skip(1);
    let n: u64 = args
        .next()
        .map_or(200_000, |s| s.parse().expect("iterations"));
    let rounds: usize = args.next().map_or(5, |s| s.parse().expect("rounds"));
    // An optional third argument keeps the operations whose name contains it (for profiling).
    let only = args.next().unwrap_or_default();
    println!(
        "This SDK against Apache's tvm-ffi {} crate, {n} iterations x {rounds} rounds (best):",
        "0.1.15"
    );
    println!(
        "{:<14} {:>10} {:>12} {:>7}  {}",
        "operation", "SDK ns", "upstream ns", "ratio", "what"
    );
    for mut case in cases()
        .into_iter()
        .filter(|case| case.name.contains(only.as_str()))
    {
        let (mut sdk, mut up) = (f64::INFINITY, f64::INFINITY);
        (case.sdk)(n / 10); // warm-up
        (case.upstream)(n / 10);
        for _ in 0..rounds {
            sdk = sdk.min(best_ns(&mut case.sdk, n, case.per));
            up = up.min(best_ns(&mut case.upstream, n, case.per));
        }
        println!(
            "{:<14} {:>10.2} {:>12.2} {:>7.2}  {}",
            case.name,
            sdk,
            up,
            sdk / up,
            case.what
        );
    }
}
