//! Calling with Rust values: [`IntoArg`] turns each argument into a borrowed view (holding
//! whatever the view points to for the duration of the call), [`IntoArgs`] a whole argument
//! list.
use super::moved::{Moved, MovedArg};
use super::Function;
use crate::base::error::{Error, Result};
use crate::base::object::{ObjectRef, ObjectType};
use crate::base::value::{Any, AnyView, BigInt, Bytes, DataType, Device, IntoAny, String};

/// Seals [`IntoArg`]: the call path hands each view to foreign code as a raw value, so only
/// this crate and the derives (through `__private`) may say what a view is.
///
/// # Safety
/// Implemented only by this crate and by the code `#[derive(Enum)]` and `#[derive(Variant)]`
/// generate: the type's [`IntoArg::view`] is the SDK's view of the value (an `unsafe impl`,
/// because the name is reachable through `__private`).
pub unsafe trait Sealed {}

/// A value that can be passed as an argument of [`Function::call`].
///
/// `Holder` keeps whatever the borrowed view points to alive during the call (a temporary
/// string object, or nothing at all for plain values and borrowed references); the view
/// borrows the holder, so it cannot outlive it. The trait is sealed: the SDK implements it
/// for every value type, `#[derive(Enum)]` and `#[derive(Variant)]` for theirs; any other
/// value is passed as an [`Any`] (`Any::new(value)`, through [`crate::IntoAny`]).
///
/// ```
/// use tvm_ffi::{Any, Function};
/// let echo = Function::from_packed(|args| args[0].to_owned());
/// // Plain values, strings, objects and `Any`s are all arguments.
/// let back: i64 = echo.call_as((7,)).unwrap();
/// assert_eq!(back, 7);
/// let s: tvm_ffi::String = echo.call_as(("text",)).unwrap();
/// assert_eq!(&*s, "text");
/// let any: i64 = echo.call_as((Any::new(3i64),)).unwrap();
/// assert_eq!(any, 3);
/// ```
pub trait IntoArg: Sealed {
    /// What lives on the caller's stack during the call.
    type Holder;
    /// Prepares the argument.
    fn into_holder(self) -> Result<Self::Holder>;
    /// The borrowed view of the prepared argument.
    fn view(holder: &Self::Holder) -> AnyView<'_>;
}

macro_rules! impl_into_arg_pod {
    ($($t:ty),*) => {$(
        // SAFETY: this crate's own view of the value.
        unsafe impl Sealed for $t {}
        impl IntoArg for $t {
            type Holder = $t;
            #[inline]
            fn into_holder(self) -> Result<$t> { Ok(self) }
            #[inline]
            fn view(holder: &$t) -> AnyView<'_> { AnyView::of_plain(*holder) }
        }
        // SAFETY: this crate's own view of the value.
        unsafe impl Sealed for &$t {}
        impl IntoArg for &$t {
            type Holder = $t;
            #[inline]
            fn into_holder(self) -> Result<$t> { Ok(*self) }
            #[inline]
            fn view(holder: &$t) -> AnyView<'_> { AnyView::of_plain(*holder) }
        }
    )*};
}
impl_into_arg_pod!(i8, i16, i32, i64, isize, u8, u16, u32, bool, f32, f64, DataType, Device);

macro_rules! impl_into_arg_wide {
    ($($t:ty),*) => {$(
        // SAFETY: this crate's own view of the value.
        unsafe impl Sealed for $t {}
        /// An `int`, or an `ffi.BigInt` above `i64::MAX`.
        impl IntoArg for $t {
            type Holder = BigInt;
            #[inline]
            fn into_holder(self) -> Result<BigInt> {
                Ok(BigInt::from(self))
            }
            #[inline]
            fn view(holder: &BigInt) -> AnyView<'_> {
                holder.as_view()
            }
        }
    )*};
}
impl_into_arg_wide!(u64, usize, i128, u128);

// SAFETY: this crate's own view of the value.

unsafe impl Sealed for () {}
impl IntoArg for () {
    type Holder = ();
    fn into_holder(self) -> Result<()> {
        Ok(())
    }
    fn view(_: &()) -> AnyView<'_> {
        AnyView::none()
    }
}

/// Implements `IntoArg` for an owned type `T` and `&T` by borrowing it in place: `$view` is
/// the view of `&T` (named `$h`), which borrows it.
macro_rules! impl_into_arg_borrowed {
    ($([$($gen:tt)*] $t:ty => |$h:ident| $view:expr;)*) => {$(
        // SAFETY: this crate's own view of the value.
        unsafe impl<$($gen)*> $crate::call::function::args::Sealed for $t {}
        impl<$($gen)*> $crate::call::function::IntoArg for $t {
            type Holder = $t;
            #[inline]
            fn into_holder(self) -> $crate::base::error::Result<$t> { Ok(self) }
            #[inline]
            fn view($h: &$t) -> $crate::base::value::AnyView<'_> { $view }
        }
        // SAFETY: this crate's own view of the value.
        unsafe impl<'r, $($gen)*> $crate::call::function::args::Sealed for &'r $t {}
        impl<'r, $($gen)*> $crate::call::function::IntoArg for &'r $t {
            type Holder = &'r $t;
            #[inline]
            fn into_holder(self) -> $crate::base::error::Result<&'r $t> { Ok(self) }
            #[inline]
            fn view<'h>($h: &'h &'r $t) -> $crate::base::value::AnyView<'h> { let $h: &$t = *$h; $view }
        }
    )*};
}
pub(crate) use impl_into_arg_borrowed;

