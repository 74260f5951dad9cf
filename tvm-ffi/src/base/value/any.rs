//! [`Any`] (owning) and [`AnyView`] (borrowing): the 16-byte tagged union of the ABI, and the
//! conversion traits through which Rust values enter and leave it.
//!
//! Three ways to get a value out, as in C++:
//! - [`Any::cast`]: the value or a `TypeError` ("Cannot convert from type `int` to `str`");
//! - [`Any::checked_cast`]: `Option`, with the documented coercions (int to float, bool to int,
//!   raw and heap strings to `String`, ...);
//! - [`Any::as_exact`]: `Option`, only when the stored type matches exactly.
//!
//! Integers are range-checked: a value that does not fit the requested Rust type is a mismatch,
//! never a silent truncation.
use std::marker::PhantomData;
use std::mem::ManuallyDrop;
use std::ptr::NonNull;

use crate::abi::sys::{self, type_index as ti, TVMFFIAny, TVMFFIAnyValue};
use crate::base::error::{Error, Result};
use crate::base::object::{self, type_info, ObjectRef, ObjectType};

/// An owning value of any FFI type; releases its object reference on drop.
///
/// ```
/// use tvm_ffi::Any;
/// let value = Any::new(3i64);
/// assert_eq!(value.type_key(), "int");
/// assert_eq!(value.cast::<i64>().unwrap(), 3);
/// assert_eq!(value.checked_cast::<f64>(), Some(3.0)); // int converts to float
/// assert_eq!(value.as_exact::<f64>(), None); // but is not one
/// let err = value.cast::<&str>().unwrap_err();
/// assert_eq!(err.to_string(), "TypeError: Cannot convert from type `int` to `str`");
/// ```
#[repr(transparent)]
pub struct Any {
    pub(super) raw: TVMFFIAny,
}

/// A borrowed value of any FFI type: copying it never touches reference counts.
///
/// ```
/// use tvm_ffi::{Any, AnyView};
/// let owned = Any::new("a string longer than seven bytes");
/// let view: AnyView<'_> = owned.view(); // borrows `owned`
/// let copy = view; // a plain copy
/// assert_eq!(view.cast::<&str>().unwrap(), copy.cast::<&str>().unwrap());
/// assert!(AnyView::none().is_none() && !copy.is_none());
/// let again: Any = copy.to_owned().unwrap(); // a new reference
/// assert_eq!(again.cast::<std::string::String>().unwrap(), "a string longer than seven bytes");
/// ```
#[repr(transparent)]
#[derive(Clone, Copy)]
pub struct AnyView<'a> {
    pub(super) raw: TVMFFIAny,
    _borrow: PhantomData<&'a ()>,
}

// SAFETY: an Any owns either plain data or a strong object reference; objects are thread-safe.
unsafe impl Send for Any {}
// SAFETY: as above; shared access only reads.
unsafe impl Sync for Any {}
// SAFETY: a view is a plain copy of such a value.
unsafe impl Send for AnyView<'_> {}
// SAFETY: as above.
unsafe impl Sync for AnyView<'_> {}

#[inline]
pub(crate) fn is_object_index(index: i32) -> bool {
    index >= ti::kTVMFFIStaticObjectBegin
}

#[inline]
pub(crate) const fn pod(type_index: i32, value: TVMFFIAnyValue) -> TVMFFIAny {
    TVMFFIAny {
        type_index,
        zero_padding: 0,
        value,
    }
}

impl Any {
    /// The `None` value.
    pub const fn none() -> Any {
        Any {
            raw: TVMFFIAny::NONE,
        }
    }

    /// Converts a Rust value.
    ///
    /// ```
    /// use tvm_ffi::Any;
    /// assert_eq!(Any::new(1.5f64).type_key(), "float");
    /// assert_eq!(Any::new("text").cast::<String>().unwrap(), "text");
    /// assert!(Any::new(None::<i64>).is_none());
    /// ```
    pub fn new<T: IntoAny>(value: T) -> Any {
        value.into_any()
    }

    /// An opaque pointer value (`void*`, type index 4; `None` for a null pointer).
    ///
    /// The runtime and foreign callees trust opaque pointers: `ffi.FunctionFromExternC` calls
    /// the function and the deleter it is given, C++ functions taking `void*` dereference it,
    /// and nothing can check a pointer. Reading one back out (`cast::<*mut c_void>()`) is safe.
    ///
    /// # Safety
    /// Every function the value reaches (directly, or kept in a container, field or closure)
    /// must be able to use `ptr` as that function documents for its `void*` parameter: a
    /// pointer it dereferences must be valid for that use and outlive it, a pointer it calls
    /// must be a function of the expected signature.
    ///
    /// ```
    /// use std::ffi::c_void;
    /// let mut data = 7u64;
    /// // SAFETY: the value reaches no function that dereferences it.
    /// let value = unsafe { tvm_ffi::Any::from_opaque_ptr(&mut data as *mut u64 as *mut c_void) };
    /// assert_eq!(value.type_key(), "void*");
    /// ```
    pub unsafe fn from_opaque_ptr(ptr: *mut std::ffi::c_void) -> Any {
        if ptr.is_null() {
            Any::none()
        } else {
            Any {
                raw: pod(ti::kTVMFFIOpaquePtr, TVMFFIAnyValue { v_ptr: ptr }),
            }
        }
    }

