//! Payload types of the runtime's built-in objects, with their static type indices.
//!
//! These are the `T` in `ObjectRef<T>` for objects the runtime itself defines; the friendly
//! wrappers (`String`, `Function`, `Array` ...) of the higher layers are built on them.
//!
//! ```
//! use tvm_ffi::builtin::{ArrayObj, AnyObject, StringObj};
//! use tvm_ffi::{Array, ObjectRef, ObjectType};
//! assert_eq!(ArrayObj::TYPE_KEY, "ffi.Array");
//! let array: ObjectRef<ArrayObj> = Array::new([1i64, 2, 3]).unwrap().into_object_ref();
//! assert_eq!(array.type_index(), ArrayObj::type_index());
//! let root: ObjectRef<AnyObject> = array.into();
//! assert!(root.is_instance::<ArrayObj>() && !root.is_instance::<StringObj>());
//! ```
use super::types::{DerivedObject, ObjectType, RuntimeType};
use crate::abi::sys;

macro_rules! builtin_object {
    ($(#[$meta:meta])* $name:ident { $($field:ident : $ty:ty),* } = $key:literal, $index:path) => {
        $(#[$meta])*
        #[doc = ""]
        #[doc = "An example is in the [module docs](self)."]
        #[repr(C)]
        pub struct $name {
            $(#[doc = concat!("The `", stringify!($field), "` cell of the runtime's layout.")]
            pub $field: $ty,)*
        }
        // SAFETY: the runtime lays these objects out as header + cell (c_api.h), and they are
        // immutable or internally synchronised once shared.
        unsafe impl ObjectType for $name {
            const TYPE_KEY: &'static str = $key;
            #[inline]
            fn runtime_type() -> RuntimeType {
                RuntimeType { index: $index, depth: 1 }
            }
        }
        // SAFETY: the runtime registers every built-in type as a child of `ffi.Object`, whose
        // payload is empty.
        unsafe impl DerivedObject for $name {
            type Parent = AnyObject;
        }
        // SAFETY: the cells hold raw pointers owned by the object, freed by the runtime's deleter;
        // the runtime shares these objects across threads.
        unsafe impl Send for $name {}
        // SAFETY: as above.
        unsafe impl Sync for $name {}
    };
}

/// The root of the object hierarchy, `ffi.Object` (payload: nothing beyond the header).
///
/// An example is in the [module docs](self).
#[repr(C)]
#[derive(Debug)]
pub struct AnyObject {
    _private: [u8; 0],
}

// SAFETY: every object starts with the header; the root payload is empty.
unsafe impl ObjectType for AnyObject {
    const TYPE_KEY: &'static str = "ffi.Object";
    #[inline]
    fn runtime_type() -> RuntimeType {
        RuntimeType {
            index: sys::type_index::kTVMFFIObject,
            depth: 0,
        }
    }
}

builtin_object!(
    /// Payload of `ffi.String` (heap strings longer than 7 bytes).
    StringObj { bytes: sys::TVMFFIByteArray } = "ffi.String", sys::type_index::kTVMFFIStr
);
builtin_object!(
    /// Payload of `ffi.Bytes`.
    BytesObj { bytes: sys::TVMFFIByteArray } = "ffi.Bytes", sys::type_index::kTVMFFIBytes
);
/// Payload of `ffi.Error`. Read it through [`Error`](crate::Error): the runtime rewrites the
/// backtrace of a shared error in place, without synchronisation, whenever Python re-raises it,
/// so the cell is not exposed (a safe read of it could race with that rewrite).
///
/// An example is in the [module docs](self).
#[repr(C)]
pub struct ErrorObj {
    /// The runtime's error cell; the backtrace and its update function change behind shared
    /// references (hence the `UnsafeCell`), the kind and message never do.
    pub(crate) cell: std::cell::UnsafeCell<sys::TVMFFIErrorCell>,
}
// SAFETY: the runtime lays error objects out as header + cell (c_api.h).
unsafe impl ObjectType for ErrorObj {
    const TYPE_KEY: &'static str = "ffi.Error";
    #[inline]
    fn runtime_type() -> RuntimeType {
        RuntimeType {
            index: sys::type_index::kTVMFFIError,
            depth: 1,
        }
    }
}
// SAFETY: the runtime registers `ffi.Error` as a child of `ffi.Object`, whose payload is empty.
unsafe impl DerivedObject for ErrorObj {
    type Parent = AnyObject;
}
// SAFETY: the cell holds pointers owned by the object, freed by the runtime's deleter; the
// runtime shares errors across threads, and Rust reads only the immutable kind and message
// through shared references (the backtrace once, see `crate::Error`).
unsafe impl Send for ErrorObj {}
// SAFETY: as above.
unsafe impl Sync for ErrorObj {}
builtin_object!(
    /// Payload of `ffi.Function`.
    FunctionObj { cell: sys::TVMFFIFunctionCell } = "ffi.Function", sys::type_index::kTVMFFIFunction
);
builtin_object!(
    /// Payload of `ffi.Shape`.
    #[derive(Clone, Copy)]
    ShapeObj { cell: sys::TVMFFIShapeCell } = "ffi.Shape", sys::type_index::kTVMFFIShape
);
builtin_object!(
    /// Payload of `ffi.Tensor`: a `DLTensor`.
    TensorObj { dl_tensor: sys::DLTensor } = "ffi.Tensor", sys::type_index::kTVMFFITensor
);
builtin_object!(
    /// Payload of `ffi.Array`: a sequence of `TVMFFIAny` elements.
    ArrayObj { seq: sys::TVMFFISeqCell } = "ffi.Array", sys::type_index::kTVMFFIArray
);
builtin_object!(
    /// Payload of `ffi.Map` (opaque here: `container::Map` reads the runtime's hash-map layout
    /// through raw pointers).
    MapObj { } = "ffi.Map", sys::type_index::kTVMFFIMap
);
builtin_object!(
    /// Payload of `ffi.List` (opaque: a list is mutated in place by any language, so no Rust
    /// reference may cover its cell; `container::List` reads it through raw pointers).
    ListObj { } = "ffi.List", sys::type_index::kTVMFFIList
);
builtin_object!(
    /// Payload of `ffi.Dict` (opaque: a dict is mutated in place by any language, so no Rust
    /// reference may cover its storage; `container::Dict` reads it through raw pointers).
    DictObj { } = "ffi.Dict", sys::type_index::kTVMFFIDict
);
builtin_object!(
    /// Payload of `ffi.BigInt`: the word count, then the two's-complement words (opaque here;
    /// `value::BigInt` reads them).
    BigIntObj { } = "ffi.BigInt", sys::type_index::kTVMFFIBigInt
);
builtin_object!(
    /// Payload of `ffi.Module` (opaque).
    ModuleObj { } = "ffi.Module", sys::type_index::kTVMFFIModule
);
