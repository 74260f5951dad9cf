//! Checks of a `#[derive(Variant)]` enum: not generic.
use crate::ast::variant::VariantModel;
use crate::ctxt::Ctxt;

pub fn check(model: &VariantModel, cx: &Ctxt) {
    if !model.generics.params.is_empty() {
        cx.error(
            &model.generics,
            "a TVM-FFI variant cannot be generic: write one enum per set of alternatives",
        );
    }
}
