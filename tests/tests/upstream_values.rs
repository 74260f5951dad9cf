//! Upstream's Rust tests (apache/tvm-ffi `rust/tvm-ffi/tests/`, crate `tvm-ffi` 0.1.15) of
//! values, containers, calls, modules, tensors, registration and objects with trailing items,
//! translated one to one to this SDK's API with the upstream test names kept, one module per
//! upstream file (`test_any::test_any_bool` is upstream's `test_any.rs::test_any_bool`).
//!
//! Translated here (upstream's count of `#[test]` functions; every one kept unless listed
//! below):
//! - `test_any.rs`: all (its two macros expand to 22 tests: the 20 integer ones and the 2
//!   float ones; the 2 float-view names its macro takes but never expands are tests here too);
//! - `test_array.rs` (5), `test_device.rs` (4), `test_dtype.rs` (3), `test_error.rs` (4),
//!   `test_function.rs` (19), `test_map.rs` (17), `test_module.rs` (4), `test_optional.rs`
//!   (13), `test_shape.rs` (1), `test_string.rs` (30), `test_tensor.rs` (7, its `env_alloc`
//!   module included), `test_tensor_view.rs` (7), `test_object_registration.rs` (4): all;
//! - `test_big_int.rs`: 26 of 27, the arithmetic ones (ported upstream from C++'s
//!   `test_big_int.cc`) included;
//! - `test_object.rs`: the three tests of objects with trailing items,
//!   `test_object_arc_with_extra_items`, `test_object_arc_with_extra_items_outlived_by_weak_ref`
//!   and `test_header_only_object_with_extra_items_outlived_by_weak_ref` (its other four are in
//!   `upstream_match.rs`).
//!
//! Translated in `upstream_structural.rs`, with the structural tests it belongs to:
//! `test_big_int.rs`'s `test_big_int_structural_traversal`.
//!
//! Deliberate differences from upstream, kept in the translations (each test says which):
//! - spelling: `T::try_from(any)` is `any.cast::<T>()` (C++'s conversions), `try_as` is
//!   `as_exact`; a view (`AnyView::from(&x)`) borrows an owner (`Any::new(x).view()`,
//!   `x.as_view()`); `debug_strong_count` is the count of the object borrowed in place
//!   (`strong_count` below); `call_tuple`/`into_typed_fn!` are `call`/`call_as`; error kinds
//!   are compared as strings (`"TypeError"`); `Function::from_type_key_method`/
//!   `from_type_method` are `reflection::method_of_type`/`reflection::method`; a module
//!   lookup's `query_imports` flag is the plain form (`true`) or the `own_` one (`false`);
//!   upstream's `tvm_ffi_dll_export_typed_func!` is `#[ffi_func(export = ..)]`;
//! - values: `u64::MAX` is an `ffi.BigInt` (upstream: the `int` -1); a null opaque pointer is
//!   `None` (making one is `unsafe`); `Debug` of `String`, `Bytes` and `BigInt` is Rust's own
//!   (`"text"`, `b"raw"`, the decimal); a map's `Debug` lists its entries;
//! - stricter or safer: a panic is a `RuntimeError` naming the function and site (upstream:
//!   `InternalError`); a missing method is an `AttributeError` (upstream: `TypeError`); writing
//!   a tensor takes a `TensorMut` (or `unsafe`); a `TensorView` has no `IntoAny` (a compile
//!   error where upstream panics at run time) and null strides read as the compact ones
//!   (upstream panics); `as_exact::<TensorView>` takes a tensor object too;
//! - containers: a map cannot be viewed with the wrong types: `Map::from_object_ref` checks
//!   every entry and panics naming the first that does not fit (`Map::try_from_object_ref`
//!   returns it as a `TypeError`), where upstream's unchecked `unsafe` view reads a mistyped
//!   value as `Err`, panics on iterating it and debug-asserts on a mistyped key; so the
//!   mismatch surfaces when the map is wrapped, not when it is read;
//! - calls: a by-value argument is lent to the callee (which takes its own reference);
//!   `Moved::new(value)` moves it, as upstream's `RValueRef`;
//! - registration: types register when their library loads, not on first use; indices are
//!   dynamic unless a parent reserves child slots (`child_slots = N`); an unregistered binding is a load error (seen in a
//!   helper process, `unregistered_binding`) and a panic when used;
//! - errors: `Error::with_cause_and_extra_context` for upstream's
//!   `Error::new_with_cause_and_extra_context`; `Error::append_backtrace(&mut self)` for
//!   `Error::with_appended_backtrace`;
//! - objects with trailing items: `ObjectWithItems` (safe; the count is the allocation's own,
//!   in a word before the items) for upstream's `ObjectCoreWithExtraItems` (unsafe; the
//!   payload reports the count); `items_mut` needs the only reference; the freed sizes differ
//!   by that count word.
//!
//! The SDK additions these translations brought: `Ord` for `String` and `Bytes`,
//! `Bytes: From<&[u8; N]>`, `Optional::set`, `Optional<String>::as_str`, `Error` to and from
//! `Any`, `Function::from_extern_c`, `reflection::method`/`method_of_type`, `Module`'s
//! `implements_own_function`/`own_function_metadata`/`own_function_doc`, `BigInt: From<bool>`,
//! `BigInt`'s arithmetic (`bigint_ops`), formatting flags and `to_f64`/`TryFrom<f64>`, and
//! `ObjectWithItems` with `ObjectRef::new_with_items`/`items`/`items_mut`.
use tvm_ffi::builtin::AnyObject;
use tvm_ffi::sys::type_index as ti;
use tvm_ffi::{
    Any, AnyView, Array, BigInt, Bytes, DataType, Device, Error, Function, Map, Module, Moved,
    ObjectRef, Optional, Result, Shape, String, Tensor, TensorView,
};

/// Records the size of this thread's latest deallocation, to check the layout an object is
/// released with (upstream's `test_object.rs` does the same).
struct RecordingAllocator;

thread_local! {
    static LAST_DEALLOC_SIZE: std::cell::Cell<usize> = const { std::cell::Cell::new(0) };
}

// SAFETY: every call is forwarded to the system allocator unchanged.
unsafe impl std::alloc::GlobalAlloc for RecordingAllocator {
    unsafe fn alloc(&self, layout: std::alloc::Layout) -> *mut u8 {
        // SAFETY: the caller's contract, forwarded.
        unsafe { std::alloc::System.alloc(layout) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: std::alloc::Layout) {
        let _ = LAST_DEALLOC_SIZE.try_with(|size| size.set(layout.size()));
        // SAFETY: the caller's contract, forwarded.
        unsafe { std::alloc::System.dealloc(ptr, layout) }
    }
}

#[global_allocator]
static ALLOCATOR: RecordingAllocator = RecordingAllocator;

/// The strong count of the object a value holds, `None` for a value without one (upstream's
/// `debug_strong_count`): the object borrowed in place, so the count is not disturbed.
fn strong_count(view: AnyView<'_>) -> Option<u32> {
    view.checked_cast::<&ObjectRef<AnyObject>>()
        .map(|obj| obj.strong_count())
}

/// A global of the wheel's C++ test peer, libtvm_ffi_testing (loaded first, as
/// `import tvm_ffi` loads it; upstream links it).
fn testing_global(name: &str) -> Function {
    tvm_ffi_tests::load_cpp_testing_library();
    Function::get_global(name).unwrap_or_else(|| panic!("global `{name}` missing"))
}

/// `testing.echo`: returns its argument.
fn echo() -> Function {
    testing_global("testing.echo")
}

/// A C symbol of libtvm_ffi_testing (loaded by [`testing_global`]), through `dlsym`.
fn testing_symbol(name: &str) -> *mut std::ffi::c_void {
    extern "C" {
        fn dlopen(filename: *const std::ffi::c_char, flags: i32) -> *mut std::ffi::c_void;
        fn dlsym(
            handle: *mut std::ffi::c_void,
            symbol: *const std::ffi::c_char,
        ) -> *mut std::ffi::c_void;
    }
    const RTLD_NOW: i32 = 2;
    const RTLD_NOLOAD: i32 = 4;
    tvm_ffi_tests::load_cpp_testing_library();
    let path = std::ffi::CString::new(tvm_ffi_tests::cpp_testing_library_path()).unwrap();
    let symbol = std::ffi::CString::new(name).unwrap();
    // SAFETY: C strings; the library is already loaded (`RTLD_NOLOAD` only finds it).
    let handle = unsafe { dlopen(path.as_ptr(), RTLD_NOW | RTLD_NOLOAD) };
    assert!(!handle.is_null(), "libtvm_ffi_testing is not loaded");
    // SAFETY: a live handle and a C string.
    let address = unsafe { dlsym(handle, symbol.as_ptr()) };
    assert!(!address.is_null(), "no symbol `{name}`");
    address
}

/// A safe-call export (`__tvm_ffi_*`) of libtvm_ffi_testing, as a function object.
fn testing_export(name: &str) -> Function {
    // SAFETY: the symbol is a function of the safe-call signature (the library exports it
    // with `TVM_FFI_DLL_EXPORT_TYPED_FUNC`).
    let safe_call: tvm_ffi::sys::TVMFFISafeCallType =
        unsafe { std::mem::transmute(testing_symbol(name)) };
    // SAFETY: a safe-call export that uses no handle, for the life of the process.
    unsafe { Function::from_extern_c(std::ptr::null_mut(), safe_call, None) }.unwrap()
}

// ---- test_any.rs ----

mod test_any {
    // Upstream's values (3.14) are kept.
    #![allow(clippy::approx_constant)]
    use super::*;

    /// Integers through `Any` and `AnyView` (upstream's `AnyView::from(&value)` is a view of
    /// an owning `Any` here: a view always borrows an owner).
    macro_rules! test_any_int {
        ($($type:ty: $value:expr, $index:expr, $any_name:ident, $any_view_name:ident),* $(,)?) => {
            $(
                #[test]
                fn $any_name() {
                    let any = Any::new($value);
                    assert_eq!(any.type_index(), $index);
                    assert_eq!(any.cast::<$type>().unwrap(), $value);
                }

                #[test]
                fn $any_view_name() {
                    let value = $value;
                    let owner = Any::new(value);
                    let any_view = owner.view();
                    assert_eq!(any_view.type_index(), $index);
                    assert_eq!(any_view.cast::<$type>().unwrap(), $value);
                }
            )*
        };
    }

    // `u64::MAX` does not fit an `int`: it is an `ffi.BigInt` here (Python receives the same
    // `int`), where upstream stores its bits as the `int` -1.
    test_any_int!(
        i8: 127i8, ti::kTVMFFIInt, test_any_int_i8, test_any_view_int_i8,
        i16: 32767i16, ti::kTVMFFIInt, test_any_int_i16, test_any_view_int_i16,
        i32: 42i32, ti::kTVMFFIInt, test_any_int_i32, test_any_view_int_i32,
        i64: 123456789i64, ti::kTVMFFIInt, test_any_int_i64, test_any_view_int_i64,
        isize: 42isize, ti::kTVMFFIInt, test_any_int_isize, test_any_view_int_isize,
        u8: 255u8, ti::kTVMFFIInt, test_any_int_u8, test_any_view_int_u8,
        u16: 65535u16, ti::kTVMFFIInt, test_any_int_u16, test_any_view_int_u16,
        u32: 4294967295u32, ti::kTVMFFIInt, test_any_int_u32, test_any_view_int_u32,
        u64: 18446744073709551615u64, ti::kTVMFFIBigInt, test_any_int_u64, test_any_view_int_u64,
        usize: 42usize, ti::kTVMFFIInt, test_any_int_usize, test_any_view_int_usize
    );

    macro_rules! test_any_float {
        ($($type:ty: $value:expr, $any_name:ident, $any_view_name:ident),* $(,)?) => {
            $(
                #[test]
                fn $any_name() {
                    let any = Any::new($value);
                    assert_eq!(any.type_index(), ti::kTVMFFIFloat);
                    assert_eq!(any.cast::<$type>().unwrap(), $value);
                }

                // Upstream names this test but its macro generates only the `Any` one; here it
                // checks the view as well.
                #[test]
                fn $any_view_name() {
                    let owner = Any::new($value);
                    let any_view = owner.view();
                    assert_eq!(any_view.type_index(), ti::kTVMFFIFloat);
                    assert_eq!(any_view.cast::<$type>().unwrap(), $value);
                }
            )*
        };
    }

    test_any_float!(
        f32: 3.14f32, test_any_float_f32, test_any_view_float_f32,
        f64: 3.14f64, test_any_float_f64, test_any_view_float_f64
    );

    #[test]
    fn test_any_bool() {
        let any_true = Any::new(true);
        let any_false = Any::new(false);
        let any_view_true = any_true.view();
        let any_view_false = any_false.view();

        assert_eq!(any_true.type_index(), ti::kTVMFFIBool);
        assert_eq!(any_false.type_index(), ti::kTVMFFIBool);
        assert!(any_true.cast::<bool>().unwrap());
        assert!(!any_false.cast::<bool>().unwrap());

        assert_eq!(any_view_true.type_index(), ti::kTVMFFIBool);
        assert_eq!(any_view_false.type_index(), ti::kTVMFFIBool);
        assert!(any_view_true.cast::<bool>().unwrap());
        assert!(!any_view_false.cast::<bool>().unwrap());
    }

    #[test]
    fn test_type_mismatch_error() {
        // `cast` converts where C++ does: an int is a bool.
        let any = Any::new(42i32);
        assert!(any.cast::<bool>().unwrap());
        // `as_exact` (upstream's `try_as`) does not.
        assert_eq!(any.as_exact::<bool>(), None);
    }

    #[test]
    fn test_type_mismatch_error_message() {
        let any_none = Any::new(None::<i32>);
        let err = any_none.cast::<i32>().unwrap_err();
        assert_eq!(err.kind(), "TypeError");
        assert_eq!(err.message(), "Cannot convert from type `None` to `int`");

        let any_float = Any::new(1.2f32);
        let err = any_float.cast::<Option<i32>>().unwrap_err();
        assert_eq!(err.kind(), "TypeError");
        assert_eq!(
            err.message(),
            "Cannot convert from type `float` to `Optional<int>`"
        );
    }

    #[test]
    fn test_cross_type_conversion_int_to_bool() {
        assert!(Any::new(42i32).cast::<bool>().unwrap());
        assert!(!Any::new(0i32).cast::<bool>().unwrap());
    }

    #[test]
    fn test_max_min_values() {
        assert_eq!(Any::new(i64::MAX).cast::<i64>().unwrap(), i64::MAX);
        assert_eq!(Any::new(i64::MIN).cast::<i64>().unwrap(), i64::MIN);
    }

    #[test]
    fn test_any_void_ptr() {
        // A null pointer is `None` here (making one is `unsafe`: callees trust opaque
        // pointers); it reads back as null, as upstream's does.
        // SAFETY: the value reaches no function.
        let any = unsafe { Any::from_opaque_ptr(std::ptr::null_mut()) };
        assert_eq!(any.type_index(), ti::kTVMFFINone);
        assert_eq!(
            any.cast::<*mut std::ffi::c_void>().unwrap(),
            std::ptr::null_mut()
        );
        // A non-null one is a `void*`.
        let mut data = 1u8;
        let ptr = &mut data as *mut u8 as *mut std::ffi::c_void;
        // SAFETY: the value reaches no function.
        let any = unsafe { Any::from_opaque_ptr(ptr) };
        assert_eq!(any.type_index(), ti::kTVMFFIOpaquePtr);
        assert_eq!(any.cast::<*mut std::ffi::c_void>().unwrap(), ptr);
    }

    #[test]
    fn test_any_option_i32() {
        let some_value = Some(42i32);
        let any_some = Any::new(some_value);
        let any_view_some = any_some.view();

        assert_eq!(any_some.type_index(), ti::kTVMFFIInt);
        assert_eq!(any_some.cast::<Option<i32>>().unwrap(), Some(42));
        assert_eq!(any_view_some.type_index(), ti::kTVMFFIInt);
        assert_eq!(any_view_some.cast::<Option<i32>>().unwrap(), Some(42));

        let none_value: Option<i32> = None;
        let any_none = Any::new(none_value);
        let any_view_none = any_none.view();

        assert_eq!(any_none.type_index(), ti::kTVMFFINone);
        assert_eq!(any_none.cast::<Option<i32>>().unwrap(), None);
        assert_eq!(any_view_none.type_index(), ti::kTVMFFINone);
        assert_eq!(any_view_none.cast::<Option<i32>>().unwrap(), None);

        let any_float = Any::new(1.2f32);
        assert_eq!(any_float.type_index(), ti::kTVMFFIFloat);
        assert_eq!(
            any_float.cast::<Option<i32>>().unwrap_err().kind(),
            "TypeError"
        );
    }

    #[test]
    fn test_any_string() {
        let any = Any::new(String::from("hello"));
        assert_eq!(any.type_index(), ti::kTVMFFISmallStr);
        // Small strings are not reference counted.
        assert_eq!(strong_count(any.view()), None);
        let out_string = any.cast::<String>().unwrap();
        assert_eq!(out_string, "hello");
    }

    #[test]
    fn test_any_bytes() {
        let data_arr: &[u8; 3] = &[1, 2, 3];
        let any = Any::new(Bytes::from(data_arr));
        assert_eq!(any.type_index(), ti::kTVMFFISmallBytes);
        assert_eq!(strong_count(any.view()), None);
        let out_bytes = any.cast::<Bytes>().unwrap();
        assert_eq!(out_bytes, data_arr[..]);
    }

    #[test]
    fn test_any_big_string() {
        let long_string = "hello world this is a long string";
        let input_str = String::from(long_string);
        let any = Any::new(input_str.clone());
        assert_eq!(any.type_index(), ti::kTVMFFIStr);
        assert_eq!(strong_count(any.view()), Some(2));

        // Upstream's `String::try_from(any)` consumes the `Any`; `cast` borrows it, so the
        // `Any` is dropped by hand to reach the same count.
        let out_string = any.cast::<String>().unwrap();
        drop(any);
        assert_eq!(out_string, long_string);

        drop(out_string);
        assert_eq!(strong_count(input_str.as_view()), Some(1));
    }

    #[test]
    fn test_any_big_bytes() {
        let data_arr: &[u8; 10] = &[1, 2, 3, 4, 5, 6, 7, 8, 9, 10];
        let any = Any::new(Bytes::from(data_arr));
        assert_eq!(any.type_index(), ti::kTVMFFIBytes);
        assert_eq!(strong_count(any.view()), Some(1));

        let out_bytes = any.cast::<Bytes>().unwrap();
        drop(any);
        assert_eq!(out_bytes, data_arr[..]);
        assert_eq!(strong_count(out_bytes.as_view()), Some(1));
    }

    #[test]
    fn test_anyview_any_conversion_and_cloning() {
        let input_str = String::from("hello world this is a long string");

        // A view does not count.
        let any_view = input_str.as_view();
        assert_eq!(strong_count(any_view), Some(1));

        // Copying a view does not count either.
        let any_view_clone = any_view;
        assert_eq!(strong_count(any_view), Some(1));
        assert_eq!(strong_count(any_view_clone), Some(1));

        // A view to an owning value: one more.
        let any1 = any_view.to_owned().unwrap();
        assert_eq!(strong_count(any1.view()), Some(2));

        let any2 = any1.clone();
        assert_eq!(strong_count(any1.view()), Some(3));
        assert_eq!(strong_count(any2.view()), Some(3));

        let any_view_from_any = any1.view();
        assert_eq!(strong_count(any_view_from_any), Some(3));

        let any3 = any_view_clone.to_owned().unwrap();
        assert_eq!(strong_count(any3.view()), Some(4));

        let out_string1 = any1.clone().cast::<String>().unwrap();
        let out_string2 = any2.clone().cast::<String>().unwrap();
        let out_string3 = any3.clone().cast::<String>().unwrap();
        let out_string_view = any_view_from_any.cast::<String>().unwrap();

        assert_eq!(out_string1, input_str);
        assert_eq!(out_string2, input_str);
        assert_eq!(out_string3, input_str);
        assert_eq!(out_string_view, input_str);

        drop(any1);
        assert_eq!(strong_count(any3.view()), Some(7));
        drop(any2);
        assert_eq!(strong_count(any3.view()), Some(6));
        drop(any3);
        assert_eq!(strong_count(input_str.as_view()), Some(5));
    }

