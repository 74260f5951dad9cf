//! Reliability regressions: hostile tensors, object graphs of any depth, allocation failure.
//! Each of these took the process down before the fix (an out-of-bounds read, a stack
//! overflow, an abort).
use std::sync::atomic::{AtomicUsize, Ordering};

use tvm_ffi::sys::DLTensor;
use tvm_ffi::{Array, DataType, Device, Map, Object, ObjectRef, TensorView};

fn view_with_byte_offset(data: &mut [f32; 4], shape: &mut [i64; 1], byte_offset: u64) -> DLTensor {
    DLTensor {
        data: data.as_mut_ptr().cast(),
        device: Device::cpu().0,
        ndim: 1,
        dtype: DataType::float(32).0,
        shape: shape.as_mut_ptr(),
        strides: std::ptr::null_mut(),
        byte_offset,
    }
}

#[test]
fn byte_offsets_outside_the_address_space_are_errors_not_reads() {
    let mut data = [1.0f32, 2.0, 3.0, 4.0];
    let mut shape = [4i64];
    // 2**62 lies beyond every user address space; 2**64 - 4 would wrap around to the bytes
    // just before the buffer.
    for offset in [1u64 << 62, u64::MAX - 3, u64::MAX] {
        let dl = view_with_byte_offset(&mut data, &mut shape, offset);
        // SAFETY: shape and data outlive the view; the checks must refuse the offset before
        // any element is read.
        let view = unsafe { TensorView::from_dltensor(&dl) };
        let err = view.check("x").as_slice::<f32>().unwrap_err();
        assert_eq!(err.kind().as_str(), "ValueError");
        assert!(
            err.message()
                .starts_with("`x` addresses bytes beyond the address space"),
            "{offset}: {}",
            err.message()
        );
        assert!(err
            .message()
            .contains(&format!("byte offset {offset}, 16 bytes")));
        // SAFETY: as above; the check fails before any write.
        assert!(unsafe { view.as_mut_slice::<f32>() }.is_err());
    }
    // A valid offset still works (the second half of the buffer).
    let mut shape = [2i64];
    let dl = DLTensor {
        byte_offset: 8,
        ..view_with_byte_offset(&mut data, &mut [4], 0)
    };
    let dl = DLTensor {
        shape: shape.as_mut_ptr(),
        ..dl
    };
    // SAFETY: the view covers the last two elements of `data`.
    let view = unsafe { TensorView::from_dltensor(&dl) };
    assert_eq!(view.as_slice::<f32>().unwrap(), &[3.0, 4.0]);
}

#[test]
fn overflowing_strides_count_as_overlapping_everything() {
    let mut data = [0.0f32; 4];
    let (mut shape, mut strides) = ([i64::MAX, 2], [i64::MAX, i64::MAX]);
    let hostile = DLTensor {
        data: data.as_mut_ptr().cast(),
        device: Device::cpu().0,
        ndim: 2,
        dtype: DataType::float(32).0,
        shape: shape.as_mut_ptr(),
        strides: strides.as_mut_ptr(),
        byte_offset: 0,
    };
    let mut other = [0.0f32; 4];
    let mut other_shape = [4i64];
    let fine = view_with_byte_offset(&mut other, &mut other_shape, 0);
    // SAFETY: only metadata is read; no element access happens.
    let (hostile, fine) = unsafe {
        (
            TensorView::from_dltensor(&hostile),
            TensorView::from_dltensor(&fine),
        )
    };
    assert!(hostile.overlaps(&fine));
    assert_eq!(
        fine.check("y")
            .disjoint_from(&hostile, "x")
            .unwrap_err()
            .message(),
        "`y` must not overlap `x` in memory"
    );
}

static LINKS_DROPPED: AtomicUsize = AtomicUsize::new(0);

/// A node of a linked chain: each holds the next.
#[derive(Object)]
#[ffi_type(key = "rust_tests.ChainLink")]
#[repr(C)]
pub struct ChainLink {
    pub depth: i64,
    pub next: Option<ObjectRef<ChainLink>>,
    #[ffi(skip)]
    pub counter: DropCounter,
}

/// Counts drops, to see that every link of the chain is released.
#[derive(Default)]
pub struct DropCounter;
impl Drop for DropCounter {
    fn drop(&mut self) {
        LINKS_DROPPED.fetch_add(1, Ordering::Relaxed);
    }
}

