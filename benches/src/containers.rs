//! Container rows of the call-overhead benchmark, the twin of `benches/cpp/containers.h`: the
//! same tables (built by the runtime's `ffi.Map` / `ffi.Array` in both programs), read the same
//! way, in nanoseconds per operation.
//!
//! - `map.get`: a lookup in a 1000-entry `Map<i64, i64>` (dense), cycling through its keys;
//! - `map.get_str`: the same with 10-byte string keys (heap strings, hashed by content);
//! - `map.get_small`: a lookup in a 3-entry map (small: a linear scan);
//! - `map.len`: the length;
//! - `map.iterate`: one entry of a `for (k, v) in &map` loop;
//! - `array.get`: an element of a 1000-element `Array<i64>`;
//! - `array.iterate`: one element of a `for x in &array` loop;
//! - `shape.build`: a new 4-dimensional `Shape`, released at once.
use std::hint::black_box;

use tvm_ffi::{Any, Array, Function, Map, Shape, String};

use super::{best_ns_per_op, report};

/// Entries of the large tables.
const N: usize = 1000;

/// A map built by the runtime's `ffi.Map` from `keys` and the values `0..`, as the C++ twin
/// builds its own.
fn runtime_map<K: tvm_ffi::IntoAny + Clone>(keys: &[K]) -> Result<Any, std::string::String> {
    let make = Function::get_global("ffi.Map").ok_or("ffi.Map is not registered")?;
    let args: Vec<Any> = keys
        .iter()
        .enumerate()
        .flat_map(|(i, k)| [Any::new(k.clone()), Any::new(i as i64)])
        .collect();
    make.call(args.as_slice()).map_err(|e| e.to_string())
}

/// Runs the container rows.
pub(crate) fn run(iterations: u64, runs: u32) -> Result<(), std::string::String> {
    let int_keys: Vec<i64> = (0..N as i64).map(|i| i * 7919).collect();
    let int_map: Map<i64, i64> = runtime_map(&int_keys)?.cast().map_err(|e| e.to_string())?;
    let str_keys: Vec<String> = (0..N)
        .map(|i| String::from(format!("key-{i:06}")))
        .collect();
    let str_map: Map<String, i64> = runtime_map(&str_keys)?.cast().map_err(|e| e.to_string())?;
    let small_keys: Vec<i64> = vec![3, 1, 2];
    let small_map: Map<i64, i64> = runtime_map(&small_keys)?
        .cast()
        .map_err(|e| e.to_string())?;
    let make_array = Function::get_global("ffi.Array").ok_or("ffi.Array is not registered")?;
    let items: Vec<Any> = (0..N as i64).map(Any::new).collect();
    let array: Array<i64> = make_array
        .call(items.as_slice())
        .and_then(|a| a.cast())
        .map_err(|e| e.to_string())?;

    // Check once, outside the timed loops, that the reads do what we think they do.
    let checks = [
        int_map.get(int_keys[10]) == Some(10),
        str_map.get(&str_keys[999]) == Some(999),
        small_map.get(2i64) == Some(2),
        int_map.iter().map(|(_, v)| v).sum::<i64>() == (N as i64 - 1) * N as i64 / 2,
        array.get(7) == Some(7),
    ];
    if checks.contains(&false) {
        return Err(format!("a container check failed: {checks:?}"));
    }

    let ns = best_ns_per_op(iterations, runs, |n| {
        let (mut sum, mut j) = (0i64, 0usize);
        for _ in 0..n {
            sum += int_map.get(black_box(int_keys[j])).unwrap_or(0);
            j += 1;
            if j == N {
                j = 0;
            }
        }
        black_box(sum);
    });
    report("map.get", ns);

    let ns = best_ns_per_op(iterations, runs, |n| {
        let (mut sum, mut j) = (0i64, 0usize);
        for _ in 0..n {
            sum += str_map.get(black_box(&str_keys[j])).unwrap_or(0);
            j += 1;
            if j == N {
                j = 0;
            }
        }
        black_box(sum);
    });
    report("map.get_str", ns);

    let ns = best_ns_per_op(iterations, runs, |n| {
        let (mut sum, mut j) = (0i64, 0usize);
        for _ in 0..n {
            sum += small_map.get(black_box(small_keys[j])).unwrap_or(0);
            j += 1;
            if j == small_keys.len() {
                j = 0;
            }
        }
        black_box(sum);
    });
    report("map.get_small", ns);

    let ns = best_ns_per_op(iterations, runs, |n| {
        let mut sum = 0usize;
        for _ in 0..n {
            sum += black_box(&int_map).len();
        }
        black_box(sum);
    });
    report("map.len", ns);

    let ns = best_ns_per_op(iterations, runs, |n| {
        let (mut sum, mut visited) = (0i64, 0u64);
        while visited < n {
            for (k, v) in black_box(&int_map) {
                sum += k ^ v;
            }
            visited += N as u64;
        }
        black_box(sum);
    });
    report("map.iterate", ns);

    let ns = best_ns_per_op(iterations, runs, |n| {
        let (mut sum, mut j) = (0i64, 0usize);
        for _ in 0..n {
            sum += black_box(&array).get(black_box(j)).unwrap_or(0);
            j += 1;
            if j == N {
                j = 0;
            }
        }
        black_box(sum);
    });
    report("array.get", ns);

    let ns = best_ns_per_op(iterations, runs, |n| {
        let (mut sum, mut visited) = (0i64, 0u64);
        while visited < n {
            for x in black_box(&array) {
                sum += x;
            }
            visited += N as u64;
        }
        black_box(sum);
    });
    report("array.iterate", ns);

    let ns = best_ns_per_op(iterations, runs, |n| {
        for i in 0..n as i64 {
            drop(black_box(Shape::new(&[black_box(i), 2, 3, 4])));
        }
    });
    report("shape.build", ns);
    Ok(())
}
