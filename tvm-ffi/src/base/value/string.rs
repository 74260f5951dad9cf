//! The FFI [`String`] and [`Bytes`]: 16-byte values with the layout of C++ `ffi::String` and
//! `ffi::Bytes` (an Any holding either up to 7 bytes inline or a heap object).
use std::fmt;
use std::ptr::NonNull;

use super::any::{is_object_index, Any, AnyView, FromAny, IntoAny, TypeSchema};
use crate::abi::sys::{self, type_index as ti, TVMFFIAny, TVMFFIAnyValue};
use crate::abi::AllocFailure;
use crate::base::error::Result;
use crate::base::object::builtin::{BytesObj, StringObj};
use crate::base::object::{self, try_alloc_inplace_array, InplaceArray};

/// Longest content stored inline (small string/bytes form), as in C++.
#[doc(hidden)] // a layout detail of the runtime
pub const SMALL_CAPACITY: usize = 7;

/// Allocates a heap string or bytes object holding `bytes` (with a NUL after them, as C++
/// keeps one), in one block laid out as the runtime lays one out (`make_inplace_array_object`:
/// the byte-array cell, then the bytes). A generic parameter rather than a function pointer, so
/// that the allocation and the copy inline into the caller.
trait Create: Fn(&[u8]) -> std::result::Result<NonNull<sys::TVMFFIObject>, AllocFailure> {}
impl<F: Fn(&[u8]) -> std::result::Result<NonNull<sys::TVMFFIObject>, AllocFailure>> Create for F {}

/// Builds the small form (`len <= 7`) or a heap object of type `object_index`, or reports the
/// allocation that failed. Always inlined, and without a `Result` around the 16-byte value: a
/// value that goes through memory is written as two words and read back as one, a
/// store-forwarding stall that cost as much as the allocation (benches/upstream, `string.new`).
#[inline(always)]
fn build(
    bytes: &[u8],
    small_index: i32,
    object_index: i32,
    create: impl Create,
) -> std::result::Result<TVMFFIAny, AllocFailure> {
    if bytes.len() <= SMALL_CAPACITY {
        let mut inline = [0u8; 8];
        inline[..bytes.len()].copy_from_slice(bytes);
        Ok(TVMFFIAny {
            type_index: small_index,
            zero_padding: bytes.len() as u32,
            value: TVMFFIAnyValue { v_bytes: inline },
        })
    } else {
        let obj = create(bytes)?;
        Ok(TVMFFIAny {
            type_index: object_index,
            zero_padding: 0,
            value: TVMFFIAnyValue {
                v_obj: obj.as_ptr(),
            },
        })
    }
}

/// [`build`], raising the runtime's `MemoryError` (an unwinding panic) when allocation fails.
#[inline(always)]
fn make(bytes: &[u8], small_index: i32, object_index: i32, create: impl Create) -> TVMFFIAny {
    match build(bytes, small_index, object_index, create) {
        Ok(raw) => raw,
        Err(_) => AllocFailure::raise(bytes.len()),
    }
}

/// [`make`], failing with a `MemoryError` instead of unwinding.
#[inline]
fn try_make(
    bytes: &[u8],
    small_index: i32,
    object_index: i32,
    create: impl Create,
) -> Result<TVMFFIAny> {
    Ok(build(bytes, small_index, object_index, create)?)
}

/// The heap objects of strings and bytes: the byte-array cell, then `size` bytes and a NUL.
trait ByteCell: InplaceArray<Elem = u8> {
    /// The object's type index.
    const INDEX: i32;
    /// The cell of `len` bytes at `data`.
    fn cell(data: *mut u8, len: usize) -> Self;
}

macro_rules! byte_cell {
    ($obj:ident, $index:expr) => {
        // SAFETY: allocated by `create_heap` with `size + 1` bytes after the cell, which never
        // changes (strings and bytes are immutable); bytes own nothing.
        unsafe impl InplaceArray for $obj {
            type Elem = u8;
            #[inline]
            fn inplace_len(&self) -> usize {
                self.bytes.size + 1
            }
        }
        impl ByteCell for $obj {
            const INDEX: i32 = $index;
            #[inline]
            fn cell(data: *mut u8, len: usize) -> Self {
                $obj {
                    bytes: sys::TVMFFIByteArray {
                        data: data as *const std::ffi::c_char,
                        size: len,
                    },
                }
            }
        }
    };
}
byte_cell!(StringObj, ti::kTVMFFIStr);
byte_cell!(BytesObj, ti::kTVMFFIBytes);

