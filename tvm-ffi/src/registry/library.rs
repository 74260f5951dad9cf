//! The library this crate is linked into, pinned in memory (the runtime keeps pointers into
//! it; the load-time constructor that registers it is in the registry's `mod.rs`).
/// Marks the artifact containing this code as never-unloadable (`RTLD_NODELETE`): the runtime
/// keeps pointers to its functions forever.
pub(super) fn pin_library() {
    #[repr(C)]
    struct DlInfo {
        fname: *const std::ffi::c_char,
        fbase: *mut std::ffi::c_void,
        sname: *const std::ffi::c_char,
        saddr: *mut std::ffi::c_void,
    }
    extern "C" {
        fn dladdr(addr: *const std::ffi::c_void, info: *mut DlInfo) -> i32;
        fn dlopen(filename: *const std::ffi::c_char, flags: i32) -> *mut std::ffi::c_void;
    }
    const RTLD_LAZY: i32 = 0x1;
    const RTLD_NOLOAD: i32 = 0x4;
    const RTLD_NODELETE: i32 = 0x1000;
    let mut info = DlInfo {
        fname: std::ptr::null(),
        fbase: std::ptr::null_mut(),
        sname: std::ptr::null(),
        saddr: std::ptr::null_mut(),
    };
    // SAFETY: dladdr only reads the address and fills `info`; dlopen with RTLD_NOLOAD only
    // bumps flags on an already-loaded object (the one containing this function).
    unsafe {
        if dladdr(pin_library as *const std::ffi::c_void, &mut info) != 0 && !info.fname.is_null() {
            let _ = dlopen(info.fname, RTLD_LAZY | RTLD_NOLOAD | RTLD_NODELETE);
        }
    }
}
