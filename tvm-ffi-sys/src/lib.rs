//! Raw C ABI of libtvm_ffi, transcribed from the pinned wheel's `tvm/ffi/c_api.h`
//! (apache-tvm-ffi 0.1.15.post2, header version 0.1.16), `dlpack/dlpack.h` and
//! `tvm/ffi/extra/c_env_api.h`.
//!
//! Everything here mirrors the C declarations one to one; the safe API is the `tvm-ffi` crate,
//! which re-exports this crate as `tvm_ffi::sys`. The layout test (`tests/abi_layout.rs`)
//! compiles a C program against the wheel's headers and compares every size, alignment and
//! offset with the values this crate reports (see [`layout_report`]).
//!
//! The build script finds libtvm_ffi (search order: `TVM_FFI_LIBDIR`, an active `VIRTUAL_ENV`,
//! a `.venv` above the crate or the target directory, `tvm-ffi-config --libdir` on `PATH`, the
//! Python that imports `tvm_ffi`), links against it through a link in `OUT_DIR` (so that
//! `cargo test` and `cargo run` of every dependent find it), and passes its directories to
//! dependents' build scripts as `DEP_TVM_FFI_SDK_LIBDIR` and `DEP_TVM_FFI_SDK_INCLUDE` (this
//! crate declares `links = "tvm_ffi_sdk"`, not Apache's `tvm_ffi`, so both can be used at once).
#![deny(
    unsafe_op_in_unsafe_fn,
    clippy::undocumented_unsafe_blocks,
    clippy::missing_safety_doc
)]
#![allow(non_camel_case_types, non_upper_case_globals, missing_docs)]

/// Where the build found libtvm_ffi (the wheel's `lib` and `include` directories).
pub mod build_info {
    /// Directory holding `libtvm_ffi.so` (and `libtvm_ffi_testing.so`).
    pub const LIBDIR: &str = env!("TVM_FFI_LIBDIR");
    /// Directory holding the wheel's C/C++ headers (`tvm/ffi/c_api.h`).
    pub const INCLUDEDIR: &str = env!("TVM_FFI_INCLUDEDIR");
}

use std::ffi::{c_char, c_int, c_void};

/// Major version of the header these bindings transcribe.
pub const TVM_FFI_VERSION_MAJOR: u32 = 0;
/// Minor version of the header these bindings transcribe.
pub const TVM_FFI_VERSION_MINOR: u32 = 1;
/// Patch version of the header these bindings transcribe.
pub const TVM_FFI_VERSION_PATCH: u32 = 16;

#[repr(C)]
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct TVMFFIVersion {
    pub major: u32,
    pub minor: u32,
    pub patch: u32,
}

/// `TVMFFITypeIndex`: the statically assigned type indices.
pub mod type_index {
    pub const kTVMFFIAny: i32 = -1;
    pub const kTVMFFINone: i32 = 0;
    pub const kTVMFFIInt: i32 = 1;
    pub const kTVMFFIBool: i32 = 2;
    pub const kTVMFFIFloat: i32 = 3;
    pub const kTVMFFIOpaquePtr: i32 = 4;
    pub const kTVMFFIDataType: i32 = 5;
    pub const kTVMFFIDevice: i32 = 6;
    pub const kTVMFFIDLTensorPtr: i32 = 7;
    pub const kTVMFFIRawStr: i32 = 8;
    pub const kTVMFFIByteArrayPtr: i32 = 9;
    pub const kTVMFFIObjectRValueRef: i32 = 10;
    pub const kTVMFFISmallStr: i32 = 11;
    pub const kTVMFFISmallBytes: i32 = 12;
    pub const kTVMFFIUnchanged: i32 = 13;
    pub const kTVMFFIStaticObjectBegin: i32 = 64;
    pub const kTVMFFIObject: i32 = 64;
    pub const kTVMFFIStr: i32 = 65;
    pub const kTVMFFIBytes: i32 = 66;
    pub const kTVMFFIError: i32 = 67;
    pub const kTVMFFIFunction: i32 = 68;
    pub const kTVMFFIShape: i32 = 69;
    pub const kTVMFFITensor: i32 = 70;
    pub const kTVMFFIArray: i32 = 71;
    pub const kTVMFFIMap: i32 = 72;
    pub const kTVMFFIModule: i32 = 73;
    pub const kTVMFFIOpaquePyObject: i32 = 74;
    pub const kTVMFFIList: i32 = 75;
    pub const kTVMFFIDict: i32 = 76;
    pub const kTVMFFIVisitInterrupt: i32 = 77;
    pub const kTVMFFIBigInt: i32 = 78;
    pub const kTVMFFIStaticObjectEnd: i32 = 79;
    pub const kTVMFFIDynObjectBegin: i32 = 128;
}

