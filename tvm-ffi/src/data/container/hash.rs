//! The runtime's key hash and equality (C++ `AnyHash` / `AnyEqual`, `tvm/ffi/any.h`), bit for
//! bit, so that Rust finds keys in `ffi.Map` and `ffi.Dict` tables built by any language.
//!
//! - strings and bytes hash and compare by content, inline (small) and heap forms alike;
//! - `ffi.BigInt` by its words (its registered `__any_hash__` / `__any_equal__`);
//! - every other value by its 16 raw bytes (plain data, or the object pointer), combined with
//!   its type index.
//!
//! An object whose type registers its own `__any_hash__` or `__any_equal__` (other than
//! `ffi.BigInt`, e.g. `ffi.StructuralKey`) has no inline probe: lookups with such a key go
//! through the runtime's own function instead.
use std::sync::atomic::{AtomicPtr, Ordering};

use crate::abi::sys::{self, type_index as ti, TVMFFIAny};
use crate::base::error::{Error, Result};
use crate::base::object::builtin::ErrorObj;
use crate::base::value::{words_of, Any, AnyView};
use crate::call::function::Function;

/// `StableHashCombine` (`base_detail.h`).
#[inline]
pub(crate) fn hash_combine(key: u64, value: u64) -> u64 {
    key ^ value
        .wrapping_add(0x9e37_79b9)
        .wrapping_add(key << 6)
        .wrapping_add(key >> 2)
}

/// `StableHashBytes` (`base_detail.h`): 8-byte little-endian chunks, the last one zero-padded,
/// folded as `(r * 1099511628211 + chunk) % 2147483647` in wrapping 64-bit arithmetic.
#[inline]
pub(crate) fn stable_hash_bytes(bytes: &[u8]) -> u64 {
    const MULTIPLIER: u64 = 1_099_511_628_211;
    const MODULUS: u64 = 2_147_483_647;
    let mut chunks = bytes.chunks_exact(8);
    let mut result = 0u64;
    for chunk in &mut chunks {
        let mut word = [0u8; 8];
        word.copy_from_slice(chunk);
        result = result
            .wrapping_mul(MULTIPLIER)
            .wrapping_add(u64::from_le_bytes(word))
            % MODULUS;
    }
    let tail = chunks.remainder();
    if !tail.is_empty() {
        let mut word = [0u8; 8];
        word[..tail.len()].copy_from_slice(tail);
        result = result
            .wrapping_mul(MULTIPLIER)
            .wrapping_add(u64::from_le_bytes(word))
            % MODULUS;
    }
    result
}

/// A type attribute column the runtime keeps per attribute name. The column object is stable
/// once created; its entries are re-read on every use (they move when types register).
struct Column {
    name: &'static str,
    column: AtomicPtr<sys::TVMFFITypeAttrColumn>,
}

impl Column {
    const fn new(name: &'static str) -> Column {
        Column {
            name,
            column: AtomicPtr::new(std::ptr::null_mut()),
        }
    }

    /// Whether the type `index` has an entry (other than `None`) in the column.
    fn has_entry(&self, index: i32) -> bool {
        self.entry(index).is_some()
    }

    /// The entry of type `index` (a bit copy; the registry keeps the value alive), unless it is
    /// absent or `None`.
    fn entry(&self, index: i32) -> Option<TVMFFIAny> {
        let mut column = self.column.load(Ordering::Acquire);
        if column.is_null() {
            let name = sys::TVMFFIByteArray::from_bytes(self.name.as_bytes());
            // SAFETY: a valid name; the result is null or a column owned by the registry.
            column = unsafe { sys::TVMFFIGetTypeAttrColumn(&name) } as *mut _;
            if column.is_null() {
                return None;
            }
            self.column.store(column, Ordering::Release);
        }
        // SAFETY: the registry keeps the column alive for the process; `data` has `size`
        // entries (read together, as C++ `AnyHash` reads them).
        unsafe {
            let column = &*column;
            let slot = index.checked_sub(column.begin_index)?;
            if slot < 0 || slot >= column.size {
                return None;
            }
            let entry = column.data.add(slot as usize).read();
            (entry.type_index != ti::kTVMFFINone).then_some(entry)
        }
    }
}

