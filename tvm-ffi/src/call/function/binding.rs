//! The binding of keyword arguments passed in the runtime's `KWARGS` convention, and of
//! omitted arguments that have defaults.
//!
//! A caller passes keyword arguments as `[positional..., KWARGS, key0, value0, key1, value1,
//! ...]`, where `KWARGS` is the runtime's sentinel object (`ffi.GetKwargsObject`, Python's
//! `tvm_ffi.core.KWARGS`): the convention of the runtime's auto-generated `__ffi_init__`, which
//! Python's `__init__` uses for `Point(x=1, y=2)`. A function with names binds such a call, and
//! a call that omits trailing arguments, to its parameters ([`FnSignature::with_args`]); a
//! positional call with every argument skips the binding (a type-index test of every other
//! argument from the third last; none with fewer than three).
use crate::abi::sys::type_index as ti;
use crate::base::error::{Error, Result};
use crate::base::value::{Any, AnyView};
use crate::call::function::signature::FnSignature;

/// The runtime's `KWARGS` sentinel (`ffi.GetKwargsObject`), as an address; 0 if unavailable.
fn kwargs_sentinel() -> usize {
    static SENTINEL: std::sync::OnceLock<usize> = std::sync::OnceLock::new();
    static GET: crate::call::function::GlobalCache =
        crate::call::function::GlobalCache::new("ffi.GetKwargsObject");
    *SENTINEL.get_or_init(|| {
        // The sentinel is a static of the runtime, alive for the process: its address is stable.
        GET.get()
            .and_then(|f| f.call(()))
            .ok()
            .filter(|any| any.type_index() >= ti::kTVMFFIStaticObjectBegin)
            // SAFETY: an object's value is its pointer.
            .map(|any| unsafe { any.as_raw().value.v_obj } as usize)
            .unwrap_or(0)
    })
}

/// Whether `view` is the `KWARGS` sentinel (a plain `ffi.Object`: other values fail the first
/// test).
#[inline(always)]
fn is_marker(view: &AnyView<'_>) -> bool {
    view.type_index() == ti::kTVMFFIObject && is_sentinel(view)
}

