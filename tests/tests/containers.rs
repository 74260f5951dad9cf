//! Containers read in place, checked against the runtime's own functions: every length, lookup
//! and iteration of `Map` and `Dict` on many random tables (small and dense; int, string,
//! bytes, float, BigInt, object and mixed keys), `List`/`Dict` shared-mutation semantics,
//! `Shape`, `BigInt`, and the idiomatic traits.
use tvm_ffi::builtin::{AnyObject, DictObj, MapObj};
use tvm_ffi::sys::TVMFFIAny;
use tvm_ffi::{
    Any, Array, BigInt, DataType, Device, Dict, Function, IntoAny, List, Map, ObjectRef, Shape,
    String,
};

use tvm_ffi_tests::{global, runtime_builtin};

/// A small deterministic generator (xorshift64*): the same tables on every run.
struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
    fn text(&mut self, len: usize) -> std::string::String {
        (0..len)
            .map(|_| (b'a' + self.below(26) as u8) as char)
            .collect()
    }
}

/// Identical raw values: the same entry of the same table (or the same plain value).
fn same_raw(a: &TVMFFIAny, b: &TVMFFIAny) -> bool {
    // SAFETY: both are 16 initialised bytes.
    unsafe {
        *(a as *const TVMFFIAny as *const [u64; 2]) == *(b as *const TVMFFIAny as *const [u64; 2])
    }
}

/// A random key of one of many kinds; objects are kept alive by `keep`.
fn random_key(rng: &mut Rng, kind: u64) -> Any {
    match kind {
        0 => Any::new(rng.next() as i64),
        1 => Any::new(rng.below(64) as i64),
        2 => {
            let len = rng.below(8) as usize;
            Any::new(rng.text(len).as_str())
        }
        3 => {
            let len = 8 + rng.below(24) as usize;
            Any::new(rng.text(len).as_str())
        }
        4 => {
            let len = rng.below(20) as usize;
            Any::new(rng.text(len).as_bytes())
        }
        5 => Any::new(f64::from_bits(rng.next())),
        6 => Any::new(rng.below(2) == 1),
        7 => Any::none(),
        8 => {
            let words: Vec<i64> = (0..2 + rng.below(2)).map(|_| rng.next() as i64).collect();
            Any::new(BigInt::from_words(&words))
        }
        9 => Any::new(Array::new([rng.next() as i64]).unwrap()),
        10 => Any::new(DataType::from(tvm_ffi::sys::DLDataType {
            code: rng.below(4) as u8,
            bits: 8 << rng.below(4),
            lanes: 1,
        })),
        _ => Any::new(Device::from(tvm_ffi::sys::DLDevice {
            device_type: 1 + rng.below(3) as i32,
            device_id: rng.below(4) as i32,
        })),
    }
}

/// The same key in another representation where one exists (a new heap string or BigInt
/// object of the same content), else a copy.
fn equivalent_key(key: &Any) -> Any {
    if let Some(text) = key.as_exact::<&str>() {
        return Any::new(text);
    }
    if let Some(bytes) = key.as_exact::<&[u8]>() {
        return Any::new(bytes);
    }
    if key.type_key() == "ffi.BigInt" {
        return Any::new(BigInt::from_words(key.cast::<BigInt>().unwrap().words()));
    }
    key.clone()
}

/// The runtime's answer for `key` in `table` (an `ffi.Map` or `ffi.Dict`).
fn runtime_get(table: &Any, key: &Any) -> Option<Any> {
    let (get, missing) = if table.type_key() == "ffi.Map" {
        (
            global("ffi.MapGetItemOrMissing"),
            global("ffi.GetInvalidObject"),
        )
    } else {
        (
            // SAFETY: the container is this test thread's alone.
            unsafe { runtime_builtin("ffi.DictGetItemOrMissing") },
            global("ffi.GetInvalidObject"),
        )
    };
    let missing = missing.call(()).unwrap();
    let out = get.call((table, key)).unwrap();
    (!same_raw(out.as_raw(), missing.as_raw())).then_some(out)
}

/// The runtime's iteration of `table`.
fn runtime_entries(table: &Any) -> Vec<(Any, Any)> {
    let (size, functor) = if table.type_key() == "ffi.Map" {
        ("ffi.MapSize", "ffi.MapForwardIterFunctor")
    } else {
        ("ffi.DictSize", "ffi.DictForwardIterFunctor")
    };
    // SAFETY: the container is this test thread's alone.
    let n: i64 = unsafe { runtime_builtin(size) }.call_as((table,)).unwrap();
    let mut out = Vec::new();
    if n == 0 {
        return out;
    }
    // SAFETY: as above.
    let it: Function = unsafe { runtime_builtin(functor) }
        .call_as((table,))
        .unwrap();
    loop {
        out.push((it.call((0i64,)).unwrap(), it.call((1i64,)).unwrap()));
        if !it.call_as::<bool, _>((2i64,)).unwrap() {
            break;
        }
    }
    out
}

/// Checks length, iteration and every lookup of `table` against the runtime. Returns the
/// number of lookups compared.
fn check_against_runtime(table: &Any, keys: &[Any], rng: &mut Rng, label: &str) -> usize {
    let entries = runtime_entries(table);
    let (len, ours): (usize, Vec<(Any, Any)>) = if table.type_key() == "ffi.Map" {
        let map: Map<Any, Any> = table.cast().unwrap();
        let views = map.iter_views();
        assert_eq!(views.len(), entries.len(), "{label}");
        (
            map.len(),
            views
                .map(|(k, v)| (k.to_owned().unwrap(), v.to_owned().unwrap()))
                .collect(),
        )
    } else {
        let dict: Dict = table.cast().unwrap();
        (dict.len(), dict.snapshot().unwrap())
    };
    assert_eq!(len, entries.len(), "{label}: len");
    assert_eq!(ours.len(), entries.len(), "{label}: iteration length");
    for (i, ((k1, v1), (k2, v2))) in ours.iter().zip(&entries).enumerate() {
        assert!(same_raw(k1.as_raw(), k2.as_raw()), "{label}: key #{i}");
        assert!(same_raw(v1.as_raw(), v2.as_raw()), "{label}: value #{i}");
    }
    let mut lookups = 0;
    let absent: Vec<Any> = (0..keys.len().min(50) + 5)
        .map(|_| {
            let kind = rng.below(12);
            random_key(rng, kind)
        })
        .collect();
    let equivalents: Vec<Any> = keys.iter().map(equivalent_key).collect();
    for key in keys.iter().chain(&equivalents).chain(&absent) {
        let expected = runtime_get(table, key);
        let found = if table.type_key() == "ffi.Map" {
            let map: Map<Any, Any> = table.cast().unwrap();
            assert_eq!(
                map.contains_key(key),
                expected.is_some(),
                "{label}: {key:?}"
            );
            map.get(key)
        } else {
            let dict: Dict = table.cast().unwrap();
            assert_eq!(
                dict.contains_key(key),
                expected.is_some(),
                "{label}: {key:?}"
            );
            dict.try_get(key).unwrap()
        };
        match (&found, &expected) {
            (Some(a), Some(b)) => assert!(same_raw(a.as_raw(), b.as_raw()), "{label}: {key:?}"),
            (None, None) => {}
            _ => panic!("{label}: lookup of {key:?}: Rust {found:?}, runtime {expected:?}"),
        }
        lookups += 1;
    }
    lookups
}

const SIZES: &[usize] = &[0, 1, 2, 3, 4, 5, 7, 8, 15, 16, 17, 33, 100, 257, 1000, 3000];

/// The key kinds of one table: one kind alone, or all mixed (`None`).
fn table_keys(rng: &mut Rng, size: usize, kind: Option<u64>) -> Vec<Any> {
    (0..size)
        .map(|_| {
            let kind = kind.unwrap_or_else(|| rng.below(12));
            random_key(rng, kind)
        })
        .collect()
}

#[test]
fn map_reads_in_place_agree_with_the_runtime_on_random_maps() {
    let make = global("ffi.Map");
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    let mut lookups = 0;
    for &size in SIZES {
        for kind in (0..12).map(Some).chain([None, None]) {
            let keys = table_keys(&mut rng, size, kind);
            let args: Vec<Any> = keys
                .iter()
                .enumerate()
                .flat_map(|(i, k)| [k.clone(), Any::new(i as i64)])
                .collect();
            let table = make.call(&args).unwrap();
            assert_eq!(table.type_key(), "ffi.Map");
            let label = format!("map size {size} kind {kind:?}");
            lookups += check_against_runtime(&table, &keys, &mut rng, &label);
        }
    }
    assert!(lookups > 20_000, "{lookups}");
}

