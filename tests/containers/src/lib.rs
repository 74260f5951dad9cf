//! Rust functions and an object type over the runtime's containers and big integers, called
//! from Python (`tests/python/test_containers.py`) and C++ (`tests/cpp/containers.cc`): each
//! value type as an argument, a result, a reflected field and a container element.
#![deny(unsafe_code)]

pub mod soundness;

use tvm_ffi::{
    ffi_func, ffi_methods, Any, AnyView, Array, BigInt, Dict, Function, List, Map, Moved, Object,
    Result, Rw, Shape, String,
};

/// Every container kind as a field, with the static type index and schema C++ reports for
/// the same storage (`List<int64_t>` 75, `Dict<..>` 64, `Shape` 69, `BigInt` -1).
#[derive(Object, Clone)]
#[ffi_type(key = "rs_containers.Holder")]
#[repr(C)]
pub struct Holder {
    /// A shape.
    pub shape: Shape,
    /// A list shared with whoever built the holder.
    pub items: List<i64>,
    /// A dict shared likewise.
    pub table: Dict<String, i64>,
    /// An integer of any size.
    pub big: BigInt,
    /// A list of anything.
    #[ffi(default = List::default())]
    pub anys: List,
    /// Shapes by name.
    #[ffi(default = Map::default())]
    pub shapes: Map<String, Shape>,
    /// A writable shape.
    #[ffi(rw, default = Shape::default())]
    pub rw_shape: Rw<Shape>,
    /// An optional shape.
    #[ffi(default = None)]
    pub maybe_shape: Option<Shape>,
}

#[ffi_methods]
impl Holder {
    /// The number of elements of `shape`.
    pub fn numel(&self) -> i64 {
        self.shape.product()
    }

    /// Appends `x` to `items`: every holder of the list sees it.
    pub fn push(&self, x: i64) -> Result<()> {
        self.items.push(x)
    }

    /// The sum of `items` now.
    pub fn total(&self) -> Result<i64> {
        self.items.iter().sum()
    }
}

/// The shape `[0, 1, .., n - 1]`.
#[ffi_func(name = "rs_containers.make_shape")]
pub fn make_shape(n: i64) -> Shape {
    (0..n).collect()
}

/// The dimensions of `shape` as an array.
#[ffi_func(name = "rs_containers.shape_dims")]
pub fn shape_dims(shape: Shape) -> Array<i64> {
    shape.iter().copied().collect()
}

/// The product of the dimensions.
#[ffi_func(name = "rs_containers.shape_numel")]
pub fn shape_numel(shape: Shape) -> i64 {
    shape.product()
}

/// Appends `x` to the caller's list (the same object: the caller sees it).
#[ffi_func(name = "rs_containers.list_append")]
pub fn list_append(list: List<i64>, x: i64) -> Result<()> {
    list.push(x)
}

/// The sum of a list of integers (a `TypeError` for an element of another type).
#[ffi_func(name = "rs_containers.list_sum")]
pub fn list_sum(list: List<i64>) -> Result<i64> {
    list.iter().sum()
}

/// The reference count of an array inside the call: 1 when the caller moved its only
/// reference in (`array._move()` from Python), one more than the caller's when lent.
#[ffi_func(name = "rs_containers.moved_array_count")]
pub fn moved_array_count(array: Moved<Array<i64>>) -> i64 {
    array.into_inner().as_object_ref().strong_count() as i64
}

/// Calls `callee` with a new array `[1, 2]`, moved (`moved = true`) or lent, and returns what
/// it returns, with the array's count after the call (0 once moved: the callee had the only
/// reference).
#[ffi_func(name = "rs_containers.call_with_array")]
pub fn call_with_array(callee: Function, moved: bool) -> Result<Array<i64>> {
    let array = Array::new([1i64, 2])?;
    let weak = array.as_object_ref().downgrade();
    let result: i64 = if moved {
        callee.call_as((Moved::new(array),))?
    } else {
        let result = callee.call_as((&array,))?;
        drop(array);
        result
    };
    let after = weak.upgrade().map_or(0, |a| a.strong_count() as i64);
    Array::new([result, after])
}

/// A new list `[0, .., n - 1]`.
#[ffi_func(name = "rs_containers.make_list")]
pub fn make_list(n: i64) -> Result<List<i64>> {
    List::new(0..n)
}

/// Sets `d[key] = value` in the caller's dict.
#[ffi_func(name = "rs_containers.dict_set")]
pub fn dict_set(d: Dict<String, i64>, key: &str, value: i64) -> Result<()> {
    d.insert(key.into(), value)
}

/// `d[key]`, or `None`.
#[ffi_func(name = "rs_containers.dict_get")]
pub fn dict_get(d: Dict<String, i64>, key: &str) -> Result<Option<i64>> {
    d.try_get(key)
}

