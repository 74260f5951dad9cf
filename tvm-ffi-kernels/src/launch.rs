//! How a kernel is launched: [`LaunchConfig`] (grid, block, dynamic shared memory, stream and
//! the `cuLaunchKernelEx` attributes), checked before anything reaches the driver.
use std::fmt;

use tvm_ffi::env::StreamHandle;
use tvm_ffi::{sys, Device, Error, Result};

use crate::abi::CuLaunchAttribute;

/// Grid, block or cluster dimensions (`dim3`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Dim3 {
    /// Extent along x.
    pub x: u32,
    /// Extent along y.
    pub y: u32,
    /// Extent along z.
    pub z: u32,
}

impl Dim3 {
    /// `(x, y, z)`.
    pub const fn new(x: u32, y: u32, z: u32) -> Dim3 {
        Dim3 { x, y, z }
    }

    /// The product of the three extents (as u64: it cannot overflow).
    pub const fn count(self) -> u64 {
        self.x as u64 * self.y as u64 * self.z as u64
    }
}

impl From<u32> for Dim3 {
    fn from(x: u32) -> Dim3 {
        Dim3::new(x, 1, 1)
    }
}

impl From<(u32, u32)> for Dim3 {
    fn from((x, y): (u32, u32)) -> Dim3 {
        Dim3::new(x, y, 1)
    }
}

impl From<(u32, u32, u32)> for Dim3 {
    fn from((x, y, z): (u32, u32, u32)) -> Dim3 {
        Dim3::new(x, y, z)
    }
}

impl fmt::Display for Dim3 {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "({}, {}, {})", self.x, self.y, self.z)
    }
}

/// Dynamic shared memory a kernel may use without raising its limit (48 KiB).
pub const DEFAULT_MAX_DYNAMIC_SHARED_MEMORY: u32 = 48 * 1024;
/// The largest cluster every cluster-capable GPU runs (8 blocks); up to 16 with
/// [`LaunchConfig::non_portable_cluster_size`] on GPUs that allow it (H100).
pub const PORTABLE_CLUSTER_SIZE: u64 = 8;
/// The largest cluster any GPU runs (blocks).
pub const MAX_CLUSTER_SIZE: u64 = 16;

/// One launch: where (device, stream), how many threads (grid, block), dynamic shared memory,
/// and the `cuLaunchKernelEx` attributes.
///
/// The stream is the environment's current stream of the device (`tvm_ffi::env::current_stream`,
/// PyTorch's current stream inside a call from Python) unless [`stream`](Self::stream) sets
/// another; in debug builds a launch on another stream is refused unless
/// [`allow_foreign_stream`](Self::allow_foreign_stream) says it is intended (launching on the
/// default stream while the framework's current stream is another is a classic ordering bug).
///
/// ```
/// use tvm_ffi::Device;
/// use tvm_ffi_kernels::{Dim3, LaunchConfig};
/// let config = LaunchConfig::new(Device::cuda(0), 128u32, 256u32)
///     .shared_memory(64 * 1024)
///     .cluster((2u32, 1, 1))
///     .programmatic_dependent_launch(true);
/// config.validate().unwrap();
/// assert_eq!(config.block, Dim3::new(256, 1, 1));
/// assert_eq!(
///     config.to_string(),
///     "grid (128, 1, 1), block (256, 1, 1), 65536 B dynamic shared memory, stream 0x0 on \
///      cuda:0, cluster (2, 1, 1), programmatic dependent launch"
/// );
/// ```
#[derive(Clone, Copy, Debug)]
pub struct LaunchConfig {
    /// The CUDA device.
    pub device: Device,
    /// Blocks in the grid.
    pub grid: Dim3,
    /// Threads in a block.
    pub block: Dim3,
    /// Dynamic shared memory per block, in bytes.
    pub shared_memory_bytes: u32,
    /// The stream (null: the device's default stream).
    pub stream: StreamHandle,
    /// Thread-block cluster dimensions (`CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION`, sm_90+).
    pub cluster: Option<Dim3>,
    /// Programmatic stream serialization (`CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION`):
    /// the kernel may start before the previous kernel on the stream finishes, and waits for
    /// it with `griddepcontrol.wait` (sm_90+).
    pub programmatic_dependent_launch: bool,
    /// Allow clusters of more than [`PORTABLE_CLUSTER_SIZE`] blocks
    /// (`CU_FUNC_ATTRIBUTE_NON_PORTABLE_CLUSTER_SIZE_ALLOWED`, set on the kernel before launch).
    pub non_portable_cluster_size: bool,
    /// Skip the debug check that `stream` is the environment's current stream of the device.
    pub foreign_stream_allowed: bool,
}