/// The borrowed view of an object reference (used by the `IntoArg` impls of object wrappers
/// in higher layers).
#[inline]
pub(crate) fn object_view<T: ObjectType>(obj: &ObjectRef<T>) -> AnyView<'_> {
    AnyView::of_object(obj)
}

impl_into_arg_borrowed! {
    [T: ObjectType] ObjectRef<T> => |h| object_view(h);
    [] Function => |h| object_view(&h.0);
    [] Error => |h| object_view(h.as_object_ref());
    [] String => |h| h.as_view();
    [] Bytes => |h| h.as_view();
    [] BigInt => |h| h.as_view();
    [] Any => |h| h.view();
}

// SAFETY: this crate's own view of the value.

unsafe impl Sealed for AnyView<'_> {}
impl<'a> IntoArg for AnyView<'a> {
    type Holder = AnyView<'a>;
    #[inline]
    fn into_holder(self) -> Result<Self> {
        Ok(self)
    }
    #[inline]
    fn view<'h>(holder: &'h Self) -> AnyView<'h> {
        *holder
    }
}

// SAFETY: this crate's own view of the value.

unsafe impl Sealed for &str {}
impl IntoArg for &str {
    type Holder = String;
    #[inline]
    fn into_holder(self) -> Result<String> {
        Ok(String::new(self))
    }
    #[inline]
    fn view(holder: &String) -> AnyView<'_> {
        holder.as_view()
    }
}
// SAFETY: this crate's own view of the value.
unsafe impl Sealed for std::string::String {}
impl IntoArg for std::string::String {
    type Holder = String;
    fn into_holder(self) -> Result<String> {
        Ok(String::new(&self))
    }
    fn view(holder: &String) -> AnyView<'_> {
        holder.as_view()
    }
}
// SAFETY: this crate's own view of the value.
unsafe impl Sealed for &std::string::String {}
impl IntoArg for &std::string::String {
    type Holder = String;
    fn into_holder(self) -> Result<String> {
        Ok(String::new(self))
    }
    fn view(holder: &String) -> AnyView<'_> {
        holder.as_view()
    }
}
// SAFETY: this crate's own view of the value.
unsafe impl Sealed for &[u8] {}
impl IntoArg for &[u8] {
    type Holder = Bytes;
    fn into_holder(self) -> Result<Bytes> {
        Ok(Bytes::new(self))
    }
    fn view(holder: &Bytes) -> AnyView<'_> {
        holder.as_view()
    }
}
// SAFETY: this crate's own view of the value.
unsafe impl<T: IntoArg> Sealed for Option<T> {}
impl<T: IntoArg> IntoArg for Option<T> {
    type Holder = Option<T::Holder>;
    #[inline]
    fn into_holder(self) -> Result<Self::Holder> {
        self.map(T::into_holder).transpose()
    }
    #[inline]
    fn view(holder: &Self::Holder) -> AnyView<'_> {
        holder.as_ref().map_or(AnyView::none(), T::view)
    }
}

/// An argument list for [`Function::call`]: a tuple of [`IntoArg`] values (up to 12), or a
/// slice of [`AnyView`]s or [`Any`]s.
///
/// ```
/// use tvm_ffi::{Any, Function, IntoArgs};
/// let add = Function::from_typed(|a: i64, b: i64| a + b);
/// assert_eq!(add.call_as::<i64, _>((1, 2)).unwrap(), 3); // a tuple
/// let args = vec![Any::new(3i64), Any::new(4i64)]; // built at run time
/// assert_eq!(add.call_as::<i64, _>(&args).unwrap(), 7);
/// let count = (1i64, "two", 3.0).with_args(|views| views.len()).unwrap();
/// assert_eq!(count, 3);
/// ```
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
        Ok(body(Any::slice_as_views(self)))
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
                // Each view borrows its holder, which lives until the end of this function.
                let views: [AnyView<'_>; 0 $(+ { let _ = $idx; 1 })*] = [$($arg::view(&$holder)),*];
                Ok(body(&views))
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

// SAFETY: this crate's own view of the value.
unsafe impl<T: IntoAny> Sealed for Moved<T> {}
impl<T: IntoAny> IntoArg for Moved<T> {
    type Holder = MovedArg;
    fn into_holder(self) -> Result<MovedArg> {
        Ok(MovedArg::new(self.into_inner().into_any()))
    }
    fn view(holder: &MovedArg) -> AnyView<'_> {
        holder.view()
    }
}
