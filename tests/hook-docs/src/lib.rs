//! The types and hooks of `docs/hooks.md`, for `tests/python/test_hook_docs.py`: each example of
//! the page, verbatim, in a module of its own (see `build.rs`).
include!(concat!(env!("OUT_DIR"), "/hook_docs.rs"));