    /// Takes ownership of a raw value.
    ///
    /// # Safety
    /// `raw` must be a valid owned value (an object index with a strong reference the caller
    /// gives up, or plain data).
    #[inline]
    pub unsafe fn from_raw(raw: TVMFFIAny) -> Any {
        Any { raw }
    }

    /// Gives up ownership of the raw value.
    #[inline]
    pub fn into_raw(self) -> TVMFFIAny {
        ManuallyDrop::new(self).raw
    }

    /// The raw value, still owned by `self`.
    #[inline]
    pub fn as_raw(&self) -> &TVMFFIAny {
        &self.raw
    }

    /// A borrowed view.
    #[inline]
    pub fn view(&self) -> AnyView<'_> {
        AnyView {
            raw: self.raw,
            _borrow: PhantomData,
        }
    }

    /// Borrows as a view in place (same layout).
    #[inline]
    pub fn as_view(&self) -> &AnyView<'_> {
        // SAFETY: both are repr(transparent) over TVMFFIAny.
        unsafe { &*(self as *const Any as *const AnyView<'_>) }
    }

    /// Borrows a slice of values as views in place.
    #[inline]
    pub(crate) fn slice_as_views(values: &[Any]) -> &[AnyView<'_>] {
        // SAFETY: Any and AnyView are both repr(transparent) over TVMFFIAny; the views borrow
        // the slice, which owns what they point to.
        unsafe { AnyView::slice_from_raw(values.as_ptr() as *const TVMFFIAny, values.len()) }
    }

    /// The stored type index.
    #[inline]
    pub fn type_index(&self) -> i32 {
        self.raw.type_index
    }

    /// The key of the stored type (`"int"`, `"ffi.String"`, `"my_ext.Point"` ...).
    pub fn type_key(&self) -> &'static str {
        self.view().type_key()
    }

    /// Whether the value is `None`.
    #[inline]
    pub fn is_none(&self) -> bool {
        self.raw.type_index == ti::kTVMFFINone
    }

    /// Converts to `T` or fails with a `TypeError` in the runtime's words.
    ///
    /// ```
    /// use tvm_ffi::{Any, ErrorKind};
    /// let value = Any::new(7i64);
    /// assert_eq!(value.cast::<i64>().unwrap(), 7);
    /// assert_eq!(value.cast::<u8>().unwrap(), 7); // in range
    /// let err = Any::new(300i64).cast::<u8>().unwrap_err(); // never truncated
    /// assert_eq!(err.kind(), ErrorKind::Type);
    /// ```
    #[inline]
    pub fn cast<'a, T: FromAny<'a>>(&'a self) -> Result<T> {
        self.as_view().cast()
    }

    /// Converts to `T` with the documented coercions, or `None`.
    ///
    /// ```
    /// use tvm_ffi::Any;
    /// assert_eq!(Any::new(true).checked_cast::<i64>(), Some(1)); // bool to int
    /// assert_eq!(Any::new(2i64).checked_cast::<f64>(), Some(2.0)); // int to float
    /// assert_eq!(Any::new(2.5f64).checked_cast::<i64>(), None); // never float to int
    /// ```
    pub fn checked_cast<'a, T: FromAny<'a>>(&'a self) -> Option<T> {
        T::from_any(self.as_view())
    }

    /// `Some` only when the stored type is exactly `T` (no conversion).
    ///
    /// ```
    /// use tvm_ffi::Any;
    /// assert_eq!(Any::new(2i64).as_exact::<i64>(), Some(2));
    /// assert_eq!(Any::new(2i64).as_exact::<f64>(), None); // no int to float here
    /// ```
    pub fn as_exact<'a, T: FromAny<'a>>(&'a self) -> Option<T> {
        T::from_any_exact(self.as_view())
    }
}

impl Default for Any {
    fn default() -> Self {
        Any::none()
    }
}

impl Clone for Any {
    #[inline]
    fn clone(&self) -> Self {
        if is_object_index(self.raw.type_index) {
            // SAFETY: object indices carry a live, non-null object pointer we hold a reference to.
            unsafe { object::inc_ref(NonNull::new_unchecked(self.raw.value.v_obj)) };
        }
        Any { raw: self.raw }
    }
}

impl Drop for Any {
    #[inline]
    fn drop(&mut self) {
        if is_object_index(self.raw.type_index) {
            // SAFETY: we own one strong reference to the object.
            unsafe { object::dec_ref(NonNull::new_unchecked(self.raw.value.v_obj)) };
        }
    }
}

