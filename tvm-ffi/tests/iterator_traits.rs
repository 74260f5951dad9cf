//! Iterators are `Clone` and `Debug`, and `Send` where their container is (Rust API
//! Guidelines C-COMMON-TRAITS, C-SEND-SYNC).
use tvm_ffi::container::{ArrayIter, DictIter, ListIter, MapIter, MapViews};
use tvm_ffi::{Array, Dict, List, Map};

fn send_clone_debug<T: Send + Clone + std::fmt::Debug>(_: &T) {}

#[test]
fn iterators_are_send_clone_and_debug() {
    let array: Array<i64> = [1i64, 2, 3].into_iter().collect();
    let list = List::new([1i64, 2]).unwrap();
    let map: Map<i64, i64> = [(1i64, 10i64)].into_iter().collect();
    let dict = Dict::<i64, i64>::new([(1, 10)]).unwrap();
    let a: ArrayIter<'_, i64> = array.iter();
    let l: ListIter<'_, i64> = list.iter();
    let m: MapIter<'_, i64, i64> = map.iter();
    let v: MapViews<'_> = map.iter_views();
    let d: DictIter<'_, i64, i64> = dict.iter();
    send_clone_debug(&a);
    send_clone_debug(&l);
    send_clone_debug(&m);
    send_clone_debug(&v);
    send_clone_debug(&d);
    // A clone iterates independently of the original.
    let mut a = a;
    assert_eq!(a.next(), Some(1));
    let rest: Vec<i64> = a.clone().collect();
    assert_eq!((rest, a.count()), (vec![2, 3], 2));
    // And on another thread.
    let total = std::thread::scope(|s| s.spawn(|| array.iter().sum::<i64>()).join().unwrap());
    assert_eq!(total, 6);
    assert_eq!(format!("{:?}", list.iter()), "ListIter { next: 0, len: 2 }");
}
