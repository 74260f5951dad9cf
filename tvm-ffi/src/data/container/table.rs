//! The hash table shared by `ffi.Map` and `ffi.Dict` (C++ `MapBaseObj`,
//! `tvm/ffi/container/map_base.h`), read in place: length, lookup and iteration without a call
//! into the runtime, exactly as C++ reads it.
//!
//! Layout (offsets from the object header, checked against the wheel's headers):
//!
//! | field | offset | |
//! |---|---|---|
//! | `data_` | 24 | the storage |
//! | `size_` | 32 | number of entries |
//! | `slots_` | 40 | bit 63 set: *small* layout; the low bits: the slot count |
//! | `fib_shift_` | 56 | dense layout only: the Fibonacci-hashing shift |
//! | `iter_list_head_` | 64 | dense layout only: the first entry in insertion order |
//!
//! A small table is `size_` key/value pairs (32 bytes each) in insertion order, searched
//! linearly. A dense table is `ceil(slots / 16)` blocks of 16 metadata bytes and 16 items (key,
//! value, `prev`, `next`: 48 bytes); a key's chain starts at the slot its Fibonacci hash picks
//! (when that slot's metadata marks a chain head) and follows the probe distances the
//! metadata bytes name; iteration follows the `next` links from `iter_list_head_`.
//!
//! The layout is private to the runtime's C++ headers and only its major.minor version is
//! checked, so it is verified once, at the first in-place read, against the runtime's own
//! functions: tables of several sizes built by `ffi.Map` and `ffi.Dict` are read in place and
//! compared with `ffi.MapSize` / `ffi.MapGetItem` (and the Dict ones). When they disagree, no
//! table is ever read in place: [`Table::new`] returns `None` and `Map` and `Dict` read
//! through the runtime's own functions instead (`ffi.MapSize`, `ffi.MapGetItemOrMissing`,
//! `ffi.MapForwardIterFunctor` and the Dict ones; see [`runtime_len`] and
//! [`runtime_entries`]): slower, never wrong. When they agree, the cost is one load of a
//! cached verdict.
use std::marker::PhantomData;
use std::ptr::NonNull;
use std::sync::atomic::{AtomicU8, Ordering};

use super::hash::KeyProbe;
use crate::abi::sys::{type_index as ti, TVMFFIAny, TVMFFIObject};
use crate::base::value::{Any, AnyView};
use crate::call::function::{Function, GlobalCache};

const DATA: usize = 24;
const SIZE: usize = 32;
const SLOTS: usize = 40;
const FIB_SHIFT: usize = 56;
const ITER_LIST_HEAD: usize = 64;

/// `sizeof(SmallMapBaseObj)`: a small table keeps its entries right after it.
const SMALL_DATA: usize = 56;
const SMALL_TAG: u64 = 1 << 63;
const BLOCK_CAP: u64 = 16;
const ITEM_SIZE: usize = 48;
const BLOCK_SIZE: usize = BLOCK_CAP as usize * (1 + ITEM_SIZE);
/// Offset of `next` in a dense item.
const ITEM_NEXT: usize = 40;
const EMPTY_SLOT: u8 = 0xFF;
const PROTECTED_SLOT: u8 = 0xFE;
const INVALID_INDEX: u64 = u64::MAX;
/// The multiplier of Fibonacci hashing (`FibHash`).
const FIB_COEFF: u64 = 11_400_714_819_323_198_485;

/// `kNextProbeLocation`: the jump to the next entry of a chain, indexed by the low 7 bits of
/// an entry's metadata byte (0: the chain ends).
static NEXT_PROBE: [u64; 126] = [
    0,
    1,
    2,
    3,
    4,
    5,
    6,
    7,
    8,
    9,
    10,
    11,
    12,
    13,
    14,
    15,
    21,
    28,
    36,
    45,
    55,
    66,
    78,
    91,
    105,
    120,
    136,
    153,
    171,
    190,
    210,
    231,
    253,
    276,
    300,
    325,
    351,
    378,
    406,
    435,
    465,
    496,
    528,
    561,
    595,
    630,
    666,
    703,
    741,
    780,
    820,
    861,
    903,
    946,
    990,
    1035,
    1081,
    1128,
    1176,
    1225,
    1275,
    1326,
    1378,
    1431,
    1485,
    1540,
    1596,
    1653,
    1711,
    1770,
    1830,
    1891,
    1953,
    2016,
    2080,
    2145,
    2211,
    2278,
    2346,
    2415,
    2485,
    2556,
    2628,
    8515,
    19110,
    42778,
    96141,
    216153,
    486591,
    1092981,
    2458653,
    5532801,
    12442566,
    27993903,
    62983476,
    141717030,
    318844378,
    717352503,
    1614057336,
    3631522476,
    8170957530,
    18384510628,
    41364789378,
    93070452520,
    209408356380,
    471168559170,
    1060128894105,
    2385289465695,
    5366898840628,
    12075518705635,
    27169915244790,
    61132312065111,
    137547689707000,
    309482283181501,
    696335127828753,
    1566753995631385,
    3525196511162271,
    7931691992677701,
    17846306936293605,
    40154190677507445,
    90346928918121501,
    203280589587557251,
    457381325854679626,
    1029107982097042876,
    2315492959180353330,
    5209859154120846435,
];

