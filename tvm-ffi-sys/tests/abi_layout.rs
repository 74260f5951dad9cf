//! The raw ABI module against the wheel's own headers: a C program compiled here prints the size,
//! alignment and field offsets of every struct, and they must equal what `tvm_ffi_sys` says.
use std::process::Command;

const C_PROGRAM: &str = r#"
#include <stddef.h>
#include <stdio.h>
#include <tvm/ffi/c_api.h>
#include <tvm/ffi/extra/c_env_api.h>
#define S(T) printf(#T ".size %zu\n" #T ".align %zu\n", sizeof(T), _Alignof(T));
#define F(T, f) printf(#T "." #f " %zu\n", offsetof(T, f));
#define F2(T, name, f) printf(#T "." #name " %zu\n", offsetof(T, f));
int main(void) {
  S(TVMFFIVersion) F(TVMFFIVersion, major) F(TVMFFIVersion, minor) F(TVMFFIVersion, patch)
  S(TVMFFIObject) F(TVMFFIObject, combined_ref_count) F(TVMFFIObject, type_index) F(TVMFFIObject, __padding) F(TVMFFIObject, deleter)
  S(TVMFFIAny) F(TVMFFIAny, type_index) F(TVMFFIAny, zero_padding) F2(TVMFFIAny, value, v_int64)
  S(TVMFFIByteArray) F(TVMFFIByteArray, data) F(TVMFFIByteArray, size)
  S(TVMFFIShapeCell) F(TVMFFIShapeCell, data) F(TVMFFIShapeCell, size)
  S(TVMFFISeqCell) F(TVMFFISeqCell, data) F(TVMFFISeqCell, size) F(TVMFFISeqCell, capacity) F(TVMFFISeqCell, data_deleter)
  S(TVMFFIErrorCell) F(TVMFFIErrorCell, kind) F(TVMFFIErrorCell, message) F(TVMFFIErrorCell, backtrace) F(TVMFFIErrorCell, update_backtrace) F(TVMFFIErrorCell, cause_chain) F(TVMFFIErrorCell, extra_context)
  S(TVMFFIFunctionCell) F(TVMFFIFunctionCell, safe_call) F(TVMFFIFunctionCell, cpp_call)
  S(TVMFFIOpaqueObjectCell) F(TVMFFIOpaqueObjectCell, handle)
  S(TVMFFIObjectAllocHeader) F(TVMFFIObjectAllocHeader, delete_space)
  S(TVMFFICustomAllocator) F(TVMFFICustomAllocator, allocate) F(TVMFFICustomAllocator, context)
  S(TVMFFIFieldInfo) F(TVMFFIFieldInfo, name) F(TVMFFIFieldInfo, doc) F(TVMFFIFieldInfo, metadata) F(TVMFFIFieldInfo, flags) F(TVMFFIFieldInfo, size) F(TVMFFIFieldInfo, alignment) F(TVMFFIFieldInfo, offset) F(TVMFFIFieldInfo, getter) F(TVMFFIFieldInfo, setter) F(TVMFFIFieldInfo, default_value_or_factory) F(TVMFFIFieldInfo, field_static_type_index)
  S(TVMFFIMethodInfo) F(TVMFFIMethodInfo, name) F(TVMFFIMethodInfo, doc) F(TVMFFIMethodInfo, metadata) F(TVMFFIMethodInfo, flags) F(TVMFFIMethodInfo, method)
  S(TVMFFITypeMetadata) F(TVMFFITypeMetadata, doc) F(TVMFFITypeMetadata, creator) F(TVMFFITypeMetadata, total_size) F(TVMFFITypeMetadata, structural_eq_hash_kind)
  S(TVMFFITypeAttrColumn) F(TVMFFITypeAttrColumn, data) F(TVMFFITypeAttrColumn, size) F(TVMFFITypeAttrColumn, begin_index)
  S(TVMFFITypeInfo) F(TVMFFITypeInfo, type_index) F(TVMFFITypeInfo, type_depth) F(TVMFFITypeInfo, type_key) F(TVMFFITypeInfo, type_ancestors) F(TVMFFITypeInfo, type_key_hash) F(TVMFFITypeInfo, num_fields) F(TVMFFITypeInfo, num_methods) F(TVMFFITypeInfo, fields) F(TVMFFITypeInfo, methods) F(TVMFFITypeInfo, metadata)
  S(DLPackVersion) F(DLPackVersion, major) F(DLPackVersion, minor)
  S(DLDevice) F(DLDevice, device_type) F(DLDevice, device_id)
  S(DLDataType) F(DLDataType, code) F(DLDataType, bits) F(DLDataType, lanes)
  S(DLTensor) F(DLTensor, data) F(DLTensor, device) F(DLTensor, ndim) F(DLTensor, dtype) F(DLTensor, shape) F(DLTensor, strides) F(DLTensor, byte_offset)
  S(DLManagedTensor) F(DLManagedTensor, dl_tensor) F(DLManagedTensor, manager_ctx) F(DLManagedTensor, deleter)
  S(DLManagedTensorVersioned) F(DLManagedTensorVersioned, version) F(DLManagedTensorVersioned, manager_ctx) F(DLManagedTensorVersioned, deleter) F(DLManagedTensorVersioned, flags) F(DLManagedTensorVersioned, dl_tensor)
  printf("version %d.%d.%d\n", TVM_FFI_VERSION_MAJOR, TVM_FFI_VERSION_MINOR, TVM_FFI_VERSION_PATCH);
  printf("consts %d %d %d %d %d %d %d %d %d %d %d %d %d %d %d %d\n", kTVMFFIAny, kTVMFFINone, kTVMFFIInt, kTVMFFIBool,
         kTVMFFIFloat, kTVMFFIOpaquePtr, kTVMFFIDataType, kTVMFFIDevice, kTVMFFIDLTensorPtr, kTVMFFIRawStr,
         kTVMFFIByteArrayPtr, kTVMFFIObjectRValueRef, kTVMFFISmallStr, kTVMFFISmallBytes, kTVMFFIObject, kTVMFFIStr);
  printf("objects %d %d %d %d %d %d %d %d %d %d %d %d %d %d %d\n", kTVMFFIBytes, kTVMFFIError, kTVMFFIFunction, kTVMFFIShape,
         kTVMFFITensor, kTVMFFIArray, kTVMFFIMap, kTVMFFIModule, kTVMFFIOpaquePyObject, kTVMFFIList, kTVMFFIDict,
         kTVMFFIVisitInterrupt, kTVMFFIBigInt, kTVMFFIStaticObjectEnd, kTVMFFIDynObjectBegin);
  printf("field_flags %d %d %d %d %d %d %d %d %d %d %d %d %d\n", kTVMFFIFieldFlagBitMaskWritable, kTVMFFIFieldFlagBitMaskHasDefault,
         kTVMFFIFieldFlagBitMaskIsStaticMethod, kTVMFFIFieldFlagBitMaskSEqHashIgnore, kTVMFFIFieldFlagBitMaskSEqHashDefPattern,
         kTVMFFIFieldFlagBitMaskDefaultFromFactory, kTVMFFIFieldFlagBitMaskReprOff, kTVMFFIFieldFlagBitMaskCompareOff,
         kTVMFFIFieldFlagBitMaskHashOff, kTVMFFIFieldFlagBitMaskInitOff, kTVMFFIFieldFlagBitMaskKwOnly,
         kTVMFFIFieldFlagBitSetterIsFunctionObj, kTVMFFIFieldFlagBitMaskSEqHashDefSimple);
  printf("seqhash %d %d %d %d %d %d\n", kTVMFFISEqHashKindUnsupported, kTVMFFISEqHashKindTreeNode, kTVMFFISEqHashKindFreeVar,
         kTVMFFISEqHashKindDAGNode, kTVMFFISEqHashKindConstTreeNode, kTVMFFISEqHashKindUniqueInstance);
  printf("deleter %d %d %d\n", kTVMFFIObjectDeleterFlagBitMaskStrong, kTVMFFIObjectDeleterFlagBitMaskWeak, kTVMFFIObjectDeleterFlagBitMaskBoth);
  printf("dlpack %d %d %d %d\n", kDLCPU, kDLCUDA, kDLTrn, kDLBool);
  printf("dtype_codes %d %d %d %d %d %d %d %d %d %d %d %d %d %d %d %d %d %d\n", kDLInt, kDLUInt, kDLFloat,
         kDLOpaqueHandle, kDLBfloat, kDLComplex, kDLBool, kDLFloat8_e3m4, kDLFloat8_e4m3,
         kDLFloat8_e4m3b11fnuz, kDLFloat8_e4m3fn, kDLFloat8_e4m3fnuz, kDLFloat8_e5m2,
         kDLFloat8_e5m2fnuz, kDLFloat8_e8m0fnu, kDLFloat6_e2m3fn, kDLFloat6_e3m2fn, kDLFloat4_e2m1fn);
  printf("stream_handle %zu\n", sizeof(TVMFFIStreamHandle));
  printf("dlpack_version %d %d\n", DLPACK_MAJOR_VERSION, DLPACK_MINOR_VERSION);
  printf("dlpack_flags %llu %llu %llu\n", (unsigned long long)DLPACK_FLAG_BITMASK_READ_ONLY,
         (unsigned long long)DLPACK_FLAG_BITMASK_IS_COPIED,
         (unsigned long long)DLPACK_FLAG_BITMASK_IS_SUBBYTE_TYPE_PADDED);
  return 0;
}
"#;

