//! Calling with Rust values: [`IntoArg`] turns each argument into a borrowed view (holding
//! whatever the view points to for the duration of the call), [`IntoArgs`] a whole argument
//! list.
use super::Function;
use crate::error::{Error, Result};
use crate::object::{ObjectRef, ObjectType};
use crate::sys::{self, TVMFFIAny};
use crate::value::{Any, AnyView, BigInt, Bytes, DataType, Device, IntoAny, String};

/// A value that can be passed as an argument of [`Function::call`].
///
/// `Holder` keeps whatever the borrowed view points to alive during the call (a temporary
/// string object, or nothing at all for plain values and borrowed references).
pub trait IntoArg {
    /// What lives on the caller's stack during the call.
    type Holder;
    /// Prepares the argument.
    fn into_holder(self) -> Result<Self::Holder>;
    /// The borrowed view of the prepared argument.
    fn view(holder: &Self::Holder) -> TVMFFIAny;
}

macro_rules! impl_into_arg_pod {
    ($($t:ty),*) => {$(
        impl IntoArg for $t {
            type Holder = $t;
            #[inline]
            fn into_holder(self) -> Result<$t> { Ok(self) }
            #[inline]
            fn view(holder: &$t) -> TVMFFIAny { holder.into_any().into_raw() }
        }
        impl IntoArg for &$t {
            type Holder = $t;
            #[inline]
            fn into_holder(self) -> Result<$t> { Ok(*self) }
            #[inline]
            fn view(holder: &$t) -> TVMFFIAny { holder.into_any().into_raw() }
        }
    )*};
}
impl_into_arg_pod!(i8, i16, i32, i64, isize, u8, u16, u32, bool, f32, f64, DataType, Device);

macro_rules! impl_into_arg_wide {
    ($($t:ty),*) => {$(
        /// An `int`, or an `ffi.BigInt` above `i64::MAX`.
        impl IntoArg for $t {
            type Holder = BigInt;
            #[inline]
            fn into_holder(self) -> Result<BigInt> {
                Ok(BigInt::from(self))
            }
            #[inline]
            fn view(holder: &BigInt) -> TVMFFIAny {
                *holder.as_raw()
            }
        }
    )*};
}
impl_into_arg_wide!(u64, usize, i128, u128);

impl IntoArg for () {
    type Holder = ();
    fn into_holder(self) -> Result<()> {
        Ok(())
    }
    fn view(_: &()) -> TVMFFIAny {
        TVMFFIAny::NONE
    }
}