static ANY_HASH: Column = Column::new("__any_hash__");
static ANY_EQUAL: Column = Column::new("__any_equal__");
/// The user's own `__any_hash__` / `__any_equal__` of a Rust type, which Rust's lookups call
/// (their errors are raised); the runtime's columns hold [`key_hook_for_runtime`]'s wrappers.
const RAW_ANY_HASH: &str = "__tvm_ffi_rs_any_hash__";
const RAW_ANY_EQUAL: &str = "__tvm_ffi_rs_any_equal__";
static RAW_HASH: Column = Column::new(RAW_ANY_HASH);
static RAW_EQUAL: Column = Column::new(RAW_ANY_EQUAL);

/// For a key hook that a Rust type registers (`#[ffi(type_attr = "__any_hash__")]` or
/// `"__any_equal__"`): the function to register under that name for the runtime, and the
/// name under which to register `hook` itself (Rust's lookups call it). `None` for other names.
///
/// The runtime's hash tables are not safe against every answer a hook may give: a dense
/// table finds an entry's predecessor by hashing the entry's key again (a hash that changed
/// walks off the chain), and an error raised while the runtime rebuilds a table (moving the
/// entries one by one, hashing and comparing them) leaves the old table holding entries it
/// already released. So the runtime gets:
/// - for the hash, the key's first answer, cached in its header (see
///   `base::object::cached_key_hash`): only that first call runs `hook`, and may raise;
/// - for the equality, `hook`'s answer, or "not equal" when it fails (the runtime cannot
///   take an error there); the failure is kept for the Rust write that ran it, which returns
///   it (see `base::lock`).
pub(crate) fn key_hook_for_runtime(
    name: &str,
    hook: &Function,
) -> Option<(Function, &'static str)> {
    let hook = hook.clone();
    let wrapper = match name {
        "__any_hash__" => Function::from_packed_named(name.to_owned(), move |args| {
            let key = args
                .first()
                .ok_or_else(|| Error::new("TypeError", "`__any_hash__` takes the key"))?;
            cached_hash(key, &hook).map(Any::new)
        }),
        "__any_equal__" => Function::from_packed_named(name.to_owned(), move |args| {
            let equal = hook.call_packed(args).and_then(|out| {
                out.cast::<bool>()
                    .map_err(|_| hook_error("__any_equal__", "bool"))
            });
            Ok(Any::new(equal.unwrap_or_else(|err| {
                record_hook_failure(err);
                false
            })))
        }),
        _ => return None,
    };
    let raw_name = if name == "__any_hash__" {
        RAW_ANY_HASH
    } else {
        RAW_ANY_EQUAL
    };
    Some((wrapper, raw_name))
}

/// The cached hash of `key` (an object of a type whose hash hook this SDK registered): the
/// first answer of `hook`, the one every later call gets.
fn cached_hash(key: &AnyView<'_>, hook: &Function) -> Result<i64> {
    let compute = || {
        hook.call_packed(std::slice::from_ref(key))?
            .cast::<i64>()
            .map_err(|_| hook_error("__any_hash__", "int"))
    };
    let raw = key.as_raw();
    if raw.type_index < ti::kTVMFFIStaticObjectBegin {
        return compute();
    }
    // SAFETY: an object value holds an object pointer.
    let Some(obj) = std::ptr::NonNull::new(unsafe { raw.value.v_obj }) else {
        return compute();
    };
    // SAFETY: the key is alive for the call (borrowed); its type registered this hook through
    // the SDK, so it is a Rust-defined type (or the hook was forged onto another type, whose
    // header padding no other runtime reads).
    unsafe { crate::base::object::cached_key_hash(obj, compute) }
}

/// The `__any_hash__` / `__any_equal__` hooks of a key object's type, called by Rust (so that
/// no lock is held while they run: they are user code).
pub(crate) struct Hooks {
    type_index: i32,
    hash: Option<TVMFFIAny>,
    /// Whether `hash` is a Rust type's own hook, whose first answer per key is cached.
    hash_cached: bool,
    equal: Option<TVMFFIAny>,
}

