use std::rc::Rc;

fn main() {
    let counter = Rc::new(1_i64);
    let _f = tvm_ffi::Function::from_typed(move |x: i64| x + *counter);
}