/// A [`Create`] function: the object in Rust memory.
#[inline]
fn create_heap<P: ByteCell>(
    bytes: &[u8],
) -> std::result::Result<NonNull<sys::TVMFFIObject>, AllocFailure> {
    let len = bytes.len();
    // SAFETY: the payload of `P::INDEX` is its byte-array cell; the closure writes the cell
    // (pointing at the elements) and all `len + 1` elements; a copy cannot unwind.
    unsafe {
        try_alloc_inplace_array::<P>(P::INDEX, len + 1, |payload, elems| {
            std::ptr::copy_nonoverlapping(bytes.as_ptr(), elems, len);
            elems.add(len).write(0);
            payload.write(P::cell(elems, len));
        })
    }
}

/// The content of a string-like or bytes-like view, borrowed for as long as the view's storage.
fn content<'a>(view: &'a AnyView<'a>, small_index: i32, object_index: i32) -> Option<&'a [u8]> {
    let raw = view.as_raw();
    let index = raw.type_index;
    if index == small_index {
        // SAFETY: small forms keep `small_str_len <= 7` bytes inline in the value union, which
        // lives inside `*view` and so for 'a.
        Some(unsafe { &raw.value.v_bytes[..(raw.zero_padding as usize).min(8)] })
    } else if index == object_index {
        // SAFETY: string and bytes objects are header + TVMFFIByteArray; the object outlives 'a.
        unsafe {
            let obj = raw.value.v_obj as *const u8;
            let cell = &*(obj.add(std::mem::size_of::<sys::TVMFFIObject>())
                as *const sys::TVMFFIByteArray);
            Some(cell.as_bytes())
        }
    } else if index == ti::kTVMFFIByteArrayPtr {
        // SAFETY: the pointee is borrowed for the duration of the call ('a).
        unsafe { Some((*(raw.value.v_ptr as *const sys::TVMFFIByteArray)).as_bytes()) }
    } else if index == ti::kTVMFFIRawStr && small_index == ti::kTVMFFISmallStr {
        // SAFETY: a NUL-terminated C string borrowed for 'a.
        unsafe { Some(std::ffi::CStr::from_ptr(raw.value.v_c_str).to_bytes()) }
    } else {
        None
    }
}

