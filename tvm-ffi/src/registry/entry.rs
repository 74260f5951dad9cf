//! The descriptors generated code emits ([`TypeEntry`], [`FieldEntry`], [`MethodEntry`],
//! [`FunctionEntry`]), the link-time slices that collect them, and the [`TypeSlot`] in which
//! each type finds its runtime index once registered.
use std::sync::atomic::{AtomicI64, Ordering};

use crate::abi::sys;
use crate::base::error::Result;
use crate::base::object::RuntimeType;
use crate::base::value::{Any, AnyView};
use crate::call::function::metadata::MetadataValue;
use crate::call::function::signature::FnSignature;
use crate::call::function::Function;

/// The [`RuntimeType`] of a type defined or declared by this library, assigned when the
/// library loads (see [`super`]).
pub struct TypeSlot {
    // index in the low 32 bits, depth in the high 32 bits; 0 means "not yet registered" (index
    // 0 is `None`, never an object type), FAILED that registration failed.
    packed: AtomicI64,
}

const FAILED: i64 = -1;

impl TypeSlot {
    /// An unresolved slot.
    pub const fn new() -> Self {
        TypeSlot {
            packed: AtomicI64::new(0),
        }
    }

    /// Records the runtime type (called by registration).
    pub(crate) fn set(&self, ty: RuntimeType) {
        let packed = (ty.index as u32 as i64) | ((ty.depth as i64) << 32);
        self.packed.store(packed, Ordering::Release);
    }

    /// Records that registration failed: using the type is then a clear panic, never a
    /// fallback to whatever else the runtime registered under the key.
    pub(crate) fn set_failed(&self) {
        self.packed.store(FAILED, Ordering::Release);
    }

    /// The resolved type, if any.
    #[inline]
    pub fn get(&self) -> Option<RuntimeType> {
        let packed = self.packed.load(Ordering::Acquire);
        if packed <= 0 {
            None
        } else {
            Some(RuntimeType {
                index: packed as i32,
                depth: (packed >> 32) as i32,
            })
        }
    }
}

impl Default for TypeSlot {
    fn default() -> Self {
        Self::new()
    }
}

/// A global function defined with `#[ffi_func(name = ...)]`.
pub struct FunctionEntry {
    /// Global name.
    pub name: &'static str,
    /// Doc string (from `///` comments).
    pub doc: &'static str,
    /// Creates the function object.
    pub make: fn() -> Function,
    /// The metadata JSON (`{"type_schema":"..."}`).
    pub metadata: fn() -> String,
}

/// All global functions of the artifact.
#[linkme::distributed_slice]
pub static FUNCTIONS: [FunctionEntry];

/// All object types (`#[derive(Object)]`) of the artifact.
#[linkme::distributed_slice]
pub static TYPES: [TypeEntry];

/// All methods and constructors (`#[ffi_methods]`) of the artifact, one slice per impl block.
#[linkme::distributed_slice]
pub static METHODS: [&'static [MethodEntry]];

pub use crate::reflect::reflection::reflected::{FieldEntry, PayloadPart};

/// `structural = "..."`: how `structural_equal`/`structural_hash` treat the type.
pub mod structural {
    /// No structural comparison (the runtime raises `TypeError`).
    pub const UNSUPPORTED: i32 = crate::abi::sys::kTVMFFISEqHashKindUnsupported;
    /// `"tree"`: compared field by field.
    pub const TREE: i32 = crate::abi::sys::kTVMFFISEqHashKindTreeNode;
    /// `"free-var"`: variables bound by definition points.
    pub const FREE_VAR: i32 = crate::abi::sys::kTVMFFISEqHashKindFreeVar;
    /// `"dag"`: like a tree, sharing-aware.
    pub const DAG: i32 = crate::abi::sys::kTVMFFISEqHashKindDAGNode;
    /// `"const-tree"`: a tree whose nodes may be compared by pointer first.
    pub const CONST_TREE: i32 = crate::abi::sys::kTVMFFISEqHashKindConstTreeNode;
    /// `"unique"`: compared by identity.
    pub const UNIQUE: i32 = crate::abi::sys::kTVMFFISEqHashKindUniqueInstance;
}

/// Whether a [`TypeEntry`] defines a type or declares one defined elsewhere.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TypeOrigin {
    /// Defined by this library: registered at load.
    Defined,
    /// Defined elsewhere (C++, another library): its layout is checked at load.
    External,
    /// Defined elsewhere, declared without its own fields (`external, opaque`): a typed handle
    /// whose parent is checked at load; its own fields and size are not declared.
    ExternalOpaque,
}

/// The statement that a descriptor tells the truth about the type it describes (its layout,
/// field offsets, accessors and creator): only an `unsafe` call makes one, so a descriptor
/// that the registry hands to libtvm_ffi cannot be forged from safe code. The derives make one
/// for what they generate.
#[derive(Clone, Copy)]
pub struct Trusted(());

impl Trusted {
    /// # Safety
    /// The descriptor this goes into must describe its Rust type exactly: its size, its
    /// fields (offset, size, storage and static type index), accessors and creator for that
    /// type, and a parent whose payload is a prefix of it.
    pub const unsafe fn new() -> Trusted {
        Trusted(())
    }
}

