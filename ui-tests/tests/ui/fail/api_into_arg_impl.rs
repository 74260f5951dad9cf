// `IntoArg` is sealed: a view handed to foreign code cannot be forged by a user impl (pass the
// value as an `Any` instead).
use tvm_ffi::{AnyView, IntoArg};

struct Forged;

impl IntoArg for Forged {
    type Holder = ();
    fn into_holder(self) -> tvm_ffi::Result<()> {
        Ok(())
    }
    fn view(_: &()) -> AnyView<'_> {
        AnyView::none()
    }
}

fn main() {}
