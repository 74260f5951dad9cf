//! Layout checks of types that are already in the runtime (declared `external`, or registered
//! by another copy of a library), and index allocation.
use super::entry::{TypeEntry, TypeOrigin};
use crate::abi::sys;
use crate::base::error::{Error, Result};
use crate::base::object::{type_info, RuntimeType};

/// Checks a declared external type against the runtime's reflection.
pub(super) fn check_external(
    entry: &'static TypeEntry,
    parent: RuntimeType,
) -> Result<RuntimeType> {
    let existing = type_info::lookup_type(entry.key).ok_or_else(|| {
        Error::runtime_error(
            "it is declared `external` but not registered (load the library that defines it first)",
        )
    })?;
    match layout_mismatch(entry, existing, parent) {
        None => Ok(existing),
        Some(why) => Err(Error::runtime_error(format!(
            "the Rust declaration does not match the registered type: {why}"
        ))),
    }
}

/// Compares an entry with a registered type: parent, total size and own fields.
pub(super) fn layout_mismatch(
    entry: &TypeEntry,
    existing: RuntimeType,
    parent: RuntimeType,
) -> Option<std::string::String> {
    let info = type_info::type_info(existing.index)?;
    let actual_parent = if info.type_depth > 0 {
        // SAFETY: ancestors has `type_depth` valid entries.
        Some(unsafe { (**info.type_ancestors.add((info.type_depth - 1) as usize)).type_index })
    } else {
        None
    };
    if actual_parent != Some(parent.index) {
        return Some(format!(
            "its parent is `{}`, not `{}`",
            actual_parent.map_or("<none>", type_info::type_key_of_index),
            entry.parent_key
        ));
    }
    if entry.origin == TypeOrigin::ExternalOpaque {
        // A handle: Rust reads only the parent's payload (checked when the parent loaded),
        // never the type's own bytes, and declares no field (the derive refuses one).
        return None;
    }
    // SAFETY: metadata is null or points into the registry.
    if let Some(metadata) = unsafe { info.metadata.as_ref() } {
        if metadata.total_size as usize != entry.total_size {
            return Some(format!(
                "its total size is {} bytes, the Rust layout has {}",
                metadata.total_size, entry.total_size
            ));
        }
    }
    let registered: &[sys::TVMFFIFieldInfo] = if info.num_fields > 0 {
        // SAFETY: `fields` has `num_fields` entries owned by the registry.
        unsafe { std::slice::from_raw_parts(info.fields, info.num_fields as usize) }
    } else {
        &[]
    };
    for field in entry.fields {
        // SAFETY: registry strings live for the process.
        let found = registered
            .iter()
            .find(|f| unsafe { f.name.as_bytes() } == field.name.as_bytes());
        match found {
            None => return Some(format!("it has no field `{}`", field.name)),
            Some(f) if f.offset as usize != field.offset || f.size as usize != field.size => {
                return Some(format!(
                    "field `{}` is at offset {} with size {}, the Rust layout has offset {} and size {}",
                    field.name, f.offset, f.size, field.offset, field.size
                ))
            }
            Some(f)
                if f.field_static_type_index != field.static_type_index
                    && !(entry.origin == TypeOrigin::External
                        && is_optional_object_pointer(f, field)) =>
            {
                return Some(format!(
                    "field `{}` stores type index {}, the Rust field {}",
                    field.name, f.field_static_type_index, field.static_type_index
                ))
            }
            Some(f) if entry.origin == TypeOrigin::External => {
                if let Some(why) = external_field_mismatch(field, f) {
                    return Some(why);
                }
            }
            Some(f) if entry.origin == TypeOrigin::Defined => {
                // Another copy of a Rust type: everything it registered must be identical.
                let ours = crate::call::function::metadata::metadata_json(&(field.type_schema)(), field.metadata);
                // SAFETY: registry strings live for the process.
                let theirs = unsafe { f.metadata.as_bytes() };
                if f.flags != field.flags || theirs != ours.as_bytes() {
                    return Some(format!(
                        "field `{}` has other flags or another type schema",
                        field.name
                    ));
                }
            }
            Some(_) => {}
        }
    }
    // Every registered field must be known: a creator or deleter that skipped one would leave
    // it uninitialised or leak it.
    if registered.len() != entry.fields.len() {
        return Some(format!(
            "it has {} own fields, the Rust declaration {} (declare every field)",
            registered.len(),
            entry.fields.len()
        ));
    }
    None
}

