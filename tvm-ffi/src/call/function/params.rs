//! Parameter names and defaults of typed functions (`#[ffi_func]`, `#[ffi_methods]`), and the
//! compile-time checks of the defaults (binding a call to them: `binding.rs`).
use crate::base::value::Any;
use crate::call::function::metadata::json_string;

/// A parameter's name and default, as `#[ffi_func]` and `#[ffi_methods]` register them.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Param {
    /// The name, as written in Rust (`self` for a method's receiver).
    pub name: &'static str,
    /// The default (`#[ffi(default = ..)]`), if any.
    pub default: Option<DefaultValue>,
}

impl Param {
    /// A parameter without default.
    pub const fn new(name: &'static str) -> Param {
        Param {
            name,
            default: None,
        }
    }

    /// A parameter with default `value`.
    pub const fn with_default(name: &'static str, value: DefaultValue) -> Param {
        Param {
            name,
            default: Some(value),
        }
    }
}

/// A parameter's default value: a literal (`#[ffi(default = 1)]`, `= "x"`, `= None`, ...).
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum DefaultValue {
    /// `None`.
    None,
    /// `true` / `false`.
    Bool(bool),
    /// An integer.
    Int(i64),
    /// A float.
    Float(f64),
    /// A string.
    Str(&'static str),
}

impl DefaultValue {
    /// The value passed for an omitted argument.
    pub fn to_any(self) -> Any {
        match self {
            DefaultValue::None => Any::new(()),
            DefaultValue::Bool(v) => Any::new(v),
            DefaultValue::Int(v) => Any::new(v),
            DefaultValue::Float(v) => Any::new(v),
            DefaultValue::Str(v) => Any::new(v),
        }
    }

    /// As JSON (the metadata's `arg_defaults`).
    pub fn json(self) -> String {
        match self {
            DefaultValue::None => "null".into(),
            DefaultValue::Bool(v) => v.to_string(),
            DefaultValue::Int(v) => v.to_string(),
            DefaultValue::Float(v) => format!("{v:?}"),
            DefaultValue::Str(v) => json_string(v),
        }
    }

    /// As Python writes it (in signatures shown in messages).
    pub fn python(self) -> String {
        match self {
            DefaultValue::None => "None".into(),
            DefaultValue::Bool(true) => "True".into(),
            DefaultValue::Bool(false) => "False".into(),
            DefaultValue::Int(v) => v.to_string(),
            DefaultValue::Float(v) => format!("{v:?}"),
            DefaultValue::Str(v) => format!("{v:?}"),
        }
    }
}

/// Which defaults (`#[ffi(default = ..)]`) a parameter type accepts, checked when the crate
/// compiles (generated code calls these, spanned at the default). A type of your own that
/// converts from an integer, a float, a `bool` or a string implements the trait, and then takes
/// such a default; `#[derive(Enum)]` implements them for `int` and `str` enums.
pub mod check {
    use crate::base::value::{Any, AnyView};

    /// A type an integer default converts to, with the range it accepts.
    /// ```
    /// use tvm_ffi::function::defaults::IntDefault;
    /// assert_eq!((<u8 as IntDefault>::MIN, <u8 as IntDefault>::MAX), (0, 255));
    /// ```
    #[diagnostic::on_unimplemented(
        message = "an integer default does not fit a parameter of type `{Self}`",
        label = "not a `{Self}`",
        note = "give a default of the parameter's type: a float for floats, `true`/`false` for `bool`, a string for strings, `None` for `Option<T>`"
    )]
    pub trait IntDefault {
        /// The smallest value accepted.
        const MIN: i128;
        /// The largest value accepted.
        const MAX: i128;
        /// The integers the type accepts (an `int` enum's values), or `None` for the range.
        const VALUES: Option<&'static [i64]> = None;
    }
    /// An enum a variant default (`#[ffi(default = Shade::Dark)]`) converts to.
    /// ```
    /// use tvm_ffi::function::defaults::VariantDefault;
    /// #[derive(tvm_ffi::Enum, Clone, Copy)]
    /// #[ffi_type(key = "doc_examples.DefaultShade", str)]
    /// pub enum Shade { #[ffi(value = "dark")] Dark }
    /// fn of<T: VariantDefault<Enum = Shade>>() {}
    /// of::<Option<Shade>>();
    /// ```
    #[diagnostic::on_unimplemented(
        message = "a variant default does not fit a parameter of type `{Self}`",
        label = "not an enum of `#[derive(tvm_ffi::Enum)]`",
        note = "a path default names a variant of the parameter's `#[derive(Enum)]` type"
    )]
    pub trait VariantDefault {
        /// The enum whose variants fit.
        type Enum;
    }
    /// A type a float default converts to.
    /// ```
    /// fn takes<T: tvm_ffi::function::defaults::FloatDefault>() {}
    /// takes::<f32>();
    /// ```
    #[diagnostic::on_unimplemented(
        message = "a float default does not fit a parameter of type `{Self}`",
        label = "not a `{Self}`",
        note = "give a default of the parameter's type"
    )]
    pub trait FloatDefault {}
    /// A type a `true`/`false` default converts to.
    /// ```
    /// fn takes<T: tvm_ffi::function::defaults::BoolDefault>() {}
    /// takes::<Option<bool>>();
    /// ```
    #[diagnostic::on_unimplemented(
        message = "a `bool` default does not fit a parameter of type `{Self}`",
        label = "not a `{Self}`",
        note = "give a default of the parameter's type"
    )]
    pub trait BoolDefault {}
    /// A type a string default converts to.
    /// ```
    /// use tvm_ffi::function::defaults::StrDefault;
    /// assert!(<tvm_ffi::String as StrDefault>::VALUES.is_none()); // any string
    /// ```
    #[diagnostic::on_unimplemented(
        message = "a string default does not fit a parameter of type `{Self}`",
        label = "not a `{Self}`",
        note = "give a default of the parameter's type"
    )]
    pub trait StrDefault {
        /// The strings the type accepts (a `str` enum's values), or `None` for any.
        const VALUES: Option<&'static [&'static str]> = None;
    }
    /// A type `None` converts to.
    /// ```
    /// fn takes<T: tvm_ffi::function::defaults::NoneDefault>() {}
    /// takes::<Option<i64>>();
    /// ```
    #[diagnostic::on_unimplemented(
        message = "`None` does not fit a parameter of type `{Self}`",
        label = "not an `Option`",
        note = "`None` is the default of an `Option<T>` parameter (or `Any`); make the parameter `Option<{Self}>` or give a value of its type"
    )]
    pub trait NoneDefault {}

    macro_rules! ints {
        ($($t:ty),*) => {$(
            impl IntDefault for $t {
                const MIN: i128 = <$t>::MIN as i128;
                // An integer travels as an i64.
                const MAX: i128 = if (<$t>::MAX as i128) < i64::MAX as i128 {
                    <$t>::MAX as i128
                } else {
                    i64::MAX as i128
                };
            }
        )*};
    }
    ints!(i8, i16, i32, i64, isize, u8, u16, u32, u64, usize);
    impl IntDefault for Any {
        const MIN: i128 = i64::MIN as i128;
        const MAX: i128 = i64::MAX as i128;
    }
    impl IntDefault for AnyView<'_> {
        const MIN: i128 = i64::MIN as i128;
        const MAX: i128 = i64::MAX as i128;
    }
    impl FloatDefault for Any {}
    impl FloatDefault for AnyView<'_> {}
    impl BoolDefault for Any {}
    impl BoolDefault for AnyView<'_> {}
    impl StrDefault for Any {}
    impl StrDefault for AnyView<'_> {}
    impl NoneDefault for Any {}
    impl NoneDefault for AnyView<'_> {}
    impl IntDefault for f32 {
        const MIN: i128 = i64::MIN as i128;
        const MAX: i128 = i64::MAX as i128;
    }
    impl IntDefault for f64 {
        const MIN: i128 = i64::MIN as i128;
        const MAX: i128 = i64::MAX as i128;
    }
    impl FloatDefault for f32 {}
    impl FloatDefault for f64 {}
    impl BoolDefault for bool {}
    impl StrDefault for &str {}
    impl StrDefault for std::string::String {}
    impl StrDefault for crate::base::value::String {}
    impl<T: IntDefault> IntDefault for Option<T> {
        const MIN: i128 = T::MIN;
        const MAX: i128 = T::MAX;
        const VALUES: Option<&'static [i64]> = T::VALUES;
    }
    impl<T: FloatDefault> FloatDefault for Option<T> {}
    impl<T: BoolDefault> BoolDefault for Option<T> {}
    impl<T: StrDefault> StrDefault for Option<T> {
        const VALUES: Option<&'static [&'static str]> = T::VALUES;
    }
    impl<T: VariantDefault> VariantDefault for Option<T> {
        type Enum = T::Enum;
    }

    impl<T> NoneDefault for Option<T> {}

    /// Whether integer `value` fits `T` (fails to compile unless an integer fits `T` at all).
    pub const fn int<T: IntDefault>(value: i128) -> bool {
        if value < T::MIN || value > T::MAX {
            return false;
        }
        let Some(values) = T::VALUES else {
            return true;
        };
        let mut i = 0;
        while i < values.len() {
            if values[i] as i128 == value {
                return true;
            }
            i += 1;
        }
        false
    }
    /// Fails to compile unless a float default fits `T`.
    pub const fn float<T: FloatDefault>() {}
    /// Fails to compile unless a `bool` default fits `T`.
    pub const fn bool<T: BoolDefault>() {}
    /// Whether string `value` fits `T` (fails to compile unless a string fits `T` at all).
    pub const fn str<T: StrDefault>(value: &str) -> bool {
        let Some(values) = T::VALUES else {
            return true;
        };
        let mut i = 0;
        while i < values.len() {
            if const_str_eq(values[i], value) {
                return true;
            }
            i += 1;
        }
        false
    }
    const fn const_str_eq(a: &str, b: &str) -> bool {
        let (a, b) = (a.as_bytes(), b.as_bytes());
        if a.len() != b.len() {
            return false;
        }
        let mut i = 0;
        while i < a.len() {
            if a[i] != b[i] {
                return false;
            }
            i += 1;
        }
        true
    }
    /// Fails to compile unless `None` fits `T`.
    pub const fn none<T: NoneDefault>() {}
}
