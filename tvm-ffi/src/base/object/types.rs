//! What makes a Rust type an object type: its identity in the runtime ([`RuntimeType`]), the
//! traits of payload types ([`ObjectType`], [`DerivedObject`], [`RustObject`],
//! [`ExternalType`]) and the ancestry relation [`IsA`] that upcasts check. Below the
//! references, the built-in payloads and the registry queries, which all use them.
use std::marker::PhantomData;
use std::ptr::NonNull;

use super::header::DropPayload;
use crate::abi::sys::TVMFFIObject;

/// Index and inheritance depth of a type in the runtime's registry.
///
/// ```
/// use tvm_ffi::builtin::{AnyObject, StringObj};
/// use tvm_ffi::ObjectType;
/// assert_eq!(AnyObject::runtime_type().depth, 0);
/// let string = StringObj::runtime_type();
/// assert_eq!(string.depth, 1);
/// assert_eq!(tvm_ffi::reflection::lookup_type("ffi.String"), Some(string));
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct RuntimeType {
    /// The type index stored in every object header.
    pub index: i32,
    /// Depth in the single-inheritance tree (`ffi.Object` is 0).
    pub depth: i32,
}

/// A payload type of a TVM-FFI object: the part of the object after the 24-byte header.
///
/// # Safety
/// Implementors guarantee that every object whose header carries this type's index (or the index
/// of a subtype) is laid out as `[TVMFFIObject header][Self]`, with `Self` placed at
/// offset 24 (right after the header), and that `Self` is only ever reached through shared
/// references. Payloads are shared between threads (`Send + Sync`, a bound): foreign code may
/// use an object from any thread. `#[derive(Object)]` implements this trait (and checks
/// `Send + Sync` field by field, so the error points at the offending field); the built-in
/// payloads are in [`builtin`](super::builtin).
/// (A declaration of a type defined elsewhere also implements [`ExternalType`].)
///
/// ```
/// use tvm_ffi::ObjectType;
/// #[derive(tvm_ffi::Object)]
/// #[ffi_type(key = "doc_examples.ObjectType")]
/// #[repr(C)]
/// pub struct Point { pub x: i64 }
/// assert_eq!(Point::type_key(), "doc_examples.ObjectType");
/// // The index is assigned when the defining library loads; the runtime knows it by the key.
/// assert_eq!(tvm_ffi::reflection::type_key_of_index(Point::type_index()), Point::TYPE_KEY);
/// ```
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not a TVM-FFI object type",
    label = "not an object type",
    note = "define object types with `#[derive(tvm_ffi::Object)]` (or declare a foreign one with `#[ffi_type(key = \"..\", external)]`)"
)]
pub unsafe trait ObjectType: Sized + Send + Sync + 'static {
    /// The registry key, e.g. `"my_ext.Point"`.
    const TYPE_KEY: &'static str;
    /// The runtime index and depth of this type.
    fn runtime_type() -> RuntimeType;
    /// Makes the object usable as a `Self` before an `ObjectRef<Self>` of it is made (casts,
    /// downcasts): `#[derive(Object)]` seals the object's construction state here, or reports
    /// why it cannot (a required field still unset). Since every `ObjectRef<Self>` passed it,
    /// `Deref` never checks and never fails. Not part of the public API.
    ///
    /// # Safety
    /// `_object` is a live instance of `Self` (the caller holds a reference).
    #[doc(hidden)]
    #[inline(always)]
    unsafe fn seal_for_use(_object: NonNull<TVMFFIObject>) -> Result<(), std::string::String> {
        Ok(())
    }
    /// The registry key (`"my_ext.Point"`).
    fn type_key() -> &'static str {
        Self::TYPE_KEY
    }
    /// The runtime type index (assigned when the defining library loaded).
    fn type_index() -> i32 {
        Self::runtime_type().index
    }
}

/// An object type with a parent other than itself (every type but `ffi.Object`).
///
/// # Safety
/// `Parent`'s payload must be a prefix of this type's payload (at the same offset), and the
/// runtime must register this type as a child of `Parent`: [`ObjectRef::upcast`](super::ObjectRef::upcast) trusts it.
/// `#[derive(Object)]` implements it from the `#[ffi(base)]` field, which it checks to be the
/// first field at offset 0.
///
/// ```
/// use tvm_ffi::object::DerivedObject;
/// use tvm_ffi::{ObjectRef, ObjectType};
/// #[derive(tvm_ffi::Object)]
/// #[ffi_type(key = "doc_examples.DerivedObjectBase")]
/// #[repr(C)]
/// pub struct Animal { pub legs: i64 }
/// #[derive(tvm_ffi::Object)]
/// #[ffi_type(key = "doc_examples.DerivedObject")]
/// #[repr(C)]
/// pub struct Dog { #[ffi(base)] pub base: Animal, pub age: i64 }
/// fn parent_key<T: DerivedObject>() -> &'static str { T::Parent::type_key() }
/// assert_eq!(parent_key::<Dog>(), "doc_examples.DerivedObjectBase");
/// let dog = ObjectRef::new(Dog { base: Animal { legs: 4 }, age: 3 });
/// let animal: ObjectRef<Animal> = dog.upcast();
/// assert_eq!(animal.legs, 4);
/// ```
pub unsafe trait DerivedObject: ObjectType {
    /// The parent type; its payload is a prefix of this type's payload.
    type Parent: ObjectType;
}

