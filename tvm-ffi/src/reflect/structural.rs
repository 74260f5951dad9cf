//! Structural operations on values: the runtime's structural equality and hashing (with and
//! without free-variable mapping), the first structural mismatch, deep copy; and, in Rust, the
//! structural walk and visit ([`walk`], [`visit`]) and the copy-on-write structural map and
//! mutate ([`map`], [`mutate`]) of any value graph the runtime's reflection describes.
//!
//! Structural equality follows each type's `structural` kind and field flags (see
//! `#[ffi_type(structural = ..)]` and `#[ffi(structural = ..)]`) and its `__s_equal__` /
//! `__s_hash__` hooks; a type without a kind raises `TypeError`, as for C++ types.
//!
//! ```
//! use tvm_ffi::{structural, Array};
//! let a = Array::new([1i64, 2, 3]).unwrap();
//! let b = Array::new([1i64, 2, 3]).unwrap();
//! assert!(structural::equal(&a, &b).unwrap());
//! assert_eq!(structural::hash(&a).unwrap(), structural::hash(&b).unwrap());
//! let c = Array::new([1i64, 2, 4]).unwrap();
//! let mismatch = structural::first_mismatch(&a, &c).unwrap().unwrap();
//! assert_eq!(mismatch.lhs_path, "<root>[2]");
//! ```
use crate::base::error::Result;
use crate::base::object::{ObjectRef, ObjectType};
use crate::base::value::Any;
use crate::call::function::{GlobalCache, IntoArg};
pub use crate::traverse::link::{mutate_shapes, shapes};
pub use crate::traverse::mutate::{map, IntoMapper, MapDispatch, MapLink, Mutator};
pub use crate::traverse::mutate_callbacks::{
    mutate, mutator_shapes, DefaultMutContextPolicy, IntoMutator, MutContextPolicy,
    MutateCallbackLink, MutateCallbacks, MutateContext,
};
pub use crate::traverse::mutate_policy::MapWithContextPolicy;
pub use crate::traverse::mutate_value::{
    InplaceMode, InplaceValue, IntoMapResult, MapValue, MutateValue, Unchanged, UnchangedOr,
    VarRemap,
};
pub use crate::traverse::visit::{
    walk, DefRegionKind, IntoVisitOutcome, IntoWalkResult, IntoWalker, VisitDispatch,
    VisitInterrupt, VisitValue, Visitor, WalkLink, WalkOrder, WalkResult,
};
pub use crate::traverse::visit_callbacks::{
    visit, visitor_shapes, ContextPolicy, DefaultContextPolicy, IntoVisitor, VisitCallbackLink,
    VisitCallbacks, VisitContext,
};
pub use crate::traverse::visit_policy::WalkWithContextPolicy;

static EQUAL: GlobalCache = GlobalCache::new("ffi.StructuralEqual");
static HASH: GlobalCache = GlobalCache::new("ffi.StructuralHash");
static MISMATCH: GlobalCache = GlobalCache::new("ffi.GetFirstStructuralMismatch");
static DEEP_COPY: GlobalCache = GlobalCache::new("ffi.DeepCopy");

/// Whether `lhs` and `rhs` are structurally equal (free variables must be the same objects).
pub fn equal<A: IntoArg, B: IntoArg>(lhs: A, rhs: B) -> Result<bool> {
    EQUAL.get()?.call_as((lhs, rhs, false, false))
}

/// Whether `lhs` and `rhs` are equal up to a consistent renaming of their free variables
/// (objects of `structural = "free-var"` types): `map_free_vars` of the runtime.
pub fn equal_map_free_vars<A: IntoArg, B: IntoArg>(lhs: A, rhs: B) -> Result<bool> {
    EQUAL.get()?.call_as((lhs, rhs, true, false))
}

/// The structural hash of `value` (free variables hashed by identity).
pub fn hash<A: IntoArg>(value: A) -> Result<u64> {
    HASH.get()?
        .call_as::<i64, _>((value, false, false))
        .map(|h| h as u64)
}

/// The structural hash of `value` with free variables hashed by their position of
/// definition, so that [`equal_map_free_vars`] values hash alike.
pub fn hash_map_free_vars<A: IntoArg>(value: A) -> Result<u64> {
    HASH.get()?
        .call_as::<i64, _>((value, true, false))
        .map(|h| h as u64)
}

/// Where two values first differ structurally: the access paths into each, as the runtime
/// prints them (`<root>.field[2]`).
///
/// ```
/// use tvm_ffi::structural::{self, Mismatch};
/// use tvm_ffi::Array;
/// let a = Array::new([1i64, 2, 3]).unwrap();
/// let b = Array::new([1i64, 5, 3]).unwrap();
/// assert_eq!(structural::first_mismatch(&a, &a).unwrap(), None);
/// let mismatch: Mismatch = structural::first_mismatch(&a, &b).unwrap().unwrap();
/// assert_eq!(mismatch.lhs_path, "<root>[1]");
/// assert_eq!(mismatch.rhs_path, "<root>[1]");
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Mismatch {
    /// The path into the left value.
    pub lhs_path: std::string::String,
    /// The path into the right value.
    pub rhs_path: std::string::String,
}

/// The first structural mismatch between `lhs` and `rhs`, or `None` when they are equal.
pub fn first_mismatch<A: IntoArg, B: IntoArg>(lhs: A, rhs: B) -> Result<Option<Mismatch>> {
    first_mismatch_with(lhs, rhs, false)
}

/// [`first_mismatch`] up to a renaming of free variables.
pub fn first_mismatch_map_free_vars<A: IntoArg, B: IntoArg>(
    lhs: A,
    rhs: B,
) -> Result<Option<Mismatch>> {
    first_mismatch_with(lhs, rhs, true)
}

fn first_mismatch_with<A: IntoArg, B: IntoArg>(
    lhs: A,
    rhs: B,
    map_free_vars: bool,
) -> Result<Option<Mismatch>> {
    let out: Option<crate::data::container::Array<Any>> =
        MISMATCH.get()?.call_as((lhs, rhs, map_free_vars, false))?;
    Ok(out.map(|paths| {
        let path = |i: usize| paths.get(i).map(|p| format!("{p:?}")).unwrap_or_default();
        Mismatch {
            lhs_path: path(0),
            rhs_path: path(1),
        }
    }))
}

impl<T: ObjectType> ObjectRef<T> {
    /// A deep copy (`ffi.DeepCopy`, what `copy.deepcopy` does in Python): every reachable
    /// object of a copyable type is copied once, sharing preserved; strings, shapes and enum
    /// singletons are shared. A type without `__ffi_shallow_copy__` (not `Clone`) raises.
    ///
    /// ```
    /// use tvm_ffi::{ObjectRef, Rw};
    /// #[derive(tvm_ffi::Object, Clone)]
    /// #[ffi_type(key = "doc_examples.DeepCopy")]
    /// #[repr(C)]
    /// pub struct Cell { pub value: Rw<i64> }
    /// let a = ObjectRef::new(Cell { value: Rw::new(1) });
    /// let b = a.deep_copy().unwrap();
    /// b.value.set(2);
    /// assert_eq!((a.value.get(), b.value.get()), (1, 2));
    /// ```
    pub fn deep_copy(&self) -> Result<ObjectRef<T>> {
        DEEP_COPY.get()?.call_as((self,))
    }
}
