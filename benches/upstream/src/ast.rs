//! The same 20-leaf expression hierarchy in both crates (upstream's
//! `test_match_any_ast_lookup.rs` shape), for the `match` row: `match_any!` over 20 arms naming
//! final leaf types, fed each leaf in turn.

/// Declares the leaves of one crate's hierarchy and a `classify` matching all of them.
macro_rules! leaves_sdk {
    ($($obj:ident, $handle:ident, $key:literal, $label:literal;)+) => {
        $(
            /// A final leaf.
            #[derive(Object)]
            #[ffi_type(key = $key, final)]
            #[repr(C)]
            pub struct $obj {
                #[ffi(base)]
                pub base: ExprObj,
            }
            pub type $handle = ObjectRef<$obj>;
        )+

        /// One value of every leaf, in declaration order.
        pub fn all() -> Vec<Any> {
            vec![$(Any::new($handle::new($obj { base: ExprObj { tag: 0 } }))),+]
        }

        #[inline(never)]
        pub fn classify(value: &Any) -> &'static str {
            match_any! {
                value {
                    $($handle(_) => $label,)+
                    _ => "unsupported",
                }
            }
        }
    };
}

macro_rules! leaves_upstream {
    ($($obj:ident, $handle:ident, $key:literal, $label:literal;)+) => {
        $(
            #[repr(C)]
            #[derive(Object)]
            #[type_key = $key]
            #[type_register]
            #[type_final]
            pub struct $obj {
                base: ExprObj,
            }

            #[repr(C)]
            #[derive(ObjectRef, Clone)]
            pub struct $handle {
                data: ObjectArc<$obj>,
            }
        )+

        /// One value of every leaf, in declaration order (registering the types first).
        pub fn all() -> Vec<Any> {
            let _ = ExprObj::type_index();
            vec![$({
                let _ = $obj::type_index();
                Any::from($handle {
                    data: ObjectArc::new($obj { base: ExprObj { base: ObjectBase::new() } }),
                })
            }),+]
        }

        #[inline(never)]
        pub fn classify(value: &Any) -> &'static str {
            match_any! {
                (*value) {
                    $($handle(_) => $label,)+
                    _ => "unsupported",
                }
            }
        }
    };
}

/// This SDK's hierarchy.
pub mod sdk {
    use tvm_ffi::{match_any, Any, Object, ObjectRef};

    /// The base of the expression tree.
    #[derive(Object)]
    #[ffi_type(key = "bench_upstream.sdk.Expr")]
    #[repr(C)]
    pub struct ExprObj {
        pub tag: i64,
    }

    leaves_sdk! {
        AddObj, Add, "bench_upstream.sdk.Add", "add";
        SubObj, Sub, "bench_upstream.sdk.Sub", "sub";
        MulObj, Mul, "bench_upstream.sdk.Mul", "mul";
        DivObj, Div, "bench_upstream.sdk.Div", "div";
        ModObj, Mod, "bench_upstream.sdk.Mod", "mod";
        NegObj, Neg, "bench_upstream.sdk.Neg", "neg";
        CallObj, Call, "bench_upstream.sdk.Call", "call";
        LetObj, Let, "bench_upstream.sdk.Let", "let";
        IfObj, If, "bench_upstream.sdk.If", "if";
        TupleObj, Tuple, "bench_upstream.sdk.Tuple", "tuple";
        GetItemObj, GetItem, "bench_upstream.sdk.GetItem", "get_item";
        CastObj, Cast, "bench_upstream.sdk.Cast", "cast";
        LoadObj, Load, "bench_upstream.sdk.Load", "load";
        StoreObj, Store, "bench_upstream.sdk.Store", "store";
        ForObj, For, "bench_upstream.sdk.For", "for";
        WhileObj, While, "bench_upstream.sdk.While", "while";
        SeqObj, Seq, "bench_upstream.sdk.Seq", "seq";
        ReturnObj, Return, "bench_upstream.sdk.Return", "return";
        ConstantObj, Constant, "bench_upstream.sdk.Constant", "constant";
        VarObj, Var, "bench_upstream.sdk.Var", "var";
    }
}

/// Upstream's hierarchy (its derives name the crate `tvm_ffi`: the alias below).
pub mod upstream_ast {
    use upstream as tvm_ffi;

    use tvm_ffi::derive::{Object, ObjectRef};
    use tvm_ffi::object::{Object as ObjectBase, ObjectArc, ObjectCore};
    use tvm_ffi::{match_any, Any};

    #[repr(C)]
    #[derive(Object)]
    #[type_key = "bench_upstream.upstream.Expr"]
    #[type_register]
    #[type_child_slots = 20]
    #[type_child_slots_can_overflow = false]
    pub struct ExprObj {
        base: ObjectBase,
    }

    leaves_upstream! {
        AddObj, Add, "bench_upstream.upstream.Add", "add";
        SubObj, Sub, "bench_upstream.upstream.Sub", "sub";
        MulObj, Mul, "bench_upstream.upstream.Mul", "mul";
        DivObj, Div, "bench_upstream.upstream.Div", "div";
        ModObj, Mod, "bench_upstream.upstream.Mod", "mod";
        NegObj, Neg, "bench_upstream.upstream.Neg", "neg";
        CallObj, Call, "bench_upstream.upstream.Call", "call";
        LetObj, Let, "bench_upstream.upstream.Let", "let";
        IfObj, If, "bench_upstream.upstream.If", "if";
        TupleObj, Tuple, "bench_upstream.upstream.Tuple", "tuple";
        GetItemObj, GetItem, "bench_upstream.upstream.GetItem", "get_item";
        CastObj, Cast, "bench_upstream.upstream.Cast", "cast";
        LoadObj, Load, "bench_upstream.upstream.Load", "load";
        StoreObj, Store, "bench_upstream.upstream.Store", "store";
        ForObj, For, "bench_upstream.upstream.For", "for";
        WhileObj, While, "bench_upstream.upstream.While", "while";
        SeqObj, Seq, "bench_upstream.upstream.Seq", "seq";
        ReturnObj, Return, "bench_upstream.upstream.Return", "return";
        ConstantObj, Constant, "bench_upstream.upstream.Constant", "constant";
        VarObj, Var, "bench_upstream.upstream.Var", "var";
    }
}
