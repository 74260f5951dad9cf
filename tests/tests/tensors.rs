//! Tensors from Rust against the real libtvm_ffi and its C++ test peer: construction, layout,
//! typed access and its errors, DLPack round trips, the environment allocator, conversions,
//! containers, object fields and reference counts.
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Mutex, MutexGuard};

use tvm_ffi::sys::{self, DLManagedTensorVersioned, DLTensor};
use tvm_ffi::tensor::live_rust_buffers;
use tvm_ffi::{
    ffi_func, ffi_methods, Any, AnyView, Array, DataType, Device, Function, Map, Object, ObjectRef,
    Tensor, TensorMut, TensorView, TypeSchema,
};

/// The tests count live buffers and swap this thread's allocator: run them one at a time.
fn serial() -> MutexGuard<'static, ()> {
    static LOCK: Mutex<()> = Mutex::new(());
    LOCK.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

use tvm_ffi_tests::{global, runtime_builtin};

/// A DLTensor over `data` with explicit shape and strides (for layouts Rust does not make).
fn raw_dltensor(
    data: *mut f32,
    shape: &mut [i64],
    strides: &mut [i64],
    device: Device,
) -> DLTensor {
    DLTensor {
        data: data.cast(),
        device: device.0,
        ndim: shape.len() as i32,
        dtype: DataType::float(32).0,
        shape: shape.as_mut_ptr(),
        strides: strides.as_mut_ptr(),
        byte_offset: 0,
    }
}

#[test]
fn from_vec_describes_a_compact_cpu_tensor() {
    let _g = serial();
    let t = Tensor::from_vec((0..6).map(|i| i as f32).collect(), &[2, 3]).unwrap();
    assert_eq!(t.shape(), &[2, 3]);
    assert_eq!(&*t.strides(), &[3, 1]);
    assert_eq!(t.ndim(), 2);
    assert_eq!(t.numel(), 6);
    assert_eq!(t.dtype(), DataType::float(32));
    assert_eq!(t.dtype().to_string(), "float32");
    assert_eq!(t.device(), Device::cpu());
    assert_eq!(t.byte_offset(), 0);
    assert!(t.is_contiguous());
    assert_eq!(
        t.as_slice::<f32>().unwrap(),
        &[0.0, 1.0, 2.0, 3.0, 4.0, 5.0]
    );
    assert_eq!(
        format!("{t:?}"),
        "Tensor(shape=[2, 3], dtype=float32, device=cpu:0)"
    );
    // No copy: the tensor uses the Vec's buffer.
    let data = vec![7u16; 3];
    let address = data.as_ptr() as usize;
    let t = Tensor::from_vec(data, &[3]).unwrap();
    assert_eq!(t.data_ptr() as usize, address);
    assert_eq!(t.as_slice::<u16>().unwrap(), &[7, 7, 7]);
}

#[test]
fn scalar_and_empty_tensors() {
    let _g = serial();
    let scalar = Tensor::from_slice(&[42i64], &[]).unwrap();
    assert_eq!(scalar.ndim(), 0);
    assert_eq!(scalar.shape(), &[] as &[i64]);
    assert_eq!(scalar.numel(), 1);
    assert_eq!(scalar.as_slice::<i64>().unwrap(), &[42]);

    let empty = Tensor::from_vec(Vec::<f64>::new(), &[0, 4]).unwrap();
    assert_eq!(empty.numel(), 0);
    assert!(empty.is_contiguous());
    assert_eq!(empty.as_slice::<f64>().unwrap(), &[] as &[f64]);
    let fresh = TensorMut::empty(&[3, 0], DataType::int(8), Device::cpu()).unwrap();
    assert_eq!(fresh.as_slice::<i8>().unwrap().len(), 0);
}

#[test]
fn construction_errors() {
    let _g = serial();
    let err = Tensor::from_vec(vec![1.0f32; 5], &[2, 3]).unwrap_err();
    assert_eq!(err.kind().as_str(), "ValueError");
    assert_eq!(
        err.message(),
        "Tensor::from_vec: shape [2, 3] has 6 elements, the data has 5"
    );
    let err = Tensor::from_vec(vec![1.0f32; 5], &[-5]).unwrap_err();
    assert_eq!(err.message(), "Tensor::from_vec: invalid shape [-5]");
    let err = TensorMut::empty(&[4], DataType::float(32), Device::cuda(0)).unwrap_err();
    assert_eq!(err.kind().as_str(), "RuntimeError");
    assert_eq!(
        err.message(),
        "TensorMut::empty: no DLPack tensor allocator is set in the environment \
         (TVMFFIEnvSetDLPackManagedTensorAllocator), and Rust can only allocate CPU memory \
         itself; asked for cuda:0"
    );
}

#[test]
fn as_slice_errors_name_what_was_expected() {
    let _g = serial();
    let t = Tensor::from_vec(vec![1.0f64, 2.0], &[2]).unwrap();
    let err = t.as_slice::<f32>().unwrap_err();
    assert_eq!(err.kind().as_str(), "TypeError");
    assert_eq!(
        err.message(),
        "expected a contiguous CPU tensor of dtype float32, got float64 on cpu:0"
    );
    let err = t.check("x").as_slice::<i32>().unwrap_err();
    assert_eq!(
        err.message(),
        "`x` must be a contiguous CPU tensor of dtype int32, got float64 on cpu:0"
    );

    // Every other element of a buffer: non-contiguous.
    let mut data = [0.0f32, 1.0, 2.0, 3.0, 4.0, 5.0];
    let (mut shape, mut strides) = ([3i64], [2i64]);
    let dl = raw_dltensor(data.as_mut_ptr(), &mut shape, &mut strides, Device::cpu());
    // SAFETY: shape, strides and data outlive the view and describe valid memory.
    let view = unsafe { TensorView::from_dltensor(&dl) };
    assert!(!view.is_contiguous());
    let err = view.as_slice::<f32>().unwrap_err();
    assert_eq!(err.kind().as_str(), "ValueError");
    assert_eq!(
        err.message(),
        "expected a contiguous CPU tensor of dtype float32, got non-contiguous float32 on \
         cpu:0 (shape [3], strides [2])"
    );
    let err = view.check("x").contiguous().unwrap_err();
    assert_eq!(
        err.message(),
        "`x` must be contiguous, got strides [2] for shape [3]"
    );

    // Device memory is never dereferenced: the check fails first.
    let (mut shape, mut strides) = ([3i64], [1i64]);
    let dl = raw_dltensor(
        std::ptr::null_mut(),
        &mut shape,
        &mut strides,
        Device::cuda(1),
    );
    // SAFETY: the data pointer is never read (the device is not host memory).
    let view = unsafe { TensorView::from_dltensor(&dl) };
    let err = view.as_slice::<f32>().unwrap_err();
    assert_eq!(
        err.message(),
        "expected a contiguous CPU tensor of dtype float32, got float32 on cuda:1"
    );
    let err = view.check("w").cpu().unwrap_err();
    assert_eq!(
        err.message(),
        "`w` must be a CPU tensor, got a tensor on cuda:1"
    );
    let err = view.check("w").device(Device::cuda(0)).unwrap_err();
    assert_eq!(err.message(), "`w` must be on cuda:0, got cuda:1");
}