impl LaunchConfig {
    /// `grid` blocks of `block` threads on `device`, on the environment's current stream of
    /// `device`, without dynamic shared memory or attributes.
    pub fn new(device: Device, grid: impl Into<Dim3>, block: impl Into<Dim3>) -> LaunchConfig {
        LaunchConfig {
            device,
            grid: grid.into(),
            block: block.into(),
            shared_memory_bytes: 0,
            stream: tvm_ffi::env::current_stream(device),
            cluster: None,
            programmatic_dependent_launch: false,
            non_portable_cluster_size: false,
            foreign_stream_allowed: false,
        }
    }

    /// With `bytes` of dynamic shared memory per block; more than 48 KiB raises the kernel's
    /// limit (`CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES`) before the launch.
    pub fn shared_memory(mut self, bytes: u32) -> LaunchConfig {
        self.shared_memory_bytes = bytes;
        self
    }

    /// On `stream` instead of the environment's current stream (see the type's doc for the
    /// debug check).
    pub fn stream(mut self, stream: StreamHandle) -> LaunchConfig {
        self.stream = stream;
        self
    }

    /// In thread-block clusters of `cluster` blocks (each grid extent a multiple of it).
    pub fn cluster(mut self, cluster: impl Into<Dim3>) -> LaunchConfig {
        self.cluster = Some(cluster.into());
        self
    }

    /// With programmatic dependent launch (PDL) on or off.
    pub fn programmatic_dependent_launch(mut self, enabled: bool) -> LaunchConfig {
        self.programmatic_dependent_launch = enabled;
        self
    }

    /// Allowing clusters of up to [`MAX_CLUSTER_SIZE`] blocks.
    pub fn non_portable_cluster_size(mut self, allowed: bool) -> LaunchConfig {
        self.non_portable_cluster_size = allowed;
        self
    }

    /// Launching on a stream that is not the environment's current one is intended (a
    /// library-owned side stream): no debug check.
    pub fn allow_foreign_stream(mut self) -> LaunchConfig {
        self.foreign_stream_allowed = true;
        self
    }

    /// Whether the launch needs `cuLaunchKernelEx` (it has attributes).
    pub fn needs_launch_ex(&self) -> bool {
        self.cluster.is_some() || self.programmatic_dependent_launch
    }

    /// The `CUlaunchAttribute`s of this launch, in the order they are passed to the driver.
    pub fn launch_attributes(&self) -> Vec<CuLaunchAttribute> {
        let mut attributes = Vec::new();
        if let Some(c) = self.cluster {
            attributes.push(CuLaunchAttribute::cluster_dimension(c.x, c.y, c.z));
        }
        if self.programmatic_dependent_launch {
            attributes.push(CuLaunchAttribute::programmatic_stream_serialization(true));
        }
        attributes
    }

