//! [`Module`]: a library of functions loaded at run time (`ffi.Module`), as C++ `ffi::Module`
//! and Python `tvm_ffi.load_module` use them.
//!
//! A module is a C++ object with virtual methods, which Rust cannot call; every operation goes
//! through the runtime's `ffi.Module*` global functions, exactly as Python does.
//!
//! ```no_run
//! use tvm_ffi::Module;
//! # fn main() -> tvm_ffi::Result<()> {
//! // SAFETY: a library of this workspace, built from trusted sources.
//! let module = unsafe { Module::load_from_file("target/debug/libtvm_ffi_example_point.so")? };
//! let add_one = module.function("add_one")?;        // the export `__tvm_ffi_add_one`
//! assert_eq!(add_one.call_as::<i64, _>((41,))?, 42);
//! println!("{:?}", module.function_doc("add_one")?);  // the `///` doc of the Rust function
//! # Ok(())
//! # }
//! ```
use std::path::Path;

use crate::base::error::{Error, Result};
use crate::base::object::builtin::ModuleObj;
use crate::base::object::ObjectRef;
use crate::base::value::TypeSchema;
use crate::call::function::{impl_into_arg_borrowed, object_view, Function, GlobalCache};
use crate::data::container::Array;

static LOAD_FROM_FILE: GlobalCache = GlobalCache::new("ffi.ModuleLoadFromFile");
static GET_FUNCTION: GlobalCache = GlobalCache::new("ffi.ModuleGetFunction");
static IMPLEMENTS: GlobalCache = GlobalCache::new("ffi.ModuleImplementsFunction");
static METADATA: GlobalCache = GlobalCache::new("ffi.ModuleGetFunctionMetadata");
static DOC: GlobalCache = GlobalCache::new("ffi.ModuleGetFunctionDoc");
static KIND: GlobalCache = GlobalCache::new("ffi.ModuleGetKind");
static IMPORT: GlobalCache = GlobalCache::new("ffi.ModuleImportModule");
static KEEP_ALIVE: GlobalCache = GlobalCache::new("ffi.ModuleGlobalsAdd");

/// A loaded module (`ffi.Module`): look up and call its functions, read their metadata and
/// docs. Lookups search the module, then its imports, as C++ and Python search them.
/// `==` and `Hash` are identity (the same module object), as for [`ObjectRef`].
///
/// ```
/// use tvm_ffi::{Function, Module};
/// // The process's own symbols as a module (`ffi.SystemLib`); shared libraries load with
/// // `Module::load_from_file` (see the module docs).
/// let system: Module = Function::get_global("ffi.SystemLib").unwrap().call_as(()).unwrap();
/// assert_eq!(system.kind().unwrap().as_str(), "library");
/// assert!(!system.implements_function("no_such_function").unwrap());
/// assert!(system.get_function("no_such_function").unwrap().is_none());
/// assert!(system.function("no_such_function").is_err());
/// ```
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
#[repr(transparent)]
pub struct Module(ObjectRef<ModuleObj>);

impl Module {
    /// Loads a module from a file with the runtime's loader for its extension (`.so` and the
    /// like: a shared library; its exported functions are the symbols `__tvm_ffi_<name>`).
    ///
    /// A file that does not exist, or has no extension, raises the runtime's error (its
    /// message names the path).
    ///
    /// # Safety
    /// Loading a shared library runs its initialisers (constructors, static registrations)
    /// with the full privileges of the process, and the runtime then trusts its
    /// `__tvm_ffi_*` symbols to be functions of the C ABI's safe-call signature, and their
    /// metadata: nothing checks them. The caller must trust the file at `path` to be a
    /// well-formed TVM-FFI library (as for `libloading::Library::new`), and that it is not
    /// replaced between the check and the load. Its registrations change the runtime's type
    /// and function tables, which the runtime does not synchronise (it expects them to change
    /// while libraries load, or under a lock of the caller's). A Rust library's function
    /// registrations and Rust's lookups share one lock; otherwise no other thread may
    /// meanwhile look up a function (from C++ or Python, or from Rust while a C++ library
    /// loads) or read the type table (casts, reflection), in any language.
    ///
    /// ```
    /// use tvm_ffi::Module;
    /// // SAFETY: the file does not exist, so nothing is loaded.
    /// let err = unsafe { Module::load_from_file("/no/such/library.so") }.unwrap_err();
    /// assert!(err.message().contains("/no/such/library.so"), "{err}");
    /// ```
    pub unsafe fn load_from_file(path: impl AsRef<Path>) -> Result<Module> {
        let path = path.as_ref();
        let text = path.to_str().ok_or_else(|| {
            Error::value_error(format!("module path {} is not valid UTF-8", path.display()))
        })?;
        LOAD_FROM_FILE.get()?.call_as((text,))
    }

