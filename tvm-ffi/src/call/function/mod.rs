//! [`Function`]: the runtime's callable object, Rust closures wrapped as functions, typed calls,
//! and the global function registry.
//!
//! A Rust closure becomes an `ffi.Function` allocated by Rust itself: the header, the runtime's
//! function cell (`safe_call`, with no C++ fast path) and the closure in one allocation. Callers
//! from any language reach the closure through one indirect call.
use std::borrow::Cow;
use std::ffi::{c_int, c_void};

use crate::abi::sys::{self, type_index as ti, TVMFFIAny};
use crate::base::error::{Error, Result};
use crate::base::lock::lock_global_functions;
use crate::base::object::builtin::FunctionObj;
use crate::base::object::ObjectRef;
use crate::base::value::{Any, AnyView, FromAny, TypeSchema};

pub(crate) mod args;
mod binding;
pub(crate) mod cache;
mod closure;
pub(crate) mod export;
pub(crate) mod metadata;
mod moved;
pub(crate) mod panic_guard;
pub(crate) mod params;
mod repr;
mod safe_builtins;
pub(crate) mod signature;

pub(crate) use args::{impl_into_arg_borrowed, object_view};
pub use args::{IntoArg, IntoArgs};
pub(crate) use cache::GlobalCache;
pub use moved::{Moved, MovedArg};
pub use params::check as defaults;
pub(crate) use signature::{FnSignature, TypedClosure};

/// A reference-counted function callable from any language (`ffi.Function`).
///
/// `==` and `Hash` are identity (the same function object), as for [`ObjectRef`].
///
/// ```
/// use tvm_ffi::Function;
/// let add = Function::from_typed(|a: i64, b: i64| a + b);
/// assert_eq!(add.call_as::<i64, _>((2, 3)).unwrap(), 5);
/// assert!(add == add.clone() && add != Function::from_typed(|a: i64, b: i64| a + b));
/// ```
#[derive(Clone, PartialEq, Eq, Hash)]
#[repr(transparent)]
pub struct Function(ObjectRef<FunctionObj>);

impl std::fmt::Debug for Function {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Function({:p})", self.0.as_raw())
    }
}