impl Hooks {
    /// The hooks of `key`'s type, when it is an object whose type registers at least one.
    pub(crate) fn of(key: &AnyView<'_>) -> Option<Hooks> {
        let index = key.type_index();
        if index < ti::kTVMFFIStaticObjectBegin || index == ti::kTVMFFIBigInt {
            return None;
        }
        // A Rust type's own hook where it registered one (the runtime's column holds its
        // never-failing wrapper).
        let raw_hash = RAW_HASH.entry(index);
        let hash_cached = raw_hash.is_some();
        let (hash, equal) = (
            ANY_HASH
                .entry(index)
                .map(|public| raw_hash.unwrap_or(public)),
            ANY_EQUAL
                .entry(index)
                .map(|public| RAW_EQUAL.entry(index).unwrap_or(public)),
        );
        (hash.is_some() || equal.is_some()).then_some(Hooks {
            type_index: index,
            hash,
            hash_cached: hash_cached && hash.is_some(),
            equal,
        })
    }

    /// `AnyHash(key)` (C++ `any.h`): the type index combined with the hook's value, or with
    /// the object's address when the type registers only an equality.
    pub(crate) fn hash(&self, key: &AnyView<'_>) -> Result<u64> {
        let value = match self.hash {
            None => {
                // SAFETY: an object value: 8 initialised value bytes.
                unsafe { key.as_raw().value.v_uint64 }
            }
            // The runtime's answer: the key's cached first one.
            Some(hook) if self.hash_cached => {
                // SAFETY: a column entry that is neither None nor a pointer is an
                // `ffi.Function` the registry keeps alive (the SDK registers functions).
                let hook = unsafe { AnyView::from_raw(hook) }.cast::<Function>()?;
                cached_hash(key, &hook)? as u64
            }
            Some(hook) => call_hook(hook, &[*key])?
                .cast::<i64>()
                .map_err(|_| hook_error("__any_hash__", "int"))? as u64,
        };
        Ok(hash_combine(self.type_index as u64, value))
    }

    /// `AnyEqual(key, stored)` for a stored key (C++ `any.h`, the order of the runtime's
    /// lookups): identical values, else the type's `__any_equal__`, else unequal.
    pub(crate) fn equal(&self, key: &AnyView<'_>, stored: &AnyView<'_>) -> Result<bool> {
        // SAFETY: both are 16 initialised bytes.
        let same_bits = unsafe {
            *(key.as_raw() as *const TVMFFIAny as *const [u64; 2])
                == *(stored.as_raw() as *const TVMFFIAny as *const [u64; 2])
        };
        if same_bits {
            return Ok(true);
        }
        match self.equal {
            Some(hook) if stored.type_index() == self.type_index => {
                call_hook(hook, &[*key, *stored])?
                    .cast::<bool>()
                    .map_err(|_| hook_error("__any_equal__", "bool"))
            }
            _ => Ok(false),
        }
    }
}

