//! [`DataType`] and [`Device`]: the DLPack descriptors, parsed and printed as the runtime does.
use std::fmt;
use std::str::FromStr;

use super::any::{pod, Any, AnyView, FromAny, IntoAny, PlainValue, TypeSchema};
use crate::abi::sys::{self, type_index as ti, DLDataType, DLDevice, TVMFFIAnyValue};
use crate::base::error::{Error, Result};

/// A tensor element type (`DLDataType`): `int32`, `float16`, `bool`, `float32x4` ...
///
/// ```
/// use tvm_ffi::DataType;
/// let f16: DataType = "float16".parse().unwrap();
/// assert_eq!(f16, DataType::FLOAT16);
/// assert_eq!((f16.bits(), f16.size_in_bytes()), (16, 2));
/// let vector = DataType::float(32).with_lanes(4);
/// assert_eq!(vector.to_string(), "float32x4");
/// assert!("float33x".parse::<DataType>().is_err());
/// ```
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
#[repr(transparent)]
pub struct DataType(pub DLDataType);

impl DataType {
    /// A signed integer type of `bits` bits.
    pub const fn int(bits: u8) -> Self {
        DataType(DLDataType {
            code: sys::kDLInt,
            bits,
            lanes: 1,
        })
    }
    /// An unsigned integer type of `bits` bits.
    pub const fn uint(bits: u8) -> Self {
        DataType(DLDataType {
            code: sys::kDLUInt,
            bits,
            lanes: 1,
        })
    }
    /// An IEEE float type of `bits` bits.
    pub const fn float(bits: u8) -> Self {
        DataType(DLDataType {
            code: sys::kDLFloat,
            bits,
            lanes: 1,
        })
    }
    /// A bfloat type of `bits` bits (`bfloat16`).
    pub const fn bfloat(bits: u8) -> Self {
        DataType::new(sys::kDLBfloat, bits, 1)
    }
    /// A data type from its DLPack type code (`kDLFloat8_e4m3fn`, ...), bits per lane and lane
    /// count.
    ///
    /// ```
    /// use tvm_ffi::{sys, DataType};
    /// let fp8 = DataType::new(sys::kDLFloat8_e4m3fn, 8, 1);
    /// assert_eq!(fp8, DataType::FLOAT8_E4M3FN);
    /// assert_eq!(fp8.to_string(), "float8_e4m3fn");
    /// ```
    pub const fn new(code: u8, bits: u8, lanes: u16) -> Self {
        DataType(DLDataType { code, bits, lanes })
    }
    /// `bool` (8-bit storage, as DLPack specifies).
    pub const fn bool() -> Self {
        DataType(DLDataType {
            code: sys::kDLBool,
            bits: 8,
            lanes: 1,
        })
    }
    /// The same type with `lanes` lanes.
    pub const fn with_lanes(self, lanes: u16) -> Self {
        DataType(DLDataType {
            code: self.0.code,
            bits: self.0.bits,
            lanes,
        })
    }
    /// Type code (`kDLInt`, `kDLFloat` ...).
    pub const fn code(self) -> u8 {
        self.0.code
    }
    /// Bits per lane.
    pub const fn bits(self) -> u8 {
        self.0.bits
    }
    /// Number of lanes.
    pub const fn lanes(self) -> u16 {
        self.0.lanes
    }
    /// Bytes per element (rounded up).
    pub const fn size_in_bytes(self) -> usize {
        (self.0.bits as usize * self.0.lanes as usize).div_ceil(8)
    }
    /// Bits per element (all lanes).
    pub const fn size_in_bits(self) -> usize {
        self.0.bits as usize * self.0.lanes as usize
    }
    /// Whether elements are narrower than a byte (`int4`, `float4_e2m1fn`, `float6_e2m3fn`,
    /// ...): DLPack packs them, element `i` in bits `i * bits ..` of the buffer (little bit
    /// order), so a tensor of `n` of them has `ceil(n * bits / 8)` bytes.
    pub const fn is_sub_byte(self) -> bool {
        self.size_in_bits() < 8
    }
}

