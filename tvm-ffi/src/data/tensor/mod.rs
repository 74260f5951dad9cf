//! Tensors: [`Tensor`] (the runtime's reference-counted `ffi.Tensor`), [`TensorView`] (a
//! borrowed tensor argument, the C++ `TensorView` pattern), [`TensorMut`] (a new tensor that Rust
//! fills before sharing it) and [`DLPackTensor`] (the DLPack exchange form).
//!
//! An `ffi.Tensor` is an object header followed by a `DLTensor` (data pointer, device, dtype,
//! shape, strides, byte offset). A NumPy array or a PyTorch tensor passed from Python arrives
//! as such an object that points at the caller's memory: nothing is copied.
//!
//! ```
//! use tvm_ffi::{DataType, Device, Tensor};
//! let t = Tensor::from_vec(vec![1.0f32, 2.0, 3.0, 4.0, 5.0, 6.0], &[2, 3]).unwrap();
//! assert_eq!(t.shape(), &[2, 3]);
//! assert_eq!(&*t.strides(), &[3, 1]);
//! assert_eq!(t.dtype(), DataType::float(32));
//! assert_eq!(t.device(), Device::cpu());
//! assert_eq!(t.as_slice::<f32>().unwrap()[4], 5.0);
//! let err = t.as_slice::<f64>().unwrap_err();
//! assert_eq!(err.message(), "expected a contiguous CPU tensor of dtype float64, got float32 on cpu:0");
//! ```
//!
//! # Who may write tensor memory
//!
//! Tensor memory is shared. A tensor from Python aliases the caller's array, every clone of a
//! [`Tensor`] and every [`TensorView`] share one buffer, and other languages may hold it. Rust
//! references promise more than that sharing can guarantee by itself, so access is split:
//!
//! - **Reading** ([`TensorView::as_slice`], [`Tensor::as_slice`]) is safe. Safe Rust itself
//!   never writes shared tensor memory (the only safe writer is [`TensorMut`], whose memory
//!   nothing else can reach), so what remains are writes by other code, which Rust cannot see.
//!   Reading relies on the convention every TVM-FFI and DLPack kernel relies on (C++
//!   `TensorView` included): while a function runs, its caller does not write the tensors it
//!   passed, nor does another thread. The Rust side of the same rule: do not keep a slice of a
//!   tensor across a call of a function that writes that tensor (an output argument). This is
//!   the trade rust-numpy makes for its safe read-only arrays, which Python code can still
//!   write.
//! - **Writing shared memory in place** ([`TensorView::as_mut_slice`],
//!   [`Tensor::as_mut_slice`]) is `unsafe`. Rust cannot see the other views of that memory:
//!   Python may pass one array as two arguments (`add_one(a, a)`), and two copies of a view give
//!   two `&mut` slices. The caller promises that nothing else uses the elements while the slice
//!   lives; [`TensorCheck::disjoint_from`] checks arguments against each other so that the
//!   promise rests on a check. This is what C++ kernels do with a raw `float*`, with the
//!   aliasing question made explicit.
//! - **New tensors** are [`TensorMut`]: memory allocated for it alone, writable through `&mut
//!   self` without `unsafe`, then frozen into a shared [`Tensor`] ([`TensorMut::freeze`]) or
//!   returned directly.
//!
//! `bool` tensors have no typed slices: a byte other than 0 or 1 written by foreign code would
//! be an invalid Rust `bool`. Fresh CPU memory is zero-filled, because Rust must not read
//! uninitialised memory.
//!
//! # Allocation
//!
//! [`TensorMut::empty`] (and [`Tensor::empty`]) allocate through the environment's DLPack
//! allocator when one is set (`TVMFFIEnvGetDLPackManagedTensorAllocator`; tvm_ffi's PyTorch
//! integration installs PyTorch's, so that kernels allocate from its caching allocator), else on
//! the Rust heap (CPU only). A Rust
//! buffer is handed to the runtime as a `DLManagedTensorVersioned` whose deleter frees it when
//! the last holder, in any language, drops the tensor; [`live_rust_buffers`] counts those
//! buffers.
mod accessors;
mod check;
mod convert;
mod dlpack;
mod element;
mod layout;
mod mutable;
mod owned;
mod rust_memory;
mod strided;
mod view;

pub use check::TensorCheck;
pub use dlpack::DLPackTensor;
pub use element::Element;
pub use mutable::TensorMut;
pub use owned::Tensor;
pub use rust_memory::live_rust_buffers;
pub use view::TensorView;