/// Whether a call with as many arguments as parameters may hold the `KWARGS` marker: the
/// marker is followed by at least one key/value pair, so it can only be at `len - 3`,
/// `len - 5`, ...; with fewer than 3 arguments the answer is no without a look.
#[inline(always)]
fn may_have_marker(args: &[AnyView<'_>]) -> bool {
    let mut at = args.len().wrapping_sub(3);
    while at < args.len() {
        if is_marker(&args[at]) {
            return true;
        }
        at = at.wrapping_sub(2);
    }
    false
}

#[cold]
fn is_sentinel(view: &AnyView<'_>) -> bool {
    // SAFETY: an object's value is its pointer.
    let ptr = unsafe { view.as_raw().value.v_obj } as usize;
    ptr != 0 && ptr == kwargs_sentinel()
}

impl FnSignature {
    /// Runs `body` with the arguments in parameter order. A positional call with every
    /// argument passes `args` as they came; a function with names also takes keyword
    /// arguments (the `KWARGS` convention) and omitted arguments that have defaults, bound
    /// here. Errors name the argument: a missing, unknown or repeated keyword is a
    /// `TypeError`; a wrong count of positional arguments is C++'s arity error.
    #[inline(always)]
    pub fn with_args(
        &self,
        args: &[AnyView<'_>],
        body: impl for<'b> FnOnce(&'b [AnyView<'b>]) -> Result<Any>,
    ) -> Result<Any> {
        if args.len() == self.params.len() && (self.names.is_empty() || !may_have_marker(args)) {
            return body(args);
        }
        let mut body = Some(body);
        self.call_bound(args, &mut |views| match body.take() {
            Some(body) => body(views),
            None => Err(Error::runtime_error("a bound call ran twice")),
        })
    }

    /// A call that is not positional with every argument: binds the arguments to the
    /// parameters (on the stack for up to 8 parameters) and runs `body` with them.
    #[cold]
    #[inline(never)]
    fn call_bound(
        &self,
        args: &[AnyView<'_>],
        body: &mut dyn for<'b> FnMut(&'b [AnyView<'b>]) -> Result<Any>,
    ) -> Result<Any> {
        const INLINE: usize = 8;
        let count = self.params.len();
        let mut defaults = Vec::new();
        if count <= INLINE {
            let mut bound = [AnyView::none(); INLINE];
            self.bind(args, &mut defaults, &mut bound[..count])?;
            body(&bound[..count])
        } else {
            let mut bound = vec![AnyView::none(); count];
            self.bind(args, &mut defaults, &mut bound)?;
            body(&bound)
        }
    }

    /// Writes the arguments in parameter order into `bound` (one slot per parameter);
    /// `defaults` receives the values of omitted arguments.
    fn bind<'x>(
        &self,
        args: &[AnyView<'x>],
        defaults: &'x mut Vec<Any>,
        bound: &mut [AnyView<'x>],
    ) -> Result<()> {
        const MAX_KEYWORD_PARAMS: usize = 64;
        let count = self.params.len();
        if self.names.len() != count {
            return Err(self.arity_error(args.len()));
        }
        let marker = args.iter().position(is_marker);
        let positional = marker.unwrap_or(args.len());
        if positional > count {
            return Err(self.arity_error(positional));
        }
        if count > MAX_KEYWORD_PARAMS {
            return Err(self.call_error(&format!(
                "Keyword arguments and defaults are supported up to {MAX_KEYWORD_PARAMS} parameters"
            )));
        }
        // Bit `i`: parameter `i` has its argument.
        let mut set: u64 = 0;
        bound[..positional].copy_from_slice(&args[..positional]);
        set |= if positional == 64 {
            u64::MAX
        } else {
            (1u64 << positional) - 1
        };
        if let Some(marker) = marker {
            let pairs = &args[marker + 1..];
            if pairs.len() % 2 != 0 {
                return Err(self.call_error(
                    "Keyword arguments must come in key/value pairs after the KWARGS marker",
                ));
            }
            for pair in pairs.chunks_exact(2) {
                let Some(key) = pair[0].checked_cast::<&str>() else {
                    return Err(self.call_error(&format!(
                        "A keyword must be a string, got `{}`",
                        pair[0].type_key()
                    )));
                };
                let Some(index) = self.names.iter().position(|p| p.name == key) else {
                    return Err(self.call_error(&format!("Unexpected keyword argument `{key}`")));
                };
                if set & (1 << index) != 0 {
                    return Err(self.call_error(&format!("Multiple values for argument `{key}`")));
                }
                set |= 1 << index;
                bound[index] = pair[1];
            }
        }
        let all = if count == 64 {
            u64::MAX
        } else {
            (1u64 << count) - 1
        };
        if set == all {
            return Ok(());
        }
        for (index, param) in self.names.iter().enumerate() {
            if set & (1 << index) != 0 {
                continue;
            }
            match param.default {
                Some(value) => defaults.push(value.to_any()),
                // A short positional call keeps C++'s arity error.
                None if marker.is_none() => return Err(self.arity_error(args.len())),
                None => return Err(self.call_error(&format!("Missing argument `{}`", param.name))),
            }
        }
        let defaults: &'x Vec<Any> = defaults;
        let mut next_default = defaults.iter();
        for (index, slot) in bound.iter_mut().enumerate() {
            if set & (1 << index) == 0 {
                if let Some(value) = next_default.next() {
                    *slot = value.view();
                }
            }
        }
        Ok(())
    }

    #[cold]
    fn call_error(&self, what: &str) -> Error {
        Error::type_error(format!("{what} when calling: `{}`", self.text()))
    }
}