macro_rules! bytes_like {
    ($(#[$meta:meta])* $name:ident, $small:path, $object:path, $type_str:literal, $schema:literal) => {
        $(#[$meta])*
        #[repr(transparent)]
        pub struct $name {
            raw: TVMFFIAny,
        }

        // SAFETY: immutable content; heap objects are reference counted atomically.
        unsafe impl Send for $name {}
        // SAFETY: as above.
        unsafe impl Sync for $name {}

        impl $name {
            /// The content as bytes.
            #[inline]
            pub fn as_bytes(&self) -> &[u8] {
                // SAFETY: AnyView is repr(transparent) over TVMFFIAny; the content lives in `self`
                // (inline) or in the heap object `self` owns, so it is borrowed for `&self`.
                let view: &AnyView<'_> = unsafe { &*(&self.raw as *const TVMFFIAny as *const AnyView<'_>) };
                content(view, $small, $object).unwrap_or(&[])
            }

            /// Whether the content is stored inline (7 bytes or fewer), without a heap object.
            #[inline]
            pub fn is_inline(&self) -> bool {
                self.raw.type_index == $small
            }

            /// The raw 16-byte value.
            #[inline]
            pub fn as_raw(&self) -> &TVMFFIAny {
                &self.raw
            }

            /// A borrowed view of the value (no reference count change).
            #[inline]
            pub fn as_view(&self) -> AnyView<'_> {
                // SAFETY: `self` owns the value its raw form describes, for as long as borrowed.
                unsafe { AnyView::of_owned_raw(&self.raw) }
            }

            #[inline]
            fn from_content(bytes: &[u8]) -> Self {
                $name { raw: make(bytes, $small, $object, Self::create) }
            }

            fn try_from_content(bytes: &[u8]) -> Result<Self> {
                Ok($name { raw: try_make(bytes, $small, $object, Self::create)? })
            }
        }

        impl Clone for $name {
            #[inline]
            fn clone(&self) -> Self {
                if is_object_index(self.raw.type_index) {
                    // SAFETY: we hold a strong reference to the heap object.
                    unsafe { object::inc_ref(NonNull::new_unchecked(self.raw.value.v_obj)) };
                }
                $name { raw: self.raw }
            }
        }

        impl Drop for $name {
            #[inline]
            fn drop(&mut self) {
                if is_object_index(self.raw.type_index) {
                    // SAFETY: we own one strong reference to the heap object.
                    unsafe { object::dec_ref(NonNull::new_unchecked(self.raw.value.v_obj)) };
                }
            }
        }

        impl Default for $name {
            fn default() -> Self {
                Self::from_content(&[])
            }
        }

        impl TypeSchema for $name {
            fn type_str() -> std::string::String {
                $type_str.into()
            }
            fn type_schema() -> std::string::String {
                $schema.into()
            }
        }

        impl IntoAny for $name {
            #[inline]
            fn into_any(self) -> Any {
                let raw = std::mem::ManuallyDrop::new(self).raw;
                // SAFETY: ownership of the (possibly heap) value moves into the Any.
                unsafe { Any::from_raw(raw) }
            }
        }
        impl IntoAny for &$name {
            #[inline]
            fn into_any(self) -> Any {
                self.clone().into_any()
            }
        }

        impl<'a> FromAny<'a> for $name {
            fn from_any(view: &'a AnyView<'a>) -> Option<Self> {
                let index = view.type_index();
                if index == $small || index == $object {
                    let out = $name { raw: *view.as_raw() };
                    if !Self::valid(out.as_bytes()) {
                        std::mem::forget(out);
                        return None;
                    }
                    // `out` borrowed the view's reference; take one of our own.
                    Some((*std::mem::ManuallyDrop::new(out)).clone())
                } else {
                    content(view, $small, $object).filter(|b| Self::valid(b)).map(Self::from_content)
                }
            }
            fn from_any_exact(view: &'a AnyView<'a>) -> Option<Self> {
                let index = view.type_index();
                if index == $small || index == $object {
                    Self::from_any(view)
                } else {
                    None
                }
            }
            /// A borrowed C string or byte array (a call argument, never a stored value) is
            /// stored as a copy.
            fn reencode(view: &'a AnyView<'a>) -> Option<Any> {
                Self::from_any(view).map(IntoAny::into_any)
            }
        }

        impl PartialEq for $name {
            fn eq(&self, other: &Self) -> bool {
                self.as_bytes() == other.as_bytes()
            }
        }
        impl Eq for $name {}
        /// Ordered by content, byte by byte (as C++ `String`/`Bytes` compare).
        impl PartialOrd for $name {
            fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
                Some(self.cmp(other))
            }
        }
        /// Ordered by content, byte by byte (as C++ `String`/`Bytes` compare).
        impl Ord for $name {
            fn cmp(&self, other: &Self) -> std::cmp::Ordering {
                self.as_bytes().cmp(other.as_bytes())
            }
        }
        impl std::hash::Hash for $name {
            fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
                self.as_bytes().hash(state)
            }
        }
    };
}

bytes_like!(
    /// An immutable UTF-8 string shared with C++ (`ffi::String`) and Python (`str`).
    ///
    /// Strings of up to 7 bytes are stored inline; longer ones in a reference-counted
    /// `ffi.String` object, so clones are cheap.
    ///
    /// ```
    /// use tvm_ffi::{Any, String};
    /// let short = String::from("hi");
    /// assert!(short.is_inline());
    /// let long = String::new("longer than seven bytes");
    /// assert!(!long.is_inline() && long.starts_with("longer")); // derefs to `str`
    /// let any = Any::new(long.clone());
    /// assert_eq!(any.type_key(), "ffi.String");
    /// assert_eq!(any.cast::<String>().unwrap(), long);
    /// assert_eq!(any.cast::<&str>().unwrap(), "longer than seven bytes"); // borrowed, no copy
    /// ```
    String, ti::kTVMFFISmallStr, ti::kTVMFFIStr, "str", r#"{"type":"ffi.String"}"#
);
bytes_like!(
    /// An immutable byte string shared with C++ (`ffi::Bytes`) and Python (`bytes`).
    ///
    /// ```
    /// use tvm_ffi::{Any, Bytes};
    /// let bytes = Bytes::new(b"\x00\xffnot UTF-8");
    /// assert_eq!(&bytes[..2], &[0, 255]); // derefs to `[u8]`
    /// let any = Any::new(bytes.clone());
    /// assert_eq!(any.type_key(), "ffi.Bytes");
    /// assert_eq!(any.cast::<Vec<u8>>().unwrap(), bytes.as_bytes());
    /// assert!(any.checked_cast::<tvm_ffi::String>().is_none()); // bytes are not a string
    /// ```
    Bytes, ti::kTVMFFISmallBytes, ti::kTVMFFIBytes, "bytes", r#"{"type":"ffi.Bytes"}"#
);

