//! The runtime crate renamed in Cargo.toml (`my_tvm = { package = "tvm-ffi-sdk", .. }`): every
//! macro takes `crate = "my_tvm"`.
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
