//! Shared helpers of the cross-language test suite.
use std::ffi::CString;
use std::sync::Once;

extern "C" {
    fn dlopen(filename: *const std::ffi::c_char, flags: i32) -> *mut std::ffi::c_void;
    fn dlerror() -> *const std::ffi::c_char;
}

/// Loads the wheel's C++ test peer (`libtvm_ffi_testing.so`, which registers `testing.*`), as
/// `import tvm_ffi` does in Python.
pub fn load_cpp_testing_library() {
    static LOAD: Once = Once::new();
    LOAD.call_once(|| {
        let path = format!("{}/libtvm_ffi_testing.so", tvm_ffi::build_info::LIBDIR);
        let c = CString::new(path.clone()).unwrap();
        // SAFETY: dlopen with a valid path; RTLD_NOW | RTLD_GLOBAL.
        let handle = unsafe { dlopen(c.as_ptr(), 0x2 | 0x100) };
        if handle.is_null() {
            // SAFETY: dlerror returns a valid C string after a failure.
            let msg = unsafe { std::ffi::CStr::from_ptr(dlerror()) };
            panic!("cannot load {path}: {msg:?}");
        }
    });
}