/// Named data types, spelled as the runtime prints them (`DataType::FLOAT8_E4M3FN` is
/// `float8_e4m3fn`). fp8, fp6, fp4 and the sub-byte integers have no Rust element type: read
/// and write them as bytes ([`TensorView::as_bytes`](crate::tensor::TensorView::as_bytes)).
impl DataType {
    /// `bool`: 8-bit storage.
    pub const BOOL: DataType = DataType::bool();
    /// `int1`: packed, 8 per byte.
    pub const INT1: DataType = DataType::int(1);
    /// `uint1`: packed, 8 per byte.
    pub const UINT1: DataType = DataType::uint(1);
    /// `int4`: packed, 2 per byte.
    pub const INT4: DataType = DataType::int(4);
    /// `uint4`: packed, 2 per byte.
    pub const UINT4: DataType = DataType::uint(4);
    /// `int8` (`i8`).
    pub const INT8: DataType = DataType::int(8);
    /// `int16` (`i16`).
    pub const INT16: DataType = DataType::int(16);
    /// `int32` (`i32`).
    pub const INT32: DataType = DataType::int(32);
    /// `int64` (`i64`).
    pub const INT64: DataType = DataType::int(64);
    /// `uint8` (`u8`).
    pub const UINT8: DataType = DataType::uint(8);
    /// `uint16` (`u16`).
    pub const UINT16: DataType = DataType::uint(16);
    /// `uint32` (`u32`).
    pub const UINT32: DataType = DataType::uint(32);
    /// `uint64` (`u64`).
    pub const UINT64: DataType = DataType::uint(64);
    /// `float16` ([`half::f16`]).
    pub const FLOAT16: DataType = DataType::float(16);
    /// `bfloat16` ([`half::bf16`]).
    pub const BFLOAT16: DataType = DataType::bfloat(16);
    /// `float32` (`f32`).
    pub const FLOAT32: DataType = DataType::float(32);
    /// `float64` (`f64`).
    pub const FLOAT64: DataType = DataType::float(64);
    /// `float8_e3m4`.
    pub const FLOAT8_E3M4: DataType = DataType::new(sys::kDLFloat8_e3m4, 8, 1);
    /// `float8_e4m3`.
    pub const FLOAT8_E4M3: DataType = DataType::new(sys::kDLFloat8_e4m3, 8, 1);
    /// `float8_e4m3b11fnuz`.
    pub const FLOAT8_E4M3B11FNUZ: DataType = DataType::new(sys::kDLFloat8_e4m3b11fnuz, 8, 1);
    /// `float8_e4m3fn` (PyTorch `float8_e4m3fn`, CUDA `__nv_fp8_e4m3`).
    pub const FLOAT8_E4M3FN: DataType = DataType::new(sys::kDLFloat8_e4m3fn, 8, 1);
    /// `float8_e4m3fnuz`.
    pub const FLOAT8_E4M3FNUZ: DataType = DataType::new(sys::kDLFloat8_e4m3fnuz, 8, 1);
    /// `float8_e5m2` (PyTorch `float8_e5m2`, CUDA `__nv_fp8_e5m2`).
    pub const FLOAT8_E5M2: DataType = DataType::new(sys::kDLFloat8_e5m2, 8, 1);
    /// `float8_e5m2fnuz`.
    pub const FLOAT8_E5M2FNUZ: DataType = DataType::new(sys::kDLFloat8_e5m2fnuz, 8, 1);
    /// `float8_e8m0fnu` (MX scale factors).
    pub const FLOAT8_E8M0FNU: DataType = DataType::new(sys::kDLFloat8_e8m0fnu, 8, 1);
    /// `float6_e2m3fn`: packed, 6 bits each.
    pub const FLOAT6_E2M3FN: DataType = DataType::new(sys::kDLFloat6_e2m3fn, 6, 1);
    /// `float6_e3m2fn`: packed, 6 bits each.
    pub const FLOAT6_E3M2FN: DataType = DataType::new(sys::kDLFloat6_e3m2fn, 6, 1);
    /// `float4_e2m1fn`: packed, 2 per byte.
    pub const FLOAT4_E2M1FN: DataType = DataType::new(sys::kDLFloat4_e2m1fn, 4, 1);
}

impl From<DLDataType> for DataType {
    fn from(d: DLDataType) -> Self {
        DataType(d)
    }
}