#[test]
fn dict_reads_in_place_agree_with_the_runtime_through_mutations() {
    let make = global("ffi.Dict");
    // SAFETY: the container is this test thread's alone.
    let set = unsafe { runtime_builtin("ffi.DictSetItem") };
    // SAFETY: the container is this test thread's alone.
    let erase = unsafe { runtime_builtin("ffi.DictErase") };
    let mut rng = Rng(0x0123_4567_89ab_cdef);
    for &size in SIZES {
        for kind in [Some(0), Some(2), Some(3), Some(8), Some(9), None] {
            let mut keys = table_keys(&mut rng, size, kind);
            let args: Vec<Any> = keys
                .iter()
                .flat_map(|k| [k.clone(), Any::new(1i64)])
                .collect();
            let table = make.call(&args).unwrap();
            assert_eq!(table.type_key(), "ffi.Dict");
            check_against_runtime(&table, &keys, &mut rng, &format!("dict {size} {kind:?}"));
            // Grow (small tables switch to dense in place), update (a dense table moves the
            // key to the end), erase.
            for step in 0..(size / 2 + 6) {
                match rng.below(3) {
                    0 => {
                        let key_kind = kind.unwrap_or_else(|| rng.below(12));
                        let key = random_key(&mut rng, key_kind);
                        set.call((&table, &key, step as i64)).unwrap();
                        keys.push(key);
                    }
                    1 if !keys.is_empty() => {
                        let key = keys[rng.below(keys.len() as u64) as usize].clone();
                        set.call((&table, &key, -(step as i64))).unwrap();
                    }
                    _ if !keys.is_empty() => {
                        let key = keys.swap_remove(rng.below(keys.len() as u64) as usize);
                        erase.call((&table, &key)).unwrap();
                    }
                    _ => {}
                }
            }
            check_against_runtime(
                &table,
                &keys,
                &mut rng,
                &format!("dict {size} {kind:?} mutated"),
            );
        }
    }
}

/// Set in the process that [`reads_through_the_runtime_agree_with_the_runtime`] starts.
const FORCE_RUNTIME_READS: &str = "TVM_FFI_TEST_FORCE_RUNTIME_READS";

#[test]
fn reads_through_the_runtime_agree_with_the_runtime() {
    // In a process of its own: the verdict is process-wide, and other tests of this binary
    // check the in-place reads.
    if std::env::var_os(FORCE_RUNTIME_READS).is_none() {
        let out = std::process::Command::new(std::env::current_exe().unwrap())
            .args([
                "--exact",
                "reads_through_the_runtime_agree_with_the_runtime",
                "--test-threads=1",
            ])
            .env(FORCE_RUNTIME_READS, "1")
            .output()
            .unwrap();
        let stdout = std::string::String::from_utf8_lossy(&out.stdout);
        assert!(
            out.status.success(),
            "{stdout}{}",
            std::string::String::from_utf8_lossy(&out.stderr)
        );
        assert!(stdout.contains("1 passed"), "{stdout}");
        return;
    }
    // Answers of the fast path (in place) on a map and a dict of mixed keys, small and dense.
    let (make_map, make_dict) = (global("ffi.Map"), global("ffi.Dict"));
    let mut rng = Rng(0x0dd_ba11);
    let tables: Vec<(Any, Vec<Any>)> = [3, 40]
        .into_iter()
        .flat_map(|size| {
            let mut keys = table_keys(&mut rng, size, None);
            let args: Vec<Any> = keys
                .iter()
                .enumerate()
                .flat_map(|(i, k)| [k.clone(), Any::new(i as i64)])
                .collect();
            keys.extend((0..5).map(|_| random_key(&mut rng, 0)));
            let (map, dict) = (
                make_map.call(&args).unwrap(),
                make_dict.call(&args).unwrap(),
            );
            [(map, keys.clone()), (dict, keys)]
        })
        .collect();
    let answers = |table: &Any, keys: &[Any]| -> Vec<[u64; 2]> {
        let raw = |a: &Any| {
            // SAFETY: a TVMFFIAny is 16 initialised bytes.
            unsafe { *(a.as_raw() as *const TVMFFIAny as *const [u64; 2]) }
        };
        let mut out = Vec::new();
        if table.type_key() == "ffi.Map" {
            let map: Map<Any, Any> = table.cast().unwrap();
            out.push([map.len() as u64, 0]);
            for (k, v) in map.iter() {
                out.extend([raw(&k), raw(&v)]);
            }
            for key in keys {
                out.push([map.contains_key(key) as u64, 1]);
                out.extend(map.get(key).as_ref().map(raw));
            }
        } else {
            let dict: Dict = table.cast().unwrap();
            out.push([dict.len() as u64, 0]);
            for entry in dict.iter() {
                let (k, v) = entry.unwrap();
                out.extend([raw(&k), raw(&v)]);
            }
            for key in keys {
                out.push([dict.contains_key(key) as u64, 1]);
                out.extend(dict.get(key).as_ref().map(raw));
            }
        }
        out
    };
    let fast: Vec<_> = tables.iter().map(|(t, keys)| answers(t, keys)).collect();
    // What the load-time check decides when the runtime's table layout is not the one read in
    // place: every read of a Map or Dict goes through the runtime's functions, with the same
    // answers.
    tvm_ffi::__private::force_runtime_reads(true);
    for ((table, keys), fast) in tables.iter().zip(&fast) {
        assert_eq!(&answers(table, keys), fast, "{}", table.type_key());
    }
    // SAFETY: the container is this test thread's alone.
    let set = unsafe { runtime_builtin("ffi.DictSetItem") };
    // SAFETY: the container is this test thread's alone.
    let erase = unsafe { runtime_builtin("ffi.DictErase") };
    let mut rng = Rng(0x5eed_f00d_0bad_cafe);
    let mut lookups = 0;
    for &size in &[0, 1, 2, 3, 5, 8, 17, 100, 257] {
        for kind in [Some(0), Some(2), Some(3), Some(8), Some(9), None] {
            let keys = table_keys(&mut rng, size, kind);
            let args: Vec<Any> = keys
                .iter()
                .enumerate()
                .flat_map(|(i, k)| [k.clone(), Any::new(i as i64)])
                .collect();
            let map = make_map.call(&args).unwrap();
            lookups += check_against_runtime(&map, &keys, &mut rng, &format!("map {size}"));
            let dict = make_dict.call(&args).unwrap();
            let mut keys = keys;
            for step in 0..(size / 2 + 4) {
                if step % 3 != 2 || keys.is_empty() {
                    let key_kind = kind.unwrap_or_else(|| rng.below(12));
                    let key = random_key(&mut rng, key_kind);
                    set.call((&dict, &key, step as i64)).unwrap();
                    keys.push(key);
                } else {
                    let key = keys.swap_remove(rng.below(keys.len() as u64) as usize);
                    erase.call((&dict, &key)).unwrap();
                }
            }
            lookups += check_against_runtime(&dict, &keys, &mut rng, &format!("dict {size}"));
        }
    }
    assert!(lookups > 2_000, "{lookups}");
    // The typed API: lookups, iteration, writes, removal, and a dict changed while iterated.
    let map: Map<String, i64> = Map::new([("a".into(), 1), ("bb".into(), 2)]).unwrap();
    assert_eq!((map.len(), map.get("bb"), map.get("c")), (2, Some(2), None));
    assert!(map.contains_key("a") && !map.contains_key("z"));
    assert_eq!(
        map.iter().collect::<Vec<_>>(),
        [("a".into(), 1), ("bb".into(), 2)]
    );
    let dict: Dict<String, i64> = Dict::new([("a".into(), 1)]).unwrap();
    dict.insert("b".into(), 2).unwrap();
    assert_eq!((dict.len(), dict.get("b")), (2, Some(2)));
    assert_eq!(dict.remove("a").unwrap(), Some(1));
    assert_eq!(dict.remove("a").unwrap(), None);
    assert_eq!(dict.entries().unwrap(), [("b".into(), 2)]);
    let mut iter = dict.iter();
    assert_eq!(iter.next().unwrap().unwrap(), ("b".into(), 2));
    dict.insert("c".into(), 3).unwrap();
    let err = iter.next().unwrap().unwrap_err();
    assert_eq!(err.message(), "dict changed size during iteration");
    dict.clear().unwrap();
    assert!(dict.is_empty());
    // Keys with hooks (found by Rust calling the hooks on copies, without the lock).
    keys_with_a_custom_hash_are_looked_up_through_the_runtime();
}

