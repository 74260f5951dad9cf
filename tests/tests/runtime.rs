//! The runtime crate against the real libtvm_ffi and its C++ test peer (`testing.*`).
use std::sync::atomic::{AtomicUsize, Ordering};

use tvm_ffi::object::{DerivedObject, RuntimeType, RustObject};
use tvm_ffi::{
    Any, AnyView, Array, Bytes, DataType, Device, Error, Function, Map, ObjectRef, ObjectType,
    String,
};

use tvm_ffi_tests::global;

fn echo(value: Any) -> Any {
    global("testing.echo").call((&value,)).expect("echo")
}

// A Rust-defined object type, written by hand (what #[derive(Object)] generates).
static DROPS: AtomicUsize = AtomicUsize::new(0);
struct Counter {
    value: i64,
}
impl Drop for Counter {
    fn drop(&mut self) {
        DROPS.fetch_add(1, Ordering::SeqCst);
    }
}
static COUNTER_TYPE: std::sync::OnceLock<RuntimeType> = std::sync::OnceLock::new();
/// Held by every type registration this binary makes after load: the runtime's type table has
/// no lock, and tests run on several threads.
static REGISTERING: std::sync::Mutex<()> = std::sync::Mutex::new(());
// SAFETY: allocated only through ObjectRef::new (header + Counter), never mutated.
unsafe impl ObjectType for Counter {
    const TYPE_KEY: &'static str = "rust_tests.Counter";
    fn runtime_type() -> RuntimeType {
        *COUNTER_TYPE.get_or_init(|| {
            let _registering = REGISTERING.lock().unwrap_or_else(|e| e.into_inner());
            // SAFETY: the only registrations after load in this binary hold `REGISTERING`.
            unsafe {
                tvm_ffi::__private::allocate_type_index(
                    Self::TYPE_KEY,
                    tvm_ffi::builtin::AnyObject::runtime_type(),
                    0,
                )
            }
            .expect("allocate")
        })
    }
}
// SAFETY: the root payload is empty, a prefix of every payload.
unsafe impl DerivedObject for Counter {
    type Parent = tvm_ffi::builtin::AnyObject;
}
// SAFETY: plain Rust payload dropped by the Rust deleter.
unsafe impl RustObject for Counter {}

