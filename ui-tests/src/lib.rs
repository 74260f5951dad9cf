//! Compile-fail tests of the tvm-ffi macros (see tests/ui.rs).