#[test]
fn keys_with_a_custom_hash_are_looked_up_through_the_runtime() {
    // `ffi.StructuralKey` registers `__any_hash__`/`__any_equal__`: structurally equal keys of
    // different identity are the same key.
    let key = global("ffi.StructuralKey");
    let a = key.call((Array::new([1i64, 2]).unwrap(),)).unwrap();
    let b = key.call((Array::new([1i64, 2]).unwrap(),)).unwrap();
    let c = key.call((Array::new([3i64]).unwrap(),)).unwrap();
    assert!(!same_raw(a.as_raw(), b.as_raw()));
    let entries: Vec<(Any, i64)> = (0..6)
        .map(|i| (key.call((i,)).unwrap(), i))
        .chain([(a.clone(), 100)])
        .collect();
    for n in [1, entries.len()] {
        let map: Map<Any, i64> = Map::new(entries[entries.len() - n..].iter().cloned()).unwrap();
        assert_eq!(map.get(&b), Some(100), "{n} entries");
        assert!(map.contains_key(&b));
        assert_eq!(map.get(&c), None);
        let dict: Dict<Any, i64> = Dict::new(entries[entries.len() - n..].iter().cloned()).unwrap();
        assert_eq!(dict.try_get(&b).unwrap(), Some(100));
        assert_eq!(dict.remove(&b).unwrap(), Some(100));
        assert_eq!(dict.try_get(&a).unwrap(), None);
    }
}

#[test]
fn the_hash_of_every_key_kind_is_the_runtimes() {
    // A dense map holding one key of each kind next to fillers: each key is found by hash.
    let mut rng = Rng(7);
    for kind in 0..12 {
        for _ in 0..50 {
            let key = random_key(&mut rng, kind);
            let entries: Vec<(Any, i64)> = (0..40i64)
                .map(|i| (Any::new(i + 1_000_000), i))
                .chain([(key.clone(), -1)])
                .collect();
            let map: Map<Any, i64> = Map::new(entries).unwrap();
            assert_eq!(map.get(equivalent_key(&key)), Some(-1), "{key:?}");
        }
    }
    // Keys Rust builds in several ways hash alike: a `&str`, a small and a heap `String`.
    let map: Map<String, i64> =
        Map::new((0..20).map(|i| (String::from(format!("key{i:08}")), i))).unwrap();
    assert_eq!(map.get("key00000007"), Some(7));
    assert_eq!(map.get(String::from("key00000019")), Some(19));
    assert_eq!(map.get(Any::new("key00000003")), Some(3));
    assert_eq!(map.get(1i64), None);
    // Int 1 and bool true, 0.0 and -0.0 are different keys, as in C++.
    let map: Map<Any, i64> = Map::new([(Any::new(1i64), 1), (Any::new(0.0f64), 2)]).unwrap();
    assert_eq!(map.get(true), None);
    assert_eq!(map.get(1i64), Some(1));
    assert_eq!(map.get(-0.0f64), None);
    assert_eq!(map.get(0.0f64), Some(2));
}

#[test]
fn map_iteration_order_is_the_runtimes() {
    // A small map keeps a re-assigned key in place, a dense one moves it to the end.
    let make = global("ffi.Map");
    let small: Map<i64, std::string::String> =
        make.call_as((1i64, "x", 2i64, "y", 1i64, "X")).unwrap();
    assert_eq!(small.entries(), [(1, "X".into()), (2, "y".into())]);
    let dense: Map<i64, std::string::String> = make
        .call_as((
            1i64, "x", 2i64, "y", 3i64, "z", 4i64, "w", 5i64, "v", 1i64, "X",
        ))
        .unwrap();
    assert_eq!(
        dense.keys().collect::<Vec<_>>(),
        [2, 3, 4, 5, 1],
        "{dense:?}"
    );
    assert_eq!(dense.values().last().as_deref(), Some("X"));
    assert_eq!(dense.iter().len(), 5);
}

#[test]
fn dict_writes_are_shared_and_reads_are_checked() {
    let d: Dict<String, i64> = Dict::new([("a".into(), 1)]).unwrap();
    let alias = d.clone();
    assert!(alias.as_object_ref().ptr_eq(d.as_object_ref()));
    for i in 0..10 {
        alias.insert(format!("k{i}").as_str().into(), i).unwrap();
    }
    assert_eq!(d.len(), 11);
    assert_eq!(d.try_get("k9").unwrap(), Some(9));
    // A foreign write of another type: the read is a TypeError, not a wrong value.
    // SAFETY: the container is this test thread's alone.
    unsafe { runtime_builtin("ffi.DictSetItem") }
        .call((&d, "k3", "three"))
        .unwrap();
    let err = d.try_get("k3").unwrap_err();
    assert_eq!(err.kind().as_str(), "TypeError");
    assert_eq!(
        err.message(),
        "Cannot convert from type `ffi.SmallStr` to `int`"
    );
    assert!(d.iter().any(|entry| entry.is_err()));
    assert_eq!(d.remove("k3").unwrap_err().kind(), "TypeError");
    assert!(
        !d.contains_key("k3"),
        "removed even though the value had another type"
    );
    assert_eq!(d.remove("absent").unwrap(), None);
    d.clear().unwrap();
    assert!(alias.is_empty());
    // Converting a Dict keeps its identity; a Dict of the wrong types is not a Dict<String, i64>.
    let any = Any::new(&d);
    let back: Dict<String, i64> = any.cast().unwrap();
    assert!(back.as_object_ref().ptr_eq(d.as_object_ref()));
    d.insert("x".into(), 1).unwrap();
    let err = any.cast::<Dict<String, String>>().unwrap_err();
    assert_eq!(
        err.message(),
        "Cannot convert from type `Dict[K, some value is int]` to `Dict<str, str>`"
    );
}

#[test]
fn iterating_a_dict_that_changes_ends_with_an_error_as_in_python() {
    // SAFETY: the container is this test thread's alone.
    let set = unsafe { runtime_builtin("ffi.DictSetItem") };
    for initial in [2i64, 3, 6, 40] {
        // Adding an entry between two steps (here through the runtime, as a callback would):
        // the next step is a RuntimeError, then the end; nothing is read from the old table.
        for write in ["insert", "remove", "clear", "foreign"] {
            let d: Dict<i64, i64> = Dict::new((0..initial).map(|i| (i, i))).unwrap();
            let mut it = d.iter();
            assert_eq!(it.next().unwrap().unwrap(), (0, 0));
            match write {
                "insert" => d.insert(1000, 0).unwrap(),
                "remove" => assert_eq!(d.remove(1).unwrap(), Some(1)),
                "clear" => d.clear().unwrap(),
                _ => set.call((&d, 2000i64, 1i64)).map(drop).unwrap(),
            }
            let err = it.next().unwrap().unwrap_err();
            assert_eq!(
                (err.kind().as_str(), err.message()),
                ("RuntimeError", "dict changed size during iteration"),
                "{write}"
            );
            assert!(it.next().is_none());
        }
        // Assigning an existing key keeps the size: the iteration goes on in the runtime's
        // order (a dense table moves the key to the end, where it is met again) and ends.
        let d: Dict<i64, i64> = Dict::new((0..initial).map(|i| (i, i))).unwrap();
        let mut seen = Vec::new();
        for entry in &d {
            let (k, v) = entry.unwrap();
            seen.push((k, v));
            if k == 0 && v == 0 {
                d.insert(0, -1).unwrap();
            }
            assert!(seen.len() < 1000, "the iteration ends");
        }
        assert_eq!(seen.len() as i64, initial + i64::from(initial >= 6));
        assert_eq!(d.try_get(0).unwrap(), Some(-1));
    }
}

#[test]
fn rust_threads_sharing_a_list_or_dict_are_serialised() {
    let list: List<i64> = List::default();
    let dict: Dict<i64, i64> = Dict::default();
    std::thread::scope(|scope| {
        for t in 0..4i64 {
            let (list, dict) = (list.clone(), dict.clone());
            scope.spawn(move || {
                for i in 0..500 {
                    list.push(t * 1000 + i).unwrap();
                    dict.insert(t * 1000 + i, i).unwrap();
                    let _ = list.get(list.len() - 1).unwrap();
                    assert_eq!(dict.try_get(t * 1000 + i).unwrap(), Some(i));
                }
            });
        }
    });
    assert_eq!(list.len(), 2000);
    assert_eq!(dict.len(), 2000);
    let mut values = list.to_vec().unwrap();
    values.sort();
    values.dedup();
    assert_eq!(values.len(), 2000);
}