#[test]
fn releasing_a_chain_of_any_depth_uses_a_bounded_stack() {
    // One million links, released on a thread with a 256 KiB stack: recursion through the
    // deleters would need hundreds of megabytes.
    const LINKS: i64 = 1_000_000;
    let released = std::thread::Builder::new()
        .stack_size(256 << 10)
        .spawn(|| {
            let before = LINKS_DROPPED.load(Ordering::Relaxed);
            let mut head: Option<ObjectRef<ChainLink>> = None;
            for depth in 0..LINKS {
                head = Some(ObjectRef::new(ChainLink {
                    depth,
                    next: head,
                    counter: DropCounter,
                }));
            }
            let head = head.unwrap();
            assert_eq!(head.depth, LINKS - 1);
            assert_eq!(head.next.as_ref().unwrap().depth, LINKS - 2);
            drop(head);
            LINKS_DROPPED.load(Ordering::Relaxed) - before
        })
        .unwrap()
        .join()
        .unwrap();
    assert_eq!(released, LINKS as usize);
}

/// A link whose next link sits in a runtime container (an `ffi.Array`, released by C++).
#[derive(Object)]
#[ffi_type(key = "rust_tests.ArrayLink")]
#[repr(C)]
pub struct ArrayLink {
    pub depth: i64,
    pub next: Array<ObjectRef<ArrayLink>>,
}

#[test]
fn a_chain_through_runtime_containers_is_released_too() {
    // Rust object -> ffi.Array (whose deleter is C++) -> Rust object -> ...: the C++ frames
    // between two Rust objects are few, and the Rust releases are deferred as before.
    const LINKS: i64 = 200_000;
    std::thread::Builder::new()
        .stack_size(256 << 10)
        .spawn(|| {
            let mut head = ObjectRef::new(ArrayLink {
                depth: 0,
                next: Array::new([]).unwrap(),
            });
            for depth in 1..LINKS {
                head = ObjectRef::new(ArrayLink {
                    depth,
                    next: Array::new([head]).unwrap(),
                });
            }
            assert_eq!(head.next.get(0).unwrap().depth, LINKS - 2);
            let weak = head.next.get(0).unwrap().downgrade();
            drop(head);
            assert!(weak.upgrade().is_none());
        })
        .unwrap()
        .join()
        .unwrap();
}

#[test]
fn arrays_beyond_memory_are_memory_errors() {
    let err = Array::new(std::iter::repeat_n(0i64, 1 << 60)).unwrap_err();
    assert_eq!(err.kind().as_str(), "MemoryError");
    let err = Map::new(std::iter::repeat_n((0i64, 0i64), 1 << 60)).unwrap_err();
    assert_eq!(err.kind().as_str(), "MemoryError");
}

#[test]
fn try_reserve_failures_convert_into_memory_errors() {
    fn grow(n: usize) -> tvm_ffi::Result<Vec<u64>> {
        let mut v = Vec::new();
        v.try_reserve_exact(n)?;
        Ok(v)
    }
    let err = grow(usize::MAX / 2).unwrap_err();
    assert_eq!(err.kind().as_str(), "MemoryError");
    assert!(
        err.message().starts_with("cannot allocate"),
        "{}",
        err.message()
    );
    assert!(grow(4).is_ok());
}

/// The leaf of `deferred_releases_keep_the_memory_of_weakly_referenced_objects`: its `Drop`
/// checks a canary, which the memory's reuse would clobber.
#[derive(Object)]
#[ffi_type(key = "rust_tests.CanaryLeaf")]
#[repr(C)]
pub struct CanaryLeaf {
    #[ffi(skip)]
    pub canary: Canary,
}

const CANARY: u64 = 0x5AFE_C0DE_5AFE_C0DE;
static CANARIES_DROPPED: AtomicUsize = AtomicUsize::new(0);
static CANARIES_CLOBBERED: AtomicUsize = AtomicUsize::new(0);

/// A value checked when dropped.
pub struct Canary(u64);
impl Default for Canary {
    fn default() -> Self {
        Canary(CANARY)
    }
}
impl Drop for Canary {
    fn drop(&mut self) {
        // A volatile read: the compiler must not assume the value it wrote.
        // SAFETY: a read of this live (or, before the fix, freed and reused) field.
        let seen = unsafe { std::ptr::read_volatile(&self.0) };
        CANARIES_DROPPED.fetch_add(1, Ordering::Relaxed);
        if seen != CANARY {
            CANARIES_CLOBBERED.fetch_add(1, Ordering::Relaxed);
        }
    }
}

