//! `Option<TensorView>` as an `#[ffi_func]` parameter (FlashInfer's optional tensors, such as a
//! bias or a scale): `None` and a tensor both arrive, and anything else is refused with the
//! argument's position and type named, as for any typed parameter.
use tvm_ffi::{ffi_func, Function, Result, Tensor, TensorView};

/// The sum of `x`, plus the sum of `bias` when given.
#[ffi_func(name = "kernels_toolkit_test.sum_with_bias")]
fn sum_with_bias(x: TensorView, bias: Option<TensorView>) -> Result<f64> {
    let sum = |t: TensorView| -> Result<f64> {
        Ok(t.check("x")
            .as_slice::<f32>()?
            .iter()
            .map(|&v| f64::from(v))
            .sum())
    };
    Ok(sum(x)? + bias.map(sum).transpose()?.unwrap_or(0.0))
}

#[test]
fn optional_tensor_arguments_accept_none_and_tensors() {
    let f = Function::get_global("kernels_toolkit_test.sum_with_bias").unwrap();
    let x = Tensor::from_vec(vec![1f32, 2.0], &[2]).unwrap();
    let bias = Tensor::from_vec(vec![10f32], &[1]).unwrap();
    let none: Option<TensorView> = None;
    let without = f.call((x.view(), none)).unwrap();
    assert_eq!(without.cast::<f64>().unwrap(), 3.0);
    let with = f.call((x.view(), Some(bias.view()))).unwrap();
    assert_eq!(with.cast::<f64>().unwrap(), 13.0);
    let err = f.call((x.view(), 5i64)).unwrap_err();
    assert_eq!(err.kind(), "TypeError");
    assert!(
        err.message().contains("Mismatched type on argument #1")
            && err.message().contains("Optional<DLTensor*>"),
        "{}",
        err.message()
    );
}