#[test]
fn list_writes_are_shared_and_reads_are_checked() {
    let list: List<i64> = List::new([1, 2]).unwrap();
    let alias = list.clone();
    alias.push(3).unwrap();
    alias.insert(0, 0).unwrap();
    alias.set(1, 10).unwrap();
    assert_eq!(list.to_vec().unwrap(), [0, 10, 2, 3]);
    assert_eq!(list.get(1).unwrap(), 10);
    assert_eq!((list.get(4), list.try_get(4).unwrap()), (None, None));
    let err = list.set(9, 1).unwrap_err();
    assert_eq!(err.kind().as_str(), "IndexError");
    assert_eq!(list.remove(0).unwrap(), Some(0));
    assert_eq!(list.remove(9).unwrap(), None);
    assert_eq!(list.pop().unwrap(), Some(3));
    assert_eq!(list.to_vec().unwrap(), [10, 2]);
    // A write from C++ (the runtime's function) is seen; one of another type fails the read.
    // SAFETY: the container is this test thread's alone.
    unsafe { runtime_builtin("ffi.ListAppend") }
        .call((&list, "four"))
        .unwrap();
    assert_eq!(list.len(), 3);
    let err = list.try_get(2).unwrap_err();
    assert_eq!(
        (err.kind().as_str(), err.message()),
        (
            "TypeError",
            "Cannot convert from type `ffi.SmallStr` to `int`"
        )
    );
    assert!(list.iter().nth(2).unwrap().is_err());
    list.clear().unwrap();
    assert!(alias.is_empty());
    assert_eq!(list.pop().unwrap(), None);
    // Growth moves the elements to a new buffer: reads follow.
    for i in 0..1000 {
        list.push(i).unwrap();
    }
    assert_eq!(list.iter().map(Result::unwrap).sum::<i64>(), 499_500);
    // An Array argument for a List parameter is copied into a new list, as C++ does.
    let array = Array::new([1i64, 2]).unwrap();
    let copied: List<i64> = Any::new(&array).cast().unwrap();
    assert_eq!(copied.to_vec().unwrap(), [1, 2]);
    let err = Any::new(List::new([Any::new(1i64), Any::new("x")]).unwrap())
        .cast::<List<i64>>()
        .unwrap_err();
    assert_eq!(
        err.message(),
        "Cannot convert from type `List[index 1: ffi.SmallStr]` to `List<int>`"
    );
}

#[test]
fn arrays_and_maps_accept_lists_and_dicts_by_copy_as_cpp_does() {
    let list: List<i64> = List::new([4, 5]).unwrap();
    let array: Array<i64> = Any::new(&list).cast().unwrap();
    assert_eq!(array.to_vec(), [4, 5]);
    list.push(6).unwrap();
    assert_eq!(array.len(), 2, "a copy");
    let dict: Dict<String, i64> = Dict::new([("a".into(), 1)]).unwrap();
    let map: Map<String, i64> = Any::new(&dict).cast().unwrap();
    assert_eq!(map.get("a"), Some(1));
    let back: Dict<String, i64> = Any::new(&map).cast().unwrap();
    assert!(!back.as_object_ref().ptr_eq(dict.as_object_ref()));
    assert_eq!(back.try_get("a").unwrap(), Some(1));
    assert_eq!(
        Any::new(&dict)
            .cast::<Map<String, String>>()
            .unwrap_err()
            .message(),
        "Cannot convert from type `Map[K, some value is int]` to `Map<str, str>`"
    );
}

#[test]
fn shapes_are_built_in_place_and_read_as_slices() {
    let shape = Shape::new(&[2, 3, 4]);
    assert_eq!(shape.len(), 3);
    assert_eq!(shape[2], 4);
    assert_eq!(shape.product(), 24);
    assert_eq!(shape, [2, 3, 4]);
    assert_eq!(shape.to_string(), "Shape(2, 3, 4)");
    assert_eq!(format!("{shape:?}"), "[2, 3, 4]");
    assert_eq!(shape.as_object_ref().strong_count(), 1);
    // The runtime reads it: through C++ (`testing.echo` keeps it), and as `ffi.Shape`'s.
    let made: Shape = global("ffi.Shape").call_as((2i64, 3i64, 4i64)).unwrap();
    assert_eq!(made, shape);
    let mut total = 0;
    for d in &made {
        total += d;
    }
    assert_eq!(total, 9);
    assert_eq!(Shape::default().len(), 0);
    assert_eq!(Shape::from(vec![7i64; 100]).iter().sum::<i64>(), 700);
    let collected: Shape = (0..5).collect();
    assert_eq!(Vec::from(&collected), [0, 1, 2, 3, 4]);
    // An Array of ints converts to a Shape (not the reverse), as in C++.
    let from_array: Shape = Any::new(Array::new([5i64, 6]).unwrap()).cast().unwrap();
    assert_eq!(from_array, [5, 6]);
    assert!(Any::new(&shape).cast::<Array<i64>>().is_err());
    let err = Any::new(Array::new(["x"]).unwrap())
        .cast::<Shape>()
        .unwrap_err();
    assert_eq!(
        err.message(),
        "Cannot convert from type `ffi.Array` to `ffi.Shape`"
    );
    // Dropping the last reference frees it (the runtime's deleter protocol, Rust's memory).
    let weak = shape.as_object_ref().downgrade();
    drop(shape);
    assert!(weak.upgrade().is_none());
}

#[test]
fn bigints_round_trip_through_the_runtime() {
    tvm_ffi_tests::load_cpp_testing_library();
    let echo = global("testing.echo");
    for text in [
        "0",
        "-1",
        "9223372036854775807",
        "9223372036854775808",
        "-9223372036854775809",
        "18446744073709551615",
        "340282366920938463463374607431768211456",
        "-123456789012345678901234567890123456789012345678901234567890",
    ] {
        let big: BigInt = text.parse().unwrap();
        assert_eq!(big.to_string(), text);
        let back: BigInt = echo.call_as((&big,)).unwrap();
        assert_eq!(back, big);
        let any = Any::new(&big);
        let expected_key = if big.to_i64().is_some() {
            "int"
        } else {
            "ffi.BigInt"
        };
        assert_eq!(any.type_key(), expected_key, "{text}");
    }
    assert_eq!(BigInt::from(1i64 << 40).words(), [1 << 40]);
    assert_eq!(BigInt::from(u64::MAX).words(), [-1, 0]);
    assert_eq!(BigInt::from(i128::MIN).to_i128(), Some(i128::MIN));
    assert!(BigInt::from(-5i64) < BigInt::from(u64::MAX));
    assert!(BigInt::from(i128::MIN) < BigInt::from(-5i64));
    assert_eq!("12x".parse::<BigInt>().unwrap_err().kind(), "ValueError");
    // Python passes 2**63 .. 2**64-1 as an ffi.BigInt: a u64 accepts it, an i64 does not.
    let big = Any::new(BigInt::from(u64::MAX));
    assert_eq!(big.cast::<u64>().unwrap(), u64::MAX);
    assert_eq!(big.cast::<u128>().unwrap(), u128::from(u64::MAX));
    assert_eq!(
        big.cast::<i64>().unwrap_err().message(),
        "Cannot convert from type `ffi.BigInt` to `int`"
    );
    assert_eq!(Any::new(u128::MAX).cast::<u128>().unwrap(), u128::MAX);
    assert_eq!(Any::new(i128::MIN).cast::<i128>().unwrap(), i128::MIN);
    assert_eq!(Any::new(7i128).type_key(), "int");
    // As map keys, BigInts compare by value.
    let map: Map<BigInt, i64> = Map::new([(BigInt::from(u128::MAX), 1)]).unwrap();
    assert_eq!(map.get(BigInt::from(u128::MAX)), Some(1));
    assert_eq!(map.get(BigInt::from(u64::MAX)), None);
}

