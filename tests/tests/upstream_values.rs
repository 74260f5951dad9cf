//! Upstream's Rust tests (apache/tvm-ffi `rust/tvm-ffi/tests/`, crate `tvm-ffi` 0.1.15) of
//! values, containers, calls, modules, tensors and registration, translated one to one to this
//! SDK's API with the upstream test names kept, one module per upstream file
//! (`test_any::test_any_bool` is upstream's `test_any.rs::test_any_bool`).
//!
//! HEADER-PLACEHOLDER
use tvm_ffi::builtin::AnyObject;
use tvm_ffi::sys::type_index as ti;
use tvm_ffi::{
    Any, AnyView, Array, BigInt, Bytes, DataType, Device, Error, Function, Map, Module, ObjectRef,
    Optional, Result, Shape, String, Tensor, TensorView,
};

/// The strong count of the object a value holds, `None` for a value without one (upstream's
/// `debug_strong_count`): the object borrowed in place, so the count is not disturbed.
fn strong_count(view: AnyView<'_>) -> Option<u32> {
    view.checked_cast::<&ObjectRef<AnyObject>>()
        .map(|obj| obj.strong_count())
}

/// `testing.echo` and friends are registered by libtvm_ffi_testing, which the runtime loads
/// with its testing functions on first lookup of a `testing.` global.
fn echo() -> Function {
    Function::get_global("testing.echo").unwrap()
}

// ---- test_any.rs ----

mod test_any {
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
        assert_eq!(converted_cpu.device_type(), tvm_ffi::sys::kDLCPU as i32);
        assert_eq!(converted_cpu.device_id(), 0);

        assert_eq!(any_view_cpu.type_index(), ti::kTVMFFIDevice);
        let converted_cpu_view = any_view_cpu.cast::<Device>().unwrap();
        assert_eq!(converted_cpu_view.device_type(), tvm_ffi::sys::kDLCPU as i32);
        assert_eq!(converted_cpu_view.device_id(), 0);

        let cuda_device = Device::cuda(1);
        let any_cuda = Any::new(cuda_device);
        let any_view_cuda = any_cuda.view();

        assert_eq!(any_cuda.type_index(), ti::kTVMFFIDevice);
        let converted_cuda = any_cuda.cast::<Device>().unwrap();
        assert_eq!(converted_cuda.device_type(), tvm_ffi::sys::kDLCUDA as i32);
        assert_eq!(converted_cuda.device_id(), 1);

        assert_eq!(any_view_cuda.type_index(), ti::kTVMFFIDevice);
        let converted_cuda_view = any_view_cuda.cast::<Device>().unwrap();
        assert_eq!(converted_cuda_view.device_type(), tvm_ffi::sys::kDLCUDA as i32);
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
