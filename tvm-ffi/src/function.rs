//! [`Function`]: the runtime's callable object, Rust closures wrapped as functions, typed calls,
//! and the global function registry.
//!
//! A Rust closure becomes an `ffi.Function` allocated by Rust itself: the header, the runtime's
//! function cell (`safe_call`, with no C++ fast path) and the closure in one allocation. Callers
//! from any language reach the closure through one indirect call.
use std::borrow::Cow;
use std::ffi::{c_int, c_void};
use std::sync::OnceLock;

use crate::any::{AnyView, FromAny, IntoAny, TryIntoAny, TypeSchema};
use crate::boundary;
use crate::builtin::FunctionObj;
use crate::error::{Error, Result};
use crate::object::{self, ObjectCell, ObjectRef};
use crate::sys::{self, type_index as ti, TVMFFIAny};
use crate::Any;

/// A reference-counted function callable from any language (`ffi.Function`).
#[derive(Clone)]
#[repr(transparent)]
pub struct Function(ObjectRef<FunctionObj>);

impl std::fmt::Debug for Function {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Function({:p})", self.0.as_raw())
    }
}

/// Payload of a Rust-allocated function object: the runtime's cell first, then the closure.
#[repr(C)]
struct ClosureCell<F> {
    cell: sys::TVMFFIFunctionCell,
    name: Cow<'static, str>,
    body: F,
}