#[test]
fn collections_are_idiomatic() {
    let squares: Array<i64> = (1..=4).map(|x| x * x).collect();
    let mut total = 0;
    for x in &squares {
        total += x;
    }
    assert_eq!(total, 30);
    assert_eq!(squares.iter().next_back(), Some(16));
    let fallible: tvm_ffi::Result<Array<i64>> = ["1", "2", "x"]
        .iter()
        .map(|s| s.parse::<i64>().map_err(tvm_ffi::Error::from))
        .collect();
    assert_eq!(fallible.unwrap_err().kind().as_str(), "ValueError");
    let from_vec: Array<String> = vec![String::from("a"), String::from("b")].into();
    assert_eq!(from_vec.to_string(), r#"("a", "b")"#);
    let mixed: Array<Any> = vec![Any::new(1i64), Any::new("two")].into();
    assert_eq!(mixed[0].cast::<i64>().unwrap(), 1);
    assert_eq!(Array::<i64>::default().len(), 0);

    let map: Map<String, i64> = [("a".into(), 1), ("b".into(), 2)].into_iter().collect();
    let mut seen = Vec::new();
    for (k, v) in &map {
        seen.push((k.to_string(), v));
    }
    assert_eq!(seen, [("a".to_string(), 1), ("b".to_string(), 2)]);
    assert_eq!(map.to_string(), r#"{"a": 1, "b": 2}"#);
    assert_eq!(
        Map::<String, i64>::from(vec![("z".into(), 26)]).get("z"),
        Some(26)
    );

    let list: List<i64> = (0..3).collect();
    assert_eq!(list.to_string(), "[0, 1, 2]");
    let dict: Dict<i64, bool> = vec![(1, true)].into();
    assert_eq!(dict.to_string(), "{1: True}");
    assert_eq!(format!("{:?}", Dict::<i64, i64>::default()), "{}");

    // Upcasts to the root through `Into`.
    let root: ObjectRef<AnyObject> = squares.as_object_ref().clone().into();
    assert_eq!(root.type_key(), "ffi.Array");
    let root: ObjectRef<AnyObject> = map.into();
    assert!(root.downcast::<MapObj>().is_some());
    let root: ObjectRef<AnyObject> = dict.into();
    assert!(root.downcast::<DictObj>().is_some());
    let _: ObjectRef<AnyObject> = Shape::new(&[1]).into();
    let _: ObjectRef<AnyObject> = list.into();
}

#[test]
fn typed_arrays_are_checked_when_wrapped() {
    let mixed = Array::new([Any::new(1i64), Any::new("x")]).unwrap();
    let any: Array<Any> = Array::from_object_ref(mixed.as_object_ref().clone());
    assert_eq!(any.len(), 2);
    // A panic in a function is a RuntimeError at the boundary (quietly: it is caught).
    let wrap = Function::from_typed(|a: Array<Any>| -> i64 {
        Array::<i64>::from_object_ref(a.into_object_ref()).len() as i64
    });
    let err = wrap.call((&mixed,)).unwrap_err();
    assert_eq!(err.kind().as_str(), "RuntimeError");
    assert!(
        err.message()
            .contains("Array::from_object_ref: element 1 is a `ffi.SmallStr`, not a `int`"),
        "{}",
        err.message()
    );
    assert_eq!(
        wrap.call((&Array::new([5i64]).unwrap(),))
            .unwrap()
            .cast::<i64>()
            .unwrap(),
        1
    );
}

#[test]
fn inserting_at_the_front_while_another_thread_reads_is_serialised() {
    // `insert` once called the runtime without the list's lock: a reader on another thread
    // saw elements moved under it (non-integers, a corrupted heap).
    for round in 0..20 {
        let list: List<i64> = List::new([0]).unwrap();
        let bad = std::thread::scope(|scope| {
            let writer = list.clone();
            scope.spawn(move || {
                for i in 1..=500 {
                    writer.insert(0, i).unwrap();
                }
            });
            let mut bad = 0;
            for _ in 0..2000 {
                if list.try_get(0).is_err() || list.try_get(list.len() - 1).is_err() {
                    bad += 1;
                }
            }
            bad
        });
        assert_eq!(bad, 0, "round {round}: reads that were not integers");
        assert_eq!(list.len(), 501);
        assert_eq!(list.get(500).unwrap(), 0);
    }
}

/// What the destructor of a [`Doomed`] element does with the container it was in.
#[derive(Clone, Copy, PartialEq, Debug)]
enum OnDrop {
    Nothing,
    /// Reads every element and appends to the list.
    ReadAndPushList,
    /// Reads every entry and inserts into the dict.
    ReadAndInsertDict,
}

static DOOMED_DROPS: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
static DOOMED_SEEN_DYING: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
static DOOMED_PUSH_REFUSED: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);

thread_local! {
    static DOOMED_LIST: std::cell::RefCell<Option<List<Any>>> = const { std::cell::RefCell::new(None) };
    static DOOMED_DICT: std::cell::RefCell<Option<Dict<Any, Any>>> = const { std::cell::RefCell::new(None) };
}

/// An element whose destructor uses the container it was in.
#[derive(tvm_ffi::Object)]
#[ffi_type(key = "rust_tests.DoomedElement")]
#[repr(C)]
pub struct Doomed {
    #[ffi(skip)]
    pub on_drop: DoomedDrop,
}

pub struct DoomedDrop(OnDrop);
impl Default for DoomedDrop {
    fn default() -> Self {
        DoomedDrop(OnDrop::Nothing)
    }
}

/// Counts the elements of `items` that are `Doomed` objects whose release already began (a
/// copy of one resurrected it: its count went from 0 to 1).
fn count_dying(items: impl Iterator<Item = Any>) -> usize {
    items
        .filter_map(|item| item.cast::<ObjectRef<Doomed>>().ok())
        .filter(|doomed| doomed.strong_count() <= 1)
        .count()
}

impl Drop for DoomedDrop {
    fn drop(&mut self) {
        DOOMED_DROPS.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        match self.0 {
            OnDrop::Nothing => {}
            OnDrop::ReadAndPushList => DOOMED_LIST.with(|list| {
                let list = list.borrow();
                let list = list.as_ref().unwrap();
                let items: Vec<Any> = (0..list.len()).filter_map(|i| list.get_any(i)).collect();
                let dying = count_dying(items.into_iter());
                DOOMED_SEEN_DYING.fetch_add(dying, std::sync::atomic::Ordering::Relaxed);
                if let Err(err) = list.push(7i64.into_any()) {
                    assert_eq!(err.kind().as_str(), "RuntimeError");
                    DOOMED_PUSH_REFUSED.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                }
            }),
            OnDrop::ReadAndInsertDict => DOOMED_DICT.with(|dict| {
                let dict = dict.borrow();
                let dict = dict.as_ref().unwrap();
                let entries = dict.snapshot().unwrap();
                let dying = count_dying(entries.into_iter().map(|(_, v)| v));
                DOOMED_SEEN_DYING.fetch_add(dying, std::sync::atomic::Ordering::Relaxed);
                if dict.insert((-1i64).into_any(), 7i64.into_any()).is_err() {
                    DOOMED_PUSH_REFUSED.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                }
            }),
        }
    }
}

fn doomed(on_drop: OnDrop) -> Any {
    ObjectRef::new(Doomed {
        on_drop: DoomedDrop(on_drop),
    })
    .into_any()
}

#[test]
fn destructors_that_use_the_container_being_cleared_see_no_dying_element() {
    use std::sync::atomic::Ordering::Relaxed;
    const N: usize = 50;
    let counters = || {
        (
            DOOMED_DROPS.swap(0, Relaxed),
            DOOMED_SEEN_DYING.swap(0, Relaxed),
            DOOMED_PUSH_REFUSED.swap(0, Relaxed),
        )
    };
    for round in 0..10 {
        // Rust clears: the destructors run after the runtime's loop, with no lock held; their
        // writes go through.
        let list: List<Any> = List::default();
        DOOMED_LIST.with(|slot| *slot.borrow_mut() = Some(list.clone()));
        counters();
        for _ in 0..N {
            list.push(doomed(OnDrop::ReadAndPushList)).unwrap();
            list.push(doomed(OnDrop::Nothing)).unwrap();
        }
        list.clear().unwrap();
        assert_eq!(counters(), (2 * N, 0, 0), "round {round}");
        assert_eq!(list.len(), N, "round {round}: the destructors' pushes");

        // Foreign code clears (the runtime's function, as C++ or Python would call it): the
        // destructors run inside the runtime's loop. A read must not copy the element being
        // released (a resurrection: freed twice), and a write must be refused.
        let list: List<Any> = List::default();
        DOOMED_LIST.with(|slot| *slot.borrow_mut() = Some(list.clone()));
        for _ in 0..N {
            list.push(doomed(OnDrop::Nothing)).unwrap();
            list.push(doomed(OnDrop::ReadAndPushList)).unwrap();
        }
        // SAFETY: the container is this test thread's alone.
        unsafe { runtime_builtin("ffi.ListClear") }
            .call((&list,))
            .unwrap();
        assert_eq!(counters(), (2 * N, 0, N), "round {round}");
        assert_eq!(list.len(), 0, "round {round}");

        // The same for a dict cleared by Rust: the destructors' inserts go through.
        let dict: Dict<Any, Any> = Dict::default();
        DOOMED_DICT.with(|slot| *slot.borrow_mut() = Some(dict.clone()));
        for i in 0..N as i64 {
            dict.insert((2 * i).into_any(), doomed(OnDrop::ReadAndInsertDict))
                .unwrap();
            dict.insert((2 * i + 1).into_any(), doomed(OnDrop::Nothing))
                .unwrap();
        }
        dict.clear().unwrap();
        assert_eq!(counters(), (2 * N, 0, 0), "round {round}");
        assert_eq!(dict.len(), 1, "round {round}: the destructors' insert");
        DOOMED_LIST.with(|slot| *slot.borrow_mut() = None);
        DOOMED_DICT.with(|slot| *slot.borrow_mut() = None);
    }
}

#[test]
fn forged_lock_tables_are_refused() {
    // The lock table shared by the Rust libraries of a process was once fetched through a
    // global function anyone can register; its result was used as a table of atomics. Each
    // forgery runs in a process of its own, before anything takes a lock. A forged attribute or
    // a key taken by another definition makes the SDK refuse what needs the table.
    let helper = std::path::Path::new(env!("CARGO_BIN_EXE_forged_lock_tables"));
    let forged = "`__tvm_ffi_rs_striped_locks__` of `tvm_ffi_rs.StripedLocks.v4` holds a value \
                  this SDK did not publish";
    let taken = "the type key `tvm_ffi_rs.StripedLocks.v4` is taken by another definition";
    for (forgery, why) in [
        ("functions", None),
        ("attr-int", Some(forged)),
        ("attr-object", Some(forged)),
        ("key-taken", Some(taken)),
    ] {
        let (stdout, stderr) = tvm_ffi_tests::run_program(helper, &[std::path::Path::new(forgery)]);
        match why {
            None => {
                assert_eq!(stdout, "ok\n", "{forgery}: {stderr}");
                assert!(stderr.is_empty(), "{forgery}: {stderr}");
            }
            Some(why) => {
                let expected = format!(
                    "refused: no lock table shared with this process's other Rust libraries \
                     ({why}): this library refuses container, `Rw` and global-function \
                     operations\n"
                );
                assert_eq!(stdout, expected, "{forgery}: {stderr}");
            }
        }
    }
}

/// Runs `f` on a thread of its own and fails if it does not finish in time (a deadlock).
fn finishes_in_time(what: &str, f: impl FnOnce() + Send + 'static) {
    let (done, wait) = std::sync::mpsc::channel();
    let worker = std::thread::spawn(move || {
        f();
        let _ = done.send(());
    });
    match wait.recv_timeout(std::time::Duration::from_secs(60)) {
        Ok(()) => worker.join().unwrap(),
        Err(std::sync::mpsc::RecvTimeoutError::Disconnected) => {
            // The worker panicked: show its message.
            worker.join().unwrap();
        }
        Err(std::sync::mpsc::RecvTimeoutError::Timeout) => panic!("{what}: deadlock"),
    }
}

/// An element whose destructor reads another list.
#[derive(tvm_ffi::Object)]
#[ffi_type(key = "rust_tests.ListToucher")]
#[repr(C)]
pub struct ListToucher {
    #[ffi(skip)]
    pub touch: TouchOnDrop,
}

#[derive(Default)]
pub struct TouchOnDrop(Option<List<i64>>);
impl Drop for TouchOnDrop {
    fn drop(&mut self) {
        if let Some(list) = &self.0 {
            std::hint::black_box(list.len());
            std::hint::black_box(list.get_any(0));
        }
    }
}

#[test]
fn destructors_run_by_container_writes_take_other_locks_without_deadlock() {
    // Two threads replace the elements of two lists whose elements' destructors read the other
    // list: destructors that ran while the writer held its list's lock deadlocked (ABBA).
    finishes_in_time("element destructors", || {
        // Two lists on different stripes of the lock table (by address: 64 stripes of 16 bytes).
        let stripe = |l: &List<Any>| (l.as_object_ref().as_raw().as_ptr() as usize >> 4) % 64;
        let a: List<Any> = List::new([Any::none()]).unwrap();
        let mut keep = Vec::new();
        let b = loop {
            let b: List<Any> = List::new([Any::none()]).unwrap();
            if stripe(&b) != stripe(&a) {
                break b;
            }
            keep.push(b);
        };
        let ints = |l: &List<Any>| List::<i64>::from_object_ref(l.as_object_ref().clone());
        std::thread::scope(|scope| {
            for (mine, theirs) in [(&a, ints(&b)), (&b, ints(&a))] {
                scope.spawn(move || {
                    for _ in 0..3000 {
                        let element = ObjectRef::new(ListToucher {
                            touch: TouchOnDrop(Some(theirs.clone())),
                        });
                        mine.set(0, element.into_any()).unwrap();
                    }
                    mine.set(0, Any::none()).unwrap();
                });
            }
        });
    });
}

/// The fallible form of the checked wrapping: an element of another type is an error naming
/// it, where `from_object_ref` panics.
#[test]
fn try_from_object_ref_reports_the_first_mismatch() {
    let mixed = Array::<Any>::new([Any::new(1), Any::new(2.5)]).unwrap();
    let err = Array::<i64>::try_from_object_ref(mixed.clone().into_object_ref()).unwrap_err();
    assert_eq!(err.kind().as_str(), "TypeError");
    assert_eq!(
        err.message(),
        "Array::try_from_object_ref: element 1 is a `float`, not a `int`"
    );
    let floats = Array::<f64>::try_from_object_ref(mixed.into_object_ref()).unwrap();
    assert_eq!(floats.to_vec(), vec![1.0, 2.5]);
}

/// An array releases its objects wherever they sit among plain values: the release first
/// scans for objects (an array of numbers then releases nothing), then releases each one.
#[test]
fn an_array_releases_objects_among_plain_values() {
    let object = Array::new([1i64]).unwrap().into_object_ref().into_object();
    // Every lane of the scan's four accumulators, and its remainder.
    let places = [
        (1usize, 0usize),
        (3, 2),
        (4, 3),
        (5, 1),
        (6, 5),
        (7, 6),
        (8, 0),
        (9, 8),
    ];
    for (len, at) in places
        .into_iter()
        .chain([(12, 2), (1000, 999), (1001, 500)])
    {
        let items: Vec<Any> = (0..len)
            .map(|i| {
                if i == at {
                    Any::new(object.clone())
                } else {
                    Any::new(i as i64)
                }
            })
            .collect();
        let array = Array::new(items).unwrap();
        assert_eq!(object.strong_count(), 2, "len {len}, object at {at}");
        let held: ObjectRef<AnyObject> = array.get(at).unwrap().cast().unwrap();
        assert!(held.ptr_eq(&object));
        drop(held);
        drop(array);
        assert_eq!(object.strong_count(), 1, "len {len}, object at {at}");
    }
}

/// An element that converts to an object, or fails to convert.
struct Convertible(Option<Any>);

impl tvm_ffi::TryIntoAny for Convertible {
    fn try_into_any(self) -> tvm_ffi::Result<Any> {
        self.0
            .ok_or_else(|| tvm_ffi::Error::new("ValueError", "no element"))
    }
}

/// An iterator that ends before its promise, yields more than it promised, or fails a
/// conversion gives the same array, or error, as element by element, and leaks nothing.
#[test]
fn arrays_built_in_rounds_stop_where_the_iterator_does() {
    for (yields, claimed) in [(13usize, 20usize), (16, 16), (30, 9), (17, 16), (8, 9)] {
        let array = Array::new(tvm_ffi_tests::Claims {
            inner: 0..yields as i64,
            claimed,
        })
        .unwrap();
        let expected: Vec<i64> = (0..yields as i64).collect();
        assert_eq!(
            array.to_vec(),
            expected,
            "yields {yields}, claims {claimed}"
        );
    }
    let object = Array::new([1i64]).unwrap().into_object_ref().into_object();
    for (fails_at, claimed) in [(10usize, 16usize), (8, 24), (3, 12), (17, 18)] {
        let items =
            (0..=fails_at).map(|i| Convertible((i < fails_at).then(|| Any::new(object.clone()))));
        let err = Array::new(tvm_ffi_tests::Claims {
            inner: items,
            claimed,
        })
        .unwrap_err();
        assert_eq!(err.kind(), "ValueError");
        assert_eq!(err.message(), "no element");
        assert_eq!(
            object.strong_count(),
            1,
            "fails at {fails_at}, claims {claimed}"
        );
    }
}

/// An element whose conversion panics or fails on a given index, holding an object meanwhile.
enum Faulty {
    Object(Any),
    Fails(Any),
    Panics(Any),
}

impl tvm_ffi::TryIntoAny for Faulty {
    fn try_into_any(self) -> tvm_ffi::Result<Any> {
        match self {
            Faulty::Object(value) => Ok(value),
            Faulty::Fails(held) => {
                drop(held);
                Err(tvm_ffi::Error::new("ValueError", "refused"))
            }
            Faulty::Panics(held) => {
                drop(held);
                // A silent panic (`resume_unwind` runs no panic hook).
                std::panic::resume_unwind(Box::new("conversion panicked"))
            }
        }
    }
}

/// `Array::from_vec` writes values in pairs, four pairs a round, after one value alone when the
/// slots start at 16 mod 32: every length reads back in order, and a conversion that fails or
/// panics at any position (first or second of a pair, in a round or after) releases the values
/// written and drops the items not taken, each object counted once.
#[test]
fn arrays_from_a_vec_keep_order_and_release_everything_on_a_failure() {
    for len in 0..=21i64 {
        let array = Array::from_vec((0..len).collect()).unwrap();
        assert_eq!(array.to_vec(), (0..len).collect::<Vec<_>>(), "length {len}");
        let from: Array<i64> = (0..len).collect::<Vec<_>>().into();
        assert_eq!(from.to_vec(), array.to_vec());
    }
    let object = Array::new([1i64]).unwrap().into_object_ref().into_object();
    let objects = (0..19)
        .map(|_| Any::new(object.clone()))
        .collect::<Vec<_>>();
    let array = Array::from_vec(objects).unwrap();
    assert_eq!(object.strong_count(), 20);
    drop(array);
    assert_eq!(object.strong_count(), 1);
    for len in 1..=19usize {
        for at in 0..len {
            for panics in [false, true] {
                let items = (0..len)
                    .map(|i| {
                        let value = Any::new(object.clone());
                        match (i == at, panics) {
                            (false, _) => Faulty::Object(value),
                            (true, false) => Faulty::Fails(value),
                            (true, true) => Faulty::Panics(value),
                        }
                    })
                    .collect::<Vec<_>>();
                assert_eq!(object.strong_count() as usize, 1 + len);
                let built = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                    Array::from_vec(items)
                }));
                match built {
                    Ok(result) => {
                        assert!(!panics);
                        assert_eq!(result.unwrap_err().message(), "refused");
                    }
                    Err(payload) => {
                        assert!(panics);
                        assert_eq!(payload.downcast_ref::<&str>(), Some(&"conversion panicked"));
                    }
                }
                assert_eq!(
                    object.strong_count(),
                    1,
                    "length {len}, fails at {at}, panics {panics}"
                );
            }
        }
    }
}

