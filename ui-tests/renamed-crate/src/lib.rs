//! Check-pass case (see `ui-tests/README.md`): the runtime crate renamed to `my_tvm` in
//! `Cargo.toml`; the macros take `crate = "my_tvm"`. The case itself is `tests/renamed_crate.rs`.
