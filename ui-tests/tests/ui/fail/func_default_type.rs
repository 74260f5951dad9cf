// A default must fit its parameter's type: each mismatch is reported at the default.
use tvm_ffi::ffi_func;

#[ffi_func(name = "my_ext.defaults")]
fn defaults(
    #[ffi(default = "one")] count: i64,
    #[ffi(default = None)] scale: f64,
    #[ffi(default = 1.5)] enabled: bool,
    #[ffi(default = true)] label: String,
) -> i64 {
    let _ = (scale, enabled, label);
    count
}

fn main() {}
