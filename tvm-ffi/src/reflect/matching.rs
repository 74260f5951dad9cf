//! Matching a value against typed arms: what the [`match_any!`](crate::match_any) macro's
//! expansion calls, and the dispatch on runtime type indices it is built on, public for tables
//! of your own (a pass's rules keyed by node type): [`ArmTable`] and [`arm_takes`].
//!
//! The expansion views the scrutinee as an [`AnyView`] ([`MatchSource`]), then tries the arms in
//! source order: an arm takes the value when its runtime type is the arm's type
//! ([`arm_takes`]) and the value converts (`FromAny::from_any`, as `checked_cast`). With enough
//! arms, the call site's [`ArmTable`] caches, per runtime type index, which arms take it, and
//! the chain skips the others with one bit test each: a value of the 20th of 20 object types
//! runs one conversion, not twenty failed casts. The table caches what the arms would compute
//! themselves, so the result is the same with or without it.
use std::ptr::null_mut;
use std::sync::atomic::{AtomicPtr, AtomicU64, AtomicUsize, Ordering};

use crate::base::value::AnyView;
use crate::call::function::IntoArg;

/// What `match_any!` can match on: every value that can be passed as an argument by
/// reference, viewed in place (`Any`, `AnyView`, `ObjectRef<T>`, `Array<T>`, `Map<K, V>`,
/// `Function`, `String`, ..., and references to them).
///
/// ```
/// use tvm_ffi::matching::MatchSource;
/// use tvm_ffi::{Any, Array};
/// let array = Array::new([1i64, 2]).unwrap();
/// let any = Any::new(array.clone());
/// assert_eq!(array.match_view().type_index(), any.match_view().type_index());
/// ```
#[diagnostic::on_unimplemented(
    message = "`match_any!` cannot match on a `{Self}`",
    label = "not a TVM-FFI value",
    note = "match on an `Any`, `AnyView`, `ObjectRef<T>`, a container (`Array`, `Map`, `List`, `Dict`, `Shape`), a `Function`, `Module`, `Tensor` or `String`, or a reference to one"
)]
#[doc(hidden)] // what `match_any!` expands to; not an API of its own
pub trait MatchSource {
    /// The value as a view borrowing `self`.
    fn match_view(&self) -> AnyView<'_>;
}

impl<T: IntoArg<Holder = T>> MatchSource for T {
    #[inline(always)]
    fn match_view(&self) -> AnyView<'_> {
        T::view(self)
    }
}

/// A borrowed view (what `Any::as_view` returns), which is passed by value as an argument.
impl MatchSource for &AnyView<'_> {
    #[inline(always)]
    fn match_view(&self) -> AnyView<'_> {
        **self
    }
}

/// Whether `view` converts to a type whose `FromAny::MATCHED_BY_TYPE_INDEX` holds as soon as its
/// type index matches: a value that is no object, or an object whose construction is sealed.
/// `match_any!` then takes the first arm its table names without converting. Not part of the
/// public API.
#[doc(hidden)]
#[inline(always)]
pub fn settled(view: &AnyView<'_>) -> bool {
    let raw = view.as_raw();
    if raw.type_index < crate::abi::sys::type_index::kTVMFFIStaticObjectBegin {
        return true;
    }
    // SAFETY: an object value: `v_obj` is a live object, kept alive by the view.
    match std::ptr::NonNull::new(unsafe { raw.value.v_obj }) {
        // SAFETY: as above.
        Some(object) => unsafe { crate::reflect::reflection::construction::is_sealed(object) },
        None => false,
    }
}

/// Whether a `match_any!` arm of type `T` takes a value of runtime type `type_index`, before
/// converting it (the question an [`ArmTable`]'s classifier asks): for the numbers, object
/// references and containers, the type itself, not what converts to it (an `int` for `i64`,
/// an instance of the type or a subtype for an object reference, an `ffi.Array` for
/// `Array<T>`); for a type whose conversion alone decides (`Any`, `String`, which takes
/// several kinds of value, a matcher of your own), every registered index. `false` for an
/// index the runtime does not know.
///
/// ```
/// use tvm_ffi::matching::arm_takes;
/// use tvm_ffi::{Any, Array, Shape};
/// let array = Any::new(Array::new([1i64]).unwrap()).type_index();
/// let shape = Any::new(Shape::new(&[1])).type_index();
/// assert!(arm_takes::<Array<f64>>(array)); // the elements are converted afterwards
/// assert!(!arm_takes::<Array<i64>>(shape));
/// assert!(arm_takes::<i64>(Any::new(1i64).type_index()));
/// assert!(arm_takes::<Any>(shape));
/// // No such type: an object index the runtime never registered, and a negative one.
/// assert!(!arm_takes::<Shape>(1 << 20) && !arm_takes::<Any>(1 << 20) && !arm_takes::<Any>(-7));
/// ```
#[doc(hidden)] // what `match_any!` expands to; not an API of its own
pub fn arm_takes<T: for<'a> crate::base::value::FromAny<'a>>(type_index: i32) -> bool {
    // The registry first: an object type's answer asks the runtime about the index, which
    // must know it, and a type that takes every value takes no unknown index either.
    crate::base::object::type_info::is_registered(type_index) && T::match_type_index(type_index)
}

