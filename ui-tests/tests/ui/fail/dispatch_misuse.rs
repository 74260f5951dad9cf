// `#[dispatch(..)]` misuse: an unknown kind, a handler without `&mut self`, a handler with no
// value argument or too many, and a block without handlers (each reported at the user's token).
use tvm_ffi::dispatch;
use tvm_ffi::structural::{DefRegionKind, WalkResult};

struct UnknownKind;

#[dispatch(walk)]
impl UnknownKind {
    fn visit_int(&mut self, _value: i64) -> WalkResult {
        WalkResult::Advance
    }
}

struct BadHandlers;

#[dispatch(visit)]
impl BadHandlers {
    fn visit_shared(&self, _value: i64) -> WalkResult {
        WalkResult::Advance
    }
    fn visit_nothing(&mut self) -> WalkResult {
        WalkResult::Advance
    }
    fn visit_three(&mut self, _value: i64, _kind: DefRegionKind, _extra: i64) -> WalkResult {
        WalkResult::Advance
    }
}

struct NoHandlers;

#[dispatch(map)]
impl NoHandlers {
    fn helper(&mut self) {}
}

struct WrongReturn;

#[dispatch(visit)]
impl WrongReturn {
    fn visit_int(&mut self, value: i64) -> i64 {
        value
    }
}

fn main() {}