impl<'a> AnyView<'a> {
    /// The `None` view.
    pub const fn none() -> AnyView<'static> {
        AnyView {
            raw: TVMFFIAny::NONE,
            _borrow: PhantomData,
        }
    }

    /// Wraps a raw borrowed value.
    ///
    /// # Safety
    /// Whatever `raw` points to must stay alive and unchanged for `'a`.
    #[inline]
    pub unsafe fn from_raw(raw: TVMFFIAny) -> AnyView<'a> {
        AnyView {
            raw,
            _borrow: PhantomData,
        }
    }

    /// Views the raw form of a value that `raw`'s owner keeps alive (a `String`, `Bytes`,
    /// `BigInt`, `Any`, ...): the view borrows the owner.
    ///
    /// # Safety
    /// `raw` must be the owning representation of a valid value (as in an [`Any`]), unchanged
    /// for `'a`.
    #[inline]
    pub(crate) unsafe fn of_owned_raw(raw: &'a TVMFFIAny) -> AnyView<'a> {
        AnyView {
            raw: *raw,
            _borrow: PhantomData,
        }
    }

    /// The view of an object reference, borrowing it.
    #[inline]
    pub(crate) fn of_object<T: ObjectType>(obj: &'a ObjectRef<T>) -> AnyView<'a> {
        AnyView {
            raw: pod(
                obj.type_index(),
                TVMFFIAnyValue {
                    v_obj: obj.as_raw().as_ptr(),
                },
            ),
            _borrow: PhantomData,
        }
    }

    /// The view of a plain value (no object, no heap storage): it borrows nothing.
    #[inline]
    pub(crate) fn of_plain<T: crate::base::value::PlainValue>(value: T) -> AnyView<'static> {
        let any = ManuallyDrop::new(value.into_any());
        debug_assert!(!is_object_index(any.raw.type_index));
        AnyView {
            raw: any.raw,
            _borrow: PhantomData,
        }
    }

    /// Views a slice of raw arguments.
    ///
    /// # Safety
    /// `args` must point to `len` valid values that outlive `'a` (or be dangling with `len == 0`).
    #[inline]
    pub unsafe fn slice_from_raw(args: *const TVMFFIAny, len: usize) -> &'a [AnyView<'a>] {
        if len == 0 {
            &[]
        } else {
            // SAFETY: AnyView is repr(transparent) over TVMFFIAny; validity from the caller.
            unsafe { std::slice::from_raw_parts(args as *const AnyView<'a>, len) }
        }
    }

    /// The raw value.
    #[inline]
    pub fn as_raw(&self) -> &TVMFFIAny {
        &self.raw
    }

    /// The stored type index.
    #[inline]
    pub fn type_index(&self) -> i32 {
        self.raw.type_index
    }

    /// The key of the stored type, as the runtime names it in messages.
    pub fn type_key(&self) -> &'static str {
        type_info::type_key_of_index(self.raw.type_index)
    }

    /// Whether the value is `None`.
    #[inline]
    pub fn is_none(&self) -> bool {
        self.raw.type_index == ti::kTVMFFINone
    }

    /// Makes an owning copy (increments object counts; materialises raw strings and byte
    /// arrays, takes the object of an rvalue reference).
    ///
    /// A borrowed `DLTensor*` (type index 7, what C++ passes for a `TensorView` and Rust for
    /// [`TensorMut::view`](crate::TensorMut::view)) cannot be owned: its DLTensor and data live
    /// only for the call. That is a `TypeError`, as C++ refuses to hold a `DLTensor*` in an
    /// `Any`; take the argument as a [`TensorView`](crate::TensorView) and copy it, or pass an
    /// `ffi.Tensor`.
    ///
    /// ```
    /// use tvm_ffi::{Any, Function, TensorMut, DataType, Device};
    /// let keep = Function::from_packed(|args| args[0].to_owned());
    /// let t = TensorMut::empty(&[2], DataType::float(32), Device::cpu()).unwrap();
    /// let err = keep.call((t.view(),)).unwrap_err();
    /// assert_eq!(err.kind(), "TypeError");
    /// ```
    pub fn to_owned(&self) -> Result<Any> {
        let index = self.raw.type_index;
        if is_object_index(index) {
            // SAFETY: a live object borrowed for 'a.
            unsafe { object::inc_ref(NonNull::new_unchecked(self.raw.value.v_obj)) };
            Ok(Any { raw: self.raw })
        } else if index == ti::kTVMFFIDLTensorPtr {
            Err(borrowed_tensor_error())
        // SAFETY: the view's value, alive for 'a.
        } else if let Some(slot) = unsafe { super::moved::moved_slot(&self.raw) } {
            // Taken atomically here (the runtime's own move is a plain read and write, and
            // views are `Send`): of several threads, one owns the reference.
            match slot.take() {
                Some(object) => Ok(Any {
                    // SAFETY: the object is alive: its reference is now ours, and the `Any`
                    // takes it over.
                    raw: unsafe { super::moved::object_value(object) },
                }),
                None => Err(Error::value_error("moved argument already taken")),
            }
        } else if matches!(index, ti::kTVMFFIRawStr | ti::kTVMFFIByteArrayPtr) {
            let mut out = TVMFFIAny::NONE;
            // SAFETY: valid view and output slot.
            let rc = unsafe { sys::TVMFFIAnyViewToOwnedAny(&self.raw, &mut out) };
            if rc != 0 {
                return Err(Error::from_return_code(rc));
            }
            // SAFETY: the runtime returned an owned value.
            Ok(unsafe { Any::from_raw(out) })
        } else {
            Ok(Any { raw: self.raw })
        }
    }

    /// Converts to `T` or fails with a `TypeError` in the runtime's words.
    ///
    /// ```
    /// use tvm_ffi::Any;
    /// let owned = Any::new("a string longer than seven bytes");
    /// let view = owned.view();
    /// let text: &str = view.cast().unwrap(); // borrows the string object
    /// assert_eq!(text.len(), 32);
    /// assert!(view.cast::<f64>().is_err());
    /// ```
    #[inline]
    pub fn cast<T: FromAny<'a>>(&'a self) -> Result<T> {
        match T::from_any(self) {
            Some(v) => Ok(v),
            None => Err(cast_error::<T>(self)),
        }
    }

    /// Converts to `T` with the documented coercions, or `None`.
    pub fn checked_cast<T: FromAny<'a>>(&'a self) -> Option<T> {
        T::from_any(self)
    }

    /// `Some` only when the stored type is exactly `T`.
    pub fn as_exact<T: FromAny<'a>>(&'a self) -> Option<T> {
        T::from_any_exact(self)
    }
}