/// An iterator that promises `claimed` items, yields more, and then promises an impossible
/// number.
struct Swells<I> {
    inner: I,
    claimed: usize,
    yielded: usize,
}

impl<I: Iterator> Iterator for Swells<I> {
    type Item = I::Item;
    fn next(&mut self) -> Option<I::Item> {
        self.yielded += 1;
        self.inner.next()
    }
    fn size_hint(&self) -> (usize, Option<usize>) {
        if self.yielded < self.claimed {
            (self.claimed, Some(self.claimed))
        } else {
            (usize::MAX / 2, None)
        }
    }
}

/// An iterator that yields more than it promised and then promises more than memory holds:
/// the array is still built, and every element counted once (the values already written were
/// leaked when the room for the rest could not be reserved).
#[test]
fn an_iterator_that_outgrows_its_promise_builds_the_array_and_leaks_nothing() {
    let object = Array::new([1i64]).unwrap().into_object_ref().into_object();
    let items = (0..5).map(|_| Any::new(object.clone())).collect::<Vec<_>>();
    let array = Array::new(Swells {
        inner: items.into_iter(),
        claimed: 3,
        yielded: 0,
    })
    .unwrap();
    assert_eq!(array.len(), 5);
    assert_eq!(object.strong_count(), 6);
    drop(array);
    assert_eq!(object.strong_count(), 1);
}