#[test]
fn null_strides_are_compact() {
    let _g = serial();
    let mut data = [1.0f32, 2.0, 3.0, 4.0];
    let mut shape = [2i64, 2];
    let dl = DLTensor {
        strides: std::ptr::null_mut(),
        ..raw_dltensor(data.as_mut_ptr(), &mut shape, &mut [], Device::cpu())
    };
    // SAFETY: shape and data outlive the view.
    let view = unsafe { TensorView::from_dltensor(&dl) };
    assert_eq!(&*view.strides(), &[2, 1]);
    assert!(view.is_contiguous());
    assert_eq!(view.as_slice::<f32>().unwrap(), &[1.0, 2.0, 3.0, 4.0]);
    assert!(view.to_tensor().is_none());
}

#[test]
fn checks_name_the_argument() {
    let _g = serial();
    let x = Tensor::from_vec(vec![0i32; 6], &[2, 3]).unwrap();
    let checked = x
        .check("x")
        .dtype::<i32>()
        .and_then(|c| c.ndim(2))
        .and_then(|c| c.shape(&[2, 3]))
        .and_then(|c| c.dim(0, 2))
        .and_then(|c| c.cpu())
        .and_then(|c| c.contiguous())
        .unwrap();
    assert_eq!(checked.view().numel(), 6);
    let cases: Vec<(tvm_ffi::Error, &str, &str)> = vec![
        (
            x.check("x").dtype::<f32>().unwrap_err(),
            "TypeError",
            "`x` must have dtype float32, got int32",
        ),
        (
            x.check("x").dtype_is(DataType::bool()).unwrap_err(),
            "TypeError",
            "`x` must have dtype bool, got int32",
        ),
        (
            x.check("x").ndim(3).unwrap_err(),
            "ValueError",
            "`x` must have 3 dimensions, got 2 (shape [2, 3])",
        ),
        (
            x.check("x").shape(&[3, 2]).unwrap_err(),
            "ValueError",
            "`x` must have shape [3, 2], got [2, 3]",
        ),
        (
            x.check("x").dim(1, 4).unwrap_err(),
            "ValueError",
            "`x` must have size 4 in dimension 1, got 3 (shape [2, 3])",
        ),
        (
            x.check("x").dim(2, 1).unwrap_err(),
            "ValueError",
            "`x` must have at least 3 dimensions, got 2 (shape [2, 3])",
        ),
        (
            x.check("x").disjoint_from(&x.view(), "y").unwrap_err(),
            "ValueError",
            "`x` must not overlap `y` in memory",
        ),
    ];
    for (err, kind, message) in cases {
        assert_eq!((err.kind().as_str(), err.message()), (kind, message));
    }
}

#[test]
fn overlap_detection() {
    let _g = serial();
    let mut data = [0.0f32; 8];
    let base = data.as_mut_ptr();
    let (mut s1, mut st1) = ([4i64], [1i64]);
    let (mut s2, mut st2) = ([4i64], [1i64]);
    let (mut s3, mut st3) = ([4i64], [2i64]);
    let first = raw_dltensor(base, &mut s1, &mut st1, Device::cpu());
    let second = raw_dltensor(base.wrapping_add(4), &mut s2, &mut st2, Device::cpu());
    let strided = raw_dltensor(base.wrapping_add(1), &mut s3, &mut st3, Device::cpu());
    // SAFETY: all three describe parts of `data`, which outlives them.
    let (a, b, c) = unsafe {
        (
            TensorView::from_dltensor(&first),
            TensorView::from_dltensor(&second),
            TensorView::from_dltensor(&strided),
        )
    };
    assert!(!a.overlaps(&b));
    assert!(a.overlaps(&a));
    assert!(a.overlaps(&c) && b.overlaps(&c));
    let elsewhere = DLTensor {
        device: Device::cuda(0).0,
        ..first
    };
    // SAFETY: as above; device memory is never read.
    assert!(!a.overlaps(&unsafe { TensorView::from_dltensor(&elsewhere) }));
}

#[test]
fn tensor_mut_is_zeroed_writable_and_frozen() {
    let _g = serial();
    let mut t = TensorMut::empty(&[2, 2], DataType::float(64), Device::cpu()).unwrap();
    assert_eq!(t.as_slice::<f64>().unwrap(), &[0.0; 4]);
    assert_eq!(t.data_ptr() as usize % 64, 0, "64-byte aligned");
    t.as_mut_slice::<f64>()
        .unwrap()
        .copy_from_slice(&[1.0, 2.0, 3.0, 4.0]);
    let err = t.as_mut_slice::<f32>().unwrap_err();
    assert_eq!(
        err.message(),
        "expected a contiguous CPU tensor of dtype float32, got float64 on cpu:0"
    );
    assert!(
        t.view().to_tensor().is_none(),
        "a TensorMut cannot be shared by its view"
    );
    let frozen: Tensor = t.into();
    assert_eq!(frozen.as_slice::<f64>().unwrap(), &[1.0, 2.0, 3.0, 4.0]);
    let like = TensorMut::empty_like(&frozen.view()).unwrap();
    assert_eq!(like.shape(), frozen.shape());
    assert_eq!(like.dtype(), frozen.dtype());
}

#[test]
fn unsafe_writes_through_shared_tensors_are_seen_by_clones() {
    let _g = serial();
    let t = Tensor::from_vec(vec![0i64; 3], &[3]).unwrap();
    let other = t.clone();
    {
        // SAFETY: no other slice of this memory is alive during this block.
        let values = unsafe { t.as_mut_slice::<i64>() }.unwrap();
        values[1] = 9;
    }
    assert_eq!(other.as_slice::<i64>().unwrap(), &[0, 9, 0]);
}

#[test]
fn rust_buffers_are_freed_by_the_last_holder() {
    let _g = serial();
    let before = live_rust_buffers();
    let t = Tensor::from_vec(vec![1.0f32; 16], &[16]).unwrap();
    let empty = Tensor::empty(&[8], DataType::uint(8), Device::cpu()).unwrap();
    assert_eq!(live_rust_buffers(), before + 2);
    assert_eq!(t.as_object_ref().strong_count(), 1);
    let clone = t.clone();
    assert_eq!(t.as_object_ref().strong_count(), 2);
    let exported = t.to_dlpack().unwrap();
    assert_eq!(
        t.as_object_ref().strong_count(),
        3,
        "the DLPack export holds the tensor"
    );
    // The C++ peer keeps a reference inside the array it builds.
    let array: Array<Any> = global("testing.make_array_with_tensor")
        .call_as((&t,))
        .unwrap();
    assert_eq!(t.as_object_ref().strong_count(), 4);
    drop((t, clone, empty));
    assert_eq!(live_rust_buffers(), before + 1);
    drop(exported);
    assert_eq!(live_rust_buffers(), before + 1, "the array still holds it");
    let back: Tensor = array.get(0).unwrap().cast().unwrap();
    assert_eq!(back.as_slice::<f32>().unwrap(), &[1.0; 16]);
    drop((array, back));
    assert_eq!(live_rust_buffers(), before);
}