pub type TVMFFIObjectHandle = *mut c_void;

pub const kTVMFFIObjectDeleterFlagBitMaskStrong: c_int = 1 << 0;
pub const kTVMFFIObjectDeleterFlagBitMaskWeak: c_int = 1 << 1;
pub const kTVMFFIObjectDeleterFlagBitMaskBoth: c_int =
    kTVMFFIObjectDeleterFlagBitMaskStrong | kTVMFFIObjectDeleterFlagBitMaskWeak;

/// Deleter stored in every object header.
pub type TVMFFIObjectDeleter = Option<unsafe extern "C" fn(self_: *mut c_void, flags: c_int)>;

/// The 24-byte header at the start of every object.
#[repr(C)]
#[derive(Debug)]
pub struct TVMFFIObject {
    pub combined_ref_count: u64,
    pub type_index: i32,
    pub __padding: u32,
    pub deleter: TVMFFIObjectDeleter,
}

#[repr(C)]
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
pub struct DLPackVersion {
    pub major: u32,
    pub minor: u32,
}

/// `DLDeviceType` (an `int32_t` enum in C; kept as an integer so foreign values stay valid).
pub type DLDeviceType = i32;
pub const kDLCPU: DLDeviceType = 1;
pub const kDLCUDA: DLDeviceType = 2;
pub const kDLCUDAHost: DLDeviceType = 3;
pub const kDLOpenCL: DLDeviceType = 4;
pub const kDLVulkan: DLDeviceType = 7;
pub const kDLMetal: DLDeviceType = 8;
pub const kDLVPI: DLDeviceType = 9;
pub const kDLROCM: DLDeviceType = 10;
pub const kDLROCMHost: DLDeviceType = 11;
pub const kDLExtDev: DLDeviceType = 12;
pub const kDLCUDAManaged: DLDeviceType = 13;
pub const kDLOneAPI: DLDeviceType = 14;
pub const kDLWebGPU: DLDeviceType = 15;
pub const kDLHexagon: DLDeviceType = 16;
pub const kDLMAIA: DLDeviceType = 17;
pub const kDLTrn: DLDeviceType = 18;

#[repr(C)]
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
pub struct DLDevice {
    pub device_type: DLDeviceType,
    pub device_id: i32,
}

pub const kDLInt: u8 = 0;
pub const kDLUInt: u8 = 1;
pub const kDLFloat: u8 = 2;
pub const kDLOpaqueHandle: u8 = 3;
pub const kDLBfloat: u8 = 4;
pub const kDLComplex: u8 = 5;
pub const kDLBool: u8 = 6;
pub const kDLFloat8_e3m4: u8 = 7;
pub const kDLFloat8_e4m3: u8 = 8;
pub const kDLFloat8_e4m3b11fnuz: u8 = 9;
pub const kDLFloat8_e4m3fn: u8 = 10;
pub const kDLFloat8_e4m3fnuz: u8 = 11;
pub const kDLFloat8_e5m2: u8 = 12;
pub const kDLFloat8_e5m2fnuz: u8 = 13;
pub const kDLFloat8_e8m0fnu: u8 = 14;
pub const kDLFloat6_e2m3fn: u8 = 15;
pub const kDLFloat6_e3m2fn: u8 = 16;
pub const kDLFloat4_e2m1fn: u8 = 17;

#[repr(C)]
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
pub struct DLDataType {
    pub code: u8,
    pub bits: u8,
    pub lanes: u16,
}

#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct DLTensor {
    pub data: *mut c_void,
    pub device: DLDevice,
    pub ndim: i32,
    pub dtype: DLDataType,
    pub shape: *mut i64,
    pub strides: *mut i64,
    pub byte_offset: u64,
}

