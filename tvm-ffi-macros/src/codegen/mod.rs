//! The code generation stage: code per item kind from its checked model, never from unparsed
//! tokens, and the helpers the kinds share (`shared`). Generated code names the runtime only
//! through `::tvm_ffi::__private` and the public value types.
pub mod enums;
pub mod func;
pub mod methods;
pub mod object;
pub mod shared;
pub mod variant;