#[test]
fn dlpack_round_trip_shares_the_data() {
    let _g = serial();
    let t = Tensor::from_vec(vec![1u32, 2, 3, 4, 5, 6], &[3, 2]).unwrap();
    let exported = t.to_dlpack().unwrap();
    assert_eq!(exported.version().0, sys::DLPACK_MAJOR_VERSION);
    assert_eq!(exported.flags(), 0);
    assert_eq!(exported.view().shape(), &[3, 2]);
    assert_eq!(
        exported.view().as_slice::<u32>().unwrap(),
        &[1, 2, 3, 4, 5, 6]
    );
    // A C consumer takes the raw pointer and calls the deleter; here Rust takes it back.
    let raw = exported.into_raw();
    // SAFETY: the pointer came from `into_raw` and is owned by no one else.
    let back = Tensor::from_dlpack(unsafe { tvm_ffi::DLPackTensor::from_raw(raw) }).unwrap();
    assert!(!back.as_object_ref().ptr_eq(t.as_object_ref()));
    assert_eq!(back.data_ptr(), t.data_ptr());
    assert_eq!(back.shape(), t.shape());
    drop(back);
    assert_eq!(t.as_object_ref().strong_count(), 1);
}

static FOREIGN_DELETES: AtomicUsize = AtomicUsize::new(0);

#[repr(C)]
struct ForeignTensor {
    managed: DLManagedTensorVersioned,
    shape: Vec<i64>,
    data: Vec<u8>,
}

unsafe extern "C" fn foreign_deleter(managed: *mut DLManagedTensorVersioned) {
    // SAFETY: allocated as a boxed ForeignTensor below.
    drop(unsafe { Box::from_raw(managed as *mut ForeignTensor) });
    FOREIGN_DELETES.fetch_add(1, Ordering::SeqCst);
}

fn foreign(
    shape: &[i64],
    dtype: DataType,
    device: Device,
    flags: u64,
    fill: u8,
) -> *mut DLManagedTensorVersioned {
    let numel: i64 = shape.iter().product();
    let bytes = numel as usize * dtype.size_in_bytes();
    let mut boxed = Box::new(ForeignTensor {
        managed: DLManagedTensorVersioned {
            version: sys::DLPackVersion { major: 1, minor: 0 },
            manager_ctx: std::ptr::null_mut(),
            deleter: Some(foreign_deleter),
            flags,
            dl_tensor: DLTensor {
                data: std::ptr::null_mut(),
                device: device.0,
                ndim: shape.len() as i32,
                dtype: dtype.0,
                shape: std::ptr::null_mut(),
                strides: std::ptr::null_mut(),
                byte_offset: 0,
            },
        },
        shape: shape.to_vec(),
        // Over-allocate by 8 so that the data can be 8-byte aligned inside.
        data: vec![fill; bytes + 8],
    });
    let offset = boxed.data.as_ptr().align_offset(8);
    boxed.managed.dl_tensor.data = boxed.data[offset..].as_mut_ptr().cast();
    boxed.managed.dl_tensor.shape = boxed.shape.as_mut_ptr();
    Box::into_raw(boxed).cast()
}

#[test]
fn foreign_dlpack_tensors_are_imported_and_released() {
    let _g = serial();
    let deletes = FOREIGN_DELETES.load(Ordering::SeqCst);
    let raw = foreign(&[2, 2], DataType::int(16), Device::cpu(), 0, 1);
    // SAFETY: a fresh managed tensor we own.
    let t = Tensor::from_dlpack(unsafe {
        tvm_ffi::DLPackTensor::from_raw(std::ptr::NonNull::new(raw).unwrap())
    })
    .unwrap();
    // Null strides in the DLPack tensor: the runtime adds compact ones.
    assert_eq!(&*t.strides(), &[2, 1]);
    assert_eq!(t.as_slice::<i16>().unwrap(), &[0x0101; 4]);
    drop(t);
    assert_eq!(FOREIGN_DELETES.load(Ordering::SeqCst), deletes + 1);

    let raw = foreign(
        &[2],
        DataType::float(32),
        Device::cpu(),
        sys::DLPACK_FLAG_BITMASK_READ_ONLY,
        0,
    );
    // SAFETY: as above.
    let err = Tensor::from_dlpack(unsafe {
        tvm_ffi::DLPackTensor::from_raw(std::ptr::NonNull::new(raw).unwrap())
    })
    .unwrap_err();
    assert_eq!(
        err.message(),
        "Tensor::from_dlpack: the DLPack tensor is read-only, and an ffi.Tensor cannot say so \
         to its writers"
    );
    assert_eq!(
        FOREIGN_DELETES.load(Ordering::SeqCst),
        deletes + 2,
        "rejected, and released"
    );
}

static ALLOCATIONS: AtomicUsize = AtomicUsize::new(0);

unsafe extern "C" fn test_allocator(
    prototype: *mut DLTensor,
    out: *mut *mut DLManagedTensorVersioned,
    _error_ctx: *mut std::ffi::c_void,
    _set_error: Option<
        unsafe extern "C" fn(
            *mut std::ffi::c_void,
            *const std::ffi::c_char,
            *const std::ffi::c_char,
        ),
    >,
) -> i32 {
    ALLOCATIONS.fetch_add(1, Ordering::SeqCst);
    // SAFETY: the runtime passes a valid prototype with `ndim` shape entries.
    let (shape, dtype, device) = unsafe {
        let p = &*prototype;
        (
            std::slice::from_raw_parts(p.shape, p.ndim as usize).to_vec(),
            DataType::from(p.dtype),
            Device::from(p.device),
        )
    };
    // Garbage contents (0xAB bytes): Rust must zero-fill what an allocator returns.
    // SAFETY: `out` is a valid output slot.
    unsafe { *out = foreign(&shape, dtype, device, 0, 0xAB) };
    0
}

/// Installs `test_allocator` on this thread while alive.
struct AllocatorGuard(sys::DLPackManagedTensorAllocator);

impl AllocatorGuard {
    fn install() -> AllocatorGuard {
        let mut previous: sys::DLPackManagedTensorAllocator = None;
        // SAFETY: a valid allocator function and output slot; thread-local only.
        let rc = unsafe {
            sys::TVMFFIEnvSetDLPackManagedTensorAllocator(Some(test_allocator), 0, &mut previous)
        };
        assert_eq!(rc, 0);
        AllocatorGuard(previous)
    }
}

impl Drop for AllocatorGuard {
    fn drop(&mut self) {
        // SAFETY: restores the previous thread-local allocator.
        unsafe { sys::TVMFFIEnvSetDLPackManagedTensorAllocator(self.0, 0, std::ptr::null_mut()) };
    }
}