#[test]
fn every_value_kind_round_trips_through_cpp_echo() {
    assert!(echo(Any::none()).is_none());
    assert!(echo(Any::new(true)).cast::<bool>().unwrap());
    assert!(!echo(Any::new(false)).cast::<bool>().unwrap());
    assert_eq!(echo(Any::new(-7i64)).cast::<i64>().unwrap(), -7);
    assert_eq!(echo(Any::new(i64::MAX)).cast::<i64>().unwrap(), i64::MAX);
    assert_eq!(echo(Any::new(200u8)).cast::<u8>().unwrap(), 200);
    assert_eq!(echo(Any::new(-3i32)).cast::<i32>().unwrap(), -3);
    assert_eq!(echo(Any::new(2.5f64)).cast::<f64>().unwrap(), 2.5);
    assert_eq!(echo(Any::new(0.25f32)).cast::<f32>().unwrap(), 0.25);
    for text in [
        "",
        "short",
        "exactly",
        "eight by",
        "a string longer than seven bytes",
    ] {
        let back = echo(Any::new(text));
        assert_eq!(back.cast::<&str>().unwrap(), text);
        assert_eq!(back.cast::<String>().unwrap(), text);
        let expected = if text.len() <= 7 {
            "ffi.SmallStr"
        } else {
            "ffi.String"
        };
        assert_eq!(back.type_key(), expected, "{text:?}");
    }
    for bytes in [&b"ab\0c"[..], &b"0123456789abcdef"[..]] {
        let back = echo(Any::new(bytes));
        assert_eq!(back.cast::<&[u8]>().unwrap(), bytes);
        assert_eq!(back.cast::<Bytes>().unwrap().as_bytes(), bytes);
    }
    assert_eq!(
        echo(Any::new(None::<i64>)).cast::<Option<i64>>().unwrap(),
        None
    );
    assert_eq!(
        echo(Any::new(Some(5i64))).cast::<Option<i64>>().unwrap(),
        Some(5)
    );
    let dtype: DataType = "float16x4".parse().unwrap();
    assert_eq!(echo(Any::new(dtype)).cast::<DataType>().unwrap(), dtype);
    assert_eq!(dtype.to_string(), "float16x4");
    let device: Device = "cuda:3".parse().unwrap();
    assert_eq!(echo(Any::new(device)).cast::<Device>().unwrap(), device);
    assert_eq!(device.to_string(), "cuda:3");
    let ptr = 0x1234usize as *mut std::ffi::c_void;
    assert_eq!(
        // SAFETY: `testing.echo` returns the pointer without using it.
        echo(unsafe { Any::from_opaque_ptr(ptr) })
            .cast::<*mut std::ffi::c_void>()
            .unwrap(),
        ptr
    );
    let array = Array::new(["x", "a longer string element"]).unwrap();
    let back: Array<String> = echo(Any::new(&array)).cast().unwrap();
    assert!(back.as_object_ref().ptr_eq(array.as_object_ref()));
    assert_eq!(
        back.iter().map(|s| s.to_string()).collect::<Vec<_>>(),
        ["x", "a longer string element"]
    );
    let map = Map::new([("k", 1i64), ("key number two", 2)]).unwrap();
    let back: Map<String, i64> = echo(Any::new(&map)).cast().unwrap();
    assert_eq!(back.get("key number two"), Some(2));
    assert_eq!(back.get("missing"), None);
    assert_eq!(back.len(), 2);
    let obj = ObjectRef::new(Counter { value: 11 });
    let back: ObjectRef<Counter> = echo(Any::new(&obj)).cast().unwrap();
    assert!(back.ptr_eq(&obj));
    assert_eq!(back.value, 11);
    let f = Function::from_typed(|x: i64| x * 2);
    let back: Function = echo(Any::new(&f)).cast().unwrap();
    assert_eq!(back.call_as::<i64, _>((21,)).unwrap(), 42);
}

#[test]
fn cast_checked_cast_and_exact_follow_the_runtime_rules() {
    let int = Any::new(42i64);
    assert_eq!(int.cast::<f64>().unwrap(), 42.0);
    assert_eq!(int.checked_cast::<f64>(), Some(42.0));
    assert_eq!(int.as_exact::<f64>(), None);
    assert_eq!(int.as_exact::<i64>(), Some(42));
    assert_eq!(int.checked_cast::<bool>(), Some(true));
    assert_eq!(int.as_exact::<bool>(), None);
    let err = int.cast::<String>().unwrap_err();
    assert_eq!(err.kind().as_str(), "TypeError");
    assert_eq!(err.message(), "Cannot convert from type `int` to `str`");
    let big = Any::new(1i64 << 40);
    assert_eq!(big.checked_cast::<i32>(), None);
    let err = big.cast::<i32>().unwrap_err();
    assert_eq!(
        err.message(),
        "Cannot convert from type `int` (value 1099511627776 is out of range for `i32`) to `int`"
    );
    assert_eq!(Any::new(-1i64).checked_cast::<u64>(), None);
    // Above i64::MAX, a u64 is an `ffi.BigInt` (Python receives the same int).
    let wide = u64::MAX.try_into_any_checked().unwrap();
    assert_eq!(wide.type_key(), "ffi.BigInt");
    assert_eq!(wide.cast::<u64>().unwrap(), u64::MAX);
    let s = Any::new("dtype");
    assert_eq!(s.as_exact::<i64>(), None);
    assert_eq!(
        Any::new("int32").cast::<DataType>().unwrap(),
        DataType::int(32)
    );
    let arr = Array::new([Any::new(1i64), Any::new("two")]).unwrap();
    let err = Any::new(arr).cast::<Array<i64>>().unwrap_err();
    assert_eq!(
        err.message(),
        "Cannot convert from type `Array[index 1: ffi.SmallStr]` to `Array<int>`"
    );
}

