//! `==` on the containers (contents for the immutable `Array` and `Map`, identity for the
//! shared, mutable `List` and `Dict`), and `==` and `Hash` on [`Any`] and [`AnyView`]: the
//! runtime's `AnyEqual` and `AnyHash`, the key
//! equality of `ffi.Map` and `ffi.Dict`. Strings and bytes compare by content (inline and heap
//! forms alike), `ffi.BigInt` by value, every other value by identity (plain data by its bits,
//! objects by address), except objects whose type registers its own `__any_equal__` /
//! `__any_hash__`, which the runtime compares.
use std::hash::{Hash, Hasher};

use super::array::Array;
use super::dict::Dict;
use super::hash::KeyProbe;
use super::list::List;
use super::map::Map;
use crate::base::value::{Any, AnyView};

/// `AnyEqual(a, b)`.
fn any_equal(a: &AnyView<'_>, b: &AnyView<'_>) -> bool {
    match KeyProbe::new(a) {
        // SAFETY: `b` is a live value (an object it holds outlives the borrow).
        Some(probe) => unsafe { probe.matches(b.as_raw()) },
        // A type with its own equality: only the runtime can compare (a one-key map built and
        // probed by the runtime's own functions).
        None => a.type_index() == b.type_index() && runtime_equal(a, b),
    }
}

#[cold]
fn runtime_equal(a: &AnyView<'_>, b: &AnyView<'_>) -> bool {
    let Ok(key) = a.to_owned() else {
        return false;
    };
    let map: Map<Any, Any> = [(key, Any::none())].into_iter().collect();
    map.contains_key(*b)
}

/// `AnyHash(value)`, or for a type with its own hash (which only the runtime calls) its type
/// index: equal values still hash alike, since such values are only ever equal to values of
/// their own type.
fn any_hash(value: &AnyView<'_>) -> u64 {
    match KeyProbe::new(value) {
        Some(probe) => probe.hash(),
        None => value.type_index() as u64,
    }
}

impl PartialEq for AnyView<'_> {
    /// The runtime's `AnyEqual`: see [`AnyView`]'s `Hash`.
    fn eq(&self, other: &Self) -> bool {
        any_equal(self, other)
    }
}

impl Eq for AnyView<'_> {}

impl Hash for AnyView<'_> {
    fn hash<H: Hasher>(&self, state: &mut H) {
        state.write_u64(any_hash(self));
    }
}

impl PartialEq for Any {
    /// The runtime's `AnyEqual` (the key equality of `ffi.Map`): strings and bytes by content,
    /// `BigInt` by value, everything else by identity.
    fn eq(&self, other: &Self) -> bool {
        any_equal(self.as_view(), other.as_view())
    }
}

impl Eq for Any {}

impl Hash for Any {
    fn hash<H: Hasher>(&self, state: &mut H) {
        state.write_u64(any_hash(self.as_view()));
    }
}

impl PartialEq<AnyView<'_>> for Any {
    fn eq(&self, other: &AnyView<'_>) -> bool {
        any_equal(self.as_view(), other)
    }
}

impl PartialEq<Any> for AnyView<'_> {
    fn eq(&self, other: &Any) -> bool {
        any_equal(self, other.as_view())
    }
}

impl<T> PartialEq for Array<T> {
    /// Element by element, each compared as [`Any`]'s `==` compares (the runtime's `AnyEqual`:
    /// strings by content, objects by identity).
    fn eq(&self, other: &Self) -> bool {
        self.as_object_ref().ptr_eq(other.as_object_ref()) || self.as_views() == other.as_views()
    }
}

impl<K, V> PartialEq for Map<K, V> {
    /// The same keys mapped to equal values, keys and values compared as [`Any`]'s `==`
    /// compares (insertion order does not matter).
    fn eq(&self, other: &Self) -> bool {
        if self.as_object_ref().ptr_eq(other.as_object_ref()) {
            return true;
        }
        self.len() == other.len()
            && self
                .iter_views()
                .all(|(key, value)| match other.find_view(&key) {
                    Some(Ok(found)) => *found == value,
                    Some(Err(())) => other
                        .get_by_runtime(&key)
                        .is_some_and(|found| found == value),
                    None => false,
                })
    }
}