/// Why a borrowed `DLTensor*` cannot become an owned value.
#[cold]
#[inline(never)]
pub(crate) fn borrowed_tensor_error() -> Error {
    Error::new(
        "TypeError",
        "DLTensor* cannot be held in Any as it does not retain ownership, use Tensor instead",
    )
}

#[cold]
#[inline(never)]
fn cast_error<'a, T: FromAny<'a>>(view: &AnyView<'_>) -> Error {
    cast_error_named::<T>(view, &T::type_str())
}

/// The `TypeError` of a failed conversion of `view` to `T`, naming the target `target` (a
/// field's storage may be named otherwise than its value type, as C++ names it).
#[cold]
#[inline(never)]
pub(crate) fn cast_error_named<'a, T: FromAny<'a>>(view: &AnyView<'_>, target: &str) -> Error {
    if let Some(err) = T::unusable(view) {
        return err;
    }
    Error::new(
        "TypeError",
        format!(
            "Cannot convert from type {} to `{target}`",
            T::describe_mismatch(view),
        ),
    )
}

/// Static description of a Rust type as the runtime sees it.
///
/// ```
/// use tvm_ffi::{Array, TypeSchema};
/// assert_eq!(i64::type_str(), "int");
/// assert_eq!(<Array<f64>>::type_str(), "Array<float>");
/// assert_eq!(<Option<bool>>::type_str(), "Optional<bool>");
/// assert_eq!(<Option<i64>>::type_schema(), r#"{"type":"Optional","args":[{"type":"int"}]}"#);
/// ```
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not a TVM-FFI value type",
    label = "this type cannot cross the TVM-FFI boundary",
    note = "supported: integers, BigInt, f32/f64, bool, (), &str/String/tvm_ffi::String, &[u8]/Vec<u8>/Bytes, Option<T>, ObjectRef<T>, Array<T>, Map<K, V>, List<T>, Dict<K, V>, Shape, Function, Any/AnyView, DataType, Device, Tensor/TensorView"
)]
pub trait TypeSchema {
    /// The name used in error messages and signatures (`int`, `str`, `Array<int>`, a type key).
    fn type_str() -> String;
    /// The `type_schema` JSON the C++ reflection emits for this type.
    fn type_schema() -> String {
        format!(r#"{{"type":"{}"}}"#, Self::type_str())
    }
}

/// Infallible conversion into an owning [`Any`].
///
/// ```
/// use tvm_ffi::{Any, IntoAny};
/// assert_eq!(2.5f64.into_any().type_key(), "float");
/// assert!(None::<i64>.into_any().is_none());
/// // A type of your own crosses as the value it wraps.
/// struct Meters(f64);
/// impl IntoAny for Meters {
///     fn into_any(self) -> Any { self.0.into_any() }
/// }
/// assert_eq!(Any::new(Meters(1.5)).cast::<f64>().unwrap(), 1.5);
/// ```
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be converted into a TVM-FFI `Any`",
    note = "supported: integers, BigInt, f32/f64, bool, (), &str/String/tvm_ffi::String, &[u8]/Vec<u8>/Bytes, Option<T>, ObjectRef<T>, Array<T>, Map<K, V>, List<T>, Dict<K, V>, Shape, Function, Any/AnyView, DataType, Device, Tensor/TensorView"
)]
pub trait IntoAny {
    /// Moves the value into an `Any`.
    fn into_any(self) -> Any;
}

/// Conversion into an owning [`Any`] that may fail: what containers and fields require of their
/// elements (every [`IntoAny`] type implements it).
///
/// ```
/// use tvm_ffi::{Any, TryIntoAny};
/// assert_eq!(7i64.try_into_any().unwrap().cast::<i64>().unwrap(), 7); // every `IntoAny` type
/// // A view converts when what it borrows can be owned (a new reference to the string).
/// let owned = Any::new("a string longer than seven bytes");
/// let again = owned.view().try_into_any().unwrap();
/// assert_eq!(again.cast::<&str>().unwrap(), "a string longer than seven bytes");
/// ```
pub trait TryIntoAny {
    /// Moves the value into an `Any`, or fails with a `ValueError`.
    fn try_into_any(self) -> Result<Any>;
}

impl<T: IntoAny> TryIntoAny for T {
    #[inline]
    fn try_into_any(self) -> Result<Any> {
        Ok(self.into_any())
    }
}