#[repr(C)]
pub struct DLManagedTensor {
    pub dl_tensor: DLTensor,
    pub manager_ctx: *mut c_void,
    pub deleter: Option<unsafe extern "C" fn(self_: *mut DLManagedTensor)>,
}

pub const DLPACK_FLAG_BITMASK_READ_ONLY: u64 = 1 << 0;
pub const DLPACK_FLAG_BITMASK_IS_COPIED: u64 = 1 << 1;
pub const DLPACK_FLAG_BITMASK_IS_SUBBYTE_TYPE_PADDED: u64 = 1 << 2;
/// The DLPack version of the wheel's `dlpack.h` (what `DLManagedTensorVersioned` follows).
pub const DLPACK_MAJOR_VERSION: u32 = 1;
pub const DLPACK_MINOR_VERSION: u32 = 3;

#[repr(C)]
pub struct DLManagedTensorVersioned {
    pub version: DLPackVersion,
    pub manager_ctx: *mut c_void,
    pub deleter: Option<unsafe extern "C" fn(self_: *mut DLManagedTensorVersioned)>,
    pub flags: u64,
    pub dl_tensor: DLTensor,
}

/// `TVMFFIStreamHandle` (`c_env_api.h`): a device stream (`cudaStream_t` for CUDA); null is
/// the device's default stream.
pub type TVMFFIStreamHandle = *mut c_void;

pub type DLPackManagedTensorAllocator = Option<
    unsafe extern "C" fn(
        prototype: *mut DLTensor,
        out: *mut *mut DLManagedTensorVersioned,
        error_ctx: *mut c_void,
        set_error: Option<
            unsafe extern "C" fn(
                error_ctx: *mut c_void,
                kind: *const c_char,
                message: *const c_char,
            ),
        >,
    ) -> c_int,
>;

/// The 8-byte value union of [`TVMFFIAny`].
#[repr(C)]
#[derive(Clone, Copy)]
pub union TVMFFIAnyValue {
    pub v_int64: i64,
    pub v_float64: f64,
    pub v_ptr: *mut c_void,
    pub v_c_str: *const c_char,
    pub v_obj: *mut TVMFFIObject,
    pub v_dtype: DLDataType,
    pub v_device: DLDevice,
    pub v_bytes: [u8; 8],
    pub v_uint64: u64,
}

/// The 16-byte tagged union through which every value crosses the ABI.
///
/// `zero_padding` doubles as `small_str_len` for small strings and bytes.
#[repr(C)]
#[derive(Clone, Copy)]
pub struct TVMFFIAny {
    pub type_index: i32,
    pub zero_padding: u32,
    pub value: TVMFFIAnyValue,
}

impl TVMFFIAny {
    /// The `None` value: all bits zero.
    pub const NONE: TVMFFIAny = TVMFFIAny {
        type_index: type_index::kTVMFFINone,
        zero_padding: 0,
        value: TVMFFIAnyValue { v_int64: 0 },
    };
}

#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct TVMFFIByteArray {
    pub data: *const c_char,
    pub size: usize,
}

impl TVMFFIByteArray {
    /// Borrows a Rust byte slice; the result is valid while `bytes` is.
    pub const fn from_bytes(bytes: &[u8]) -> TVMFFIByteArray {
        TVMFFIByteArray {
            data: bytes.as_ptr() as *const c_char,
            size: bytes.len(),
        }
    }

    /// Views the bytes.
    ///
    /// # Safety
    /// `data` must point to `size` readable bytes that outlive `'a`.
    pub unsafe fn as_bytes<'a>(&self) -> &'a [u8] {
        if self.size == 0 {
            &[]
        } else {
            // SAFETY: guaranteed by the caller.
            unsafe { std::slice::from_raw_parts(self.data as *const u8, self.size) }
        }
    }
}

#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct TVMFFIShapeCell {
    pub data: *const i64,
    pub size: usize,
}

#[repr(C)]
#[derive(Debug)]
pub struct TVMFFISeqCell {
    pub data: *mut c_void,
    pub size: i64,
    pub capacity: i64,
    pub data_deleter: Option<unsafe extern "C" fn(*mut c_void)>,
}