trait CheckedAny {
    fn try_into_any_checked(self) -> tvm_ffi::Result<Any>;
}
impl CheckedAny for u64 {
    fn try_into_any_checked(self) -> tvm_ffi::Result<Any> {
        tvm_ffi::TryIntoAny::try_into_any(self)
    }
}

#[test]
fn rust_closures_registered_as_globals_are_callable_from_cpp() {
    let concat = Function::from_typed(|a: String, b: std::string::String, n: i64| -> String {
        let mut out = std::string::String::new();
        for _ in 0..n {
            out.push_str(&a);
            out.push_str(&b);
        }
        out.as_str().into()
    });
    concat.register_global("rust_tests.concat", true).unwrap();
    let apply = global("testing.apply");
    let f = Function::get_global("rust_tests.concat").unwrap();
    let out: std::string::String = apply.call_as((&f, "ab", "a longer piece", 2i64)).unwrap();
    assert_eq!(out, "aba longer pieceaba longer piece");
    let short: std::string::String = apply.call_as((&f, "x", "y", 1i64)).unwrap();
    assert_eq!(short, "xy");

    let sum = Function::from_typed(|xs: Array<i64>, m: Map<String, i64>| -> i64 {
        xs.iter().sum::<i64>() + m.entries().iter().map(|(_, v)| v).sum::<i64>()
    });
    sum.register_global("rust_tests.sum", true).unwrap();
    let f = Function::get_global("rust_tests.sum").unwrap();
    let xs = Array::new([1i64, 2, 3]).unwrap();
    let m = Map::new([("a", 10i64), ("bbbbbbbbbb", 20)]).unwrap();
    assert_eq!(apply.call_as::<i64, _>((&f, &xs, &m)).unwrap(), 36);

    let obj_in = Function::from_typed(|c: ObjectRef<Counter>| -> ObjectRef<Counter> {
        ObjectRef::new(Counter { value: c.value + 1 })
    });
    let c = ObjectRef::new(Counter { value: 1 });
    let out: ObjectRef<Counter> = apply.call_as((&obj_in, &c)).unwrap();
    assert_eq!(out.value, 2);

    let err = apply.call((&f, "not an array", &m)).unwrap_err();
    assert_eq!(err.kind().as_str(), "TypeError");
    assert_eq!(
        err.message(),
        "Mismatched type on argument #0 when calling: `(0: Array<int>, 1: Map<str, int>) -> int`. Expected `Array<int>` but got `ffi.String`"
    );
}

#[test]
fn reference_counts_agree_with_the_runtime() {
    let use_count = global("testing.object_use_count");
    let count = |obj: &ObjectRef<Counter>| use_count.call_as::<i64, _>((obj,)).unwrap();
    let before = DROPS.load(Ordering::SeqCst);
    let a = ObjectRef::new(Counter { value: 1 });
    assert_eq!(a.strong_count(), 1);
    assert_eq!(count(&a), 1);
    let b = a.clone();
    assert_eq!(a.strong_count(), 2);
    assert_eq!(count(&a), 2);
    let any = Any::new(&a);
    assert_eq!(count(&a), 3);
    let view: AnyView<'_> = any.view();
    let view2 = view;
    assert_eq!(count(&a), 3, "views do not count");
    let _ = view2;
    let from_view: ObjectRef<Counter> = view.cast().unwrap();
    assert_eq!(count(&a), 4);
    let borrowed: &ObjectRef<Counter> = view.cast().unwrap();
    assert_eq!(count(borrowed), 4, "borrowed extraction does not count");
    drop(from_view);
    drop(any);
    drop(b);
    assert_eq!(count(&a), 1);
    let weak = a.downgrade();
    assert_eq!(weak.upgrade().map(|s| s.value), Some(1));
    assert_eq!(a.strong_count(), 1);
    assert_eq!(DROPS.load(Ordering::SeqCst), before);
    drop(a);
    assert_eq!(
        DROPS.load(Ordering::SeqCst),
        before + 1,
        "Drop ran exactly once"
    );
    assert!(weak.upgrade().is_none());
    assert_eq!(weak.strong_count(), 0);
    drop(weak);
    assert_eq!(DROPS.load(Ordering::SeqCst), before + 1);
}

