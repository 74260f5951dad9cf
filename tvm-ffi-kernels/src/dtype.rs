//! Element types a kernel dispatches over: the numbers of `tvm_ffi` (`f32`, `f64`, integers,
//! [`f16`](struct@f16), [`bf16`]) and the fp8 kinds as byte-sized types, with [`dispatch_dtype!`]
//! choosing the kernel instance for a tensor's dtype.
//!
//! [`dispatch_dtype!`]: crate::dispatch_dtype
use tvm_ffi::{DataType, Element, Error};

pub use tvm_ffi::half::{bf16, f16};

macro_rules! fp8 {
    ($($(#[$doc:meta])* $name:ident => $dtype:expr;)*) => {$(
        $(#[$doc])*
        /// Stored as its byte: Rust has no arithmetic for it; kernels convert on the device.
        #[repr(transparent)]
        #[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
        pub struct $name(pub u8);

        // SAFETY: repr(transparent) over u8: one byte, no padding, every bit pattern valid.
        unsafe impl Element for $name {
            const DTYPE: DataType = $dtype;
        }

        // SAFETY: a byte, passed as the kernel's 8-bit parameter.
        unsafe impl crate::KernelParam for $name {}
    )*};
}

fp8! {
    /// `float8_e4m3fn` (`torch.float8_e4m3fn`, CUDA `__nv_fp8_e4m3`).
    Float8E4M3FN => DataType::FLOAT8_E4M3FN;
    /// `float8_e5m2` (`torch.float8_e5m2`, CUDA `__nv_fp8_e5m2`).
    Float8E5M2 => DataType::FLOAT8_E5M2;
    /// `float8_e4m3fnuz` (`torch.float8_e4m3fnuz`).
    Float8E4M3FNUZ => DataType::FLOAT8_E4M3FNUZ;
    /// `float8_e5m2fnuz` (`torch.float8_e5m2fnuz`).
    Float8E5M2FNUZ => DataType::FLOAT8_E5M2FNUZ;
    /// `float8_e8m0fnu` (`torch.float8_e8m0fnu`, the MX scale type).
    Float8E8M0FNU => DataType::FLOAT8_E8M0FNU;
}

/// The `TypeError` of [`dispatch_dtype!`](crate::dispatch_dtype) for a dtype outside the
/// accepted list: "`x` must have dtype float32, float16 or bfloat16, got int32".
pub fn dtype_mismatch(arg: &str, got: DataType, accepted: &[DataType]) -> Error {
    let names: Vec<String> = accepted.iter().map(|d| d.to_string()).collect();
    let list = match names.split_last() {
        Some((last, [])) => last.clone(),
        Some((last, rest)) => format!("{} or {last}", rest.join(", ")),
        None => "(none)".to_string(),
    };
    Error::type_error(format!("`{arg}` must have dtype {list}, got {got}"))
}

/// Runs `$body` with the type `$T` bound to the element type matching `$dtype` among the
/// listed types (each an [`Element`]), or evaluates to the `TypeError` naming the argument
/// `$arg` and the accepted dtypes. `$body` evaluates to a `tvm_ffi::Result`; so does the macro.
///
/// ```
/// use tvm_ffi::{DataType, Result, Tensor};
/// use tvm_ffi_kernels::dispatch_dtype;
/// use tvm_ffi_kernels::dtype::{bf16, f16};
///
/// fn element_size(x: &Tensor) -> Result<usize> {
///     dispatch_dtype!(x.dtype(), "x", [f32, f16, bf16], |T| Ok(std::mem::size_of::<T>()))
/// }
/// let x = Tensor::from_vec(vec![1i32, 2], &[2]).unwrap();
/// let err = element_size(&x).unwrap_err();
/// assert_eq!(err.kind(), "TypeError");
/// assert_eq!(err.message(), "`x` must have dtype float32, float16 or bfloat16, got int32");
/// let y = Tensor::from_vec(vec![f16::ONE], &[1]).unwrap();
/// assert_eq!(element_size(&y).unwrap(), 2);
/// ```
#[macro_export]
macro_rules! dispatch_dtype {
    ($dtype:expr, $arg:expr, [$($ty:ty),+ $(,)?], |$T:ident| $body:expr) => {{
        let __dtype: $crate::__private::DataType = $dtype;
        'dispatch: {
            $(
                if __dtype == <$ty as $crate::__private::Element>::DTYPE {
                    #[allow(non_camel_case_types, dead_code)]
                    type $T = $ty;
                    break 'dispatch ($body);
                }
            )+
            ::core::result::Result::Err($crate::dtype::dtype_mismatch(
                $arg,
                __dtype,
                &[$(<$ty as $crate::__private::Element>::DTYPE),+],
            ))
        }
    }};
}

#[cfg(test)]
mod tests {
    use super::*;
    use tvm_ffi::Result;

    fn name_of(dtype: DataType) -> Result<&'static str> {
        dispatch_dtype!(
            dtype,
            "input",
            [f32, f16, bf16, i8, u8, i32, i64, Float8E4M3FN, Float8E5M2],
            |T| Ok(std::any::type_name::<T>())
        )
    }

    #[test]
    fn each_listed_dtype_selects_its_type() {
        assert_eq!(name_of(DataType::FLOAT32).unwrap(), "f32");
        assert!(name_of(DataType::FLOAT16).unwrap().ends_with("f16"));
        assert!(name_of(DataType::BFLOAT16).unwrap().ends_with("bf16"));
        assert_eq!(name_of(DataType::INT8).unwrap(), "i8");
        assert_eq!(name_of(DataType::UINT8).unwrap(), "u8");
        assert_eq!(name_of(DataType::INT64).unwrap(), "i64");
        assert!(name_of(DataType::FLOAT8_E4M3FN)
            .unwrap()
            .ends_with("Float8E4M3FN"));
        assert!(name_of(DataType::FLOAT8_E5M2)
            .unwrap()
            .ends_with("Float8E5M2"));
    }

    #[test]
    fn other_dtypes_are_refused_naming_the_argument_and_the_list() {
        let err = name_of(DataType::FLOAT64).unwrap_err();
        assert_eq!(err.kind(), "TypeError");
        assert_eq!(
            err.message(),
            "`input` must have dtype float32, float16, bfloat16, int8, uint8, int32, int64, \
             float8_e4m3fn or float8_e5m2, got float64"
        );
        // Vector dtypes are not their scalar type.
        assert!(name_of(DataType::FLOAT32.with_lanes(4)).is_err());
        let one: Result<()> = dispatch_dtype!(DataType::INT16, "w", [f32], |T| {
            let _ = std::mem::size_of::<T>();
            Ok(())
        });
        assert_eq!(
            one.unwrap_err().message(),
            "`w` must have dtype float32, got int16"
        );
    }

    #[test]
    fn fp8_types_are_one_byte_elements() {
        let t =
            tvm_ffi::Tensor::from_vec(vec![Float8E4M3FN(0x38), Float8E4M3FN(0x40)], &[2]).unwrap();
        assert_eq!(t.dtype(), DataType::FLOAT8_E4M3FN);
        assert_eq!(t.as_bytes().unwrap(), &[0x38, 0x40]);
        assert_eq!(t.as_slice::<Float8E4M3FN>().unwrap()[1], Float8E4M3FN(0x40));
    }
}