/// One key/value pair of a table (C++ `KVRawStorageType`).
#[repr(C)]
pub(crate) struct RawEntry {
    pub key: TVMFFIAny,
    pub value: TVMFFIAny,
}

/// A position in a table's iteration order.
#[derive(Clone, Copy)]
pub(crate) struct Cursor {
    small: bool,
    pos: u64,
}

/// A live `ffi.Map` or `ffi.Dict` object, read in place for as long as `'a` (the borrow of
/// the `Map`, or of the `Dict`'s lock: see `lock::with_locked`).
#[derive(Clone, Copy)]
pub(crate) struct Table<'a>(NonNull<TVMFFIObject>, PhantomData<&'a ()>);

impl Table<'_> {
    /// # Safety
    /// `obj` is a live `ffi.Map` or `ffi.Dict` that stays alive while the `Table` is used, and
    /// no other thread writes it meanwhile (for a `Dict`: its lock is held). Each method reads
    /// the table's current state anew, so foreign code on this thread may change a `Dict`
    /// between two calls.
    ///
    /// `None` when the loaded runtime's table layout is not the one this module reads (see
    /// the module docs): the caller then asks the runtime.
    #[inline]
    pub(crate) unsafe fn new(obj: NonNull<TVMFFIObject>) -> Option<Self> {
        layout_verified().then_some(Table(obj, PhantomData))
    }

    #[inline]
    fn word(&self, offset: usize) -> u64 {
        // SAFETY: every table is at least 56 bytes (72+ for dense ones, read only then) of
        // 8-byte-aligned words (Table::new's contract).
        unsafe {
            (self.0.as_ptr() as *const u8)
                .add(offset)
                .cast::<u64>()
                .read()
        }
    }

    #[inline]
    fn data(&self) -> *const u8 {
        self.word(DATA) as usize as *const u8
    }

    /// What changes when entries are added or removed: the storage, the size and the layout.
    #[inline]
    pub(crate) fn shape(&self) -> [u64; 3] {
        [self.word(DATA), self.word(SIZE), self.word(SLOTS)]
    }

    /// The number of entries.
    #[inline]
    pub(crate) fn len(&self) -> usize {
        self.word(SIZE) as usize
    }

    #[inline]
    fn is_small(&self) -> bool {
        self.word(SLOTS) & SMALL_TAG != 0
    }

    /// The metadata byte and the item of dense slot `index` (< the slot count).
    #[inline]
    fn dense_slot(data: *const u8, index: u64) -> (u8, *const RawEntry) {
        let block = (index / BLOCK_CAP) as usize;
        let within = (index % BLOCK_CAP) as usize;
        // SAFETY: a dense table has ceil(slots / 16) blocks at `data` and index < slots.
        unsafe {
            let block = data.add(block * BLOCK_SIZE);
            let meta = block.add(within).read();
            let item = block.add(BLOCK_CAP as usize + within * ITEM_SIZE) as *const RawEntry;
            (meta, item)
        }
    }

    /// The entry whose key equals `key` (C++ `find`: a linear scan of a small table, the
    /// key's chain in a dense one).
    #[inline(always)]
    pub(crate) fn find(&self, key: &KeyProbe<'_>) -> Option<*const RawEntry> {
        let size = self.word(SIZE);
        let data = self.data();
        let slots = self.word(SLOTS);
        if slots & SMALL_TAG != 0 {
            let entries = data as *const RawEntry;
            for i in 0..size as usize {
                // SAFETY: a small table holds `size` entries at `data`.
                let entry = unsafe { entries.add(i) };
                // SAFETY: a valid key of the live table.
                if unsafe { key.matches(&(*entry).key) } {
                    return Some(entry);
                }
            }
            return None;
        }
        if size == 0 {
            return None;
        }
        // SAFETY: a dense table (at least 80 bytes) keeps its u32 shift at FIB_SHIFT.
        let fib_shift = unsafe {
            (self.0.as_ptr() as *const u8)
                .add(FIB_SHIFT)
                .cast::<u32>()
                .read()
        };
        let mut index = FIB_COEFF.wrapping_mul(key.hash()).checked_shr(fib_shift)?;
        if index >= slots {
            return None;
        }
        let (mut meta, mut item) = Self::dense_slot(data, index);
        // Only a chain head starts a chain (empty and protected slots have bit 7 set too).
        if meta & 0x80 != 0 {
            return None;
        }
        loop {
            // SAFETY: an occupied slot of the live table holds a valid key.
            if unsafe { key.matches(&(*item).key) } {
                return Some(item);
            }
            let jump = *NEXT_PROBE.get((meta & 0x7F) as usize)?;
            if jump == 0 {
                return None;
            }
            index = index.wrapping_add(jump) % slots;
            (meta, item) = Self::dense_slot(data, index);
        }
    }

    /// The entries that a key of type `type_index` with `AnyHash` `hash` may equal (keys of
    /// other types never do), in the order the runtime compares them: every such entry of a
    /// small table, or those of the key's chain in a dense one.
    pub(crate) fn candidates(&self, hash: u64, type_index: i32) -> Vec<*const RawEntry> {
        let mut out = Vec::new();
        let of_type = |entry: *const RawEntry| {
            // SAFETY: an occupied entry of the live table.
            unsafe { std::ptr::addr_of!((*entry).key.type_index).read() == type_index }
        };
        let size = self.word(SIZE);
        let data = self.data();
        let slots = self.word(SLOTS);
        if slots & SMALL_TAG != 0 {
            for i in 0..size as usize {
                // SAFETY: a small table holds `size` entries at `data`.
                let entry = unsafe { (data as *const RawEntry).add(i) };
                if of_type(entry) {
                    out.push(entry);
                }
            }
            return out;
        }
        if size == 0 {
            return out;
        }
        // SAFETY: a dense table (at least 80 bytes) keeps its u32 shift at FIB_SHIFT.
        let fib_shift = unsafe {
            (self.0.as_ptr() as *const u8)
                .add(FIB_SHIFT)
                .cast::<u32>()
                .read()
        };
        let Some(mut index) = FIB_COEFF.wrapping_mul(hash).checked_shr(fib_shift) else {
            return out;
        };
        if index >= slots {
            return out;
        }
        let (mut meta, mut item) = Self::dense_slot(data, index);
        if meta & 0x80 != 0 {
            return out;
        }
        // At most `slots` steps, whatever the metadata says.
        for _ in 0..slots {
            if of_type(item) {
                out.push(item);
            }
            let jump = match NEXT_PROBE.get((meta & 0x7F) as usize) {
                Some(&jump) if jump != 0 => jump,
                _ => break,
            };
            index = index.wrapping_add(jump) % slots;
            (meta, item) = Self::dense_slot(data, index);
        }
        out
    }

    /// The first position in iteration order.
    #[inline]
    pub(crate) fn first(&self) -> Cursor {
        if self.is_small() {
            Cursor {
                small: true,
                pos: 0,
            }
        } else {
            Cursor {
                small: false,
                pos: self.word(ITER_LIST_HEAD),
            }
        }
    }

    /// The entry at `cursor`, advancing it; `None` at the end. A `Dict` changed since the
    /// cursor was made yields a valid entry or ends, never reads outside the table.
    #[inline]
    pub(crate) fn next(&self, cursor: &mut Cursor) -> Option<*const RawEntry> {
        let slots = self.word(SLOTS);
        if (slots & SMALL_TAG != 0) != cursor.small {
            return None; // a Dict switched layout in place
        }
        let data = self.data();
        if cursor.small {
            if cursor.pos >= self.word(SIZE) {
                return None;
            }
            // SAFETY: a small table holds `size` entries at `data`.
            let entry = unsafe { (data as *const RawEntry).add(cursor.pos as usize) };
            cursor.pos += 1;
            return Some(entry);
        }
        if cursor.pos == INVALID_INDEX || cursor.pos >= slots {
            return None;
        }
        let (meta, item) = Self::dense_slot(data, cursor.pos);
        if meta == EMPTY_SLOT || meta == PROTECTED_SLOT {
            return None; // the entry was erased since
        }
        // SAFETY: an occupied dense item is 48 bytes with `next` at ITEM_NEXT.
        cursor.pos = unsafe { (item as *const u8).add(ITEM_NEXT).cast::<u64>().read() };
        Some(item)
    }
}