impl<T> PartialEq for List<T> {
    /// Identity, as [`ObjectRef`](crate::ObjectRef)'s `==`: a list is shared and mutable (any
    /// language may change it at any time); compare contents with [`List::to_vec`].
    fn eq(&self, other: &Self) -> bool {
        self.as_object_ref().ptr_eq(other.as_object_ref())
    }
}

impl<K, V> PartialEq for Dict<K, V> {
    /// Identity, as [`ObjectRef`](crate::ObjectRef)'s `==`: a dict is shared and mutable;
    /// compare contents with [`Dict::entries`].
    fn eq(&self, other: &Self) -> bool {
        self.as_object_ref().ptr_eq(other.as_object_ref())
    }
}

#[cfg(test)]
mod tests {
    use std::collections::HashSet;

    use crate::base::value::{Any, BigInt, String};

    #[test]
    fn equality_and_hash_follow_the_runtime_key_semantics() {
        // Content for strings (small and heap forms), bits for plain data.
        assert_eq!(Any::new("abc"), Any::new(String::from("abc")));
        assert_eq!(
            Any::new("a long string, on the heap"),
            Any::new("a long string, on the heap")
        );
        assert_ne!(Any::new("abc"), Any::new("abd"));
        assert_eq!(Any::new(5i64), Any::new(5i64));
        assert_ne!(Any::new(5i64), Any::new(5.0f64));
        assert_ne!(Any::new(1i64), Any::new(true));
        assert_eq!(
            Any::new(BigInt::from(u128::MAX)),
            Any::new(BigInt::from(u128::MAX))
        );
        // Objects by identity.
        let list = crate::data::container::List::<i64>::new([]).unwrap();
        let same = Any::new(list.clone());
        assert_eq!(Any::new(list), same);
        assert_ne!(
            Any::new(crate::data::container::List::<i64>::new([]).unwrap()),
            Any::new(crate::data::container::List::<i64>::new([]).unwrap())
        );
        // Views compare with owners, and hashing agrees with equality.
        let owned = Any::new("key");
        assert!(owned == *owned.as_view());
        let set: HashSet<Any> = [Any::new("k"), Any::new(String::from("k")), Any::new(1i64)]
            .into_iter()
            .collect();
        assert_eq!(set.len(), 2);
    }

    #[test]
    fn types_with_their_own_equality_are_compared_by_the_runtime() {
        // `ffi.StructuralKey` registers `__any_equal__` (structural equality of its key).
        let make = crate::call::function::Function::get_global("ffi.StructuralKey").unwrap();
        let key = |items: &[i64]| {
            let array: crate::data::container::Array<i64> = items.iter().copied().collect();
            make.call((array,)).unwrap()
        };
        let a = key(&[1, 2]);
        assert_eq!(a, key(&[1, 2]));
        assert_ne!(a, key(&[1, 3]));
        assert_ne!(a, Any::new(1i64));
        let set: HashSet<Any> = [key(&[1, 2]), key(&[1, 2]), key(&[3])]
            .into_iter()
            .collect();
        assert_eq!(set.len(), 2);
    }
    #[test]
    fn containers_compare_immutable_contents_and_mutable_identity() {
        use crate::data::container::{Array, Dict, List, Map};
        let a: Array<Any> = [Any::new(1i64), Any::new("s")].into_iter().collect();
        let b: Array<Any> = [Any::new(1i64), Any::new(String::from("s"))]
            .into_iter()
            .collect();
        let c: Array<Any> = [Any::new(1i64)].into_iter().collect();
        assert!(a == b && a != c);
        let m1: Map<String, i64> = [("x".into(), 1i64), ("y".into(), 2)].into_iter().collect();
        let m2: Map<String, i64> = [("y".into(), 2i64), ("x".into(), 1)].into_iter().collect();
        let m3: Map<String, i64> = [("x".into(), 1i64), ("y".into(), 3)].into_iter().collect();
        assert!(m1 == m2 && m1 != m3);
        let l1 = List::new([1i64]).unwrap();
        let l2 = List::new([1i64]).unwrap();
        assert!(l1 == l1.clone() && l1 != l2);
        let d1 = Dict::<i64, i64>::new([(1, 1)]).unwrap();
        assert!(d1 == d1.clone() && d1 != Dict::new([(1, 1)]).unwrap());
    }
}