#[test]
fn object_identity_types_and_casts() {
    let c = ObjectRef::new(Counter { value: 3 });
    assert_eq!(c.type_key(), "rust_tests.Counter");
    assert_eq!(c.type_index(), Counter::runtime_type().index);
    assert!(c.is_instance::<Counter>());
    assert!(c.is_instance::<tvm_ffi::builtin::AnyObject>());
    assert!(!c.is_instance::<tvm_ffi::builtin::ArrayObj>());
    let root = c.clone().upcast::<tvm_ffi::builtin::AnyObject, _>();
    assert!(root.ptr_eq(&c));
    assert!(root.downcast::<tvm_ffi::builtin::ArrayObj>().is_none());
    let back = root.downcast::<Counter>().unwrap();
    assert_eq!(back.value, 3);
    assert_eq!(std::mem::size_of::<ObjectRef<Counter>>(), 8);
    assert_eq!(std::mem::size_of::<Option<ObjectRef<Counter>>>(), 8);
    assert_eq!(std::mem::size_of::<Any>(), 16);
    assert_eq!(std::mem::size_of::<String>(), 16);
    let arr = Array::new([1i64]).unwrap();
    assert_eq!(format!("{arr:?}"), "[1]");
    assert!(format!("{:?}", arr.as_object_ref()).contains('1'));
}

#[test]
fn errors_cross_the_boundary_with_kind_and_message() {
    let raise = global("testing.test_raise_error");
    let err = raise
        .call(("ValueError", "bad value from C++"))
        .unwrap_err();
    assert_eq!(err.kind().as_str(), "ValueError");
    assert_eq!(err.message(), "bad value from C++");
    assert!(err.backtrace().contains("File \""), "{}", err.backtrace());

    let failing = Function::from_typed(|x: i64| -> tvm_ffi::Result<i64> {
        if x < 0 {
            tvm_ffi::bail!(ValueError, "negative: {x}");
        }
        Ok(x)
    });
    let apply = global("testing.apply");
    let err = apply.call((&failing, -1i64)).unwrap_err();
    assert_eq!(err.kind().as_str(), "ValueError");
    assert_eq!(err.message(), "negative: -1");
    assert!(
        err.backtrace().contains("runtime.rs"),
        "{}",
        err.backtrace()
    );

    let panicking = Function::from_packed_named("rust_tests.boom", |_| panic!("kaboom"));
    let err = apply.call((&panicking,)).unwrap_err();
    assert_eq!(err.kind().as_str(), "RuntimeError");
    assert!(
        err.message()
            .starts_with("Rust panic in `rust_tests.boom` at "),
        "{}",
        err.message()
    );
    assert!(err.message().ends_with(": kaboom"), "{}", err.message());
    // The process survived and the next call works.
    assert_eq!(apply.call_as::<i64, _>((&failing, 3i64)).unwrap(), 3);

    let e: Error = "x".parse::<i64>().unwrap_err().into();
    assert_eq!(e.kind().as_str(), "ValueError");
}

#[test]
fn global_registry_lists_and_overrides() {
    let f = Function::from_typed(|| 1i64);
    f.register_global("rust_tests.listed", false).unwrap();
    let err = f.register_global("rust_tests.listed", false).unwrap_err();
    assert_eq!(
        (err.kind().as_str(), err.message()),
        (
            "RuntimeError",
            "Global Function `rust_tests.listed` is already registered"
        )
    );
    Function::from_typed(|| 2i64)
        .register_global("rust_tests.listed", true)
        .unwrap();
    assert_eq!(
        Function::get_global("rust_tests.listed")
            .unwrap()
            .call_as::<i64, _>(())
            .unwrap(),
        2
    );
    let names = Function::list_global_names().unwrap();
    assert!(names.iter().any(|n| n == "rust_tests.listed"));
    assert!(Function::get_global("rust_tests.does_not_exist").is_none());
}