const UNKNOWN: u8 = 0;
const IN_PLACE: u8 = 1;
const THROUGH_RUNTIME: u8 = 2;

/// The verdict: [`UNKNOWN`] until the first read checks the layout.
static VERDICT: AtomicU8 = AtomicU8::new(UNKNOWN);

/// Whether the runtime's tables are laid out as this module reads them: checked once.
#[inline]
pub(crate) fn layout_verified() -> bool {
    match VERDICT.load(Ordering::Relaxed) {
        IN_PLACE => true,
        THROUGH_RUNTIME => false,
        _ => verify_once(),
    }
}

#[cold]
#[inline(never)]
fn verify_once() -> bool {
    static VERIFIED: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    let verified = *VERIFIED.get_or_init(|| verify_layout().is_some());
    // A forced verdict set meanwhile wins (see `force_runtime_reads`).
    let _ = VERDICT.compare_exchange(
        UNKNOWN,
        if verified { IN_PLACE } else { THROUGH_RUNTIME },
        Ordering::Relaxed,
        Ordering::Relaxed,
    );
    VERDICT.load(Ordering::Relaxed) == IN_PLACE
}

/// Makes every later `Map` / `Dict` read go through the runtime's functions, as when the
/// layout check disagrees (`true`), or back to the verified verdict (`false`). For tests of
/// the fallback: both paths give the same answers.
pub fn force_runtime_reads(force: bool) {
    VERDICT.store(
        if force { THROUGH_RUNTIME } else { UNKNOWN },
        Ordering::Relaxed,
    );
}