/// Removes `key` from the caller's dict; returns its value.
#[ffi_func(name = "rs_containers.dict_pop")]
pub fn dict_pop(d: Dict<String, i64>, key: &str) -> Result<Option<i64>> {
    d.remove(key)
}

/// A new dict `{"k0": 0, ..}` of `n` entries.
#[ffi_func(name = "rs_containers.make_dict")]
pub fn make_dict(n: i64) -> Dict<String, i64> {
    (0..n).map(|i| (String::from(format!("k{i}")), i)).collect()
}

/// `m[key]` looked up in place by Rust, or `None` when absent.
#[ffi_func(name = "rs_containers.map_lookup")]
pub fn map_lookup(m: Map<Any, Any>, key: AnyView) -> Option<Any> {
    m.get(key)
}

/// A function that keeps `m` (a reference Rust holds) and returns its length and the sum of
/// its int values when called: a C++ write to the caller's map must not reach it.
#[ffi_func(name = "rs_containers.keep_map")]
pub fn keep_map(m: Map<Any, Any>) -> Function {
    Function::from_typed(move || -> Array<i64> {
        let total = m.values().filter_map(|v| v.checked_cast::<i64>()).sum();
        [m.len() as i64, total].into_iter().collect()
    })
}

/// The keys of `m` in Rust's iteration order.
#[ffi_func(name = "rs_containers.map_keys")]
pub fn map_keys(m: Map<Any, Any>) -> Array<Any> {
    m.keys().collect()
}

/// `d[key]` looked up in place by Rust, or `None` when absent.
#[ffi_func(name = "rs_containers.dict_lookup")]
pub fn dict_lookup(d: Dict, key: AnyView) -> Result<Option<Any>> {
    d.try_get(key)
}

/// The number of entries of `m` and of `d`, read in place.
#[ffi_func(name = "rs_containers.sizes")]
pub fn sizes(m: Map<Any, Any>, d: Dict) -> Array<i64> {
    [m.len() as i64, d.len() as i64].into_iter().collect()
}

/// The decimal text of an integer of any size.
#[ffi_func(name = "rs_containers.bigint_str")]
pub fn bigint_str(x: BigInt) -> std::string::String {
    x.to_string()
}

/// The integer written `text` in decimal (`ValueError` otherwise).
#[ffi_func(name = "rs_containers.bigint_parse")]
pub fn bigint_parse(text: &str) -> Result<BigInt> {
    text.parse()
}

/// `-x` for any integer (through the decimal text, to stay exact at any size).
#[ffi_func(name = "rs_containers.bigint_neg")]
pub fn bigint_neg(x: BigInt) -> Result<BigInt> {
    let text = x.to_string();
    match text.strip_prefix('-') {
        Some(abs) => abs.parse(),
        None => format!("-{text}").parse(),
    }
}

/// A `u64` in, the same out (Python passes `2**63 ..` as an `ffi.BigInt`).
#[ffi_func(name = "rs_containers.u64_echo")]
pub fn u64_echo(x: u64) -> u64 {
    x
}

/// An `i128` in, the same out.
#[ffi_func(name = "rs_containers.i128_echo")]
pub fn i128_echo(x: i128) -> i128 {
    x
}

/// Big integers as container elements: each value of `xs` doubled, exactly.
#[ffi_func(name = "rs_containers.bigint_double_all")]
pub fn bigint_double_all(xs: Array<BigInt>) -> Result<List<BigInt>> {
    xs.iter()
        .map(|x| {
            x.to_i128()
                .and_then(|v| v.checked_mul(2))
                .map(BigInt::from)
                .ok_or_else(|| tvm_ffi::Error::value_error(format!("{x} * 2 exceeds i128")))
        })
        .collect::<Result<Vec<_>>>()
        .and_then(List::new)
}

/// Shapes as container elements: the number of elements of each.
#[ffi_func(name = "rs_containers.numels")]
pub fn numels(shapes: Map<String, Shape>) -> Dict<String, i64> {
    shapes.iter().map(|(k, s)| (k, s.product())).collect()
}

/// The length of a list of anything.
#[ffi_func(name = "rs_containers.list_len")]
pub fn list_len(list: List) -> usize {
    list.len()
}

/// How many threads `replace_in_background` started have finished.
static BACKGROUND_DONE: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);

/// On a new thread (which does not hold the GIL), replaces element 0 of `list` `rounds` times
/// with what `make` returns; `background_done` counts the threads that finished.
#[ffi_func(name = "rs_containers.replace_in_background")]
pub fn replace_in_background(list: List, make: Function, rounds: i64) {
    std::thread::spawn(move || {
        for _ in 0..rounds {
            let value = make.call(()).unwrap();
            list.set(0, value).unwrap();
        }
        BACKGROUND_DONE.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
    });
}

/// See `replace_in_background`.
#[ffi_func(name = "rs_containers.background_done")]
pub fn background_done() -> usize {
    BACKGROUND_DONE.load(std::sync::atomic::Ordering::SeqCst)
}
