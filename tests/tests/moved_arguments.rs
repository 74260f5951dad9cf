//! Moved arguments (`Moved<T>`, C++ `RValueRef<T>`): the callee takes the caller's
//! reference; a lent argument is shared; a failed conversion leaves the reference with the
//! caller, who releases it; of several threads converting one moved argument, exactly one owns
//! it.
use tvm_ffi::{Any, Array, Function, Moved};

fn strong_count_of_moved() -> Function {
    Function::from_typed(|array: Moved<Array<i64>>| -> i64 {
        array.into_inner().as_object_ref().strong_count() as i64
    })
}

#[test]
fn a_moved_array_is_the_callee_s_only_reference() {
    let count = strong_count_of_moved();
    let moved = Array::new([1i64, 2]).unwrap();
    assert_eq!(moved.as_object_ref().strong_count(), 1);
    let weak = moved.as_object_ref().downgrade();
    assert_eq!(count.call_as::<i64, _>((Moved::new(moved),)).unwrap(), 1);
    // The callee's reference was the last one.
    assert!(weak.upgrade().is_none());

    let lent = Array::new([3i64, 4]).unwrap();
    assert_eq!(count.call_as::<i64, _>((&lent,)).unwrap(), 2);
    assert_eq!(lent.as_object_ref().strong_count(), 1);
}

#[test]
fn a_moved_value_that_does_not_convert_stays_with_the_caller_who_releases_it() {
    let wants_strings =
        Function::from_typed(|a: Moved<Array<tvm_ffi::String>>| -> i64 { a.len() as i64 });
    let array = Array::new([1i64, 2]).unwrap();
    let kept = array.clone();
    let err = wants_strings
        .call((Moved::new(array),))
        .expect_err("ints are no strings");
    assert_eq!(err.kind(), "TypeError");
    assert_eq!(
        err.message(),
        "Mismatched type on argument #0 when calling: `(0: Array<str>) -> int`. Expected \
         `Array<str>` but got `RValueRef<Array[index 0: int]>`"
    );
    // The reference the call held is released: only `kept` remains.
    assert_eq!(kept.as_object_ref().strong_count(), 1);
}

#[test]
fn an_any_parameter_takes_a_moved_object() {
    let keep = Function::from_packed(|args| {
        let owned = args[0].to_owned()?;
        // The second read finds the slot empty.
        let again = args[0].to_owned().expect_err("moved once");
        assert_eq!(again.message(), "moved argument already taken");
        Ok(owned)
    });
    let array = Array::new([5i64]).unwrap();
    let weak = array.as_object_ref().downgrade();
    let back: Array<i64> = keep.call_as((Moved::new(array),)).unwrap();
    assert_eq!(back.as_object_ref().strong_count(), 1);
    assert_eq!(back.to_vec(), [5]);
    drop(back);
    assert!(weak.upgrade().is_none());
}

#[test]
fn a_moved_plain_value_is_passed_as_it_is() {
    let double = Function::from_typed(|x: Moved<i64>| -> i64 { 2 * x.into_inner() });
    assert_eq!(double.call_as::<i64, _>((Moved::new(21i64),)).unwrap(), 42);
    let echo = Function::from_packed(|args| args[0].to_owned());
    let back: tvm_ffi::String = echo
        .call_as((Moved::new(tvm_ffi::String::new("short")),))
        .unwrap();
    assert_eq!(&*back, "short");
}

/// Views are `Copy + Send`: a callee may convert one moved argument on several threads. One of
/// them owns the reference, the others find the slot empty; the count ends right (a plain
/// read-then-clear, as the runtime's own move does, lets two threads both take it and release
/// it twice).
#[test]
fn threads_racing_for_one_moved_argument_take_it_once() {
    const THREADS: usize = 2;
    let race = Function::from_packed(|args| {
        let view = args[0];
        let start = std::sync::Barrier::new(THREADS);
        let taken: Vec<bool> = std::thread::scope(|scope| {
            let handles: Vec<_> = (0..THREADS)
                .map(|i| {
                    let start = &start;
                    scope.spawn(move || {
                        start.wait();
                        if i % 2 == 0 {
                            view.to_owned().is_ok()
                        } else {
                            view.cast::<Moved<Array<i64>>>().is_ok()
                        }
                    })
                })
                .collect();
            handles.into_iter().map(|h| h.join().unwrap()).collect()
        });
        Ok(Any::new(taken.iter().filter(|t| **t).count() as i64))
    });
    for _ in 0..2000 {
        let array = Array::new([1i64, 2, 3]).unwrap();
        let weak = array.as_object_ref().downgrade();
        let takers: i64 = race.call_as((Moved::new(array),)).unwrap();
        assert_eq!(takers, 1);
        assert!(
            weak.upgrade().is_none(),
            "released exactly once, by its taker"
        );
    }
}

