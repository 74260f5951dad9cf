//! The CUDA driver API types this crate passes to `libcuda.so.1`, written from the documented
//! ABI of `cuda.h` (CUDA 12): `CUlaunchConfig`, `CUlaunchAttribute` and its value union, and the
//! attribute and function-attribute numbers. Sizes and offsets are asserted at compile time, so a
//! layout mistake fails the build rather than a launch.
use std::ffi::{c_int, c_uint, c_void};

/// `CUresult`: 0 is `CUDA_SUCCESS`.
pub type CuResult = c_int;
/// `CUdevice`: a device ordinal as the driver numbers it.
pub type CuDevice = c_int;
/// `CUcontext`, `CUmodule`, `CUfunction`, `CUstream`: opaque driver handles.
pub type Handle = *mut c_void;

/// `CUlaunchAttributeID` values (`enum CUlaunchAttributeID_enum`).
pub mod launch_attribute {
    /// `CU_LAUNCH_ATTRIBUTE_IGNORE`: an entry the driver skips.
    pub const IGNORE: u32 = 0;
    /// `CU_LAUNCH_ATTRIBUTE_COOPERATIVE`.
    pub const COOPERATIVE: u32 = 2;
    /// `CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION`: `value.clusterDim`.
    pub const CLUSTER_DIMENSION: u32 = 4;
    /// `CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION`:
    /// `value.programmaticStreamSerializationAllowed` (programmatic dependent launch).
    pub const PROGRAMMATIC_STREAM_SERIALIZATION: u32 = 6;
}

/// `CUfunction_attribute` values set with `cuFuncSetAttribute`.
pub mod function_attribute {
    /// `CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES`: the largest dynamic shared memory a
    /// launch may ask for (48 KiB until raised).
    pub const MAX_DYNAMIC_SHARED_SIZE_BYTES: i32 = 8;
    /// `CU_FUNC_ATTRIBUTE_NON_PORTABLE_CLUSTER_SIZE_ALLOWED`: clusters of more than 8 blocks.
    pub const NON_PORTABLE_CLUSTER_SIZE_ALLOWED: i32 = 14;
}

/// `CUlaunchAttributeValue`: a 64-byte union, 8-byte aligned (it holds pointers in
/// `accessPolicyWindow`). This crate writes the members it uses through constructors.
#[repr(C, align(8))]
#[derive(Clone, Copy)]
pub struct CuLaunchAttributeValue {
    /// The union's storage (`char pad[64]`).
    pub bytes: [u8; 64],
}

/// `CUlaunchAttribute`: `{ CUlaunchAttributeID id; char pad[4]; CUlaunchAttributeValue value; }`.
#[repr(C)]
#[derive(Clone, Copy)]
pub struct CuLaunchAttribute {
    /// Which attribute (`launch_attribute::*`).
    pub id: u32,
    /// `char pad[8 - sizeof(CUlaunchAttributeID)]`.
    pub pad: [u8; 4],
    /// The attribute's value.
    pub value: CuLaunchAttributeValue,
}

impl CuLaunchAttribute {
    fn with_words(id: u32, words: &[u32]) -> CuLaunchAttribute {
        let mut value = CuLaunchAttributeValue { bytes: [0; 64] };
        for (slot, word) in value.bytes.chunks_exact_mut(4).zip(words) {
            slot.copy_from_slice(&word.to_ne_bytes());
        }
        CuLaunchAttribute {
            id,
            pad: [0; 4],
            value,
        }
    }

    /// `CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION` with `value.clusterDim = {x, y, z}`.
    pub fn cluster_dimension(x: u32, y: u32, z: u32) -> CuLaunchAttribute {
        Self::with_words(launch_attribute::CLUSTER_DIMENSION, &[x, y, z])
    }

    /// `CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION` with
    /// `value.programmaticStreamSerializationAllowed = allowed`.
    pub fn programmatic_stream_serialization(allowed: bool) -> CuLaunchAttribute {
        Self::with_words(
            launch_attribute::PROGRAMMATIC_STREAM_SERIALIZATION,
            &[u32::from(allowed)],
        )
    }

    /// The first `n` 32-bit words of the value (as the driver reads `int`/`unsigned` members).
    pub fn value_words(&self, n: usize) -> Vec<u32> {
        self.value
            .bytes
            .chunks_exact(4)
            .take(n)
            .map(|w| u32::from_ne_bytes([w[0], w[1], w[2], w[3]]))
            .collect()
    }
}

