//! Checks of a `#[derive(Enum)]` enum: unique indices.
use crate::ast::enums::EnumModel;
use crate::ctxt::Ctxt;

/// Integer and string indices are unique (the runtime looks entries up by both). Integer
/// indices the compiler computes (Rust discriminants) are checked by the generated code.
pub fn check(model: &EnumModel, cx: &Ctxt) {
    let mut ints = std::collections::HashSet::new();
    let mut strs = std::collections::HashSet::new();
    for v in &model.variants {
        if v.int_index.is_some_and(|index| !ints.insert(index)) {
            cx.push(syn::Error::new(
                v.span,
                format!(
                    "duplicate enum value {}: each variant needs its own",
                    v.int_index.unwrap_or_default()
                ),
            ));
        }
        if !strs.insert(v.str_index.clone()) {
            cx.push(syn::Error::new(
                v.span,
                format!(
                    "duplicate enum name `{}`: each variant needs its own",
                    v.str_index
                ),
            ));
        }
    }
}
