//! Generated code only uses absolute paths: it compiles without the prelude, next to user items
//! named like the macros' internal helpers.
#![no_implicit_prelude]

#[allow(non_upper_case_globals, dead_code)]
static __SLOT: u8 = 0;
#[allow(non_upper_case_globals, dead_code)]
static __FIELDS: u8 = 0;
#[allow(non_upper_case_globals, dead_code)]
static __TYPE: u8 = 0;
#[allow(non_upper_case_globals, dead_code)]
static __ENTRY: u8 = 0;
#[allow(dead_code)]
fn __make() {}
#[allow(dead_code)]
fn __metadata() {}
#[allow(dead_code)]
fn __signature() {}
#[allow(dead_code)]
fn __shallow_copy() {}
#[allow(dead_code)]
struct Option;
#[allow(dead_code)]
struct Result;
#[allow(dead_code)]
struct String;

/// A point.
#[derive(::tvm_ffi::Object, ::std::clone::Clone)]
#[ffi_type(key = "ui_pass.HygienePoint", structural = "tree")]
#[repr(C)]
pub struct HygienePoint {
    #[ffi(rw)]
    pub x: ::tvm_ffi::Rw<i64>,
    #[ffi(default = "label")]
    pub label: ::tvm_ffi::String,
    pub maybe: ::tvm_ffi::Optional<i64>,
}

#[::tvm_ffi::ffi_methods]
impl HygienePoint {
    pub fn get_x(&self) -> i64 {
        self.x.get()
    }
    #[ffi(init)]
    pub fn new(x: i64) -> ::tvm_ffi::Result<Self> {
        ::std::result::Result::Ok(HygienePoint {
            x: ::tvm_ffi::Rw::new(x),
            label: ::tvm_ffi::String::new("l"),
            maybe: ::tvm_ffi::Optional::none(),
        })
    }
}

/// A frozen value type whose hooks come from its traits.
#[derive(
    ::tvm_ffi::Object,
    ::std::clone::Clone,
    ::std::cmp::PartialEq,
    ::std::cmp::PartialOrd,
    ::std::hash::Hash,
)]
#[ffi_type(key = "ui_pass.HygieneValue", frozen, eq, hash, ord, str)]
#[repr(C)]
pub struct HygieneValue {
    pub v: i64,
}

impl ::std::fmt::Display for HygieneValue {
    fn fmt(&self, f: &mut ::std::fmt::Formatter<'_>) -> ::std::fmt::Result {
        ::std::write!(f, "value {}", self.v)
    }
}

fn main() {
    let value = ::tvm_ffi::ObjectRef::new(HygieneValue { v: 1 });
    ::std::assert_eq!(::std::format!("{value}"), "value 1");
    let p = ::tvm_ffi::ObjectRef::new(HygienePoint {
        x: ::tvm_ffi::Rw::new(3),
        label: ::tvm_ffi::String::new("p"),
        maybe: ::tvm_ffi::Optional::some(1),
    });
    ::std::assert_eq!(p.get_x(), 3);
    ::std::assert!(::tvm_ffi::registry::load_errors().is_empty());
}