/// The checked cast of an array to `Array<i64>` / `Array<f64>` / `Array<bool>`: a scan for the
/// one type every value of which converts, then, when another type is found, the element by
/// element conversion (a `bool` converts to an integer; a string or a float does not).
#[test]
fn an_array_cast_checks_every_element_wherever_it_differs() {
    for len in [1usize, 7, 8, 9, 1000] {
        for at in [0, len / 2, len - 1] {
            let with = |odd: Any| -> Any {
                let items: Vec<Any> = (0..len)
                    .map(|i| {
                        if i == at {
                            odd.clone()
                        } else {
                            Any::new(i as i64)
                        }
                    })
                    .collect();
                Any::new(Array::new(items).unwrap())
            };
            let ints = with(Any::new(at as i64));
            let values: Vec<i64> = ints.cast::<Array<i64>>().unwrap().iter().collect();
            assert_eq!(values, (0..len as i64).collect::<Vec<_>>());
            let with_bool = with(Any::new(true)).cast::<Array<i64>>().unwrap();
            assert_eq!(with_bool.get(at), Some(1), "len {len}, bool at {at}");
            for odd in [Any::new("s"), Any::new(1.5f64)] {
                let err = with(odd.clone()).cast::<Array<i64>>().unwrap_err();
                assert!(
                    err.message().contains(&format!("Array[index {at}: ")),
                    "len {len}, {} at {at}: {}",
                    odd.type_key(),
                    err.message()
                );
            }
            // Every int converts to `f64`.
            assert_eq!(
                with(Any::new(2.5f64)).cast::<Array<f64>>().unwrap().get(at),
                Some(2.5)
            );
        }
    }
    let bools = Any::new(Array::new([true, false, true]).unwrap());
    assert_eq!(
        bools.cast::<Array<bool>>().unwrap().to_vec(),
        [true, false, true]
    );
}

// ---- Map and Dict keys in `K`'s own form ----
//
// The runtime hashes and compares keys by type (the `int` 1 is no key `1.0`), so a map or dict
// read as `Map<K, _>` / `Dict<K, _>` must hold its keys as `K` stores them, or lookups with a
// `K` miss keys that iteration lists.

/// The type keys of a map's stored keys and values, in order.
fn stored_types<K, V>(map: &Map<K, V>) -> Vec<(&'static str, &'static str)> {
    map.iter_views()
        .map(|(k, v)| (k.type_key(), v.type_key()))
        .collect()
}

#[test]
fn a_map_cast_to_other_key_types_is_a_converted_copy_whose_lookups_find_its_keys() {
    let ints: Map<i64, i64> = Map::new([(1, 10), (2, 20)]).unwrap();
    let floats: Map<f64, f64> = Any::new(&ints).cast().unwrap();
    assert_eq!(floats.entries(), [(1.0, 10.0), (2.0, 20.0)]);
    assert_eq!(floats.get(1.0), Some(10.0));
    assert_eq!(floats.try_get(2.0).unwrap(), Some(20.0));
    assert!(floats.contains_key(1.0) && floats.contains_key(2.0));
    // A new map (as C++'s slow path builds), keys and values stored as `float`s; the original
    // is untouched and nothing is shared.
    assert!(!floats.as_object_ref().ptr_eq(ints.as_object_ref()));
    assert_eq!(stored_types(&floats), [("float", "float"); 2]);
    assert_eq!(stored_types(&ints), [("int", "int"); 2]);
    assert_eq!(ints.as_object_ref().strong_count(), 1);
    assert_eq!(floats.as_object_ref().strong_count(), 1);

    // A `bool` key read as an integer is stored as the `int`; a string key that names a data
    // type as the `DataType`.
    let bools: Map<bool, i64> = Map::new([(true, 1)]).unwrap();
    let as_ints: Map<i64, i64> = Any::new(&bools).cast().unwrap();
    assert_eq!(
        (as_ints.get(1i64), as_ints.contains_key(true)),
        (Some(1), false)
    );
    let named: Map<String, i64> = Map::new([("float32".into(), 4)]).unwrap();
    let dtypes: Map<DataType, i64> = Any::new(&named).cast().unwrap();
    let f32_dtype: DataType = "float32".parse().unwrap();
    assert_eq!(dtypes.get(f32_dtype), Some(4));
    // `Option<K>` keys: `None` stays, the others convert as `K`s.
    let optional: Map<Any, i64> = Map::new([(Any::none(), 0), (Any::new(1i64), 1)]).unwrap();
    let optional: Map<Option<f64>, i64> = Any::new(&optional).cast().unwrap();
    assert_eq!((optional.get(()), optional.get(1.0)), (Some(0), Some(1)));

    // Maps nested in an array convert as elements.
    let nested = Array::new([ints.clone()]).unwrap();
    let nested: Array<Map<f64, f64>> = Any::new(&nested).cast().unwrap();
    assert_eq!(nested.get(0).unwrap().get(2.0), Some(20.0));
}