unsafe extern "C" fn closure_trampoline<F>(
    handle: *mut c_void,
    args: *const TVMFFIAny,
    num_args: i32,
    result: *mut TVMFFIAny,
) -> c_int
where
    F: for<'a> Fn(&'a [AnyView<'a>]) -> Result<Any>,
{
    // SAFETY: the runtime passes the function object itself; we allocated it as
    // ObjectCell<ClosureCell<F>>, so the payload sits at PAYLOAD_OFFSET.
    let closure = unsafe {
        &*((handle as *const u8).add(ObjectCell::<ClosureCell<F>>::PAYLOAD_OFFSET)
            as *const ClosureCell<F>)
    };
    // SAFETY: the runtime's calling convention, passed on unchanged.
    unsafe { enter(&closure.name, args, num_args, result, &closure.body) }
}

/// The one body behind every `safe_call` that Rust implements: the trampoline of Rust function
/// objects ([`Function::from_packed`] and everything built on it, including the globals of
/// `#[ffi_func]`) and the module exports of `#[ffi_func(export = ...)]`
/// ([`crate::export::call`]). It views the arguments, runs `body` under
/// [`boundary::guard`] (an `Err` is raised, a panic becomes a `RuntimeError` naming `context`,
/// nothing unwinds into C) and moves the owned result into the caller's slot.
///
/// # Safety
/// The `TVMFFISafeCallType` contract: `args` points to `num_args` borrowed values that stay
/// alive during the call, and `result` is a writable slot the caller initialised to `None`.
#[inline(always)]
pub(crate) unsafe fn enter<F>(
    context: &str,
    args: *const TVMFFIAny,
    num_args: i32,
    result: *mut TVMFFIAny,
    body: F,
) -> c_int
where
    F: for<'a> FnOnce(&'a [AnyView<'a>]) -> Result<Any>,
{
    // A negative count cannot come from a well-behaved caller; it reads as "no arguments", so
    // a typed function reports the arity mismatch instead of reading out of bounds.
    // SAFETY: the caller passes `num_args` borrowed values that outlive the call.
    let args = unsafe { AnyView::slice_from_raw(args, num_args.max(0) as usize) };
    // SAFETY: `result` is the caller's zero-initialised output slot.
    unsafe { boundary::guard(context, result, || body(args)) }
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
        boundary::install_panic_hook();
        if std::mem::align_of::<F>() > 8 {
            // The function cell must start right after the 24-byte header, where the runtime
            // reads `safe_call`; an over-aligned body would push it further, so box it.
            let boxed = Box::new(body);
            return Function::alloc_closure(name.into(), move |args| boxed(args));
        }
        Function::alloc_closure(name.into(), body)
    }

    /// Allocates the function object of a closure whose alignment is at most 8.
    fn alloc_closure<F>(name: Cow<'static, str>, body: F) -> Function
    where
        F: for<'a> Fn(&'a [AnyView<'a>]) -> Result<Any> + Send + Sync + 'static,
    {
        let payload = ClosureCell {
            cell: sys::TVMFFIFunctionCell {
                safe_call: Some(closure_trampoline::<F>),
                cpp_call: std::ptr::null_mut(),
            },
            name,
            body,
        };
        let ptr = object::alloc_object(payload, ti::kTVMFFIFunction);
        // SAFETY: a fresh function object (header + function cell prefix), one reference.
        Function(unsafe { ObjectRef::from_raw(ptr) })
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
    /// The same `invoke` serves the function's module export ([`crate::export::call`]), so both
    /// entry points check and convert identically.
    ///
    /// ```
    /// use tvm_ffi::function::{FnSignature, TypeDesc};
    /// use tvm_ffi::{Any, AnyView, Function, Result};
    /// use std::borrow::Cow;
    ///
    /// static SIG: FnSignature = FnSignature {
    ///     name: Cow::Borrowed("demo.twice"),
    ///     params: Cow::Borrowed(&[TypeDesc::of::<i64>()]),
    ///     ret: TypeDesc::of::<i64>(),
    /// };
    /// fn invoke<'a>(sig: &FnSignature, args: &'a [AnyView<'a>]) -> Result<Any> {
    ///     sig.check_arity(args)?;
    ///     Ok(Any::new(2 * sig.arg::<i64>(args, 0)?))
    /// }
    /// let twice = Function::from_invoke(&SIG, invoke);
    /// assert_eq!(twice.call_as::<i64, _>((21,)).unwrap(), 42);
    /// assert_eq!(
    ///     twice.call(("x",)).unwrap_err().message(),
    ///     "Mismatched type on argument #0 when calling: `demo.twice(0: int) -> int`. Expected `int` but got `ffi.SmallStr`"
    /// );
    /// ```
    pub fn from_invoke<F>(signature: &'static FnSignature, invoke: F) -> Function
    where
        F: for<'a> Fn(&FnSignature, &'a [AnyView<'a>]) -> Result<Any> + Send + Sync + 'static,
    {
        Function::from_packed_named(signature.name.clone(), move |args| invoke(signature, args))
    }

    /// Calls with borrowed arguments.
    #[inline]
    pub fn call_packed(&self, args: &[AnyView<'_>]) -> Result<Any> {
        // SAFETY: AnyView is repr(transparent) over TVMFFIAny; the callee only reads them.
        unsafe { self.call_raw(args.as_ptr() as *const TVMFFIAny, args.len()) }
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
    #[inline]
    pub fn call<A: IntoArgs>(&self, args: A) -> Result<Any> {
        args.with_args(|views| self.call_packed(views))?
    }

    /// Calls and converts the result to `R` (a `TypeError` if it does not convert).
    pub fn call_as<R, A>(&self, args: A) -> Result<R>
    where
        A: IntoArgs,
        R: for<'a> FromAny<'a>,
    {
        let out = self.call(args)?;
        out.cast::<R>()
    }

    /// Looks up a global function.
    pub fn get_global(name: &str) -> Option<Function> {
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

    /// Registers `self` as global `name`. Without `allow_override`, an existing name is an error.
    pub fn register_global(&self, name: &str, allow_override: bool) -> Result<()> {
        self.register_global_with_info(name, "", "", allow_override)
    }

    /// Registers `self` as global `name` with a doc string and metadata JSON
    /// (`{"type_schema":"..."}`), as C++ `refl::GlobalDef` does.
    pub fn register_global_with_info(
        &self,
        name: &str,
        doc: &str,
        metadata: &str,
        allow_override: bool,
    ) -> Result<()> {
        let info = sys::TVMFFIMethodInfo {
            name: sys::TVMFFIByteArray::from_bytes(name.as_bytes()),
            doc: sys::TVMFFIByteArray::from_bytes(doc.as_bytes()),
            metadata: sys::TVMFFIByteArray::from_bytes(metadata.as_bytes()),
            flags: 0,
            method: crate::any::pod(
                ti::kTVMFFIFunction,
                sys::TVMFFIAnyValue {
                    v_obj: self.0.as_raw().as_ptr(),
                },
            ),
        };
        // SAFETY: valid info; the runtime takes its own reference to the function.
        let rc =
            unsafe { sys::TVMFFIFunctionSetGlobalFromMethodInfo(&info, allow_override as c_int) };
        if rc == 0 {
            Ok(())
        } else {
            Err(Error::from_return_code(rc))
        }
    }

    /// Names of all registered global functions.
    pub fn list_global_names() -> Result<Vec<std::string::String>> {
        static LIST: GlobalCache = GlobalCache::new("ffi.FunctionListGlobalNamesFunctor");
        let functor: Function = LIST.get()?.call_as(())?;
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

impl TypeSchema for Function {
    fn type_str() -> std::string::String {
        "ffi.Function".into()
    }
}
crate::any::object_wrapper_conversions!(Function, FunctionObj);

/// A global function looked up once and cached (for the runtime's own `ffi.*` helpers).
pub struct GlobalCache {
    name: &'static str,
    cell: OnceLock<Function>,
}

impl GlobalCache {
    /// A cache for the global `name`.
    pub const fn new(name: &'static str) -> Self {
        GlobalCache {
            name,
            cell: OnceLock::new(),
        }
    }

    /// The function, or an error naming it when it is not registered.
    pub fn get(&self) -> Result<&Function> {
        if let Some(f) = self.cell.get() {
            return Ok(f);
        }
        let f = Function::get_global(self.name).ok_or_else(|| {
            Error::runtime_error(format!("Global Function `{}` is not registered", self.name))
        })?;
        Ok(self.cell.get_or_init(|| f))
    }
}

// ---------------------------------------------------------------------------------------------
// Signatures and argument conversion (shared by typed closures, #[ffi_func] and #[ffi_methods]).
// ---------------------------------------------------------------------------------------------

/// How a parameter or return type is named in messages and in `type_schema`.
#[derive(Clone, Copy)]
pub struct TypeDesc {
    /// `TypeSchema::type_str`
    pub type_str: fn() -> std::string::String,
    /// `TypeSchema::type_schema`
    pub type_schema: fn() -> std::string::String,
}

impl TypeDesc {
    /// The description of `T`.
    pub const fn of<T: TypeSchema + ?Sized>() -> TypeDesc {
        TypeDesc {
            type_str: T::type_str,
            type_schema: T::type_schema,
        }
    }
}

/// The signature of a typed function, used to build C++-style error messages (only on the
/// error path) and the `type_schema` metadata.
pub struct FnSignature {
    /// Registered name (`"my_ext.add"`, `"my_ext.Point.scale"`, or empty for anonymous).
    pub name: Cow<'static, str>,
    /// Parameter types, in order (including `self` for methods).
    pub params: Cow<'static, [TypeDesc]>,
    /// Return type.
    pub ret: TypeDesc,
}

impl FnSignature {
    /// `name(0: int, 1: str) -> int`, as C++ prints it (`void` for no result).
    pub fn text(&self) -> std::string::String {
        let params: Vec<_> = self
            .params
            .iter()
            .enumerate()
            .map(|(i, p)| format!("{i}: {}", (p.type_str)()))
            .collect();
        let ret = (self.ret.type_str)();
        let ret = if ret == "None" {
            "void".to_string()
        } else {
            ret
        };
        format!("{}({}) -> {}", self.name, params.join(", "), ret)
    }

    /// `{"type":"ffi.Function","named_args":{"return":[R],"params":[P...]}}`.
    pub fn type_schema(&self) -> std::string::String {
        let params: Vec<_> = self.params.iter().map(|p| (p.type_schema)()).collect();
        format!(
            r#"{{"type":"ffi.Function","named_args":{{"return":[{}],"params":[{}]}}}}"#,
            (self.ret.type_schema)(),
            params.join(",")
        )
    }

    /// The metadata JSON registered with the function (and returned by its module export's
    /// `__tvm_ffi__metadata_<name>` symbol): `{"type_schema":"..."}`, as C++ writes it.
    pub fn metadata(&self) -> std::string::String {
        crate::metadata::metadata_json(&self.type_schema(), &[])
    }

    /// Checks the argument count.
    #[inline]
    pub fn check_arity(&self, args: &[AnyView<'_>]) -> Result<()> {
        if args.len() == self.params.len() {
            Ok(())
        } else {
            Err(self.arity_error(args.len()))
        }
    }

    #[cold]
    fn arity_error(&self, got: usize) -> Error {
        Error::type_error(format!(
            "Mismatched number of arguments when calling: `{}`. Expected {} but got {} arguments",
            self.text(),
            self.params.len(),
            got
        ))
    }

    /// Converts argument `index` to `T`, or fails with C++'s mismatch message.
    #[inline]
    pub fn arg<'a, T: FromAny<'a>>(&self, args: &'a [AnyView<'a>], index: usize) -> Result<T> {
        let view = &args[index];
        match T::try_cast(view) {
            Some(v) => Ok(v),
            None => Err(self.arg_error::<T>(view, index)),
        }
    }

    #[cold]
    fn arg_error<'a, T: FromAny<'a>>(&self, view: &AnyView<'_>, index: usize) -> Error {
        Error::type_error(format!(
            "Mismatched type on argument #{index} when calling: `{}`. Expected `{}` but got {}",
            self.text(),
            T::type_str(),
            T::describe_mismatch(view)
        ))
    }
}

/// The `type_schema` of a packed (variadic) function, `{"type":"ffi.Function"}`: what C++
/// `refl::GlobalDef().def_packed(...)` registers, since the parameters are not known.
pub const PACKED_TYPE_SCHEMA: &str = r#"{"type":"ffi.Function"}"#;

/// The metadata JSON of a packed (variadic) function: `{"type_schema":"{\"type\":\"ffi.Function\"}"}`.
pub fn packed_metadata() -> std::string::String {
    crate::metadata::metadata_json(PACKED_TYPE_SCHEMA, &[])
}

/// What a Rust function may return across the ABI: a value (including `()`, `Any`, objects)
/// or a `Result` whose error converts into [`Error`].
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be returned across the TVM-FFI boundary",
    label = "unsupported return type",
    note = "return a TVM-FFI value type, `()`, or `Result<T, E>` where `E: Into<tvm_ffi::Error>`"
)]
pub trait FfiReturn {
    /// The value type's description.
    const DESC: TypeDesc;
    /// Converts into the owned result.
    fn into_ffi_result(self) -> Result<Any>;
}

impl<T: TryIntoAny + TypeSchema> FfiReturn for T {
    const DESC: TypeDesc = TypeDesc::of::<T>();
    #[inline]
    fn into_ffi_result(self) -> Result<Any> {
        self.try_into_any()
    }
}

impl<T: TryIntoAny + TypeSchema, E: Into<Error>> FfiReturn for std::result::Result<T, E> {
    const DESC: TypeDesc = TypeDesc::of::<T>();
    #[inline]
    fn into_ffi_result(self) -> Result<Any> {
        self.map_err(Into::into)?.try_into_any()
    }
}

/// A Rust closure with typed arguments that can become a [`Function`].
///
/// Implemented for `Fn(A0, ..., An) -> R` (up to 12 arguments) where every `Ai` converts from
/// an owned value (`for<'a> FromAny<'a>`) and `R: FfiReturn`.
pub trait TypedClosure<Args>: Send + Sync + 'static {
    /// The signature, named `name`.
    fn signature(name: &'static str) -> FnSignature;
    /// Converts the arguments, calls, converts the result.
    fn invoke(&self, signature: &FnSignature, args: &[AnyView<'_>]) -> Result<Any>;
}

macro_rules! impl_typed_closure {
    ($($arg:ident $idx:tt),*) => {
        impl<Func, Ret, $($arg),*> TypedClosure<($($arg,)*)> for Func
        where
            Func: Fn($($arg),*) -> Ret + Send + Sync + 'static,
            Ret: FfiReturn,
            $($arg: for<'a> FromAny<'a>,)*
        {
            fn signature(name: &'static str) -> FnSignature {
                FnSignature {
                    name: Cow::Borrowed(name),
                    params: Cow::Owned(vec![$(TypeDesc::of::<$arg>()),*]),
                    ret: Ret::DESC,
                }
            }
            #[allow(unused_variables)]
            #[inline]
            fn invoke(&self, signature: &FnSignature, args: &[AnyView<'_>]) -> Result<Any> {
                signature.check_arity(args)?;
                (self)($(signature.arg::<$arg>(args, $idx)?),*).into_ffi_result()
            }
        }
    };
}
impl_typed_closure!();
impl_typed_closure!(A0 0);
impl_typed_closure!(A0 0, A1 1);
impl_typed_closure!(A0 0, A1 1, A2 2);
impl_typed_closure!(A0 0, A1 1, A2 2, A3 3);
impl_typed_closure!(A0 0, A1 1, A2 2, A3 3, A4 4);
impl_typed_closure!(A0 0, A1 1, A2 2, A3 3, A4 4, A5 5);
impl_typed_closure!(A0 0, A1 1, A2 2, A3 3, A4 4, A5 5, A6 6);
impl_typed_closure!(A0 0, A1 1, A2 2, A3 3, A4 4, A5 5, A6 6, A7 7);
impl_typed_closure!(A0 0, A1 1, A2 2, A3 3, A4 4, A5 5, A6 6, A7 7, A8 8);
impl_typed_closure!(A0 0, A1 1, A2 2, A3 3, A4 4, A5 5, A6 6, A7 7, A8 8, A9 9);
impl_typed_closure!(A0 0, A1 1, A2 2, A3 3, A4 4, A5 5, A6 6, A7 7, A8 8, A9 9, A10 10);
impl_typed_closure!(A0 0, A1 1, A2 2, A3 3, A4 4, A5 5, A6 6, A7 7, A8 8, A9 9, A10 10, A11 11);

// ---------------------------------------------------------------------------------------------
// Calling with Rust values.
// ---------------------------------------------------------------------------------------------

/// A value that can be passed as an argument of [`Function::call`].
///
/// `Holder` keeps whatever the borrowed view points to alive during the call (a temporary
/// string object, or nothing at all for plain values and borrowed references).
pub trait IntoArg {
    /// What lives on the caller's stack during the call.
    type Holder;
    /// Prepares the argument.
    fn into_holder(self) -> Result<Self::Holder>;
    /// The borrowed view of the prepared argument.
    fn view(holder: &Self::Holder) -> TVMFFIAny;
}

macro_rules! impl_into_arg_pod {
    ($($t:ty),*) => {$(
        impl IntoArg for $t {
            type Holder = $t;
            #[inline]
            fn into_holder(self) -> Result<$t> { Ok(self) }
            #[inline]
            fn view(holder: &$t) -> TVMFFIAny { holder.into_any().into_raw() }
        }
        impl IntoArg for &$t {
            type Holder = $t;
            #[inline]
            fn into_holder(self) -> Result<$t> { Ok(*self) }
            #[inline]
            fn view(holder: &$t) -> TVMFFIAny { holder.into_any().into_raw() }
        }
    )*};
}
impl_into_arg_pod!(
    i8,
    i16,
    i32,
    i64,
    isize,
    u8,
    u16,
    u32,
    bool,
    f32,
    f64,
    crate::DataType,
    crate::Device
);

macro_rules! impl_into_arg_wide {
    ($($t:ty),*) => {$(
        impl IntoArg for $t {
            type Holder = i64;
            #[inline]
            fn into_holder(self) -> Result<i64> {
                i64::try_from(self).map_err(|_| Error::value_error(format!(
                    "value {} of type `{}` does not fit the FFI `int` (int64)", self, stringify!($t))))
            }
            #[inline]
            fn view(holder: &i64) -> TVMFFIAny { holder.into_any().into_raw() }
        }
    )*};
}
impl_into_arg_wide!(u64, usize);

impl IntoArg for () {
    type Holder = ();
    fn into_holder(self) -> Result<()> {
        Ok(())
    }
    fn view(_: &()) -> TVMFFIAny {
        TVMFFIAny::NONE
    }
}

/// Implements `IntoArg` for an owned type `T` and `&T`, where `T` has a 16-byte raw form or
/// is an object reference, by borrowing it in place.
macro_rules! impl_into_arg_borrowed {
    ($([$($gen:tt)*] $t:ty => |$h:ident| $raw:expr;)*) => {$(
        impl<$($gen)*> IntoArg for $t {
            type Holder = $t;
            #[inline]
            fn into_holder(self) -> Result<$t> { Ok(self) }
            #[inline]
            fn view($h: &$t) -> TVMFFIAny { $raw }
        }
        impl<'r, $($gen)*> IntoArg for &'r $t {
            type Holder = &'r $t;
            #[inline]
            fn into_holder(self) -> Result<&'r $t> { Ok(self) }
            #[inline]
            fn view($h: &&'r $t) -> TVMFFIAny { let $h: &$t = *$h; $raw }
        }
    )*};
}

#[inline]
fn object_view<T: crate::ObjectType>(obj: &ObjectRef<T>) -> TVMFFIAny {
    crate::any::pod(
        obj.type_index(),
        sys::TVMFFIAnyValue {
            v_obj: obj.as_raw().as_ptr(),
        },
    )
}

impl_into_arg_borrowed! {
    [T: crate::ObjectType] ObjectRef<T> => |h| object_view(h);
    [] Function => |h| object_view(&h.0);
    [] Error => |h| object_view(h.as_object_ref());
    [T] crate::Array<T> => |h| object_view(h.as_object_ref());
    [K, V] crate::Map<K, V> => |h| object_view(h.as_object_ref());
    [] crate::Tensor => |h| object_view(h.as_object_ref());
    [] crate::String => |h| *h.as_raw();
    [] crate::Bytes => |h| *h.as_raw();
    [] Any => |h| *h.as_raw();
}

impl<'a> IntoArg for AnyView<'a> {
    type Holder = AnyView<'a>;
    #[inline]
    fn into_holder(self) -> Result<Self> {
        Ok(self)
    }
    #[inline]
    fn view(holder: &Self) -> TVMFFIAny {
        *holder.as_raw()
    }
}

/// A view is passed as its `ffi.Tensor` object when it has one (so both `Tensor` and
/// `TensorView` parameters accept it), else as a `DLTensor*`, as C++ passes a `TensorView`.
impl<'a> IntoArg for crate::TensorView<'a> {
    type Holder = crate::TensorView<'a>;
    #[inline]
    fn into_holder(self) -> Result<Self> {
        Ok(self)
    }
    #[inline]
    fn view(holder: &Self) -> TVMFFIAny {
        match holder.owner_object() {
            Some(obj) => crate::any::pod(
                ti::kTVMFFITensor,
                sys::TVMFFIAnyValue {
                    v_obj: obj.as_ptr(),
                },
            ),
            None => crate::any::pod(
                ti::kTVMFFIDLTensorPtr,
                sys::TVMFFIAnyValue {
                    v_ptr: holder.as_dltensor() as *const sys::DLTensor as *mut c_void,
                },
            ),
        }
    }
}

impl IntoArg for &str {
    type Holder = crate::String;
    #[inline]
    fn into_holder(self) -> Result<crate::String> {
        Ok(crate::String::new(self))
    }
    #[inline]
    fn view(holder: &crate::String) -> TVMFFIAny {
        *holder.as_raw()
    }
}
impl IntoArg for std::string::String {
    type Holder = crate::String;
    fn into_holder(self) -> Result<crate::String> {
        Ok(crate::String::new(&self))
    }
    fn view(holder: &crate::String) -> TVMFFIAny {
        *holder.as_raw()
    }
}
impl IntoArg for &std::string::String {
    type Holder = crate::String;
    fn into_holder(self) -> Result<crate::String> {
        Ok(crate::String::new(self))
    }
    fn view(holder: &crate::String) -> TVMFFIAny {
        *holder.as_raw()
    }
}
impl IntoArg for &[u8] {
    type Holder = crate::Bytes;
    fn into_holder(self) -> Result<crate::Bytes> {
        Ok(crate::Bytes::new(self))
    }
    fn view(holder: &crate::Bytes) -> TVMFFIAny {
        *holder.as_raw()
    }
}
impl<T: IntoArg> IntoArg for Option<T> {
    type Holder = Option<T::Holder>;
    #[inline]
    fn into_holder(self) -> Result<Self::Holder> {
        self.map(T::into_holder).transpose()
    }
    #[inline]
    fn view(holder: &Self::Holder) -> TVMFFIAny {
        holder.as_ref().map_or(TVMFFIAny::NONE, T::view)
    }
}

/// An argument list for [`Function::call`]: a tuple of [`IntoArg`] values (up to 12), or a
/// slice of [`AnyView`]s or [`Any`]s.
pub trait IntoArgs {
    /// Prepares the arguments and runs `body` with their views.
    fn with_args<R>(self, body: impl FnOnce(&[AnyView<'_>]) -> R) -> Result<R>;
}

impl IntoArgs for &[AnyView<'_>] {
    #[inline]
    fn with_args<R>(self, body: impl FnOnce(&[AnyView<'_>]) -> R) -> Result<R> {
        Ok(body(self))
    }
}
impl IntoArgs for &[Any] {
    #[inline]
    fn with_args<R>(self, body: impl FnOnce(&[AnyView<'_>]) -> R) -> Result<R> {
        // SAFETY: Any and AnyView are both repr(transparent) over TVMFFIAny.
        let views =
            unsafe { AnyView::slice_from_raw(self.as_ptr() as *const TVMFFIAny, self.len()) };
        Ok(body(views))
    }
}
impl IntoArgs for &Vec<Any> {
    #[inline]
    fn with_args<R>(self, body: impl FnOnce(&[AnyView<'_>]) -> R) -> Result<R> {
        self.as_slice().with_args(body)
    }
}

macro_rules! impl_into_args_tuple {
    ($($arg:ident $holder:ident $idx:tt),*) => {
        impl<$($arg: IntoArg),*> IntoArgs for ($($arg,)*) {
            #[inline]
            #[allow(unused_variables, clippy::unused_unit)]
            fn with_args<R>(self, body: impl FnOnce(&[AnyView<'_>]) -> R) -> Result<R> {
                $(let $holder = self.$idx.into_holder()?;)*
                let raw: [TVMFFIAny; 0 $(+ { let _ = $idx; 1 })*] = [$($arg::view(&$holder)),*];
                // SAFETY: views of holders that live until the end of this function.
                let views = unsafe { AnyView::slice_from_raw(raw.as_ptr(), raw.len()) };
                Ok(body(views))
            }
        }
    };
}
impl_into_args_tuple!();
impl_into_args_tuple!(A0 h0 0);
impl_into_args_tuple!(A0 h0 0, A1 h1 1);
impl_into_args_tuple!(A0 h0 0, A1 h1 1, A2 h2 2);
impl_into_args_tuple!(A0 h0 0, A1 h1 1, A2 h2 2, A3 h3 3);
impl_into_args_tuple!(A0 h0 0, A1 h1 1, A2 h2 2, A3 h3 3, A4 h4 4);
impl_into_args_tuple!(A0 h0 0, A1 h1 1, A2 h2 2, A3 h3 3, A4 h4 4, A5 h5 5);
impl_into_args_tuple!(A0 h0 0, A1 h1 1, A2 h2 2, A3 h3 3, A4 h4 4, A5 h5 5, A6 h6 6);
impl_into_args_tuple!(A0 h0 0, A1 h1 1, A2 h2 2, A3 h3 3, A4 h4 4, A5 h5 5, A6 h6 6, A7 h7 7);
impl_into_args_tuple!(A0 h0 0, A1 h1 1, A2 h2 2, A3 h3 3, A4 h4 4, A5 h5 5, A6 h6 6, A7 h7 7, A8 h8 8);
impl_into_args_tuple!(A0 h0 0, A1 h1 1, A2 h2 2, A3 h3 3, A4 h4 4, A5 h5 5, A6 h6 6, A7 h7 7, A8 h8 8, A9 h9 9);
impl_into_args_tuple!(A0 h0 0, A1 h1 1, A2 h2 2, A3 h3 3, A4 h4 4, A5 h5 5, A6 h6 6, A7 h7 7, A8 h8 8, A9 h9 9, A10 h10 10);
impl_into_args_tuple!(A0 h0 0, A1 h1 1, A2 h2 2, A3 h3 3, A4 h4 4, A5 h5 5, A6 h6 6, A7 h7 7, A8 h8 8, A9 h9 9, A10 h10 10, A11 h11 11);