#[test]
fn over_aligned_closures_keep_the_function_cell_after_the_header() {
    #[repr(align(32))]
    struct Aligned(i64);
    let captured = Aligned(41);
    let f = Function::from_packed(move |_args| {
        let value = &captured;
        Ok(Any::new(value.0 + 1))
    });
    assert_eq!(f.call_as::<i64, _>(()).unwrap(), 42);
    // Through the runtime too: C++ reads `safe_call` right after the header.
    tvm_ffi_tests::load_cpp_testing_library();
    let apply = global("testing.apply");
    assert_eq!(apply.call_as::<i64, _>((&f,)).unwrap(), 42);
}

#[test]
fn backtraces_are_copies_and_appending_never_touches_a_shared_error() {
    let mut err = tvm_ffi::Error::runtime_error("boom");
    let shared = err.clone();
    let before = shared.backtrace();
    err.append_backtrace(&"  File \"x.rs\", line 1, in f\n".repeat(200));
    // The clone kept its own backtrace; `err` got a copy of its own before growing.
    assert_eq!(shared.backtrace(), before);
    assert!(err.backtrace().len() > before.len() + 4000);
    assert_eq!(
        (err.kind().as_str(), err.message()),
        ("RuntimeError", "boom")
    );
}

#[test]
fn is_instance_index_refuses_depths_outside_the_ancestor_table() {
    // `RuntimeType` has public fields: a made-up depth must never index the runtime's ancestor
    // table out of bounds (it read far before the table before the check).
    let counter = Counter::runtime_type();
    for depth in [-3, -1, i32::MIN, counter.depth, counter.depth + 1, i32::MAX] {
        let target = RuntimeType { index: 65, depth };
        assert!(!tvm_ffi::reflection::is_instance_index(
            counter.index,
            target
        ));
    }
    let root = tvm_ffi::builtin::AnyObject::runtime_type();
    assert!(tvm_ffi::reflection::is_instance_index(counter.index, root));
    assert!(tvm_ffi::reflection::is_instance_index(
        counter.index,
        counter
    ));
}

#[test]
fn plain_values_are_instances_of_no_object_type() {
    // The root object type (`ffi.Object`) takes every object and no plain value (as upstream's
    // `is_instance_of` and C++'s `as<ObjectRef>` answer): it answered `true` for an `int`.
    use tvm_ffi::sys::type_index as ti;
    let root = tvm_ffi::builtin::AnyObject::runtime_type();
    for index in [
        ti::kTVMFFINone,
        ti::kTVMFFIInt,
        ti::kTVMFFIBool,
        ti::kTVMFFIFloat,
        ti::kTVMFFISmallStr,
        ti::kTVMFFISmallBytes,
        ti::kTVMFFIDLTensorPtr,
    ] {
        assert!(
            !tvm_ffi::reflection::is_instance_index(index, root),
            "index {index}"
        );
    }
    for index in [
        ti::kTVMFFIStr,
        ti::kTVMFFIArray,
        ti::kTVMFFIFunction,
        Counter::runtime_type().index,
    ] {
        assert!(
            tvm_ffi::reflection::is_instance_index(index, root),
            "index {index}"
        );
    }
}

