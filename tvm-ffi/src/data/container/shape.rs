//! [`Shape`]: the runtime's immutable `ffi.Shape`, a sequence of `i64` dimensions.
use crate::abi::sys::{type_index as ti, TVMFFIShapeCell};
use crate::base::object::builtin::{AnyObject, ArrayObj, ShapeObj};
use crate::base::object::{alloc_inplace_array, InplaceArray, ObjectRef};
use crate::base::value::{Any, AnyView, FromAny, IntoAny, TypeSchema};
use crate::call::function::{impl_into_arg_borrowed, object_view};

// SAFETY: a Shape allocated by Rust keeps `size` dimensions right after its cell, and its cell
// never changes (shapes are immutable).
unsafe impl InplaceArray for ShapeObj {
    type Elem = i64;
    #[inline]
    fn inplace_len(&self) -> usize {
        self.cell.size
    }
}

/// An immutable sequence of dimensions (`ffi.Shape`, C++ `ffi::Shape`, Python `tvm_ffi.Shape`),
/// as tensors report theirs.
///
/// A shape never changes, so it derefs to `&[i64]`: index it, slice it, iterate it, compare
/// it with a slice. [`Shape::new`] allocates the object and its dimensions in one block, as
/// C++ does. A `Shape` argument also accepts an `Array` of integers (copied, as C++ does).
///
/// ```
/// use tvm_ffi::Shape;
/// let shape = Shape::new(&[2, 3, 4]);
/// assert_eq!(shape.len(), 3);
/// assert_eq!(shape[1], 3);
/// assert_eq!(&shape[..2], &[2, 3]);
/// assert_eq!(shape.iter().product::<i64>(), 24);
/// let same: Shape = vec![2, 3, 4].into();
/// assert_eq!(shape, same);
/// assert_eq!(shape.to_string(), "Shape(2, 3, 4)");
/// let dims: Shape = (1..=3).collect();
/// assert_eq!(dims.to_vec(), vec![1, 2, 3]);
/// ```
#[derive(Clone)]
#[repr(transparent)]
pub struct Shape {
    obj: ObjectRef<ShapeObj>,
}

impl Shape {
    /// A new shape of `dims`. Fails only when memory runs out, which raises `MemoryError` at
    /// the FFI boundary (as `ObjectRef::new` does).
    ///
    /// ```
    /// let shape = tvm_ffi::Shape::new(&[2, 3]);
    /// assert_eq!(&*shape, &[2, 3]);
    /// ```
    #[inline]
    pub fn new(dims: &[i64]) -> Shape {
        // SAFETY: the payload is a cell pointing at the `dims.len()` elements that follow it,
        // all written here (a copy cannot unwind).
        let ptr = unsafe {
            alloc_inplace_array::<ShapeObj>(ti::kTVMFFIShape, dims.len(), |payload, elems| {
                std::ptr::copy_nonoverlapping(dims.as_ptr(), elems, dims.len());
                payload.write(ShapeObj {
                    cell: TVMFFIShapeCell {
                        data: elems,
                        size: dims.len(),
                    },
                });
            })
        };
        Shape {
            // SAFETY: a fresh shape object with one reference.
            obj: unsafe { ObjectRef::from_raw(ptr) },
        }
    }

    /// The dimensions.
    #[inline]
    pub fn as_slice(&self) -> &[i64] {
        let cell = self.obj.cell;
        if cell.size == 0 {
            return &[];
        }
        // SAFETY: a shape's cell points to `size` dimensions that live and never change as
        // long as the object (Rust keeps them inline, C++ inline or in its own vector).
        unsafe { std::slice::from_raw_parts(cell.data, cell.size) }
    }

    /// The product of the dimensions (the number of elements of a tensor of this shape).
    pub fn product(&self) -> i64 {
        self.iter().product()
    }

    /// The underlying object.
    pub fn as_object_ref(&self) -> &ObjectRef<ShapeObj> {
        &self.obj
    }
    /// Unwraps into the object.
    pub fn into_object_ref(self) -> ObjectRef<ShapeObj> {
        self.obj
    }
    /// Wraps a shape object.
    pub fn from_object_ref(obj: ObjectRef<ShapeObj>) -> Self {
        Shape { obj }
    }
}

impl std::ops::Deref for Shape {
    type Target = [i64];
    #[inline]
    fn deref(&self) -> &[i64] {
        self.as_slice()
    }
}