pub const kTVMFFIBacktraceUpdateModeReplace: i32 = 0;
pub const kTVMFFIBacktraceUpdateModeAppend: i32 = 1;

#[repr(C)]
pub struct TVMFFIErrorCell {
    pub kind: TVMFFIByteArray,
    pub message: TVMFFIByteArray,
    pub backtrace: TVMFFIByteArray,
    pub update_backtrace: Option<
        unsafe extern "C" fn(
            self_: TVMFFIObjectHandle,
            backtrace: *const TVMFFIByteArray,
            mode: i32,
        ),
    >,
    pub cause_chain: TVMFFIObjectHandle,
    pub extra_context: TVMFFIObjectHandle,
}

pub type TVMFFISafeCallType = unsafe extern "C" fn(
    handle: *mut c_void,
    args: *const TVMFFIAny,
    num_args: i32,
    result: *mut TVMFFIAny,
) -> c_int;

#[repr(C)]
pub struct TVMFFIFunctionCell {
    pub safe_call: Option<TVMFFISafeCallType>,
    pub cpp_call: *mut c_void,
}

#[repr(C)]
pub struct TVMFFIOpaqueObjectCell {
    pub handle: *mut c_void,
}

#[repr(C)]
pub struct TVMFFIObjectAllocHeader {
    pub delete_space: Option<unsafe extern "C" fn(ptr: *mut c_void)>,
}

#[repr(C)]
pub struct TVMFFICustomAllocator {
    pub allocate: Option<
        unsafe extern "C" fn(
            size: usize,
            alignment: usize,
            type_index: i32,
            context: *mut c_void,
        ) -> *mut c_void,
    >,
    pub context: *mut c_void,
}

pub type TVMFFIFieldGetter =
    unsafe extern "C" fn(field: *mut c_void, result: *mut TVMFFIAny) -> c_int;
pub type TVMFFIFieldSetter =
    unsafe extern "C" fn(field: *mut c_void, value: *const TVMFFIAny) -> c_int;
pub type TVMFFIObjectCreator = unsafe extern "C" fn(result: *mut TVMFFIObjectHandle) -> c_int;

/// `TVMFFIFieldFlagBitMask`.
pub mod field_flags {
    pub const kTVMFFIFieldFlagBitMaskWritable: i64 = 1 << 0;
    pub const kTVMFFIFieldFlagBitMaskHasDefault: i64 = 1 << 1;
    pub const kTVMFFIFieldFlagBitMaskIsStaticMethod: i64 = 1 << 2;
    pub const kTVMFFIFieldFlagBitMaskSEqHashIgnore: i64 = 1 << 3;
    pub const kTVMFFIFieldFlagBitMaskSEqHashDefPattern: i64 = 1 << 4;
    pub const kTVMFFIFieldFlagBitMaskDefaultFromFactory: i64 = 1 << 5;
    pub const kTVMFFIFieldFlagBitMaskReprOff: i64 = 1 << 6;
    pub const kTVMFFIFieldFlagBitMaskCompareOff: i64 = 1 << 7;
    pub const kTVMFFIFieldFlagBitMaskHashOff: i64 = 1 << 8;
    pub const kTVMFFIFieldFlagBitMaskInitOff: i64 = 1 << 9;
    pub const kTVMFFIFieldFlagBitMaskKwOnly: i64 = 1 << 10;
    pub const kTVMFFIFieldFlagBitSetterIsFunctionObj: i64 = 1 << 11;
    pub const kTVMFFIFieldFlagBitMaskSEqHashDefSimple: i64 = 1 << 12;
}

/// `TVMFFISEqHashKind`.
pub type TVMFFISEqHashKind = i32;
pub const kTVMFFISEqHashKindUnsupported: TVMFFISEqHashKind = 0;
pub const kTVMFFISEqHashKindTreeNode: TVMFFISEqHashKind = 1;
pub const kTVMFFISEqHashKindFreeVar: TVMFFISEqHashKind = 2;
pub const kTVMFFISEqHashKindDAGNode: TVMFFISEqHashKind = 3;
pub const kTVMFFISEqHashKindConstTreeNode: TVMFFISEqHashKind = 4;
pub const kTVMFFISEqHashKindUniqueInstance: TVMFFISEqHashKind = 5;