/// The number of entries of a map or dict, through the runtime (`ffi.MapSize`, `ffi.DictSize`).
pub(crate) fn runtime_len(obj: AnyView<'_>, dict: bool) -> usize {
    let size = if dict { &DICT_SIZE } else { &MAP_SIZE };
    size.get()
        .and_then(|f| f.call((obj,)))
        .and_then(|n| n.cast::<i64>())
        .map_or(0, |n| usize::try_from(n).unwrap_or(0))
}

/// Copies of the entries of a map or dict in iteration order, through the runtime's forward
/// iterator (`ffi.MapForwardIterFunctor`, `ffi.DictForwardIterFunctor`). The runtime returns
/// copies of the stored values: for an object, a new reference to the very object the table
/// holds. The caller keeps the container alive and unchanged meanwhile (a dict: its lock).
pub(crate) fn runtime_entries(obj: AnyView<'_>, dict: bool) -> Vec<(Any, Any)> {
    let n = runtime_len(obj, dict);
    let iter = if dict { &DICT_ITER } else { &MAP_ITER };
    let mut entries = Vec::new();
    if n == 0 {
        return entries;
    }
    let Ok(functor) = iter.get().and_then(|f| f.call_as::<Function, _>((obj,))) else {
        return entries;
    };
    // The functor starts at the first entry; it must not be read past the `n`th (C++ iterators).
    for i in 0..n {
        let (Ok(key), Ok(value)) = (functor.call((0_i64,)), functor.call((1_i64,))) else {
            break;
        };
        entries.push((key, value));
        if i + 1 < n && !functor.call_as::<bool, _>((2_i64,)).unwrap_or(false) {
            break;
        }
    }
    entries
}

static MAP: GlobalCache = GlobalCache::new("ffi.Map");
static MAP_SIZE: GlobalCache = GlobalCache::new("ffi.MapSize");
static MAP_GET: GlobalCache = GlobalCache::new("ffi.MapGetItem");
static MAP_ITER: GlobalCache = GlobalCache::new("ffi.MapForwardIterFunctor");
static DICT: GlobalCache = GlobalCache::new("ffi.Dict");
static DICT_SIZE: GlobalCache = GlobalCache::new("ffi.DictSize");
static DICT_GET: GlobalCache = GlobalCache::new("ffi.DictGetItem");
static DICT_ITER: GlobalCache = GlobalCache::new("ffi.DictForwardIterFunctor");