impl AsRef<[i64]> for Shape {
    fn as_ref(&self) -> &[i64] {
        self.as_slice()
    }
}

impl<'a> IntoIterator for &'a Shape {
    type Item = &'a i64;
    type IntoIter = std::slice::Iter<'a, i64>;
    fn into_iter(self) -> Self::IntoIter {
        self.as_slice().iter()
    }
}

impl From<&[i64]> for Shape {
    fn from(dims: &[i64]) -> Self {
        Shape::new(dims)
    }
}
impl<const N: usize> From<[i64; N]> for Shape {
    fn from(dims: [i64; N]) -> Self {
        Shape::new(&dims)
    }
}
impl From<Vec<i64>> for Shape {
    fn from(dims: Vec<i64>) -> Self {
        Shape::new(&dims)
    }
}
impl From<&Shape> for Vec<i64> {
    fn from(shape: &Shape) -> Self {
        shape.to_vec()
    }
}
impl FromIterator<i64> for Shape {
    fn from_iter<I: IntoIterator<Item = i64>>(dims: I) -> Self {
        let dims: Vec<i64> = super::built(super::try_collect(dims.into_iter(), Ok));
        Shape::new(&dims)
    }
}

impl Default for Shape {
    /// The empty shape (of a scalar).
    fn default() -> Self {
        Shape::new(&[])
    }
}

impl PartialEq for Shape {
    /// Equal dimensions (C++ compares shapes by content too).
    fn eq(&self, other: &Self) -> bool {
        self.as_slice() == other.as_slice()
    }
}
impl Eq for Shape {}
impl PartialEq<[i64]> for Shape {
    fn eq(&self, other: &[i64]) -> bool {
        self.as_slice() == other
    }
}
impl<const N: usize> PartialEq<[i64; N]> for Shape {
    fn eq(&self, other: &[i64; N]) -> bool {
        self.as_slice() == other
    }
}
impl std::hash::Hash for Shape {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        self.as_slice().hash(state)
    }
}

impl std::fmt::Debug for Shape {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        std::fmt::Debug::fmt(self.as_slice(), f)
    }
}

impl std::fmt::Display for Shape {
    /// The runtime's repr (`ffi.ReprPrint`), as Python prints the shape: `Shape(2, 3)`.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        std::fmt::Display::fmt(&self.obj, f)
    }
}

impl From<Shape> for ObjectRef<AnyObject> {
    fn from(shape: Shape) -> Self {
        shape.obj.into_object()
    }
}

impl TypeSchema for Shape {
    fn type_str() -> String {
        "ffi.Shape".into()
    }
}

impl IntoAny for Shape {
    fn into_any(self) -> Any {
        self.obj.into_any()
    }
}
impl IntoAny for &Shape {
    fn into_any(self) -> Any {
        self.obj.clone().into_any()
    }
}

impl<'a> FromAny<'a> for Shape {
    /// A `Shape`, or an `Array` of integers made into a new shape (as C++ converts one).
    fn from_any(view: &'a AnyView<'a>) -> Option<Self> {
        if let Some(obj) = <&ObjectRef<ShapeObj>>::from_any(view) {
            return Some(Shape::from_object_ref(obj.clone()));
        }
        let array = <&ObjectRef<ArrayObj>>::from_any(view)?;
        let array = super::Array::<Any>::from_object_ref(array.clone());
        let views = array.as_views();
        let mut dims = Vec::new();
        dims.try_reserve_exact(views.len()).ok()?;
        for v in views {
            dims.push(v.checked_cast::<i64>()?);
        }
        Some(Shape::new(&dims))
    }
    fn from_any_exact(view: &'a AnyView<'a>) -> Option<Self> {
        <&ObjectRef<ShapeObj>>::from_any(view).map(|obj| Shape::from_object_ref(obj.clone()))
    }
    /// The shape made of an `Array` of integers (as C++ converts one).
    fn reencode(view: &'a AnyView<'a>) -> Option<Any> {
        Self::from_any(view).map(IntoAny::into_any)
    }
    #[inline]
    fn match_type_index(index: i32) -> bool {
        <ObjectRef<ShapeObj>>::match_type_index(index)
    }
}

impl_into_arg_borrowed! {
    [] Shape => |h| object_view(h.as_object_ref());
}