#[test]
fn empty_allocates_through_the_environment_allocator_when_set() {
    let _g = serial();
    let (calls, deletes, buffers) = (
        ALLOCATIONS.load(Ordering::SeqCst),
        FOREIGN_DELETES.load(Ordering::SeqCst),
        live_rust_buffers(),
    );
    {
        let _allocator = AllocatorGuard::install();
        let mut t = TensorMut::empty(&[3, 2], DataType::float(32), Device::cpu()).unwrap();
        assert_eq!(ALLOCATIONS.load(Ordering::SeqCst), calls + 1);
        assert_eq!(live_rust_buffers(), buffers, "no Rust buffer");
        assert_eq!(t.shape(), &[3, 2]);
        assert_eq!(t.as_slice::<f32>().unwrap(), &[0.0; 6], "zero-filled");
        t.as_mut_slice::<f32>().unwrap()[5] = 1.5;
        let shared = t.freeze();
        assert_eq!(shared.as_slice::<f32>().unwrap()[5], 1.5);
        drop(shared);
        assert_eq!(FOREIGN_DELETES.load(Ordering::SeqCst), deletes + 1);
        // The environment also serves devices Rust cannot allocate on.
        let gpu = Tensor::empty(&[4], DataType::float(16), Device::cuda(0)).unwrap();
        assert_eq!(gpu.device(), Device::cuda(0));
        // (the test allocator hands out host memory labelled as the requested device, which
        // Rust neither zero-fills nor reads)
        let err = gpu.check("gpu").as_slice::<u16>().unwrap_err();
        assert_eq!(
            err.message(),
            "`gpu` must be a contiguous CPU tensor of dtype uint16, got float16 on cuda:0"
        );
    }
    let _t = TensorMut::empty(&[1], DataType::float(32), Device::cpu()).unwrap();
    assert_eq!(
        ALLOCATIONS.load(Ordering::SeqCst),
        calls + 2,
        "allocator restored"
    );
    assert_eq!(live_rust_buffers(), buffers + 1);
}

