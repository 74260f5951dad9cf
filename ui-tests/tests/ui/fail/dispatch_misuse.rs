// `#[dispatch(..)]` misuse: an unknown kind, a handler without `&mut self`, a handler with no
// value argument or too many, a block without handlers, and handlers returning what their kind
// does not take (each reported at the user's token).
use tvm_ffi::dispatch;
use tvm_ffi::structural::{DefRegionKind, WalkResult};

struct UnknownKind;

#[dispatch(fold)]
impl UnknownKind {
    fn fold_int(&mut self, _value: i64) -> WalkResult {
        WalkResult::Advance
    }
}

struct BadHandlers;

#[dispatch(walk)]
impl BadHandlers {
    fn walk_shared(&self, _value: i64) -> WalkResult {
        WalkResult::Advance
    }
    fn walk_nothing(&mut self) -> WalkResult {
        WalkResult::Advance
    }
    fn walk_three(&mut self, _value: i64, _kind: DefRegionKind, _extra: i64) -> WalkResult {
        WalkResult::Advance
    }
}

struct NoHandlers;

#[dispatch(map)]
impl NoHandlers {
    fn helper(&mut self) {}
}

struct WrongReturn;

#[dispatch(walk)]
impl WrongReturn {
    fn walk_int(&mut self, value: i64) -> i64 {
        value
    }
}

struct WrongVisitReturn;

// A visitor handler returns `()` or an `Option<VisitInterrupt>`, not a walk result.
#[dispatch(visit)]
impl WrongVisitReturn {
    fn visit_int(&mut self, _value: i64) -> WalkResult {
        WalkResult::Advance
    }
}

struct WrongMutateReturn;

// A mutator handler returns the replacement, not a walk result.
#[dispatch(mutate)]
impl WrongMutateReturn {
    fn mutate_int(&mut self, _value: i64) -> WalkResult {
        WalkResult::Advance
    }
}

fn main() {}