#[test]
fn type_queries_answer_for_indices_the_runtime_never_registered() {
    // The runtime's `TVMFFIGetTypeInfo` ends the process (`exit(-1)`) on an unregistered index;
    // before the public queries checked their index, each of these calls did.
    let root = tvm_ffi::builtin::AnyObject::runtime_type();
    for index in [-7, i32::MIN, 100_000, i32::MAX] {
        assert_eq!(
            tvm_ffi::reflection::type_key_of_index(index),
            "<unregistered>"
        );
        assert!(tvm_ffi::reflection::fields(index).is_empty());
        assert!(tvm_ffi::reflection::methods(index).is_empty());
        assert!(!tvm_ffi::reflection::is_instance_index(index, root));
    }
    // Registered indices still answer, including a type registered after the first query.
    let counter = Counter::runtime_type();
    assert_eq!(
        tvm_ffi::reflection::type_key_of_index(counter.index),
        Counter::type_key()
    );
    assert!(tvm_ffi::reflection::is_instance_index(counter.index, root));
    assert_eq!(tvm_ffi::reflection::type_key_of_index(-1), "Any");
    assert_eq!(
        tvm_ffi::reflection::type_key_of_index(tvm_ffi::sys::type_index::kTVMFFIInt),
        "int"
    );
}

#[test]
fn registering_globals_while_other_threads_look_them_up_is_serialised() {
    // The runtime's global table is not synchronised: a registration may rehash it while a
    // lookup reads it. Before Rust's lookups and registrations shared a lock, lookups of a
    // name that is always there came back empty (and could crash) under this load.
    let _ = global("testing.echo");
    let stop = std::sync::atomic::AtomicBool::new(false);
    std::thread::scope(|scope| {
        let readers: Vec<_> = (0..3)
            .map(|_| {
                scope.spawn(|| {
                    // At least 100 lookups each, however the scheduler starves this thread
                    // while the writer runs.
                    let mut lookups = 0u64;
                    while lookups < 100 || !stop.load(Ordering::Relaxed) {
                        assert!(Function::get_global("testing.echo").is_some());
                        lookups += 1;
                    }
                    lookups
                })
            })
            .collect();
        let writer = scope.spawn(|| {
            let f = Function::from_typed(|x: i64| x + 1);
            for round in 0..3000 {
                f.register_global(&format!("rust_tests.race.f{round}"), true)
                    .unwrap();
            }
        });
        writer.join().unwrap();
        stop.store(true, Ordering::Relaxed);
        for reader in readers {
            assert!(reader.join().unwrap() >= 100);
        }
    });
    let f = Function::get_global("rust_tests.race.f2999").unwrap();
    assert_eq!(f.call_as::<i64, _>((41,)).unwrap(), 42);
}

/// Runtime builtins the safe lookups refuse: ones that trust their arguments as code or raw
/// memory, change the registries, write a `List` or `Dict` without the SDK's lock, or end the
/// process on an unregistered type index.
const TRUST_REQUIRING: &[&str] = &[
    "ffi.ModuleLoadFromFile",
    "ffi.Module.load_from_file.so",
    "ffi.FunctionFromExternC",
    "ffi.MakeFieldSetter",
    "ffi.MakeFieldGetter",
    "ffi._PyClassRegisterTypeAttrColumns",
    "ffi._RegisterFFIInit",
    "ffi.FunctionRemoveGlobal",
    "ffi.ModuleGlobalsRemove",
    "ffi.ModuleClearImports",
    "ffi.ListAppend",
    "ffi.ListClear",
    "ffi.ListSetItem",
    "ffi.ListGetItem",
    "ffi.ListPop",
    "ffi.DictSetItem",
    "ffi.DictErase",
    "ffi.DictClear",
    "ffi.DictGetItem",
    "ffi.StructuralMutate",
];