impl FromStr for DataType {
    type Err = Error;
    /// Parses through the runtime (`TVMFFIDataTypeFromString`).
    fn from_str(s: &str) -> Result<Self> {
        let input = sys::TVMFFIByteArray::from_bytes(s.as_bytes());
        let mut out = DLDataType::default();
        // SAFETY: valid input and output.
        let rc = unsafe { sys::TVMFFIDataTypeFromString(&input, &mut out) };
        if rc == 0 {
            Ok(DataType(out))
        } else {
            Err(Error::from_return_code(rc))
        }
    }
}

impl fmt::Display for DataType {
    /// Prints through the runtime (`TVMFFIDataTypeToString`).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut out = sys::TVMFFIAny::NONE;
        // SAFETY: valid input and output slot; the result is an owned string value.
        let rc = unsafe { sys::TVMFFIDataTypeToString(&self.0, &mut out) };
        if rc != 0 {
            drop(Error::take_raised());
            return write!(
                f,
                "<dtype code={} bits={} lanes={}>",
                self.0.code, self.0.bits, self.0.lanes
            );
        }
        // SAFETY: owned value returned by the runtime.
        let text = unsafe { Any::from_raw(out) };
        f.write_str(text.checked_cast::<&str>().unwrap_or("<dtype>"))
    }
}

impl fmt::Debug for DataType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "dtype('{self}')")
    }
}

impl TypeSchema for DataType {
    fn type_str() -> String {
        "DataType".into()
    }
}
impl IntoAny for DataType {
    fn into_any(self) -> Any {
        // The 4 bytes after the dtype are zero, as C++ writes them: map keys hash and compare
        // all 8 bytes.
        let mut value = TVMFFIAnyValue { v_uint64: 0 };
        value.v_dtype = self.0;
        // SAFETY: plain data.
        unsafe { Any::from_raw(pod(ti::kTVMFFIDataType, value)) }
    }
}
impl<'a> FromAny<'a> for DataType {
    /// Accepts a data type, or a string the runtime parses (as C++ does).
    fn from_any(view: &'a AnyView<'a>) -> Option<Self> {
        if view.type_index() == ti::kTVMFFIDataType {
            // SAFETY: the index selects v_dtype.
            return Some(DataType(unsafe { view.as_raw().value.v_dtype }));
        }
        <&str>::from_any(view).and_then(|s| s.parse().ok())
    }
    fn from_any_exact(view: &'a AnyView<'a>) -> Option<Self> {
        // SAFETY: the index selects v_dtype.
        (view.type_index() == ti::kTVMFFIDataType)
            .then(|| DataType(unsafe { view.as_raw().value.v_dtype }))
    }
    /// A string that parses is stored as the DataType it names.
    fn reencode(view: &'a AnyView<'a>) -> Option<Any> {
        Self::from_any(view).map(IntoAny::into_any)
    }
    /// A `match_any!` arm takes a `DataType` value only (not a string that parses).
    #[inline]
    fn match_type_index(index: i32) -> bool {
        index == ti::kTVMFFIDataType
    }
}

/// `float32`, PyTorch's default element type.
impl Default for DataType {
    fn default() -> Self {
        DataType::float(32)
    }
}

/// A device (`DLDevice`): `cpu:0`, `cuda:1` ...
///
/// ```
/// use tvm_ffi::Device;
/// let gpu: Device = "cuda:1".parse().unwrap();
/// assert_eq!(gpu, Device::cuda(1));
/// assert_eq!((gpu.type_name(), gpu.device_id()), ("cuda", 1));
/// assert_eq!(Device::cpu().to_string(), "cpu:0");
/// ```
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
#[repr(transparent)]
pub struct Device(pub DLDevice);

/// `cpu:0`.
impl Default for Device {
    fn default() -> Self {
        Device::new(sys::kDLCPU, 0)
    }
}

const DEVICE_NAMES: &[(i32, &str)] = &[
    (sys::kDLCPU, "cpu"),
    (sys::kDLCUDA, "cuda"),
    (sys::kDLCUDAHost, "cuda_host"),
    (sys::kDLOpenCL, "opencl"),
    (sys::kDLVulkan, "vulkan"),
    (sys::kDLMetal, "metal"),
    (sys::kDLVPI, "vpi"),
    (sys::kDLROCM, "rocm"),
    (sys::kDLROCMHost, "rocm_host"),
    (sys::kDLExtDev, "ext_dev"),
    (sys::kDLCUDAManaged, "cuda_managed"),
    (sys::kDLOneAPI, "oneapi"),
    (sys::kDLWebGPU, "webgpu"),
    (sys::kDLHexagon, "hexagon"),
    (sys::kDLMAIA, "maia"),
    (sys::kDLTrn, "trn"),
];