/// The holder of a moved argument is public (`IntoArg`), so safe code can make views of it
/// while a callee's thread takes the object: a view is the slot's address (the slot is never
/// read to make one), and a view made after the take finds the slot empty, never a stale
/// object or a `None`.
#[test]
fn views_of_a_holder_made_while_another_thread_takes_it_stay_consistent() {
    use tvm_ffi::IntoArg;
    type MovedArray = Moved<Array<i64>>;
    for _ in 0..200 {
        let array = Array::new([1i64]).unwrap();
        let weak = array.as_object_ref().downgrade();
        let holder = MovedArray::new(array).into_holder().unwrap();
        let first = <MovedArray as IntoArg>::view(&holder);
        let taken = std::thread::scope(|scope| {
            let taker = scope.spawn(move || first.to_owned().is_ok());
            for _ in 0..50 {
                assert_eq!(
                    <MovedArray as IntoArg>::view(&holder).type_key(),
                    "ObjectRValueRef"
                );
            }
            taker.join().unwrap()
        });
        assert!(taken);
        let again = <MovedArray as IntoArg>::view(&holder);
        assert_eq!(
            again.to_owned().unwrap_err().message(),
            "moved argument already taken"
        );
        assert!(again.cast::<MovedArray>().is_err());
        drop(holder);
        assert!(
            weak.upgrade().is_none(),
            "the taker's reference was the last one"
        );
    }
    // A plain value is passed as it is, however often it is viewed.
    let holder = Moved::new(()).into_holder().unwrap();
    assert!(<Moved<()> as IntoArg>::view(&holder).is_none());
    assert!(<Moved<()> as IntoArg>::view(&holder).is_none());
}

/// A callee that forwards its moved argument (`args[0]`, a view) to another function lends
/// the move on: a callee that takes it owns it; one that does not leaves it where it was.
#[test]
fn a_forwarded_moved_argument_goes_back_unless_the_next_callee_takes_it() {
    let peek = Function::from_packed(|args| Ok(Any::new(args[0].type_key())));
    let take = Function::from_packed(|args| args[0].to_owned());
    let forward = Function::from_packed(move |args| {
        let seen: tvm_ffi::String = peek.call_as((args[0],))?;
        assert_eq!(&*seen, "ObjectRValueRef");
        // Still here: this callee can take it itself, or pass it on.
        take.call((args[0],))
    });
    let array = Array::new([4i64, 5]).unwrap();
    let weak = array.as_object_ref().downgrade();
    let back: Array<i64> = forward.call_as((Moved::new(array),)).unwrap();
    assert_eq!(back.as_object_ref().strong_count(), 1);
    drop(back);
    assert!(weak.upgrade().is_none());
}

/// The runtime's own functions (C++) move with a plain read and clear: two threads of one
/// callee forwarding the same moved argument to one (`ffi.Array` keeps its arguments) must not
/// both get the object. Each call forwards through a slot of its own, taken atomically: one
/// thread gets the object, the other an error. (Before, the two C++ moves raced: a double
/// release, heap corruption within a few thousand rounds.)
#[test]
fn threads_forwarding_one_moved_argument_to_cpp_move_it_once() {
    const THREADS: usize = 2;
    let make_array = Function::get_global("ffi.Array").expect("ffi.Array");
    let race = Function::from_packed(move |args| {
        let view = args[0];
        let start = std::sync::Barrier::new(THREADS);
        let got: Vec<Option<Array<Any>>> = std::thread::scope(|scope| {
            let handles: Vec<_> = (0..THREADS)
                .map(|_| {
                    let (start, make_array) = (&start, &make_array);
                    scope.spawn(move || {
                        start.wait();
                        match make_array.call((view,)) {
                            Ok(array) => Some(array.cast::<Array<Any>>().unwrap()),
                            Err(err) => {
                                assert_eq!(err.message(), "moved argument already taken");
                                None
                            }
                        }
                    })
                })
                .collect();
            handles.into_iter().map(|h| h.join().unwrap()).collect()
        });
        let made: Vec<&Array<Any>> = got.iter().flatten().collect();
        assert_eq!(made.len(), 1, "exactly one thread moves the argument");
        Ok(Any::new(made[0].clone()))
    });
    for _ in 0..5000 {
        let array = Array::new([1i64, 2, 3]).unwrap();
        let weak = array.as_object_ref().downgrade();
        let outer: Array<Any> = race.call_as((Moved::new(array),)).unwrap();
        let inner = outer.get(0).unwrap().cast::<Array<i64>>().unwrap();
        assert_eq!(inner.to_vec(), [1, 2, 3]);
        assert_eq!(inner.as_object_ref().strong_count(), 2); // `outer`'s and this one
        drop((outer, inner));
        assert!(weak.upgrade().is_none());
    }
}
