//! The runtime crate renamed in Cargo.toml (`my_tvm = { package = "tvm-ffi-sdk", .. }`): every
//! macro takes `crate = "my_tvm"` (`match_any!` needs none).
use my_tvm::{ffi_methods, Object, ObjectRef, ObjectType};

#[derive(Object)]
#[ffi_type(key = "ui_pass.Renamed", crate = "my_tvm")]
#[repr(C)]
pub struct Renamed {
    pub value: i64,
}

#[ffi_methods(crate = "my_tvm")]
impl Renamed {
    pub fn get(&self) -> i64 {
        self.value
    }
}

#[test]
fn renamed_crate_works() {
    let r = ObjectRef::new(Renamed { value: 5 });
    assert_eq!(r.get(), 5);
    assert_eq!(Renamed::type_key(), "ui_pass.Renamed");
    assert!(my_tvm::registry::load_errors().is_empty());
}

#[test]
fn match_any_needs_no_crate_option() {
    let value = my_tvm::Any::new(ObjectRef::new(Renamed { value: 7 }));
    let got = my_tvm::match_any! { value {
        ObjectRef<Renamed>(r) => r.value,
        i64(n) => n,
        _ => 0,
    }};
    assert_eq!(got, 7);
}