#[test]
fn a_map_cast_shares_the_map_when_its_keys_are_already_in_form() {
    let ints: Map<i64, i64> = Map::new([(1, 10), (2, 20)]).unwrap();
    let same: Map<i64, i64> = Any::new(&ints).cast().unwrap();
    assert!(same.as_object_ref().ptr_eq(ints.as_object_ref()));
    // Values convert as they are read: the map is shared.
    let float_values: Map<i64, f64> = Any::new(&ints).cast().unwrap();
    assert!(float_values.as_object_ref().ptr_eq(ints.as_object_ref()));
    assert_eq!(float_values.get(2), Some(20.0));
    assert_eq!(ints.as_object_ref().strong_count(), 3);
    let any: Map<Any, Any> = Any::new(&ints).cast().unwrap();
    assert!(any.as_object_ref().ptr_eq(ints.as_object_ref()));
    // Object keys keep their identity: an array key read as `Array<f64>` is the same object.
    let key = Array::new([1i64, 2]).unwrap();
    let by_array: Map<Array<i64>, i64> = Map::new([(key.clone(), 7)]).unwrap();
    let as_floats: Map<Array<f64>, i64> = Any::new(&by_array).cast().unwrap();
    assert_eq!(as_floats.get(&key), Some(7));
    assert_eq!(as_floats.keys().next().unwrap().to_vec(), [1.0, 2.0]);
}

/// A key type of the user's own: it reads `int`s and `float`s, and has no `Any` form of its
/// own (no `IntoAny`), so a map cannot store a key re-encoded as one.
struct Meters(f64);

impl tvm_ffi::TypeSchema for Meters {
    fn type_str() -> std::string::String {
        "Meters".into()
    }
}

impl<'a> tvm_ffi::FromAny<'a> for Meters {
    fn from_any(view: &'a tvm_ffi::AnyView<'a>) -> Option<Self> {
        view.checked_cast::<f64>().map(Meters)
    }
    fn from_any_exact(view: &'a tvm_ffi::AnyView<'a>) -> Option<Self> {
        view.as_exact::<f64>().map(Meters)
    }
}

#[test]
fn a_map_cast_to_a_key_type_without_a_stored_form_is_refused() {
    let ints: Map<i64, i64> = Map::new([(1, 10)]).unwrap();
    let err = Any::new(&ints).cast::<Map<Meters, i64>>().unwrap_err();
    assert_eq!(err.kind().as_str(), "TypeError");
    assert_eq!(
        err.message(),
        "Cannot convert from type `Map[some key is int, not Meters (no stored form to convert \
         into), V]` to `Map<Meters, int>`"
    );
    // Keys already stored as `float`s are the type's own form: shared.
    let floats: Map<f64, i64> = Map::new([(1.5, 10)]).unwrap();
    let meters: Map<Meters, i64> = Any::new(&floats).cast().unwrap();
    assert!(meters.as_object_ref().ptr_eq(floats.as_object_ref()));
    assert_eq!(meters.keys().map(|m| m.0).collect::<Vec<_>>(), [1.5]);
}

#[test]
fn dicts_keep_their_keys_in_form_across_casts_and_copies() {
    let dict: Dict<i64, i64> = Dict::new([(1, 10)]).unwrap();
    // A dict cast shares the dict, so its keys cannot be converted: refused, with the reason.
    let err = Any::new(&dict).cast::<Dict<f64, f64>>().unwrap_err();
    assert_eq!(err.kind().as_str(), "TypeError");
    assert_eq!(
        err.message(),
        "Cannot convert from type `Dict[some key is int, not float (a cast shares the dict, so \
         its keys are not converted), V]` to `Dict<float, float>`"
    );
    // Keys in form, values converted as read: shared, writes seen by both.
    let float_values: Dict<i64, f64> = Any::new(&dict).cast().unwrap();
    assert!(float_values.as_object_ref().ptr_eq(dict.as_object_ref()));
    dict.insert(2, 20).unwrap();
    assert_eq!(float_values.get(2), Some(20.0));

    // Copies between the twins re-encode the keys.
    let map: Map<f64, f64> = Any::new(&dict).cast().unwrap();
    assert_eq!((map.get(1.0), map.get(2.0)), (Some(10.0), Some(20.0)));
    assert_eq!(stored_types(&map), [("float", "float"); 2]);
    let ints: Map<i64, i64> = Map::new([(3, 30)]).unwrap();
    let copy: Dict<f64, i64> = Any::new(&ints).cast().unwrap();
    assert_eq!(copy.get(3.0), Some(30));
    assert!(copy.contains_key(3.0));
    assert_eq!(copy.entries().unwrap(), [(3.0, 30)]);

    // A foreign write of an `int` key into a `Dict<f64, _>`: lookups with `1.0` miss it, and
    // iteration reports it as a `TypeError` rather than listing a key `1.0`.
    // SAFETY: the container is this test thread's alone.
    unsafe { runtime_builtin("ffi.DictSetItem") }
        .call((&copy, 1i64, 5i64))
        .unwrap();
    assert_eq!(copy.get(1.0), None);
    let err = copy.entries().unwrap_err();
    assert_eq!(err.kind().as_str(), "TypeError");
    assert_eq!(err.message(), "Dict::iter: key 1 is a `int`, not a `float`");
}

#[test]
fn map_from_object_ref_checks_keys_and_values() {
    let ints: Map<i64, i64> = Map::new([(1, 10)]).unwrap();
    let obj = || ints.as_object_ref().clone();
    // Values convert; keys must be stored in `K`'s own form.
    assert_eq!(Map::<i64, f64>::from_object_ref(obj()).get(1), Some(10.0));
    assert_eq!(Map::<Any, Any>::from_object_ref(obj()).len(), 1);
    let err = Map::<i64, String>::try_from_object_ref(obj()).unwrap_err();
    assert_eq!(err.kind().as_str(), "TypeError");
    assert_eq!(
        err.message(),
        "Map::try_from_object_ref: the value of key 1 is a `int`, not a `str`"
    );
    let err = Map::<f64, i64>::try_from_object_ref(obj()).unwrap_err();
    assert_eq!(
        err.message(),
        "Map::try_from_object_ref: key 1 is a `int`, not a `float`"
    );
    let named: Map<String, i64> = Map::new([("k".into(), 1)]).unwrap();
    let err = Map::<i64, i64>::try_from_object_ref(named.into_object_ref()).unwrap_err();
    assert_eq!(
        err.message(),
        "Map::try_from_object_ref: key \"k\" is a `ffi.SmallStr`, not a `int`"
    );
}

/// `Map::from_object_ref` panics on an entry that does not fit, naming it (a panic in a
/// function is a RuntimeError at the boundary, quietly: it is caught).
#[test]
fn map_from_object_ref_panics_naming_the_entry_that_does_not_fit() {
    let ints: Map<i64, i64> = Map::new([(1, 10)]).unwrap();
    let wrap_as_str_values = Function::from_typed(|m: Map<Any, Any>| -> i64 {
        Map::<i64, String>::from_object_ref(m.into_object_ref()).len() as i64
    });
    let wrap_as_float_keys = Function::from_typed(|m: Map<Any, Any>| -> i64 {
        Map::<f64, i64>::from_object_ref(m.into_object_ref()).len() as i64
    });
    for (wrap, expected) in [
        (
            &wrap_as_str_values,
            "Map::from_object_ref: the value of key 1 is a `int`, not a `str`",
        ),
        (
            &wrap_as_float_keys,
            "Map::from_object_ref: key 1 is a `int`, not a `float`",
        ),
    ] {
        let err = wrap.call((&ints,)).unwrap_err();
        assert_eq!(err.kind().as_str(), "RuntimeError");
        assert!(err.message().contains(expected), "{}", err.message());
    }
    let fitting: Map<f64, i64> = Map::new([(1.0, 10)]).unwrap();
    assert_eq!(
        wrap_as_float_keys
            .call((&fitting,))
            .unwrap()
            .cast::<i64>()
            .unwrap(),
        1
    );
}