/// `CUlaunchConfig`, the first argument of `cuLaunchKernelEx`.
#[repr(C)]
#[derive(Clone, Copy)]
pub struct CuLaunchConfig {
    /// `gridDimX`.
    pub grid_dim_x: c_uint,
    /// `gridDimY`.
    pub grid_dim_y: c_uint,
    /// `gridDimZ`.
    pub grid_dim_z: c_uint,
    /// `blockDimX`.
    pub block_dim_x: c_uint,
    /// `blockDimY`.
    pub block_dim_y: c_uint,
    /// `blockDimZ`.
    pub block_dim_z: c_uint,
    /// `sharedMemBytes`: dynamic shared memory per block.
    pub shared_mem_bytes: c_uint,
    /// `hStream`.
    pub stream: Handle,
    /// `attrs`: `num_attrs` attributes (null when none).
    pub attrs: *mut CuLaunchAttribute,
    /// `numAttrs`.
    pub num_attrs: c_uint,
}

// The layouts of cuda.h on the 64-bit targets CUDA supports.
const _: () = {
    assert!(std::mem::size_of::<CuLaunchAttributeValue>() == 64);
    assert!(std::mem::align_of::<CuLaunchAttributeValue>() == 8);
    assert!(std::mem::size_of::<CuLaunchAttribute>() == 72);
    assert!(std::mem::offset_of!(CuLaunchAttribute, value) == 8);
    assert!(std::mem::size_of::<CuLaunchConfig>() == 56);
    assert!(std::mem::offset_of!(CuLaunchConfig, shared_mem_bytes) == 24);
    assert!(std::mem::offset_of!(CuLaunchConfig, stream) == 32);
    assert!(std::mem::offset_of!(CuLaunchConfig, attrs) == 40);
    assert!(std::mem::offset_of!(CuLaunchConfig, num_attrs) == 48);
};

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn layouts_match_cuda_h() {
        use std::mem::{align_of, offset_of, size_of};
        assert_eq!(size_of::<CuLaunchAttribute>(), 72);
        assert_eq!(align_of::<CuLaunchAttribute>(), 8);
        assert_eq!(offset_of!(CuLaunchAttribute, id), 0);
        assert_eq!(offset_of!(CuLaunchAttribute, pad), 4);
        assert_eq!(offset_of!(CuLaunchAttribute, value), 8);
        assert_eq!(size_of::<CuLaunchConfig>(), 56);
        let offsets = [
            offset_of!(CuLaunchConfig, grid_dim_x),
            offset_of!(CuLaunchConfig, grid_dim_y),
            offset_of!(CuLaunchConfig, grid_dim_z),
            offset_of!(CuLaunchConfig, block_dim_x),
            offset_of!(CuLaunchConfig, block_dim_y),
            offset_of!(CuLaunchConfig, block_dim_z),
            offset_of!(CuLaunchConfig, shared_mem_bytes),
            offset_of!(CuLaunchConfig, stream),
            offset_of!(CuLaunchConfig, attrs),
            offset_of!(CuLaunchConfig, num_attrs),
        ];
        assert_eq!(offsets, [0, 4, 8, 12, 16, 20, 24, 32, 40, 48]);
    }

    #[test]
    fn attribute_values_are_written_where_the_driver_reads_them() {
        let cluster = CuLaunchAttribute::cluster_dimension(2, 3, 4);
        assert_eq!(cluster.id, 4);
        assert_eq!(cluster.value_words(4), [2, 3, 4, 0]);
        // The raw bytes: the id, zero padding, then clusterDim.x at byte 8.
        // SAFETY: a plain-old-data struct read as its bytes.
        let bytes: [u8; 72] = unsafe { std::mem::transmute(cluster) };
        assert_eq!(&bytes[..4], &4u32.to_ne_bytes());
        assert_eq!(&bytes[4..8], &[0; 4]);
        assert_eq!(&bytes[8..12], &2u32.to_ne_bytes());
        assert!(bytes[20..].iter().all(|&b| b == 0));
        let pdl = CuLaunchAttribute::programmatic_stream_serialization(true);
        assert_eq!((pdl.id, pdl.value_words(2)), (6, vec![1, 0]));
        let off = CuLaunchAttribute::programmatic_stream_serialization(false);
        assert_eq!(off.value_words(1), [0]);
    }
}