/// Type indices per page of an [`ArmTable`].
const PAGE: usize = 128;
/// Pages of an [`ArmTable`]: type indices `0..PAGE * PAGES` are cached, larger ones computed
/// on every match.
const PAGES: usize = 64;
/// Marks a filled slot (arms 0..62 are bits 0..62).
const FILLED: u64 = 1 << 63;

type Page = [AtomicU64; PAGE];

/// The per-call-site cache of `match_any!`: for each runtime type index, the mask of the arms
/// whose conversion can succeed on a value of that type (bit `k` for arm `k`, `k` < 63; bit 63
/// is the table's own mark, cleared from every answer, so arms from 63 on are always tried).
///
/// The mask is computed by the call site's classifier (a function of the type index only: the
/// inheritance of a registered index never changes) the first time a type index is seen, and
/// read with two loads afterwards. Pages of slots are allocated on first use and live as long
/// as the program. The classifier's address identifies the call site's instantiation: in a
/// generic function, another instantiation of the same call site classifies without the
/// cache.
///
/// Public as [`tvm_ffi::matching::ArmTable`](crate::matching::ArmTable) for dispatch of your
/// own on runtime type indices (a rule table keyed by node type), with the same caching.
///
/// ```
/// use tvm_ffi::matching::ArmTable;
/// static TABLE: ArmTable = ArmTable::new();
/// let classify: fn(i32) -> u64 = |index| if index == 1 { 0b10 } else { 0b01 };
/// assert_eq!(TABLE.candidates(1, classify), 0b10);
/// assert_eq!(TABLE.candidates(1, classify), 0b10); // cached
/// assert_eq!(TABLE.candidates(2, classify), 0b01);
/// ```
#[doc(hidden)] // what `match_any!` expands to; not an API of its own
pub struct ArmTable {
    owner: AtomicUsize,
    pages: [AtomicPtr<Page>; PAGES],
}

impl Default for ArmTable {
    fn default() -> Self {
        Self::new()
    }
}

impl ArmTable {
    /// An empty table (a `static` per call site).
    pub const fn new() -> ArmTable {
        ArmTable {
            owner: AtomicUsize::new(0),
            pages: [const { AtomicPtr::new(null_mut()) }; PAGES],
        }
    }

    /// The mask of the arms that can match a value of type `index`, as `classify` computes it
    /// (cached per type index).
    #[inline]
    pub fn candidates(&self, index: i32, classify: fn(i32) -> u64) -> u64 {
        let key = classify as usize;
        let owner = self.owner.load(Ordering::Relaxed);
        if owner != key && !self.claim(owner, key) {
            return classify(index) & !FILLED;
        }
        let slot = index as u32 as usize;
        let (page, offset) = (slot / PAGE, slot % PAGE);
        if page < PAGES {
            let ptr = self.pages[page].load(Ordering::Acquire);
            if !ptr.is_null() {
                // SAFETY: a non-null page pointer is a leaked `Box<Page>`, never freed.
                let page: &Page = unsafe { &*ptr };
                let mask = page[offset].load(Ordering::Relaxed);
                if mask != 0 {
                    return mask & !FILLED;
                }
            }
        }
        self.fill(index, classify)
    }

    /// Makes `key` the owner of an unowned table; whether `key` owns it now.
    #[cold]
    fn claim(&self, owner: usize, key: usize) -> bool {
        if owner != 0 {
            return false;
        }
        match self
            .owner
            .compare_exchange(0, key, Ordering::Relaxed, Ordering::Relaxed)
        {
            Ok(_) => true,
            Err(actual) => actual == key,
        }
    }

