//! Layer 4, the structural traversal of value graphs in Rust: walk and visit (`visit`), map
//! and mutate with copy-on-write (`mutate`), the callback forms of visitors and mutators and
//! their context policies, the foreign `__s_visit__` hooks they call (`visit_hook`) and the
//! access paths of their errors (`error_context`). It reads values, containers and the type
//! registry's field tables only through the layers below; users reach it through
//! `tvm_ffi::structural`, which re-exports it.
pub(crate) mod error_context;
pub(crate) mod mutate;
pub(crate) mod mutate_callbacks;
pub(crate) mod mutate_policy;
pub(crate) mod visit;
pub(crate) mod visit_callbacks;
pub(crate) mod visit_hook;
pub(crate) mod visit_policy;
