//! The accessors the three tensor types share, written once as macros that each type's
//! `impl` block expands: the metadata readers (`shape`, `strides`, `dtype`, ...) and, for the
//! two types that hold a tensor object, `check`, `as_slice` and `as_bytes` through a view. The
//! names in the bodies resolve where they expand, so this file depends on nothing but the
//! layout helpers.

/// The metadata accessors shared by the tensor types; `$lt` is how long the results borrow.
/// The accessors [`Tensor`](super::Tensor) and [`TensorMut`](super::TensorMut) share: both hold a tensor object and read it
/// through a [`TensorView`](super::TensorView).
macro_rules! owned_tensor_accessors {
    () => {
        /// The underlying `DLTensor`.
        #[inline]
        pub fn as_dltensor(&self) -> &DLTensor {
            &self.0.dl_tensor
        }

        view_accessors!('_);

        /// Starts checking this tensor as argument `name` (see [`TensorCheck`](super::TensorCheck)).
        #[inline]
        pub fn check<'n>(&self, name: &'n str) -> TensorCheck<'_, 'n> {
            self.view().check(name)
        }

        /// The elements; see [`TensorView::as_slice`](super::TensorView::as_slice).
        #[inline]
        pub fn as_slice<T: Element>(&self) -> Result<&[T]> {
            self.view().as_slice()
        }

        /// The data as bytes, whatever the dtype; see [`TensorView::as_bytes`](super::TensorView::as_bytes).
        #[inline]
        pub fn as_bytes(&self) -> Result<&[u8]> {
            self.view().as_bytes()
        }
    };
}

macro_rules! view_accessors {
    ($lt:lifetime) => {
        /// The extent of each dimension (empty for a scalar tensor).
        #[inline]
        pub fn shape(&self) -> &$lt [i64] {
            shape_of(self.as_dltensor())
        }

        /// The stride of each dimension, in elements; computed row-major strides when the
        /// DLTensor leaves them null.
        pub fn strides(&self) -> Cow<$lt, [i64]> {
            let dl = self.as_dltensor();
            match strides_of(dl) {
                Some(strides) => Cow::Borrowed(strides),
                None => Cow::Owned(compact_strides(shape_of(dl))),
            }
        }

        /// The number of dimensions.
        #[inline]
        pub fn ndim(&self) -> usize {
            self.as_dltensor().ndim.max(0) as usize
        }

        /// The number of elements (the product of the shape; 1 for a scalar tensor, 0 for an
        /// invalid shape with a negative extent).
        pub fn numel(&self) -> usize {
            checked_numel(self.shape()).unwrap_or(0)
        }

        /// The element type.
        #[inline]
        pub fn dtype(&self) -> DataType {
            DataType::from(self.as_dltensor().dtype)
        }

        /// The device holding the data.
        #[inline]
        pub fn device(&self) -> Device {
            Device::from(self.as_dltensor().device)
        }

        /// The offset of the first element from [`data_ptr`](Self::data_ptr), in bytes.
        #[inline]
        pub fn byte_offset(&self) -> u64 {
            self.as_dltensor().byte_offset
        }

        /// The DLTensor's data pointer (without the byte offset), as C++ `data_ptr()`.
        #[inline]
        pub fn data_ptr(&self) -> *mut c_void {
            self.as_dltensor().data
        }

        /// Whether the elements are stored compactly in row-major order (C++ `IsContiguous`:
        /// extent-1 dimensions may have any stride and empty tensors are contiguous).
        pub fn is_contiguous(&self) -> bool {
            is_contiguous(self.as_dltensor())
        }

        /// The address of the first element, `data_ptr() + byte_offset()` (what a GPU kernel
        /// receives as its pointer argument), computed with checked arithmetic: an error for a
        /// byte offset that leaves the address space. Rust never dereferences it; for device
        /// memory it is an address on that device.
        pub fn first_element_ptr(&self) -> Result<*mut c_void> {
            super::layout::first_element_ptr(self.as_dltensor())
        }
    };
}

pub(super) use {owned_tensor_accessors, view_accessors};