/// Conversion out of a borrowed value; `'a` is how long the source is borrowed, so borrowed
/// targets (`&str`, `&[u8]`, `&ObjectRef<T>`, `AnyView`) need no copy and no reference count.
///
/// ```
/// use tvm_ffi::{Any, AnyView, FromAny};
/// fn read<'a, T: FromAny<'a>>(view: &'a AnyView<'a>) -> Option<T> {
///     view.checked_cast()
/// }
/// let text = Any::new("a string longer than seven bytes");
/// let borrowed: &str = read(text.as_view()).unwrap(); // points into the string object
/// assert_eq!(borrowed.len(), 32);
/// assert_eq!(read::<i64>(text.as_view()), None);
/// ```
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be converted from a TVM-FFI value",
    label = "not a TVM-FFI argument type",
    note = "supported: integers, BigInt, f32/f64, bool, (), &str/String/tvm_ffi::String, &[u8]/Vec<u8>/Bytes, Option<T>, ObjectRef<T>, Array<T>, Map<K, V>, List<T>, Dict<K, V>, Shape, Function, Any/AnyView, DataType, Device, Tensor/TensorView"
)]
pub trait FromAny<'a>: Sized + TypeSchema {
    /// Whether every value converts (`Any`, `AnyView`): containers then skip element checks.
    const ACCEPTS_ANY: bool = false;
    /// A runtime type index whose every value converts (`int` for `i64`, `float` for `f64`),
    /// if the type has one: a container checks its elements for it with one branch-free scan
    /// before it converts any one of them. Not part of the public API.
    #[doc(hidden)]
    const CONVERTS_FROM_EVERY: Option<i32> = None;
    /// Converts with the documented coercions.
    fn from_any(view: &'a AnyView<'a>) -> Option<Self>;
    /// Converts only when the stored type matches exactly.
    fn from_any_exact(view: &'a AnyView<'a>) -> Option<Self> {
        Self::from_any(view)
    }
    /// How the value is named in a mismatch message, quoted: by default its type key in
    /// backticks; integers add the value that was out of range.
    fn describe_mismatch(view: &AnyView<'_>) -> String {
        format!("`{}`", view.type_key())
    }
    /// The error of a value of the right type that cannot be used yet (an object still under
    /// construction), which a cast reports instead of a type mismatch. Not part of the public
    /// API.
    #[doc(hidden)]
    fn unusable(_view: &AnyView<'_>) -> Option<Error> {
        None
    }
    /// Converts a value on which `checked_cast` is known to succeed (an element of an immutable
    /// container checked on entry), skipping the checks where that knowledge makes the stored
    /// form certain; C++ reads such elements the same way (`CopyFromAnyViewAfterCheck`). On
    /// any other value the result is unspecified (never undefined behaviour). Not part of the
    /// public API.
    #[doc(hidden)]
    #[inline(always)]
    fn from_checked(view: &'a AnyView<'a>) -> Option<Self> {
        Self::from_any(view)
    }
    /// The value converted into this type's own stored form (the `float` 1.0 for an `f64` read
    /// from the `int` 1), or `None` when it does not convert or the type has no stored form to
    /// write (it is no [`IntoAny`]). A `Map` cast re-encodes its keys with it: the runtime
    /// hashes and compares keys by type (the `int` 1 is no key `1.0`), so a key is found only
    /// in the form lookups encode it. Not part of the public API.
    #[doc(hidden)]
    fn reencode(view: &'a AnyView<'a>) -> Option<Any> {
        let _ = view;
        None
    }
    /// Whether the value converts, without converting it (an object's reference count is left
    /// alone): what a `match_any!` arm whose pattern binds nothing asks. Not part of the
    /// public API.
    #[doc(hidden)]
    #[inline(always)]
    fn converts(view: &'a AnyView<'a>) -> bool {
        Self::from_any(view).is_some()
    }
    /// Whether a `match_any!` arm of this type takes a value of runtime type `index` (a
    /// registered index), before [`FromAny::from_any`] converts it: the type itself, not what
    /// converts to it (an `int` for the integers, a `bool` for `bool`, a `float` for the
    /// floats, an instance for an object type, an `ffi.Array` for `Array<T>`); `true` where
    /// the conversion alone decides. A function of the index only, so `match_any!` caches it
    /// per type index; `false` for an index the runtime does not know (an object type's answer
    /// checks it). Not part of the public API: [`matching::arm_takes`](crate::matching::arm_takes)
    /// asks it.
    #[doc(hidden)]
    #[inline(always)]
    fn match_type_index(index: i32) -> bool {
        let _ = index;
        true
    }
    /// Whether [`FromAny::converts`] of a value whose construction is sealed (every value that
    /// is no object, and every object Rust has made usable) is exactly `match_type_index` of
    /// its type index, so that `match_any!` can pick a binding-free arm from its table alone.
    /// Not part of the public API.
    #[doc(hidden)]
    const MATCHED_BY_TYPE_INDEX: bool = false;
}

