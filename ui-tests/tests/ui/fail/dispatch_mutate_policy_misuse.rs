use tvm_ffi::dispatch;

struct NotAPolicy;

struct WrongPolicy;

// The policy must implement `MutContextPolicy` over the mutator's state.
#[dispatch(mutate, policy = NotAPolicy)]
impl WrongPolicy {
    fn mutate_int(&mut self, value: i64) -> i64 {
        value
    }
}

struct MapPolicy;

// Only a mutator takes a `MutContextPolicy` (a mapper takes one through `MapWithContextPolicy`).
#[dispatch(map, policy = NotAPolicy)]
impl MapPolicy {
    fn map_int(&mut self, value: i64) -> i64 {
        value
    }
}

fn main() {}
