//! `my_package`: object types and functions written in Rust, used from Python through TVM-FFI.
//!
//! Everything registered here under `my_package.` becomes an attribute of the Python package:
//! `my_package.Counter`, `my_package.greet`.
use tvm_ffi::{ffi_func, ffi_methods, Object, ObjectRef, Rw};

/// A named counter.
#[derive(Object, Clone)]
#[ffi_type(key = "my_package.Counter", structural = "tree")]
#[repr(C)]
pub struct Counter {
    /// The name.
    pub name: tvm_ffi::String,
    /// The current count, writable from Python.
    #[ffi(rw, default = 0)]
    pub count: Rw<i64>,
}

#[ffi_methods]
impl Counter {
    /// Adds `n` and returns the new count.
    pub fn add(&self, n: i64) -> i64 {
        let count = self.count.get() + n;
        self.count.set(count);
        count
    }

    /// A counter named `name` starting at `start` (a static method).
    pub fn starting_at(name: &str, start: i64) -> ObjectRef<Counter> {
        ObjectRef::new(Counter {
            name: name.into(),
            count: start.into(),
        })
    }
}

/// Greets `name`.
#[ffi_func(name = "my_package.greet")]
pub fn greet(name: &str) -> String {
    format!("hello, {name}")
}

#[cfg(test)]
mod tests {
    use tvm_ffi::Function;

    // `cargo test` runs against the real libtvm_ffi: the library registered its functions when
    // the test binary loaded.
    #[test]
    fn greet_is_callable_through_the_runtime() {
        let greeting = Function::get_global_required("my_package.greet")
            .unwrap()
            .call(("rust",))
            .unwrap()
            .cast::<String>()
            .unwrap();
        assert_eq!(greeting, "hello, rust");
    }
}
