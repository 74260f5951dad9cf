//! The runtime's global functions that safe Rust may not reach by name, and the ones that keep
//! their arguments: the one place that says which and why.
//!
//! The runtime registers, next to its containers and reflection helpers, functions whose
//! arguments are trusted as code or raw memory. Reached through `Function::get_global` they
//! would make a safe call as powerful as an `unsafe` block, so the safe lookups refuse them
//! ([`refusal`]); `Function::get_global_unchecked` is the `unsafe` way to them.
//!
//! The runtime's builtins (every `ffi.*` global) hold what they are given as `Any`s, which the
//! runtime makes from a borrowed `DLTensor*` by copying the pointer (C++ `Any(AnyView)`): a
//! view passed to `ffi.Array`, `ffi.DictSetItem`, ... would outlive its tensor. A call of one
//! of them with such an argument is refused ([`keeps_arguments`], checked by `Function::call_packed`),
//! at no cost to calls without one.
use crate::abi::sys::type_index as ti;
use crate::base::error::Error;
use crate::base::value::AnyView;

/// Global functions of the runtime that trust their caller, and why. A safe lookup of one of
/// these names (or of a name starting with one that ends in `.`) is refused.
const TRUST_REQUIRING: &[(&str, &str)] = &[
    // `Module::LoadFromFile`: dlopen runs the library's constructors, and the runtime then
    // calls its `__tvm_ffi_*` symbols as safe-call functions, unchecked.
    (
        "ffi.ModuleLoadFromFile",
        "it loads a shared library, running its initialisers and trusting its `__tvm_ffi_*` \
         symbols; use the unsafe `Module::load_from_file`",
    ),
    // The per-format loaders `ModuleLoadFromFile` dispatches to (`.so` today; other runtimes
    // register more under this prefix).
    (
        "ffi.Module.load_from_file.",
        "it loads a shared library, running its initialisers and trusting its `__tvm_ffi_*` \
         symbols; use the unsafe `Module::load_from_file`",
    ),
    // `Function::FromExternC(void* self, void* safe_call, void* deleter)`: calling the result
    // jumps to `safe_call`.
    (
        "ffi.FunctionFromExternC",
        "it makes a function of raw code and data pointers",
    ),
    // `MakeFieldSetter(type_index, int64 converter, int64 f_convert)`: the setter it returns
    // calls `f_convert` (an address given as an integer) and writes through the raw field
    // address it receives.
    (
        "ffi.MakeFieldSetter",
        "it calls a C function pointer given as an integer and writes through a raw address",
    ),
    // `PyClassRegisterTypeAttrColumns(type_index, total_size)`: registers `__ffi_new__` and
    // `__ffi_shallow_copy__` allocating `total_size` bytes for any type, which the type's
    // setters then write past the end of when it is smaller than the type.
    (
        "ffi._PyClassRegisterTypeAttrColumns",
        "it registers constructors of any type index with a size the caller chooses",
    ),
    // `RegisterFFIInit(type_index)`: registers a type attribute of any type (the runtime's type
    // attribute tables are not synchronised, and the constructor protocol of a Rust type is
    // registered by its library).
    (
        "ffi._RegisterFFIInit",
        "it registers a constructor of any type index into the runtime's unsynchronised type \
         tables",
    ),
    // Removes a global without Rust's lock on the global function table: a Rust lookup on
    // another thread reads the table while it changes.
    (
        "ffi.FunctionRemoveGlobal",
        "it changes the global function table without the lock Rust's lookups hold",
    ),
    // Drops the reference that keeps a loaded library loaded (`Module::keep_alive`), or the
    // module's imports: the library can then be unloaded while the types and functions it
    // registered stay reachable.
    (
        "ffi.ModuleGlobalsRemove",
        "it lets a loaded library be unloaded while what it registered stays reachable",
    ),
    (
        "ffi.ModuleClearImports",
        "it lets a loaded library be unloaded while what it registered stays reachable",
    ),
];

/// Why the safe lookups refuse `name`, or `None` when they do not.
pub(crate) fn refusal(name: &str) -> Option<&'static str> {
    TRUST_REQUIRING
        .iter()
        .find(|(refused, _)| {
            if refused.ends_with('.') {
                name.starts_with(refused)
            } else {
                name == *refused
            }
        })
        .map(|(_, why)| *why)
}

/// The error of a safe lookup of a refused name.
#[cold]
pub(crate) fn refused_error(name: &str, why: &str) -> Error {
    Error::value_error(format!(
        "Function `{name}` cannot be looked up by the safe `Function::get_global`: {why}. \
         Use the unsafe `Function::get_global_unchecked` to vouch for its arguments"
    ))
}

/// Runtime functions outside the `ffi.` namespace that keep their arguments too (the wheel's
/// testing library).
const KEEPS_ARGUMENTS: &[&str] = &["testing.echo", "testing.apply"];

/// Whether a global of this name is one of the runtime's builtins that keep their arguments.
pub(crate) fn keeps_arguments(name: &str) -> bool {
    name.starts_with("ffi.") || KEEPS_ARGUMENTS.contains(&name)
}

/// Whether `args` holds a borrowed `DLTensor*` (one comparison per argument).
#[inline]
pub(crate) fn has_borrowed_tensor(args: &[AnyView<'_>]) -> bool {
    args.iter()
        .any(|arg| arg.as_raw().type_index == ti::kTVMFFIDLTensorPtr)
}

/// Whether `args` may hold a borrowed `DLTensor*` or a moved value (an `RValueRef` view),
/// which a call checks or forwards: one range comparison per argument, over the borrowed
/// kinds 7 to 10 (`DLTensor*`, raw string, byte array, moved value; Rust passes the middle two
/// only when it forwards them from C++). Two comparisons cost the call path a third of its
/// time in `benches/upstream.sh`'s `call` row.
#[inline(always)]
pub(crate) fn has_tensor_or_moved(args: &[AnyView<'_>]) -> bool {
    const FIRST: i32 = ti::kTVMFFIDLTensorPtr;
    const SPAN: u32 = (ti::kTVMFFIObjectRValueRef - FIRST) as u32;
    const _: () = assert!(SPAN == 3);
    args.iter()
        .any(|arg| (arg.as_raw().type_index.wrapping_sub(FIRST) as u32) <= SPAN)
}

/// The error of a call that would hand a borrowed tensor to a function that keeps it.
#[cold]
pub(crate) fn kept_view_error() -> Error {
    Error::new(
        "TypeError",
        "a borrowed DLTensor* (the view of a TensorMut or DLPackTensor) cannot be passed to a \
         runtime builtin, which keeps its arguments as Any: the copy would outlive the tensor. \
         Pass an ffi.Tensor (Tensor) instead",
    )
}
