//! Which of the runtime's builtins safe Rust may reach by name, and which keep their
//! arguments: the one place that says which and why.
//!
//! The runtime registers, in its `ffi.` namespace, its containers, reflection and module
//! helpers. Many of them break what the SDK's safe API relies on: they write a `List` or `Dict`
//! without the lock every Rust operation on it holds, load libraries, make functions of raw
//! pointers, write through raw addresses, or change the runtime's unsynchronised registries.
//! A list of refused names can never be complete (each runtime release adds builtins), so the
//! safe lookups hand out only the builtins listed in [`SAFE_BUILTINS`], which read or build
//! values; every other `ffi.` name is refused ([`refusal`]), and
//! `Function::get_global_unchecked` is the `unsafe` way to it. Functions outside the `ffi.`
//! namespace are other libraries' code, which safe Rust calls as any FFI call: their soundness
//! is their authors'.
//!
//! The runtime's builtins hold what they are given as `Any`s, which the runtime makes from a
//! borrowed `DLTensor*` by copying the pointer (C++ `Any(AnyView)`): a view passed to
//! `ffi.Array`, ... would outlive its tensor. A call of one of them with such an argument is
//! refused ([`keeps_arguments`], checked by `Function::call_packed`), at no cost to calls
//! without one.
use crate::abi::sys::type_index as ti;
use crate::base::error::Error;
use crate::base::object::type_info;
use crate::base::value::AnyView;

/// The runtime's builtins that the safe lookups hand out: they build new values, read
/// immutable ones (`Array`, `Map`, `Shape`, strings), compare, hash, print or serialise values,
/// or describe modules and functions. None writes a container, takes an address or a type
/// index from its caller, or changes a registry. (`ffi.List` and `ffi.Dict` make new containers,
/// which no other thread holds yet.)
const SAFE_BUILTINS: &[&str] = &[
    "ffi.Array",
    "ffi.ArrayContains",
    "ffi.ArrayGetItem",
    "ffi.ArraySize",
    "ffi.Bytes",
    "ffi.ContainerFindFirstNonCPUDevice",
    "ffi.DeepCopy",
    "ffi.Dict",
    "ffi.FromJSONGraph",
    "ffi.FromJSONGraphString",
    "ffi.FunctionListGlobalNamesFunctor",
    "ffi.GetFirstStructuralMismatch",
    "ffi.GetGlobalFuncMetadata",
    "ffi.GetInvalidObject",
    "ffi.GetKwargsObject",
    "ffi.GetRegisteredTypeKeys",
    "ffi.List",
    "ffi.MakeObjectFromPackedArgs",
    "ffi.Map",
    "ffi.MapCount",
    "ffi.MapForwardIterFunctor",
    "ffi.MapGetItem",
    "ffi.MapGetItemOrMissing",
    "ffi.MapSize",
    "ffi.ModuleGetFunction",
    "ffi.ModuleGetFunctionDoc",
    "ffi.ModuleGetFunctionMetadata",
    "ffi.ModuleGetKind",
    "ffi.ModuleGetPropertyMask",
    "ffi.ModuleGetWriteFormats",
    "ffi.ModuleImplementsFunction",
    "ffi.ModuleInspectSource",
    "ffi.RecursiveEq",
    "ffi.RecursiveGe",
    "ffi.RecursiveGt",
    "ffi.RecursiveHash",
    "ffi.RecursiveLe",
    "ffi.RecursiveLt",
    "ffi.ReprPrint",
    "ffi.Shape",
    "ffi.String",
    "ffi.StructuralEqual",
    "ffi.StructuralHash",
    "ffi.StructuralKey",
    "ffi.StructuralKeyEqual",
    "ffi.StructuralVisit",
    "ffi.StructuralVisitorDefRegionKind",
    "ffi.StructuralVisitorDefaultVisit",
    "ffi.StructuralVisitorVisit",
    "ffi.StructuralVisitorWithDefRegionKind",
    "ffi.StructuralWalk",
    "ffi.SystemLib",
    "ffi.ToJSONGraph",
    "ffi.ToJSONGraphString",
    "ffi.json.Parse",
    "ffi.json.Stringify",
];

/// Why the safe lookups refuse `name`, or `None` when they do not.
pub(crate) fn refusal(name: &str) -> Option<&'static str> {
    if !name.starts_with("ffi.") || SAFE_BUILTINS.binary_search(&name).is_ok() {
        return None;
    }
    Some(
        if name == "ffi.ModuleLoadFromFile" || name.starts_with("ffi.Module.load_from_file.") {
            "it loads a shared library, running its initialisers and trusting its `__tvm_ffi_*` \
         symbols; use the unsafe `Module::load_from_file`"
        } else {
            "it is a runtime builtin that safe Rust may not call (the ones that write a `List` or \
         `Dict` without the lock Rust's operations hold, take raw addresses, code pointers or \
         type indices, load libraries or change the runtime's registries are all refused; the \
         book's soundness chapter says which are handed out)"
        },
    )
}

/// Whether the builtin `name` that a safe lookup hands out must first check its arguments
/// with [`unregistered_index`]: `ffi.MakeObjectFromPackedArgs` ends the process on a type index
/// the runtime never registered.
pub(crate) fn takes_a_type_index(name: &str) -> bool {
    name == "ffi.MakeObjectFromPackedArgs"
}

/// The `TypeError` of a call whose first argument is a type index the runtime never registered.
pub(crate) fn unregistered_index(name: &str, args: &[AnyView<'_>]) -> Option<Error> {
    let index = args.first().and_then(AnyView::checked_cast::<i64>)?;
    let registered = i32::try_from(index)
        .is_ok_and(|i| i >= ti::kTVMFFIStaticObjectBegin && type_info::is_registered(i));
    (!registered).then(|| {
        Error::type_error(format!(
            "{name}: type index {index} is no registered object type"
        ))
    })
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

/// Whether `args` may hold a borrowed `DLTensor*` or a moved value (a `Moved` view),
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
