//! The hooks the runtime calls, each registered as a type attribute by a method option
//! (`#[ffi(repr)]` ...): read by the method parser and by the reserved-name check of
//! `type_attr`.

/// A hook the runtime or `tvm_ffi` calls, registered as a type attribute.
pub struct Hook {
    /// The option that marks the function (`#[ffi(repr)]`).
    pub option: &'static str,
    /// The type attribute (`__ffi_repr__`).
    pub attr: &'static str,
    /// Whether it takes the object as receiver (else it is static).
    pub receiver: bool,
    /// Its parameters after the receiver, as the runtime passes them (for messages).
    pub params: &'static [&'static str],
}

/// The hooks of the pinned runtime (`include/tvm/ffi/extra/dataclass.h`, `structural_*.h`,
/// `serialization.h`, `reflection/creator.h`), with the signatures it calls them with.
pub static HOOKS: &[Hook] = &[
    Hook {
        option: "repr",
        attr: "__ffi_repr__",
        receiver: true,
        params: &["fn_repr: Function"],
    },
    Hook {
        option: "eq",
        attr: "__ffi_eq__",
        receiver: true,
        params: &["other", "fn_eq: Function"],
    },
    Hook {
        option: "hash",
        attr: "__ffi_hash__",
        receiver: true,
        params: &["fn_hash: Function"],
    },
    Hook {
        option: "compare",
        attr: "__ffi_compare__",
        receiver: true,
        params: &["other", "fn_cmp: Function"],
    },
    Hook {
        option: "s_equal",
        attr: "__s_equal__",
        receiver: true,
        params: &["other", "equal: Function"],
    },
    Hook {
        option: "s_hash",
        attr: "__s_hash__",
        receiver: true,
        params: &["init: i64", "hash: Function"],
    },
    Hook {
        option: "data_to_json",
        attr: "__data_to_json__",
        receiver: true,
        params: &[],
    },
    Hook {
        option: "data_from_json",
        attr: "__data_from_json__",
        receiver: false,
        params: &["data: Any"],
    },
    Hook {
        option: "convert",
        attr: "__ffi_convert__",
        receiver: false,
        params: &["value: Any"],
    },
];