/// Every builtin of the runtime (`ffi.*`) is either handed out as it is or refused: the safe
/// lookups' boundary is a list of safe builtins, so a builtin a newer runtime adds is refused
/// until it is reviewed.
#[test]
fn safe_lookups_hand_out_only_the_listed_builtins() {
    let names = Function::list_global_names().unwrap();
    let builtins: Vec<_> = names.iter().filter(|n| n.starts_with("ffi.")).collect();
    assert!(builtins.len() > 80, "{builtins:?}");
    let (mut handed, mut refused) = (0, 0);
    for name in builtins {
        // SAFETY: only looked up and compared, never called.
        let real = unsafe { Function::get_global_unchecked(name) }.unwrap();
        match Function::get_global_required(name) {
            Ok(found) => {
                // The one guarded builtin is a wrapper (below).
                assert!(
                    found == real || name == "ffi.MakeObjectFromPackedArgs",
                    "{name}"
                );
                handed += 1;
            }
            Err(err) => {
                assert_eq!(err.kind().as_str(), "ValueError", "{name}");
                refused += 1;
            }
        }
    }
    // The writers of both mutable containers are among the refused.
    assert!(
        handed >= 40 && refused >= 40,
        "{handed} handed out, {refused} refused"
    );
    for name in TRUST_REQUIRING {
        assert!(Function::get_global_required(name).is_err(), "{name}");
    }
    // Handed out guarded: an index the runtime never registered (which would end the process
    // there) is a `TypeError`.
    let make = Function::get_global_required("ffi.MakeObjectFromPackedArgs").unwrap();
    let err = make.call((1_i64 << 20,)).unwrap_err();
    assert_eq!(err.kind().as_str(), "TypeError");
    assert!(err
        .message()
        .contains("type index 1048576 is no registered object type"));
}

#[test]
fn safe_lookups_refuse_functions_that_trust_their_arguments() {
    tvm_ffi_tests::load_cpp_testing_library();
    let expected = |name: &str| format!("Function `{name}` cannot be looked up by the safe");
    for &name in TRUST_REQUIRING {
        // SAFETY: only looked up, never called.
        let real = unsafe { Function::get_global_unchecked(name) };
        assert!(real.is_some(), "{name} is a global of the runtime");
        let err = Function::get_global_required(name).unwrap_err();
        assert_eq!(err.kind().as_str(), "ValueError", "{name}");
        assert!(err.message().starts_with(&expected(name)), "{err}");
        assert!(
            err.message().contains("`Function::get_global_unchecked`"),
            "{err}"
        );
        // `get_global` finds it (it exists), as a function that raises the same error with
        // any arguments, and is not the runtime's function.
        let stub = Function::get_global(name).expect("the name exists");
        assert!(Some(&stub) != real.as_ref());
        let err = stub
            .call(("/no/such/library.so", 0x4141_4141_i64, 0_i64))
            .unwrap_err();
        assert_eq!(err.kind().as_str(), "ValueError", "{name}");
        assert!(err.message().starts_with(&expected(name)), "{err}");
    }
    // The library loader names the unsafe `Module::load_from_file`.
    let err = Function::get_global_required("ffi.ModuleLoadFromFile").unwrap_err();
    assert!(err.message().contains("`Module::load_from_file`"), "{err}");
    // A name under the loaders' prefix that no runtime registers: missing, not refused.
    assert!(Function::get_global("ffi.Module.load_from_file.nothing").is_none());
    // Other runtime functions are handed out as they are.
    let array = Function::get_global("ffi.Array").unwrap();
    let made: Array<i64> = array.call_as((1_i64,)).unwrap();
    assert_eq!(made.to_vec(), [1]);
}