/// Calls a hook as the runtime does: an `ffi.Function`, or a native function pointer
/// (`TVMFFIAny (*)(const Any&, ...) noexcept`, C++'s `NativeFunction` convention).
fn call_hook(hook: TVMFFIAny, args: &[AnyView<'_>]) -> Result<Any> {
    if hook.type_index == ti::kTVMFFIOpaquePtr {
        // SAFETY: the registry stores a native hook as a function pointer of this convention
        // (C++ `CallCustomAnyHash` / `CallCustomAnyEqual` call it the same way); `Any` and
        // `TVMFFIAny` share a layout, and a C++ reference is a pointer.
        let out = unsafe {
            let ptr = hook.value.v_ptr;
            if args.len() == 1 {
                let f: unsafe extern "C" fn(*const TVMFFIAny) -> TVMFFIAny =
                    std::mem::transmute(ptr);
                f(args[0].as_raw())
            } else {
                let f: unsafe extern "C" fn(*const TVMFFIAny, *const TVMFFIAny) -> TVMFFIAny =
                    std::mem::transmute(ptr);
                f(args[0].as_raw(), args[1].as_raw())
            }
        };
        // SAFETY: the hook returns an owned value (its result or an error object).
        let out = unsafe { Any::from_raw(out) };
        return match out.cast::<crate::base::object::ObjectRef<ErrorObj>>() {
            Ok(error) => Err(Error::from_object_ref(error)),
            Err(_) => Ok(out),
        };
    }
    // SAFETY: a column entry that is neither None nor a pointer is an `ffi.Function` the
    // registry keeps alive; the view only lends it for this call.
    let function = unsafe { AnyView::from_raw(hook) }.cast::<Function>()?;
    function.call_packed(args)
}

#[cold]
fn hook_error(hook: &str, expected: &str) -> Error {
    Error::new(
        "TypeError",
        format!("`{hook}` of a dict key returned a value that is not {expected}"),
    )
}

/// How a key compares.
#[derive(Clone, Copy)]
enum Kind<'a> {
    /// By its 16 raw bytes (plain data and objects without hooks).
    Bits,
    /// A string (`type_index` 65 in hashes): by content, against small and heap strings.
    Str(&'a [u8]),
    /// Bytes (66): by content, against small and heap bytes.
    Bytes(&'a [u8]),
    /// An `ffi.BigInt`: by its words.
    BigInt(&'a [i64]),
    /// This very value (its bits), under the hash given (a stored key found by a key with
    /// hooks: the hash of that key).
    Identical(u64),
}

/// A lookup key with its hash and equality resolved once.
pub(crate) struct KeyProbe<'a> {
    raw: TVMFFIAny,
    kind: Kind<'a>,
}

/// The content of a small string or bytes value stored in `raw`.
#[inline]
fn small_content(raw: &TVMFFIAny) -> &[u8] {
    // SAFETY: small forms keep `zero_padding <= 7` bytes inline in the value union.
    unsafe { &raw.value.v_bytes[..(raw.zero_padding as usize).min(7)] }
}

/// The content of a heap string or bytes object.
///
/// # Safety
/// `raw` holds a live `ffi.String` or `ffi.Bytes` object that outlives `'a`.
#[inline]
unsafe fn heap_content<'a>(raw: &TVMFFIAny) -> &'a [u8] {
    // SAFETY: string and bytes objects are the header followed by a TVMFFIByteArray.
    unsafe {
        let cell = (raw.value.v_obj as *const u8).add(std::mem::size_of::<sys::TVMFFIObject>())
            as *const sys::TVMFFIByteArray;
        (*cell).as_bytes()
    }
}

impl KeyProbe<'static> {
    /// Finds the entry whose key is exactly `stored` (its bits) in the chain of `hash`.
    pub(crate) fn identical(stored: TVMFFIAny, hash: u64) -> KeyProbe<'static> {
        KeyProbe {
            raw: stored,
            kind: Kind::Identical(hash),
        }
    }
}