/// An object type that Rust code may allocate with [`ObjectRef::new`](super::ObjectRef::new): a type defined in Rust
/// (by `#[derive(Object)]`), as opposed to a built-in or a type declared from another language.
/// An `external` declaration of a type whose every byte is a declared field may implement it
/// too (the generated declarations of C++ types do, `tvm_ffi_build.rust_mirror`): Rust then
/// allocates objects of that type, which the defining code reads as its own.
///
/// # Safety
/// The runtime must be able to destroy such objects with the Rust deleter alone (for a type
/// defined elsewhere: its destructor releases nothing but its declared fields).
///
/// ```
/// use tvm_ffi::object::RustObject;
/// use tvm_ffi::ObjectRef;
/// #[derive(tvm_ffi::Object)]
/// #[ffi_type(key = "doc_examples.RustObject")]
/// #[repr(C)]
/// pub struct Counter { pub n: i64 }
/// fn boxed<T: RustObject>(payload: T) -> ObjectRef<T> { ObjectRef::new(payload) }
/// let counter = boxed(Counter { n: 3 });
/// assert_eq!((counter.n, counter.strong_count()), (3, 1));
/// ```
pub unsafe trait RustObject: ObjectType {
    /// The header's padding word of a new object (the construction state of Rust-defined
    /// types). Not part of the public API.
    #[doc(hidden)]
    const INITIAL_PADDING: u32 = 0;

    /// Drops the payload of `object` when its strong count reaches zero; `#[derive(Object)]`
    /// skips required fields that an abandoned, half-constructed object never got. Not part
    /// of the public API.
    ///
    /// # Safety
    /// `payload` is the payload of `object`, which no one can reach any more.
    #[doc(hidden)]
    #[inline(always)]
    unsafe fn drop_payload(object: NonNull<TVMFFIObject>, payload: *mut Self) {
        let _ = object;
        // SAFETY: the caller's contract.
        unsafe { std::ptr::drop_in_place(payload) }
    }
}

/// Drops the payload of a [`RustObject`] through [`RustObject::drop_payload`].
pub(crate) struct DropRustObject;

impl<T: RustObject> DropPayload<T> for DropRustObject {
    #[inline(always)]
    unsafe fn drop_payload(object: NonNull<TVMFFIObject>, payload: *mut T) {
        // SAFETY: the caller's contract.
        unsafe { T::drop_payload(object, payload) }
    }
}

/// Marker for the position of an ancestor in the parent chain (see [`IsA`]).
/// An example is in the [module docs](crate::object).
#[doc(hidden)] // machinery the compiler picks; users never name it
pub struct Here;
/// Marker for an ancestor further up the parent chain (see [`IsA`]).
/// An example is in the [module docs](crate::object).
#[doc(hidden)] // machinery the compiler picks; users never name it
pub struct There<I>(PhantomData<I>);

/// `Self` is `U` or derives from it. `I` is inferred; it encodes the path up the parent chain so
/// that the implementations do not overlap.
///
/// # Safety
/// Only the two blanket implementations in this crate exist; they are sound because every
/// [`DerivedObject`] payload starts with its parent's payload.
///
/// ```
/// use tvm_ffi::{IsA, ObjectRef};
/// #[derive(tvm_ffi::Object)]
/// #[ffi_type(key = "doc_examples.IsABase")]
/// #[repr(C)]
/// pub struct Shape { pub sides: i64 }
/// #[derive(tvm_ffi::Object)]
/// #[ffi_type(key = "doc_examples.IsA")]
/// #[repr(C)]
/// pub struct Square { #[ffi(base)] pub base: Shape, pub side: i64 }
/// // Accepts a `Shape` or any of its subtypes; `I` is inferred.
/// fn sides<T: IsA<Shape, I>, I>(shape: ObjectRef<T>) -> i64 { shape.upcast::<Shape, I>().sides }
/// assert_eq!(sides(ObjectRef::new(Square { base: Shape { sides: 4 }, side: 2 })), 4);
/// assert_eq!(sides(ObjectRef::new(Shape { sides: 3 })), 3);
/// ```
#[diagnostic::on_unimplemented(
    message = "cannot upcast `{Self}` to `{U}`: `{U}` is not an ancestor of `{Self}`",
    label = "`upcast` goes from a type to itself or one of its ancestors only",
    note = "the ancestors of a `#[derive(Object)]` type are its `#[ffi(base)]` parent, that \
            parent's parent, .., and `tvm_ffi::builtin::AnyObject`",
    note = "from a parent to a subtype or between unrelated types, `downcast` checks the \
            runtime type and returns an `Option`"
)]
pub unsafe trait IsA<U: ObjectType, I>: ObjectType {}
// SAFETY: reflexive.
unsafe impl<T: ObjectType> IsA<T, Here> for T {}
// SAFETY: the parent's payload is a prefix of T's payload (DerivedObject contract).
// `do_not_recommend`: a failed upcast is reported as the `IsA` bound of `upcast` (naming both
// types), not as the root type's missing parent at the end of the walk.
#[diagnostic::do_not_recommend]
unsafe impl<T, U, I> IsA<U, There<I>> for T
where
    T: DerivedObject,
    U: ObjectType,
    T::Parent: IsA<U, I>,
{
}

