//! Forges what the Rust SDK uses to share its lock table between the Rust libraries of a
//! process, before the SDK publishes or looks for it (while the program loads), then uses
//! lists, dicts and `Rw` fields from several threads. The SDK must never look at a forgery
//! where it does not look any more, and refuse (fail closed) where it does; it must never use a
//! forged value as a table. The test
//! `forged_lock_tables_are_refused` (tests/tests/containers.rs) runs this binary once per
//! forgery (the argument) and checks what it prints.
use tvm_ffi::sys;
use tvm_ffi::{Any, Array, Dict, Function, IntoAny, List, Rw};

const TYPE_KEY: &str = "tvm_ffi_rs.StripedLocks.v4";
const ATTR_NAME: &str = "__tvm_ffi_rs_striped_locks__";

/// The index of the SDK's lock type (allocated here first, as the SDK does).
fn lock_type_index() -> i32 {
    let key = sys::TVMFFIByteArray::from_bytes(TYPE_KEY.as_bytes());
    // SAFETY: a valid key; a root type.
    let index = unsafe {
        sys::TVMFFITypeGetOrAllocIndex(&key, -1, 1, 0, 0, sys::type_index::kTVMFFIObject)
    };
    assert!(index >= 0);
    index
}

/// Stores `value` as the published table.
fn forge_attr(value: Any) {
    let index = lock_type_index();
    let name = sys::TVMFFIByteArray::from_bytes(ATTR_NAME.as_bytes());
    // SAFETY: valid name and value; the runtime keeps its own reference.
    assert_eq!(
        unsafe { sys::TVMFFITypeRegisterAttr(index, &name, value.as_raw()) },
        0
    );
}

/// Forges before this binary's own Rust library (the SDK, linked in) publishes its table
/// while the program loads: an initializer that runs first (a lower priority than the
/// SDK's, after std's own, which provides the arguments).
#[used]
#[link_section = ".init_array.00200"]
static FORGE_FIRST: extern "C" fn() = forge;

extern "C" fn forge() {
    let mode = std::env::args().nth(1).expect("a forgery");
    match mode.as_str() {
        // The global functions through which earlier versions shared their tables: a
        // function any code (Python's `register_global_func`, safe Rust) may register.
        "functions" => {
            for name in [
                "tvm_ffi_rs.container_lock_table.v1",
                "tvm_ffi_rs.rw_lock_table.v1",
            ] {
                // An opaque pointer to nothing, which earlier versions used as a table.
                Function::from_packed(|_| {
                    // SAFETY: a forgery on purpose: nothing reads it as a table any more.
                    Ok(unsafe { tvm_ffi::Any::from_opaque_ptr(16_usize as *mut std::ffi::c_void) })
                })
                .register_global(name, false)
                .unwrap();
            }
        }
        // The published value forged: a plain value, an object of another type.
        "attr-int" => forge_attr(16_i64.into_any()),
        "attr-object" => forge_attr(Array::new([1_i64, 2, 3]).unwrap().into_any()),
        "key-taken" => {
            // The lock type's key defined elsewhere (with metadata): not the SDK's type.
            let index = lock_type_index();
            let metadata = sys::TVMFFITypeMetadata {
                doc: sys::TVMFFIByteArray::from_bytes(b""),
                creator: None,
                total_size: 24,
                structural_eq_hash_kind: 0,
            };
            // SAFETY: valid metadata for the allocated index.
            assert_eq!(
                unsafe { sys::TVMFFITypeRegisterMetadata(index, &metadata) },
                0
            );
        }
        other => panic!("unknown forgery {other}"),
    }
}

fn main() {
    // A forged table is never used: the SDK refuses every operation that needs one instead.
    let refused = std::panic::catch_unwind(|| List::<i64>::default().push(1));
    if let Err(payload) = refused {
        let err = payload.downcast::<tvm_ffi::Error>().expect("a typed panic");
        println!("refused: {}", err.message());
        return;
    }
    let list: List<i64> = List::default();
    let dict: Dict<i64, i64> = Dict::default();
    let field = Rw::new(tvm_ffi::String::from("a string longer than seven bytes"));
    std::thread::scope(|scope| {
        for t in 0..4_i64 {
            let (list, dict, field) = (list.clone(), dict.clone(), &field);
            scope.spawn(move || {
                for i in 0..500 {
                    list.push(t * 1000 + i).unwrap();
                    dict.insert(t * 1000 + i, i).unwrap();
                    assert_eq!(dict.try_get(t * 1000 + i).unwrap(), Some(i));
                    field.set(tvm_ffi::String::from(format!(
                        "a string longer than {t}/{i}"
                    )));
                    assert!(field.get().starts_with("a string longer than"));
                }
            });
        }
    });
    assert_eq!(list.len(), 2000);
    assert_eq!(dict.len(), 2000);
    println!("ok");
}
