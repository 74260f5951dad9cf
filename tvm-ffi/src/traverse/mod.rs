//! Layer 4, the structural traversal of value graphs in Rust: walk and visit (`visit`), map
//! and mutate with copy-on-write (`mutate`) and the values a mutation hands out and takes back
//! (`mutate_value`), the callback forms of visitors and mutators (`*_callbacks`) and their
//! context policies (`*_policy`), how callbacks and tuples of them become handlers (`link`,
//! shared by every traversal), what `#[dispatch(..)]` expands to (`dispatch`), the foreign
//! `__s_visit__` hooks a walk or visit calls (`visit_hook`), the foreign `__s_mutate__` and
//! `__s_maybe_inplace_mutate__` hooks a map or mutate calls (`mutate_hook`), with what both share
//! (`hook_abi`), and the access paths of its errors
//! (`error_context`). It reads values, containers and the type registry's field tables only
//! through the layers below; users reach it through `tvm_ffi::structural`, which re-exports it.
pub(crate) mod dispatch;
pub(crate) mod error_context;
pub(crate) mod hook_abi;
pub(crate) mod link;
pub(crate) mod mutate;
pub(crate) mod mutate_callbacks;
pub(crate) mod mutate_hook;
pub(crate) mod mutate_policy;
pub(crate) mod mutate_value;
pub(crate) mod visit;
pub(crate) mod visit_callbacks;
pub(crate) mod visit_hook;
pub(crate) mod visit_policy;
