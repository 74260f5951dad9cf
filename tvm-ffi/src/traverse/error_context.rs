//! The runtime's `ffi.VisitErrorContext` in the errors of structural traversals: the objects an
//! error passed through, innermost first, kept in the error's extra context as C++ traversals
//! keep them, so that `ffi.VisitErrorContext.FindAccessPaths(root, context)` (C++, Python, or
//! Rust through `Function`) turns them into the access path of the failure.
use crate::base::error::Error;
use crate::base::object::builtin::AnyObject;
use crate::base::object::ObjectRef;
use crate::base::value::Any;
use crate::call::function::GlobalCache;
use crate::data::container::List;

/// The runtime's type key of the context object.
const CONTEXT_KEY: &str = "ffi.VisitErrorContext";
/// Its field listing the objects, innermost first (`List<ObjectRef>`; C++ may seed it with
/// `None`).
const RECORDS: &str = "reverse_visit_pattern";
/// Its field keeping the error's extra context from before the traversal added its own.
const PREVIOUS: &str = "prev_error_context";

static MAKE_OBJECT: GlobalCache = GlobalCache::new("ffi.MakeObjectFromPackedArgs");

/// `error` with `node` appended to its visit context, as C++'s `UpdateVisitErrorContext` does:
/// a context only this error holds grows in place; otherwise (none yet, another kind of extra
/// context, or a context another error shares) the error gets a new one, with the records so far
/// and the previous extra context (`prev_error_context`), and the shared one stays as it was.
///
/// Best effort, as in C++: when the runtime cannot make the context, the error is returned as
/// it is (its backtrace names the same path).
#[cold]
pub(crate) fn with_visit_node(error: Error, node: &ObjectRef<AnyObject>) -> Error {
    let extra = error.extra_context();
    let context = extra
        .as_ref()
        .filter(|context| context.type_key() == CONTEXT_KEY);
    if let Some(context) = context {
        // Held by the error and by `extra` only, and the error by nothing but `error`: nobody
        // else can see the list grow.
        let error_unique = error.as_object_ref().strong_count() == 1;
        if error_unique && context.strong_count() == 2 {
            if let Ok(records) = context.get_field::<List<Any>>(RECORDS) {
                if records.as_object_ref().strong_count() == 2
                    && records.push(Any::new(node.clone())).is_ok()
                {
                    return error;
                }
            }
        }
    }
    let (mut records, previous) = match context {
        Some(context) => (
            context
                .get_field::<List<Any>>(RECORDS)
                .and_then(|records| records.snapshot())
                .unwrap_or_default(),
            context.get_field_any(PREVIOUS).unwrap_or_default(),
        ),
        None => (Vec::new(), extra.map(Any::new).unwrap_or_default()),
    };
    records.push(Any::new(node.clone()));
    let made = List::new(records).and_then(|records| {
        let make = MAKE_OBJECT.get()?;
        make.call((CONTEXT_KEY, RECORDS, records, PREVIOUS, previous))?
            .cast::<ObjectRef<AnyObject>>()
    });
    match made {
        Ok(context) => Error::with_cause_and_extra_context(
            error.kind(),
            error.message(),
            &error.backtrace(),
            error.cause_chain().as_ref(),
            Some(&context),
        ),
        Err(_) => error,
    }
}
