//! The environment from Rust against the real libtvm_ffi: per-thread, per-device current
//! streams with scoped restore, the DLPack allocator slots, and signal checks without Python.
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Mutex, MutexGuard};

use tvm_ffi::env::{self, StreamHandle};
use tvm_ffi::sys::{self, DLManagedTensorVersioned, DLTensor};
use tvm_ffi::{ffi_func, DataType, Device, Function, TensorMut};

/// The allocator tests change process-wide state: run the tests of this file one at a time.
fn serial() -> MutexGuard<'static, ()> {
    static LOCK: Mutex<()> = Mutex::new(());
    LOCK.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

fn handle(address: usize) -> StreamHandle {
    address as StreamHandle
}

/// What a kernel does: read the current stream of its device.
#[ffi_func(name = "rust_env_tests.current_stream")]
fn current_stream_of(device: Device) -> i64 {
    env::current_stream(device) as usize as i64
}

#[test]
fn streams_are_scoped_per_device_and_restored_on_drop() {
    let _g = serial();
    let (gpu0, gpu1, rocm0) = (
        Device::cuda(0),
        Device::cuda(1),
        Device::new(sys::kDLROCM, 0),
    );
    assert!(env::current_stream(gpu0).is_null());
    {
        let outer = env::use_stream(gpu0, handle(0x1000)).unwrap();
        assert_eq!(outer.device(), gpu0);
        assert!(outer.previous().is_null());
        assert_eq!(env::current_stream(gpu0), handle(0x1000));
        // Another device id, another device type: unaffected.
        assert!(env::current_stream(gpu1).is_null());
        assert!(env::current_stream(rocm0).is_null());
        {
            let inner = env::use_stream(gpu0, handle(0x2000)).unwrap();
            assert_eq!(inner.previous(), handle(0x1000));
            let _other = env::use_stream(gpu1, handle(0x3000)).unwrap();
            assert_eq!(env::current_stream(gpu0), handle(0x2000));
            assert_eq!(env::current_stream(gpu1), handle(0x3000));
        }
        assert_eq!(
            env::current_stream(gpu0),
            handle(0x1000),
            "the outer stream is back"
        );
        assert!(env::current_stream(gpu1).is_null());
        // Another thread has streams of its own.
        let elsewhere = std::thread::spawn(move || env::current_stream(gpu0) as usize)
            .join()
            .unwrap();
        assert_eq!(elsewhere, 0);
    }
    assert!(env::current_stream(gpu0).is_null());
    // The raw setter returns what it replaced.
    assert!(env::set_stream(gpu1, handle(0x4000)).unwrap().is_null());
    assert_eq!(
        env::set_stream(gpu1, std::ptr::null_mut()).unwrap(),
        handle(0x4000)
    );
}

#[test]
fn a_function_called_through_the_abi_sees_the_callers_stream() {
    let _g = serial();
    let read = Function::get_global("rust_env_tests.current_stream").unwrap();
    assert_eq!(read.call_as::<i64, _>((Device::cuda(2),)).unwrap(), 0);
    let _guard = env::use_stream(Device::cuda(2), handle(0xBEEF)).unwrap();
    assert_eq!(read.call_as::<i64, _>((Device::cuda(2),)).unwrap(), 0xBEEF);
    assert_eq!(read.call_as::<i64, _>((Device::cuda(3),)).unwrap(), 0);
}

static ALLOCATIONS: AtomicUsize = AtomicUsize::new(0);

/// An allocator that always fails, through the runtime's error callback, and counts its calls.
unsafe extern "C" fn refusing_allocator(
    _prototype: *mut DLTensor,
    _out: *mut *mut DLManagedTensorVersioned,
    error_ctx: *mut std::ffi::c_void,
    set_error: Option<
        unsafe extern "C" fn(
            *mut std::ffi::c_void,
            *const std::ffi::c_char,
            *const std::ffi::c_char,
        ),
    >,
) -> i32 {
    ALLOCATIONS.fetch_add(1, Ordering::SeqCst);
    if let Some(set_error) = set_error {
        // SAFETY: the runtime's callback with its own context and two C strings.
        unsafe {
            set_error(
                error_ctx,
                c"MemoryError".as_ptr(),
                c"refused by the test".as_ptr(),
            )
        };
    }
    -1
}

#[test]
fn the_dlpack_allocator_is_set_for_a_scope_or_globally() {
    let _g = serial();
    let calls = ALLOCATIONS.load(Ordering::SeqCst);
    assert!(env::dlpack_allocator().is_none());
    {
        // SAFETY: the allocator refuses every request (returns -1 with an error set).
        let _guard = unsafe { env::use_dlpack_allocator(Some(refusing_allocator)) }.unwrap();
        assert_eq!(
            env::dlpack_allocator().map(|f| f as *const () as usize),
            Some(refusing_allocator as *const () as usize)
        );
        // TensorMut::empty goes through it, and its error reaches the caller.
        let err = TensorMut::empty(&[2], DataType::float(32), Device::cpu()).unwrap_err();
        assert_eq!(
            (err.kind().as_str(), err.message()),
            ("MemoryError", "refused by the test")
        );
        assert_eq!(ALLOCATIONS.load(Ordering::SeqCst), calls + 1);
        // Per thread: another thread allocates on the Rust heap.
        std::thread::spawn(|| {
            assert!(env::dlpack_allocator().is_none());
            TensorMut::empty(&[2], DataType::float(32), Device::cpu()).unwrap();
        })
        .join()
        .unwrap();
    }
    assert!(env::dlpack_allocator().is_none(), "restored on drop");
    TensorMut::empty(&[2], DataType::float(32), Device::cpu()).unwrap();

    // Globally: every thread sees it, until cleared.
    // SAFETY: the allocator refuses every request (returns -1 with an error set).
    let previous = unsafe { env::set_dlpack_allocator(Some(refusing_allocator), true) }.unwrap();
    assert!(previous.is_none());
    let seen = std::thread::spawn(|| env::dlpack_allocator().map(|f| f as *const () as usize))
        .join()
        .unwrap();
    assert_eq!(seen, Some(refusing_allocator as *const () as usize));
    // SAFETY: clearing the allocator installs none.
    unsafe { env::set_dlpack_allocator(None, true) }.unwrap();
    assert!(env::dlpack_allocator().is_none());
}

#[test]
fn check_signals_without_python_is_ok() {
    let _g = serial();
    for _ in 0..1000 {
        env::check_signals().unwrap();
    }
    assert_eq!(env::ENV_ERROR_ALREADY_SET, "EnvErrorAlreadySet");
}