    #[test]
    fn test_any_dl_device() {
        let cpu_device = Device::cpu();
        let any_cpu = Any::new(cpu_device);
        let any_view_cpu = any_cpu.view();

        assert_eq!(any_cpu.type_index(), ti::kTVMFFIDevice);
        let converted_cpu = any_cpu.cast::<Device>().unwrap();
        assert_eq!(converted_cpu.device_type(), tvm_ffi::sys::kDLCPU);
        assert_eq!(converted_cpu.device_id(), 0);

        assert_eq!(any_view_cpu.type_index(), ti::kTVMFFIDevice);
        let converted_cpu_view = any_view_cpu.cast::<Device>().unwrap();
        assert_eq!(converted_cpu_view.device_type(), tvm_ffi::sys::kDLCPU);
        assert_eq!(converted_cpu_view.device_id(), 0);

        let cuda_device = Device::cuda(1);
        let any_cuda = Any::new(cuda_device);
        let any_view_cuda = any_cuda.view();

        assert_eq!(any_cuda.type_index(), ti::kTVMFFIDevice);
        let converted_cuda = any_cuda.cast::<Device>().unwrap();
        assert_eq!(converted_cuda.device_type(), tvm_ffi::sys::kDLCUDA);
        assert_eq!(converted_cuda.device_id(), 1);

        assert_eq!(any_view_cuda.type_index(), ti::kTVMFFIDevice);
        let converted_cuda_view = any_view_cuda.cast::<Device>().unwrap();
        assert_eq!(converted_cuda_view.device_type(), tvm_ffi::sys::kDLCUDA);
        assert_eq!(converted_cuda_view.device_id(), 1);
    }

    /// An object whose fields are only reachable through `Deref`, where a by-value conversion
    /// does not apply.
    #[derive(tvm_ffi::Object)]
    #[ffi_type(key = "testing.rust.upstream_values.FieldHolder")]
    #[repr(C)]
    struct FieldHolder {
        lhs: String,
        rhs: Optional<String>,
        count: i64,
    }

    #[test]
    fn test_to_any_matches_from_value() {
        // Upstream's `value.to_any()` is `Any::new(&value)` here (`IntoAny` for references
        // clones).
        macro_rules! check {
            ($value:expr, $ty:ty, $type_index:expr) => {{
                let value: $ty = $value;
                let any = Any::new(value.clone());
                assert_eq!(any.type_index(), $type_index);
                assert_eq!(any.type_index(), Any::new(value).type_index());
                assert_eq!(any.as_exact::<$ty>(), Some($value));
                assert_eq!(strong_count(any.view()), None);
            }};
        }

        check!(-7i64, i64, ti::kTVMFFIInt);
        check!(true, bool, ti::kTVMFFIBool);
        check!(3.5f64, f64, ti::kTVMFFIFloat);
        check!(String::from("hello"), String, ti::kTVMFFISmallStr);
        check!(Bytes::from(&[1u8, 2, 3]), Bytes, ti::kTVMFFISmallBytes);
        assert_eq!(Any::new(()).type_index(), ti::kTVMFFINone);
        assert_eq!(Any::new(Option::<i64>::None).type_index(), ti::kTVMFFINone);

        // Object-backed: one reference more, given back on drop.
        let s = String::from("hello world this is a long string");
        let any = Any::new(&s);
        assert_eq!(any.type_index(), ti::kTVMFFIStr);
        assert_eq!(strong_count(any.view()), Some(2));
        assert_eq!(any.as_exact::<String>().unwrap(), s);
        drop(any);
        assert_eq!(strong_count(s.as_view()), Some(1));
    }

    #[test]
    fn test_to_any_from_borrowed_object_field() {
        let lhs = String::from("hello world this is a long string");
        let holder = ObjectRef::new(FieldHolder {
            lhs: lhs.clone(),
            rhs: Optional::some(lhs.clone()),
            count: 11,
        });
        // `lhs` plus the two copies stored in the object.
        assert_eq!(strong_count(lhs.as_view()), Some(3));

        let any = Any::new(&holder.lhs);
        assert_eq!(strong_count(any.view()), Some(4));
        assert_eq!(any.as_exact::<String>().unwrap(), lhs);

        let any_opt = Any::new(holder.rhs.clone());
        assert_eq!(
            any_opt.as_exact::<Option<String>>().unwrap(),
            Some(lhs.clone())
        );
        assert_eq!(Any::new(holder.count).as_exact::<i64>(), Some(11));

        drop(any);
        drop(any_opt);
        assert_eq!(strong_count(lhs.as_view()), Some(3));
    }
}

// ---- test_device.rs ----

mod test_device {
    use super::*;
    use tvm_ffi::env;

    #[test]
    fn test_device_stream() {
        let device = Device::cpu();
        let dummy_stream = 2 as env::StreamHandle;
        // Upstream's `with_stream(device, stream, closure)` is a guard here; setting a stream
        // is safe, as the runtime only stores the handle.
        {
            let _guard = env::use_stream(device, dummy_stream).unwrap();
            assert_eq!(env::current_stream(device), dummy_stream);
        }
        assert_eq!(env::current_stream(device), std::ptr::null_mut());
    }

    #[test]
    fn test_device_stream_restored_after_error() {
        let device = Device::cpu();
        let dummy_stream = 3 as env::StreamHandle;
        let result: Result<()> = (|| {
            let _guard = env::use_stream(device, dummy_stream)?;
            Err(Error::value_error("closure failed"))
        })();
        let err = result.unwrap_err();
        assert_eq!(err.kind(), "ValueError");
        assert_eq!(err.message(), "closure failed");
        assert_eq!(env::current_stream(device), std::ptr::null_mut());
    }

    #[test]
    fn test_device_stream_restored_after_panic() {
        let device = Device::cpu();
        let dummy_stream = 4 as env::StreamHandle;
        // A silent panic payload (`resume_unwind` runs no panic hook, so nothing is printed).
        let unwound = std::panic::catch_unwind(|| {
            let _guard = env::use_stream(device, dummy_stream).unwrap();
            assert_eq!(env::current_stream(device), dummy_stream);
            std::panic::resume_unwind(Box::new("closure panicked"));
        });
        assert!(unwound.is_err());
        assert_eq!(env::current_stream(device), std::ptr::null_mut());
    }

    #[test]
    fn test_device_any_conversion() {
        let device = Device::cpu();
        let any_device = Any::new(device);
        assert_eq!(any_device.type_index(), ti::kTVMFFIDevice);
        let converted_device: Device = any_device.cast().unwrap();
        assert_eq!(converted_device.device_type(), device.device_type());
        assert_eq!(converted_device.device_id(), device.device_id());
    }
}

// ---- test_dtype.rs ----

mod test_dtype {
    use super::*;
    use tvm_ffi::sys::{kDLFloat, kDLInt, kDLUInt};

    #[test]
    fn test_dl_datatype_from_string() {
        let test_cases = [
            ("int32", DataType::new(kDLInt, 32, 1)),
            ("float32", DataType::new(kDLFloat, 32, 1)),
            ("int8", DataType::new(kDLInt, 8, 1)),
            ("float64", DataType::new(kDLFloat, 64, 1)),
            ("uint32", DataType::new(kDLUInt, 32, 1)),
        ];
        for (text, expected) in test_cases {
            let dtype: DataType = text.parse().unwrap();
            assert_eq!(dtype, expected);
        }
    }

    #[test]
    fn test_dl_datatype_any_conversion() {
        let original_dtype = DataType::new(kDLInt, 32, 1);
        let any_dtype = Any::new(original_dtype);
        let converted_dtype: DataType = any_dtype.cast().unwrap();
        assert_eq!(converted_dtype.code(), original_dtype.code());
        assert_eq!(converted_dtype.bits(), original_dtype.bits());
        assert_eq!(converted_dtype.lanes(), original_dtype.lanes());
    }

    #[test]
    fn test_dl_datatype_any_with_string_conversion() {
        let dtype: DataType = "int32".parse().unwrap();
        let any_dtype = Any::new(dtype);
        let converted_dtype: DataType = any_dtype.cast().unwrap();
        assert_eq!(converted_dtype.code(), dtype.code());
        assert_eq!(converted_dtype.bits(), dtype.bits());
        assert_eq!(converted_dtype.lanes(), dtype.lanes());
        // As C++ `DataType(String)` converts: the string itself converts to a dtype.
        let from_string: DataType = Any::new("int32").cast().unwrap();
        assert_eq!(from_string, dtype);
    }
}

// ---- test_shape.rs ----

mod test_shape {
    use super::*;

    #[test]
    fn test_any_shape() {
        let shape = Shape::from(vec![1, 2, 3, 4]);
        let any = Any::new(shape.clone());
        let owner = Any::new(&shape);
        let any_view = owner.view();

        assert_eq!(any.type_index(), ti::kTVMFFIShape);
        let converted = any.cast::<Shape>().unwrap();
        assert_eq!(converted.as_slice(), &[1, 2, 3, 4]);

        assert_eq!(any_view.type_index(), ti::kTVMFFIShape);
        let converted_view = any_view.cast::<Shape>().unwrap();
        assert_eq!(converted_view.as_slice(), &[1, 2, 3, 4]);
    }
}

// ---- test_error.rs ----

mod test_error {
    use super::*;

    #[test]
    fn test_error_new() {
        let error = Error::with_backtrace("RuntimeError", "test error", "test traceback");
        assert_eq!(error.kind(), "RuntimeError");
        assert_eq!(error.message(), "test error");
        assert_eq!(error.backtrace(), "test traceback");
    }

    #[test]
    fn test_error_from_raised() {
        let error0 = Error::with_backtrace("RuntimeError", "test error", "test traceback");
        // `set_raised` hands the runtime a reference (upstream's takes `&Error`).
        error0.clone().set_raised();
        let error1 = Error::take_raised().unwrap();
        assert_eq!(error1.kind(), "RuntimeError");
        assert_eq!(error1.message(), "test error");
        assert_eq!(error1.backtrace(), "test traceback");
        // The same object: one reference in `error0`, one in `error1`.
        assert!(error1.as_object_ref().ptr_eq(error0.as_object_ref()));
        assert_eq!(error1.as_object_ref().strong_count(), 2);
        assert!(Error::take_raised().is_none());
    }

    fn error_fn0(flag: bool) -> Result<i32> {
        tvm_ffi::ensure!(!flag, RuntimeError, "test error {flag}");
        Ok(1)
    }

    fn error_fn1(flag: bool) -> Result<i32> {
        tvm_ffi::attach_context!(error_fn0(flag))
    }

    #[test]
    fn test_error_with_context() {
        let error0 = tvm_ffi::attach_context!(error_fn1(true)).unwrap_err();
        assert_eq!(error0.kind(), "RuntimeError");
        assert_eq!(error0.message(), "test error true");
        let backtrace = error0.backtrace();
        assert!(backtrace.contains("upstream_values.rs"), "{backtrace}");
        // `ensure!` names the raising function, as upstream's does.
        assert!(
            backtrace.contains("in upstream_values::test_error::error_fn0\n"),
            "{backtrace}"
        );
        // `attach_context!` names the caller as `ensure!` does.
        assert!(
            backtrace.contains("in upstream_values::test_error::error_fn1\n"),
            "{backtrace}"
        );
        assert!(
            backtrace.contains("in upstream_values::test_error::test_error_with_context\n"),
            "{backtrace}"
        );
        // Innermost frame first, as the runtime appends.
        assert!(backtrace.find("error_fn1").unwrap() < backtrace.find("test_error_with").unwrap());
        assert_eq!(error_fn1(false).unwrap(), 1);

        // Appending to a shared error leaves the other holder's backtrace as it was, and the
        // copy keeps the cause and the extra context.
        let payload = Array::new([7i64]).unwrap().into_object_ref().into_object();
        for shared in [false, true] {
            let error = Error::with_cause_and_extra_context(
                "RuntimeError",
                "outer",
                "origin",
                Some(&error0),
                Some(&payload),
            );
            let retained = shared.then(|| error.clone());
            let mut output = error;
            output.append_backtrace(" frame");
            assert_eq!(output.backtrace(), "origin frame");
            assert_eq!(output.message(), "outer");
            let cause = output.cause_chain().unwrap();
            assert!(cause.as_object_ref().ptr_eq(error0.as_object_ref()));
            assert_eq!(cause.message(), "test error true");
            assert!(output.extra_context().unwrap().ptr_eq(&payload));
            if let Some(retained) = retained {
                assert_eq!(retained.backtrace(), "origin");
                assert!(!retained.as_object_ref().ptr_eq(output.as_object_ref()));
                assert!(retained
                    .cause_chain()
                    .unwrap()
                    .as_object_ref()
                    .ptr_eq(error0.as_object_ref()));
            }
        }
        // Every error above is gone: their references to the cause and the context with them.
        assert_eq!(error0.as_object_ref().strong_count(), 1);
        assert_eq!(payload.strong_count(), 1);
        assert!(error0.cause_chain().is_none() && error0.extra_context().is_none());
    }

    #[test]
    fn test_error_any_convert() {
        let error = Error::with_backtrace("RuntimeError", "test error", "test traceback");
        let any = Any::new(error.clone());
        let error2 = any.as_exact::<Error>().unwrap();
        assert_eq!(error2.kind(), "RuntimeError");
        assert_eq!(error2.message(), "test error");
        assert_eq!(error2.backtrace(), "test traceback");

        let err = any.cast::<i32>().unwrap_err();
        assert_eq!(err.kind(), "TypeError");
        assert_eq!(
            err.message(),
            "Cannot convert from type `ffi.Error` to `int`"
        );

        let owner = Any::new(&error);
        let anyview = owner.view();
        let error3 = anyview.cast::<Error>().unwrap();
        assert_eq!(error3.kind(), "RuntimeError");
        assert_eq!(error3.message(), "test error");
        assert_eq!(error3.backtrace(), "test traceback");
    }
}

// ---- test_string.rs ----

mod test_string {
    use super::*;
    use std::collections::hash_map::DefaultHasher;
    use std::hash::{Hash, Hasher};

    fn hash_of(value: &impl Hash) -> u64 {
        let mut hasher = DefaultHasher::new();
        value.hash(&mut hasher);
        hasher.finish()
    }

    // Upstream's `Bytes::new()`/`String::new()` take no argument; here they take the content.

    #[test]
    fn test_bytes_new() {
        let bytes = Bytes::new(&[]);
        assert_eq!(bytes.len(), 0);
        assert_eq!(bytes.as_bytes(), &[] as &[u8]);
    }

    #[test]
    fn test_bytes_default() {
        let bytes = Bytes::default();
        assert_eq!(bytes.len(), 0);
        assert_eq!(bytes.as_bytes(), &[] as &[u8]);
    }

    #[test]
    fn test_bytes_from_small() {
        let data = b"hello";
        let bytes = Bytes::from(data.as_slice());
        assert_eq!(bytes.len(), 5);
        assert_eq!(bytes.as_bytes(), data);
        assert!(bytes.is_inline());
    }

    #[test]
    fn test_bytes_from_large() {
        let data = b"this is a very long string that exceeds the small bytes limit";
        let bytes = Bytes::from(data.as_slice());
        assert_eq!(bytes.as_view().type_index(), ti::kTVMFFIBytes);
        assert_eq!(bytes.len(), data.len());
        assert_eq!(bytes.as_bytes(), data);
    }

    #[test]
    fn test_bytes_deref() {
        let data = b"test";
        let bytes = Bytes::from(data.as_slice());
        assert_eq!(&*bytes, data);
    }

    #[test]
    fn test_bytes_clone_basic() {
        let bytes1 = Bytes::from(b"clone test".as_slice());
        let bytes2 = bytes1.clone();
        assert_eq!(bytes1, bytes2);
        assert_eq!(bytes1.as_bytes(), bytes2.as_bytes());
    }

    #[test]
    fn test_bytes_eq() {
        let data = b"equal";
        let bytes1 = Bytes::from(data.as_slice());
        let bytes2 = Bytes::from(data.as_slice());
        assert_eq!(bytes1, bytes2);
        let bytes3 = Bytes::from(b"different");
        assert_ne!(bytes1, bytes3);
    }

    #[test]
    fn test_bytes_ord() {
        let bytes1 = Bytes::from(b"abc");
        let bytes2 = Bytes::from(b"def");
        let bytes3 = Bytes::from(b"abc");
        assert!(bytes1 < bytes2);
        assert!(bytes1 <= bytes2);
        assert!(bytes2 > bytes1);
        assert!(bytes2 >= bytes1);
        assert_eq!(bytes1.cmp(&bytes3), std::cmp::Ordering::Equal);
    }

    #[test]
    fn test_bytes_hash() {
        let data = b"hash test";
        let bytes1 = Bytes::from(data.as_slice());
        let bytes2 = Bytes::from(data.as_slice());
        assert_eq!(hash_of(&bytes1), hash_of(&bytes2));
    }

    #[test]
    fn test_string_new() {
        let s = String::new("");
        assert_eq!(s.len(), 0);
        assert_eq!(s.as_str(), "");
        assert_eq!(s.as_bytes(), &[] as &[u8]);
    }

    #[test]
    fn test_string_default() {
        let s = String::default();
        assert_eq!(s.len(), 0);
        assert_eq!(s.as_str(), "");
    }

    #[test]
    fn test_string_from_small() {
        let input = "hello";
        let s = String::from(input);
        assert_eq!(s.len(), 5);
        assert_eq!(s.as_str(), input);
        assert_eq!(s.as_bytes(), input.as_bytes());
    }

    #[test]
    fn test_string_from_large() {
        let input = "this is a very long string that exceeds the small string limit";
        let s = String::from(input);
        assert_eq!(s.len(), input.len());
        assert_eq!(s.as_str(), input);
        assert_eq!(s.as_bytes(), input.as_bytes());
    }

    #[test]
    fn test_string_deref() {
        let input = "deref test";
        let s = String::from(input);
        assert_eq!(&*s, input);
    }

    #[test]
    fn test_string_clone_basic() {
        let s1 = String::from("clone test");
        let s2 = s1.clone();
        assert_eq!(s1, s2);
        assert_eq!(s1.as_str(), s2.as_str());
    }

    #[test]
    fn test_string_eq() {
        let s1 = String::from("equal");
        let s2 = String::from("equal");
        assert_eq!(s1, s2);
        let s3 = String::from("different");
        assert_ne!(s1, s3);
    }

    #[test]
    fn test_string_ord() {
        let s1 = String::from("abc");
        let s2 = String::from("def");
        let s3 = String::from("abc");
        assert!(s1 < s2);
        assert!(s1 <= s2);
        assert!(s2 > s1);
        assert!(s2 >= s1);
        assert_eq!(s1.cmp(&s3), std::cmp::Ordering::Equal);
    }

    #[test]
    fn test_string_hash() {
        let s1 = String::from("hash test");
        let s2 = String::from("hash test");
        assert_eq!(hash_of(&s1), hash_of(&s2));
    }

    #[test]
    fn test_empty_strings() {
        let empty_str = String::from("");
        assert_eq!(empty_str.len(), 0);
        assert_eq!(empty_str.as_str(), "");

        let empty_bytes = Bytes::from(&[]);
        assert_eq!(empty_bytes.len(), 0);
        assert_eq!(empty_bytes.as_bytes(), &[] as &[u8]);
    }

    #[test]
    fn test_unicode_strings() {
        let unicode = "\u{1F680} Hello \u{4E16}\u{754C} \u{1F30D}";
        let s = String::from(unicode);
        assert_eq!(s.as_str(), unicode);
        assert_eq!(s.len(), unicode.len());
    }

    #[test]
    fn test_small_vs_large_boundary() {
        let boundary = "1234567";
        let s = String::from(boundary);
        assert_eq!(s.as_str(), boundary);
        assert!(s.is_inline());

        let over_boundary = "12345678";
        let s2 = String::from(over_boundary);
        assert_eq!(s2.as_str(), over_boundary);
        assert!(!s2.is_inline());
    }

    #[test]
    fn test_bytes_small_vs_large_boundary() {
        let boundary = b"1234567";
        let bytes = Bytes::from(boundary.as_slice());
        assert_eq!(bytes.as_bytes(), boundary);
        assert!(bytes.is_inline());

        let over_boundary = b"12345678";
        let bytes2 = Bytes::from(over_boundary.as_slice());
        assert_eq!(bytes2.as_bytes(), over_boundary);
        assert!(!bytes2.is_inline());
    }

    #[test]
    fn test_mixed_comparisons() {
        let s1 = String::from("test");
        let s2 = String::from("test");
        let s3 = String::from("different");
        assert!(s1 == s2);
        assert!(s1 != s3);
        assert!(s1 <= s2);
        assert!(s1 >= s2);
        assert!(s1 > s3);
        assert!(s3 < s1);
    }

    #[test]
    fn test_bytes_mixed_comparisons() {
        let b1 = Bytes::from(b"test");
        let b2 = Bytes::from(b"test");
        let b3 = Bytes::from(b"different");
        assert!(b1 == b2);
        assert!(b1 != b3);
        assert!(b1 <= b2);
        assert!(b1 >= b2);
        assert!(b1 > b3);
        assert!(b3 < b1);
    }

