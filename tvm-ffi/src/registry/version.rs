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

/// The oldest runtime ABI these bindings work with: that of apache-tvm-ffi 0.1.14, the oldest
/// release `scripts/check-runtime-range.sh` tests (packages declare
/// `apache-tvm-ffi>=0.1.14,<0.2`). Older releases also lack C functions the bindings link
/// (`TVMFFIBigInt*`), which the dynamic loader reports first.
pub const OLDEST_RUNTIME_PATCH: u32 = 14;

/// Whether a runtime of version `found` can be used: the bindings' major and minor version (the
/// ABI is only guaranteed within a minor series before 1.0), and no older than ABI 0.1.14
/// (apache-tvm-ffi 0.1.14, the oldest release tested).
pub fn check_version(found: sys::TVMFFIVersion) -> Result<()> {
    let want = BINDINGS_VERSION;
    if found.major == want.major && found.minor == want.minor && found.patch >= OLDEST_RUNTIME_PATCH
    {
        Ok(())
    } else {
        let (major, minor, oldest) = (want.major, want.minor, OLDEST_RUNTIME_PATCH);
        Err(Error::runtime_error(format!(
            "incompatible libtvm_ffi: this library needs the runtime ABI \
             {major}.{minor}.{oldest} to {major}.{minor}.x (apache-tvm-ffi>=0.1.14,<0.2; built \
             against ABI {major}.{minor}.{}) but the loaded runtime reports {}.{}.{}; install a \
             release in that range (`pip install 'apache-tvm-ffi>=0.1.14,<0.2'`)",
            want.patch, found.major, found.minor, found.patch
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

/// The check is not reachable from outside the crate (the runtime the process loaded is the
/// only input it ever gets), so its refusals are tested here.
#[cfg(test)]
mod tests {
    #[test]
    fn version_check_rejects_a_mismatched_runtime() {
        use super::{check_version, ensure_compatible, runtime_version};
        use crate::abi::sys::TVMFFIVersion;
        assert!(ensure_compatible().is_ok());
        let v = runtime_version();
        assert_eq!((v.major, v.minor), (0, 1));
        let err = check_version(TVMFFIVersion {
            major: 0,
            minor: 2,
            patch: 0,
        })
        .unwrap_err();
        assert!(
            err.message().contains("incompatible libtvm_ffi"),
            "{}",
            err.message()
        );
        assert!(err.message().contains("0.2.0"), "{}", err.message());
        assert!(check_version(TVMFFIVersion {
            major: 1,
            minor: 1,
            patch: 16
        })
        .is_err());
        assert!(check_version(TVMFFIVersion {
            major: 0,
            minor: 1,
            patch: 99
        })
        .is_ok());
        // apache-tvm-ffi 0.1.14 (ABI 0.1.14) is the oldest supported runtime; 0.1.12 (ABI 0.1.12)
        // is refused, naming both ends of the range and the version found.
        assert!(check_version(TVMFFIVersion {
            major: 0,
            minor: 1,
            patch: 14
        })
        .is_ok());
        let old = check_version(TVMFFIVersion {
            major: 0,
            minor: 1,
            patch: 12,
        })
        .unwrap_err();
        for part in ["ABI 0.1.14 to 0.1.x", ">=0.1.14,<0.2", "reports 0.1.12"] {
            assert!(old.message().contains(part), "{}", old.message());
        }
    }
}