fn rust_report() -> String {
    use tvm_ffi_sys as sys;
    use tvm_ffi_sys::{field_flags as ff, type_index as ti};
    let mut out = sys::layout_report();
    out += &format!(
        "version {}.{}.{}\n",
        sys::TVM_FFI_VERSION_MAJOR,
        sys::TVM_FFI_VERSION_MINOR,
        sys::TVM_FFI_VERSION_PATCH
    );
    out += &format!(
        "consts {} {} {} {} {} {} {} {} {} {} {} {} {} {} {} {}\n",
        ti::kTVMFFIAny,
        ti::kTVMFFINone,
        ti::kTVMFFIInt,
        ti::kTVMFFIBool,
        ti::kTVMFFIFloat,
        ti::kTVMFFIOpaquePtr,
        ti::kTVMFFIDataType,
        ti::kTVMFFIDevice,
        ti::kTVMFFIDLTensorPtr,
        ti::kTVMFFIRawStr,
        ti::kTVMFFIByteArrayPtr,
        ti::kTVMFFIObjectRValueRef,
        ti::kTVMFFISmallStr,
        ti::kTVMFFISmallBytes,
        ti::kTVMFFIObject,
        ti::kTVMFFIStr
    );
    out += &format!(
        "objects {} {} {} {} {} {} {} {} {} {} {} {} {} {} {}\n",
        ti::kTVMFFIBytes,
        ti::kTVMFFIError,
        ti::kTVMFFIFunction,
        ti::kTVMFFIShape,
        ti::kTVMFFITensor,
        ti::kTVMFFIArray,
        ti::kTVMFFIMap,
        ti::kTVMFFIModule,
        ti::kTVMFFIOpaquePyObject,
        ti::kTVMFFIList,
        ti::kTVMFFIDict,
        ti::kTVMFFIVisitInterrupt,
        ti::kTVMFFIBigInt,
        ti::kTVMFFIStaticObjectEnd,
        ti::kTVMFFIDynObjectBegin
    );
    out += &format!(
        "field_flags {} {} {} {} {} {} {} {} {} {} {} {} {}\n",
        ff::kTVMFFIFieldFlagBitMaskWritable,
        ff::kTVMFFIFieldFlagBitMaskHasDefault,
        ff::kTVMFFIFieldFlagBitMaskIsStaticMethod,
        ff::kTVMFFIFieldFlagBitMaskSEqHashIgnore,
        ff::kTVMFFIFieldFlagBitMaskSEqHashDefPattern,
        ff::kTVMFFIFieldFlagBitMaskDefaultFromFactory,
        ff::kTVMFFIFieldFlagBitMaskReprOff,
        ff::kTVMFFIFieldFlagBitMaskCompareOff,
        ff::kTVMFFIFieldFlagBitMaskHashOff,
        ff::kTVMFFIFieldFlagBitMaskInitOff,
        ff::kTVMFFIFieldFlagBitMaskKwOnly,
        ff::kTVMFFIFieldFlagBitSetterIsFunctionObj,
        ff::kTVMFFIFieldFlagBitMaskSEqHashDefSimple
    );
    out += &format!(
        "seqhash {} {} {} {} {} {}\n",
        sys::kTVMFFISEqHashKindUnsupported,
        sys::kTVMFFISEqHashKindTreeNode,
        sys::kTVMFFISEqHashKindFreeVar,
        sys::kTVMFFISEqHashKindDAGNode,
        sys::kTVMFFISEqHashKindConstTreeNode,
        sys::kTVMFFISEqHashKindUniqueInstance
    );
    out += &format!(
        "deleter {} {} {}\n",
        sys::kTVMFFIObjectDeleterFlagBitMaskStrong,
        sys::kTVMFFIObjectDeleterFlagBitMaskWeak,
        sys::kTVMFFIObjectDeleterFlagBitMaskBoth
    );
    out += &format!(
        "dlpack {} {} {} {}\n",
        sys::kDLCPU,
        sys::kDLCUDA,
        sys::kDLTrn,
        sys::kDLBool
    );
    out += &format!(
        "dtype_codes {} {} {} {} {} {} {} {} {} {} {} {} {} {} {} {} {} {}\n",
        sys::kDLInt,
        sys::kDLUInt,
        sys::kDLFloat,
        sys::kDLOpaqueHandle,
        sys::kDLBfloat,
        sys::kDLComplex,
        sys::kDLBool,
        sys::kDLFloat8_e3m4,
        sys::kDLFloat8_e4m3,
        sys::kDLFloat8_e4m3b11fnuz,
        sys::kDLFloat8_e4m3fn,
        sys::kDLFloat8_e4m3fnuz,
        sys::kDLFloat8_e5m2,
        sys::kDLFloat8_e5m2fnuz,
        sys::kDLFloat8_e8m0fnu,
        sys::kDLFloat6_e2m3fn,
        sys::kDLFloat6_e3m2fn,
        sys::kDLFloat4_e2m1fn
    );
    out += &format!(
        "stream_handle {}\n",
        std::mem::size_of::<sys::TVMFFIStreamHandle>()
    );
    out += &format!(
        "dlpack_version {} {}\n",
        sys::DLPACK_MAJOR_VERSION,
        sys::DLPACK_MINOR_VERSION
    );
    out += &format!(
        "dlpack_flags {} {} {}\n",
        sys::DLPACK_FLAG_BITMASK_READ_ONLY,
        sys::DLPACK_FLAG_BITMASK_IS_COPIED,
        sys::DLPACK_FLAG_BITMASK_IS_SUBBYTE_TYPE_PADDED
    );
    out
}

