//! The runtime version check: the bindings transcribe one header version; a runtime with another
//! major/minor version is rejected with a clear error before anything is registered.
use crate::abi::sys;
use crate::base::error::{Error, Result};

/// The version of the loaded libtvm_ffi.
pub fn runtime_version() -> sys::TVMFFIVersion {
    let mut v = sys::TVMFFIVersion::default();
    // SAFETY: valid output slot.
    unsafe { sys::TVMFFIGetVersion(&mut v) };
    v
}

/// The header version these bindings were written for.
pub const BINDINGS_VERSION: sys::TVMFFIVersion = sys::TVMFFIVersion {
    major: sys::TVM_FFI_VERSION_MAJOR,
    minor: sys::TVM_FFI_VERSION_MINOR,
    patch: sys::TVM_FFI_VERSION_PATCH,
};

/// Whether a runtime of version `found` can be used: same major and minor version (the ABI is
/// only guaranteed within a minor series before 1.0).
pub fn check_version(found: sys::TVMFFIVersion) -> Result<()> {
    let want = BINDINGS_VERSION;
    if found.major == want.major && found.minor == want.minor {
        Ok(())
    } else {
        Err(Error::runtime_error(format!(
            "incompatible libtvm_ffi: the tvm-ffi crate was written for ABI {}.{}.{} (apache-tvm-ffi \
             0.1.15.post2) but the loaded runtime reports {}.{}.{}; install the matching wheel \
             (`bash scripts/setup.sh`) or rebuild against the loaded one",
            want.major, want.minor, want.patch, found.major, found.minor, found.patch
        )))
    }
}

/// Checks the loaded runtime once; later calls return the cached verdict.
pub fn ensure_compatible() -> Result<()> {
    static VERDICT: std::sync::OnceLock<std::result::Result<(), String>> =
        std::sync::OnceLock::new();
    VERDICT
        .get_or_init(|| check_version(runtime_version()).map_err(|e| e.message().to_string()))
        .clone()
        .map_err(Error::runtime_error)
}
