//! `examples/cuda` without a GPU: its argument checks on tensors labelled as CUDA memory (never
//! read), and the error every function raises when the CUDA driver cannot be loaded. The GPU
//! path itself is tested from Python with PyTorch where a GPU exists
//! (`tests/python/test_cuda_example.py`).
use tvm_ffi::sys::DLTensor;
use tvm_ffi::{DataType, Device, Tensor, TensorView};

// Links the example: its `#[ffi_func]`s register in this binary.
use tvm_ffi_example_cuda as _;

use tvm_ffi_tests::global;

/// A DLTensor labelled as device memory at a fake address: the checks read only its metadata.
fn device_tensor(
    device: Device,
    dtype: DataType,
    shape: &mut [i64],
    strides: &mut [i64],
) -> DLTensor {
    DLTensor {
        data: 0x7000_0000usize as *mut std::ffi::c_void,
        device: device.0,
        ndim: shape.len() as i32,
        dtype: dtype.0,
        shape: shape.as_mut_ptr(),
        strides: strides.as_mut_ptr(),
        byte_offset: 0,
    }
}

/// Whether this machine has a CUDA driver the example could load.
fn driver_present() -> bool {
    // SAFETY: probing the NVIDIA driver library, as the example itself does.
    unsafe { dlopen_probe(tvm_ffi_example_cuda::LIBCUDA) }
}

unsafe fn dlopen_probe(name: &str) -> bool {
    extern "C" {
        fn dlopen(filename: *const std::ffi::c_char, flags: i32) -> *mut std::ffi::c_void;
    }
    let c = std::ffi::CString::new(name).unwrap();
    // SAFETY: dlopen with a valid name, RTLD_LAZY; the handle is kept (never unloaded).
    !unsafe { dlopen(c.as_ptr(), 1) }.is_null()
}

#[test]
fn arguments_are_checked_before_the_driver_is_used() {
    let add = global("cuda_example.add");
    let f32 = DataType::float(32);
    let cpu = Tensor::from_vec(vec![0f32; 4], &[4]).unwrap();
    let (mut s1, mut st1) = ([4i64], [1i64]);
    let (mut s2, mut st2) = ([4i64], [1i64]);
    let (mut s3, mut st3) = ([4i64], [1i64]);
    let (mut s4, mut st4) = ([4i64], [2i64]);
    let (mut s5, mut st5) = ([2i64], [1i64]);
    let x = device_tensor(Device::cuda(0), f32, &mut s1, &mut st1);
    let on_gpu1 = device_tensor(Device::cuda(1), f32, &mut s2, &mut st2);
    let doubles = device_tensor(Device::cuda(0), DataType::float(64), &mut s3, &mut st3);
    let strided = device_tensor(Device::cuda(0), f32, &mut s4, &mut st4);
    let short = DLTensor {
        data: 0x7100_0000usize as *mut _,
        ..device_tensor(Device::cuda(0), f32, &mut s5, &mut st5)
    };
    // SAFETY: shapes and strides outlive the views; the data is never read.
    let [x, on_gpu1, doubles, strided, short] = [&x, &on_gpu1, &doubles, &strided, &short]
        .map(|dl| unsafe { TensorView::from_dltensor(dl) });
    let cases = [
        (
            add.call((cpu.view(), x, x)).unwrap_err(),
            "ValueError",
            "`x` must be a cuda tensor, got a tensor on cpu:0",
        ),
        (
            add.call((doubles, x, x)).unwrap_err(),
            "TypeError",
            "`x` must have dtype float32, got float64",
        ),
        (
            add.call((strided, x, x)).unwrap_err(),
            "ValueError",
            "`x` must be contiguous, got strides [2] for shape [4]",
        ),
        (
            add.call((x, on_gpu1, x)).unwrap_err(),
            "ValueError",
            "`y` must be on cuda:0, got cuda:1",
        ),
        (
            add.call((x, x, short)).unwrap_err(),
            "ValueError",
            "`out` must have shape [4], got [2]",
        ),
        (
            add.call((x, x, x)).unwrap_err(),
            "ValueError",
            "`out` must not overlap `x` in memory",
        ),
        (
            global("cuda_example.scale")
                .call((cpu.view(), 2.0))
                .unwrap_err(),
            "ValueError",
            "`x` must be a cuda tensor, got a tensor on cpu:0",
        ),
    ];
    for (err, kind, message) in cases {
        assert_eq!((err.kind().as_str(), err.message()), (kind, message));
    }
}

#[test]
fn without_a_driver_every_function_raises_a_clear_error() {
    if driver_present() {
        return; // a GPU machine: the Python test runs the kernels instead
    }
    let (mut s1, mut st1) = ([4i64], [1i64]);
    let (mut s2, mut st2) = ([4i64], [1i64]);
    let (mut s3, mut st3) = ([4i64], [1i64]);
    let dls = [
        device_tensor(Device::cuda(0), DataType::float(32), &mut s1, &mut st1),
        DLTensor {
            data: 0x7100_0000usize as *mut _,
            ..device_tensor(Device::cuda(0), DataType::float(32), &mut s2, &mut st2)
        },
        DLTensor {
            data: 0x7200_0000usize as *mut _,
            ..device_tensor(Device::cuda(0), DataType::float(32), &mut s3, &mut st3)
        },
    ];
    // SAFETY: shapes and strides outlive the views; the data is never read.
    let [x, y, out] =
        [&dls[0], &dls[1], &dls[2]].map(|dl| unsafe { TensorView::from_dltensor(dl) });
    let prefix = "cannot load the CUDA driver libcuda.so.1 (is an NVIDIA GPU driver installed?): ";
    for err in [
        global("cuda_example.add").call((x, y, out)).unwrap_err(),
        global("cuda_example.scale").call((x, 2.0)).unwrap_err(),
        global("cuda_example.driver_version").call(()).unwrap_err(),
    ] {
        assert_eq!(err.kind().as_str(), "RuntimeError");
        assert!(err.message().starts_with(prefix), "{}", err.message());
    }
}