    #[cold]
    #[inline(never)]
    fn fill(&self, index: i32, classify: fn(i32) -> u64) -> u64 {
        let mask = classify(index) & !FILLED;
        let slot = index as u32 as usize;
        let (page, offset) = (slot / PAGE, slot % PAGE);
        if page >= PAGES {
            return mask;
        }
        let mut ptr = self.pages[page].load(Ordering::Acquire);
        if ptr.is_null() {
            let fresh = Box::into_raw(Box::new([const { AtomicU64::new(0) }; PAGE]));
            match self.pages[page].compare_exchange(
                null_mut(),
                fresh,
                Ordering::AcqRel,
                Ordering::Acquire,
            ) {
                Ok(_) => ptr = fresh,
                Err(current) => {
                    // SAFETY: `fresh` was never shared: this thread lost the race.
                    drop(unsafe { Box::from_raw(fresh) });
                    ptr = current;
                }
            }
        }
        // SAFETY: a non-null page pointer is a leaked `Box<Page>`, never freed.
        let page: &Page = unsafe { &*ptr };
        page[offset].store(mask | FILLED, Ordering::Relaxed);
        mask
    }
}

/// Matches a value against typed arms, in source order: the first arm that takes the value, whose
/// pattern matches and whose guard holds, runs; `_ => ..` runs when none does.
///
/// The value is an [`Any`](crate::Any), [`AnyView`], [`ObjectRef<T>`](crate::ObjectRef), a
/// container, a [`Function`](crate::Function), or a reference to one; it is borrowed, never
/// consumed. Each arm is `Type(pattern) [if guard] => body`, where `Type` is any [`FromAny`]
/// type: `i64`, `f64`, `bool`, `String`, `&str`, `ObjectRef<T>`, `&ObjectRef<T>` (no reference
/// count), `Array<T>`, `Map<K, V>`, `Option<T>`, ..., or a type of your own that implements
/// `FromAny`. An object payload is written `ObjectRef<Point>(p)` (or through an alias,
/// `type Point = ObjectRef<PointObj>`).
///
/// An arm takes a value of its own runtime type, then converts it as
/// [`checked_cast`](crate::Any::checked_cast) does: `i64` takes an `int` (not a `bool`), `f64`
/// a `float` (not an `int`), `bool` a `bool`, `ObjectRef<T>` an instance of `T` or of a
/// subtype, `Array<T>` an `ffi.Array` whose elements all convert to `T` (`Array<f64>` takes
/// `[1, 2.5]`), `Map<K, V>` an `ffi.Map` likewise. `pattern` binds the converted value; a
/// refutable pattern (`i64(0)`, `bool(true)`) falls through to the next arm like a failed guard.
///
/// With four arms or more, the expansion keeps a table per call site that maps each runtime
/// type index to the arms that take it, so a match over many object types costs one lookup and
/// one conversion wherever the matching arm is.
///
/// Arm bodies are ordinary expressions of the enclosing function: `return`, `?`, and `break`
/// or `continue` of an enclosing loop work in them (not in guards).
///
/// [`FromAny`]: crate::FromAny
///
/// ```
/// use tvm_ffi::{match_any, Any, Array, ObjectRef};
///
/// #[derive(tvm_ffi::Object)]
/// #[ffi_type(key = "doc_examples.match_any.Var")]
/// #[repr(C)]
/// pub struct Var { pub name: tvm_ffi::String }
///
/// fn describe(value: &Any) -> String {
///     match_any! { value {
///         i64(0) => "zero".to_string(),
///         i64(n) if n < 0 => format!("negative {n}"),
///         i64(n) => format!("int {n}"),
///         f64(x) => format!("float {x}"),
///         bool(b) => format!("bool {b}"),
///         ObjectRef<Var>(v) => format!("var {}", &*v.name),
///         Array<i64>(xs) => format!("{} ints", xs.len()),
///         &str(s) => format!("str {s:?}"),
///         _ => format!("a {}", value.type_key()),
///     }}
/// }
///
/// assert_eq!(describe(&Any::new(true)), "bool true");
/// assert_eq!(describe(&Any::new(0i64)), "zero");
/// assert_eq!(describe(&Any::new(-2i64)), "negative -2");
/// assert_eq!(describe(&Any::new(2.5f64)), "float 2.5");
/// assert_eq!(describe(&Any::new(ObjectRef::new(Var { name: "x".into() }))), "var x");
/// assert_eq!(describe(&Any::new(Array::new([1i64, 2]).unwrap())), "2 ints");
/// assert_eq!(describe(&Any::new(Array::new([Any::new("a")]).unwrap())), "a ffi.Array");
/// assert_eq!(describe(&Any::new("text")), r#"str "text""#);
/// assert_eq!(describe(&Any::none()), "a None");
/// ```
#[macro_export]
macro_rules! match_any {
    ($($input:tt)*) => {
        $crate::__private::match_any_impl! { $crate; $($input)* }
    };
}