/// A hook of `#[ffi_type(eq, hash, ord, str)]`: the type attribute's name and the function
/// that makes its value.
pub type TypeHook = (&'static str, unsafe fn() -> Function);

/// A type collected from `#[derive(Object)]`.
pub struct TypeEntry {
    /// Registry key.
    pub key: &'static str,
    /// Parent key (`ffi.Object` for root types).
    pub parent_key: &'static str,
    /// Defined here or declared.
    pub origin: TypeOrigin,
    /// Doc string.
    pub doc: &'static str,
    /// Where the runtime index is stored once registered.
    pub slot: &'static TypeSlot,
    /// `final`: no subtypes.
    pub is_final: bool,
    /// Type indices reserved for subtypes right after the type's own (`child_slots = N`):
    /// subtypes registered later take them in order, then dynamic indices.
    pub child_slots: u32,
    /// Header plus payload.
    pub total_size: usize,
    /// Structural equality/hash kind ([`structural`]).
    pub structural: i32,
    /// The creator (every type defined in Rust has one; declarations have none).
    pub creator: Option<sys::TVMFFIObjectCreator>,
    /// `__ffi_new__`, made from the creator (`unsafe`: the function is `T`'s only).
    pub new_object: Option<unsafe fn() -> Function>,
    /// Whether the runtime's reflection constructor (`ffi._RegisterFFIInit`) is registered
    /// when there is no explicit one (`#[ffi_type(init = false)]` turns it off).
    pub auto_init: bool,
    /// `__ffi_convert__` (`#[ffi_type(convert)]`; `unsafe`: the function is `T`'s only).
    pub convert: Option<unsafe fn() -> Function>,
    /// Own reflected fields (inherited ones belong to the parent's entry).
    pub fields: &'static [FieldEntry],
    /// `__ffi_shallow_copy__`, when the payload is `Clone`.
    pub shallow_copy: fn() -> Option<Function>,
    /// The parent's payload and the Rust-only fields: with `fields`, the Rust-level layout
    /// compared when another library registered the same key.
    pub parts: &'static [PayloadPart],
    /// Constant type attributes (`#[ffi_type(type_attr(name = value))]`).
    pub type_attrs: &'static [(&'static str, MetadataValue)],
    /// The hooks of `#[ffi_type(eq, hash, ord, str)]`: each type attribute's name and its
    /// function.
    pub hooks: &'static [TypeHook],
    /// The check sealing runs on objects of this type, whatever type they are dereferenced
    /// as (every Rust-defined type has one; declarations have none).
    pub seal_check: Option<crate::reflect::reflection::construction::SealCheck>,
    /// The statement that all of the above is true.
    pub trusted: Trusted,
}

impl TypeEntry {
    /// The Rust-level layout fingerprint, built from the tables.
    pub(crate) fn layout(&self) -> std::string::String {
        crate::reflect::reflection::reflected::layout_fingerprint(
            self.total_size,
            self.fields,
            self.parts,
        )
    }
}

/// What a [`MethodEntry`] registers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MethodKind {
    /// Takes the object as argument 0.
    Instance,
    /// No object argument.
    Static,
    /// The explicit constructor `__ffi_init__`.
    Init,
    /// A type attribute named `name` (a hook such as `__ffi_repr__`), not a method.
    TypeAttr,
}

/// A method collected from `#[ffi_methods]`.
pub struct MethodEntry {
    /// The signature: its owner is the key of the type the method belongs to, its name the
    /// name seen by Python and C++.
    pub signature: FnSignature,
    /// Doc string.
    pub doc: &'static str,
    /// Instance, static, constructor or type attribute.
    pub kind: MethodKind,
    /// The generated argument and result conversion around the method, which
    /// the registry makes a function object of under `signature`.
    pub invoke: Invoke,
    /// The user's metadata keys (after the `type_schema`).
    pub metadata: &'static [(&'static str, MetadataValue)],
    /// Where the method is written (the impl block's file and line, the method's index in
    /// it): methods register in source order, as C++ registers them in code order.
    pub order: (&'static str, u32, u32),
    /// The statement that the entry is what `#[ffi_methods]` generated: the runtime and Python
    /// trust a type attribute (`__ffi_init__`'s result becomes an instance of the type, the
    /// runtime calls `__ffi_shallow_copy__`, `__ffi_new__` and the key hooks), and
    /// `#[ffi_methods]` refuses the names they reserve; a hand-made entry could name one.
    pub trusted: Trusted,
}

/// The generated conversion around a method (see `__private::function_from_invoke`).
pub type Invoke = for<'a> fn(&FnSignature, &'a [AnyView<'a>]) -> Result<Any>;

impl MethodEntry {
    /// The function object of the method (what the registry registers).
    pub(crate) fn make(&'static self) -> Function {
        // SAFETY: the entry is `Trusted` (only an `unsafe` call makes one): `invoke` was
        // generated with `signature` from the method's own Rust signature.
        unsafe { crate::call::function::export::function_from_invoke(&self.signature, self.invoke) }
    }

    /// Key of the type the method belongs to.
    pub fn type_key(&self) -> &'static str {
        self.signature.owner
    }
    /// Name seen by Python and C++.
    pub fn name(&self) -> &str {
        &self.signature.name
    }
}

/// An enum collected from `#[derive(tvm_ffi::Enum)]`.
pub struct EnumEntry {
    /// Registry key.
    pub key: &'static str,
    /// Doc string.
    pub doc: &'static str,
    /// Which runtime base it derives from.
    pub kind: crate::reflect::enums::support::EnumKind,
    /// Where the runtime index is stored once registered.
    pub slot: &'static TypeSlot,
    /// The variants, in declaration order.
    pub variants: &'static [crate::reflect::enums::EnumVariant],
    /// Where the singletons are stored once registered.
    pub table: &'static crate::reflect::enums::EnumTable,
    /// The creator (an empty enum object of this type).
    pub creator: sys::TVMFFIObjectCreator,
    /// The statement that the creator and the table belong to this enum.
    pub trusted: Trusted,
}

/// All enums (`#[derive(tvm_ffi::Enum)]`) of the artifact.
#[linkme::distributed_slice]
pub static ENUMS: [EnumEntry];