/// Builds tables of several sizes (small and dense layouts, int and string keys) through the
/// runtime and reads them in place: `Some` when every size, lookup and entry agrees with the
/// runtime's own answers. Structural facts are checked before any pointer the table holds is
/// followed, so a different layout is found without reading through a wrong pointer.
fn verify_layout() -> Option<()> {
    for (make, size, get) in [(&MAP, &MAP_SIZE, &MAP_GET), (&DICT, &DICT_SIZE, &DICT_GET)] {
        let (make, size, get) = (make.get().ok()?, size.get().ok()?, get.get().ok()?);
        for n in [0usize, 1, 2, 3, 5, 9, 17, 40, 130] {
            let keys: Vec<Any> = (0..n)
                .map(|i| {
                    if i % 2 == 0 {
                        Any::new(i as i64 * 7919 - 3)
                    } else {
                        Any::new(format!("key number {i} of {n}"))
                    }
                })
                .collect();
            let mut args = Vec::with_capacity(2 * n);
            for (i, key) in keys.iter().enumerate() {
                args.push(key.clone());
                args.push(Any::new(i as i64 + 1));
            }
            let table = make.call(args.as_slice()).ok()?;
            let index = table.type_index();
            if index != ti::kTVMFFIMap && index != ti::kTVMFFIDict {
                return None;
            }
            let expected = size.call((&table,)).ok()?.cast::<i64>().ok()?;
            // SAFETY: an object index stores a live object pointer, which `table` keeps alive;
            // nothing else holds the new table.
            let obj = NonNull::new(unsafe { table.as_raw().value.v_obj })?;
            let inline = index == ti::kTVMFFIMap;
            check_table(Table(obj, PhantomData), inline, n, expected, &keys, |key| {
                get.call((&table, key)).ok()?.cast::<i64>().ok()
            })?;
        }
    }
    Some(())
}

/// Compares one table read in place with what the runtime reports of it. `inline`: a small
/// table keeps its entries right after its base object (an `ffi.Map`; a `Dict` grows them
/// elsewhere).
fn check_table(
    table: Table,
    inline: bool,
    n: usize,
    expected_len: i64,
    keys: &[Any],
    runtime_value: impl Fn(&Any) -> Option<i64>,
) -> Option<()> {
    // Only the three base words (present in every layout of at least 48 bytes) are read
    // before the structure is known to be plausible.
    let len = table.word(SIZE);
    if expected_len != n as i64 || len != n as u64 {
        return None;
    }
    let slots = table.word(SLOTS);
    let base = table.0.as_ptr() as usize;
    if slots & SMALL_TAG != 0 {
        let capacity = slots & !SMALL_TAG;
        let data = table.word(DATA) as usize;
        if capacity < len
            || capacity > 1 << 32
            || data == 0
            || (inline && data != base + SMALL_DATA)
        {
            return None;
        }
    } else {
        if !slots.is_power_of_two() || slots < len || slots > 1 << 40 || table.word(DATA) == 0 {
            return None;
        }
        // SAFETY: a dense table (checked plausible above) keeps its u32 shift at FIB_SHIFT.
        let shift = unsafe {
            (table.0.as_ptr() as *const u8)
                .add(FIB_SHIFT)
                .cast::<u32>()
                .read()
        };
        let head = table.word(ITER_LIST_HEAD);
        if u64::from(shift) != 64 - u64::from(slots.trailing_zeros()) || (len > 0 && head >= slots)
        {
            return None;
        }
    }
    // In insertion order, every entry the runtime's lookup agrees with.
    let mut cursor = table.first();
    let mut seen = 0usize;
    while let Some(entry) = table.next(&mut cursor) {
        let key = keys.get(seen)?;
        // SAFETY: an entry of the live table (16-byte values, read as plain words).
        let (stored_key, stored_value) = unsafe { ((*entry).key, (*entry).value) };
        // The table holds the very values it was built from (the same string objects), so
        // the bits compare without following any pointer.
        if bits(&stored_key) != bits(key.as_raw())
            || bits(&stored_value) != bits(Any::new(seen as i64 + 1).as_raw())
            || runtime_value(key) != Some(seen as i64 + 1)
        {
            return None;
        }
        seen += 1;
        if seen > n {
            return None;
        }
    }
    if seen != n {
        return None;
    }
    // Every key is found by its hash, and a missing one is not.
    for (i, key) in keys.iter().enumerate() {
        let entry = table.find(&KeyProbe::new(key.as_view())?)?;
        // SAFETY: an entry of the live table.
        if bits(unsafe { &(*entry).value }) != bits(Any::new(i as i64 + 1).as_raw()) {
            return None;
        }
    }
    let missing = Any::new(-1_i64);
    table
        .find(&KeyProbe::new(missing.as_view())?)
        .is_none()
        .then_some(())
}