/// What the deepest link holds, dropped in field order: a strong reference to the leaf (its
/// release is deferred at that depth), a weak one (dropped next, or handed to another thread),
/// then a hook that runs before the deferred release does.
#[derive(Default)]
pub struct LeafHolder {
    pub strong: Option<ObjectRef<CanaryLeaf>>,
    pub weak: Option<tvm_ffi::WeakRef<CanaryLeaf>>,
    pub then: std::sync::Mutex<Option<Box<dyn FnOnce() + Send>>>,
}
impl Drop for LeafHolder {
    fn drop(&mut self) {
        self.strong = None;
        self.weak = None;
        if let Some(then) = self.then.lock().unwrap().take() {
            then();
        }
    }
}

/// A link of a chain whose deepest link holds a leaf.
#[derive(Object)]
#[ffi_type(key = "rust_tests.LeafChainLink")]
#[repr(C)]
pub struct LeafChainLink {
    pub next: Option<ObjectRef<LeafChainLink>>,
    #[ffi(skip)]
    pub holder: LeafHolder,
}

/// Reuses freed blocks of the leaf's size (the allocator hands the latest one out first),
/// overwriting them with zeros.
fn scribble_over_freed_leaves() {
    for _ in 0..16 {
        let block: Vec<u64> = vec![0; 4]; // 32 bytes: the size of a `CanaryLeaf` object
        std::hint::black_box(&block);
    }
}

/// A chain of `links` links; the deepest holds the leaf strongly and, unless `weak` is given
/// away, weakly.
fn leaf_chain(
    links: usize,
    leaf: ObjectRef<CanaryLeaf>,
    weak: Option<tvm_ffi::WeakRef<CanaryLeaf>>,
    then: Box<dyn FnOnce() + Send>,
) -> ObjectRef<LeafChainLink> {
    let mut head = ObjectRef::new(LeafChainLink {
        next: None,
        holder: LeafHolder {
            strong: Some(leaf),
            weak,
            then: std::sync::Mutex::new(Some(then)),
        },
    });
    for _ in 1..links {
        head = ObjectRef::new(LeafChainLink {
            next: Some(head),
            holder: LeafHolder::default(),
        });
    }
    head
}

#[test]
fn deferred_releases_keep_the_memory_of_weakly_referenced_objects() {
    // The leaf's release comes at a nesting depth of about 64 and is queued; its last weak
    // reference goes before the queue runs (later in the same cascade, or on another thread
    // while the cascade waits). Its memory must live until the queued payload drop ran.
    for round in 0..20 {
        for links in 60..70 {
            let before = CANARIES_DROPPED.load(Ordering::Relaxed);
            // The weak reference is dropped in the same cascade.
            let leaf = ObjectRef::new(CanaryLeaf {
                canary: Canary::default(),
            });
            let weak = Some(leaf.downgrade());
            drop(leaf_chain(
                links,
                leaf,
                weak,
                Box::new(scribble_over_freed_leaves),
            ));
            // The weak reference is dropped by another thread while the cascade waits.
            let leaf = ObjectRef::new(CanaryLeaf {
                canary: Canary::default(),
            });
            let weak = leaf.downgrade();
            let (give, take) = std::sync::mpsc::channel::<tvm_ffi::WeakRef<CanaryLeaf>>();
            let (done, wait) = std::sync::mpsc::channel::<()>();
            let other = std::thread::spawn(move || {
                drop(take.recv().unwrap());
                done.send(()).unwrap();
            });
            let then = Box::new(move || {
                give.send(weak).unwrap();
                wait.recv().unwrap();
                scribble_over_freed_leaves();
            });
            drop(leaf_chain(links, leaf, None, then));
            other.join().unwrap();
            assert_eq!(
                CANARIES_DROPPED.load(Ordering::Relaxed) - before,
                2,
                "round {round}, {links} links"
            );
            assert_eq!(
                CANARIES_CLOBBERED.load(Ordering::Relaxed),
                0,
                "round {round}, {links} links: a deferred drop ran on freed memory"
            );
        }
    }
}