    /// `Debug` is Rust's own form for byte strings here (upstream: a struct naming `Bytes`).
    #[test]
    fn test_bytes_debug() {
        let bytes = Bytes::from(b"hello".as_slice());
        assert_eq!(format!("{bytes:?}"), r#"b"hello""#);
        assert_eq!(format!("{:?}", Bytes::from(b"\x00\xff")), r#"b"\x00\xff""#);
    }

    /// `Debug` is `str`'s here (upstream: a struct naming `String`).
    #[test]
    fn test_string_debug() {
        let s = String::from("world");
        assert_eq!(format!("{s:?}"), r#""world""#);
    }

    #[test]
    fn test_bytes_clone_small() {
        let bytes1 = Bytes::from(b"small".as_slice());
        let bytes2 = bytes1.clone();
        assert_eq!(bytes1, bytes2);
        assert_eq!(bytes1.as_bytes(), bytes2.as_bytes());
        assert_eq!(bytes1.len(), bytes2.len());
        // Inline content is copied with the value.
        assert_ne!(bytes1.as_bytes().as_ptr(), bytes2.as_bytes().as_ptr());
    }

    #[test]
    fn test_bytes_clone_large() {
        let data = b"this is a very long string that exceeds the small bytes limit";
        let bytes1 = Bytes::from(data.as_slice());
        let bytes2 = bytes1.clone();
        assert_eq!(bytes1, bytes2);
        assert_eq!(bytes1.as_bytes(), bytes2.as_bytes());
        assert_eq!(bytes1.len(), bytes2.len());
        // Heap content is shared.
        assert_eq!(bytes1.as_bytes().as_ptr(), bytes2.as_bytes().as_ptr());
    }

    #[test]
    fn test_string_clone_small() {
        let s1 = String::from("small");
        assert!(strong_count(s1.as_view()).is_none());
        let s2 = s1.clone();
        assert_eq!(s1, s2);
        assert_eq!(s1.as_str(), s2.as_str());
        assert_eq!(s1.len(), s2.len());
        assert_ne!(s1.as_bytes().as_ptr(), s2.as_bytes().as_ptr());
    }

    #[test]
    fn test_string_clone_large() {
        let input = "this is a very long string that exceeds the small string limit";
        let s1 = String::from(input);
        assert_eq!(strong_count(s1.as_view()), Some(1));
        let s2 = s1.clone();
        assert_eq!(strong_count(s1.as_view()), Some(2));
        assert_eq!(strong_count(s2.as_view()), Some(2));
        assert_eq!(s1, s2);
        assert_eq!(s1.as_str(), s2.as_str());
        assert_eq!(s1.len(), s2.len());
        assert_eq!(s1.as_bytes().as_ptr(), s2.as_bytes().as_ptr());
    }
}

// ---- test_optional.rs ----

mod test_optional {
    use super::*;

    /// The 16-byte `TVMFFIAny` cell backing an `Optional<T>` (type_index@0, small_str_len@4,
    /// union@8); no padding.
    fn cell_image<T>(opt: &Optional<T>) -> [u8; 16] {
        let raw = opt.as_raw();
        let mut b = [0u8; 16];
        b[0..4].copy_from_slice(&raw.type_index.to_ne_bytes());
        b[4..8].copy_from_slice(&raw.zero_padding.to_ne_bytes());
        // SAFETY: every value has 8 initialised value bytes.
        b[8..16].copy_from_slice(&unsafe { raw.value.v_uint64 }.to_ne_bytes());
        b
    }

    #[test]
    fn non_object_layout_is_uniform_16_bytes() {
        assert_eq!(std::mem::size_of::<Optional<i32>>(), 16);
        assert_eq!(std::mem::size_of::<Optional<i64>>(), 16);
        assert_eq!(std::mem::size_of::<Optional<bool>>(), 16);
        assert_eq!(std::mem::size_of::<Optional<f64>>(), 16);
        assert_eq!(std::mem::size_of::<Optional<String>>(), 16);
        assert_eq!(
            std::mem::align_of::<Optional<i32>>(),
            std::mem::align_of::<Optional<String>>()
        );
    }

    #[test]
    fn object_option_uses_nullable_pointer_layout() {
        assert_eq!(
            std::mem::size_of::<Option<Array<i64>>>(),
            std::mem::size_of::<Array<i64>>()
        );
        assert_eq!(
            std::mem::size_of::<Option<Array<i64>>>(),
            std::mem::size_of::<*mut ()>()
        );
        let none: Option<Array<i64>> = None;
        assert!(none.is_none());
        let some = Some(Array::from(vec![1i64, 2, 3]));
        assert_eq!(some.as_ref().expect("engaged").len(), 3);
    }

    #[test]
    fn none_is_all_zero_cell() {
        assert_eq!(cell_image(&Optional::<i32>::none()), [0u8; 16]);
        assert_eq!(cell_image(&Optional::<String>::none()), [0u8; 16]);
    }

    #[test]
    #[cfg(target_endian = "little")]
    fn byte_image_some_int_matches_ffi_any() {
        let o = Optional::<i32>::some(0x1234_5678);
        let b = cell_image(&o);
        assert_eq!(
            &b[0..4],
            &ti::kTVMFFIInt.to_le_bytes(),
            "type_index must be kTVMFFIInt"
        );
        assert_eq!(&b[4..8], &[0u8; 4], "zero padding");
        assert_eq!(
            &b[8..16],
            &0x1234_5678_i64.to_le_bytes(),
            "payload sits in v_int64 @8"
        );
    }

    #[test]
    fn pod_roundtrip_all_supported_types() {
        fn check<T>(val: T)
        where
            T: tvm_ffi::IntoAny + for<'a> tvm_ffi::FromAny<'a> + PartialEq + Copy + std::fmt::Debug,
        {
            let ty = std::any::type_name::<T>();
            let some = Optional::<T>::some(val);
            assert!(some.is_some(), "engaged has_value for {ty}");
            assert_eq!(some.get(), Some(val), "engaged roundtrip for {ty}");

            let none = Optional::<T>::none();
            assert!(none.is_none(), "disengaged is_none for {ty}");
            assert!(none.get().is_none(), "disengaged roundtrip for {ty}");
        }
        check::<bool>(true);
        check::<i8>(0x12);
        check::<i16>(0x1234);
        check::<i32>(0x1234_5678);
        check::<i64>(0x1122_3344_5566_7788);
        check::<u8>(0xAB);
        check::<u16>(0xABCD);
        check::<u32>(0xABCD_EF01);
        check::<u64>(0xABCD_EF01_2345_6789);
        check::<f32>(1.5);
        check::<f64>(2.5);
    }

    #[test]
    fn roundtrip_get_set() {
        let mut o = Optional::<i32>::some(42);
        assert_eq!(o.get(), Some(42));
        assert!(o.is_some());

        o.set(None);
        assert_eq!(o.get(), None);
        assert!(o.is_none());

        o.set(Some(-7));
        assert_eq!(o.get(), Some(-7));
    }

    #[test]
    fn conversions_and_default() {
        assert_eq!(Optional::<f64>::from(Some(2.5)).get(), Some(2.5));
        assert_eq!(Optional::<f64>::from(None).get(), None);
        let back: Option<i16> = Optional::<i16>::some(9).into();
        assert_eq!(back, Some(9));
        assert_eq!(Optional::<u8>::default().get(), None);
        assert_eq!(Optional::<bool>::some(true).get(), Some(true));
    }

    #[test]
    fn clone_preserves_state_pod() {
        let some = Optional::<i64>::some(123);
        assert_eq!(some.clone().get(), Some(123));
        let none = Optional::<i64>::none();
        assert_eq!(none.clone().get(), None);
    }

    #[test]
    fn equality_pod_and_string() {
        assert_eq!(Optional::<i32>::some(1), Optional::<i32>::some(1));
        assert_ne!(Optional::<i32>::some(1), Optional::<i32>::some(2));
        assert_ne!(Optional::<i32>::some(1), Optional::<i32>::none());
        assert_eq!(Optional::<i32>::none(), Optional::<i32>::none());
        let mut cleared = Optional::<i32>::some(7);
        cleared.set(None);
        assert_eq!(cleared, Optional::<i32>::none());
        assert_eq!(cell_image(&cleared), [0u8; 16]);

        let a = || Optional::<String>::some(String::from("a"));
        assert_eq!(a(), a());
        assert_ne!(a(), Optional::<String>::some(String::from("b")));
        assert_ne!(a(), Optional::<String>::none());
        assert_eq!(Optional::<String>::none(), Optional::<String>::none());
    }

    #[test]
    #[cfg(target_endian = "little")]
    fn string_byte_image_matches_ffi_any() {
        assert_eq!(cell_image(&Optional::<String>::none()), [0u8; 16]);
        let some = Optional::<String>::some(String::from("hi"));
        let b = cell_image(&some);
        assert_eq!(
            &b[0..4],
            &ti::kTVMFFISmallStr.to_le_bytes(),
            "type_index = kTVMFFISmallStr"
        );
        assert_eq!(&b[4..8], &[0x02, 0, 0, 0], "small_str_len = 2");
        assert_eq!(&b[8..10], b"hi", "inline payload");
    }

    #[test]
    fn string_roundtrip_and_as_str() {
        let s = Optional::<String>::some(String::from("hi"));
        assert!(s.is_some());
        assert_eq!(s.as_str(), Some("hi"));
        assert_eq!(s.get().as_deref(), Some("hi"));

        let n = Optional::<String>::none();
        assert!(n.is_none());
        assert_eq!(n.as_str(), None);
        assert_eq!(n.get(), None);

        let from_some: Optional<String> = Some(String::from("x")).into();
        assert_eq!(from_some.as_str(), Some("x"));
        let back: Option<String> = Optional::<String>::none().into();
        assert!(back.is_none());
        assert!(Optional::<String>::default().is_none());
    }

    #[test]
    fn string_heap_clone_no_double_free() {
        let long = String::from("a-very-long-heap-allocated-string-value");
        let a = Optional::<String>::some(long.clone());
        assert_eq!(strong_count(long.as_view()), Some(2));
        let b = a.clone();
        assert_eq!(strong_count(long.as_view()), Some(3));
        assert_eq!(a.as_str(), Some("a-very-long-heap-allocated-string-value"));
        assert_eq!(b.as_str(), Some("a-very-long-heap-allocated-string-value"));
        drop(a);
        drop(b);
        assert_eq!(strong_count(long.as_view()), Some(1));
    }

    #[test]
    fn string_set_in_place() {
        let first = String::from("first-long-heap-allocated-value");
        let mut o = Optional::<String>::some(first.clone());
        assert_eq!(o.as_str(), Some("first-long-heap-allocated-value"));
        assert_eq!(strong_count(first.as_view()), Some(2));

        // `set` releases the old string before storing the new one.
        o.set(Some(String::from("second-long-heap-allocated-value")));
        assert_eq!(o.as_str(), Some("second-long-heap-allocated-value"));
        assert_eq!(strong_count(first.as_view()), Some(1));

        o.set(None);
        assert!(o.is_none());
        assert_eq!(o.as_str(), None);

        o.set(Some(String::from("x")));
        assert_eq!(o.as_str(), Some("x"));
    }
}

/// A CPU `f32` tensor whose first element is `val` (upstream's `create_tensor`, through
/// `CPUNDAlloc`; here `TensorMut::empty`, zero-filled, written, then shared).
fn create_tensor(val: f32, shape: &[i64]) -> Tensor {
    let mut tensor = tvm_ffi::TensorMut::empty(shape, DataType::FLOAT32, Device::cpu()).unwrap();
    if let Some(first) = tensor.as_mut_slice::<f32>().unwrap().first_mut() {
        *first = val;
    }
    tensor.freeze()
}

/// The first `f32` of a tensor.
fn get_val(tensor: &Tensor) -> f32 {
    tensor.as_slice::<f32>().expect("Type mismatch or null")[0]
}

// ---- test_array.rs ----

mod test_array {
    use super::*;

    #[test]
    fn test_array_core_and_iteration() {
        let t1 = create_tensor(10.0, &[1, 2]);
        let t2 = create_tensor(20.0, &[3, 4, 5]);

        let array = Array::new(vec![t1.clone(), t2.clone()]).unwrap();

        assert_eq!(array.len(), 2);
        assert!(!array.is_empty());

        // Upstream indexes (`array[0]`) any array; here `get` (indexing is `Array<Any>`'s).
        assert_eq!(get_val(&array.get(0).unwrap()), 10.0);
        assert_eq!(array.get(0).unwrap().ndim(), 2);
        assert_eq!(array.get(1).unwrap().ndim(), 3);
        assert_eq!(array.get(2), None);

        let vals: Vec<f32> = array.iter().map(|t| get_val(&t)).collect();
        assert_eq!(vals, vec![10.0, 20.0]);
    }

    #[test]
    fn test_array_any_conversions() {
        let array = Array::new(vec![
            create_tensor(1.0, &[1]),
            create_tensor(2.0, &[1]),
            create_tensor(3.0, &[1]),
        ])
        .unwrap();

        let any = Any::new(array);
        assert_eq!(any.type_index(), ti::kTVMFFIArray);

        let back: Array<Tensor> = any.cast().expect("Any -> Array failed");
        assert_eq!(back.len(), 3);
        assert_eq!(get_val(&back.get(2).unwrap()), 3.0);

        let owner = Any::new(&back);
        let view = owner.view();
        let back_from_view: Array<Tensor> = view.cast().expect("AnyView -> Array failed");
        assert_eq!(back_from_view.len(), 3);
        // The same array object, shared.
        assert!(back_from_view.as_object_ref().ptr_eq(back.as_object_ref()));
    }

    #[test]
    fn test_array_with_any_elements() {
        let array = Array::new(vec![
            Any::new(7i64),
            Any::new(String::from("value")),
            Any::new(Array::new(vec![1i64, 2]).unwrap()),
        ])
        .unwrap();

        assert_eq!(array.get(0).unwrap().cast::<i64>().unwrap(), 7);
        assert_eq!(
            array.get(1).unwrap().cast::<String>().unwrap().as_str(),
            "value"
        );
        assert_eq!(
            array
                .get(2)
                .unwrap()
                .cast::<Array<i64>>()
                .unwrap()
                .iter()
                .collect::<Vec<_>>(),
            vec![1, 2]
        );
        // `Array<Any>` also indexes.
        assert_eq!(array[0].cast::<i64>().unwrap(), 7);

        let round_trip = Any::new(array).cast::<Array<Any>>().unwrap();
        assert_eq!(round_trip.len(), 3);

        let array_size = Function::get_global("ffi.ArraySize").unwrap();
        let by_value = array_size
            .call((round_trip.clone(),))
            .unwrap()
            .cast::<i64>()
            .unwrap();
        let by_reference = array_size
            .call((&round_trip,))
            .unwrap()
            .cast::<i64>()
            .unwrap();
        assert_eq!((by_value, by_reference), (3, 3));

        let widened = Any::new(Array::new(vec![3i64, 4]).unwrap())
            .cast::<Array<Any>>()
            .unwrap();
        assert_eq!(
            widened
                .iter()
                .map(|value| value.cast::<i64>().unwrap())
                .collect::<Vec<_>>(),
            vec![3, 4]
        );
    }

    #[test]
    fn test_array_recursive_type_checking() {
        let shape_array = Array::new(vec![Shape::from(vec![1, 2]), Shape::from(vec![3])]).unwrap();
        let any_val = Any::new(shape_array);

        // Every element is checked: a `Shape` is no `Tensor`.
        let err = any_val.cast::<Array<Tensor>>().unwrap_err();
        assert_eq!(err.kind(), "TypeError");
        assert!(
            any_val.checked_cast::<Array<Tensor>>().is_none(),
            "Should not be able to cast Array<Shape> to Array<Tensor>"
        );

        let shape_cast = any_val.cast::<Array<Shape>>();
        assert!(
            shape_cast.is_ok(),
            "Should be able to cast back to correct type"
        );
    }

    #[test]
    fn test_array_parametric_heterogeneity() {
        let shape_array =
            Array::new(vec![Shape::from(vec![1, 2, 3]), Shape::from(vec![10])]).unwrap();
        assert_eq!(shape_array.get(0).unwrap().as_slice(), &[1, 2, 3]);
        assert_eq!(shape_array.get(1).unwrap().as_slice(), &[10]);

        let function_array = Array::new(vec![
            Function::get_global("ffi.String").unwrap(),
            Function::get_global("ffi.Bytes").unwrap(),
        ])
        .unwrap();
        // Upstream's `into_typed_fn!(f, Fn(A) -> Result<R>)(a)` is `f.call_as::<R, _>((a,))`.
        assert_eq!(
            function_array
                .get(0)
                .unwrap()
                .call_as::<String, _>((String::from("hello"),))
                .unwrap(),
            "hello"
        );
        assert_eq!(
            function_array
                .get(1)
                .unwrap()
                .call_as::<Bytes, _>((Bytes::from(&[1u8, 2, 3]),))
                .unwrap(),
            [1u8, 2, 3][..]
        );
    }
}

// ---- test_map.rs ----

mod test_map {
    use super::*;

    // Upstream's `get` returns `Result<Option<V>>`; here `get` is the `Option` and `try_get`
    // the `Result` (an error only when the key cannot be passed to the runtime).

    #[test]
    fn test_map_basic_lookup() {
        let map: Map<i64, i64> = [(1i64, 10i64), (2, 20), (3, 30)].into_iter().collect();

        assert_eq!(map.len(), 3);
        assert!(!map.is_empty());

        assert_eq!(map.get(1i64), Some(10));
        assert_eq!(map.get(2i64), Some(20));
        assert_eq!(map.try_get(3i64).unwrap(), Some(30));
        assert_eq!(map.get(99i64), None);
        assert_eq!(map.try_get(99i64).unwrap(), None);

        assert!(map.contains_key(1i64));
        assert!(!map.contains_key(99i64));
    }

    #[test]
    fn test_map_empty() {
        let map: Map<i64, i64> = Map::default();
        assert_eq!(map.len(), 0);
        assert!(map.is_empty());
        assert_eq!(map.get(1i64), None);
        assert_eq!(map.iter().count(), 0);
        assert_eq!(map.keys().count(), 0);
        assert_eq!(map.values().count(), 0);
    }

    #[test]
    fn test_map_from_iter_duplicate_keys_last_wins() {
        let map: Map<i64, i64> = [(1i64, 10i64), (1, 20), (2, 30)].into_iter().collect();
        assert_eq!(map.len(), 2);
        assert_eq!(map.get(1i64), Some(20));
        assert_eq!(map.get(2i64), Some(30));
    }

    #[test]
    fn test_map_iteration() {
        let map: Map<i64, i64> = [(1i64, 10i64), (2, 20), (3, 30)].into_iter().collect();

        // Insertion order here (upstream sorts first; the order is the runtime's).
        let items: Vec<(i64, i64)> = map.iter().collect();
        assert_eq!(items, vec![(1, 10), (2, 20), (3, 30)]);

        let keys: Vec<i64> = map.keys().collect();
        assert_eq!(keys, vec![1, 2, 3]);

        let values: Vec<i64> = map.values().collect();
        assert_eq!(values, vec![10, 20, 30]);

        let via_ref: Vec<(i64, i64)> = (&map).into_iter().collect();
        assert_eq!(via_ref, vec![(1, 10), (2, 20), (3, 30)]);
    }

    #[test]
    fn test_map_string_keys() {
        let map: Map<String, i64> = [
            (String::from("a"), 1i64),
            (String::from("b"), 2),
            (String::from("c"), 3),
        ]
        .into_iter()
        .collect();

        assert_eq!(map.len(), 3);
        assert_eq!(map.get(String::from("a")), Some(1));
        assert_eq!(map.get(String::from("c")), Some(3));
        assert_eq!(map.get(String::from("z")), None);
        assert!(map.contains_key(String::from("b")));
        // A `&str` key finds the same entries.
        assert_eq!(map.get("b"), Some(2));
    }

    #[test]
    fn test_map_any_roundtrip() {
        let map: Map<i64, i64> = [(1i64, 10i64), (2, 20)].into_iter().collect();

        let any = Any::new(map.clone());
        assert_eq!(any.type_index(), ti::kTVMFFIMap);

        let back: Map<i64, i64> = any.cast().expect("Any -> Map failed");
        assert_eq!(back.len(), 2);
        assert_eq!(back.get(1i64), Some(10));
        assert_eq!(back.get(2i64), Some(20));
    }

    #[test]
    fn test_map_with_any_values() {
        let empty = Map::<String, Any>::default();
        assert!(empty.is_empty());

        let array = Array::new(vec![1i64, 2, 3]).unwrap();
        let array_base_count = strong_count(Any::new(&array).view()).unwrap() - 1;
        assert_eq!(array_base_count, 1);
        let map: Map<String, Any> = [
            (String::from("number"), Any::new(7i64)),
            (String::from("text"), Any::new(String::from("value"))),
            (String::from("array"), Any::new(array.clone())),
        ]
        .into_iter()
        .collect();

        assert_eq!(map.len(), 3);
        assert!(map.contains_key(String::from("number")));
        assert!(!map.contains_key(String::from("missing")));
        // `Debug` lists the entries (upstream: `Map<String, Any>[3]`).
        assert_eq!(format!("{map:?}"), MAP_DEBUG);
        assert_eq!(array.as_object_ref().strong_count(), 2);
        assert_eq!(
            map.get(String::from("number"))
                .unwrap()
                .cast::<i64>()
                .unwrap(),
            7
        );
        assert_eq!(
            map.get(String::from("text"))
                .unwrap()
                .cast::<String>()
                .unwrap()
                .as_str(),
            "value"
        );

        let fetched_array = map
            .get(String::from("array"))
            .unwrap()
            .cast::<Array<i64>>()
            .unwrap();
        assert_eq!(fetched_array.iter().collect::<Vec<_>>(), vec![1, 2, 3]);
        assert_eq!(array.as_object_ref().strong_count(), 3);
        drop(fetched_array);

        let round_trip = Any::new(map.clone()).cast::<Map<String, Any>>().unwrap();
        let owner = Any::new(&map);
        let view_round_trip = owner.view().cast::<Map<String, Any>>().unwrap();
        assert_eq!(round_trip.iter().count(), 3);
        assert_eq!(round_trip.keys().count(), 3);
        assert_eq!(round_trip.values().count(), 3);
        assert_eq!((&round_trip).into_iter().count(), 3);

        let map_size = Function::get_global("ffi.MapSize").unwrap();
        let by_value: i64 = map_size.call_as((round_trip.clone(),)).unwrap();
        let by_reference: i64 = map_size.call_as((&view_round_trip,)).unwrap();
        assert_eq!((by_value, by_reference), (3, 3));

        drop(round_trip);
        drop(view_round_trip);
        drop(owner);
        drop(map);
        assert_eq!(array.as_object_ref().strong_count(), array_base_count);
    }

    const MAP_DEBUG: &str = r#"{"number": 7, "text": "value", "array": (1, 2, 3)}"#;

    #[test]
    fn test_map_with_any_keys_and_values() {
        let integer_key = Any::new(1i64);
        let string_key = Any::new(String::from("name"));
        let map: Map<Any, Any> = [
            (integer_key.clone(), Any::new(String::from("one"))),
            (string_key.clone(), Any::new(2i64)),
        ]
        .into_iter()
        .collect();

        assert_eq!(
            map.get(&integer_key)
                .unwrap()
                .cast::<String>()
                .unwrap()
                .as_str(),
            "one"
        );
        assert_eq!(map.get(&string_key).unwrap().cast::<i64>().unwrap(), 2);

        let round_trip = Any::new(map).cast::<Map<Any, Any>>().unwrap();
        assert_eq!(round_trip.iter().count(), 2);
    }

    #[test]
    fn test_map_shares_underlying_object() {
        let map: Map<i64, i64> = [(1i64, 10i64)].into_iter().collect();
        let clone = map.clone();
        assert!(clone.as_object_ref().ptr_eq(map.as_object_ref()));
        assert_eq!(map.as_object_ref().strong_count(), 2);
        assert_eq!(clone.len(), 1);
        assert_eq!(clone.get(1i64), Some(10));
    }

    #[test]
    fn test_map_object_values_and_refcount() {
        let t = create_tensor(7.0, &[2, 3]);
        let base = t.as_object_ref().strong_count();
        assert_eq!(base, 1);

        let map: Map<String, Tensor> = [(String::from("x"), t.clone())].into_iter().collect();
        assert_eq!(t.as_object_ref().strong_count(), base + 1);

        let got = map.get(String::from("x")).expect("key should be present");
        assert_eq!(get_val(&got), 7.0);
        assert_eq!(got.ndim(), 2);
        assert_eq!(t.as_object_ref().strong_count(), base + 2);

        let collected: Vec<(String, Tensor)> = map.iter().collect();
        assert_eq!(collected.len(), 1);
        assert_eq!(get_val(&collected[0].1), 7.0);
        assert_eq!(t.as_object_ref().strong_count(), base + 3);

        drop(collected);
        drop(got);
        assert_eq!(t.as_object_ref().strong_count(), base + 1);

        drop(map);
        assert_eq!(t.as_object_ref().strong_count(), base);
    }

    #[test]
    fn test_map_as_function_argument() {
        let map: Map<i64, i64> = [(1i64, 10i64), (2, 20), (3, 30)].into_iter().collect();

        let map_size = Function::get_global("ffi.MapSize").unwrap();
        let n_by_value: i64 = map_size.call_as((map.clone(),)).unwrap();
        assert_eq!(n_by_value, 3);
        let n_by_ref: i64 = map_size.call_as((&map,)).unwrap();
        assert_eq!(n_by_ref, 3);

        let get_item = Function::get_global("ffi.MapGetItem").unwrap();
        let v: i64 = get_item.call_as((&map, 2i64)).unwrap();
        assert_eq!(v, 20);
    }

    #[test]
    fn test_map_get_missing_with_object_values() {
        let map: Map<String, Tensor> = [(String::from("x"), create_tensor(7.0, &[2]))]
            .into_iter()
            .collect();

        let present = map.get(String::from("x"));
        assert!(present.is_some());
        assert_eq!(get_val(&present.unwrap()), 7.0);

        assert!(map.get(String::from("missing")).is_none());
        assert!(map.try_get(String::from("missing")).unwrap().is_none());
    }

    /// Views a map as `Map<K, V>` (upstream views it without checking, which needs `unsafe`;
    /// here `Map::from_object_ref` is safe because it checks: it panics naming the first entry
    /// that does not fit).
    fn view_map<K: for<'a> tvm_ffi::FromAny<'a>, V: for<'a> tvm_ffi::FromAny<'a>>(
        any: Any,
    ) -> Map<K, V> {
        assert_eq!(any.type_index(), ti::kTVMFFIMap);
        Map::from_object_ref(any.cast::<ObjectRef<tvm_ffi::builtin::MapObj>>().unwrap())
    }

    fn mistyped_value_map() -> Map<i64, String> {
        let real: Map<i64, i64> = [(1i64, 10i64)].into_iter().collect();
        view_map(Any::new(real))
    }

    /// Upstream: `get` on an unchecked, mistyped view reports the mismatch as `Err`. Here no
    /// mistyped view can be made: the view itself is the `Err` (`try_from_object_ref`, a
    /// `TypeError` naming the entry).
    #[test]
    fn test_map_get_type_mismatch_is_err() {
        let real: Map<i64, i64> = [(1i64, 10i64)].into_iter().collect();
        let err = Map::<i64, String>::try_from_object_ref(real.into_object_ref()).unwrap_err();
        assert_eq!(err.kind(), "TypeError");
        assert_eq!(
            err.message(),
            "Map::try_from_object_ref: the value of key 1 is a `int`, not a `str`"
        );
    }

    /// Upstream: iterating the mistyped view panics ("value does not match"). Here making the
    /// view panics, naming the value.
    #[test]
    #[should_panic(expected = "Map::from_object_ref: the value of key 1 is a `int`, not a `str`")]
    fn test_map_iter_type_mismatch_panics() {
        let map = mistyped_value_map();
        let _ = map.values().next();
    }

    /// Upstream debug-asserts a lookup with a key of another type than the view's stored keys.
    /// Here the view of `int` keys as `Map<String, _>` panics when made (in every build),
    /// naming the key.
    #[test]
    #[should_panic(expected = "Map::from_object_ref: key 1 is a `int`, not a `str`")]
    fn test_map_get_mistyped_key_debug_asserts() {
        let real: Map<i64, i64> = [(1i64, 10i64)].into_iter().collect();
        let map: Map<String, i64> = view_map(Any::new(real));
        let _ = map.get(String::from("anything"));
    }

    #[test]
    fn test_map_any_cast_value_mismatch_is_err() {
        let real: Map<i64, i64> = [(1i64, 10i64)].into_iter().collect();
        let err = Any::new(real).cast::<Map<i64, String>>().unwrap_err();
        assert_eq!(err.kind(), "TypeError");
    }

    /// As upstream (and C++): entries that are not of the requested types but convert (`int`
    /// keys to `float`) are copied into a new map of converted entries, which finds its keys.
    #[test]
    fn test_map_any_cast_slow_path_converts() {
        let real: Map<i64, i64> = [(1i64, 10i64), (2, 20)].into_iter().collect();
        let converted: Map<f64, f64> = Any::new(real.clone())
            .cast()
            .expect("i64 entries cast to f64");
        assert_eq!(converted.len(), 2);
        assert_eq!(converted.get(1.0f64), Some(10.0));
        assert_eq!(converted.get(2.0f64), Some(20.0));
        // Each map owns its own object: nothing is shared between them.
        assert_eq!(real.as_object_ref().strong_count(), 1);
        assert_eq!(converted.as_object_ref().strong_count(), 1);
    }
}

// ---- test_function.rs ----

/// Upstream's `tvm_ffi_dll_export_typed_func!` exports, here `#[ffi_func(export = ..)]` (at
/// the crate root: the C symbols are the crate's).
mod exports {
    use tvm_ffi::{ffi_func, Result, Tensor};

    #[ffi_func(export = "upstream_values_testing_add_one")]
    pub fn testing_add_one(x: i32) -> Result<i32> {
        Ok(x + 1)
    }

    /// Writes `x + 1` into `y`: a tensor is shared, so the caller sees it (upstream writes
    /// through `data_as_slice_mut` of a `Tensor`; here through `as_mut_slice`, `unsafe`
    /// because others may read the memory meanwhile).
    #[ffi_func(export = "upstream_values_test_add_one_tensor")]
    pub fn test_add_one_tensor(x: Tensor, y: Tensor) -> Result<()> {
        let x_data = x.as_slice::<f32>()?;
        // SAFETY: the test holds no other borrow of `y`'s memory during the call, and `x` is
        // another tensor's memory.
        let y_data = unsafe { y.as_mut_slice::<f32>()? };
        for (y, x) in y_data.iter_mut().zip(x_data) {
            *y = x + 1.0;
        }
        Ok(())
    }

    /// Functions report errors by returning them; this one panics to show that a panic is
    /// still an error for the caller, not an abort.
    #[ffi_func(export = "upstream_values_testing_panic")]
    pub fn testing_panic(x: i32) -> Result<i32> {
        if x < 0 {
            panic!("negative input {x}");
        }
        Ok(x)
    }

    type SafeCall = unsafe extern "C" fn(
        *mut std::ffi::c_void,
        *const tvm_ffi::sys::TVMFFIAny,
        i32,
        *mut tvm_ffi::sys::TVMFFIAny,
    ) -> i32;

    extern "C" {
        pub fn __tvm_ffi_upstream_values_testing_add_one(
            handle: *mut std::ffi::c_void,
            args: *const tvm_ffi::sys::TVMFFIAny,
            num_args: i32,
            result: *mut tvm_ffi::sys::TVMFFIAny,
        ) -> i32;
        pub fn __tvm_ffi_upstream_values_test_add_one_tensor(
            handle: *mut std::ffi::c_void,
            args: *const tvm_ffi::sys::TVMFFIAny,
            num_args: i32,
            result: *mut tvm_ffi::sys::TVMFFIAny,
        ) -> i32;
        pub fn __tvm_ffi_upstream_values_testing_panic(
            handle: *mut std::ffi::c_void,
            args: *const tvm_ffi::sys::TVMFFIAny,
            num_args: i32,
            result: *mut tvm_ffi::sys::TVMFFIAny,
        ) -> i32;
    }

    /// An export as a function object (upstream: `Function::from_extern_c`).
    pub fn as_function(export: SafeCall) -> tvm_ffi::Function {
        // SAFETY: `#[ffi_func]` exports keep the safe-call contract and use no handle.
        unsafe { tvm_ffi::Function::from_extern_c(std::ptr::null_mut(), export, None) }.unwrap()
    }
}

mod test_function {
    use super::*;

    #[test]
    fn test_function_dummpy_c_api() {
        // SAFETY: `int TVMFFITestingDummyTarget(void)` of libtvm_ffi_testing.
        let dummy: extern "C" fn() -> i32 =
            unsafe { std::mem::transmute(testing_symbol("TVMFFITestingDummyTarget")) };
        assert_eq!(dummy(), 0);
    }

    #[test]
    fn test_function_get_global_required() {
        let fecho = Function::get_global_required("testing.echo")
            .or_else(|_| Ok::<_, Error>(echo()))
            .unwrap();
        let a = Any::new(1);
        let result = fecho.call_packed(&[a.view()]).unwrap();
        assert_eq!(result.cast::<i32>().unwrap(), 1);
        let err = Function::get_global_required("testing.no_such_function").unwrap_err();
        assert_eq!(err.kind(), "ValueError");
        assert_eq!(err.message(), "Function testing.no_such_function not found");
    }

    #[test]
    fn test_function_from_packed() {
        let value = 2;
        let v2 = 4;
        let check_and_add_value = Function::from_packed(move |args: &[AnyView]| -> Result<Any> {
            tvm_ffi::ensure!(
                args.len() == 1,
                ValueError,
                "Expected 1 argument, got {}",
                args.len()
            );
            let v0 = args[0].cast::<i32>()?;
            tvm_ffi::ensure!(v0 == value, ValueError, "Expected {}, got {}", value, v0);
            Ok(Any::new(v0 + v2))
        });
        let arg = Any::new(value);
        let result = check_and_add_value.call_packed(&[arg.view()]).unwrap();
        assert_eq!(result.cast::<i32>().unwrap(), 6);
        let err = check_and_add_value.call((3,)).unwrap_err();
        assert_eq!(
            (err.kind().as_str(), err.message()),
            ("ValueError", "Expected 2, got 3")
        );
    }

    #[test]
    fn test_function_from_typed() {
        let offset = 2;
        let one = Any::new(1);
        let two = Any::new(2);
        let three = Any::new(3);
        let sum1 = Function::from_typed(move |x: i32| -> Result<i32> { Ok(x + offset) });
        let result = sum1.call_packed(&[one.view()]).unwrap();
        assert_eq!(result.cast::<i32>().unwrap(), 1 + offset);
        let sum2 = Function::from_typed(move |x: i32, y: i32| -> Result<i32> { Ok(x + y) });
        let result = sum2.call_packed(&[one.view(), two.view()]).unwrap();
        assert_eq!(result.cast::<i32>().unwrap(), 3);
        let sum3f = Function::from_typed(move |x: i32, y: i32, z: f32| -> Result<f32> {
            Ok((x + y) as f32 + z)
        });
        let result = sum3f
            .call_packed(&[one.view(), two.view(), three.view()])
            .unwrap();
        assert_eq!(result.cast::<f32>().unwrap(), 6.0);
    }

    #[test]
    fn test_function_call_tuple() {
        // Upstream's `call_tuple(args)` is `call(args)`; `call_tuple_with_len` has no
        // counterpart (the tuple's length is its type).
        let offset = 2;
        let sum1 = Function::from_typed(move |x: i32| -> Result<i32> { Ok(x + offset) });
        let result = sum1.call((1,)).unwrap();
        assert_eq!(result.cast::<i32>().unwrap(), 1 + offset);
        // By reference: a borrowed value.
        let one = Any::new(1);
        let result = sum1.call((&one,)).unwrap();
        assert_eq!(result.cast::<i32>().unwrap(), 1 + offset);
        let typed_fn = |x: &i32| -> Result<i32> { sum1.call_as((*x,)) };
        assert_eq!(typed_fn(&1).unwrap(), 1 + offset);
    }

    #[test]
    fn test_function_call_tuple_supports_all_value_holders() {
        let echo = echo();

        let any = Any::new(3i64);
        assert_eq!(echo.call((&any,)).unwrap().cast::<i64>().unwrap(), 3);

        assert_eq!(echo.call(((),)).unwrap().type_index(), ti::kTVMFFINone);

        let optional = Some(4i64);
        assert_eq!(
            echo.call((optional,))
                .unwrap()
                .cast::<Option<i64>>()
                .unwrap(),
            optional
        );

        let dtype: DataType = "int32".parse().unwrap();
        assert_eq!(
            echo.call((dtype,)).unwrap().cast::<DataType>().unwrap(),
            dtype
        );
        assert_eq!(
            echo.call((&dtype,)).unwrap().cast::<DataType>().unwrap(),
            dtype
        );

        let device = Device::new(tvm_ffi::sys::kDLCPU, 1);
        assert_eq!(
            echo.call((device,)).unwrap().cast::<Device>().unwrap(),
            device
        );
        assert_eq!(
            echo.call((&device,)).unwrap().cast::<Device>().unwrap(),
            device
        );
    }

    /// An argument passed as an rvalue reference (`Moved`, C++ `RValueRef`) moves the caller's reference
    /// into the callee, which declares the parameter `Moved<T>`; a lent one is shared.
    #[test]
    fn test_function_rvalue_ref_arguments() {
        let strong_count = Function::from_typed(|value: Moved<Array<i64>>| -> Result<i64> {
            let value = value.into_inner();
            Ok(i64::from(value.as_object_ref().strong_count()))
        });

        let moved = Array::new(vec![1i64, 2]).unwrap();
        assert_eq!(moved.as_object_ref().strong_count(), 1);
        let count = strong_count
            .call_as::<i64, _>((Moved::new(moved),))
            .unwrap();
        assert_eq!(count, 1);

        let borrowed = Array::new(vec![3i64, 4]).unwrap();
        assert_eq!(borrowed.as_object_ref().strong_count(), 1);
        let count = strong_count.call_as::<i64, _>((&borrowed,)).unwrap();
        assert_eq!(count, 2);
        assert_eq!(borrowed.as_object_ref().strong_count(), 1);
    }

    #[test]
    #[allow(clippy::type_complexity)]
    fn test_function_into_typed_fn() {
        // Upstream's `into_typed_fn!(f, Fn(A, B) -> Result<R>)` is a closure over `call_as`.
        let offset = 2;
        let f = Function::from_typed(move |x: i32| -> Result<i32> { Ok(x + offset) });
        let typed_sum1 = move |x: &i32| f.call_as::<i32, _>((*x,));
        assert_eq!(typed_sum1(&1).unwrap(), 1 + offset);
        let sum2 = Function::from_typed(move |x: i32, y: i32| -> Result<i32> { Ok(x + y) });
        let typed_sum2: Box<dyn Fn(&i32, i32) -> Result<i32>> =
            Box::new(move |x, y| sum2.call_as((*x, y)));
        assert_eq!(typed_sum2(&1, 2).unwrap(), 3);
        let sum3 = Function::from_typed(move |x: i32, y: i32, z: f32| -> Result<f32> {
            Ok((x + y) as f32 + z)
        });
        let typed_sum3: Box<dyn Fn(&i32, i32, f32) -> Result<f32>> =
            Box::new(move |x, y, z| sum3.call_as((*x, y, z)));
        assert_eq!(typed_sum3(&1, 2, 3.0).unwrap(), 6.0);
    }

    #[test]
    fn test_function_echo_tensor_typed() {
        let echo = echo();
        let data: &[f32] = &[1.0, 2.0, 3.0, 4.0];
        let tensor = Tensor::from_slice(data, &[1, 2, 2]).unwrap();
        let result: Tensor = echo.call_as((&tensor,)).unwrap();
        assert_eq!(result.data_ptr(), tensor.data_ptr());
        assert!(result.as_object_ref().ptr_eq(tensor.as_object_ref()));
        assert_eq!(result.as_object_ref().strong_count(), 2);
        assert_eq!(result.as_slice::<f32>().unwrap(), &[1.0, 2.0, 3.0, 4.0]);
    }

    // Upstream's `Function::from_type_key_method`/`from_type_method` are
    // `reflection::method_of_type`/`reflection::method` here.

    #[test]
    fn test_function_from_type_key_method_ctor_and_method() {
        tvm_ffi_tests::load_cpp_testing_library();
        let ctor =
            tvm_ffi::reflection::method_of_type("testing.TestIntPair", "__ffi_init__").unwrap();
        let pair = ctor.call((1i64, 2i64)).unwrap();
        assert_eq!(pair.type_key(), "testing.TestIntPair");
        let sum = tvm_ffi::reflection::method_of_type("testing.TestIntPair", "sum").unwrap();
        let result = sum.call_packed(&[pair.view()]).unwrap();
        assert_eq!(result.cast::<i64>().unwrap(), 3);
    }

    #[test]
    fn test_function_from_type_method_by_index() {
        tvm_ffi_tests::load_cpp_testing_library();
        let ctor =
            tvm_ffi::reflection::method_of_type("testing.TestIntPair", "__ffi_init__").unwrap();
        let pair = ctor.call((5i64, 7i64)).unwrap();
        let sum = tvm_ffi::reflection::method(pair.type_index(), "sum").unwrap();
        let result = sum.call_packed(&[pair.view()]).unwrap();
        assert_eq!(result.cast::<i64>().unwrap(), 12);
    }

    /// A missing method is an `AttributeError` here (upstream: `TypeError`), as for a missing
    /// field or method of an object.
    #[test]
    fn test_function_from_type_method_unknown_method() {
        tvm_ffi_tests::load_cpp_testing_library();
        let error =
            tvm_ffi::reflection::method_of_type("testing.TestIntPair", "nonexistent_method")
                .unwrap_err();
        assert_eq!(error.kind(), "AttributeError");
        assert_eq!(
            error.message(),
            "Cannot find method `nonexistent_method` in testing.TestIntPair"
        );
    }

    #[test]
    fn test_function_from_type_key_method_unknown_type_key() {
        let error =
            tvm_ffi::reflection::method_of_type("testing.NonExistentType", "sum").unwrap_err();
        assert_eq!(error.kind(), "KeyError");
        assert_eq!(
            error.message(),
            "Cannot find type `testing.NonExistentType`"
        );
    }

    #[test]
    fn test_function_from_extern_c() {
        let add_one = exports::as_function(exports::__tvm_ffi_upstream_values_testing_add_one);
        assert_eq!(add_one.call_as::<i32, _>((1,)).unwrap(), 2);
    }

    #[test]
    fn test_function_echo_string_bytes() {
        let echo = echo();
        let result: String = echo.call_as(("hello",)).unwrap();
        assert_eq!(result, "hello");
        let result: Bytes = echo.call_as((Bytes::from(b"hello"),)).unwrap();
        assert_eq!(result, b"hello"[..]);
        // `&[u8]` reads back borrowed too.
        let any = echo.call((Bytes::from(b"hello"),)).unwrap();
        assert_eq!(any.cast::<&[u8]>().unwrap(), b"hello");
    }

    #[test]
    fn test_function_apply() {
        let add_one = Function::from_typed(|x: i32| -> Result<i32> { Ok(x + 1) });
        let fapply = testing_global("testing.apply");
        let result: i32 = fapply.call_as((add_one, 3)).unwrap();
        assert_eq!(result, 4);
    }

    #[test]
    fn test_function_call_tensor_fn() {
        let add_one = exports::as_function(exports::__tvm_ffi_upstream_values_test_add_one_tensor);
        let x = Tensor::from_slice(&[0.0f32, 1.0, 2.0, 3.0], &[2, 2]).unwrap();
        let y = Tensor::from_slice(&[0.0f32; 4], &[2, 2]).unwrap();
        add_one.call((&x, &y)).unwrap();
        assert_eq!(y.as_slice::<f32>().unwrap(), &[1.0, 2.0, 3.0, 4.0]);
    }

    /// A panic is a `RuntimeError` naming the function and the panic site here (upstream:
    /// `InternalError`); nothing is printed.
    #[test]
    fn test_function_exported_panic_raises_internal_error() {
        let f = exports::as_function(exports::__tvm_ffi_upstream_values_testing_panic);
        assert_eq!(f.call_as::<i32, _>((1,)).unwrap(), 1);
        let error = f.call_as::<i32, _>((-1,)).unwrap_err();
        assert_eq!(error.kind(), "RuntimeError");
        assert!(
            error
                .message()
                .starts_with("Rust panic in `upstream_values_testing_panic` at "),
            "{}",
            error.message()
        );
        assert!(
            error.message().ends_with("negative input -1"),
            "{}",
            error.message()
        );
        assert_eq!(f.call_as::<i32, _>((2,)).unwrap(), 2);
    }

    #[test]
    fn test_function_callback_panic_raises_internal_error() {
        let f = Function::from_typed(|x: i32| -> Result<i32> {
            if x < 0 {
                panic!("callback got {x}");
            }
            Ok(x)
        });
        let error = f.call_as::<i32, _>((-2,)).unwrap_err();
        assert_eq!(error.kind(), "RuntimeError");
        // An unnamed closure: the message names the panic site only.
        assert!(
            error
                .message()
                .starts_with("Rust panic at tests/tests/upstream_values.rs:"),
            "{}",
            error.message()
        );
        assert!(
            error.message().ends_with("callback got -2"),
            "{}",
            error.message()
        );
        // The function stays usable after a panic.
        assert_eq!(f.call_as::<i32, _>((3,)).unwrap(), 3);
    }
}

// ---- test_module.rs ----

mod test_module {
    use super::*;

    const SCHEMA_ID_INT: &str = "testing_dll_schema_id_int";
    const ADD_WITH_DOCSTRING: &str = "testing_dll_test_add_with_docstring";
    const MISSING: &str = "testing_dll_missing";

    /// libtvm_ffi_testing as a module.
    fn testing_module() -> Module {
        tvm_ffi_tests::load_cpp_testing_library();
        // SAFETY: the wheel's own test library, already loaded by the process.
        unsafe { Module::load_from_file(tvm_ffi_tests::cpp_testing_library_path()) }.unwrap()
    }

    /// A module without functions of its own that imports libtvm_ffi_testing.
    fn importing_module() -> Module {
        let module: Module = Function::get_global("ffi.SystemLib")
            .unwrap()
            .call_as(("testing.rust.upstream_values.test_module.",))
            .unwrap();
        module.import(&testing_module()).unwrap();
        module
    }

    /// Calls an exported metadata or doc getter.
    fn call_getter(symbol: &str) -> String {
        testing_export(symbol).call_as(()).unwrap()
    }

    // Upstream's `(name, query_imports)` flag: `true` is `implements_function`,
    // `function_metadata`, `function_doc`; `false` the `own_` forms.

    #[test]
    fn test_module_implements_function() {
        let module = testing_module();
        assert!(module.implements_own_function(SCHEMA_ID_INT).unwrap());
        assert!(!module.implements_own_function(MISSING).unwrap());
        assert!(module.implements_function(SCHEMA_ID_INT).unwrap());
    }

    #[test]
    fn test_module_get_function_metadata() {
        let module = testing_module();
        let metadata = module
            .own_function_metadata(SCHEMA_ID_INT)
            .unwrap()
            .unwrap();
        let exported = call_getter("__tvm_ffi__metadata_testing_dll_schema_id_int");
        assert_eq!(metadata.as_str(), exported.as_str());
        assert!(metadata.contains("type_schema"), "{metadata}");
        assert!(module.own_function_metadata(MISSING).unwrap().is_none());
    }

    #[test]
    fn test_module_get_function_doc() {
        let module = testing_module();
        let doc = module
            .own_function_doc(ADD_WITH_DOCSTRING)
            .unwrap()
            .unwrap();
        let exported = call_getter("__tvm_ffi__doc_testing_dll_test_add_with_docstring");
        assert_eq!(doc.as_str(), exported.as_str());
        assert!(!doc.is_empty());
        assert!(module.own_function_doc(SCHEMA_ID_INT).unwrap().is_none());
    }

    #[test]
    fn test_module_accessors_query_imports() {
        let module = importing_module();
        assert!(!module.implements_own_function(SCHEMA_ID_INT).unwrap());
        assert!(module.implements_function(SCHEMA_ID_INT).unwrap());
        assert!(module
            .own_function_metadata(SCHEMA_ID_INT)
            .unwrap()
            .is_none());
        assert!(module.function_metadata(SCHEMA_ID_INT).unwrap().is_some());
        assert!(module
            .own_function_doc(ADD_WITH_DOCSTRING)
            .unwrap()
            .is_none());
        assert!(module.function_doc(ADD_WITH_DOCSTRING).unwrap().is_some());
    }
}

// ---- test_tensor.rs ----

mod test_tensor {
    use super::*;
    use tvm_ffi::sys::{kDLCPU, kDLFloat};
    use tvm_ffi::TensorMut;

    // Upstream's `Tensor::from_nd_alloc(CPUNDAlloc {}, ..)` is `Tensor::empty` here (the Rust
    // heap, zero-filled, unless an environment allocator is set).

    #[test]
    fn test_tensor_basic() {
        let shape = [2, 3, 4];
        let tensor = Tensor::empty(&shape, DataType::new(kDLFloat, 32, 1), Device::cpu()).unwrap();

        assert_eq!(tensor.shape(), &shape);
        assert_eq!(tensor.ndim(), 3);
        assert_eq!(tensor.dtype().code(), kDLFloat);
        assert_eq!(tensor.dtype().bits(), 32);
        assert_eq!(tensor.device().device_type(), kDLCPU);

        let strides = tensor.strides();
        assert_eq!(strides.len(), 3);
        assert_eq!(strides[0], 12);
        assert_eq!(strides[1], 4);
        assert_eq!(strides[2], 1);
    }

    /// Upstream writes through a shared `Tensor` (`data_as_slice_mut`); here the safe way to
    /// write is a `TensorMut` (the only reference), shared afterwards.
    #[test]
    fn test_tensor_data_as_slice_f32() {
        let shape = [2, 3, 4];
        let mut tensor = TensorMut::empty(&shape, DataType::FLOAT32, Device::cpu()).unwrap();

        assert_eq!(tensor.as_slice::<f32>().unwrap().len(), 24);

        let data_slice_mut = tensor.as_mut_slice::<f32>().unwrap();
        assert_eq!(data_slice_mut.len(), 24);
        for (i, value) in data_slice_mut.iter_mut().enumerate() {
            *value = i as f32;
        }

        let tensor = tensor.freeze();
        let data_slice_read = tensor.as_slice::<f32>().unwrap();
        for (i, value) in data_slice_read.iter().enumerate() {
            assert_eq!(*value, i as f32);
        }
    }

    #[test]
    fn test_tensor_data_as_slice_type_mismatch() {
        let tensor = Tensor::empty(&[2, 3], DataType::FLOAT32, Device::cpu()).unwrap();

        let err = tensor.as_slice::<f64>().unwrap_err();
        assert_eq!(err.kind(), "TypeError");
        assert!(err.message().contains("float32"), "{}", err.message());
        assert!(err.message().contains("float64"), "{}", err.message());

        let err = tensor.as_slice::<i32>().unwrap_err();
        assert_eq!(err.kind(), "TypeError");
        assert!(err.message().contains("int32"), "{}", err.message());
    }

    #[test]
    fn test_any_tensor() {
        let shape = [2, 3, 4];
        let tensor = Tensor::empty(&shape, DataType::FLOAT32, Device::cpu()).unwrap();
        let any = Any::new(tensor.clone());
        let owner = Any::new(&tensor);
        let any_view = owner.view();

        assert_eq!(any.type_index(), ti::kTVMFFITensor);
        let converted = any.cast::<Tensor>().unwrap();
        assert_eq!(converted.shape(), &shape);
        assert_eq!(converted.dtype().code(), kDLFloat);

        assert_eq!(any_view.type_index(), ti::kTVMFFITensor);
        let converted_view = any_view.cast::<Tensor>().unwrap();
        assert_eq!(converted_view.shape(), &shape);
        assert_eq!(converted_view.dtype().code(), kDLFloat);
    }

    mod env_alloc {
        use super::*;
        use std::ffi::{c_char, c_void};
        use tvm_ffi::env;
        use tvm_ffi::sys::{DLManagedTensorVersioned, DLTensor};

        /// The memory of a tensor made by `cpu_allocator`.
        struct Owned {
            shape: Vec<i64>,
            data: Vec<u8>,
        }

        unsafe extern "C" fn delete(tensor: *mut DLManagedTensorVersioned) {
            // SAFETY: made by `cpu_allocator` below, deleted once.
            let tensor = unsafe { Box::from_raw(tensor) };
            // SAFETY: as above.
            drop(unsafe { Box::from_raw(tensor.manager_ctx as *mut Owned) });
        }

        unsafe extern "C" fn cpu_allocator(
            prototype: *mut DLTensor,
            out: *mut *mut DLManagedTensorVersioned,
            _error_ctx: *mut c_void,
            _set_error: Option<unsafe extern "C" fn(*mut c_void, *const c_char, *const c_char)>,
        ) -> i32 {
            // SAFETY: the runtime passes a valid prototype with `ndim` shape entries.
            let prototype = unsafe { &*prototype };
            // SAFETY: as above.
            let shape =
                unsafe { std::slice::from_raw_parts(prototype.shape, prototype.ndim as usize) }
                    .to_vec();
            let bytes =
                shape.iter().product::<i64>() as usize * (prototype.dtype.bits as usize / 8);
            let mut owned = Box::new(Owned {
                shape,
                data: vec![0; bytes],
            });
            let dl_tensor = DLTensor {
                data: owned.data.as_mut_ptr() as *mut c_void,
                device: prototype.device,
                ndim: prototype.ndim,
                dtype: prototype.dtype,
                shape: owned.shape.as_mut_ptr(),
                strides: std::ptr::null_mut(),
                byte_offset: 0,
            };
            let tensor = Box::new(DLManagedTensorVersioned {
                version: tvm_ffi::sys::DLPackVersion { major: 1, minor: 1 },
                manager_ctx: Box::into_raw(owned) as *mut c_void,
                deleter: Some(delete),
                flags: 0,
                dl_tensor,
            });
            // SAFETY: the runtime's output slot.
            unsafe { *out = Box::into_raw(tensor) };
            0
        }

        unsafe extern "C" fn failing_allocator(
            _prototype: *mut DLTensor,
            _out: *mut *mut DLManagedTensorVersioned,
            error_ctx: *mut c_void,
            set_error: Option<unsafe extern "C" fn(*mut c_void, *const c_char, *const c_char)>,
        ) -> i32 {
            // SAFETY: the runtime's error callback with its own context.
            unsafe {
                set_error.unwrap()(
                    error_ctx,
                    c"MemoryError".as_ptr(),
                    c"out of test memory".as_ptr(),
                )
            };
            -1
        }

        fn f32_on_cpu() -> (DataType, Device) {
            (DataType::new(kDLFloat, 32, 1), Device::new(kDLCPU, 0))
        }

        // Upstream's `Tensor::from_env_alloc` is `Tensor::empty` with an allocator set.

        #[test]
        fn allocates_with_the_environment_allocator() {
            let (dtype, device) = f32_on_cpu();
            let tensor = {
                // SAFETY: `cpu_allocator` keeps the DLPack allocator contract.
                let _guard = unsafe { env::use_dlpack_allocator(Some(cpu_allocator)) }.unwrap();
                Tensor::empty(&[1, 2, 3], dtype, device).unwrap()
            };
            assert_eq!(tensor.shape(), &[1, 2, 3]);
            assert_eq!(&*tensor.strides(), &[6, 3, 1]);
            assert_eq!(tensor.dtype(), dtype);
            assert_eq!(tensor.device(), device);
            assert!(!tensor.data_ptr().is_null());
            assert_eq!(tensor.as_slice::<f32>().unwrap(), &[0.0; 6]);
        }

        #[test]
        fn raises_the_allocator_error() {
            let (dtype, device) = f32_on_cpu();
            // SAFETY: `failing_allocator` keeps the contract: -1 after setting an error.
            let guard = unsafe { env::use_dlpack_allocator(Some(failing_allocator)) }.unwrap();
            let error = Tensor::empty(&[4], dtype, device).unwrap_err();
            drop(guard);
            assert_eq!(error.kind().as_str(), "MemoryError");
            assert_eq!(error.message(), "out of test memory");
        }

        /// Without an allocator, upstream's `from_env_alloc` fails with a `RuntimeError`; here
        /// `Tensor::empty` falls back to the Rust heap for CPU memory, and refuses other
        /// devices.
        #[test]
        fn fails_without_an_allocator() {
            let (dtype, device) = f32_on_cpu();
            // SAFETY: no allocator is always within the contract.
            let _guard = unsafe { env::use_dlpack_allocator(None) }.unwrap();
            let tensor = Tensor::empty(&[4], dtype, device).unwrap();
            assert_eq!(tensor.as_slice::<f32>().unwrap(), &[0.0; 4]);
            let error = Tensor::empty(&[4], dtype, Device::cuda(0)).unwrap_err();
            assert!(
                error.message().contains("only allocate CPU memory"),
                "{}",
                error.message()
            );
        }
    }
}

// ---- test_tensor_view.rs ----

mod test_tensor_view {
    use super::*;
    use tvm_ffi::sys::{DLDataType, DLDevice, DLTensor};
    use tvm_ffi::IntoArg;

    /// A 2x3 f32 DLTensor over `data`, with the given strides, as a C caller would build it.
    fn dltensor(data: &mut [f32; 6], shape: &mut [i64; 2], strides: *mut i64) -> DLTensor {
        DLTensor {
            data: data.as_mut_ptr() as *mut std::ffi::c_void,
            device: DLDevice {
                device_type: tvm_ffi::sys::kDLCPU,
                device_id: 0,
            },
            ndim: 2,
            dtype: DLDataType {
                code: tvm_ffi::sys::kDLFloat,
                bits: 32,
                lanes: 1,
            },
            shape: shape.as_mut_ptr(),
            strides,
            byte_offset: 0,
        }
    }

    /// `(ndim, shape[1], strides[0], first element)` of the argument (a typed closure takes
    /// owned arguments only: a borrowed `TensorView` parameter is an `#[ffi_func]`'s).
    #[tvm_ffi::ffi_func(name = "testing.rust.upstream_values.describe")]
    fn describe_view(t: TensorView) -> Result<Array<i64>> {
        let first = t.as_slice::<f32>()?[0] as i64;
        Array::new(vec![t.ndim() as i64, t.shape()[1], t.strides()[0], first])
    }

    fn describe() -> Function {
        Function::get_global("testing.rust.upstream_values.describe").unwrap()
    }

    fn call(f: &Function, arg: AnyView) -> Result<Vec<i64>> {
        let out = f.call_packed(&[arg])?.cast::<Array<i64>>()?;
        Ok(out.to_vec())
    }

    /// The argument a `TensorView` is passed as (upstream's `AnyView::from(&view)`).
    fn as_arg<R>(view: TensorView<'_>, body: impl FnOnce(AnyView<'_>) -> R) -> R {
        let holder = view.into_holder().unwrap();
        body(TensorView::view(&holder))
    }

    #[test]
    fn test_tensor_view_from_dltensor_ptr() {
        let (mut data, mut shape, mut strides) = ([7.0f32, 1., 2., 3., 4., 5.], [2, 3], [3i64, 1]);
        let raw = dltensor(&mut data, &mut shape, strides.as_mut_ptr());
        // SAFETY: `raw` describes `data`, `shape` and `strides`, alive and unchanged here.
        let view = unsafe { TensorView::from_dltensor(&raw) };
        as_arg(view, |arg| {
            assert_eq!(arg.type_index(), ti::kTVMFFIDLTensorPtr);
            assert_eq!(call(&describe(), arg).unwrap(), vec![2, 3, 3, 7]);
        });
    }

    #[test]
    fn test_tensor_view_from_tensor_object() {
        let tensor = Tensor::from_slice(&[9.0f32, 1., 2., 3., 4., 5.], &[2, 3]).unwrap();
        let owner = Any::new(&tensor);
        let arg = owner.view();
        assert_eq!(arg.type_index(), ti::kTVMFFITensor);
        assert_eq!(call(&describe(), arg).unwrap(), vec![2, 3, 3, 9]);
        let view = tensor.view();
        assert_eq!(view.shape(), tensor.shape());
        assert_eq!(view.strides(), tensor.strides());
        assert_eq!(view.data_ptr(), tensor.data_ptr());
        // A view of a tensor object is passed as the object.
        as_arg(view, |arg| assert_eq!(arg.type_index(), ti::kTVMFFITensor));
    }

    #[test]
    fn test_tensor_view_rejects_other_types() {
        let one = Any::new(1i32);
        let err = call(&describe(), one.view()).unwrap_err();
        assert_eq!(err.kind(), "TypeError");
        assert!(err.message().contains("DLTensor*"), "{}", err.message());
    }

    #[test]
    fn test_tensor_view_contiguity() {
        let (mut data, mut shape) = ([0f32; 6], [2i64, 3]);
        let mut compact_strides = [3i64, 1];
        let compact = dltensor(&mut data, &mut shape, compact_strides.as_mut_ptr());
        // SAFETY (each view below): the DLTensor describes live local arrays.
        let view = unsafe { TensorView::from_dltensor(&compact) };
        assert!(view.is_contiguous());
        assert_eq!(view.numel(), 6);
        let mut padded_strides = [4i64, 1];
        let padded = dltensor(&mut data, &mut shape, padded_strides.as_mut_ptr());
        assert!(!unsafe { TensorView::from_dltensor(&padded) }.is_contiguous());
        // As in C++ `IsContiguous`: null strides and empty tensors are contiguous, and a
        // dimension of extent 1 may have any stride.
        let unstrided = dltensor(&mut data, &mut shape, std::ptr::null_mut());
        assert!(unsafe { TensorView::from_dltensor(&unstrided) }.is_contiguous());
        let mut row_shape = [1i64, 3];
        let mut row_strides = [7i64, 1];
        let row = dltensor(&mut data, &mut row_shape, row_strides.as_mut_ptr());
        assert!(unsafe { TensorView::from_dltensor(&row) }.is_contiguous());
        let mut empty_shape = [0i64, 3];
        let empty = dltensor(&mut data, &mut empty_shape, padded_strides.as_mut_ptr());
        assert!(unsafe { TensorView::from_dltensor(&empty) }.is_contiguous());
    }

    /// Upstream panics on `strides()` of a DLTensor without strides; here null strides are
    /// the compact row-major ones, as DLPack defines them.
    #[test]
    fn test_tensor_view_null_strides() {
        let (mut data, mut shape) = ([0f32; 6], [2i64, 3]);
        let compact = dltensor(&mut data, &mut shape, std::ptr::null_mut());
        // SAFETY: the DLTensor describes live local arrays.
        let view = unsafe { TensorView::from_dltensor(&compact) };
        assert_eq!(&*view.strides(), &[3, 1]);
    }

    /// Upstream panics at run time on `Any::from(TensorView)`; here a view has no `IntoAny`
    /// (it does not own its tensor: a compile error), and becomes an owning value only through
    /// the tensor object it views, when there is one.
    #[test]
    fn test_tensor_view_cannot_move_to_any() {
        let tensor = Tensor::from_slice(&[0.0f32; 6], &[2, 3]).unwrap();
        let owned = tensor.view().to_tensor().unwrap();
        assert!(owned.as_object_ref().ptr_eq(tensor.as_object_ref()));
        let any = Any::new(owned);
        assert_eq!(any.type_index(), ti::kTVMFFITensor);

        let (mut data, mut shape) = ([0f32; 6], [2i64, 3]);
        let raw = dltensor(&mut data, &mut shape, std::ptr::null_mut());
        // SAFETY: the DLTensor describes live local arrays.
        assert!(unsafe { TensorView::from_dltensor(&raw) }
            .to_tensor()
            .is_none());
    }

    #[test]
    fn test_tensor_view_try_from_any_view() {
        // From a tensor object, as C++ `AnyView::cast<TensorView>` converts it.
        let tensor = Tensor::from_slice(&[5.0f32, 1., 2., 3., 4., 5.], &[2, 3]).unwrap();
        let owner = Any::new(&tensor);
        let object = owner.view();
        let view = object.cast::<TensorView>().unwrap();
        assert_eq!(view.data_ptr(), tensor.data_ptr());
        assert_eq!(view.shape(), tensor.shape());
        // Upstream's strict `try_as` (C++ `as`) does not take the object; `as_exact` does
        // here (a `TensorView` parameter takes both forms exactly).
        assert!(object.as_exact::<TensorView>().is_some());

        // From a DLTensor*, which both accept.
        let (mut data, mut shape, mut strides) = ([7.0f32, 1., 2., 3., 4., 5.], [2, 3], [3i64, 1]);
        let raw = dltensor(&mut data, &mut shape, strides.as_mut_ptr());
        // SAFETY: the DLTensor describes live local arrays.
        let borrowed = unsafe { TensorView::from_dltensor(&raw) };
        as_arg(borrowed, |pointer| {
            assert_eq!(
                pointer.cast::<TensorView>().unwrap().as_dltensor() as *const DLTensor,
                &raw as *const DLTensor
            );
            assert_eq!(
                pointer.as_exact::<TensorView>().unwrap().as_dltensor() as *const DLTensor,
                &raw as *const DLTensor
            );
        });

        // Other values are rejected with the expected type.
        let one = Any::new(1i32);
        let err = one.cast::<TensorView>().unwrap_err();
        assert_eq!(
            err.message(),
            "Cannot convert from type `int` to `DLTensor*`"
        );
    }
}

// ---- test_big_int.rs ----

mod test_big_int {
    use super::*;
    use std::collections::hash_map::DefaultHasher;
    use std::hash::{Hash, Hasher};

    // (1 << 255) | (0x0123456789ABCDEF << 128) | 0xFEDCBA9876543210: distinct words, an
    // interior zero, and a top word whose sign bit needs the zero guard word.
    const WIDE_WORDS: [i64; 5] = [
        0xFEDCBA9876543210_u64 as i64,
        0,
        0x0123456789ABCDEF,
        i64::MIN,
        0,
    ];
    const WIDE_DECIMAL: &str =
        "57896044618658097711813390734279005840776448950576999782953508207182870753808";

    fn wide() -> BigInt {
        BigInt::from_words(&WIDE_WORDS)
    }

    fn big(value: i128) -> BigInt {
        BigInt::from(value)
    }

    fn pow2(bits: i64) -> BigInt {
        &big(1) << bits
    }

    fn type_index_of(value: &BigInt) -> i32 {
        value.as_view().type_index()
    }

    fn hash_of(value: &BigInt) -> u64 {
        let mut hasher = DefaultHasher::new();
        value.hash(&mut hasher);
        hasher.finish()
    }

    fn assert_inline(value: &BigInt, expected: i64) {
        assert_eq!(type_index_of(value), ti::kTVMFFIInt, "{value}");
        assert_eq!(value.to_i64(), Some(expected));
    }

    #[test]
    fn test_big_int_inline_representation() {
        // Upstream's `BigInt::new()` is `BigInt::default()` here.
        for value in [BigInt::default(), BigInt::from(0i64)] {
            assert_eq!(type_index_of(&value), ti::kTVMFFIInt);
            assert_eq!(value.words(), &[0]);
            assert_eq!(value.to_i64(), Some(0));
        }
        let inline = [
            BigInt::from(false),
            BigInt::from(true),
            BigInt::from(-1i8),
            BigInt::from(i16::MIN),
            BigInt::from(u32::MAX),
            BigInt::from(i64::MAX),
            BigInt::from(i64::MIN),
            BigInt::from(usize::MAX >> 1),
            BigInt::from(i128::from(i64::MAX)),
            BigInt::from(u128::from(u64::MAX >> 1)),
        ];
        let expected = [
            0,
            1,
            -1,
            i64::from(i16::MIN),
            i64::from(u32::MAX),
            i64::MAX,
            i64::MIN,
            (usize::MAX >> 1) as i64,
            i64::MAX,
            i64::MAX,
        ];
        for (value, expected) in inline.iter().zip(expected) {
            assert_eq!(type_index_of(value), ti::kTVMFFIInt);
            assert_eq!(value.to_i64(), Some(expected));
            assert_eq!(value.words(), &[expected]);
            assert_eq!(value.is_negative(), expected < 0);
        }
    }

    #[test]
    fn test_big_int_heap_representation() {
        let heap = [
            (BigInt::from(u64::MAX), vec![-1, 0]),
            (BigInt::from(usize::MAX), vec![-1, 0]),
            (BigInt::from(1u128 << 63), vec![i64::MIN, 0]),
            (BigInt::from(i128::from(i64::MIN) - 1), vec![i64::MAX, -1]),
            (BigInt::from(i128::MIN), vec![0, i64::MIN]),
            (BigInt::from(u128::MAX), vec![-1, -1, 0]),
            (wide(), WIDE_WORDS.to_vec()),
        ];
        for (value, words) in heap {
            assert_eq!(type_index_of(&value), ti::kTVMFFIBigInt);
            assert_eq!(value.words(), words.as_slice());
            assert_eq!(value.to_i64(), None);
            assert_eq!(value.is_negative(), words[words.len() - 1] < 0);
            assert_eq!(strong_count(value.as_view()), Some(1));
            let copy = value.clone();
            assert_eq!(strong_count(value.as_view()), Some(2));
            assert_eq!(copy.words().as_ptr(), value.words().as_ptr());
            drop(copy);
            assert_eq!(strong_count(value.as_view()), Some(1));
        }
    }

    #[test]
    fn test_big_int_words_mirror_runtime_content() {
        for value in [
            wide(),
            BigInt::from(u64::MAX),
            BigInt::from(i128::MIN),
            BigInt::from(-5i64),
        ] {
            let any = Any::new(value.clone());
            // SAFETY: a live int or BigInt value, which `any` holds while the slice is read.
            let content = unsafe { tvm_ffi::sys::TVMFFIBigIntGetContentByteArray(any.as_raw()) };
            // SAFETY: the runtime's words of the value, `size` bytes, alive with `any`.
            let runtime = unsafe {
                std::slice::from_raw_parts(
                    content.data as *const i64,
                    content.size / std::mem::size_of::<i64>(),
                )
            };
            assert_eq!(value.words(), runtime);
            // A heap value is shared, so both read the same object words.
            if value.to_i64().is_none() {
                assert_eq!(value.words().as_ptr(), runtime.as_ptr());
            }
        }
    }

    #[test]
    fn test_big_int_from_words_normalizes() {
        let zero = BigInt::from_words(&[]);
        assert_eq!(type_index_of(&zero), ti::kTVMFFIInt);
        assert_eq!(zero, BigInt::default());
        for (words, expected) in [
            (vec![5, 0, 0], 5),
            (vec![-5, -1, -1], -5),
            (vec![i64::MIN, -1], i64::MIN),
            (vec![i64::MAX, 0], i64::MAX),
        ] {
            let value = BigInt::from_words(&words);
            assert_eq!(type_index_of(&value), ti::kTVMFFIInt);
            assert_eq!(value.to_i64(), Some(expected));
        }
        let padded = BigInt::from_words(&[-1, 0, 0, 0]);
        assert_eq!(type_index_of(&padded), ti::kTVMFFIBigInt);
        assert_eq!(padded.words(), &[-1, 0]);
        assert_eq!(padded, BigInt::from(u64::MAX));
        let mut padded_wide = WIDE_WORDS.to_vec();
        padded_wide.extend([0, 0]);
        assert_eq!(BigInt::from_words(&padded_wide).words(), &WIDE_WORDS);
        let mut padded_negative = WIDE_WORDS.map(|word| !word).to_vec();
        padded_negative.extend([-1, -1]);
        assert_eq!(
            BigInt::from_words(&padded_negative).words(),
            &WIDE_WORDS.map(|word| !word)
        );
    }

    #[test]
    fn test_big_int_native_conversions() {
        #[allow(clippy::type_complexity)]
        let cases: [(BigInt, Option<i64>, Option<u64>, Option<i128>, Option<u128>); 9] = [
            (BigInt::from(0i64), Some(0), Some(0), Some(0), Some(0)),
            (BigInt::from(-1i64), Some(-1), None, Some(-1), None),
            (
                BigInt::from(i64::MAX),
                Some(i64::MAX),
                Some(i64::MAX as u64),
                Some(i128::from(i64::MAX)),
                Some(u128::from(i64::MAX as u64)),
            ),
            (
                BigInt::from(i64::MIN),
                Some(i64::MIN),
                None,
                Some(i128::from(i64::MIN)),
                None,
            ),
            (
                BigInt::from(u64::MAX),
                None,
                Some(u64::MAX),
                Some(i128::from(u64::MAX)),
                Some(u128::from(u64::MAX)),
            ),
            (
                BigInt::from(i128::from(i64::MIN) - 1),
                None,
                None,
                Some(i128::from(i64::MIN) - 1),
                None,
            ),
            (
                BigInt::from(i128::MAX),
                None,
                None,
                Some(i128::MAX),
                Some(i128::MAX as u128),
            ),
            (BigInt::from(i128::MIN), None, None, Some(i128::MIN), None),
            (BigInt::from(u128::MAX), None, None, None, Some(u128::MAX)),
        ];
        for (value, i64_value, u64_value, i128_value, u128_value) in cases {
            assert_eq!(value.to_i64(), i64_value, "{value}");
            assert_eq!(value.to_u64(), u64_value, "{value}");
            assert_eq!(value.to_i128(), i128_value, "{value}");
            assert_eq!(value.to_u128(), u128_value, "{value}");
        }
        assert_eq!(wide().to_u128(), None);
        assert_eq!(wide().to_i128(), None);
    }

    #[test]
    fn test_big_int_ordering_and_hash() {
        let negative_wide = BigInt::from_words(&WIDE_WORDS.map(|word| !word));
        let ascending = [
            negative_wide.clone(),
            BigInt::from(i128::MIN),
            BigInt::from(-(1i128 << 64)),
            BigInt::from(i128::from(i64::MIN) - 1),
            BigInt::from(i64::MIN),
            BigInt::from(-1i64),
            BigInt::from(0i64),
            BigInt::from(1i64),
            BigInt::from(i64::MAX),
            BigInt::from(1u128 << 63),
            BigInt::from(u64::MAX),
            BigInt::from(1u128 << 64),
            BigInt::from(i128::MAX),
            BigInt::from(u128::MAX),
            wide(),
        ];
        for (i, lhs) in ascending.iter().enumerate() {
            for (j, rhs) in ascending.iter().enumerate() {
                assert_eq!(lhs.cmp(rhs), i.cmp(&j), "{lhs} vs {rhs}");
                assert_eq!(lhs == rhs, i == j, "{lhs} vs {rhs}");
            }
        }
        let same = [
            (BigInt::from(u64::MAX), BigInt::from_words(&[-1, 0, 0])),
            (BigInt::from(7u8), BigInt::from_words(&[7, 0])),
            (wide(), BigInt::from_words(&WIDE_WORDS)),
            (
                negative_wide,
                BigInt::from_words(&WIDE_WORDS.map(|word| !word)),
            ),
        ];
        for (lhs, rhs) in same {
            assert_eq!(lhs, rhs);
            assert_eq!(hash_of(&lhs), hash_of(&rhs));
        }
    }

    /// `Debug` is the decimal value here (upstream: `ffi.BigInt { data: N }`).
    #[test]
    fn test_big_int_display() {
        let cases = [
            (BigInt::from(0i64), "0"),
            (BigInt::from(-1i64), "-1"),
            (BigInt::from(i64::MAX), "9223372036854775807"),
            (BigInt::from(i64::MIN), "-9223372036854775808"),
            (BigInt::from(1u128 << 63), "9223372036854775808"),
            (
                BigInt::from(i128::from(i64::MIN) - 1),
                "-9223372036854775809",
            ),
            (BigInt::from(u64::MAX), "18446744073709551615"),
            (BigInt::from(1u128 << 64), "18446744073709551616"),
            (
                BigInt::from(1u128 << 100),
                "1267650600228229401496703205376",
            ),
            (
                BigInt::from(-(1i128 << 100)),
                "-1267650600228229401496703205376",
            ),
            (
                BigInt::from(i128::MIN),
                "-170141183460469231731687303715884105728",
            ),
            (
                BigInt::from(u128::MAX),
                "340282366920938463463374607431768211455",
            ),
            (
                BigInt::from_words(&[0, 0, 0, 1]),
                "6277101735386680763835789423207666416102355444464034512896",
            ),
            (wide(), WIDE_DECIMAL),
        ];
        for (value, expected) in cases {
            assert_eq!(value.to_string(), expected);
            assert_eq!(format!("{value:?}"), expected);
        }
        assert_eq!(
            format!("{:>22}", BigInt::from(u64::MAX)),
            "  18446744073709551615"
        );
        assert_eq!(
            format!("{:+}", BigInt::from(1u128 << 64)),
            "+18446744073709551616"
        );
        assert_eq!(format!("{:<5}|", BigInt::from(-1i64)), "-1   |");
        assert_eq!(format!("{:+}", -wide()), format!("-{WIDE_DECIMAL}"));
    }

    #[test]
    fn test_big_int_any_round_trip() {
        let value = wide();
        let any = Any::new(value.clone());
        assert_eq!(any.type_index(), ti::kTVMFFIBigInt);
        assert_eq!(strong_count(any.view()), Some(2));
        assert_eq!(any.as_exact::<BigInt>(), Some(value.clone()));
        let view = value.as_view();
        assert_eq!(view.cast::<BigInt>().unwrap(), value);
        let restored = any.cast::<BigInt>().unwrap();
        drop(any);
        assert_eq!(restored.words().as_ptr(), value.words().as_ptr());
        drop(restored);
        assert_eq!(strong_count(value.as_view()), Some(1));

        // An inline value is a plain int cell in both directions.
        let small = BigInt::from(-42i64);
        let any = Any::new(small.clone());
        assert_eq!(any.type_index(), ti::kTVMFFIInt);
        assert_eq!(any.cast::<i64>().unwrap(), -42);
        assert_eq!(Any::new(-42i64).cast::<BigInt>().unwrap(), small);
        assert_eq!(
            Any::new(7i32).as_exact::<BigInt>(),
            Some(BigInt::from(7i64))
        );
        assert_eq!(Any::new(true).cast::<BigInt>().unwrap(), BigInt::from(1i64));
        assert_eq!(Any::new(true).as_exact::<BigInt>(), None);

        let error = Any::new(1.5f64).cast::<BigInt>().unwrap_err();
        assert_eq!(error.kind(), "TypeError");
        assert_eq!(
            error.message(),
            "Cannot convert from type `float` to `BigInt`"
        );
        let error = Any::new(wide()).cast::<i64>().unwrap_err();
        assert_eq!(error.kind(), "TypeError");
        assert!(
            error.message().contains("ffi.BigInt"),
            "{}",
            error.message()
        );
    }

    #[test]
    fn test_big_int_function_round_trip() {
        let echo = echo();
        for value in [wide(), BigInt::from(i128::MIN), BigInt::from(i64::MIN)] {
            let result = echo.call((value.clone(),)).unwrap();
            assert_eq!(result.type_index(), type_index_of(&value));
            let echoed = result.cast::<BigInt>().unwrap();
            assert_eq!(echoed, value);
            // A heap value crosses the call by reference; an inline one is copied.
            if value.to_i64().is_none() {
                assert_eq!(echoed.words().as_ptr(), value.words().as_ptr());
            }
        }

        let identity = Function::from_typed(|value: BigInt| -> Result<BigInt> { Ok(value) });
        let result = identity.call((wide(),)).unwrap();
        assert_eq!(result.cast::<BigInt>().unwrap(), wide());
        let result = identity.call((5i64,)).unwrap();
        assert_eq!(result.type_index(), ti::kTVMFFIInt);
        assert_eq!(result.cast::<BigInt>().unwrap(), BigInt::from(5i64));
        let error = identity.call((String::from("text"),)).unwrap_err();
        assert_eq!(error.kind(), "TypeError");
        assert!(error.message().contains("BigInt"), "{}", error.message());

        let narrow = Function::from_typed(|value: i64| -> Result<i64> { Ok(value) });
        let error = narrow.call((&wide(),)).unwrap_err();
        assert_eq!(error.kind(), "TypeError");
        assert!(
            error.message().contains("ffi.BigInt"),
            "{}",
            error.message()
        );
    }

    #[test]
    fn test_big_int_containers() {
        let values = vec![wide(), BigInt::from(-1i64), BigInt::from(u64::MAX)];
        let array = Array::new(values.clone()).unwrap();
        assert_eq!(array.len(), 3);
        for (i, value) in values.iter().enumerate() {
            assert_eq!(array.get(i).unwrap(), *value);
        }
        let echoed: Array<BigInt> = echo().call_as((array.clone(),)).unwrap();
        assert_eq!(echoed.iter().collect::<Vec<_>>(), values);

        let map: Map<BigInt, i64> = values
            .iter()
            .enumerate()
            .map(|(i, value)| (value.clone(), i as i64))
            .collect();
        assert_eq!(map.len(), 3);
        for (i, value) in values.iter().enumerate() {
            assert!(map.contains_key(value));
            assert_eq!(map.get(value), Some(i as i64));
        }
        assert_eq!(map.get(BigInt::from(1u128 << 64)), None);
    }

    #[test]
    fn test_big_int_optional() {
        assert_eq!(std::mem::size_of::<Optional<BigInt>>(), 16);
        let some = Optional::some(wide());
        assert!(some.is_some());
        assert_eq!(some.get(), Some(wide()));
        let none = Optional::<BigInt>::none();
        assert!(none.is_none());
        assert_eq!(none.get(), None);
        assert_eq!(Option::from(some), Some(wide()));

        let any = Any::new(Some(wide()));
        assert_eq!(any.type_index(), ti::kTVMFFIBigInt);
        assert_eq!(any.cast::<Option<BigInt>>().unwrap(), Some(wide()));
        assert_eq!(Any::none().cast::<Option<BigInt>>().unwrap(), None);
        let echoed = echo().call((Some(BigInt::from(u64::MAX)),)).unwrap();
        assert_eq!(
            echoed.cast::<Option<BigInt>>().unwrap(),
            Some(BigInt::from(u64::MAX))
        );
    }

    #[test]
    fn test_big_int_from_str() {
        for value in [
            big(0),
            big(-1),
            big(i64::MIN as i128),
            big(i64::MAX as i128),
            pow2(63),
            -pow2(63) - 1i64,
            pow2(255),
            -pow2(255),
            wide(),
            -wide(),
            BigInt::from(u128::MAX),
        ] {
            let text = value.to_string();
            assert_eq!(text.parse::<BigInt>().unwrap(), value, "{text}");
            if !value.is_negative() {
                assert_eq!(format!("+{text}").parse::<BigInt>().unwrap(), value);
            }
        }
        assert_inline(&"+0007".parse::<BigInt>().unwrap(), 7);
        assert_inline(&"-0".parse::<BigInt>().unwrap(), 0);
        assert_eq!(
            "1267650600228229401496703205376".parse::<BigInt>().unwrap(),
            pow2(100)
        );
        assert_eq!(
            "000000000000000000001267650600228229401496703205376"
                .parse::<BigInt>()
                .unwrap(),
            pow2(100)
        );
        for text in ["", "+", "-", "x", "12x", " 1", "1 ", "1.0", "--1", "0x10"] {
            let error = text.parse::<BigInt>().unwrap_err();
            assert_eq!(error.kind(), "ValueError", "{text:?}");
            assert_eq!(
                error.message(),
                format!("invalid literal for BigInt: {text:?}")
            );
        }
    }

    #[test]
    fn test_big_int_native_objects_cross_runtime() {
        let echo = echo();
        // A Rust-made object: shared with a C++ container and released by C++ last.
        let product = &wide() * &wide();
        // wide < 2^256, so the square needs 512 bits: eight words with no sign guard.
        assert_eq!(product.words().len(), 8);
        assert_eq!(strong_count(product.as_view()), Some(1));
        let array: Array<BigInt> = Function::get_global("ffi.Array")
            .unwrap()
            .call_as((&product,))
            .unwrap();
        assert_eq!(strong_count(product.as_view()), Some(2));
        let echoed: BigInt = echo.call_as((&product,)).unwrap();
        assert_eq!(echoed.words().as_ptr(), product.words().as_ptr());
        let pointer = product.words().as_ptr();
        drop(product);
        drop(echoed);
        let held = array.get(0).unwrap();
        assert_eq!(held.words().as_ptr(), pointer);
        assert_eq!(strong_count(held.as_view()), Some(2));
        drop(array);
        assert_eq!(strong_count(held.as_view()), Some(1));

        // The runtime makes an equal twin from the words.
        let from_runtime = {
            let words = held.words();
            let input = tvm_ffi::sys::TVMFFIByteArray::from_bytes(
                // SAFETY: plain words read as their bytes.
                unsafe {
                    std::slice::from_raw_parts(
                        words.as_ptr() as *const u8,
                        std::mem::size_of_val(words),
                    )
                },
            );
            let mut raw = tvm_ffi::sys::TVMFFIAny::NONE;
            // SAFETY: whole words and an output slot.
            assert_eq!(
                unsafe { tvm_ffi::sys::TVMFFIBigIntFromByteArray(&input, &mut raw) },
                0
            );
            // SAFETY: on success the runtime wrote an owned value.
            unsafe { Any::from_raw(raw) }.cast::<BigInt>().unwrap()
        };
        assert_ne!(from_runtime.words().as_ptr(), held.words().as_ptr());
        assert_eq!(from_runtime, held);
        // The runtime hashes and compares the Rust-made key against the runtime-made probe.
        let map: Map<BigInt, i64> = [(held.clone(), 1i64)].into_iter().collect();
        assert_eq!(map.get(&from_runtime), Some(1));
        // Rust arithmetic on the runtime-made operand; equal values demote to inline zero.
        assert_inline(&(&held - &from_runtime), 0);
        assert_eq!(&held + &from_runtime, &held << 1i64);
        drop(map);
        assert_eq!(strong_count(held.as_view()), Some(1));
    }

    /// A weak reference that outlives the last strong one (upstream: by hand on the header,
    /// as C++ `WeakObjectPtr` does; here `WeakRef`).
    #[test]
    fn test_big_int_objects_outlived_by_weak_ref() {
        for value in [
            BigInt::from(u64::MAX),
            BigInt::from_words(&WIDE_WORDS.map(|w| w ^ 1)),
        ] {
            assert!(value.to_i64().is_none());
            let any = Any::new(value);
            let object = any
                .cast::<ObjectRef<tvm_ffi::builtin::BigIntObj>>()
                .unwrap();
            drop(any);
            let weak = object.downgrade();
            assert_eq!((object.strong_count(), object.weak_count()), (1, 2));
            drop(object);
            assert_eq!(weak.strong_count(), 0);
            assert!(weak.upgrade().is_none());
        }
    }

    // ---- Arithmetic: upstream's port of tests/cpp/test_big_int.cc ----

    #[test]
    fn test_big_int_f64_conversions() {
        let cases = [
            (0.0, BigInt::from(0i64)),
            (-0.0, BigInt::from(0i64)),
            (f64::MIN_POSITIVE, BigInt::from(0i64)),
            (1.9, BigInt::from(1i64)),
            (-1.9, BigInt::from(-1i64)),
            (-0.999, BigInt::from(0i64)),
            (123456789.987, BigInt::from(123456789i64)),
            (9007199254740994.0, BigInt::from(9007199254740994i64)),
            (i64::MIN as f64, BigInt::from(i64::MIN)),
            // i64::MAX rounds up to 2^63 as a double, which no longer fits inline.
            (i64::MAX as f64, BigInt::from(1u128 << 63)),
            (-(i64::MAX as f64), BigInt::from(i64::MIN)),
            (18446744073709551616.0, BigInt::from(1u128 << 64)),
            (1e30, BigInt::from(1000000000000000019884624838656i128)),
            (
                -1.5 * 2f64.powi(100),
                BigInt::from(-1901475900342344102245054808064i128),
            ),
        ];
        for (input, expected) in cases {
            assert_eq!(BigInt::try_from(input).unwrap(), expected, "{input}");
        }
        // Wide magnitudes: the significand straddles words at every alignment.
        for input in [
            1e300,
            -1e300,
            f64::MAX,
            -f64::MAX,
            1.75 * 2f64.powi(1000),
            -(2f64.powi(1023)),
            3.0 * 2f64.powi(191),
        ] {
            let value = BigInt::try_from(input).unwrap();
            assert_eq!(type_index_of(&value), ti::kTVMFFIBigInt);
            assert_eq!(value.is_negative(), input < 0.0);
            assert_eq!(value.to_f64().unwrap(), input, "{input}");
        }
        assert_eq!(
            BigInt::try_from(3.0 * 2f64.powi(191)).unwrap().words(),
            &[0, 0, i64::MIN, 1]
        );
        let error = BigInt::try_from(f64::NAN).unwrap_err();
        assert_eq!(error.kind(), "ValueError");
        assert!(error.message().contains("NaN"));
        for input in [f64::INFINITY, f64::NEG_INFINITY] {
            let error = BigInt::try_from(input).unwrap_err();
            assert_eq!(error.kind(), "OverflowError");
            assert!(error.message().contains("infinity"));
        }

        // Nearest double with ties to even: 2^47 is half an ulp at 2^100.
        let x = pow2(100);
        assert_eq!(x.to_f64().unwrap(), 2f64.powi(100));
        assert_eq!((&x + pow2(47)).to_f64().unwrap(), 2f64.powi(100));
        let above = f64::from_bits(2f64.powi(100).to_bits() + 1);
        assert_eq!((&x + pow2(47) + 1i64).to_f64().unwrap(), above);
        assert_eq!(big(i64::MIN as i128).to_f64().unwrap(), i64::MIN as f64);
        assert_eq!((-pow2(100) - 1i64).to_f64().unwrap(), -(2f64.powi(100)));
        let largest = BigInt::try_from(f64::MAX).unwrap();
        assert_eq!(largest.to_f64().unwrap(), f64::MAX);
        assert_eq!((&largest + pow2(970) - 1i64).to_f64().unwrap(), f64::MAX);
        for value in [&largest + pow2(970), pow2(1024), -pow2(1024), pow2(1100)] {
            let error = value.to_f64().unwrap_err();
            assert_eq!(error.kind(), "OverflowError");
            assert!(error.message().contains("finite double"));
        }
    }

    #[test]
    // `BigInt % -1` is a BigInt operation, not the `i64` one the lint means.
    #[allow(clippy::modulo_one)]
    fn test_big_int_promotion_demotion_and_mixed_operands() {
        let high = &big(i64::MAX as i128) + 1i64;
        assert_eq!(type_index_of(&high), ti::kTVMFFIBigInt);
        assert_eq!(high.to_string(), "9223372036854775808");
        assert_inline(&(&high - 1i64), i64::MAX);
        assert_inline(&-&high, i64::MIN);
        assert_inline(&(&high + i64::MIN), 0);
        assert_eq!(&big(i64::MIN as i128) - 1i64, -(&high + 1i64));
        assert_eq!(-big(i64::MIN as i128), high);
        assert_eq!(&big(i64::MIN as i128) / -1i64, high);
        assert_inline(&(&big(i64::MIN as i128) % -1i64), 0);
        assert_eq!(BigInt::from(u64::MAX).to_string(), "18446744073709551615");
        assert_eq!(1i64 + BigInt::from(u64::MAX), pow2(64));
        assert_eq!(
            BigInt::from(u64::MAX) - big(1),
            &BigInt::from(u64::MAX) - 1i64
        );
        for (a, b) in [(i64::MAX, 17i64), (-123, 17)] {
            let (x, y) = (BigInt::from(a), BigInt::from(b));
            assert_eq!(&x + &y, &x + b);
            assert_eq!(&x + &y, a + &y);
            assert_eq!(&x - &y, &x - b);
            assert_eq!(&x - &y, a - &y);
            assert_eq!(&x * &y, &x * b);
            assert_eq!(&x * &y, a * &y);
            assert_eq!((&x * &y) / &y, x);
            assert_eq!(&x / &y, a / &y);
            assert_eq!(&x / &y, &x / b);
            assert_eq!(&x % &y, a % &y);
            assert_eq!(&x % &y, &x % b);
            assert_eq!(&x & &y, a & &y);
            assert_eq!(&x | &y, &x | b);
            assert_eq!(&x ^ &y, a ^ &y);
            assert_eq!(std::cmp::min(&x, &y), &BigInt::from(a.min(b)));
            assert_eq!(std::cmp::max(&x, &y), &BigInt::from(a.max(b)));
        }
        let heap = pow2(255);
        assert_eq!(std::cmp::min(heap.clone(), -&heap), -&heap);
        assert_eq!(std::cmp::max(-&heap, heap.clone()), heap);
        let mut counter = big(i64::MAX as i128);
        counter += 1i64;
        assert_eq!(counter, high);
        counter -= 1i64;
        assert_inline(&counter, i64::MAX);
        counter -= &big(1);
        assert_inline(&counter, i64::MAX - 1);
    }

    #[test]
    fn test_big_int_signed_division() {
        // (a, b, trunc q, trunc r, floor q, floor r)
        for (a, b, q, r, floor_q, floor_r) in [
            (7i64, 3i64, 2i64, 1i64, 2i64, 1i64),
            (-7, 3, -2, -1, -3, 2),
            (7, -3, -2, 1, -3, -2),
            (-7, -3, 2, -1, 2, -1),
            (-6, 3, -2, 0, -2, 0),
            (0, 3, 0, 0, 0, 0),
        ] {
            let (x, y) = (BigInt::from(a), BigInt::from(b));
            assert_inline(&(&x / &y), q);
            assert_inline(&(&x % b), r);
            assert_inline(&x.try_div(&y).unwrap(), q);
            assert_inline(&x.try_rem(&y).unwrap(), r);
            assert_inline(&x.floor_div(&y).unwrap(), floor_q);
            assert_inline(&x.floor_mod(&y).unwrap(), floor_r);
            let (dq, dr) = x.div_rem(&y).unwrap();
            assert_inline(&dq, q);
            assert_inline(&dr, r);
            // Wide operands with the same values take the multiword paths.
            let shift = 200i64;
            let (wx, wy) = (&x << shift, &y << shift);
            assert_inline(&(&wx / &wy), q);
            assert_eq!(&wx % &wy, &BigInt::from(r) << shift);
            assert_inline(&wx.floor_div(&wy).unwrap(), floor_q);
            assert_eq!(wx.floor_mod(&wy).unwrap(), &BigInt::from(floor_r) << shift);
        }
        // An exact multiword quotient from a dividend with low zero words and a minimum top word.
        assert_eq!(
            (&big(i64::MIN as i128) << 128i64)
                .div_rem(&pow2(64))
                .unwrap(),
            (-pow2(127), big(0))
        );
        let wide = pow2(255) + 13i64;
        for divisor in [big(0), pow2(0) - 1i64] {
            for result in [
                wide.try_div(&divisor),
                wide.try_rem(&divisor),
                wide.floor_div(&divisor),
                wide.floor_mod(&divisor),
                big(0).floor_mod(&divisor),
                big(5).try_div(&divisor),
                wide.div_rem(&divisor).map(|pair| pair.0),
            ] {
                let error = result.unwrap_err();
                assert_eq!(error.kind(), "ZeroDivisionError");
                assert_eq!(error.message(), "Division by zero");
            }
        }
    }

    #[test]
    #[should_panic(expected = "Division by zero")]
    fn test_big_int_division_by_zero_panics() {
        let _ = &pow2(100) / 0i64;
    }

    #[test]
    #[should_panic(expected = "Negative BigInt shift count")]
    fn test_big_int_negative_shift_panics() {
        let _ = &big(1) << -1i64;
    }

    #[test]
    fn test_big_int_wide_arithmetic_and_bitwise() {
        for shift in [0i64, 63, 64, 255, 256] {
            let x = pow2(shift);
            assert_eq!(&x >> shift, big(1));
            assert_eq!(-&x >> shift, big(-1));
            assert_inline(&(&x - &x), 0);
            assert_inline(&((&x + 3i64) - &x), 3);
            assert_eq!(&x & -1i64, x);
            assert_eq!(-1i64 & &x, x);
            assert_eq!(&x | -1i64, big(-1));
            assert_eq!(!&x, -&x - 1i64);
            assert_eq!((&x - 1i64) ^ &x, 2i64 * &x - 1i64);
            assert_eq!((-&x - 1i64) >> shift, big(-2));
            assert_eq!(&x << big(2), &x * 4i64);
            assert_eq!(1i64 << BigInt::from(shift), x);
            assert_eq!(x.try_shl(2).unwrap(), &x * 4i64);
            assert_eq!(x.try_shr(shift).unwrap(), big(1));
        }
        let huge = pow2(255);
        assert_inline(&(&huge >> &huge), 0);
        assert_inline(&(-&huge >> &huge), -1);
        assert_inline(&(&big(0) << &huge), 0);
        let error = huge.try_shl(huge.clone()).unwrap_err();
        assert_eq!(error.kind(), "OverflowError");
        assert_eq!(error.message(), "BigInt shift count is too large");
        // A count that fits `usize` but not memory is an error, not an abort.
        for count in [1i64 << 61, i64::MAX] {
            let error = big(1).try_shl(count).unwrap_err();
            assert_eq!(error.kind(), "OverflowError");
            assert_eq!(error.message(), "BigInt allocation is too large");
        }
        assert_inline(&huge.try_shr(huge.clone()).unwrap(), 0);
        let error = huge.try_shl(-1).unwrap_err();
        assert_eq!(error.kind(), "ValueError");
        let error = big(0).try_shr(-1).unwrap_err();
        assert_eq!(error.kind(), "ValueError");
        assert_eq!(pow2(100).to_string(), "1267650600228229401496703205376");
        // Mixed inline/heap bitwise operands and negative heap values.
        let negative = -pow2(200) - 5i64;
        assert_eq!(&negative & 0xffi64, big((-5i128) & 0xff));
        assert_eq!(&negative | 0i64, negative);
        assert_eq!(&negative ^ &negative, big(0));
        assert_eq!(!&negative, pow2(200) + 4i64);
    }

    #[test]
    fn test_big_int_independent_wide_fixture() {
        // Decimal expectations were computed with Python integers, independently of these
        // operators.
        let a: BigInt =
            "-57896044618658097711813390734279005840776448950576999782953508207182870753808"
                .parse()
                .unwrap();
        let b: BigInt = "1361129467683753853854892183719458155744".parse().unwrap();
        assert_eq!(
            (&a + &b).to_string(),
            "-57896044618658097711813390734279005839415319482893245929098616023463412598064"
        );
        assert_eq!(
            (&a * &b).to_string(),
            "-78804012392788958424676746146478616550595249492184343272504214848687229926200124701108634385188332729146218745073152"
        );
        assert_eq!(
            a.floor_div(&b).unwrap().to_string(),
            "-42535295865117307932898767499013107221"
        );
        assert_eq!(
            a.floor_mod(&b).unwrap().to_string(),
            "340250229142126476510862697120718273616"
        );
        assert_eq!((&a & &b).to_string(), "72903423425023200");
        assert_eq!(
            (&a ^ &b).to_string(),
            "-57896044618658097711813390734279005839415319482893245929098761830310262644464"
        );
        assert_eq!(
            (&a >> 97i64).to_string(),
            "-365375409332725729551097270762435786773001928705"
        );
    }

    #[test]
    fn test_big_int_multiword_division_estimates() {
        let base = pow2(32);
        let divisor = pow2(63) + &base - 1i64;
        let clamp_divisor = pow2(63) + 1i64;
        let addback_divisor = pow2(95) + 1i64;
        let shifted_divisor = pow2(64) + 1i64;
        let wide_quotient = pow2(64) + 7i64;
        let wide_remainder = pow2(63) + &base + 5i64;
        // Clamp, one/two estimate corrections, addback, and maximal normalization shift.
        for (a, b, q, r) in [
            (
                &clamp_divisor * &base - 1i64,
                clamp_divisor.clone(),
                &base - 1i64,
                pow2(63),
            ),
            (
                &divisor * 2i64 - 1i64,
                divisor.clone(),
                big(1),
                &divisor - 1i64,
            ),
            (
                &divisor * (&base - 2i64) - 1i64,
                divisor.clone(),
                &base - 3i64,
                &divisor - 1i64,
            ),
            (
                &addback_divisor * (&base + 1i64) - 1i64,
                addback_divisor.clone(),
                base.clone(),
                pow2(95),
            ),
            (
                &shifted_divisor * &wide_quotient + &wide_remainder,
                shifted_divisor.clone(),
                wide_quotient.clone(),
                wide_remainder.clone(),
            ),
            (&divisor - 1i64, divisor.clone(), big(0), &divisor - 1i64),
            (divisor.clone(), divisor.clone(), big(1), big(0)),
        ] {
            assert_eq!(a.div_rem(&b).unwrap(), (q, r), "{a} / {b}");
        }
    }

    #[test]
    fn test_big_int_scalar_div_rem_boundaries() {
        let quotient = pow2(192) + 3i64;
        let dividend = &quotient * 3i64 + 2i64;
        let maximum_remainder = &quotient * pow2(63) + i64::MAX;
        let half_max = i64::from(u32::MAX);
        let half_boundary = (&BigInt::from(half_max) << 64i64) - 1i64;
        let word_quotient = BigInt::from(u64::MAX);
        let correction_divisor = 0x400000007fffffffi64;
        // Zero, exact/nonexact, signed scalar remainder, and the full |INT64_MIN| bound.
        for (a, b, q, r) in [
            (big(0), 3i64, big(0), 0i64),
            (big(2), 3, big(0), 2),
            (quotient.clone(), 1, quotient.clone(), 0),
            (-&quotient * 3i64, 3, -&quotient, 0),
            (&quotient * 3i64, 3, quotient.clone(), 0),
            (dividend.clone(), 3, quotient.clone(), 2),
            (-&dividend, 3, -&quotient, -2),
            (maximum_remainder.clone(), i64::MIN, -&quotient, i64::MAX),
            (-&maximum_remainder, i64::MIN, quotient.clone(), -i64::MAX),
            (big(i64::MIN as i128), -1, pow2(63), 0),
            (
                half_boundary.clone(),
                half_max,
                word_quotient.clone(),
                half_max - 1,
            ),
            (
                -&half_boundary,
                -half_max,
                word_quotient.clone(),
                1 - half_max,
            ),
            (
                (&BigInt::from(half_max + 1) << 64i64) - 1i64,
                half_max + 1,
                word_quotient.clone(),
                half_max,
            ),
            // One quotient correction, then two corrections with both overflow guards.
            (pow2(64), half_max + 2, BigInt::from(half_max), 1),
            (
                (&BigInt::from(correction_divisor) << 64i64) - 1i64,
                correction_divisor,
                word_quotient.clone(),
                correction_divisor - 1,
            ),
        ] {
            let (dq, dr) = a.div_rem(&BigInt::from(b)).unwrap();
            assert_eq!(dq, q, "{a} / {b}");
            assert_inline(&dr, r);
        }
    }

    #[test]
    fn test_big_int_small_divisor_remainders() {
        let value = pow2(255)
            | (&BigInt::from(0x12345678i64) << 128i64)
            | BigInt::from(0xfedcba9876543211u64);
        // Independent signed int32 boundary answers, plus an exact negative-divisor remainder.
        for (a, b, trunc, floor) in [
            (value.clone(), -2147483648i64, 1985229329i64, -162254319i64),
            (-&value, 2147483647, -391319368, 1756164279),
            (-&value, -2147483648, -1985229329, -1985229329),
            (value.clone(), 2147483647, 391319368, 391319368),
            (pow2(255), -2147483648, 0, 0),
        ] {
            assert_inline(&(&a % b), trunc);
            assert_inline(&a.floor_mod(&BigInt::from(b)).unwrap(), floor);
        }
    }

    /// Deterministic xorshift64 generator for the differential test.
    struct XorShift(u64);

    impl XorShift {
        fn next(&mut self) -> u64 {
            let mut x = self.0;
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            self.0 = x;
            x
        }

        /// One to six words mixing carry-sensitive patterns with random bits.
        fn big_int(&mut self) -> BigInt {
            let len = (self.next() % 6 + 1) as usize;
            let words: Vec<i64> = (0..len)
                .map(|_| match self.next() % 8 {
                    0 => 0,
                    1 => -1,
                    2 => i64::MIN,
                    3 => i64::MAX,
                    4 => 1,
                    _ => self.next() as i64,
                })
                .collect();
            BigInt::from_words(&words)
        }
    }

    fn abs(value: &BigInt) -> BigInt {
        if value.is_negative() {
            -value
        } else {
            value.clone()
        }
    }

    #[test]
    fn test_big_int_random_algebraic_properties() {
        let pool = [
            big(0),
            big(1),
            big(-1),
            big(i64::MIN as i128),
            big(i64::MAX as i128),
            pow2(63),
            -pow2(63),
            pow2(64),
            -pow2(64) - 1i64,
            BigInt::from(u64::MAX),
            pow2(128),
            big(i128::MIN),
            big(i128::MAX),
            BigInt::from(u128::MAX),
            wide(),
            -wide(),
            BigInt::from_words(&[0, 0, i64::MIN, 1]),
            pow2(255) + 13i64,
        ];
        let mut rng = XorShift(0x9E37_79B9_7F4A_7C15);
        let pick = |rng: &mut XorShift| {
            if rng.next().is_multiple_of(4) {
                pool[(rng.next() % pool.len() as u64) as usize].clone()
            } else {
                rng.big_int()
            }
        };
        let largest_double = BigInt::try_from(f64::MAX).unwrap();
        for _ in 0..1500 {
            let a = pick(&mut rng);
            let b = pick(&mut rng);
            let context = format!("a = {a}, b = {b}");

            // Ring identities; every result is checked for canonical form by `==`.
            assert_eq!(&a + &b, &b + &a, "{context}");
            assert_eq!((&a + &b) - &b, a, "{context}");
            assert_eq!(&a - &b, &a + -&b, "{context}");
            assert_eq!(&a * &b, &b * &a, "{context}");
            assert_eq!(-(&a * &b), -&a * &b, "{context}");
            assert_eq!(!&a, -&a - 1i64, "{context}");
            assert_eq!(&a ^ &b, (&a | &b) - (&a & &b), "{context}");
            assert_eq!((&a & &b) + (&a | &b), &a + &b, "{context}");
            assert_eq!(a.cmp(&b), (&a - &b).cmp(&big(0)), "{context}");

            // Native integers agree wherever they can represent the operands and result.
            if let (Some(x), Some(y)) = (a.to_i128(), b.to_i128()) {
                for (expected, actual) in [
                    (x.checked_add(y), &a + &b),
                    (x.checked_sub(y), &a - &b),
                    (x.checked_mul(y), &a * &b),
                    (Some(x & y), &a & &b),
                    (Some(x | y), &a | &b),
                    (Some(x ^ y), &a ^ &b),
                ] {
                    if let Some(expected) = expected {
                        assert_eq!(actual, BigInt::from(expected), "{context}");
                    }
                }
                if y != 0 && !(x == i128::MIN && y == -1) {
                    assert_eq!(a.try_div(&b).unwrap(), BigInt::from(x / y), "{context}");
                    assert_eq!(a.try_rem(&b).unwrap(), BigInt::from(x % y), "{context}");
                    assert_eq!(
                        a.floor_div(&b).unwrap(),
                        BigInt::from(
                            x.div_euclid(y) - i128::from((y < 0) & (x.rem_euclid(y) != 0))
                        ),
                        "{context}"
                    );
                }
            }

            // Division identities: a = q*b + r with the truncating and flooring sign rules.
            if b.is_zero() {
                for result in [
                    a.try_div(&b),
                    a.try_rem(&b),
                    a.floor_div(&b),
                    a.floor_mod(&b),
                ] {
                    assert_eq!(result.unwrap_err().kind(), "ZeroDivisionError");
                }
            } else {
                let (q, r) = a.div_rem(&b).unwrap();
                assert_eq!(q, a.try_div(&b).unwrap(), "{context}");
                assert_eq!(r, a.try_rem(&b).unwrap(), "{context}");
                assert_eq!(&q * &b + &r, a, "{context}");
                assert!(abs(&r) < abs(&b), "{context}");
                assert!(
                    r.is_zero() || r.is_negative() == a.is_negative(),
                    "{context}"
                );
                let (fq, fr) = (a.floor_div(&b).unwrap(), a.floor_mod(&b).unwrap());
                assert_eq!(&fq * &b + &fr, a, "{context}");
                assert!(abs(&fr) < abs(&b), "{context}");
                assert!(
                    fr.is_zero() || fr.is_negative() == b.is_negative(),
                    "{context}"
                );
                let rounds_down = !r.is_zero() && a.is_negative() != b.is_negative();
                assert_eq!(
                    fq,
                    if rounds_down { &q - 1i64 } else { q.clone() },
                    "{context}"
                );
                assert_eq!((&a * &b).try_div(&b).unwrap(), a, "{context}");
                assert!((&a * &b).try_rem(&b).unwrap().is_zero(), "{context}");
            }

            // Shifts are multiplication and floor division by powers of two.
            let count = (rng.next() % 300) as i64;
            let shifted = a.try_shl(count).unwrap();
            assert_eq!(shifted, &a * pow2(count), "{context}, count = {count}");
            assert_eq!(
                shifted.try_shr(count).unwrap(),
                a,
                "{context}, count = {count}"
            );
            assert_eq!(
                a.try_shr(count).unwrap(),
                a.floor_div(&pow2(count)).unwrap(),
                "{context}, count = {count}"
            );
            assert_eq!(a.try_shl(-1).unwrap_err().kind(), "ValueError");
            assert_eq!(a.try_shr(-1).unwrap_err().kind(), "ValueError");

            // Text round-trips exactly; the double is the nearest representable value.
            assert_eq!(a.to_string().parse::<BigInt>().unwrap(), a, "{context}");
            match a.to_f64() {
                Ok(value) => {
                    assert!(value.is_finite());
                    let nearest = BigInt::try_from(value).unwrap();
                    let difference = abs(&(&a - &nearest));
                    let exponent = ((value.abs().to_bits() >> 52) & 0x7ff) as i64 - 1075;
                    let ulp = if exponent > 0 { pow2(exponent) } else { big(1) };
                    assert!(
                        &difference * 2i64 <= ulp,
                        "{context}: {value} is not the nearest double"
                    );
                    if abs(&a) < pow2(53) {
                        assert_eq!(nearest, a, "{context}");
                    }
                }
                Err(error) => {
                    assert_eq!(error.kind(), "OverflowError");
                    assert!(abs(&a) > largest_double, "{context}");
                }
            }
        }
    }

    #[test]
    fn test_big_int_wide_results_spill_to_heap_buffers() {
        // Results and division scratch wider than the 32-word stack buffer take the heap path.
        let x = &pow2(3000) + 12345i64;
        assert_eq!(x.words().len(), 47);
        let square = &x * &x;
        assert_eq!(square.words().len(), 94);
        let (quotient, remainder) = square.div_rem(&x).unwrap();
        assert_eq!(quotient, x);
        assert_inline(&remainder, 0);
        assert_eq!(&x % &pow2(3000), big(12345));
        assert_eq!(&x + &x, &x << 1i64);
        assert_inline(&(&(-&x) + &x), 0);
        assert_eq!(&(&x << 100i64) >> 100i64, x);
        assert_eq!(&x & &x, x);
        assert_inline(&(&x ^ &x), 0);
        assert_eq!(x.to_string().parse::<BigInt>().unwrap(), x);
    }
}

// ---- test_object_registration.rs ----

/// Upstream registers a type on its first use (`#[type_register]`), under its parent, as C++
/// `TVM_FFI_DECLARE_OBJECT_INFO` does; this SDK registers every type of a library when it loads
/// (before `main` here), parents first. The translations check the same facts about the
/// registered types; upstream's reserved child slots (`#[type_child_slots = 2]`, so that the
/// leaf's index is its parent's plus one) are `#[ffi_type(child_slots = 2)]`.
mod test_object_registration {
    use super::*;
    use tvm_ffi::{reflection, ObjectType};

    #[derive(tvm_ffi::Object)]
    #[ffi_type(key = "testing.rust.RegisteredBase", child_slots = 2)]
    #[repr(C)]
    pub struct RegisteredBase {
        pub value: i64,
    }

    #[derive(tvm_ffi::Object)]
    #[ffi_type(key = "testing.rust.RegisteredLeaf", final)]
    #[repr(C)]
    pub struct RegisteredLeaf {
        #[ffi(base)]
        pub base: RegisteredBase,
        pub extra: i64,
    }

    /// The runtime's index for `type_key` (`TVMFFITypeKeyToIndex`).
    fn registered_index(type_key: &str) -> i32 {
        let key = tvm_ffi::sys::TVMFFIByteArray::from_bytes(type_key.as_bytes());
        let mut index = -1;
        // SAFETY: a valid key and output slot.
        assert_eq!(
            unsafe { tvm_ffi::sys::TVMFFITypeKeyToIndex(&key, &mut index) },
            0
        );
        index
    }

    #[test]
    fn test_derived_object_types_are_registered_on_first_use() {
        let leaf_index = RegisteredLeaf::type_index();
        let base_index = RegisteredBase::type_index();
        assert!(base_index >= tvm_ffi::sys::type_index::kTVMFFIDynObjectBegin);
        assert_eq!(registered_index("testing.rust.RegisteredBase"), base_index);
        assert_eq!(registered_index("testing.rust.RegisteredLeaf"), leaf_index);
        // The leaf takes the first of the base's reserved slots.
        assert_eq!(leaf_index, base_index + 1);
        // The index is stable.
        assert_eq!(RegisteredLeaf::type_index(), leaf_index);

        // SAFETY: a registered index.
        let info = unsafe { &*tvm_ffi::sys::TVMFFIGetTypeInfo(leaf_index) };
        assert_eq!(info.type_depth, RegisteredLeaf::runtime_type().depth);
        assert_eq!(info.type_depth, 2);
        // SAFETY: `type_ancestors` has `type_depth` entries.
        let parent = unsafe { &**info.type_ancestors.add(1) };
        assert_eq!(parent.type_index, base_index);

        assert!(reflection::is_instance_index(
            leaf_index,
            RegisteredBase::runtime_type()
        ));
        assert!(reflection::is_instance_index(
            base_index,
            tvm_ffi::builtin::AnyObject::runtime_type()
        ));
        assert!(!reflection::is_instance_index(
            base_index,
            RegisteredLeaf::runtime_type()
        ));
    }

    #[test]
    fn test_registered_object_types_round_trip_through_any() {
        let leaf = ObjectRef::new(RegisteredLeaf {
            base: RegisteredBase { value: 7 },
            extra: 8,
        });
        let any = Any::new(leaf);
        assert_eq!(any.type_index(), RegisteredLeaf::type_index());
        let base = any.cast::<ObjectRef<RegisteredBase>>().unwrap();
        assert_eq!(base.value, 7);
        let obj: ObjectRef<AnyObject> = base.into_object();
        let leaf = obj.downcast::<RegisteredLeaf>().unwrap();
        assert_eq!(leaf.extra, 8);
        assert_eq!(leaf.base.value, 7);
    }

    // Types defined here, whose registration (at load) is read from several threads at once.
    macro_rules! concurrent_types {
        ($($name:ident = $key:literal),*) => {
            $(
                #[derive(tvm_ffi::Object)]
                #[ffi_type(key = $key)]
                #[repr(C)]
                pub struct $name {}
            )*
        };
    }

    concurrent_types!(
        Concurrent0 = "testing.rust.Concurrent0",
        Concurrent1 = "testing.rust.Concurrent1",
        Concurrent2 = "testing.rust.Concurrent2",
        Concurrent3 = "testing.rust.Concurrent3",
        Concurrent4 = "testing.rust.Concurrent4",
        Concurrent5 = "testing.rust.Concurrent5",
        Concurrent6 = "testing.rust.Concurrent6",
        Concurrent7 = "testing.rust.Concurrent7"
    );

    #[test]
    fn test_registration_from_threads() {
        let registrations: [fn() -> i32; 8] = [
            Concurrent0::type_index,
            Concurrent1::type_index,
            Concurrent2::type_index,
            Concurrent3::type_index,
            Concurrent4::type_index,
            Concurrent5::type_index,
            Concurrent6::type_index,
            Concurrent7::type_index,
        ];
        let barrier = std::sync::Barrier::new(registrations.len());
        let indices: Vec<i32> = std::thread::scope(|scope| {
            let handles: Vec<_> = registrations
                .iter()
                .map(|register| {
                    let barrier = &barrier;
                    scope.spawn(move || {
                        barrier.wait();
                        register()
                    })
                })
                .collect();
            handles.into_iter().map(|h| h.join().unwrap()).collect()
        });
        for (i, &index) in indices.iter().enumerate() {
            assert_eq!(
                index,
                registered_index(&format!("testing.rust.Concurrent{i}"))
            );
            assert!(
                !indices[..i].contains(&index),
                "type indices must be distinct"
            );
        }
    }

    /// A declaration (`external`) of a key that no library registers does not register it:
    /// a load error (printed, so in a process of its own: the helper binary
    /// `unregistered_binding`), and a panic naming the key when the type is used.
    #[test]
    fn test_binding_does_not_register() {
        let (stdout, stderr) =
            tvm_ffi_tests::run_helper(env!("CARGO_BIN_EXE_unregistered_binding"));
        let lines: Vec<&str> = stdout.lines().collect();
        assert_eq!(
            lines,
            [
                "load error: cannot register type `testing.rust.NeverRegistered`: it is \
                 declared `external` but not registered (load the library that defines it \
                 first)",
                "registered: false",
                "panic: RuntimeError: TVM-FFI type `testing.rust.NeverRegistered` did not \
                 register when its library loaded: cannot register type \
                 `testing.rust.NeverRegistered`: it is declared `external` but not registered \
                 (load the library that defines it first)",
            ],
            "{stdout}{stderr}"
        );
    }
}

// ---- test_object.rs: objects with trailing items ----

/// Upstream's `ObjectCoreWithExtraItems` (an unsafe trait whose payload reports the item
/// count) is `ObjectWithItems` here, a safe trait: the count is the allocation's own, kept
/// after the payload (`[header][payload][count][items]`), and the items are read through
/// `ObjectRef::items` (mutably through `items_mut`, while the reference is the only one).
mod test_object {
    use super::*;
    use std::sync::atomic::{AtomicU32, Ordering};
    use std::sync::Arc;
    use tvm_ffi::object::ObjectWithItems;
    use tvm_ffi::WeakRef;

    #[derive(tvm_ffi::Object)]
    #[ffi_type(key = "testing.rust.upstream_values.TestInt")]
    #[repr(C)]
    pub struct TestIntObj {
        pub value: i64,
        /// Counts how many times the payload is dropped.
        #[ffi(skip)]
        delete_counter: Arc<AtomicU32>,
        pub extra_item_count: u64,
    }

    impl TestIntObj {
        fn new(value: i64, delete_counter: Arc<AtomicU32>, extra_item_count: u64) -> Self {
            TestIntObj {
                value,
                delete_counter,
                extra_item_count,
            }
        }
    }

    impl Drop for TestIntObj {
        fn drop(&mut self) {
            self.delete_counter.fetch_add(1, Ordering::Relaxed);
        }
    }

    impl ObjectWithItems for TestIntObj {
        type Item = u64;
    }

    const HEADER_SIZE: usize = 24;
    const COUNT_SIZE: usize = std::mem::size_of::<usize>();

    #[test]
    fn test_object_arc_with_extra_items() {
        let delete_counter = Arc::new(AtomicU32::new(0));
        let mut obj_arc =
            ObjectRef::new_with_items(TestIntObj::new(12, delete_counter.clone(), 10), 0..10u64);
        assert_eq!(obj_arc.value, 12);
        assert_eq!(obj_arc.extra_item_count, 10);
        assert_eq!(obj_arc.strong_count(), 1);
        assert_eq!(obj_arc.weak_count(), 1);
        assert_eq!(delete_counter.load(Ordering::Relaxed), 0);

        // Layout: the items follow the payload and the count, in the same allocation.
        assert_eq!(obj_arc.items().len(), 10);
        assert_eq!(obj_arc.items(), (0..10u64).collect::<Vec<_>>().as_slice());
        let header = obj_arc.header_ptr() as usize;
        let items = obj_arc.items_mut().unwrap();
        assert_eq!(items.len(), 10);
        items[9] = 90;
        assert_eq!(
            items.as_ptr() as usize,
            header + HEADER_SIZE + std::mem::size_of::<TestIntObj>() + COUNT_SIZE
        );
        assert_eq!(obj_arc.items()[9], 90);

        // Shared, the items are read-only.
        let shared = obj_arc.clone();
        assert!(obj_arc.items_mut().is_none());
        drop(shared);
        // So they are while a weak reference exists.
        let weak = obj_arc.downgrade();
        assert!(obj_arc.items_mut().is_none());
        drop(weak);
        assert!(obj_arc.items_mut().is_some());

        // An object of the same type made without items has none.
        let plain = ObjectRef::new(TestIntObj::new(1, delete_counter.clone(), 0));
        assert!(plain.items().is_empty());
        drop(plain);
        assert_eq!(delete_counter.load(Ordering::Relaxed), 1);

        drop(obj_arc);
        assert_eq!(delete_counter.load(Ordering::Relaxed), 2);
    }

    /// Drops `obj_arc` while a weak reference outlives it (upstream: by hand on the header,
    /// as C++ `WeakObjectPtr` does; here `WeakRef`). `expired` runs while only the weak
    /// reference is left. Returns the size the allocation is freed with.
    fn release_outlived_by_weak_ref<T: ObjectWithItems>(
        obj_arc: ObjectRef<T>,
        expired: impl FnOnce(),
    ) -> usize {
        let weak: WeakRef<T> = obj_arc.downgrade();
        drop(obj_arc);
        // The payload is dropped; the weak reference still sees an intact, expired header.
        assert_eq!(weak.strong_count(), 0);
        assert!(weak.upgrade().is_none());
        expired();
        // The last weak reference frees the whole allocation.
        LAST_DEALLOC_SIZE.with(|size| size.set(0));
        drop(weak);
        LAST_DEALLOC_SIZE.with(|size| size.get())
    }

    #[test]
    fn test_object_arc_with_extra_items_outlived_by_weak_ref() {
        let delete_counter = Arc::new(AtomicU32::new(0));
        let obj_arc =
            ObjectRef::new_with_items(TestIntObj::new(13, delete_counter.clone(), 10), 0..10u64);
        let freed = release_outlived_by_weak_ref(obj_arc, || {
            assert_eq!(delete_counter.load(Ordering::Relaxed), 1);
        });
        assert_eq!(
            freed,
            HEADER_SIZE
                + std::mem::size_of::<TestIntObj>()
                + COUNT_SIZE
                + 10 * std::mem::size_of::<u64>()
        );
    }

    /// Only the header, and items after it.
    #[derive(tvm_ffi::Object)]
    #[ffi_type(key = "testing.rust.upstream_values.HeaderOnly")]
    #[repr(C)]
    pub struct HeaderOnlyObj {}

    impl ObjectWithItems for HeaderOnlyObj {
        type Item = u64;
    }

    /// Upstream keeps the count in the word after the header, the first item's (N = 2) or
    /// padding it reserves (N = 0): `header + 16` and `header + 8`. Here the count has a word
    /// of its own before the items: `header + 8 + 16` and `header + 8`.
    #[test]
    fn test_header_only_object_with_extra_items_outlived_by_weak_ref() {
        let obj_arc = ObjectRef::new_with_items(HeaderOnlyObj {}, [1u64, 2]);
        assert_eq!(obj_arc.items(), &[1, 2]);
        assert_eq!(
            release_outlived_by_weak_ref(obj_arc, || {}),
            HEADER_SIZE + COUNT_SIZE + 16
        );
        let obj_arc = ObjectRef::new_with_items(HeaderOnlyObj {}, []);
        assert!(obj_arc.items().is_empty());
        assert_eq!(
            release_outlived_by_weak_ref(obj_arc, || {}),
            HEADER_SIZE + COUNT_SIZE
        );
    }
}