impl TypeSchema for Any {
    fn type_str() -> String {
        "Any".into()
    }
}
impl IntoAny for Any {
    #[inline]
    fn into_any(self) -> Any {
        self
    }
}
impl<'a> FromAny<'a> for Any {
    /// Every owned value converts: containers and fields hold owned values only.
    const ACCEPTS_ANY: bool = true;
    /// Fails only on what cannot be owned: a borrowed `DLTensor*`, or a raw string the runtime
    /// cannot copy.
    #[inline]
    fn from_any(view: &'a AnyView<'a>) -> Option<Self> {
        view.to_owned().ok()
    }
    fn describe_mismatch(view: &AnyView<'_>) -> String {
        if view.raw.type_index == ti::kTVMFFIDLTensorPtr {
            "`DLTensor*` (a borrowed tensor cannot be held in Any, use Tensor instead)".into()
        } else {
            format!("`{}`", view.type_key())
        }
    }
    /// An element of a container (never fails there; a value that cannot be owned, which no
    /// container holds, reads as `None`).
    #[inline(always)]
    fn from_checked(view: &'a AnyView<'a>) -> Option<Self> {
        Some(view.to_owned().unwrap_or_default())
    }
}
impl TypeSchema for AnyView<'_> {
    fn type_str() -> String {
        "Any".into()
    }
}
impl<'a> FromAny<'a> for AnyView<'a> {
    const ACCEPTS_ANY: bool = true;
    #[inline]
    fn from_any(view: &'a AnyView<'a>) -> Option<Self> {
        Some(*view)
    }
}
/// Fallible: a borrowed `DLTensor*` cannot be owned ([`AnyView::to_owned`]).
impl TryIntoAny for AnyView<'_> {
    #[inline]
    fn try_into_any(self) -> Result<Any> {
        self.to_owned()
    }
}
/// Fallible as for a view.
impl TryIntoAny for &AnyView<'_> {
    #[inline]
    fn try_into_any(self) -> Result<Any> {
        self.to_owned()
    }
}

// ---- None ----
impl TypeSchema for () {
    fn type_str() -> String {
        "None".into()
    }
}
impl IntoAny for () {
    #[inline]
    fn into_any(self) -> Any {
        Any::none()
    }
}
impl<'a> FromAny<'a> for () {
    fn from_any(view: &'a AnyView<'a>) -> Option<Self> {
        view.is_none().then_some(())
    }
}

/// The integer an `int` (or, with `allow_bool`, a `bool`) holds.
pub(super) fn int_value(view: &AnyView<'_>, allow_bool: bool) -> Option<i64> {
    match view.raw.type_index {
        // SAFETY: int and bool store v_int64.
        ti::kTVMFFIInt => Some(unsafe { view.raw.value.v_int64 }),
        // SAFETY: as above.
        ti::kTVMFFIBool if allow_bool => Some(unsafe { view.raw.value.v_int64 }),
        _ => None,
    }
}

// ---- bool ----
impl TypeSchema for bool {
    fn type_str() -> String {
        "bool".into()
    }
}
impl IntoAny for bool {
    #[inline]
    fn into_any(self) -> Any {
        Any {
            raw: pod(
                ti::kTVMFFIBool,
                TVMFFIAnyValue {
                    v_int64: self as i64,
                },
            ),
        }
    }
}
impl<'a> FromAny<'a> for bool {
    const CONVERTS_FROM_EVERY: Option<i32> = Some(ti::kTVMFFIBool);
    #[inline]
    fn from_any(view: &'a AnyView<'a>) -> Option<Self> {
        int_value(view, true).map(|v| v != 0)
    }
    fn reencode(view: &'a AnyView<'a>) -> Option<Any> {
        Self::from_any(view).map(IntoAny::into_any)
    }
    #[inline]
    fn match_type_index(index: i32) -> bool {
        index == ti::kTVMFFIBool
    }
    #[inline]
    fn from_any_exact(view: &'a AnyView<'a>) -> Option<Self> {
        if view.raw.type_index == ti::kTVMFFIBool {
            // SAFETY: bool stores v_int64.
            Some(unsafe { view.raw.value.v_int64 } != 0)
        } else {
            None
        }
    }
}