/// The trust statement of an `external` declaration (`#[ffi_type(key = "..", external)]`): a
/// Rust struct that mirrors an object type defined elsewhere (C++, another library), which
/// Rust then reads and writes in place.
///
/// At load, the declaration is checked against the runtime's reflection: the parent, the total
/// size, every field's name, offset, size, static type index and `type_schema` (a nullable C++
/// reference, or a C++ `Optional` of an object, must be declared `Option<..>`). A mismatch is a
/// load error naming the type, the field and both types. An `opaque` declaration
/// (`#[ffi_type(key = "..", external, opaque)]`) declares only its `#[ffi(base)]` parent, for a
/// type whose own memory Rust does not mirror: only its parent is checked, and Rust reads no
/// byte of its own. What the runtime does not record cannot be checked, and is what this
/// `unsafe impl` promises; `#[derive(Object)]` requires it of every `external` declaration.
///
/// # Safety
/// The declared fields must be used as the defining code uses them: a field C++ keeps
/// non-null may be declared without `Option` only where C++ never stores null in it (built-in
/// containers never do), a reference declared `Option<..>` and written `None` by Rust must be
/// one the defining code tolerates null in, and a `type_schema` the defining code registered
/// must describe what it stores (C++ `def_ro`/`def_rw` derive it from the field's type). The
/// defining code's writes of a field (its setters, which Python's attribute assignment calls,
/// and its own code) do not take Rust's locks, nor does the runtime's shallow copy of a Python
/// `@py_class` subclass instance read under them: no such write of a field holding a
/// reference may run while another thread reads or writes the field, from Rust or otherwise
/// (as C++ requires of its own threads).
///
/// ```
/// use tvm_ffi::{Any, Array, ObjectRef};
/// /// The runtime's `ffi.Array`, declared from Rust.
/// #[derive(tvm_ffi::Object)]
/// #[ffi_type(key = "ffi.Array", external)]
/// #[repr(C)]
/// pub struct ArrayDecl {}
/// // SAFETY: `ffi.Array` registers no fields, and this declaration mirrors none.
/// unsafe impl tvm_ffi::ExternalType for ArrayDecl {}
///
/// let array: ObjectRef<ArrayDecl> = Any::new(Array::new([1i64, 2]).unwrap()).cast().unwrap();
/// assert_eq!(array.type_key(), "ffi.Array");
/// ```
///
/// A declaration of a C++ class with fields (from `libtvm_ffi_testing`, which this crate
/// does not link):
///
/// ```ignore
/// #[derive(tvm_ffi::Object)]
/// #[ffi_type(key = "testing.TestCxxClassBase", external)]
/// #[repr(C)]
/// pub struct TestCxxClassBase {
///     pub v_i64: tvm_ffi::Rw<i64>,
///     pub v_i32: tvm_ffi::Rw<i32>,
/// }
/// // SAFETY: mirrors C++ `testing::TestCxxClassBase` (two plain integers).
/// unsafe impl tvm_ffi::ExternalType for TestCxxClassBase {}
/// ```
#[diagnostic::on_unimplemented(
    message = "the `external` declaration `{Self}` needs `unsafe impl tvm_ffi::ExternalType for {Self} {{}}`",
    label = "declared `external` without the `unsafe impl`",
    note = "an `external` declaration mirrors a type defined elsewhere; the load-time checks cover its layout and field types, the `unsafe impl` states the rest (see `tvm_ffi::ExternalType`)"
)]
pub unsafe trait ExternalType: ObjectType {}

/// Compile-time check used by generated code for `external` declarations.
#[doc(hidden)]
pub const fn assert_external_type<T: ExternalType>() {}