impl Device {
    /// A device of `device_type` (a `kDL*` constant) and id.
    ///
    /// ```
    /// use tvm_ffi::{sys, Device};
    /// let rocm = Device::new(sys::kDLROCM, 1);
    /// assert_eq!((rocm.to_string(), rocm.device_id()), ("rocm:1".to_string(), 1));
    /// ```
    pub const fn new(device_type: i32, device_id: i32) -> Self {
        Device(DLDevice {
            device_type,
            device_id,
        })
    }
    /// `cpu:0`.
    pub const fn cpu() -> Self {
        Device::new(sys::kDLCPU, 0)
    }
    /// `cuda:id`.
    pub const fn cuda(id: i32) -> Self {
        Device::new(sys::kDLCUDA, id)
    }
    /// The DLPack device type.
    pub const fn device_type(self) -> i32 {
        self.0.device_type
    }
    /// The device id.
    pub const fn device_id(self) -> i32 {
        self.0.device_id
    }
    /// The device type's name, as Python prints it.
    pub fn type_name(self) -> &'static str {
        DEVICE_NAMES
            .iter()
            .find(|(code, _)| *code == self.0.device_type)
            .map_or("unknown", |(_, n)| n)
    }
}

impl From<DLDevice> for Device {
    fn from(d: DLDevice) -> Self {
        Device(d)
    }
}

impl FromStr for Device {
    type Err = Error;
    /// Parses `name` or `name:id` with the runtime's device names (`mps` is Metal, `wgpu` WebGPU).
    fn from_str(s: &str) -> Result<Self> {
        let s = s.split(' ').next().unwrap_or("");
        let (name, id) = match s.split_once(':') {
            Some((n, id)) => (
                n,
                id.parse::<i32>()
                    .map_err(|_| Error::value_error(format!("Invalid device id in `{s}`")))?,
            ),
            None => (s, 0),
        };
        let name = match name {
            "mps" => "metal",
            "wgpu" => "webgpu",
            other => other,
        };
        DEVICE_NAMES
            .iter()
            .find(|(_, n)| *n == name)
            .map(|(code, _)| Device::new(*code, id))
            .ok_or_else(|| Error::value_error(format!("Unknown device `{s}`")))
    }
}

impl fmt::Display for Device {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}", self.type_name(), self.0.device_id)
    }
}
impl fmt::Debug for Device {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "device(type='{}', index={})",
            self.type_name(),
            self.0.device_id
        )
    }
}

impl TypeSchema for Device {
    fn type_str() -> String {
        "Device".into()
    }
}
impl IntoAny for Device {
    fn into_any(self) -> Any {
        // SAFETY: plain data.
        unsafe { Any::from_raw(pod(ti::kTVMFFIDevice, TVMFFIAnyValue { v_device: self.0 })) }
    }
}
impl<'a> FromAny<'a> for Device {
    /// Accepts a device, or a string such as `"cuda:1"` (as C++ does).
    fn from_any(view: &'a AnyView<'a>) -> Option<Self> {
        if view.type_index() == ti::kTVMFFIDevice {
            // SAFETY: the index selects v_device.
            return Some(Device(unsafe { view.as_raw().value.v_device }));
        }
        <&str>::from_any(view).and_then(|s| s.parse().ok())
    }
    fn from_any_exact(view: &'a AnyView<'a>) -> Option<Self> {
        // SAFETY: the index selects v_device.
        (view.type_index() == ti::kTVMFFIDevice)
            .then(|| Device(unsafe { view.as_raw().value.v_device }))
    }
    /// A string that parses is stored as the Device it names.
    fn reencode(view: &'a AnyView<'a>) -> Option<Any> {
        Self::from_any(view).map(IntoAny::into_any)
    }
    /// A `match_any!` arm takes a `Device` value only (not a string that parses).
    #[inline]
    fn match_type_index(index: i32) -> bool {
        index == ti::kTVMFFIDevice
    }
}

impl PlainValue for DataType {}
impl PlainValue for Device {}
