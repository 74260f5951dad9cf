use tvm_ffi::Rw;

// `Rw<T>` copies its value under a lock, so it holds only what a reflected field holds (a copy
// that runs no user code); a Rust type of one's own has a `Clone` that could run anything.
#[derive(Clone, Default)]
pub struct Mine(Vec<u8>);

fn main() {
    let cell = Rw::new(Mine::default());
    let _ = cell.get();
}