#[test]
fn conversions_and_type_schema() {
    let _g = serial();
    assert_eq!(Tensor::type_str(), "ffi.Tensor");
    assert_eq!(Tensor::type_schema(), r#"{"type":"ffi.Tensor"}"#);
    assert_eq!(<&Tensor>::type_str(), "ffi.Tensor");
    assert_eq!(TensorMut::type_str(), "ffi.Tensor");
    // What C++ says for `TensorView` (and `DLTensor*`), see testing.schema_tensor_view_input.
    assert_eq!(TensorView::type_str(), "DLTensor*");
    assert_eq!(TensorView::type_schema(), r#"{"type":"DLTensor*"}"#);

    let t = Tensor::from_vec(vec![1.0f32, 2.0], &[2]).unwrap();
    let any = Any::new(t.clone());
    assert_eq!(any.type_index(), sys::type_index::kTVMFFITensor);
    assert_eq!(any.type_key(), "ffi.Tensor");
    let borrowed: &Tensor = any.cast().unwrap();
    assert!(borrowed.as_object_ref().ptr_eq(t.as_object_ref()));
    let view: TensorView = any.cast().unwrap();
    assert_eq!(view.as_slice::<f32>().unwrap(), &[1.0, 2.0]);
    assert!(view
        .to_tensor()
        .unwrap()
        .as_object_ref()
        .ptr_eq(t.as_object_ref()));
    let err = Any::new(3i64).cast::<Tensor>().unwrap_err();
    assert_eq!(
        err.message(),
        "Cannot convert from type `int` to `ffi.Tensor`"
    );

    // A raw DLTensor* (index 7) converts to a view, not to a Tensor (as in C++).
    // SAFETY: the tensor outlives the raw view.
    let raw = unsafe {
        AnyView::from_raw(sys::TVMFFIAny {
            type_index: sys::type_index::kTVMFFIDLTensorPtr,
            zero_padding: 0,
            value: sys::TVMFFIAnyValue {
                v_ptr: t.as_dltensor() as *const DLTensor as *mut _,
            },
        })
    };
    let from_raw: TensorView = raw.cast().unwrap();
    assert_eq!(from_raw.as_slice::<f32>().unwrap(), &[1.0, 2.0]);
    assert!(from_raw.to_tensor().is_none());
    assert_eq!(
        raw.cast::<Tensor>().unwrap_err().message(),
        "Cannot convert from type `DLTensor*` to `ffi.Tensor`"
    );
    assert_eq!(
        Any::new(1.5f64).cast::<TensorView>().unwrap_err().message(),
        "Cannot convert from type `float` to `DLTensor*`"
    );
}

#[test]
fn tensors_cross_cpp_functions() {
    let _g = serial();
    let t = Tensor::from_vec(vec![5i8, 6], &[2]).unwrap();
    let echoed: Tensor = global("testing.schema_id_tensor").call_as((&t,)).unwrap();
    assert!(echoed.as_object_ref().ptr_eq(t.as_object_ref()));
    // A view with an object is passed as the object; one without (a TensorMut's) as DLTensor*.
    let same: Tensor = global("testing.schema_id_tensor")
        .call_as((t.view(),))
        .unwrap();
    assert!(same.as_object_ref().ptr_eq(t.as_object_ref()));
    let fresh = TensorMut::empty(&[2], DataType::int(8), Device::cpu()).unwrap();
    global("testing.schema_tensor_view_input")
        .call((fresh.view(),))
        .unwrap();
    let err = global("testing.schema_id_tensor")
        .call((fresh.view(),))
        .unwrap_err();
    assert_eq!(
        err.message(),
        "Mismatched type on argument #0 when calling: `testing.schema_id_tensor(0: ffi.Tensor) \
         -> ffi.Tensor`. Expected `ffi.Tensor` but got `DLTensor*`"
    );
    let map: Map<tvm_ffi::String, Any> = global("testing.make_map_with_tensor")
        .call_as((&t,))
        .unwrap();
    let inside: Tensor = map.get("tensor").unwrap().cast().unwrap();
    assert!(inside.as_object_ref().ptr_eq(t.as_object_ref()));
}

/// `y += x` in place.
#[ffi_func(name = "rust_tests.add_into")]
fn add_into(x: TensorView, y: TensorView) -> tvm_ffi::Result<()> {
    let xs = x.check("x").as_slice::<f32>()?;
    let y = y.check("y").shape(x.shape())?.disjoint_from(&x, "x")?;
    // SAFETY: disjoint from `x` (checked); the only slice of `y` in this call.
    let ys = unsafe { y.as_mut_slice::<f32>()? };
    for (o, v) in ys.iter_mut().zip(xs) {
        *o += v;
    }
    Ok(())
}

/// A new tensor `2 * x` (takes the argument by reference, returns a `TensorMut`).
#[ffi_func(name = "rust_tests.double")]
fn double(x: &Tensor) -> tvm_ffi::Result<TensorMut> {
    let mut out = TensorMut::empty_like(&x.view())?;
    for (o, v) in out
        .as_mut_slice::<f32>()?
        .iter_mut()
        .zip(x.as_slice::<f32>()?)
    {
        *o = v * 2.0;
    }
    Ok(out)
}

#[test]
fn rust_functions_take_and_return_tensors() {
    let _g = serial();
    let add = global("rust_tests.add_into");
    let x = Tensor::from_vec(vec![1.0f32, 2.0], &[2]).unwrap();
    let y = Tensor::from_vec(vec![10.0f32, 20.0], &[2]).unwrap();
    add.call((&x, &y)).unwrap();
    assert_eq!(y.as_slice::<f32>().unwrap(), &[11.0, 22.0]);
    assert_eq!(
        x.as_object_ref().strong_count(),
        1,
        "views take no reference"
    );
    let err = add.call((&x, &x)).unwrap_err();
    assert_eq!(err.message(), "`y` must not overlap `x` in memory");
    let err = add.call((&x, 1i64)).unwrap_err();
    assert_eq!(
        err.message(),
        "Mismatched type on argument #1 (`y`) when calling: `rust_tests.add_into(x: DLTensor*, \
         y: DLTensor*) -> void`. Expected `DLTensor*` but got `int`"
    );

    let double = global("rust_tests.double");
    let doubled: Tensor = double.call_as((&x,)).unwrap();
    assert_eq!(doubled.as_slice::<f32>().unwrap(), &[2.0, 4.0]);

    let total = Function::from_typed(|xs: Array<Tensor>| -> tvm_ffi::Result<f32> {
        let mut sum = 0.0;
        for x in xs.iter() {
            sum += x.as_slice::<f32>()?.iter().sum::<f32>();
        }
        Ok(sum)
    });
    let list = Array::new([x.clone(), doubled.clone()]).unwrap();
    assert_eq!(total.call_as::<f32, _>((&list,)).unwrap(), 9.0);
    let bad = Array::new([Any::new(x.clone()), Any::new(1i64)]).unwrap();
    assert_eq!(
        total.call((&bad,)).unwrap_err().message(),
        "Mismatched type on argument #0 when calling: `(0: Array<ffi.Tensor>) -> float`. \
         Expected `Array<ffi.Tensor>` but got `Array[index 1: int]`"
    );
    let by_name: Map<tvm_ffi::String, Tensor> =
        Map::new([("x".into(), x.clone()), ("y".into(), y.clone())]).unwrap();
    let y_again = by_name.get("y").unwrap();
    assert!(y_again.as_object_ref().ptr_eq(y.as_object_ref()));
}

/// An object with tensor fields.
#[derive(Object)]
#[ffi_type(key = "rust_tests.TensorPair", final)]
#[repr(C)]
pub struct TensorPair {
    pub first: Tensor,
    pub second: Option<Tensor>,
}

#[ffi_methods]
impl TensorPair {
    #[ffi(init)]
    pub fn new(first: Tensor, second: Option<Tensor>) -> Self {
        TensorPair { first, second }
    }

    pub fn total(&self) -> tvm_ffi::Result<f32> {
        let mut sum: f32 = self.first.as_slice::<f32>()?.iter().sum();
        if let Some(second) = &self.second {
            sum += second.as_slice::<f32>()?.iter().sum::<f32>();
        }
        Ok(sum)
    }
}

#[test]
fn tensors_as_object_fields() {
    let _g = serial();
    let ty = tvm_ffi::reflection::lookup_type("rust_tests.TensorPair").unwrap();
    let fields = tvm_ffi::reflection::fields(ty.index);
    let describe = |f: &sys::TVMFFIFieldInfo| {
        // SAFETY: registry strings live for the process.
        let (name, metadata) = unsafe { (f.name.as_bytes(), f.metadata.as_bytes()) };
        (
            std::str::from_utf8(name).unwrap().to_string(),
            f.field_static_type_index,
            f.size,
            std::str::from_utf8(metadata).unwrap().to_string(),
        )
    };
    assert_eq!(
        describe(&fields[0]),
        (
            "first".to_string(),
            // As C++ reports a `Tensor` field: `ffi.Object`.
            sys::type_index::kTVMFFIObject,
            8,
            r#"{"type_schema":"{\"type\":\"ffi.Tensor\"}"}"#.to_string()
        )
    );
    // An optional tensor is a nullable object pointer: `ffi.Object`, 8 bytes ("any", -1, which
    // C++ reports for its pointer-sized `Optional<Tensor>`, means a 16-byte `Any` to the runtime
    // and Python subclasses).
    assert_eq!(describe(&fields[1]).1, sys::type_index::kTVMFFIObject);
    assert_eq!(describe(&fields[1]).2, 8);

    let a = Tensor::from_vec(vec![1.0f32, 2.0], &[2]).unwrap();
    let b = Tensor::from_vec(vec![3.0f32], &[1]).unwrap();
    let pair = ObjectRef::new(TensorPair::new(a.clone(), Some(b)));
    assert_eq!(pair.total().unwrap(), 6.0);
    assert_eq!(a.as_object_ref().strong_count(), 2);
    // The reflected getter returns the tensor itself.
    let getter = fields[0].getter.unwrap();
    let mut out = sys::TVMFFIAny::NONE;
    // SAFETY: the field's address inside a live TensorPair, and a writable output slot.
    let rc = unsafe {
        getter(
            (pair.as_raw().as_ptr() as *mut u8)
                .add(fields[0].offset as usize)
                .cast(),
            &mut out,
        )
    };
    assert_eq!(rc, 0);
    // SAFETY: the getter wrote an owned value.
    let got: Tensor = unsafe { Any::from_raw(out) }.cast().unwrap();
    assert!(got.as_object_ref().ptr_eq(a.as_object_ref()));
    drop((got, pair));
    assert_eq!(a.as_object_ref().strong_count(), 1);
}

#[test]
fn float16_and_bfloat16_are_typed_elements() {
    use tvm_ffi::half::{bf16, f16};
    let _g = serial();
    let values = vec![f16::from_f32(1.5), f16::from_f32(-2.0), f16::MAX];
    let t = Tensor::from_vec(values.clone(), &[3]).unwrap();
    assert_eq!(t.dtype(), DataType::FLOAT16);
    assert_eq!(t.dtype().to_string(), "float16");
    assert_eq!(t.as_slice::<f16>().unwrap(), &values[..]);
    let b = Tensor::from_vec(vec![bf16::from_f32(3.0); 4], &[2, 2]).unwrap();
    assert_eq!(b.dtype(), DataType::BFLOAT16);
    assert_eq!(b.dtype().to_string(), "bfloat16");
    assert_eq!(
        b.check("b")
            .dtype::<bf16>()
            .unwrap()
            .as_slice::<bf16>()
            .unwrap()[3]
            .to_f32(),
        3.0
    );
    // Same size, other type: refused in both directions.
    let err = t.as_slice::<bf16>().unwrap_err();
    assert_eq!(
        (err.kind().as_str(), err.message()),
        (
            "TypeError",
            "expected a contiguous CPU tensor of dtype bfloat16, got float16 on cpu:0"
        )
    );
    let err = b.check("b").as_slice::<f16>().unwrap_err();
    assert_eq!(
        err.message(),
        "`b` must be a contiguous CPU tensor of dtype float16, got bfloat16 on cpu:0"
    );
    assert_eq!(
        t.check("t").dtype::<u16>().unwrap_err().message(),
        "`t` must have dtype uint16, got float16"
    );
    // Written through TensorMut, read by the C++ peer's echo unchanged.
    let mut out = TensorMut::empty(&[2], DataType::FLOAT16, Device::cpu()).unwrap();
    out.as_mut_slice::<f16>()
        .unwrap()
        .copy_from_slice(&[f16::ONE, f16::NEG_ONE]);
    let echoed: Tensor = global("testing.schema_id_tensor")
        .call_as((out.freeze(),))
        .unwrap();
    assert_eq!(echoed.as_slice::<f16>().unwrap(), &[f16::ONE, f16::NEG_ONE]);
    // The parser agrees with the constants.
    assert_eq!("float16".parse::<DataType>().unwrap(), DataType::FLOAT16);
    assert_eq!("bfloat16".parse::<DataType>().unwrap(), DataType::BFLOAT16);
}

#[test]
fn fp8_and_sub_byte_dtypes_are_bytes() {
    let _g = serial();
    let named = [
        (DataType::FLOAT8_E3M4, "float8_e3m4", 8),
        (DataType::FLOAT8_E4M3, "float8_e4m3", 8),
        (DataType::FLOAT8_E4M3B11FNUZ, "float8_e4m3b11fnuz", 8),
        (DataType::FLOAT8_E4M3FN, "float8_e4m3fn", 8),
        (DataType::FLOAT8_E4M3FNUZ, "float8_e4m3fnuz", 8),
        (DataType::FLOAT8_E5M2, "float8_e5m2", 8),
        (DataType::FLOAT8_E5M2FNUZ, "float8_e5m2fnuz", 8),
        (DataType::FLOAT8_E8M0FNU, "float8_e8m0fnu", 8),
        (DataType::FLOAT6_E2M3FN, "float6_e2m3fn", 6),
        (DataType::FLOAT6_E3M2FN, "float6_e3m2fn", 6),
        (DataType::FLOAT4_E2M1FN, "float4_e2m1fn", 4),
        (DataType::INT4, "int4", 4),
        (DataType::UINT4, "uint4", 4),
        (DataType::INT1, "int1", 1),
        (DataType::UINT1, "uint1", 1),
        (DataType::BOOL, "bool", 8),
    ];
    for (dtype, text, bits) in named {
        // The runtime prints and parses each constant as its name.
        assert_eq!(dtype.to_string(), text);
        assert_eq!(text.parse::<DataType>().unwrap(), dtype, "{text}");
        assert_eq!(dtype.size_in_bits(), bits);
        assert_eq!(dtype.is_sub_byte(), bits < 8);
    }
    // fp8: one byte per element, typed access refused, byte access allowed.
    let mut fp8 = TensorMut::empty(&[2, 2], DataType::FLOAT8_E4M3FN, Device::cpu()).unwrap();
    assert_eq!(fp8.as_bytes().unwrap(), &[0; 4]);
    fp8.as_mut_bytes()
        .unwrap()
        .copy_from_slice(&[0x38, 0x40, 0xb8, 0x7e]);
    let fp8 = fp8.freeze();
    assert_eq!(fp8.as_bytes().unwrap(), &[0x38, 0x40, 0xb8, 0x7e]);
    assert_eq!(fp8.check("w").as_bytes().unwrap().len(), 4);
    let err = fp8.check("w").as_slice::<u8>().unwrap_err();
    assert_eq!(
        (err.kind().as_str(), err.message()),
        (
            "TypeError",
            "`w` must be a contiguous CPU tensor of dtype uint8, got float8_e4m3fn on cpu:0"
        )
    );
    assert_eq!(
        fp8.check("w")
            .dtype_is(DataType::FLOAT8_E5M2)
            .unwrap_err()
            .message(),
        "`w` must have dtype float8_e5m2, got float8_e4m3fn"
    );
    fp8.check("w").dtype_is(DataType::FLOAT8_E4M3FN).unwrap();
    // Packed sub-byte types: ceil(n * bits / 8) bytes.
    for (dtype, shape, bytes) in [
        (DataType::INT4, &[3i64][..], 2usize),
        (DataType::UINT4, &[2, 3], 3),
        (DataType::FLOAT4_E2M1FN, &[7], 4),
        (DataType::FLOAT6_E3M2FN, &[4], 3),
        (DataType::INT1, &[9], 2),
        (DataType::INT4, &[0], 0),
    ] {
        let t = Tensor::empty(shape, dtype, Device::cpu()).unwrap();
        assert_eq!(t.as_bytes().unwrap().len(), bytes, "{dtype} {shape:?}");
        let data: Vec<u8> = (1..=bytes as u8).collect();
        let t = Tensor::from_bytes(data.clone(), shape, dtype).unwrap();
        assert_eq!(t.as_bytes().unwrap(), &data[..]);
        let err = Tensor::from_bytes(vec![0; bytes + 1], shape, dtype).unwrap_err();
        assert_eq!(
            err.message(),
            format!(
                "Tensor::from_bytes: shape {shape:?} of {dtype} has {bytes} bytes, the data has {}",
                bytes + 1
            )
        );
    }
    // Round trip through DLPack keeps the dtype and the bytes.
    let int4 = Tensor::from_bytes(vec![0x21, 0x43], &[4], DataType::INT4).unwrap();
    let again = Tensor::from_dlpack(int4.to_dlpack().unwrap()).unwrap();
    assert_eq!(
        (again.dtype(), again.as_bytes().unwrap()),
        (DataType::INT4, &[0x21u8, 0x43][..])
    );
    let err = Tensor::from_bytes(vec![], &[-1], DataType::INT4).unwrap_err();
    assert_eq!(err.message(), "Tensor::from_bytes: invalid shape [-1]");
}

#[test]
fn byte_access_checks_layout_and_device() {
    let _g = serial();
    // Non-contiguous or device memory: no bytes.
    let mut data = [0.0f32; 6];
    let (mut shape, mut strides) = ([3i64], [2i64]);
    let dl = raw_dltensor(data.as_mut_ptr(), &mut shape, &mut strides, Device::cpu());
    // SAFETY: shape, strides and data outlive the view.
    let view = unsafe { TensorView::from_dltensor(&dl) };
    let err = view.as_bytes().unwrap_err();
    assert_eq!((err.kind().as_str(), err.message()), (
        "ValueError",
        "expected a contiguous CPU tensor, got non-contiguous float32 on cpu:0 (shape [3], strides [2])"
    ));
    let (mut shape, mut strides) = ([3i64], [1i64]);
    let gpu = raw_dltensor(
        std::ptr::null_mut(),
        &mut shape,
        &mut strides,
        Device::cuda(0),
    );
    // SAFETY: device memory is never read.
    let view = unsafe { TensorView::from_dltensor(&gpu) };
    assert_eq!(
        view.check("g").as_bytes().unwrap_err().message(),
        "`g` must be a contiguous CPU tensor, got float32 on cuda:0"
    );
    // A hostile byte offset is an error, not a read. (Shape and strides are locals: the view
    // reads them, so they must outlive it.)
    let (mut shape, mut strides) = ([2i64], [1i64]);
    let hostile = DLTensor {
        byte_offset: u64::MAX - 2,
        ..raw_dltensor(data.as_mut_ptr(), &mut shape, &mut strides, Device::cpu())
    };
    // SAFETY: the data is never read (the check fails first).
    let view = unsafe { TensorView::from_dltensor(&hostile) };
    assert!(view
        .check("h")
        .as_bytes()
        .unwrap_err()
        .message()
        .starts_with("`h` addresses bytes beyond the address space"));
    assert_eq!(
        view.first_element_ptr().unwrap_err().message(),
        format!(
            "the tensor's byte offset {} leaves the address space (data {:p})",
            u64::MAX - 2,
            data.as_ptr()
        )
    );
    // The address of the first element of a device tensor: data + byte offset, not read.
    let offset = DLTensor {
        byte_offset: 8,
        ..gpu
    };
    // SAFETY: never read.
    let view = unsafe { TensorView::from_dltensor(&offset) };
    assert_eq!(view.first_element_ptr().unwrap() as usize, 8);
    assert_eq!(
        view.check("g")
            .device_type(sys::kDLCUDA)
            .unwrap()
            .view()
            .ndim(),
        1
    );
    assert_eq!(
        view.check("g")
            .device_type(sys::kDLCPU)
            .unwrap_err()
            .message(),
        "`g` must be a cpu tensor, got a tensor on cuda:0"
    );
}

#[test]
fn strided_views_share_memory_and_check_bounds() {
    let _g = serial();
    let x = Tensor::from_vec((0..12).map(|v| v as f32).collect(), &[3, 4]).unwrap();
    let t = x.transpose(0, 1).unwrap();
    assert_eq!(t.shape(), &[4, 3]);
    assert_eq!(&*t.strides(), &[1, 4]);
    assert_eq!(t.data_ptr(), x.data_ptr());
    assert_eq!(
        x.as_object_ref().strong_count(),
        2,
        "the view holds its source"
    );
    assert_eq!(
        format!("{t:?}"),
        "Tensor(shape=[4, 3], dtype=float32, device=cpu:0, strides=[1, 4])"
    );
    let rows = x.narrow(0, 1, 2).unwrap();
    assert_eq!(
        rows.as_slice::<f32>().unwrap(),
        &[4.0, 5.0, 6.0, 7.0, 8.0, 9.0, 10.0, 11.0]
    );
    assert_eq!(
        rows.byte_offset(),
        0,
        "the offset is folded into the CPU address"
    );
    assert_eq!(rows.data_ptr() as usize, x.data_ptr() as usize + 16);
    let cols = x.narrow(1, 1, 2).unwrap();
    assert_eq!(
        (cols.shape(), &*cols.strides()),
        (&[3i64, 2][..], &[4i64, 1][..])
    );
    assert!(!cols.is_contiguous());
    // Writes through a view are seen by the source.
    // SAFETY: no other slice of this memory is alive in this block.
    unsafe { rows.as_mut_slice::<f32>().unwrap()[0] = 40.0 };
    assert_eq!(x.as_slice::<f32>().unwrap()[4], 40.0);
    // Views of views: offsets and bounds are the view's own.
    let right = x.as_strided(&[3, 2], &[4, 1], 2).unwrap();
    let last_column = right.as_strided(&[3], &[4], 1).unwrap();
    assert_eq!(last_column.data_ptr() as usize, x.data_ptr() as usize + 12);
    let err = right.as_strided(&[3], &[4], 2).unwrap_err();
    assert_eq!(
        err.message(),
        "Tensor::as_strided: the view (shape [3], strides [4], element offset 2) reaches \
         elements 2..=10 of a tensor whose elements are 0..=9"
    );
    // Negative strides: the first element is not the lowest address.
    let reversed = x.as_strided(&[4], &[-1], 3).unwrap();
    let back = reversed.as_strided(&[2], &[1], -3).unwrap();
    assert_eq!(back.data_ptr(), x.data_ptr());
    // Errors: kind and message.
    let cases: Vec<(tvm_ffi::Error, &str, &str)> = vec![
        (
            x.as_strided(&[2], &[1], 11).unwrap_err(),
            "ValueError",
            "Tensor::as_strided: the view (shape [2], strides [1], element offset 11) reaches \
             elements 11..=12 of a tensor whose elements are 0..=11",
        ),
        (
            x.as_strided(&[2, 2], &[1], 0).unwrap_err(),
            "ValueError",
            "Tensor::as_strided: shape [2, 2] has 2 dimensions but strides [1] has 1",
        ),
        (
            x.as_strided(&[-2], &[1], 0).unwrap_err(),
            "ValueError",
            "Tensor::as_strided: the view (shape [-2], strides [1], element offset 0) has an \
             invalid shape or overflows",
        ),
        (
            x.as_strided(&[0], &[1], 13).unwrap_err(),
            "ValueError",
            "Tensor::as_strided: the view (shape [0], strides [1], element offset 13) starts \
             outside the elements 0..=11 of the tensor",
        ),
        (
            x.as_strided(&[i64::MAX, 2], &[i64::MAX, i64::MIN], 0)
                .unwrap_err(),
            "ValueError",
            "Tensor::as_strided: the view (shape [9223372036854775807, 2], strides \
             [9223372036854775807, -9223372036854775808], element offset 0) reaches elements \
             -9223372036854775808..=85070591730234615838173535747377725442 of a tensor whose \
             elements are 0..=11",
        ),
        (
            x.narrow(2, 0, 1).unwrap_err(),
            "IndexError",
            "Tensor::narrow: dimension 2 is out of range for a tensor of 2 dimensions (shape \
             [3, 4])",
        ),
        (
            x.narrow(1, 3, 2).unwrap_err(),
            "IndexError",
            "Tensor::narrow: elements 3..5 of dimension 1 are out of range for extent 4",
        ),
        (
            x.narrow(1, -1, 1).unwrap_err(),
            "IndexError",
            "Tensor::narrow: elements -1..0 of dimension 1 are out of range for extent 4",
        ),
        (
            x.transpose(0, 2).unwrap_err(),
            "IndexError",
            "Tensor::transpose: dimension 2 is out of range for a tensor of 2 dimensions (shape \
             [3, 4])",
        ),
        (
            Tensor::from_bytes(vec![0; 2], &[4], DataType::INT4)
                .unwrap()
                .as_strided(&[2], &[1], 0)
                .unwrap_err(),
            "ValueError",
            "Tensor::as_strided: views of int4 are not supported: its elements do not start at \
             byte boundaries",
        ),
    ];
    for (err, kind, message) in cases {
        assert_eq!((err.kind().as_str(), err.message()), (kind, message));
    }
    // An empty tensor has only empty views at offset 0.
    let empty = Tensor::from_vec(Vec::<f32>::new(), &[0]).unwrap();
    assert_eq!(empty.as_strided(&[0, 3], &[3, 1], 0).unwrap().numel(), 0);
    assert_eq!(
        empty.as_strided(&[1], &[1], 0).unwrap_err().message(),
        "Tensor::as_strided: the view (shape [1], strides [1], element offset 0) reaches \
         elements 0..=0 of a tensor with no elements"
    );
    // The view and its source are released together: the Rust buffer is freed last.
    let before = live_rust_buffers();
    let source = Tensor::from_vec(vec![1u8; 8], &[8]).unwrap();
    let view = source.narrow(0, 2, 4).unwrap();
    drop(source);
    assert_eq!(live_rust_buffers(), before + 1);
    assert_eq!(view.as_slice::<u8>().unwrap(), &[1; 4]);
    drop(view);
    assert_eq!(live_rust_buffers(), before);
}

#[test]
fn views_cross_to_cpp() {
    let _g = serial();
    let x = Tensor::from_vec((0..6).map(|v| v as i64).collect(), &[2, 3]).unwrap();
    let t = x.transpose(0, 1).unwrap();
    let echoed: Tensor = global("testing.schema_id_tensor").call_as((&t,)).unwrap();
    assert!(echoed.as_object_ref().ptr_eq(t.as_object_ref()));
    assert_eq!(&*echoed.strides(), &[1, 3]);
    // Through DLPack: the strides travel with the data.
    let exported = t.to_dlpack().unwrap();
    assert_eq!(exported.view().shape(), &[3, 2]);
    assert_eq!(&*exported.view().strides(), &[1, 3]);
    assert_eq!(exported.view().data_ptr(), x.data_ptr());
}

/// A borrowed `DLTensor*` (a `TensorMut`'s or a `DLPackTensor`'s view) lives only for the call:
/// no path turns it into an owned value that outlives the call (which, cast back later, read a
/// freed DLTensor and let `&[T]` and `&mut [T]` over one buffer coexist).
#[test]
fn borrowed_dltensor_arguments_do_not_escape_the_call() {
    let _g = serial();
    let expect_type_error = |result: tvm_ffi::Result<Any>, what: &str| {
        let err = result
            .err()
            .unwrap_or_else(|| panic!("{what}: escaped as an owned value"));
        assert_eq!(
            err.kind().as_str(),
            "TypeError",
            "{what}: {}",
            err.message()
        );
        assert!(
            err.message().contains("DLTensor*"),
            "{what}: {}",
            err.message()
        );
    };
    let keep_packed = Function::from_packed(|args| args[0].to_owned());
    let keep_typed = Function::from_typed(|x: Any| x);
    let keep_in_array = Function::from_packed(|args| Ok(Any::new(Array::new([args[0]])?)));
    let echo_cpp = global("testing.echo");
    for round in 0..50 {
        let fresh = TensorMut::from_vec(vec![round as f32; 4], &[4]).unwrap();
        let exported = Tensor::from_vec(vec![1u8; 8], &[8])
            .unwrap()
            .to_dlpack()
            .unwrap();
        for view in [fresh.view(), exported.view()] {
            expect_type_error(keep_packed.call((view,)), "AnyView::to_owned");
            expect_type_error(keep_typed.call((view,)), "typed closure taking Any");
            expect_type_error(keep_in_array.call((view,)), "Array::new of the view");
            expect_type_error(echo_cpp.call((view,)), "C++ echo");
        }
        // A borrowed view still reaches the callee as a view.
        let sum = Function::from_packed(|args| {
            let x: TensorView = args[0].cast()?;
            Ok(Any::new(x.as_slice::<f32>()?.iter().sum::<f32>()))
        });
        assert_eq!(
            sum.call_as::<f32, _>((fresh.view(),)).unwrap(),
            4.0 * round as f32
        );
    }
    // Fields hold owned values: a view is refused by a setter, and one a C++ constructor
    // copied into an `Any` field anyway (C++ `Any(AnyView)` copies the pointer) is refused by
    // the getter, after the view's tensor is gone.
    let make = global("ffi.MakeObjectFromPackedArgs");
    let fresh = TensorMut::from_vec(vec![1.0f32; 4], &[4]).unwrap();
    let edges: ObjectRef<tvm_ffi::builtin::AnyObject> = make
        .call_as((
            "testing.TestDeepCopyEdges",
            "v_any",
            1,
            "v_obj",
            &shared_array(),
        ))
        .unwrap();
    expect_type_error(
        // SAFETY: only this thread uses `edges`.
        unsafe { edges.set_field("v_any", fresh.view()) }.map(|()| Any::none()),
        "set_field",
    );
    if let Ok(kept) = make.call_as::<ObjectRef<tvm_ffi::builtin::AnyObject>, _>((
        "testing.TestDeepCopyEdges",
        "v_any",
        fresh.view(),
        "v_obj",
        &shared_array(),
    )) {
        drop(fresh);
        expect_type_error(kept.get_field_any("v_any"), "get_field_any");
    }
    // The runtime's builtins keep their arguments as `Any` (C++ `Any(AnyView)` copies a
    // DLTensor* bitwise): a borrowed view passed to one is refused before the call, and a
    // C++ function that takes a view still receives it.
    for name in [
        "ffi.Array",
        "ffi.List",
        "ffi.Map",
        "ffi.Dict",
        "ffi.StructuralKey",
    ] {
        let fresh = TensorMut::from_vec(vec![7.0f32; 4], &[4]).unwrap();
        let f = global(name);
        let result = if name == "ffi.Map" || name == "ffi.Dict" {
            f.call(("key", fresh.view()))
        } else {
            f.call((fresh.view(),))
        };
        expect_type_error(result, name);
        let err = global(name).call((1_i64, fresh.view())).unwrap_err();
        assert!(err.message().contains("runtime builtin"), "{name}: {err}");
    }
    let fresh = TensorMut::from_vec(vec![7.0f32; 4], &[4]).unwrap();
    let list: tvm_ffi::List<Any> = global("ffi.List").call_as(()).unwrap();
    expect_type_error(
        // SAFETY: the list is this test thread's alone.
        unsafe { runtime_builtin("ffi.ListAppend") }.call((&list, fresh.view())),
        "ffi.ListAppend",
    );
    assert_eq!(list.len(), 0);
    global("testing.schema_tensor_view_input")
        .call((fresh.view(),))
        .unwrap();
    // The view of an `ffi.Tensor` is passed as the object, which may be kept.
    let shared = Tensor::from_vec(vec![3i32; 2], &[2]).unwrap();
    let kept: Tensor = keep_packed.call_as((shared.view(),)).unwrap();
    assert!(kept.as_object_ref().ptr_eq(shared.as_object_ref()));
}

fn shared_array() -> Array<i64> {
    Array::new([1, 2]).unwrap()
}