/// Heap strings and bytes are allocated by Rust in the layout c_api.h gives them (`{ header,
/// TVMFFIByteArray, bytes }`, NUL-terminated as C++ writes them) with a Rust deleter: the
/// runtime's own functions read, hash, compare, concatenate and release them as their own.
#[test]
fn rust_allocated_strings_and_bytes_are_the_runtimes_own() {
    let long = "a string longer than seven bytes, with é";
    let s = String::new(long);
    let any = Any::new(s.clone());
    assert_eq!(any.type_index(), tvm_ffi::sys::type_index::kTVMFFIStr);
    // SAFETY: a heap string object: header, then the byte-array cell.
    let cell = unsafe {
        let raw = any.as_raw().value.v_obj as *const u8;
        &*(raw.add(24) as *const tvm_ffi::sys::TVMFFIByteArray)
    };
    assert_eq!(cell.size, long.len());
    // SAFETY: `size` bytes and the NUL after them belong to the object `any` holds.
    let with_nul = unsafe { std::slice::from_raw_parts(cell.data as *const u8, cell.size + 1) };
    assert_eq!(&with_nul[..long.len()], long.as_bytes());
    assert_eq!(
        with_nul[long.len()],
        0,
        "NUL-terminated, as C++ strings are"
    );
    // Through C++ and back, in containers, hashed and compared by the runtime.
    assert_eq!(echo(any.clone()).cast::<String>().unwrap(), long);
    let map = Map::new([(s.clone(), 1i64), (String::new("another long key!"), 2)]).unwrap();
    assert_eq!(map.get(String::new(long)), Some(1));
    let bytes = Bytes::new(&[0u8, 1, 2, 3, 4, 5, 6, 7, 8, 9]);
    assert_eq!(
        echo(Any::new(bytes.clone()))
            .cast::<Bytes>()
            .unwrap()
            .as_bytes(),
        bytes.as_bytes()
    );
    // Many allocations and releases through the runtime (counts reach zero in C++ code).
    for i in 0..1000 {
        let text = format!("string number {i} of a thousand");
        let back = echo(Any::new(String::new(&text)));
        drop(any.clone());
        assert_eq!(back.cast::<String>().unwrap(), text.as_str());
    }
}

/// `__private::allocate_type_index` is `unsafe` (the runtime's type table has no lock), but
/// `RuntimeType`'s fields are public: a made-up parent, or a value type as the parent, is an
/// error naming the key, where the runtime would end the process (its depth check, or "Reach
/// maximum number of sub-classes", aborts).
#[test]
fn allocating_a_type_under_a_made_up_parent_is_an_error() {
    let _registering = REGISTERING.lock().unwrap_or_else(|e| e.into_inner());
    let allocate = |key: &str, parent: RuntimeType, child_slots: u32| {
        // SAFETY: every registration after load in this binary holds `REGISTERING`.
        unsafe { tvm_ffi::__private::allocate_type_index(key, parent, child_slots) }
    };
    let object = tvm_ffi::builtin::AnyObject::runtime_type();
    for (parent, what) in [
        (
            RuntimeType {
                index: object.index,
                depth: -3,
            },
            "a negative depth",
        ),
        (
            RuntimeType {
                index: object.index,
                depth: 7,
            },
            "a wrong depth",
        ),
        (
            RuntimeType {
                index: 1 << 30,
                depth: 0,
            },
            "an unregistered index",
        ),
        (
            RuntimeType {
                index: -5,
                depth: 0,
            },
            "a negative index",
        ),
    ] {
        let err = allocate("rust_tests.MadeUpParent", parent, 0).expect_err(what);
        assert_eq!(err.kind(), "RuntimeError", "{what}");
        assert!(
            err.message().starts_with(
                "cannot register type `rust_tests.MadeUpParent`: its parent (type index"
            ),
            "{what}: {}",
            err.message()
        );
    }
    assert!(tvm_ffi::reflection::lookup_type("rust_tests.MadeUpParent").is_none());
    // `None` (0), `int` (1), a small string (11): registered at depth 0, no object types.
    for index in [0, 1, 11] {
        let parent = RuntimeType { index, depth: 0 };
        let err = allocate("rust_tests.ValueChild", parent, 0).expect_err("a value type");
        assert_eq!(err.kind(), "RuntimeError");
        assert!(
            // (a load error prefixes "cannot register type `key`: ", as the other refusals)
            err.message().starts_with("its parent `")
                && err
                    .message()
                    .ends_with("` is not an object type and takes no subtypes"),
            "{}",
            err.message()
        );
    }
    assert!(tvm_ffi::reflection::lookup_type("rust_tests.ValueChild").is_none());
    // The real parent still works.
    let ty = allocate("rust_tests.RealParent", object, 0).unwrap();
    assert_eq!(ty.depth, 1);
}