impl String {
    #[inline]
    fn create(bytes: &[u8]) -> std::result::Result<NonNull<sys::TVMFFIObject>, AllocFailure> {
        create_heap::<StringObj>(bytes)
    }

    fn valid(bytes: &[u8]) -> bool {
        std::str::from_utf8(bytes).is_ok()
    }

    /// Creates a string (inline when at most 7 bytes).
    ///
    /// Out of memory, it unwinds with an [`AllocFailure`] payload, which the FFI boundary
    /// raises as a `MemoryError`; [`String::try_new`] returns that error instead.
    ///
    /// ```
    /// let s = tvm_ffi::String::new("héllo");
    /// assert_eq!((s.as_str(), s.len()), ("héllo", 6));
    /// ```
    #[inline]
    pub fn new(s: &str) -> Self {
        Self::from_content(s.as_bytes())
    }

    /// Creates a string, or fails with the runtime's `MemoryError` when it cannot allocate one
    /// (never panics).
    ///
    /// ```
    /// let s = tvm_ffi::String::try_new("a string longer than seven bytes").unwrap();
    /// assert_eq!(s.as_str(), "a string longer than seven bytes");
    /// ```
    pub fn try_new(s: &str) -> Result<Self> {
        Self::try_from_content(s.as_bytes())
    }

    /// The content.
    #[inline]
    pub fn as_str(&self) -> &str {
        // SAFETY: every constructor validates UTF-8.
        unsafe { std::str::from_utf8_unchecked(self.as_bytes()) }
    }
}

impl Bytes {
    #[inline]
    fn create(bytes: &[u8]) -> std::result::Result<NonNull<sys::TVMFFIObject>, AllocFailure> {
        create_heap::<BytesObj>(bytes)
    }

    fn valid(_: &[u8]) -> bool {
        true
    }

    /// Creates a byte string (inline when at most 7 bytes).
    ///
    /// ```
    /// let b = tvm_ffi::Bytes::new(&[0, 1, 2]);
    /// assert_eq!(b.as_bytes(), &[0, 1, 2]);
    /// ```
    #[inline]
    pub fn new(bytes: &[u8]) -> Self {
        Self::from_content(bytes)
    }

    /// Creates a byte string, or fails with the runtime's `MemoryError` when it cannot
    /// allocate one (never panics).
    pub fn try_new(bytes: &[u8]) -> Result<Self> {
        Self::try_from_content(bytes)
    }
}

