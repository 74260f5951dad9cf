// An opaque pointer value is made only through `unsafe fn Any::from_opaque_ptr`: the runtime
// and foreign callees trust such pointers (`ffi.FunctionFromExternC` calls them).
use std::ffi::c_void;

fn main() {
    let bogus = 0x4141_4141usize as *mut c_void;
    let _ = tvm_ffi::Any::new(bogus);
    let _ = tvm_ffi::Function::from_typed(move || bogus);
}