/// Why `parent` takes no new subtype, if it does not: the runtime's value types (`None`,
/// `int`, ..., below `ffi.Object`), its built-in object types
/// (`ffi.String`, `ffi.Error`, `ffi.Function`, `ffi.Array`, `ffi.Tensor`, ..., reserved with no
/// child slots and no overflow) and their descendants, for which the runtime would end the
/// process ("Reach maximum number of sub-classes"), and final types (`__ffi_type_final__`).
fn refuses_subtypes(parent: RuntimeType) -> Option<std::string::String> {
    if parent.index < sys::type_index::kTVMFFIObject {
        // `None`, `int`, `float`, the small strings, ...: registered at depth 0 with no child
        // slots; the runtime would end the process on a subtype.
        return Some(format!(
            "its parent `{}` is not an object type and takes no subtypes",
            type_info::type_key_of_index(parent.index)
        ));
    }
    let info = type_info::type_info(parent.index)?;
    let chain = (0..info.type_depth.max(0)).map(|depth| {
        // SAFETY: `type_ancestors` has `type_depth` valid registry pointers.
        unsafe { (**info.type_ancestors.add(depth as usize)).type_index }
    });
    let builtin = chain.chain(std::iter::once(parent.index)).find(|&index| {
        index > sys::type_index::kTVMFFIObject && index < sys::type_index::kTVMFFIDynObjectBegin
    });
    if let Some(builtin) = builtin {
        return Some(format!(
            "its parent `{}` is (or derives from) the runtime's built-in type `{}`, which takes no \
             subtypes",
            type_info::type_key_of_index(parent.index),
            type_info::type_key_of_index(builtin)
        ));
    }
    let is_final = crate::reflect::reflection::type_attr(parent.index, "__ffi_type_final__")
        .and_then(|v| v.checked_cast::<bool>())
        .unwrap_or(false);
    is_final.then(|| {
        format!(
            "its parent `{}` is final and takes no subtypes",
            type_info::type_key_of_index(parent.index)
        )
    })
}

/// Object types whose references C++ never holds null (`_type_is_nullable = false`): a field of
/// one may be declared without `Option`.
const NON_NULLABLE_OBJECTS: &[&str] =
    &["ffi.Array", "ffi.Map", "ffi.List", "ffi.Dict", "ffi.Shape"];