#[repr(C)]
pub struct TVMFFIFieldInfo {
    pub name: TVMFFIByteArray,
    pub doc: TVMFFIByteArray,
    pub metadata: TVMFFIByteArray,
    pub flags: i64,
    pub size: i64,
    pub alignment: i64,
    pub offset: i64,
    pub getter: Option<TVMFFIFieldGetter>,
    pub setter: *mut c_void,
    pub default_value_or_factory: TVMFFIAny,
    pub field_static_type_index: i32,
}

#[repr(C)]
pub struct TVMFFIMethodInfo {
    pub name: TVMFFIByteArray,
    pub doc: TVMFFIByteArray,
    pub metadata: TVMFFIByteArray,
    pub flags: i64,
    pub method: TVMFFIAny,
}

#[repr(C)]
pub struct TVMFFITypeMetadata {
    pub doc: TVMFFIByteArray,
    pub creator: Option<TVMFFIObjectCreator>,
    pub total_size: i32,
    pub structural_eq_hash_kind: TVMFFISEqHashKind,
}

#[repr(C)]
pub struct TVMFFITypeAttrColumn {
    pub data: *const TVMFFIAny,
    pub size: i32,
    pub begin_index: i32,
}

#[repr(C)]
pub struct TVMFFITypeInfo {
    pub type_index: i32,
    pub type_depth: i32,
    pub type_key: TVMFFIByteArray,
    pub type_ancestors: *const *const TVMFFITypeInfo,
    pub type_key_hash: u64,
    pub num_fields: i32,
    pub num_methods: i32,
    pub fields: *const TVMFFIFieldInfo,
    pub methods: *const TVMFFIMethodInfo,
    pub metadata: *const TVMFFITypeMetadata,
}