impl Function {
    /// Wraps a packed closure: it receives the borrowed arguments and returns an owned value.
    ///
    /// The closure must be `Send + Sync`: the runtime may call it from any thread.
    ///
    /// ```
    /// use tvm_ffi::{Any, Function};
    /// let sum = Function::from_packed(|args| {
    ///     let mut total = 0i64;
    ///     for arg in args {
    ///         total += arg.cast::<i64>()?;
    ///     }
    ///     Ok(Any::new(total))
    /// });
    /// assert_eq!(sum.call_as::<i64, _>((1, 2, 3)).unwrap(), 6);
    /// ```
    pub fn from_packed<F>(body: F) -> Function
    where
        F: for<'a> Fn(&'a [AnyView<'a>]) -> Result<Any> + Send + Sync + 'static,
    {
        Function::from_packed_named(Cow::Borrowed(""), body)
    }

    /// Like [`Function::from_packed`], naming the function in panic messages.
    pub fn from_packed_named<F>(name: impl Into<Cow<'static, str>>, body: F) -> Function
    where
        F: for<'a> Fn(&'a [AnyView<'a>]) -> Result<Any> + Send + Sync + 'static,
    {
        crate::base::error::panic::install_panic_hook();
        if std::mem::align_of::<F>() > 8 {
            // The function cell must start right after the 24-byte header, where the runtime
            // reads `safe_call`; an over-aligned body would push it further, so box it.
            let boxed = Box::new(body);
            return Function(closure::alloc_closure(name.into(), move |args| boxed(args)));
        }
        Function(closure::alloc_closure(name.into(), body))
    }

    /// Wraps a typed closure; arguments are converted (and checked) with the runtime's rules
    /// and errors in C++'s words.
    ///
    /// ```
    /// use tvm_ffi::Function;
    /// let add = Function::from_typed(|a: i64, b: i64| a + b);
    /// assert_eq!(add.call_as::<i64, _>((40, 2)).unwrap(), 42);
    /// let err = add.call((1,)).unwrap_err();
    /// assert_eq!(err.message(), "Mismatched number of arguments when calling: `(0: int, 1: int) -> int`. Expected 2 but got 1 arguments");
    /// ```
    pub fn from_typed<F, Args>(body: F) -> Function
    where
        F: TypedClosure<Args>,
    {
        Function::from_typed_named("", body)
    }

    /// Like [`Function::from_typed`], with the name shown in error messages.
    pub fn from_typed_named<F, Args>(name: &'static str, body: F) -> Function
    where
        F: TypedClosure<Args>,
    {
        let signature = F::signature(name);
        Function::from_packed_named(name, move |args| body.invoke(&signature, args))
    }

    /// The function object of a typed function whose argument and result conversion is
    /// `invoke` (what `#[ffi_func(name = ...)]` registers): `invoke` receives `signature`, so
    /// that its error messages name the function as registered.
    ///
    /// The same `invoke` serves the function's module export ([`super::export::call`]), so both
    /// entry points check and convert identically.
    pub(crate) fn from_invoke<F>(signature: &'static FnSignature, invoke: F) -> Function
    where
        F: for<'a> Fn(&FnSignature, &'a [AnyView<'a>]) -> Result<Any> + Send + Sync + 'static,
    {
        Function::from_packed_named(signature.full_name(), move |args| invoke(signature, args))
    }

    /// Calls with borrowed arguments.
    ///
    /// A moved argument (a `Moved` view a callee forwards) is taken from its slot into one
    /// of this call, and put back afterwards unless the callee took it: foreign code moves with
    /// a plain read and clear, which must not race another thread forwarding the same view.
    #[inline]
    pub fn call_packed(&self, args: &[AnyView<'_>]) -> Result<Any> {
        if safe_builtins::has_tensor_or_moved(args) {
            return self.call_packed_checked(args);
        }
        // SAFETY: AnyView is repr(transparent) over TVMFFIAny; the callee only reads them.
        unsafe { self.call_raw(args.as_ptr() as *const TVMFFIAny, args.len()) }
    }

    /// [`Function::call_packed`] with a borrowed tensor or a moved value among the arguments.
    #[cold]
    #[inline(never)]
    fn call_packed_checked(&self, args: &[AnyView<'_>]) -> Result<Any> {
        if safe_builtins::has_borrowed_tensor(args)
            && builtins().addresses.contains(&self.address())
        {
            return Err(safe_builtins::kept_view_error());
        }
        moved::forwarding_moves(args, |args| {
            // SAFETY: AnyView is repr(transparent) over TVMFFIAny; the callee only reads them
            // (a moved value's slot is this call's).
            unsafe { self.call_raw(args.as_ptr() as *const TVMFFIAny, args.len()) }
        })
    }

    /// Calls with raw borrowed arguments.
    ///
    /// # Safety
    /// `args` must point to `len` valid values that stay alive during the call.
    #[inline]
    pub unsafe fn call_raw(&self, args: *const TVMFFIAny, len: usize) -> Result<Any> {
        let mut result = TVMFFIAny::NONE;
        let Ok(len) = i32::try_from(len) else {
            return Err(Error::value_error(format!(
                "too many arguments for one call: {len} (at most {})",
                i32::MAX
            )));
        };
        let Some(safe_call) = self.0.cell.safe_call else {
            return Err(Error::runtime_error("function object has no safe_call"));
        };
        // SAFETY: the runtime's calling convention: the function object as handle, borrowed
        // arguments, a zeroed result slot that receives an owned value on success.
        let rc = unsafe {
            safe_call(
                self.0.as_raw().as_ptr() as *mut c_void,
                args,
                len,
                &mut result,
            )
        };
        if rc == 0 {
            if result.type_index == sys::type_index::kTVMFFIDLTensorPtr {
                // A borrowed DLTensor* is not an owned value (C++ `Any(AnyView)` copies one
                // bitwise): it may point into an argument that ends with this call. It holds
                // no reference, so there is nothing to release.
                return Err(crate::base::value::borrowed_tensor_error());
            }
            // SAFETY: on success the callee wrote an owned value.
            Ok(unsafe { Any::from_raw(result) })
        } else {
            Err(Error::from_return_code(rc))
        }
    }

    /// Calls with a tuple of Rust values (or a slice of views/anys).
    ///
    /// Borrowed arguments (`&ObjectRef`, `&String`, `&Any`) are passed without reference-count
    /// traffic; plain values without allocation.
    ///
    /// ```
    /// use tvm_ffi::{Any, Function};
    /// let scale = Function::from_typed(|x: f64, by: f64| x * by);
    /// let out: Any = scale.call((1.5, 2.0)).unwrap();
    /// assert_eq!(out.cast::<f64>().unwrap(), 3.0);
    /// assert!(scale.call((1.5,)).is_err()); // wrong arity: a TypeError
    /// ```
    #[inline]
    pub fn call<A: IntoArgs>(&self, args: A) -> Result<Any> {
        args.with_args(|views| self.call_packed(views))?
    }

    /// Calls and converts the result to `R` (a `TypeError` if it does not convert).
    ///
    /// ```
    /// use tvm_ffi::{ErrorKind, Function};
    /// let add = Function::from_typed(|a: i64, b: i64| a + b);
    /// assert_eq!(add.call_as::<i64, _>((2, 3)).unwrap(), 5);
    /// let err = add.call_as::<String, _>((2, 3)).unwrap_err(); // the result is an int
    /// assert_eq!(err.kind(), ErrorKind::Type);
    /// ```
    pub fn call_as<R, A>(&self, args: A) -> Result<R>
    where
        A: IntoArgs,
        R: for<'a> FromAny<'a>,
    {
        let out = self.call(args)?;
        out.cast::<R>()
    }

    /// Looks up a global function.
    ///
    /// Of the runtime's builtins (`ffi.*`), only those on a reviewed list are handed out (they
    /// build, read, compare, hash, print or serialise values; the list is the crate's
    /// `call::function::safe_builtins`); for any other builtin, such as the `List`/`Dict`
    /// writers, the loaders or `ffi.FunctionFromExternC`, this returns a function that raises
    /// a `ValueError` naming the function and the `unsafe` [`Function::get_global_unchecked`].
    /// Functions outside `ffi.` are other libraries' code, called as any FFI call.
    ///
    /// ```
    /// use tvm_ffi::{Array, Function};
    /// let make_array = Function::get_global("ffi.Array").unwrap(); // a global of the runtime
    /// let array: Array<i64> = make_array.call_as((1i64, 2i64)).unwrap();
    /// assert_eq!(array.to_vec(), [1, 2]);
    /// assert!(Function::get_global("no_such.function").is_none());
    /// let load = Function::get_global("ffi.ModuleLoadFromFile").unwrap();
    /// let err = load.call(("/tmp/any.so",)).unwrap_err();
    /// assert!(err.message().contains("get_global_unchecked"));
    /// ```
    pub fn get_global(name: &str) -> Option<Function> {
        if let Some(why) = safe_builtins::refusal(name) {
            let _exists = Self::lookup(name)?;
            let name = name.to_owned();
            return Some(Function::from_packed_named(
                "Function::get_global",
                move |_| Err(safe_builtins::refused_error(&name, why)),
            ));
        }
        Some(Self::guarded(name, Self::lookup(name)?))
    }

    /// `found`, the builtin `name` a safe lookup hands out, checking its arguments first where
    /// the builtin trusts them (`safe_builtins::takes_a_type_index`).
    fn guarded(name: &str, found: Function) -> Function {
        if !safe_builtins::takes_a_type_index(name) {
            return found;
        }
        let name = name.to_owned();
        Function::from_packed_named(name.clone(), move |args| {
            match safe_builtins::unregistered_index(&name, args) {
                Some(err) => Err(err),
                None => found.call_packed(args),
            }
        })
    }

    /// Looks up a global function, including those [`Function::get_global`] refuses.
    ///
    /// # Safety
    /// For a function that trusts its arguments (loading a library, making a function of raw
    /// pointers, writing through a raw address, registering constructors or type attributes,
    /// changing the global table or letting a library unload), the caller vouches for every
    /// call of the returned function as for the `unsafe` operation it performs: for
    /// `ffi.ModuleLoadFromFile`, the contract of
    /// `Module::load_from_file`.
    ///
    /// ```
    /// use tvm_ffi::Function;
    /// // SAFETY: only looked up, never called.
    /// let load = unsafe { Function::get_global_unchecked("ffi.ModuleLoadFromFile") };
    /// assert!(load.is_some());
    /// ```
    pub unsafe fn get_global_unchecked(name: &str) -> Option<Function> {
        Self::lookup(name)
    }

    /// Wraps a C function of the safe-call signature (a module export `__tvm_ffi_<name>`, or
    /// any `TVMFFISafeCallType`) as a function object, as C++ `Function::FromExternC` does:
    /// each call is `safe_call(handle, args, num_args, result)`, and `deleter(handle)` runs
    /// once, when the function object is freed. A runtime that cannot make the object raises
    /// its error.
    ///
    /// # Safety
    /// `safe_call` must keep the safe-call contract for every call, from any thread, for as
    /// long as the function object lives: read only the `num_args` borrowed arguments, on
    /// success write one owned value to `result` and return 0, on failure set the raised error
    /// and return non-zero; and it must be able to use `handle` so. `deleter`, if given, must
    /// accept `handle` once, after the last call.
    ///
    /// ```
    /// use std::ffi::c_void;
    /// use tvm_ffi::{sys::TVMFFIAny, Any, Function};
    ///
    /// /// Returns 42: a safe-call function, as a C library exports one.
    /// unsafe extern "C" fn forty_two(
    ///     _handle: *mut c_void,
    ///     _args: *const TVMFFIAny,
    ///     _num_args: i32,
    ///     result: *mut TVMFFIAny,
    /// ) -> i32 {
    ///     // SAFETY: the caller passes a writable result slot.
    ///     unsafe { *result = Any::new(42i64).into_raw() };
    ///     0
    /// }
    ///
    /// // SAFETY: `forty_two` keeps the safe-call contract and uses no handle.
    /// let f = unsafe { Function::from_extern_c(std::ptr::null_mut(), forty_two, None) }.unwrap();
    /// assert_eq!(f.call_as::<i64, _>(()).unwrap(), 42);
    /// ```
    pub unsafe fn from_extern_c(
        handle: *mut c_void,
        safe_call: sys::TVMFFISafeCallType,
        deleter: Option<unsafe extern "C" fn(*mut c_void)>,
    ) -> Result<Function> {
        let mut out: sys::TVMFFIObjectHandle = std::ptr::null_mut();
        // SAFETY: a valid output slot; the caller vouches for `safe_call`, `handle` and
        // `deleter` (the runtime only stores them).
        let rc = unsafe { sys::TVMFFIFunctionCreate(handle, safe_call, deleter, &mut out) };
        match std::ptr::NonNull::new(out as *mut sys::TVMFFIObject) {
            // SAFETY: on success the runtime wrote an owned reference to a new function.
            Some(ptr) if rc == 0 => Ok(Function(unsafe { ObjectRef::from_raw(ptr) })),
            _ => Err(Error::from_return_code(rc)),
        }
    }

    /// A global function, unchecked.
    pub(crate) fn lookup(name: &str) -> Option<Function> {
        let _locked = lock_global_functions();
        Self::get_global_unlocked(name)
    }

    /// [`Function::lookup`] for a caller that holds the table lock.
    fn get_global_unlocked(name: &str) -> Option<Function> {
        let name = sys::TVMFFIByteArray::from_bytes(name.as_bytes());
        let mut out: sys::TVMFFIObjectHandle = std::ptr::null_mut();
        // SAFETY: valid name and output slot.
        let rc = unsafe { sys::TVMFFIFunctionGetGlobal(&name, &mut out) };
        if rc != 0 {
            drop(Error::take_raised());
            return None;
        }
        // SAFETY: a non-null result is an owned function reference.
        std::ptr::NonNull::new(out as *mut sys::TVMFFIObject)
            .map(|ptr| Function(unsafe { ObjectRef::from_raw(ptr) }))
    }

    /// Looks up a global function that must exist; a missing one is the `ValueError` C++'s
    /// `Function::GetGlobalRequired` raises, and one [`Function::get_global`] refuses is a
    /// `ValueError` naming it and [`Function::get_global_unchecked`].
    ///
    /// ```
    /// use tvm_ffi::Function;
    /// let err = Function::get_global_required("ffi.FunctionFromExternC").unwrap_err();
    /// assert_eq!(err.kind(), "ValueError");
    /// assert!(err.message().starts_with("Function `ffi.FunctionFromExternC` cannot be looked up"));
    /// ```
    pub fn get_global_required(name: &str) -> Result<Function> {
        if let Some(why) = safe_builtins::refusal(name) {
            return Err(safe_builtins::refused_error(name, why));
        }
        let found = Self::lookup(name)
            .ok_or_else(|| Error::value_error(format!("Function {name} not found")))?;
        Ok(Self::guarded(name, found))
    }

    /// Registers `self` as global `name`. Without `allow_override`, an existing name is an error.
    ///
    /// ```
    /// use tvm_ffi::Function;
    /// let square = Function::from_typed(|x: i64| x * x);
    /// square.register_global("doc_examples.square", false).unwrap();
    /// let found = Function::get_global("doc_examples.square").unwrap(); // from any language
    /// assert_eq!(found.call_as::<i64, _>((4,)).unwrap(), 16);
    /// assert!(square.register_global("doc_examples.square", false).is_err()); // taken
    /// ```
    pub fn register_global(&self, name: &str, allow_override: bool) -> Result<()> {
        self.register_global_with_info(name, "", "", allow_override)
    }

    /// Registers `self` as global `name` with a doc string and metadata JSON
    /// (`{"type_schema":"..."}`), as C++ `refl::GlobalDef` does. Without `allow_override`, an
    /// existing name is a `RuntimeError` returned to the caller (as Python's
    /// `register_global_func` raises it), not printed.
    pub fn register_global_with_info(
        &self,
        name: &str,
        doc: &str,
        metadata: &str,
        allow_override: bool,
    ) -> Result<()> {
        let locked = lock_global_functions();
        // The function this replaces, released only after the lock: its drop may run any code.
        let previous = Function::get_global_unlocked(name);
        // The runtime's own check prints a C++ traceback to stderr before it fails (it is
        // written for static initialisers, whose errors nobody receives); this caller receives
        // the error.
        if !allow_override && previous.is_some() {
            drop(locked);
            return Err(Error::runtime_error(format!(
                "Global Function `{name}` is already registered"
            )));
        }
        let info = sys::TVMFFIMethodInfo {
            name: sys::TVMFFIByteArray::from_bytes(name.as_bytes()),
            doc: sys::TVMFFIByteArray::from_bytes(doc.as_bytes()),
            metadata: sys::TVMFFIByteArray::from_bytes(metadata.as_bytes()),
            flags: 0,
            method: crate::base::value::pod(
                ti::kTVMFFIFunction,
                sys::TVMFFIAnyValue {
                    v_obj: self.0.as_raw().as_ptr(),
                },
            ),
        };
        // SAFETY: valid info; the runtime takes its own reference to the function.
        let rc =
            unsafe { sys::TVMFFIFunctionSetGlobalFromMethodInfo(&info, allow_override as c_int) };
        drop(locked);
        drop(previous);
        if rc == 0 {
            Ok(())
        } else {
            Err(Error::from_return_code(rc))
        }
    }

    /// Names of all registered global functions.
    pub fn list_global_names() -> Result<Vec<std::string::String>> {
        static LIST: GlobalCache = GlobalCache::new("ffi.FunctionListGlobalNamesFunctor");
        let list = LIST.get()?;
        // The functor copies the names when it is made: with the table's lock held.
        let functor: Function = {
            let _locked = lock_global_functions();
            list.call_as(())?
        };
        let count: i64 = functor.call_as((-1i64,))?;
        (0..count)
            .map(|i| functor.call_as::<std::string::String, _>((i,)))
            .collect()
    }

    /// The underlying object reference.
    pub fn as_object_ref(&self) -> &ObjectRef<FunctionObj> {
        &self.0
    }
    /// Wraps a function object reference.
    pub fn from_object_ref(obj: ObjectRef<FunctionObj>) -> Function {
        Function(obj)
    }
    /// Unwraps into the object reference.
    pub fn into_object_ref(self) -> ObjectRef<FunctionObj> {
        self.0
    }
}

impl Function {
    fn address(&self) -> usize {
        self.0.as_raw().as_ptr() as usize
    }
}

/// The runtime's builtins that keep their arguments (`safe_builtins::keeps_arguments`).
struct Builtins {
    addresses: std::collections::HashSet<usize>,
    /// Kept for the process, so that no address is reused by another function.
    _functions: Vec<Function>,
}

/// The function objects of the runtime's builtins, looked up once, at the first call with a
/// borrowed tensor argument.
#[cold]
fn builtins() -> &'static Builtins {
    static BUILTINS: std::sync::OnceLock<Builtins> = std::sync::OnceLock::new();
    BUILTINS.get_or_init(|| {
        let names = Function::list_global_names().unwrap_or_default();
        let functions: Vec<Function> = names
            .iter()
            .filter(|name| safe_builtins::keeps_arguments(name))
            .filter_map(|name| Function::lookup(name))
            .collect();
        Builtins {
            addresses: functions.iter().map(Function::address).collect(),
            _functions: functions,
        }
    })
}

impl TypeSchema for Function {
    fn type_str() -> std::string::String {
        "ffi.Function".into()
    }
}
crate::base::value::object_wrapper_conversions!(Function, FunctionObj);