    /// Checks what the driver would refuse with a less helpful message, or what would launch
    /// wrongly: a CUDA device, non-empty grid and block within CUDA's limits (block at most
    /// 1024 threads, `(1024, 1024, 64)`; grid `(2^31 - 1, 65535, 65535)`), a cluster that
    /// divides the grid and holds at most 8 blocks (16 when non-portable sizes are allowed),
    /// and the debug stream check. Errors are `ValueError`s naming the configuration.
    pub fn validate(&self) -> Result<()> {
        let fail = |why: String| {
            Err(Error::value_error(format!(
                "invalid launch ({self}): {why}"
            )))
        };
        if self.device.device_type() != sys::kDLCUDA {
            return fail(format!("{} is not a CUDA device", self.device));
        }
        let (g, b) = (self.grid, self.block);
        if g.count() == 0 || b.count() == 0 {
            return fail("grid and block extents must be at least 1".into());
        }
        if b.x > 1024 || b.y > 1024 || b.z > 64 || b.count() > 1024 {
            return fail(format!(
                "a block has at most 1024 threads, (1024, 1024, 64) per dimension; got {b}"
            ));
        }
        if g.x > i32::MAX as u32 || g.y > 65535 || g.z > 65535 {
            return fail(format!(
                "grid extents are at most (2147483647, 65535, 65535); got {g}"
            ));
        }
        if let Some(c) = self.cluster {
            if c.count() == 0 {
                return fail("cluster extents must be at least 1".into());
            }
            if g.x % c.x != 0 || g.y % c.y != 0 || g.z % c.z != 0 {
                return fail(format!(
                    "each grid extent must be a multiple of the cluster's; grid {g}, cluster {c}"
                ));
            }
            let limit = if self.non_portable_cluster_size {
                MAX_CLUSTER_SIZE
            } else {
                PORTABLE_CLUSTER_SIZE
            };
            if c.count() > limit {
                let hint = if self.non_portable_cluster_size {
                    ""
                } else {
                    " (allow up to 16 with non_portable_cluster_size)"
                };
                return fail(format!(
                    "a cluster has at most {limit} blocks{hint}; got {c} = {} blocks",
                    c.count()
                ));
            }
        } else if self.non_portable_cluster_size {
            return fail("non_portable_cluster_size needs a cluster".into());
        }
        self.check_stream()
    }

    /// The debug check: the launch goes to the environment's current stream of the device (or
    /// is marked as intended not to). A no-op in release builds.
    fn check_stream(&self) -> Result<()> {
        if !cfg!(debug_assertions) || self.foreign_stream_allowed {
            return Ok(());
        }
        let current = tvm_ffi::env::current_stream(self.device);
        if current == self.stream {
            return Ok(());
        }
        Err(Error::value_error(format!(
            "invalid launch ({self}): the current stream of {} is {current:p}, not the launch's \
             stream {:p}; work on another stream is not ordered with the caller's (call \
             allow_foreign_stream() if this is intended; checked in debug builds)",
            self.device, self.stream
        )))
    }
}