extern "C" {
    pub fn TVMFFIGetVersion(out_version: *mut TVMFFIVersion);
    pub fn TVMFFIObjectIncRef(obj: TVMFFIObjectHandle) -> c_int;
    pub fn TVMFFIObjectDecRef(obj: TVMFFIObjectHandle) -> c_int;
    pub fn TVMFFIObjectCreateOpaque(
        handle: *mut c_void,
        type_index: i32,
        deleter: Option<unsafe extern "C" fn(*mut c_void)>,
        out: *mut TVMFFIObjectHandle,
    ) -> c_int;
    pub fn TVMFFIGetCustomAllocator() -> *mut TVMFFICustomAllocator;
    pub fn TVMFFITypeKeyToIndex(type_key: *const TVMFFIByteArray, out_tindex: *mut i32) -> c_int;
    pub fn TVMFFIFunctionCreate(
        self_: *mut c_void,
        safe_call: TVMFFISafeCallType,
        deleter: Option<unsafe extern "C" fn(*mut c_void)>,
        out: *mut TVMFFIObjectHandle,
    ) -> c_int;
    pub fn TVMFFIFunctionGetGlobal(
        name: *const TVMFFIByteArray,
        out: *mut TVMFFIObjectHandle,
    ) -> c_int;
    pub fn TVMFFIAnyViewToOwnedAny(any_view: *const TVMFFIAny, out: *mut TVMFFIAny) -> c_int;
    pub fn TVMFFIFunctionCall(
        func: TVMFFIObjectHandle,
        args: *mut TVMFFIAny,
        num_args: i32,
        result: *mut TVMFFIAny,
    ) -> c_int;
    pub fn TVMFFIErrorMoveFromRaised(result: *mut TVMFFIObjectHandle);
    pub fn TVMFFIErrorSetRaised(error: TVMFFIObjectHandle);
    pub fn TVMFFIErrorSetRaisedFromCStr(kind: *const c_char, message: *const c_char);
    pub fn TVMFFIErrorSetRaisedFromCStrParts(
        kind: *const c_char,
        message_parts: *const *const c_char,
        num_parts: i32,
    );
    pub fn TVMFFIErrorCreate(
        kind: *const TVMFFIByteArray,
        message: *const TVMFFIByteArray,
        backtrace: *const TVMFFIByteArray,
        out: *mut TVMFFIObjectHandle,
    ) -> c_int;
    pub fn TVMFFIErrorCreateWithCauseAndExtraContext(
        kind: *const TVMFFIByteArray,
        message: *const TVMFFIByteArray,
        backtrace: *const TVMFFIByteArray,
        cause_chain: TVMFFIObjectHandle,
        extra_context: TVMFFIObjectHandle,
        out: *mut TVMFFIObjectHandle,
    ) -> c_int;
    pub fn TVMFFITensorFromDLPack(
        from: *mut DLManagedTensor,
        require_alignment: i32,
        require_contiguous: i32,
        out: *mut TVMFFIObjectHandle,
    ) -> c_int;
    pub fn TVMFFITensorToDLPack(from: TVMFFIObjectHandle, out: *mut *mut DLManagedTensor) -> c_int;
    pub fn TVMFFITensorFromDLPackVersioned(
        from: *mut DLManagedTensorVersioned,
        require_alignment: i32,
        require_contiguous: i32,
        out: *mut TVMFFIObjectHandle,
    ) -> c_int;
    pub fn TVMFFITensorToDLPackVersioned(
        from: TVMFFIObjectHandle,
        out: *mut *mut DLManagedTensorVersioned,
    ) -> c_int;
    pub fn TVMFFITensorCreateUnsafeView(
        source: TVMFFIObjectHandle,
        prototype: *const DLTensor,
        out: *mut TVMFFIObjectHandle,
    ) -> c_int;
    pub fn TVMFFIStringFromByteArray(input: *const TVMFFIByteArray, out: *mut TVMFFIAny) -> c_int;
    pub fn TVMFFIBytesFromByteArray(input: *const TVMFFIByteArray, out: *mut TVMFFIAny) -> c_int;
    pub fn TVMFFIBigIntFromByteArray(input: *const TVMFFIByteArray, out: *mut TVMFFIAny) -> c_int;
    pub fn TVMFFIBigIntGetContentByteArray(value: *const TVMFFIAny) -> TVMFFIByteArray;
    pub fn TVMFFIDataTypeFromString(s: *const TVMFFIByteArray, out: *mut DLDataType) -> c_int;
    pub fn TVMFFIDataTypeToString(dtype: *const DLDataType, out: *mut TVMFFIAny) -> c_int;
    pub fn TVMFFIFunctionSetGlobal(
        name: *const TVMFFIByteArray,
        f: TVMFFIObjectHandle,
        allow_override: c_int,
    ) -> c_int;
    pub fn TVMFFIFunctionSetGlobalFromMethodInfo(
        method_info: *const TVMFFIMethodInfo,
        allow_override: c_int,
    ) -> c_int;
    pub fn TVMFFITypeRegisterField(type_index: i32, info: *const TVMFFIFieldInfo) -> c_int;
    pub fn TVMFFITypeRegisterMethod(type_index: i32, info: *const TVMFFIMethodInfo) -> c_int;
    pub fn TVMFFITypeRegisterMetadata(
        type_index: i32,
        metadata: *const TVMFFITypeMetadata,
    ) -> c_int;
    pub fn TVMFFITypeRegisterAttr(
        type_index: i32,
        attr_name: *const TVMFFIByteArray,
        attr_value: *const TVMFFIAny,
    ) -> c_int;
    pub fn TVMFFIGetTypeAttrColumn(
        attr_name: *const TVMFFIByteArray,
    ) -> *const TVMFFITypeAttrColumn;
    pub fn TVMFFIBacktrace(
        filename: *const c_char,
        lineno: c_int,
        func: *const c_char,
        cross_ffi_boundary: c_int,
    ) -> *const TVMFFIByteArray;
    pub fn TVMFFITypeGetOrAllocIndex(
        type_key: *const TVMFFIByteArray,
        static_type_index: i32,
        type_depth: i32,
        num_child_slots: i32,
        child_slots_can_overflow: i32,
        parent_type_index: i32,
    ) -> i32;
    pub fn TVMFFIGetTypeInfo(type_index: i32) -> *const TVMFFITypeInfo;

    // tvm/ffi/extra/c_env_api.h
    pub fn TVMFFIEnvSetStream(
        device_type: i32,
        device_id: i32,
        stream: TVMFFIStreamHandle,
        opt_out_original_stream: *mut TVMFFIStreamHandle,
    ) -> c_int;
    pub fn TVMFFIEnvGetStream(device_type: i32, device_id: i32) -> TVMFFIStreamHandle;
    pub fn TVMFFIEnvSetDLPackManagedTensorAllocator(
        allocator: DLPackManagedTensorAllocator,
        write_to_global_context: c_int,
        opt_out_original_allocator: *mut DLPackManagedTensorAllocator,
    ) -> c_int;
    pub fn TVMFFIEnvGetDLPackManagedTensorAllocator() -> DLPackManagedTensorAllocator;
    pub fn TVMFFIEnvTensorAlloc(prototype: *mut DLTensor, out: *mut TVMFFIObjectHandle) -> c_int;
    pub fn TVMFFIEnvCheckSignals() -> c_int;
    pub fn TVMFFIEnvRegisterCAPI(name: *const c_char, symbol: *mut c_void) -> c_int;
    pub fn TVMFFIEnvModLookupFromImports(
        library_ctx: TVMFFIObjectHandle,
        func_name: *const c_char,
        out: *mut TVMFFIObjectHandle,
    ) -> c_int;
    pub fn TVMFFIEnvModRegisterContextSymbol(name: *const c_char, symbol: *mut c_void) -> c_int;
    pub fn TVMFFIEnvModRegisterSystemLibSymbol(name: *const c_char, symbol: *mut c_void) -> c_int;
}

