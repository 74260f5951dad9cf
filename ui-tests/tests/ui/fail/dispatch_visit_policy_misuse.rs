// `#[dispatch(.., policy = ..)]` misuse: a policy on a kind that takes none (`walk`), a policy given
// twice, and a policy that is no `ContextPolicy` over the visitor (the trait's note).
use tvm_ffi::dispatch;
use tvm_ffi::structural::WalkResult;

struct WalkWithPolicy;

#[dispatch(walk, policy = tvm_ffi::structural::DefaultContextPolicy)]
impl WalkWithPolicy {
    fn walk_int(&mut self, _value: i64) -> WalkResult {
        WalkResult::Advance
    }
}

struct TwoPolicies;

#[dispatch(visit, policy = NotAPolicy, policy = NotAPolicy)]
impl TwoPolicies {
    fn visit_int(&mut self, _value: i64) {}
}

struct NotAPolicy;

struct WrongPolicy;

#[dispatch(visit, policy = NotAPolicy)]
impl WrongPolicy {
    fn visit_int(&mut self, _value: i64) {}
}

fn main() {}