    /// The function `name` of the module (or of its imports), if it has one.
    pub fn get_function(&self, name: &str) -> Result<Option<Function>> {
        GET_FUNCTION.get()?.call_as((self, name, true))
    }

    /// The function `name`; a module without it raises `AttributeError`, as Python's
    /// `module.name` does.
    pub fn function(&self, name: &str) -> Result<Function> {
        self.get_function(name)?
            .ok_or_else(|| Error::new("AttributeError", format!("Module has no function '{name}'")))
    }

    /// Whether the module (or one of its imports) has the function `name`.
    pub fn implements_function(&self, name: &str) -> Result<bool> {
        IMPLEMENTS.get()?.call_as((self, name, true))
    }

    /// The metadata JSON of the function `name` (`{"type_schema": ..}` and the author's keys),
    /// when the module records it.
    pub fn function_metadata(&self, name: &str) -> Result<Option<crate::base::value::String>> {
        METADATA.get()?.call_as((self, name, true))
    }

    /// The doc string of the function `name`, when the module records one.
    pub fn function_doc(&self, name: &str) -> Result<Option<crate::base::value::String>> {
        DOC.get()?.call_as((self, name, true))
    }

    /// Whether the module itself (not one of its imports) has the function `name` (C++
    /// `ImplementsFunction(name, /*query_imports=*/false)`).
    ///
    /// ```
    /// use tvm_ffi::{Function, Module};
    /// let system: Module = Function::get_global("ffi.SystemLib").unwrap().call_as(()).unwrap();
    /// assert!(!system.implements_own_function("no_such_function").unwrap());
    /// ```
    pub fn implements_own_function(&self, name: &str) -> Result<bool> {
        IMPLEMENTS.get()?.call_as((self, name, false))
    }

    /// The metadata JSON of the function `name` when the module itself (not one of its
    /// imports) records it.
    ///
    /// ```
    /// use tvm_ffi::{Function, Module};
    /// let system: Module = Function::get_global("ffi.SystemLib").unwrap().call_as(()).unwrap();
    /// assert!(system.own_function_metadata("no_such_function").unwrap().is_none());
    /// ```
    pub fn own_function_metadata(&self, name: &str) -> Result<Option<crate::base::value::String>> {
        METADATA.get()?.call_as((self, name, false))
    }

    /// The doc string of the function `name` when the module itself (not one of its imports)
    /// records one.
    ///
    /// ```
    /// use tvm_ffi::{Function, Module};
    /// let system: Module = Function::get_global("ffi.SystemLib").unwrap().call_as(()).unwrap();
    /// assert!(system.own_function_doc("no_such_function").unwrap().is_none());
    /// ```
    pub fn own_function_doc(&self, name: &str) -> Result<Option<crate::base::value::String>> {
        DOC.get()?.call_as((self, name, false))
    }

    /// The kind of module (`"library"` for a shared library).
    pub fn kind(&self) -> Result<crate::base::value::String> {
        KIND.get()?.call_as((self,))
    }

    /// The modules this one imports, searched after it by the lookups (its reflected field
    /// `imports_`).
    pub fn imports(&self) -> Result<Array<Module>> {
        self.0.get_field("imports_")
    }

    /// Adds `other` to this module's imports (searched by lookups after this module's own
    /// functions); a cycle raises the runtime's error.
    pub fn import(&self, other: &Module) -> Result<()> {
        IMPORT.get()?.call((self, other)).map(drop)
    }

    /// Keeps the module loaded for the rest of the process (as Python's `load_module` does by
    /// default), even after the last reference is dropped.
    pub fn keep_alive(&self) -> Result<()> {
        KEEP_ALIVE.get()?.call((self,)).map(drop)
    }

    /// The underlying object reference.
    pub fn as_object_ref(&self) -> &ObjectRef<ModuleObj> {
        &self.0
    }
    /// Wraps a module object reference.
    pub fn from_object_ref(obj: ObjectRef<ModuleObj>) -> Module {
        Module(obj)
    }
    /// Unwraps into the object reference.
    pub fn into_object_ref(self) -> ObjectRef<ModuleObj> {
        self.0
    }
}

impl TypeSchema for Module {
    fn type_str() -> std::string::String {
        "ffi.Module".into()
    }
}
crate::base::value::object_wrapper_conversions!(Module, ModuleObj);
impl_into_arg_borrowed! {
    [] Module => |h| object_view(&h.0);
}
