use tvm_ffi::{Object, Rw};

// A misspelt option is one error, which names the option meant.
#[derive(Object)]
#[ffi_type(key = "my_ext.Node", finall)]
#[repr(C)]
pub struct Node {
    #[ffi(rww)]
    pub value: Rw<i64>,
}

// A missing `#[repr(C)]` is one error too.
#[derive(Object)]
#[ffi_type(key = "my_ext.Leaf")]
pub struct Leaf {
    pub value: i64,
}

fn use_them(node: tvm_ffi::ObjectRef<Node>, leaf: tvm_ffi::ObjectRef<Leaf>) -> i64 {
    node.value.get() + leaf.value
}

fn main() {
    let _ = use_them;
}