/// The 16 bytes of a value.
fn bits(value: &TVMFFIAny) -> [u64; 2] {
    // SAFETY: a TVMFFIAny is 16 initialised bytes (the runtime and Rust zero the padding).
    unsafe { *(value as *const TVMFFIAny as *const [u64; 2]) }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A map of `n` int keys `0..n` to `1..=n`, and its keys.
    fn int_map(n: usize) -> (Any, Vec<Any>) {
        let keys: Vec<Any> = (0..n).map(|i| Any::new(i as i64)).collect();
        let mut args = Vec::new();
        for (i, key) in keys.iter().enumerate() {
            args.push(key.clone());
            args.push(Any::new(i as i64 + 1));
        }
        (MAP.get().unwrap().call(args.as_slice()).unwrap(), keys)
    }

    fn object_of(map: &Any) -> NonNull<TVMFFIObject> {
        // SAFETY: a map value stores its object pointer.
        NonNull::new(unsafe { map.as_raw().value.v_obj }).unwrap()
    }

    /// `check_table` on a copy of `map`'s object (`words` bytes of it) changed by `edit`.
    fn check_copy(map: &Any, keys: &[Any], words: usize, edit: impl Fn(&mut [u64])) -> bool {
        let obj = object_of(map);
        let mut copy = vec![0u64; words];
        // SAFETY: the object has at least `words` words (the caller sizes them by its layout).
        unsafe {
            std::ptr::copy_nonoverlapping(obj.as_ptr() as *const u64, copy.as_mut_ptr(), words)
        };
        edit(&mut copy);
        let runtime = |key: &Any| {
            MAP_GET
                .get()
                .ok()?
                .call((map, key))
                .ok()?
                .cast::<i64>()
                .ok()
        };
        let table = Table(
            NonNull::new(copy.as_mut_ptr() as *mut TVMFFIObject).unwrap(),
            PhantomData,
        );
        check_table(table, true, keys.len(), keys.len() as i64, keys, runtime).is_some()
    }

    #[test]
    fn the_loaded_runtime_lays_out_tables_as_read_in_place() {
        assert!(layout_verified());
    }

    #[test]
    fn a_small_table_laid_out_otherwise_is_refused() {
        let (map, keys) = int_map(3);
        let slots = Table(object_of(&map), PhantomData).word(SLOTS);
        assert_ne!(slots & SMALL_TAG, 0, "a small table");
        let words = (SMALL_DATA + (slots & !SMALL_TAG) as usize * 32) / 8;
        // The copy with its entries in place (the data pointer moved along) reads as the map.
        let rebase = |copy: &mut [u64]| copy[DATA / 8] = copy.as_ptr() as u64 + SMALL_DATA as u64;
        assert!(check_copy(&map, &keys, words, rebase));
        // The entries elsewhere than right after the base object.
        assert!(!check_copy(&map, &keys, words, |_| {}));
        // Another size, another capacity.
        assert!(!check_copy(&map, &keys, words, |c| {
            rebase(c);
            c[SIZE / 8] += 1;
        }));
        assert!(!check_copy(&map, &keys, words, |c| {
            rebase(c);
            c[SLOTS / 8] = SMALL_TAG | 1;
        }));
        // Entries (key, value pairs of 4 words) in another order.
        assert!(!check_copy(&map, &keys, words, |c| {
            rebase(c);
            let first = SMALL_DATA / 8;
            for w in 0..4 {
                c.swap(first + w, first + 4 + w);
            }
        }));
    }

    #[test]
    fn a_dense_table_laid_out_otherwise_is_refused() {
        let (map, keys) = int_map(40);
        let slots = Table(object_of(&map), PhantomData).word(SLOTS);
        assert_eq!(slots & SMALL_TAG, 0, "a dense table");
        // The base object only: the blocks stay where the data pointer says.
        let words = (ITER_LIST_HEAD + 8) / 8;
        assert!(check_copy(&map, &keys, words, |_| {}));
        assert!(!check_copy(&map, &keys, words, |c| c[SIZE / 8] -= 1));
        assert!(!check_copy(&map, &keys, words, |c| c[SLOTS / 8] *= 2));
        assert!(!check_copy(&map, &keys, words, |c| c[FIB_SHIFT / 8] += 1));
        assert!(!check_copy(&map, &keys, words, |c| c[ITER_LIST_HEAD / 8] = slots));
    }
}