#[test]
fn sys_layouts_match_the_wheel_headers() {
    let dir = std::env::temp_dir().join(format!("tvm-ffi-abi-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let src = dir.join("layout.c");
    let exe = dir.join("layout");
    std::fs::write(&src, C_PROGRAM).unwrap();
    let cc = std::env::var("CC").unwrap_or_else(|_| "cc".into());
    let status = Command::new(&cc)
        .args(["-std=c11", "-o"])
        .arg(&exe)
        .arg(&src)
        .arg(format!("-I{}", tvm_ffi_sys::build_info::INCLUDEDIR))
        .status()
        .unwrap_or_else(|e| panic!("cannot run the C compiler `{cc}`: {e}"));
    assert!(
        status.success(),
        "compiling the layout program against the wheel's headers failed"
    );
    let output = Command::new(&exe).output().unwrap();
    let c_report = String::from_utf8(output.stdout).unwrap();
    let rust = rust_report();
    for (c_line, r_line) in c_report.lines().zip(rust.lines()) {
        assert_eq!(
            r_line, c_line,
            "tvm_ffi_sys differs from the wheel's c_api.h"
        );
    }
    assert_eq!(c_report.lines().count(), rust.lines().count());
    let _ = std::fs::remove_dir_all(&dir);
}

/// The C signatures of the env API and the tensor view function, one per line, spelled as the
/// Rust declarations are. The C program assigns each function of the header to a pointer of the
/// spelled type (an error with `-Werror` when the header differs); `rust_signatures_match`
/// coerces each Rust declaration to the same spelled type (a compile error when it differs).
const C_SIGNATURES: &str = r#"
#include <tvm/ffi/c_api.h>
#include <tvm/ffi/extra/c_env_api.h>
#define SIG(ret, name, ...) { ret (*p)(__VA_ARGS__) = name; (void)p; }
int main(void) {
  SIG(int, TVMFFIEnvSetStream, int32_t, int32_t, TVMFFIStreamHandle, TVMFFIStreamHandle*)
  SIG(TVMFFIStreamHandle, TVMFFIEnvGetStream, int32_t, int32_t)
  SIG(int, TVMFFIEnvSetDLPackManagedTensorAllocator, DLPackManagedTensorAllocator, int, DLPackManagedTensorAllocator*)
  SIG(DLPackManagedTensorAllocator, TVMFFIEnvGetDLPackManagedTensorAllocator, void)
  SIG(int, TVMFFIEnvTensorAlloc, DLTensor*, TVMFFIObjectHandle*)
  SIG(int, TVMFFIEnvCheckSignals, void)
  SIG(int, TVMFFIEnvRegisterCAPI, const char*, void*)
  SIG(int, TVMFFIEnvModLookupFromImports, TVMFFIObjectHandle, const char*, TVMFFIObjectHandle*)
  SIG(int, TVMFFIEnvModRegisterContextSymbol, const char*, void*)
  SIG(int, TVMFFIEnvModRegisterSystemLibSymbol, const char*, void*)
  SIG(int, TVMFFITensorCreateUnsafeView, TVMFFIObjectHandle, const DLTensor*, TVMFFIObjectHandle*)
  return 0;
}
"#;

#[test]
fn rust_signatures_match() {
    use std::ffi::{c_char, c_int, c_void};
    use tvm_ffi_sys as sys;
    use tvm_ffi_sys::{
        DLPackManagedTensorAllocator, DLTensor, TVMFFIObjectHandle, TVMFFIStreamHandle,
    };
    // Each line fails to compile when the Rust declaration differs from the spelled C type.
    let _: unsafe extern "C" fn(i32, i32, TVMFFIStreamHandle, *mut TVMFFIStreamHandle) -> c_int =
        sys::TVMFFIEnvSetStream;
    let _: unsafe extern "C" fn(i32, i32) -> TVMFFIStreamHandle = sys::TVMFFIEnvGetStream;
    let _: unsafe extern "C" fn(
        DLPackManagedTensorAllocator,
        c_int,
        *mut DLPackManagedTensorAllocator,
    ) -> c_int = sys::TVMFFIEnvSetDLPackManagedTensorAllocator;
    let _: unsafe extern "C" fn() -> DLPackManagedTensorAllocator =
        sys::TVMFFIEnvGetDLPackManagedTensorAllocator;
    let _: unsafe extern "C" fn(*mut DLTensor, *mut TVMFFIObjectHandle) -> c_int =
        sys::TVMFFIEnvTensorAlloc;
    let _: unsafe extern "C" fn() -> c_int = sys::TVMFFIEnvCheckSignals;
    let _: unsafe extern "C" fn(*const c_char, *mut c_void) -> c_int = sys::TVMFFIEnvRegisterCAPI;
    let _: unsafe extern "C" fn(
        TVMFFIObjectHandle,
        *const c_char,
        *mut TVMFFIObjectHandle,
    ) -> c_int = sys::TVMFFIEnvModLookupFromImports;
    let _: unsafe extern "C" fn(*const c_char, *mut c_void) -> c_int =
        sys::TVMFFIEnvModRegisterContextSymbol;
    let _: unsafe extern "C" fn(*const c_char, *mut c_void) -> c_int =
        sys::TVMFFIEnvModRegisterSystemLibSymbol;
    let _: unsafe extern "C" fn(
        TVMFFIObjectHandle,
        *const DLTensor,
        *mut TVMFFIObjectHandle,
    ) -> c_int = sys::TVMFFITensorCreateUnsafeView;
}

#[test]
fn c_signatures_match_the_wheel_headers() {
    let dir = std::env::temp_dir().join(format!("tvm-ffi-sig-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let src = dir.join("signatures.c");
    std::fs::write(&src, C_SIGNATURES).unwrap();
    let cc = std::env::var("CC").unwrap_or_else(|_| "cc".into());
    let output = Command::new(&cc)
        .args(["-std=c11", "-Werror", "-fsyntax-only"])
        .arg(&src)
        .arg(format!("-I{}", tvm_ffi_sys::build_info::INCLUDEDIR))
        .output()
        .unwrap_or_else(|e| panic!("cannot run the C compiler `{cc}`: {e}"));
    assert!(
        output.status.success(),
        "a declaration of tvm_ffi_sys differs from the wheel's headers:\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn env_streams_round_trip() {
    use tvm_ffi_sys as sys;
    let fake = 0x1234usize as sys::TVMFFIStreamHandle;
    let mut previous: sys::TVMFFIStreamHandle = std::ptr::null_mut();
    // SAFETY: the stream table is thread-local plain data; any handle value may be stored.
    unsafe {
        assert_eq!(
            sys::TVMFFIEnvSetStream(sys::kDLCUDA, 3, fake, &mut previous),
            0
        );
        assert!(previous.is_null());
        assert_eq!(sys::TVMFFIEnvGetStream(sys::kDLCUDA, 3), fake);
        assert!(sys::TVMFFIEnvGetStream(sys::kDLCUDA, 2).is_null());
        assert_eq!(
            sys::TVMFFIEnvSetStream(sys::kDLCUDA, 3, previous, &mut previous),
            0
        );
        assert_eq!(previous, fake);
        assert!(sys::TVMFFIEnvGetStream(sys::kDLCUDA, 3).is_null());
    }
}