impl std::ops::Deref for String {
    type Target = str;
    #[inline]
    fn deref(&self) -> &str {
        self.as_str()
    }
}
impl std::ops::Deref for Bytes {
    type Target = [u8];
    #[inline]
    fn deref(&self) -> &[u8] {
        self.as_bytes()
    }
}
impl AsRef<str> for String {
    fn as_ref(&self) -> &str {
        self.as_str()
    }
}
impl AsRef<[u8]> for Bytes {
    fn as_ref(&self) -> &[u8] {
        self.as_bytes()
    }
}
impl std::borrow::Borrow<str> for String {
    fn borrow(&self) -> &str {
        self.as_str()
    }
}
impl From<&str> for String {
    #[inline]
    fn from(s: &str) -> Self {
        String::new(s)
    }
}
impl From<std::string::String> for String {
    fn from(s: std::string::String) -> Self {
        String::new(&s)
    }
}
impl From<&std::string::String> for String {
    #[inline]
    fn from(s: &std::string::String) -> Self {
        String::new(s)
    }
}
impl From<String> for std::string::String {
    fn from(s: String) -> Self {
        s.as_str().to_owned()
    }
}
impl From<&[u8]> for Bytes {
    #[inline]
    fn from(b: &[u8]) -> Self {
        Bytes::new(b)
    }
}
/// A copy of a byte array (`Bytes::from(b"raw")`).
///
/// ```
/// use tvm_ffi::Bytes;
/// assert_eq!(Bytes::from(b"abc"), Bytes::new(b"abc"));
/// assert!(Bytes::from(b"abc") < Bytes::from(b"abd")); // ordered by content
/// ```
impl<const N: usize> From<&[u8; N]> for Bytes {
    fn from(b: &[u8; N]) -> Self {
        Bytes::new(b)
    }
}
impl From<Vec<u8>> for Bytes {
    fn from(b: Vec<u8>) -> Self {
        Bytes::new(&b)
    }
}
impl PartialEq<str> for String {
    fn eq(&self, other: &str) -> bool {
        self.as_str() == other
    }
}
impl PartialEq<&str> for String {
    fn eq(&self, other: &&str) -> bool {
        self.as_str() == *other
    }
}
impl PartialEq<String> for &str {
    fn eq(&self, other: &String) -> bool {
        *self == other.as_str()
    }
}
impl PartialEq<[u8]> for Bytes {
    fn eq(&self, other: &[u8]) -> bool {
        self.as_bytes() == other
    }
}
impl fmt::Display for String {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}
impl fmt::Debug for String {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(self.as_str(), f)
    }
}
impl fmt::Debug for Bytes {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "b\"{}\"", self.as_bytes().escape_ascii())
    }
}

// ---- borrowed and std forms ----
impl TypeSchema for &str {
    fn type_str() -> std::string::String {
        "str".into()
    }
    fn type_schema() -> std::string::String {
        r#"{"type":"ffi.String"}"#.into()
    }
}
impl<'a> FromAny<'a> for &'a str {
    #[inline]
    fn from_any(view: &'a AnyView<'a>) -> Option<Self> {
        content(view, ti::kTVMFFISmallStr, ti::kTVMFFIStr).and_then(|b| std::str::from_utf8(b).ok())
    }
}
impl IntoAny for &str {
    fn into_any(self) -> Any {
        String::new(self).into_any()
    }
}
impl TypeSchema for std::string::String {
    fn type_str() -> std::string::String {
        "str".into()
    }
    fn type_schema() -> std::string::String {
        r#"{"type":"ffi.String"}"#.into()
    }
}
impl<'a> FromAny<'a> for std::string::String {
    fn from_any(view: &'a AnyView<'a>) -> Option<Self> {
        <&str>::from_any(view).map(|s| {
            let mut out = std::string::String::new();
            if out.try_reserve_exact(s.len()).is_err() {
                AllocFailure::raise(s.len());
            }
            out.push_str(s);
            out
        })
    }
}
impl IntoAny for std::string::String {
    fn into_any(self) -> Any {
        String::new(&self).into_any()
    }
}
impl IntoAny for &std::string::String {
    fn into_any(self) -> Any {
        String::new(self).into_any()
    }
}
impl TypeSchema for &[u8] {
    fn type_str() -> std::string::String {
        "bytes".into()
    }
    fn type_schema() -> std::string::String {
        r#"{"type":"ffi.Bytes"}"#.into()
    }
}
impl<'a> FromAny<'a> for &'a [u8] {
    #[inline]
    fn from_any(view: &'a AnyView<'a>) -> Option<Self> {
        content(view, ti::kTVMFFISmallBytes, ti::kTVMFFIBytes)
    }
}
impl IntoAny for &[u8] {
    fn into_any(self) -> Any {
        Bytes::new(self).into_any()
    }
}
impl TypeSchema for Vec<u8> {
    fn type_str() -> std::string::String {
        "bytes".into()
    }
    fn type_schema() -> std::string::String {
        r#"{"type":"ffi.Bytes"}"#.into()
    }
}
impl<'a> FromAny<'a> for Vec<u8> {
    fn from_any(view: &'a AnyView<'a>) -> Option<Self> {
        <&[u8]>::from_any(view).map(|bytes| {
            let mut out = Vec::new();
            if out.try_reserve_exact(bytes.len()).is_err() {
                AllocFailure::raise(bytes.len());
            }
            out.extend_from_slice(bytes);
            out
        })
    }
}
impl IntoAny for Vec<u8> {
    fn into_any(self) -> Any {
        Bytes::new(&self).into_any()
    }
}
