//! The current device of the calling thread: [`DeviceGuard`] sets it for a scope, as C++
//! kernels do with `CUDADeviceGuard` / `cudaSetDevice`.
use std::marker::PhantomData;

use tvm_ffi::{sys, Device, Error, Result};

use crate::abi::Handle;
use crate::driver::Driver;

/// Makes a CUDA device current on this thread until dropped, then restores the previous one.
///
/// The CUDA runtime (and so PyTorch) keeps "the current device" as the current driver context,
/// the device's primary context: the guard makes that context current (`cuCtxSetCurrent`) and
/// puts the caller's back on drop, so runtime-API code called meanwhile (cuBLAS, a C++ kernel)
/// runs on `device`. Not `Send`: the current context is per thread.
///
/// ```
/// use tvm_ffi::Device;
/// use tvm_ffi_kernels::DeviceGuard;
/// let err = DeviceGuard::new(Device::cpu()).err().unwrap();
/// assert_eq!(err.message(), "DeviceGuard: cpu:0 is not a CUDA device");
/// ```
#[must_use = "the previous device is restored as soon as the guard is dropped"]
pub struct DeviceGuard {
    driver: &'static Driver,
    device: Device,
    previous: Handle,
    _per_thread: PhantomData<*mut ()>,
}

impl DeviceGuard {
    /// Makes `device` (a CUDA device) current on this thread. Fails with a `ValueError` for
    /// another kind of device and a `RuntimeError` without a usable driver or device.
    pub fn new(device: Device) -> Result<DeviceGuard> {
        if device.device_type() != sys::kDLCUDA {
            return Err(Error::value_error(format!(
                "DeviceGuard: {device} is not a CUDA device"
            )));
        }
        let driver = Driver::get()?;
        let context = driver.primary_context(device.device_id())?;
        let mut previous: Handle = std::ptr::null_mut();
        // SAFETY: a valid output slot, then a retained primary context of this driver.
        unsafe {
            driver.check(
                "cuCtxGetCurrent",
                (driver.api.cu_ctx_get_current)(&mut previous),
            )?;
            driver.check("cuCtxSetCurrent", (driver.api.cu_ctx_set_current)(context))?;
        }
        Ok(DeviceGuard {
            driver,
            device,
            previous,
            _per_thread: PhantomData,
        })
    }

    /// The device this guard made current.
    pub fn device(&self) -> Device {
        self.device
    }
}

impl Drop for DeviceGuard {
    fn drop(&mut self) {
        // SAFETY: the context that was current when the guard was made (null: none), on the
        // thread that made it (the guard is not `Send`). A failure leaves the guard's device
        // current, which nothing here can repair.
        let _ = unsafe { (self.driver.api.cu_ctx_set_current)(self.previous) };
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn current_context(driver: &Driver) -> Handle {
        let mut current: Handle = std::ptr::null_mut();
        // SAFETY: a valid output slot.
        let rc = unsafe { (driver.api.cu_ctx_get_current)(&mut current) };
        driver.check("cuCtxGetCurrent", rc).unwrap();
        current
    }

    /// With a driver (the GPU machine): the guard makes the device's primary context current
    /// and puts the previous one (here none) back on drop; an absent ordinal is an error.
    /// Without one (CI): the error says the driver is missing.
    #[test]
    fn the_guard_sets_and_restores_the_current_context() {
        let Ok(driver) = Driver::get() else {
            let err = DeviceGuard::new(Device::cuda(0)).err().expect("no driver");
            assert_eq!(err.kind(), "RuntimeError");
            assert!(
                err.message().starts_with("cannot load the CUDA driver"),
                "{}",
                err.message()
            );
            return;
        };
        let before = current_context(driver);
        {
            let guard = DeviceGuard::new(Device::cuda(0)).expect("cuda:0");
            assert_eq!(guard.device(), Device::cuda(0));
            let primary = driver.primary_context(0).unwrap();
            assert!(!primary.is_null());
            assert_eq!(current_context(driver), primary);
        }
        assert_eq!(current_context(driver), before);
        let err = DeviceGuard::new(Device::cuda(4096))
            .err()
            .expect("no such device");
        assert_eq!(err.kind(), "RuntimeError");
        assert!(err.message().contains("cuDeviceGet"), "{}", err.message());
        assert_eq!(current_context(driver), before);
    }
}