/// Checks the type of a field of an `external` declaration against the `type_schema` the
/// defining code registered for it (C++ `def_ro`/`def_rw` always register one).
///
/// The static type index does not determine the type (every object reference reports 64, every
/// 16-byte value -1), so the declared Rust type's schema must equal the registered one, except
/// that a nullable C++ reference (an 8-byte object pointer whose schema is a plain object type
/// other than the built-in containers) must be declared `Option<..>` of that type, as Rust
/// references are never null.
fn external_field_mismatch(
    field: &super::entry::FieldEntry,
    registered: &sys::TVMFFIFieldInfo,
) -> Option<std::string::String> {
    let name = field.name;
    let declared = (field.type_schema)();
    // SAFETY: registry strings live for the process.
    let metadata = unsafe { registered.metadata.as_bytes() };
    let Some(expected) = registered_type_schema(metadata) else {
        return Some(format!(
            "field `{name}` has no registered type_schema to check the Rust field `{declared}` against"
        ));
    };
    let is_pointer = field.size == std::mem::size_of::<*const ()>()
        && field.static_type_index >= sys::type_index::kTVMFFIStaticObjectBegin;
    let declared_optional = declared.starts_with(r#"{"type":"Optional""#);
    if declared == expected {
        if is_pointer
            && !declared_optional
            && !NON_NULLABLE_OBJECTS.contains(&outer_type(&expected))
        {
            return Some(format!(
                "field `{name}` is a C++ reference of type `{expected}`, which may be null: \
                 declare it `Option<..>` (type_schema `{{\"type\":\"Optional\",\"args\":[{expected}]}}`), \
                 the Rust field `{declared}` cannot be null"
            ));
        }
        return None;
    }
    if is_pointer && declared == format!(r#"{{"type":"Optional","args":[{expected}]}}"#) {
        return None;
    }
    Some(format!(
        "field `{name}` has type_schema `{expected}`, the Rust field `{declared}`"
    ))
}

/// Whether a registered field is a C++ `Optional` of an object reference (one nullable object
/// pointer, which C++ reports under the static type index -1, "any") declared in Rust as an
/// 8-byte nullable object pointer (`Option<ObjectRef<T>>`, reported as an object): the same
/// storage. The field's `type_schema` (`Optional[..]`, which only an `Option` declares) is then
/// checked by [`external_field_mismatch`].
fn is_optional_object_pointer(
    registered: &sys::TVMFFIFieldInfo,
    field: &super::entry::FieldEntry,
) -> bool {
    let pointer = std::mem::size_of::<*const ()>();
    registered.field_static_type_index == sys::type_index::kTVMFFIAny
        && registered.size as usize == pointer
        && field.size == pointer
        && field.static_type_index >= sys::type_index::kTVMFFIStaticObjectBegin
}

/// The `"type"` of a schema: `ffi.Array` of `{"type":"ffi.Array","args":[..]}`.
fn outer_type(schema: &str) -> &str {
    schema
        .strip_prefix(r#"{"type":""#)
        .and_then(|rest| rest.split('"').next())
        .unwrap_or("")
}

/// The `type_schema` in a field's metadata JSON: `{"type_schema":"<schema as a JSON
/// string>",...}` (a quote inside a JSON string is escaped, so the unescaped key is the key).
fn registered_type_schema(metadata: &[u8]) -> Option<std::string::String> {
    let text = std::str::from_utf8(metadata).ok()?;
    const KEY: &str = r#""type_schema":""#;
    let start = text.find(KEY)? + KEY.len();
    let mut chars = text[start..].chars();
    let mut out = std::string::String::new();
    loop {
        match chars.next()? {
            '"' => return Some(out),
            '\\' => match chars.next()? {
                'u' => {
                    let hex: std::string::String = chars.by_ref().take(4).collect();
                    out.push(char::from_u32(u32::from_str_radix(&hex, 16).ok()?)?);
                }
                'b' => out.push('\u{8}'),
                'f' => out.push('\u{c}'),
                'n' => out.push('\n'),
                'r' => out.push('\r'),
                't' => out.push('\t'),
                c => out.push(c),
            },
            c => out.push(c),
        }
    }
}

/// Allocates (or finds) the runtime index of type `key` under `parent`, checking the parent (a
/// registered object type at its registered depth that takes subtypes) and a key already
/// registered elsewhere, with an error naming the key. What the SDK calls while a library
/// loads (exported through `__private` for tests and hand-written `ObjectType` impls).
///
/// # Safety
/// The runtime's type table has no lock: no other thread may register a type (through this
/// function, a library being loaded, C++ or Python) while this runs. Concurrent calls corrupt
/// the runtime's heap.
pub unsafe fn allocate_type_index(
    key: &str,
    parent: RuntimeType,
    child_slots: u32,
) -> Result<RuntimeType> {
    allocate_type_index_checked(key, parent, child_slots)
}

/// The most type indices a type may reserve for its subtypes (the derive's `child_slots`
/// bound, too): the runtime grows its type table by the count, in an `int32_t`.
const MAX_CHILD_SLOTS: u32 = 4096;

/// [`allocate_type_index`], for the SDK's own registrations, which run while a library loads
/// (one at a time, nothing else registering meanwhile).
///
/// The runtime returns the existing index for a known key without checking the parent, so this
/// checks it: a key already registered under another parent is an error naming the key. The
/// parent itself is checked first (a registered index at its registered depth): the runtime
/// ends the process on an inconsistent one, and `RuntimeType`'s fields are anyone's to set.
pub(crate) fn allocate_type_index_checked(
    key: &str,
    parent: RuntimeType,
    child_slots: u32,
) -> Result<RuntimeType> {
    if child_slots > MAX_CHILD_SLOTS {
        return Err(Error::value_error(format!(
            "cannot register type `{key}`: it reserves {child_slots} child slots, at most \
             {MAX_CHILD_SLOTS} are allowed"
        )));
    }
    let registered_depth = type_info::is_registered(parent.index)
        .then(|| type_info::type_info(parent.index).map(|info| info.type_depth))
        .flatten();
    if registered_depth != Some(parent.depth) {
        return Err(Error::runtime_error(format!(
            "cannot register type `{key}`: its parent (type index {}, depth {}) is not a \
             registered type at that depth",
            parent.index, parent.depth
        )));
    }
    if let Some(existing) = type_info::lookup_type(key) {
        let info = type_info::type_info(existing.index);
        // SAFETY: ancestors has `type_depth` valid entries.
        let actual_parent = info
            .filter(|i| i.type_depth > 0)
            .map(|i| unsafe { (**i.type_ancestors.add((i.type_depth - 1) as usize)).type_index });
        if actual_parent != Some(parent.index) || existing.depth != parent.depth + 1 {
            return Err(Error::runtime_error(format!(
                "type `{key}` is already registered with parent `{}`, not `{}`",
                actual_parent.map_or("<none>", type_info::type_key_of_index),
                type_info::type_key_of_index(parent.index)
            )));
        }
        return Ok(existing);
    }
    if let Some(why) = refuses_subtypes(parent) {
        return Err(Error::runtime_error(why));
    }
    let key_bytes = sys::TVMFFIByteArray::from_bytes(key.as_bytes());
    // Overflow is always allowed: past the reserved slots a subtype gets a dynamic index
    // instead of the runtime's abort (C++ registers `final` types so as well, since Python may
    // subclass them). `final` itself is the `__ffi_type_final__` attribute (and Rust subtypes
    // of a final Rust type are a compile error).
    let (child_slots, can_overflow) = (child_slots as i32, 1);
    // SAFETY: valid key; the runtime copies it. -1 asks for a dynamic index.
    let index = unsafe {
        sys::TVMFFITypeGetOrAllocIndex(
            &key_bytes,
            -1,
            parent.depth + 1,
            child_slots,
            can_overflow,
            parent.index,
        )
    };
    if index < 0 {
        return Err(Error::from_return_code(index));
    }
    Ok(RuntimeType {
        index,
        depth: parent.depth + 1,
    })
}