/// Implements `IntoArg` for an owned type `T` and `&T`, where `T` has a 16-byte raw form or
/// is an object reference, by borrowing it in place.
macro_rules! impl_into_arg_borrowed {
    ($([$($gen:tt)*] $t:ty => |$h:ident| $raw:expr;)*) => {$(
        impl<$($gen)*> $crate::function::IntoArg for $t {
            type Holder = $t;
            #[inline]
            fn into_holder(self) -> $crate::error::Result<$t> { Ok(self) }
            #[inline]
            fn view($h: &$t) -> $crate::sys::TVMFFIAny { $raw }
        }
        impl<'r, $($gen)*> $crate::function::IntoArg for &'r $t {
            type Holder = &'r $t;
            #[inline]
            fn into_holder(self) -> $crate::error::Result<&'r $t> { Ok(self) }
            #[inline]
            fn view($h: &&'r $t) -> $crate::sys::TVMFFIAny { let $h: &$t = *$h; $raw }
        }
    )*};
}
pub(crate) use impl_into_arg_borrowed;

/// The borrowed view of an object reference (used by the `IntoArg` impls of object wrappers
/// in higher layers).
#[inline]
pub(crate) fn object_view<T: ObjectType>(obj: &ObjectRef<T>) -> TVMFFIAny {
    crate::value::pod(
        obj.type_index(),
        sys::TVMFFIAnyValue {
            v_obj: obj.as_raw().as_ptr(),
        },
    )
}

impl_into_arg_borrowed! {
    [T: ObjectType] ObjectRef<T> => |h| object_view(h);
    [] Function => |h| object_view(&h.0);
    [] Error => |h| object_view(h.as_object_ref());
    [] String => |h| *h.as_raw();
    [] Bytes => |h| *h.as_raw();
    [] BigInt => |h| *h.as_raw();
    [] Any => |h| *h.as_raw();
}

impl<'a> IntoArg for AnyView<'a> {
    type Holder = AnyView<'a>;
    #[inline]
    fn into_holder(self) -> Result<Self> {
        Ok(self)
    }
    #[inline]
    fn view(holder: &Self) -> TVMFFIAny {
        *holder.as_raw()
    }
}

impl IntoArg for &str {
    type Holder = String;
    #[inline]
    fn into_holder(self) -> Result<String> {
        Ok(String::new(self))
    }
    #[inline]
    fn view(holder: &String) -> TVMFFIAny {
        *holder.as_raw()
    }
}
impl IntoArg for std::string::String {
    type Holder = String;
    fn into_holder(self) -> Result<String> {
        Ok(String::new(&self))
    }
    fn view(holder: &String) -> TVMFFIAny {
        *holder.as_raw()
    }
}
impl IntoArg for &std::string::String {
    type Holder = String;
    fn into_holder(self) -> Result<String> {
        Ok(String::new(self))
    }
    fn view(holder: &String) -> TVMFFIAny {
        *holder.as_raw()
    }
}
impl IntoArg for &[u8] {
    type Holder = Bytes;
    fn into_holder(self) -> Result<Bytes> {
        Ok(Bytes::new(self))
    }
    fn view(holder: &Bytes) -> TVMFFIAny {
        *holder.as_raw()
    }
}
impl<T: IntoArg> IntoArg for Option<T> {
    type Holder = Option<T::Holder>;
    #[inline]
    fn into_holder(self) -> Result<Self::Holder> {
        self.map(T::into_holder).transpose()
    }
    #[inline]
    fn view(holder: &Self::Holder) -> TVMFFIAny {
        holder.as_ref().map_or(TVMFFIAny::NONE, T::view)
    }
}

/// An argument list for [`Function::call`]: a tuple of [`IntoArg`] values (up to 12), or a
/// slice of [`AnyView`]s or [`Any`]s.
pub trait IntoArgs {
    /// Prepares the arguments and runs `body` with their views.
    fn with_args<R>(self, body: impl FnOnce(&[AnyView<'_>]) -> R) -> Result<R>;
}

impl IntoArgs for &[AnyView<'_>] {
    #[inline]
    fn with_args<R>(self, body: impl FnOnce(&[AnyView<'_>]) -> R) -> Result<R> {
        Ok(body(self))
    }
}
impl IntoArgs for &[Any] {
    #[inline]
    fn with_args<R>(self, body: impl FnOnce(&[AnyView<'_>]) -> R) -> Result<R> {
        // SAFETY: Any and AnyView are both repr(transparent) over TVMFFIAny.
        let views =
            unsafe { AnyView::slice_from_raw(self.as_ptr() as *const TVMFFIAny, self.len()) };
        Ok(body(views))
    }
}
impl IntoArgs for &Vec<Any> {
    #[inline]
    fn with_args<R>(self, body: impl FnOnce(&[AnyView<'_>]) -> R) -> Result<R> {
        self.as_slice().with_args(body)
    }
}

macro_rules! impl_into_args_tuple {
    ($($arg:ident $holder:ident $idx:tt),*) => {
        impl<$($arg: IntoArg),*> IntoArgs for ($($arg,)*) {
            #[inline]
            #[allow(unused_variables, clippy::unused_unit)]
            fn with_args<R>(self, body: impl FnOnce(&[AnyView<'_>]) -> R) -> Result<R> {
                $(let $holder = self.$idx.into_holder()?;)*
                let raw: [TVMFFIAny; 0 $(+ { let _ = $idx; 1 })*] = [$($arg::view(&$holder)),*];
                // SAFETY: views of holders that live until the end of this function.
                let views = unsafe { AnyView::slice_from_raw(raw.as_ptr(), raw.len()) };
                Ok(body(views))
            }
        }
    };
}
impl_into_args_tuple!();
impl_into_args_tuple!(A0 h0 0);
impl_into_args_tuple!(A0 h0 0, A1 h1 1);
impl_into_args_tuple!(A0 h0 0, A1 h1 1, A2 h2 2);
impl_into_args_tuple!(A0 h0 0, A1 h1 1, A2 h2 2, A3 h3 3);
impl_into_args_tuple!(A0 h0 0, A1 h1 1, A2 h2 2, A3 h3 3, A4 h4 4);
impl_into_args_tuple!(A0 h0 0, A1 h1 1, A2 h2 2, A3 h3 3, A4 h4 4, A5 h5 5);
impl_into_args_tuple!(A0 h0 0, A1 h1 1, A2 h2 2, A3 h3 3, A4 h4 4, A5 h5 5, A6 h6 6);
impl_into_args_tuple!(A0 h0 0, A1 h1 1, A2 h2 2, A3 h3 3, A4 h4 4, A5 h5 5, A6 h6 6, A7 h7 7);
impl_into_args_tuple!(A0 h0 0, A1 h1 1, A2 h2 2, A3 h3 3, A4 h4 4, A5 h5 5, A6 h6 6, A7 h7 7, A8 h8 8);
impl_into_args_tuple!(A0 h0 0, A1 h1 1, A2 h2 2, A3 h3 3, A4 h4 4, A5 h5 5, A6 h6 6, A7 h7 7, A8 h8 8, A9 h9 9);
impl_into_args_tuple!(A0 h0 0, A1 h1 1, A2 h2 2, A3 h3 3, A4 h4 4, A5 h5 5, A6 h6 6, A7 h7 7, A8 h8 8, A9 h9 9, A10 h10 10);
impl_into_args_tuple!(A0 h0 0, A1 h1 1, A2 h2 2, A3 h3 3, A4 h4 4, A5 h5 5, A6 h6 6, A7 h7 7, A8 h8 8, A9 h9 9, A10 h10 10, A11 h11 11);