/// Size, alignment and field offsets of every ABI struct, as `name value` lines.
///
/// The layout test prints the same lines from a C program compiled against the wheel's
/// headers and compares the two texts.
pub fn layout_report() -> String {
    use std::fmt::Write;
    use std::mem::{align_of, offset_of, size_of};
    let mut out = String::new();
    macro_rules! report {
        ($ty:ident { $($field:ident),* }) => {{
            let _ = writeln!(out, "{}.size {}", stringify!($ty), size_of::<$ty>());
            let _ = writeln!(out, "{}.align {}", stringify!($ty), align_of::<$ty>());
            $(let _ = writeln!(out, "{}.{} {}", stringify!($ty), stringify!($field), offset_of!($ty, $field));)*
        }};
    }
    report!(TVMFFIVersion {
        major,
        minor,
        patch
    });
    report!(TVMFFIObject {
        combined_ref_count,
        type_index,
        __padding,
        deleter
    });
    report!(TVMFFIAny {
        type_index,
        zero_padding,
        value
    });
    report!(TVMFFIByteArray { data, size });
    report!(TVMFFIShapeCell { data, size });
    report!(TVMFFISeqCell {
        data,
        size,
        capacity,
        data_deleter
    });
    report!(TVMFFIErrorCell {
        kind,
        message,
        backtrace,
        update_backtrace,
        cause_chain,
        extra_context
    });
    report!(TVMFFIFunctionCell {
        safe_call,
        cpp_call
    });
    report!(TVMFFIOpaqueObjectCell { handle });
    report!(TVMFFIObjectAllocHeader { delete_space });
    report!(TVMFFICustomAllocator { allocate, context });
    report!(TVMFFIFieldInfo {
        name,
        doc,
        metadata,
        flags,
        size,
        alignment,
        offset,
        getter,
        setter,
        default_value_or_factory,
        field_static_type_index
    });
    report!(TVMFFIMethodInfo {
        name,
        doc,
        metadata,
        flags,
        method
    });
    report!(TVMFFITypeMetadata {
        doc,
        creator,
        total_size,
        structural_eq_hash_kind
    });
    report!(TVMFFITypeAttrColumn {
        data,
        size,
        begin_index
    });
    report!(TVMFFITypeInfo {
        type_index,
        type_depth,
        type_key,
        type_ancestors,
        type_key_hash,
        num_fields,
        num_methods,
        fields,
        methods,
        metadata
    });
    report!(DLPackVersion { major, minor });
    report!(DLDevice {
        device_type,
        device_id
    });
    report!(DLDataType { code, bits, lanes });
    report!(DLTensor {
        data,
        device,
        ndim,
        dtype,
        shape,
        strides,
        byte_offset
    });
    report!(DLManagedTensor {
        dl_tensor,
        manager_ctx,
        deleter
    });
    report!(DLManagedTensorVersioned {
        version,
        manager_ctx,
        deleter,
        flags,
        dl_tensor
    });
    out
}