// ---- floats ----
fn float_value(view: &AnyView<'_>) -> Option<f64> {
    match view.raw.type_index {
        // SAFETY: float stores v_float64.
        ti::kTVMFFIFloat => Some(unsafe { view.raw.value.v_float64 }),
        // SAFETY: int and bool store v_int64.
        ti::kTVMFFIInt | ti::kTVMFFIBool => Some(unsafe { view.raw.value.v_int64 } as f64),
        _ => None,
    }
}
impl TypeSchema for f64 {
    fn type_str() -> String {
        "float".into()
    }
}
impl IntoAny for f64 {
    #[inline]
    fn into_any(self) -> Any {
        Any {
            raw: pod(ti::kTVMFFIFloat, TVMFFIAnyValue { v_float64: self }),
        }
    }
}
impl<'a> FromAny<'a> for f64 {
    const CONVERTS_FROM_EVERY: Option<i32> = Some(ti::kTVMFFIFloat);
    #[inline]
    fn from_any(view: &'a AnyView<'a>) -> Option<Self> {
        float_value(view)
    }
    fn reencode(view: &'a AnyView<'a>) -> Option<Any> {
        Self::from_any(view).map(IntoAny::into_any)
    }
    #[inline]
    fn match_type_index(index: i32) -> bool {
        index == ti::kTVMFFIFloat
    }
    #[inline]
    fn from_any_exact(view: &'a AnyView<'a>) -> Option<Self> {
        if view.raw.type_index == ti::kTVMFFIFloat {
            // SAFETY: float stores v_float64.
            Some(unsafe { view.raw.value.v_float64 })
        } else {
            None
        }
    }
}
impl TypeSchema for f32 {
    fn type_str() -> String {
        "float".into()
    }
}
impl IntoAny for f32 {
    #[inline]
    fn into_any(self) -> Any {
        (self as f64).into_any()
    }
}
impl<'a> FromAny<'a> for f32 {
    #[inline]
    fn from_any(view: &'a AnyView<'a>) -> Option<Self> {
        float_value(view).and_then(narrow_f32)
    }
    fn reencode(view: &'a AnyView<'a>) -> Option<Any> {
        Self::from_any(view).map(IntoAny::into_any)
    }
    #[inline]
    fn from_any_exact(view: &'a AnyView<'a>) -> Option<Self> {
        f64::from_any_exact(view).and_then(narrow_f32)
    }
    #[inline]
    fn match_type_index(index: i32) -> bool {
        index == ti::kTVMFFIFloat
    }
    fn describe_mismatch(view: &AnyView<'_>) -> String {
        match float_value(view) {
            Some(v) => format!("`float` (value {v:e} is out of range for `f32`)"),
            None => format!("`{}`", view.type_key()),
        }
    }
}
fn narrow_f32(v: f64) -> Option<f32> {
    let narrowed = v as f32;
    // A finite value that overflows f32 is out of range; NaN and infinities carry over.
    (narrowed.is_finite() || !v.is_finite()).then_some(narrowed)
}

// ---- opaque pointers ----
impl TypeSchema for *mut std::ffi::c_void {
    fn type_str() -> String {
        "void*".into()
    }
}
// No `IntoAny` (nor `IntoArg`): making an opaque pointer value is `Any::from_opaque_ptr`,
// which is `unsafe` because callees trust such pointers. Reading one back stays safe.
impl<'a> FromAny<'a> for *mut std::ffi::c_void {
    fn from_any(view: &'a AnyView<'a>) -> Option<Self> {
        match view.raw.type_index {
            ti::kTVMFFINone => Some(std::ptr::null_mut()),
            // SAFETY: these indices store v_ptr.
            ti::kTVMFFIOpaquePtr | ti::kTVMFFIDLTensorPtr => Some(unsafe { view.raw.value.v_ptr }),
            _ => None,
        }
    }
}

// ---- Option ----
impl<T: TypeSchema> TypeSchema for Option<T> {
    fn type_str() -> String {
        format!("Optional<{}>", T::type_str())
    }
    fn type_schema() -> String {
        format!(r#"{{"type":"Optional","args":[{}]}}"#, T::type_schema())
    }
}
impl<T: IntoAny> IntoAny for Option<T> {
    #[inline]
    fn into_any(self) -> Any {
        match self {
            Some(v) => v.into_any(),
            None => Any::none(),
        }
    }
}
impl<'a, T: FromAny<'a>> FromAny<'a> for Option<T> {
    #[inline]
    fn from_any(view: &'a AnyView<'a>) -> Option<Self> {
        if view.is_none() {
            Some(None)
        } else {
            T::from_any(view).map(Some)
        }
    }
    #[inline]
    fn from_any_exact(view: &'a AnyView<'a>) -> Option<Self> {
        if view.is_none() {
            Some(None)
        } else {
            T::from_any_exact(view).map(Some)
        }
    }
    fn reencode(view: &'a AnyView<'a>) -> Option<Any> {
        if view.is_none() {
            Some(Any::none())
        } else {
            T::reencode(view)
        }
    }
    fn describe_mismatch(view: &AnyView<'_>) -> String {
        T::describe_mismatch(view)
    }
    #[inline]
    fn match_type_index(index: i32) -> bool {
        index == ti::kTVMFFINone || T::match_type_index(index)
    }
}

