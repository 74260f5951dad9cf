//! Signatures of typed functions (shared by typed closures, `#[ffi_func]` and `#[ffi_methods]`):
//! the C++-style error messages for arity and argument mismatches and the `type_schema`
//! metadata, and what a Rust function may return.
use std::borrow::Cow;

use crate::base::error::{Error, Result};
use crate::base::value::{Any, AnyView, FromAny, TryIntoAny, TypeSchema};
use crate::call::function::metadata::json_string;
use crate::call::function::metadata::MetadataValue;
use crate::call::function::params::Param;

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
    /// The type key of a method's type (`"my_ext.Point"`), empty for a function.
    pub owner: &'static str,
    /// Registered name (`"my_ext.add"`, a method's `"scale"`, or empty for anonymous).
    pub name: Cow<'static, str>,
    /// Parameter types, in order (including `self` for methods).
    pub params: Cow<'static, [TypeDesc]>,
    /// Return type.
    pub ret: TypeDesc,
    /// Parameter names and defaults, in order (`self` first for a method); empty when the
    /// function has none (a closure), which then takes positional arguments only and is
    /// shown with numbered parameters, as C++ shows its functions.
    pub names: &'static [Param],
}

impl FnSignature {
    /// The name messages show: `owner.name` for a method (as C++ names methods), else `name`.
    pub fn full_name(&self) -> Cow<'static, str> {
        if self.owner.is_empty() {
            self.name.clone()
        } else {
            Cow::Owned(format!("{}.{}", self.owner, self.name))
        }
    }

    /// `name(0: int, 1: str) -> int`, as C++ prints it (`void` for no result); with names,
    /// `name(a: int, b: str = "x") -> int`.
    pub fn text(&self) -> std::string::String {
        let params: Vec<_> = self
            .params
            .iter()
            .enumerate()
            .map(|(i, p)| match self.names.get(i) {
                Some(Param {
                    name,
                    default: Some(value),
                }) => format!("{name}: {} = {}", (p.type_str)(), value.python()),
                Some(Param { name, .. }) => format!("{name}: {}", (p.type_str)()),
                None => format!("{i}: {}", (p.type_str)()),
            })
            .collect();
        let ret = (self.ret.type_str)();
        let ret = if ret == "None" {
            "void".to_string()
        } else {
            ret
        };
        format!("{}({}) -> {}", self.full_name(), params.join(", "), ret)
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
    /// `__tvm_ffi__metadata_<name>` symbol): `{"type_schema":"..."}`, as C++ writes it, then
    /// the parameters' `"arg_names"` and `"arg_defaults"` when the function has names.
    pub fn metadata(&self) -> std::string::String {
        self.metadata_with(&[])
    }

    /// [`metadata`](Self::metadata) followed by the user's keys (`metadata(..)` options).
    pub fn metadata_with(&self, extra: &[(&str, MetadataValue)]) -> std::string::String {
        crate::call::function::metadata::metadata_json_with(
            &self.type_schema(),
            &self.names_json(),
            extra,
        )
    }

    /// The metadata keys of the parameters' names and defaults, after `type_schema`:
    /// `"arg_names":["a","b"]` and, when some parameter has one, `"arg_defaults":{"b":1}`.
    pub(crate) fn names_json(&self) -> String {
        if self.names.len() != self.params.len() {
            return String::new();
        }
        let names: Vec<_> = self.names.iter().map(|p| json_string(p.name)).collect();
        let mut out = format!(",\"arg_names\":[{}]", names.join(","));
        let defaults: Vec<_> = self
            .names
            .iter()
            .filter_map(|p| Some(format!("{}:{}", json_string(p.name), p.default?.json())))
            .collect();
        if !defaults.is_empty() {
            out.push_str(&format!(",\"arg_defaults\":{{{}}}", defaults.join(",")));
        }
        out
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
    pub(crate) fn arity_error(&self, got: usize) -> Error {
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
        match T::from_any(view) {
            Some(v) => Ok(v),
            None => Err(self.arg_error::<T>(view, index)),
        }
    }

    #[cold]
    fn arg_error<'a, T: FromAny<'a>>(&self, view: &AnyView<'_>, index: usize) -> Error {
        // An object of the right type that is not usable yet (still under construction): its
        // own error (which field is unset), as when the object is dereferenced.
        if let Some(err) = T::unusable(view) {
            return Error::new(
                err.kind(),
                format!("{} (when calling `{}`)", err.message(), self.full_name()),
            );
        }
        let name = match self.names.get(index) {
            Some(param) => format!(" (`{}`)", param.name),
            None => std::string::String::new(),
        };
        Error::type_error(format!(
            "Mismatched type on argument #{index}{name} when calling: `{}`. Expected `{}` but got {}",
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
pub fn packed_metadata(extra: &[(&str, MetadataValue)]) -> std::string::String {
    crate::call::function::metadata::metadata_json(PACKED_TYPE_SCHEMA, extra)
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

/// A Rust closure with typed arguments that can become a [`Function`](super::Function).
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
    // The arguments in order, then the same arguments last first: they are converted last
    // first, as the C++ runtime (built with GCC, which evaluates call arguments right to left)
    // converts them, so that with several wrong arguments the error names the one C++ names.
    ([$($arg:ident $var:ident $idx:tt),*] [$($rarg:ident $rvar:ident $ridx:tt),*]) => {
        impl<Func, Ret, $($arg),*> TypedClosure<($($arg,)*)> for Func
        where
            Func: Fn($($arg),*) -> Ret + Send + Sync + 'static,
            Ret: FfiReturn,
            $($arg: for<'a> FromAny<'a>,)*
        {
            fn signature(name: &'static str) -> FnSignature {
                FnSignature {
                    owner: "",
                    name: Cow::Borrowed(name),
                    params: Cow::Owned(vec![$(TypeDesc::of::<$arg>()),*]),
                    ret: Ret::DESC,
                    names: &[],
                }
            }
            #[allow(unused_variables)]
            #[inline]
            fn invoke(&self, signature: &FnSignature, args: &[AnyView<'_>]) -> Result<Any> {
                signature.check_arity(args)?;
                $(let $rvar = signature.arg::<$rarg>(args, $ridx)?;)*
                (self)($($var),*).into_ffi_result()
            }
        }
    };
}
impl_typed_closure!([] []);
impl_typed_closure!([A0 a0 0] [A0 a0 0]);
impl_typed_closure!([A0 a0 0, A1 a1 1] [A1 a1 1, A0 a0 0]);
impl_typed_closure!([A0 a0 0, A1 a1 1, A2 a2 2] [A2 a2 2, A1 a1 1, A0 a0 0]);
impl_typed_closure!([A0 a0 0, A1 a1 1, A2 a2 2, A3 a3 3] [A3 a3 3, A2 a2 2, A1 a1 1, A0 a0 0]);
impl_typed_closure!([A0 a0 0, A1 a1 1, A2 a2 2, A3 a3 3, A4 a4 4] [A4 a4 4, A3 a3 3, A2 a2 2, A1 a1 1, A0 a0 0]);
impl_typed_closure!([A0 a0 0, A1 a1 1, A2 a2 2, A3 a3 3, A4 a4 4, A5 a5 5] [A5 a5 5, A4 a4 4, A3 a3 3, A2 a2 2, A1 a1 1, A0 a0 0]);
impl_typed_closure!([A0 a0 0, A1 a1 1, A2 a2 2, A3 a3 3, A4 a4 4, A5 a5 5, A6 a6 6] [A6 a6 6, A5 a5 5, A4 a4 4, A3 a3 3, A2 a2 2, A1 a1 1, A0 a0 0]);
impl_typed_closure!([A0 a0 0, A1 a1 1, A2 a2 2, A3 a3 3, A4 a4 4, A5 a5 5, A6 a6 6, A7 a7 7] [A7 a7 7, A6 a6 6, A5 a5 5, A4 a4 4, A3 a3 3, A2 a2 2, A1 a1 1, A0 a0 0]);
impl_typed_closure!([A0 a0 0, A1 a1 1, A2 a2 2, A3 a3 3, A4 a4 4, A5 a5 5, A6 a6 6, A7 a7 7, A8 a8 8] [A8 a8 8, A7 a7 7, A6 a6 6, A5 a5 5, A4 a4 4, A3 a3 3, A2 a2 2, A1 a1 1, A0 a0 0]);
impl_typed_closure!([A0 a0 0, A1 a1 1, A2 a2 2, A3 a3 3, A4 a4 4, A5 a5 5, A6 a6 6, A7 a7 7, A8 a8 8, A9 a9 9] [A9 a9 9, A8 a8 8, A7 a7 7, A6 a6 6, A5 a5 5, A4 a4 4, A3 a3 3, A2 a2 2, A1 a1 1, A0 a0 0]);
impl_typed_closure!([A0 a0 0, A1 a1 1, A2 a2 2, A3 a3 3, A4 a4 4, A5 a5 5, A6 a6 6, A7 a7 7, A8 a8 8, A9 a9 9, A10 a10 10] [A10 a10 10, A9 a9 9, A8 a8 8, A7 a7 7, A6 a6 6, A5 a5 5, A4 a4 4, A3 a3 3, A2 a2 2, A1 a1 1, A0 a0 0]);
impl_typed_closure!([A0 a0 0, A1 a1 1, A2 a2 2, A3 a3 3, A4 a4 4, A5 a5 5, A6 a6 6, A7 a7 7, A8 a8 8, A9 a9 9, A10 a10 10, A11 a11 11] [A11 a11 11, A10 a10 10, A9 a9 9, A8 a8 8, A7 a7 7, A6 a6 6, A5 a5 5, A4 a4 4, A3 a3 3, A2 a2 2, A1 a1 1, A0 a0 0]);
