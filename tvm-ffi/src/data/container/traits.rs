//! The std and value traits the four containers implement alike, written once: `Clone` (another
//! reference), `IntoIterator` for a borrow, `FromIterator`, `From<Vec<_>>`, `Default`, `Debug`,
//! `Display`, conversion into `ObjectRef<AnyObject>`, `IntoAny` (owned and borrowed), `TypeSchema`
//! and `IntoArg`.
//!
//! Each container supplies what differs as private inherent functions the expansion calls:
//! `new` (building from items, with a `Result`), `build_from_vec` (the same from a `Vec`,
//! where an array has a faster loop), `debug_entries` (what `{:?}` lists, read in
//! place or under the container's lock) and `repr_object` (the object `{}` prints through
//! `ffi.ReprPrint`: the container itself, or a copy of a mutable one, since printing runs
//! user hooks that must not run under its lock).

/// The shared trait impls of `$ty<$params>` (fields `obj` and `_types`), whose items are
/// `$item` (`T`, `(K, V)`), whose `Debug` is a `debug_list` or a `debug_map` and whose borrowed
/// iterator (`iter()`) is `$iter`. Names resolve in this crate (`$crate::...`), so
/// an expansion needs no imports.
macro_rules! container_traits {
    ($ty:ident<$($p:ident),+>, item = $item:ty, $debug:ident, $what:literal, iter = $iter:ident) => {
        impl<$($p),+> Clone for $ty<$($p),+> {
            #[doc = concat!("Another reference to the same ", $what, " (not a copy).")]
            fn clone(&self) -> Self {
                $ty {
                    obj: self.obj.clone(),
                    _types: std::marker::PhantomData,
                }
            }
        }

        impl<'a, $($p: for<'b> $crate::base::value::FromAny<'b>),+> IntoIterator for &'a $ty<$($p),+> {
            type Item = <$iter<'a, $($p),+> as Iterator>::Item;
            type IntoIter = $iter<'a, $($p),+>;
            #[inline]
            fn into_iter(self) -> $iter<'a, $($p),+> {
                self.iter()
            }
        }

        impl<$($p: $crate::base::value::IntoAny),+> FromIterator<$item> for $ty<$($p),+> {
            #[doc = concat!("Collects into a new ", $what, ". Fails only when memory runs out, ")]
            #[doc = concat!("which raises `MemoryError` at the FFI boundary (as `ObjectRef::new` ")]
            #[doc = concat!("does); [`", stringify!($ty), "::new`] returns a `Result`.")]
            fn from_iter<I: IntoIterator<Item = $item>>(items: I) -> Self {
                $crate::data::container::built($ty::new(items))
            }
        }

        impl<$($p: $crate::base::value::IntoAny),+> From<Vec<$item>> for $ty<$($p),+> {
            fn from(items: Vec<$item>) -> Self {
                $crate::data::container::built($ty::build_from_vec(items))
            }
        }

        impl<$($p: $crate::base::value::IntoAny),+> Default for $ty<$($p),+> {
            #[doc = concat!("A new, empty ", $what, ".")]
            fn default() -> Self {
                std::iter::empty().collect()
            }
        }

        impl<$($p),+> std::fmt::Debug for $ty<$($p),+> {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.$debug().entries(self.debug_entries()).finish()
            }
        }

        impl<$($p),+> std::fmt::Display for $ty<$($p),+> {
            #[doc = concat!("The runtime's repr (`ffi.ReprPrint`), as Python prints the ", $what, ".")]
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                let printed = self.repr_object().map_err(|_| std::fmt::Error)?;
                std::fmt::Display::fmt(&printed, f)
            }
        }

        impl<$($p),+> From<$ty<$($p),+>>
            for $crate::base::object::ObjectRef<$crate::base::object::builtin::AnyObject>
        {
            fn from(container: $ty<$($p),+>) -> Self {
                container.obj.into_object()
            }
        }

        impl<$($p: $crate::base::value::TypeSchema),+> $crate::base::value::TypeSchema
            for $ty<$($p),+>
        {
            fn type_str() -> String {
                let args: &[String] = &[$($p::type_str()),+];
                format!("{}<{}>", stringify!($ty), args.join(", "))
            }
            fn type_schema() -> String {
                let args: &[String] = &[$($p::type_schema()),+];
                format!(
                    r#"{{"type":"ffi.{}","args":[{}]}}"#,
                    stringify!($ty),
                    args.join(",")
                )
            }
        }

        impl<$($p),+> $crate::base::value::IntoAny for $ty<$($p),+> {
            fn into_any(self) -> $crate::base::value::Any {
                self.obj.into_any()
            }
        }

        impl<$($p),+> $crate::base::value::IntoAny for &$ty<$($p),+> {
            fn into_any(self) -> $crate::base::value::Any {
                self.obj.clone().into_any()
            }
        }

        $crate::call::function::impl_into_arg_borrowed! {
            [$($p),+] $ty<$($p),+> => |h| $crate::call::function::object_view(h.as_object_ref());
        }
    };
}

pub(super) use container_traits;
