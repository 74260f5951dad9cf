//! The CUDA implementation: the kernels of `kernels/rmsnorm.ptx` (one block per row), embedded
//! in the library and launched through `tvm-ffi-kernels` on the caller's stream.
use tvm_ffi::{DataType, Error, Result, TensorView};
use tvm_ffi_kernels::{embed_ptx, DevicePtr, Kernel, KernelModule, LaunchConfig};

use crate::layout::Rows;

static MODULE: KernelModule = embed_ptx!("rmsnorm", "../kernels/rmsnorm.ptx");
/// The same kernels, each waiting on the previous kernel first (sm_90+): launched with
/// programmatic dependent launch.
static MODULE_PDL: KernelModule = embed_ptx!("rmsnorm_pdl", "../kernels/rmsnorm_pdl.ptx");

/// `(out, x, weight, hidden, x_stride, out_stride, eps)`, or for the fused kernels
/// `(x, residual, weight, hidden, x_stride, residual_stride, eps)`.
type Args = (DevicePtr, DevicePtr, DevicePtr, u32, u32, u32, f32);

/// The kernels of one dtype: `(dtype, rmsnorm, fused_add_rmsnorm)`.
type DtypeKernels = (DataType, Kernel<Args>, Kernel<Args>);

/// `[plain, pdl]` kernels of each dtype.
static KERNELS: [[DtypeKernels; 3]; 2] = [
    [
        (
            DataType::FLOAT32,
            MODULE.kernel(c"rmsnorm_f32"),
            MODULE.kernel(c"fused_add_rmsnorm_f32"),
        ),
        (
            DataType::FLOAT16,
            MODULE.kernel(c"rmsnorm_f16"),
            MODULE.kernel(c"fused_add_rmsnorm_f16"),
        ),
        (
            DataType::BFLOAT16,
            MODULE.kernel(c"rmsnorm_bf16"),
            MODULE.kernel(c"fused_add_rmsnorm_bf16"),
        ),
    ],
    [
        (
            DataType::FLOAT32,
            MODULE_PDL.kernel(c"rmsnorm_f32"),
            MODULE_PDL.kernel(c"fused_add_rmsnorm_f32"),
        ),
        (
            DataType::FLOAT16,
            MODULE_PDL.kernel(c"rmsnorm_f16"),
            MODULE_PDL.kernel(c"fused_add_rmsnorm_f16"),
        ),
        (
            DataType::BFLOAT16,
            MODULE_PDL.kernel(c"rmsnorm_bf16"),
            MODULE_PDL.kernel(c"fused_add_rmsnorm_bf16"),
        ),
    ],
];

fn kernel(dtype: DataType, fused: bool, pdl: bool) -> Result<Kernel<Args>> {
    KERNELS[usize::from(pdl)]
        .iter()
        .find(|(d, _, _)| *d == dtype)
        .map(|&(_, plain, fused_kernel)| if fused { fused_kernel } else { plain })
        .ok_or_else(|| Error::type_error(format!("no kernel for {dtype}")))
}

fn u32_param(value: usize, what: &str) -> Result<u32> {
    u32::try_from(value).map_err(|_| {
        Error::value_error(format!("{what} {value} exceeds the kernel's 32-bit range"))
    })
}

/// Threads per block: a multiple of 32 covering the row, at most 1024.
pub fn block_size(hidden: usize) -> u32 {
    (hidden.div_ceil(32) * 32).clamp(32, 1024) as u32
}

/// How a launch is made beyond the kernel's own needs: what `enable_pdl` selects, and the
/// launch attributes `rmsnorm.rmsnorm_launch_options` exercises on a GPU.
#[derive(Clone, Copy, Debug, Default)]
pub struct Options {
    /// Programmatic dependent launch (the kernels of the sm_90 module, which wait first).
    pub pdl: bool,
    /// Blocks per thread-block cluster along x (0 or 1: no cluster).
    pub cluster: u32,
    /// Extra dynamic shared memory per block (the kernels do not use it).
    pub shared_memory: u32,
    /// Launch on the default stream whatever the environment's current stream is (refused in
    /// debug builds when they differ: the stream check's test).
    pub default_stream: bool,
}

/// Launches the plain or fused kernel over `rows` rows: `first`/`second` are `(out, x)` or
/// `(x, residual)`.
///
/// # Safety
/// The operands were checked by [`crate::layout`] (CUDA tensors of one device and dtype, the
/// written ones not overlapping anything else) and stay alive until the stream's work is done.
#[allow(clippy::too_many_arguments)]
pub unsafe fn launch(
    fused: bool,
    first: &TensorView<'_>,
    first_rows: &Rows,
    second: &TensorView<'_>,
    second_rows: &Rows,
    weight: &TensorView<'_>,
    eps: f32,
    options: Options,
) -> Result<()> {
    if first_rows.rows == 0 || first_rows.hidden == 0 {
        return Ok(());
    }
    let kernel = kernel(second.dtype(), fused, options.pdl)?;
    let rows = u32_param(first_rows.rows, "the row count")?;
    let mut config = LaunchConfig::new(second.device(), rows, block_size(first_rows.hidden))
        .programmatic_dependent_launch(options.pdl)
        .shared_memory(options.shared_memory);
    if options.cluster > 1 {
        config = config.cluster(options.cluster).non_portable_cluster_size(
            u64::from(options.cluster) > tvm_ffi_kernels::PORTABLE_CLUSTER_SIZE,
        );
    }
    if options.default_stream {
        config = config.stream(std::ptr::null_mut());
    }
    // The strides: of the input read first, then of the other operand.
    let (x_stride, other_stride) = if fused {
        (first_rows.row_stride, second_rows.row_stride)
    } else {
        (second_rows.row_stride, first_rows.row_stride)
    };
    let args = (
        DevicePtr::of(first)?,
        DevicePtr::of(second)?,
        DevicePtr::of(weight)?,
        u32_param(first_rows.hidden, "hidden size")?,
        u32_param(x_stride, "row stride")?,
        u32_param(other_stride, "row stride")?,
        eps,
    );
    // SAFETY: `Args` is the kernels' parameter list (kernels/generate_ptx.py); the pointers
    // address rows of `hidden` elements `stride` apart on the launch's device (the caller's
    // contract).
    unsafe { kernel.launch(&config, args) }
}
