//! Registration of enums, as C++ `refl::ObjectDef<T>(refl::init(false))` + `refl::EnumDef`
//! register them: a final child of `ffi.Enum`/`ffi.IntEnum`/`ffi.StrEnum` with the enum payload,
//! the UniqueInstance structural kind, a creator and the usual type attributes, then the
//! `__ffi_enum__` state (`ffi.EnumState`: `entries`, `indexes`, `attrs`) holding one singleton
//! per variant.
use super::calls::{byte_array, check, register_attr};
use super::entry::EnumEntry;
use super::layout::allocate_type_index_checked as allocate_type_index;
use crate::abi::sys;
use crate::base::error::{Error, Result};
use crate::base::object::{self, type_info, ObjectRef, RuntimeType};
use crate::base::value::{Any, String};
use crate::call::function::metadata::MetadataValue;
use crate::call::function::{Function, GlobalCache};
use crate::reflect::enums::{EnumObj, EnumTable};

static LIST_APPEND: GlobalCache = GlobalCache::new("ffi.ListAppend");
static DICT_SET: GlobalCache = GlobalCache::new("ffi.DictSetItem");
static DICT_GET: GlobalCache = GlobalCache::new("ffi.DictGetItemOrMissing");
static DICT_NEW: GlobalCache = GlobalCache::new("ffi.Dict");

/// Registers one enum: its type, then its state and singletons.
pub(super) fn register_enum(entry: &'static EnumEntry) -> Result<RuntimeType> {
    let parent = type_info::lookup_type(entry.kind.parent_key()).ok_or_else(|| {
        Error::runtime_error(format!(
            "its parent `{}` is not registered by the runtime",
            entry.kind.parent_key()
        ))
    })?;
    if type_info::lookup_type(entry.key).is_some() {
        return Err(Error::runtime_error(
            "the key is already registered (enum singletons cannot be shared between libraries)",
        ));
    }
    let ty = allocate_type_index(entry.key, parent, 0)?;
    let metadata = sys::TVMFFITypeMetadata {
        doc: byte_array(entry.doc),
        creator: Some(entry.creator),
        total_size: object::ObjectCell::<EnumObj>::TOTAL_SIZE as i32,
        structural_eq_hash_kind: sys::kTVMFFISEqHashKindUniqueInstance,
    };
    // SAFETY: valid metadata; the runtime copies the doc string.
    check(unsafe { sys::TVMFFITypeRegisterMetadata(ty.index, &metadata) })?;
    entry.slot.set(ty);
    let key = entry.key;
    let index = ty.index;
    let leak = |name: &str| -> &'static str { Box::leak(format!("{key}.{name}").into_boxed_str()) };
    register_attr(
        ty,
        "__ffi_new__",
        Any::new(Function::from_typed_named(leak("__ffi_new__"), move || {
            // SAFETY: `index` is this enum's type, just allocated as a child of `ffi.Enum`.
            unsafe { new_singleton(index, 0, String::default()) }.into_object()
        })),
    )?;
    register_attr(
        ty,
        "__ffi_shallow_copy__",
        Any::new(Function::from_typed_named(
            leak("__ffi_shallow_copy__"),
            move |this: ObjectRef<EnumObj>| {
                // SAFETY: as above.
                unsafe { new_singleton(index, this.int_index, this.str_index.clone()) }
                    .into_object()
            },
        )),
    )?;
    register_attr(ty, "__ffi_type_final__", Any::new(true))?;
    register_attr(
        ty,
        "__ffi_convert__",
        Any::new(Function::from_typed_named(
            leak("__ffi_convert__"),
            move |value: Any| -> Result<ObjectRef<EnumObj>> {
                value
                    .as_view()
                    .checked_cast::<ObjectRef<EnumObj>>()
                    .filter(|obj| obj.type_index() == index)
                    .ok_or_else(|| {
                        Error::type_error(format!(
                            "Cannot cast from `{}` to `{key}`",
                            value.type_key()
                        ))
                    })
            },
        )),
    )?;
    register_state(entry, ty, entry.table)?;
    Ok(ty)
}

/// The `__ffi_enum__` state and the singletons, as `refl::EnumDef` makes them.
fn register_state(entry: &EnumEntry, ty: RuntimeType, table: &EnumTable) -> Result<()> {
    let state_type = type_info::lookup_type("ffi.EnumState")
        .ok_or_else(|| Error::runtime_error("the runtime has no `ffi.EnumState`"))?;
    let init: Function = crate::reflect::reflection::type_attr(state_type.index, "__ffi_init__")
        .ok_or_else(|| Error::runtime_error("`ffi.EnumState` has no constructor"))?
        .cast()?;
    let state = init.call(())?;
    let state_obj: ObjectRef<crate::base::object::builtin::AnyObject> = state.cast()?;
    let entries = state_obj.get_field_any("entries")?;
    let indexes = state_obj.get_field_any("indexes")?;
    let attrs = state_obj.get_field_any("attrs")?;
    let mut singletons = Vec::with_capacity(entry.variants.len());
    for variant in entry.variants {
        // SAFETY: as above.
        let singleton =
            unsafe { new_singleton(ty.index, variant.int_index, String::from(variant.str_index)) };
        LIST_APPEND.get()?.call((&entries, &singleton))?;
        for index in [Any::new(variant.int_index), Any::new(variant.str_index)] {
            // An index already taken by another variant (a lookup miss returns the runtime's
            // MISSING sentinel, of another type).
            let existing = DICT_GET.get()?.call((&indexes, &index))?;
            if existing.type_key() == entry.key {
                return Err(Error::value_error(format!(
                    "Duplicate enum index for type `{}`",
                    entry.key
                )));
            }
            DICT_SET.get()?.call((&indexes, &index, &singleton))?;
        }
        for (name, value) in variant.attrs {
            let column = DICT_GET.get()?.call((&attrs, *name))?;
            let column = if column.type_key() == "ffi.Dict" {
                column
            } else {
                let fresh = DICT_NEW.get()?.call(())?;
                DICT_SET.get()?.call((&attrs, *name, &fresh))?;
                fresh
            };
            let value = match *value {
                MetadataValue::Int(v) => Any::new(v),
                MetadataValue::Bool(v) => Any::new(v),
                MetadataValue::Str(v) => Any::new(v),
            };
            DICT_SET.get()?.call((&column, &singleton, &value))?;
        }
        singletons.push(singleton);
    }
    register_attr(ty, "__ffi_enum__", state)?;
    table.set(singletons);
    Ok(())
}

use crate::reflect::enums::new_enum_object as new_singleton;
