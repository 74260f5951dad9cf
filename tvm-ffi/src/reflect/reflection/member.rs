//! Reflected member names as types: `#[derive(Object)]` and `#[ffi_methods]` implement
//! [`Member`] once per field, method and constructor of a type, with the name spelled in its
//! const parameters. A second member of the same name (a method named like a field, a
//! constructor in two impl blocks) is then a conflicting-implementations error at the second
//! one, instead of Python silently hiding one of them; and nothing is added to the type's own
//! namespace.

/// Implemented once per reflected member of `Self`: its name's first 24 characters, then a
/// 64-bit FNV-1a hash of the rest for longer names (computed by the macros).
#[allow(clippy::type_complexity)]
pub trait Member<
    const C0: char = '\0',
    const C1: char = '\0',
    const C2: char = '\0',
    const C3: char = '\0',
    const C4: char = '\0',
    const C5: char = '\0',
    const C6: char = '\0',
    const C7: char = '\0',
    const C8: char = '\0',
    const C9: char = '\0',
    const C10: char = '\0',
    const C11: char = '\0',
    const C12: char = '\0',
    const C13: char = '\0',
    const C14: char = '\0',
    const C15: char = '\0',
    const C16: char = '\0',
    const C17: char = '\0',
    const C18: char = '\0',
    const C19: char = '\0',
    const C20: char = '\0',
    const C21: char = '\0',
    const C22: char = '\0',
    const C23: char = '\0',
    const REST: u64 = 0,
>
{
}