// ---- objects ----
impl<T: ObjectType> TypeSchema for ObjectRef<T> {
    fn type_str() -> String {
        T::TYPE_KEY.into()
    }
}
impl<T: ObjectType> IntoAny for ObjectRef<T> {
    #[inline]
    fn into_any(self) -> Any {
        let index = self.type_index();
        let ptr = self.into_raw();
        Any {
            raw: pod(
                index,
                TVMFFIAnyValue {
                    v_obj: ptr.as_ptr(),
                },
            ),
        }
    }
}
impl<T: ObjectType> IntoAny for &ObjectRef<T> {
    #[inline]
    fn into_any(self) -> Any {
        self.clone().into_any()
    }
}
impl<'a, T: ObjectType> FromAny<'a> for ObjectRef<T> {
    /// An instance converts unless its construction is still open (`seal_for_use`).
    const MATCHED_BY_TYPE_INDEX: bool = true;
    #[inline(always)]
    fn from_any(view: &'a AnyView<'a>) -> Option<Self> {
        <&ObjectRef<T>>::from_any(view).cloned()
    }
    #[inline(always)]
    fn converts(view: &'a AnyView<'a>) -> bool {
        <&ObjectRef<T>>::from_any(view).is_some()
    }
    fn unusable(view: &AnyView<'_>) -> Option<Error> {
        <&ObjectRef<T>>::unusable(view)
    }
    #[inline]
    fn match_type_index(index: i32) -> bool {
        <&ObjectRef<T>>::match_type_index(index)
    }
}
impl<T: ObjectType> TypeSchema for &ObjectRef<T> {
    fn type_str() -> String {
        T::TYPE_KEY.into()
    }
}
impl<'a, T: ObjectType> FromAny<'a> for &'a ObjectRef<T> {
    /// An instance converts unless its construction is still open (`seal_for_use`).
    const MATCHED_BY_TYPE_INDEX: bool = true;
    #[inline(always)]
    fn from_any(view: &'a AnyView<'a>) -> Option<Self> {
        if is_object_index(view.raw.type_index)
            && type_info::is_instance_index(view.raw.type_index, T::runtime_type())
        {
            // SAFETY: `v_obj` is a non-null object pointer stored at a pointer-aligned offset;
            // ObjectRef<T> is repr(transparent) over that pointer and the object is an instance
            // of T. The reference borrows the view's storage, so no count is taken and none is
            // released (the returned reference is never dropped as an owner).
            let obj =
                unsafe { &*(std::ptr::addr_of!(view.raw.value.v_obj) as *const ObjectRef<T>) };
            // An `ObjectRef<T>` only ever points to an object usable as a `T` (see `Deref`).
            // SAFETY: a live instance of `T`, kept alive by the view.
            unsafe { T::seal_for_use(obj.as_raw()) }.ok()?;
            Some(obj)
        } else {
            None
        }
    }
    fn unusable(view: &AnyView<'_>) -> Option<Error> {
        if !(is_object_index(view.raw.type_index)
            && type_info::is_instance_index(view.raw.type_index, T::runtime_type()))
        {
            return None;
        }
        // SAFETY: as in `from_any`.
        let ptr = unsafe { NonNull::new_unchecked(view.raw.value.v_obj) };
        // SAFETY: a live instance of `T`, kept alive by the view.
        unsafe { T::seal_for_use(ptr) }
            .err()
            .map(Error::runtime_error)
    }
    #[inline]
    fn match_type_index(index: i32) -> bool {
        is_object_index(index) && type_info::is_instance_of_any_index(index, T::runtime_type())
    }
}

/// Implements the conversions of a `repr(transparent)` wrapper around `ObjectRef<Obj>`.
macro_rules! object_wrapper_conversions {
    ($wrapper:ty, $obj:ty) => {
        impl $crate::base::value::IntoAny for $wrapper {
            #[inline]
            fn into_any(self) -> $crate::base::value::Any {
                self.into_object_ref().into_any()
            }
        }
        impl $crate::base::value::IntoAny for &$wrapper {
            #[inline]
            fn into_any(self) -> $crate::base::value::Any {
                self.clone().into_any()
            }
        }
        impl<'a> $crate::base::value::FromAny<'a> for $wrapper {
            #[inline]
            fn from_any(view: &'a $crate::base::value::AnyView<'a>) -> Option<Self> {
                <$crate::base::object::ObjectRef<$obj> as $crate::base::value::FromAny>::from_any(
                    view,
                )
                .map(<$wrapper>::from_object_ref)
            }
            #[inline(always)]
            fn converts(view: &'a $crate::base::value::AnyView<'a>) -> bool {
                <$crate::base::object::ObjectRef<$obj> as $crate::base::value::FromAny>::converts(
                    view,
                )
            }
            #[inline]
            fn match_type_index(index: i32) -> bool {
                <$crate::base::object::ObjectRef<$obj> as $crate::base::value::FromAny>::match_type_index(
                    index,
                )
            }
        }
    };
}
pub(crate) use object_wrapper_conversions;

/// An error is a value too: an `ffi.Error` object (Python receives the exception), as C++
/// `Error` converts to and from `Any`.
///
/// ```
/// use tvm_ffi::{Any, Error};
/// let any = Any::new(Error::value_error("bad input"));
/// assert_eq!(any.type_key(), "ffi.Error");
/// assert_eq!(any.cast::<Error>().unwrap().message(), "bad input");
/// assert!(Any::new(1i64).checked_cast::<Error>().is_none());
/// ```
impl TypeSchema for Error {
    fn type_str() -> String {
        "ffi.Error".into()
    }
}
object_wrapper_conversions!(Error, object::builtin::ErrorObj);

/// A value whose [`IntoAny`] form is plain data (no object, no heap storage), so a view of it
/// borrows nothing.
pub(crate) trait PlainValue: IntoAny + Copy {}
impl PlainValue for i8 {}
impl PlainValue for i16 {}
impl PlainValue for i32 {}
impl PlainValue for i64 {}
impl PlainValue for isize {}
impl PlainValue for u8 {}
impl PlainValue for u16 {}
impl PlainValue for u32 {}
impl PlainValue for bool {}
impl PlainValue for f32 {}
impl PlainValue for f64 {}