impl<'a> KeyProbe<'a> {
    /// The probe of `key`, or `None` when only the runtime can compare it (an object whose
    /// type registers its own hash or equality, or an rvalue reference).
    #[inline(always)]
    pub(crate) fn new(key: &'a AnyView<'a>) -> Option<KeyProbe<'a>> {
        let raw = *key.as_raw();
        // Plain values (None, int, bool, float, pointers, DataType, Device) compare by bits.
        if (0..ti::kTVMFFIRawStr).contains(&raw.type_index) {
            return Some(KeyProbe {
                raw,
                kind: Kind::Bits,
            });
        }
        Self::new_other(key)
    }

    /// [`KeyProbe::new`] for strings, bytes, big integers and objects.
    fn new_other(key: &'a AnyView<'a>) -> Option<KeyProbe<'a>> {
        let raw = *key.as_raw();
        let kind = match raw.type_index {
            ti::kTVMFFISmallStr => Kind::Str(small_content(key.as_raw())),
            ti::kTVMFFISmallBytes => Kind::Bytes(small_content(key.as_raw())),
            // SAFETY: a live string object borrowed by the view for 'a.
            ti::kTVMFFIStr => Kind::Str(unsafe { heap_content(&raw) }),
            // SAFETY: as above.
            ti::kTVMFFIBytes => Kind::Bytes(unsafe { heap_content(&raw) }),
            // A borrowed C string or byte array hashes as the String / Bytes C++ makes of it.
            ti::kTVMFFIRawStr => {
                // SAFETY: NUL-terminated and borrowed for 'a.
                Kind::Str(unsafe { std::ffi::CStr::from_ptr(raw.value.v_c_str) }.to_bytes())
            }
            // SAFETY: the pointee is borrowed for 'a.
            ti::kTVMFFIByteArrayPtr => Kind::Bytes(unsafe {
                (*(raw.value.v_ptr as *const sys::TVMFFIByteArray)).as_bytes()
            }),
            ti::kTVMFFIObjectRValueRef => return None,
            ti::kTVMFFIBigInt => Kind::BigInt(words_of(key)?),
            index if index >= ti::kTVMFFIStaticObjectBegin => {
                if ANY_HASH.has_entry(index) || ANY_EQUAL.has_entry(index) {
                    return None;
                }
                Kind::Bits
            }
            _ => Kind::Bits,
        };
        Some(KeyProbe { raw, kind })
    }

    /// `AnyHash` of the key.
    #[inline]
    pub(crate) fn hash(&self) -> u64 {
        match self.kind {
            Kind::Identical(hash) => hash,
            Kind::Bits => {
                // SAFETY: every 16-byte value has 8 initialised value bytes (Rust zeroes the
                // unused ones, as C++ does).
                hash_combine(self.raw.type_index as u64, unsafe {
                    self.raw.value.v_uint64
                })
            }
            Kind::Str(bytes) => hash_combine(ti::kTVMFFIStr as u64, stable_hash_bytes(bytes)),
            Kind::Bytes(bytes) => hash_combine(ti::kTVMFFIBytes as u64, stable_hash_bytes(bytes)),
            Kind::BigInt(words) => {
                // SAFETY: the words as their native bytes (any bit pattern is a valid u8).
                let bytes = unsafe {
                    std::slice::from_raw_parts(
                        words.as_ptr() as *const u8,
                        std::mem::size_of_val(words),
                    )
                };
                hash_combine(ti::kTVMFFIBigInt as u64, stable_hash_bytes(bytes))
            }
        }
    }

    /// `AnyEqual(stored, key)`.
    ///
    /// # Safety
    /// `stored` is a valid value of a live map (an object index holds a live object).
    #[inline(always)]
    pub(crate) unsafe fn matches(&self, stored: &TVMFFIAny) -> bool {
        // SAFETY: both are 16 initialised bytes; compared as two words, as C++ does.
        let same_bits = unsafe {
            let a = &*(stored as *const TVMFFIAny as *const [u64; 2]);
            let b = &*(&self.raw as *const TVMFFIAny as *const [u64; 2]);
            a == b
        };
        // SAFETY: the caller's contract.
        same_bits
            || (!matches!(self.kind, Kind::Bits | Kind::Identical(_))
                && unsafe { self.same_content(stored) })
    }

    /// `AnyEqual` beyond equal bits: strings and bytes by content, big integers by words.
    ///
    /// # Safety
    /// As for [`KeyProbe::matches`].
    unsafe fn same_content(&self, stored: &TVMFFIAny) -> bool {
        match self.kind {
            Kind::Bits | Kind::Identical(_) => false,
            Kind::Str(bytes) => match stored.type_index {
                ti::kTVMFFISmallStr => small_content(stored) == bytes,
                // SAFETY: a live string object of the map (the caller's contract).
                ti::kTVMFFIStr => unsafe { heap_content(stored) == bytes },
                _ => false,
            },
            Kind::Bytes(bytes) => match stored.type_index {
                ti::kTVMFFISmallBytes => small_content(stored) == bytes,
                // SAFETY: a live bytes object of the map (the caller's contract).
                ti::kTVMFFIBytes => unsafe { heap_content(stored) == bytes },
                _ => false,
            },
            Kind::BigInt(words) => {
                stored.type_index == ti::kTVMFFIBigInt && {
                    // SAFETY: AnyView is repr(transparent) over TVMFFIAny; the object is live.
                    let view = unsafe { &*(stored as *const TVMFFIAny as *const AnyView<'_>) };
                    words_of(view) == Some(words)
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::base::value::{Any, BigInt};

    fn hash_of(value: Any) -> u64 {
        KeyProbe::new(value.as_view()).expect("inline probe").hash()
    }

    #[test]
    fn hashes_are_the_values_cpp_any_hash_computes() {
        // Printed by a C++ program calling `AnyHash` (compiled against the wheel's headers).
        assert_eq!(hash_of(Any::new(5i64)), 2_654_435_839);
        assert_eq!(hash_of(Any::new("abc")), 2_660_953_131);
        assert_eq!(hash_of(Any::new("abcdefghij")), 3_873_208_543);
        assert_eq!(hash_of(Any::new(true)), 2_654_435_896);
        assert_eq!(hash_of(Any::new(1.5f64)), 4_609_434_221_268_138_618);
        assert_eq!(hash_of(Any::none()), 2_654_435_769);
        // Small and heap forms of one content hash alike (the chunk of a short content is its
        // zero-padded word).
        assert_eq!(
            stable_hash_bytes(b"abc"),
            u64::from_le_bytes(*b"abc\0\0\0\0\0") % 2_147_483_647
        );
        // A BigInt hashes its words as bytes.
        let big = BigInt::from(u128::MAX);
        let words = big.words().to_vec();
        let bytes: Vec<u8> = words.iter().flat_map(|w| w.to_ne_bytes()).collect();
        assert_eq!(
            hash_of(Any::new(big)),
            hash_combine(78, stable_hash_bytes(&bytes))
        );
    }
}

thread_local! {
    /// The first failure of a key's equality hook that the runtime ran on this thread since
    /// the current Rust write or build started (answered "unequal" instead).
    static HOOK_FAILURE: std::cell::RefCell<Option<Error>> = const { std::cell::RefCell::new(None) };
}

/// Keeps the failure of a key hook that the runtime ran (the first one counts).
fn record_hook_failure(err: Error) {
    let _ = HOOK_FAILURE.try_with(|slot| {
        if let Ok(mut slot) = slot.try_borrow_mut() {
            slot.get_or_insert(err);
        }
    });
}

fn take_hook_failure() -> Option<Error> {
    HOOK_FAILURE
        .try_with(|slot| slot.try_borrow_mut().ok().and_then(|mut slot| slot.take()))
        .ok()
        .flatten()
}

/// What a key hook's failure inside the runtime leaves behind, for [`reporting_hook_failures`].
#[derive(Clone, Copy)]
pub(crate) enum HookFailureIn {
    /// A write of a dict: it took effect with the keys taken as unequal.
    Write,
    /// A new container from caller-given keys (`ffi.Map`, `ffi.Dict`): the container may hold
    /// two keys the hook would have called equal; nothing else holds it yet, so it is dropped.
    Build,
}

/// Runs `call`, a runtime call that compares keys: a key's equality hook that failed meanwhile
/// answered "unequal" there (the runtime cannot take an error, see `key_hook_for_runtime`), and
/// is the result here.
pub(crate) fn reporting_hook_failures<R>(
    within: HookFailureIn,
    call: impl FnOnce() -> Result<R>,
) -> Result<R> {
    let earlier = take_hook_failure();
    let out = call();
    let failed = take_hook_failure();
    if let Some(earlier) = earlier {
        record_hook_failure(earlier);
    }
    let (Ok(_), Some(failed)) = (&out, failed) else {
        return out;
    };
    let (what, outcome) = match within {
        HookFailureIn::Write => (
            "changed the container",
            "the change took effect with the keys taken as unequal",
        ),
        HookFailureIn::Build => ("built the container", "nothing was built"),
    };
    Err(Error::new(
        failed.kind(),
        format!(
            "a key's `__any_equal__` failed while the runtime {what}, where it cannot take an \
             error; {outcome}: {}",
            failed.message()
        ),
    ))
}