impl fmt::Display for LaunchConfig {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "grid {}, block {}, {} B dynamic shared memory, stream {:p} on {}",
            self.grid, self.block, self.shared_memory_bytes, self.stream, self.device
        )?;
        if let Some(c) = self.cluster {
            write!(f, ", cluster {c}")?;
            if self.non_portable_cluster_size {
                write!(f, " (non-portable size allowed)")?;
            }
        }
        if self.programmatic_dependent_launch {
            write!(f, ", programmatic dependent launch")?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn gpu() -> Device {
        Device::cuda(0)
    }

    fn error(config: LaunchConfig) -> String {
        let err = config.validate().unwrap_err();
        assert_eq!(err.kind(), "ValueError");
        err.message().to_string()
    }

    #[test]
    fn limits_are_checked_with_the_configuration_named() {
        assert_eq!(
            error(LaunchConfig::new(gpu(), 0u32, 32u32)),
            "invalid launch (grid (0, 1, 1), block (32, 1, 1), 0 B dynamic shared memory, \
             stream 0x0 on cuda:0): grid and block extents must be at least 1"
        );
        assert!(
            error(LaunchConfig::new(gpu(), 1u32, (32u32, 64))).ends_with(
                "a block has at most 1024 threads, (1024, 1024, 64) per dimension; got (32, 64, 1)"
            )
        );
        assert!(error(LaunchConfig::new(gpu(), 1u32, (1u32, 1, 65))).contains("got (1, 1, 65)"));
        assert!(error(LaunchConfig::new(gpu(), (1u32, 65536), 1u32))
            .ends_with("grid extents are at most (2147483647, 65535, 65535); got (1, 65536, 1)"));
        assert!(error(LaunchConfig::new(Device::cpu(), 1u32, 1u32))
            .ends_with("cpu:0 is not a CUDA device"));
        LaunchConfig::new(gpu(), (i32::MAX as u32, 65535, 65535), (1024u32, 1, 1))
            .validate()
            .unwrap();
    }

    #[test]
    fn clusters_divide_the_grid_and_respect_the_portable_size() {
        let base = LaunchConfig::new(gpu(), (16u32, 2), 128u32);
        base.cluster((8u32, 1, 1)).validate().unwrap();
        assert!(error(base.cluster((3u32, 1, 1))).ends_with(
            "each grid extent must be a multiple of the cluster's; grid (16, 2, 1), cluster \
             (3, 1, 1)"
        ));
        assert!(error(base.cluster((16u32, 1, 1))).ends_with(
            "a cluster has at most 8 blocks (allow up to 16 with non_portable_cluster_size); \
             got (16, 1, 1) = 16 blocks"
        ));
        let wide = base.cluster((16u32, 1, 1)).non_portable_cluster_size(true);
        wide.validate().unwrap();
        assert!(wide
            .to_string()
            .ends_with("cluster (16, 1, 1) (non-portable size allowed)"));
        assert!(
            error(base.cluster((16u32, 2, 1)).non_portable_cluster_size(true))
                .ends_with("a cluster has at most 16 blocks; got (16, 2, 1) = 32 blocks")
        );
        assert!(error(base.cluster((0u32, 1, 1))).ends_with("cluster extents must be at least 1"));
        assert!(error(base.non_portable_cluster_size(true))
            .ends_with("non_portable_cluster_size needs a cluster"));
    }

    #[test]
    fn attributes_follow_the_configuration() {
        let plain = LaunchConfig::new(gpu(), 4u32, 32u32);
        assert!(!plain.needs_launch_ex());
        assert!(plain.launch_attributes().is_empty());
        let both = plain
            .cluster((2u32, 1, 1))
            .programmatic_dependent_launch(true);
        assert!(both.needs_launch_ex());
        let attrs = both.launch_attributes();
        let decoded: Vec<_> = attrs.iter().map(|a| (a.id, a.value_words(3))).collect();
        assert_eq!(decoded, [(4, vec![2, 1, 1]), (6, vec![1, 0, 0])]);
        assert!(plain
            .programmatic_dependent_launch(true)
            .to_string()
            .ends_with("stream 0x0 on cuda:0, programmatic dependent launch"));
    }

    #[test]
    fn the_stream_defaults_to_the_environments_and_another_is_refused_in_debug() {
        let s = 0x5000 as StreamHandle;
        let _guard = tvm_ffi::env::use_stream(gpu(), s).unwrap();
        let config = LaunchConfig::new(gpu(), 1u32, 32u32);
        assert_eq!(config.stream, s);
        config.validate().unwrap();
        let default_stream = config.stream(std::ptr::null_mut());
        if cfg!(debug_assertions) {
            assert!(error(default_stream).ends_with(
                "the current stream of cuda:0 is 0x5000, not the launch's stream 0x0; work on \
                 another stream is not ordered with the caller's (call allow_foreign_stream() \
                 if this is intended; checked in debug builds)"
            ));
        }
        default_stream.allow_foreign_stream().validate().unwrap();
    }
}
