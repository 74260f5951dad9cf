//! `match_any!`: typed arms over a TVM-FFI value (`Any`, `AnyView`, `ObjectRef<T>`, a container
//! ...), tried in source order.
//!
//! Input (after the `match_any!` wrapper of `tvm_ffi` prepends the crate path and a `;`):
//!
//! ```text
//! SCRUTINEE {
//!     Type(PATTERN) [if GUARD] => BODY,
//!     ...
//!     _ => FALLBACK,
//! }
//! ```
//!
//! Each arm takes a value whose runtime type is its type's (`FromAny::match_type_index`),
//! converts it as `checked_cast` does (`FromAny::from_any`), then matches `PATTERN`
//! (refutable patterns fall through to the next arm) and the guard. The
//! expansion is one chain of nested `match`es, so arm bodies and the fallback are ordinary
//! expressions of the caller's function (`return`, `?`, `break` and `continue` of the caller's
//! loops work in them). With [`MIN_TABLE_ARMS`] arms or more, a per-call-site table keyed by
//! the value's runtime type index caches `match_type_index` of every arm as a bit mask, and
//! the chain skips the arms that do not take the value with one bit test each. When no arm binds
//! or guards (a classification), the arm is found from the mask's lowest bit instead, and taken
//! without a conversion when its type converts every sealed value of its type index
//! (`FromAny::MATCHED_BY_TYPE_INDEX`, object references) and the value is sealed.
use proc_macro2::{Span, TokenStream, TokenTree};
use quote::{quote, quote_spanned};
use syn::parse::{Parse, ParseStream};
use syn::spanned::Spanned;
use syn::{braced, parenthesized, Expr, Pat, Path, Token};

/// From this many typed arms on, the expansion consults the type-index table.
const MIN_TABLE_ARMS: usize = 4;
/// Arms past this many test their type inline instead (the table is a 64-bit mask whose top
/// bit says "filled").
const TABLE_BITS: usize = 63;

struct Input {
    krate: TokenStream,
    scrutinee: Expr,
    arms: Vec<Arm>,
    fallback: Expr,
}

struct Arm {
    /// The target type: a path (`Point`, `Array<i64>`, `Array::<i64>`, `i64`) or `&` a path
    /// (`&str`, `&ObjectRef<Point>`).
    ty: TokenStream,
    pat: Pat,
    guard: Option<Expr>,
    body: Expr,
}

impl Parse for Input {
    fn parse(input: ParseStream<'_>) -> syn::Result<Self> {
        let mut krate = TokenStream::new();
        while !input.peek(Token![;]) {
            krate.extend([input.parse::<TokenTree>()?]);
        }
        input.parse::<Token![;]>()?;
        let scrutinee = input.call(Expr::parse_without_eager_brace)?;
        let content;
        braced!(content in input);
        let mut arms = Vec::new();
        let mut fallback = None;
        while !content.is_empty() {
            if fallback.is_some() {
                return Err(content.error(
                    "the `_` fallback must be the last arm of `match_any!`: arms after it would never run",
                ));
            }
            if content.peek(Token![_]) {
                content.parse::<Token![_]>()?;
                if content.peek(Token![if]) {
                    return Err(content.error(
                        "the `_` fallback of `match_any!` cannot have a guard: it is what runs when no arm matched",
                    ));
                }
                content.parse::<Token![=>]>()?;
                let body: Expr = content.parse()?;
                let needs_comma = !matches!(body, Expr::Block(_));
                fallback = Some(body);
                if content.peek(Token![,]) {
                    content.parse::<Token![,]>()?;
                } else if needs_comma && !content.is_empty() {
                    return Err(content.error("expected `,` after the arm of `match_any!`"));
                }
                continue;
            }
            let ty = parse_arm_type(&content)?;
            let binding;
            parenthesized!(binding in content);
            let pat = Pat::parse_multi_with_leading_vert(&binding)?;
            if !binding.is_empty() {
                return Err(binding.error(
                    "a typed arm binds one pattern: `Type(pattern)`; use a tuple pattern inside for more",
                ));
            }
            let guard = if content.peek(Token![if]) {
                content.parse::<Token![if]>()?;
                Some(content.parse::<Expr>()?)
            } else {
                None
            };
            content.parse::<Token![=>]>()?;
            let body: Expr = content.parse()?;
            let needs_comma = !matches!(body, Expr::Block(_));
            if content.peek(Token![,]) {
                content.parse::<Token![,]>()?;
            } else if needs_comma && !content.is_empty() {
                return Err(content.error("expected `,` after the arm of `match_any!`"));
            }
            arms.push(Arm {
                ty,
                pat,
                guard,
                body,
            });
        }
        let fallback = fallback.ok_or_else(|| {
            content.error(
                "`match_any!` needs a final `_ => ..` arm: the value may be of any type, so the arms cannot be exhaustive",
            )
        })?;
        if let Some(guard) = arms
            .iter()
            .filter_map(|a| a.guard.as_ref())
            .find(|g| has_loop_jump(g))
        {
            return Err(syn::Error::new(
                guard.span(),
                "`break`/`continue` in a `match_any!` guard are not supported: move them into the arm's body",
            ));
        }
        Ok(Input {
            krate,
            scrutinee,
            arms,
            fallback,
        })
    }
}

/// The arm's type: `&`? then a path with optional generic arguments (`Array<i64>` or
/// `Array::<i64>`), stopping before the `(` of the binding.
fn parse_arm_type(input: ParseStream<'_>) -> syn::Result<TokenStream> {
    let amp: Option<Token![&]> = input.parse()?;
    let lifetime: Option<syn::Lifetime> = if amp.is_some() && input.peek(syn::Lifetime) {
        Some(input.parse()?)
    } else {
        None
    };
    if !(input.peek(syn::Ident) || input.peek(Token![::])) {
        return Err(input.error(
            "expected a typed arm `Type(pattern) => ..` (e.g. `i64(x)`, `Array<i64>(xs)`, \
             `ObjectRef<Point>(p)`) or the fallback `_ => ..`",
        ));
    }
    let path: Path = input.parse()?;
    if !input.peek(syn::token::Paren) {
        return Err(input.error(format!(
            "expected `(pattern)` after `{}`: a typed arm binds the converted value in parentheses",
            quote!(#path).to_string().replace(' ', "")
        )));
    }
    Ok(quote!(#amp #lifetime #path))
}

/// Whether `guard` contains `break` or `continue` (outside closures it would jump out of the
/// expansion's own control flow).
fn has_loop_jump(guard: &Expr) -> bool {
    fn scan(tokens: TokenStream) -> bool {
        tokens.into_iter().any(|t| match t {
            TokenTree::Ident(i) => i == "break" || i == "continue",
            TokenTree::Group(g) => scan(g.stream()),
            _ => false,
        })
    }
    scan(quote!(#guard))
}

pub fn expand(input: TokenStream) -> TokenStream {
    match syn::parse2::<Input>(input) {
        Ok(input) => generate(input),
        Err(err) => err.to_compile_error(),
    }
}

fn generate(input: Input) -> TokenStream {
    let Input {
        krate,
        scrutinee,
        arms,
        fallback,
    } = input;
    let site = Span::mixed_site();
    // Spanned at the scrutinee, so that a value that cannot be matched is reported there (a
    // mixed-site span is reported at the macro call).
    let source = syn::Ident::new("__tvm_ffi_match_source", scrutinee.span());
    let view = syn::Ident::new("__tvm_ffi_match_view", site);
    let mask = syn::Ident::new("__tvm_ffi_match_mask", site);
    let table = syn::Ident::new("__TVM_FFI_MATCH_TABLE", site);
    let index = syn::Ident::new("__tvm_ffi_match_index", site);
    let private = quote!(#krate::__private::matching);
    let use_table = arms.len() >= MIN_TABLE_ARMS;
    let view_of = quote_spanned! {scrutinee.span()=>
        #private::MatchSource::match_view(#source)
    };

    // Arms that bind nothing and have no guard (`Leaf(_) => ..`, a classification) are decided
    // by their type alone: the table's mask names the candidates, the first that converts is
    // found from the mask's lowest bit on, and one `match` on its position runs its body, in
    // place of a test per arm before it.
    let by_position = use_table
        && arms.len() <= TABLE_BITS
        && arms
            .iter()
            .all(|arm| matches!(arm.pat, Pat::Wild(_)) && arm.guard.is_none());
    let chain = if by_position {
        let position = syn::Ident::new("__tvm_ffi_match_arm", site);
        let rest = syn::Ident::new("__tvm_ffi_match_rest", site);
        let tests = arms.iter().enumerate().map(|(k, arm)| {
            let (ty, k) = (&arm.ty, k as u32);
            quote_spanned! {ty.span()=>
                #k => <#ty as #krate::FromAny<'_>>::converts(&#view),
            }
        });
        let bodies = arms.iter().enumerate().map(|(k, arm)| {
            let (body, k) = (&arm.body, k as u32);
            quote!(#k => { #body })
        });
        // Arms whose type converts every sealed value of a matching type index: the first
        // candidate is taken from the table alone when it is one of them.
        let by_index = arms.iter().enumerate().map(|(k, arm)| {
            let (ty, k) = (&arm.ty, k as u32);
            quote_spanned! {ty.span()=>
                ((<#ty as #krate::FromAny<'_>>::MATCHED_BY_TYPE_INDEX as u64) << #k)
            }
        });
        let first = syn::Ident::new("__tvm_ffi_match_first", site);
        quote! {{
            let #first: u32 = #mask.trailing_zeros();
            let #position: u32 = if #first < 64
                && ((0u64 #(| #by_index)*) >> #first) & 1 != 0
                && #private::settled(&#view)
            {
                #first
            } else {
                let mut #rest: u64 = #mask;
                loop {
                    if #rest == 0 {
                        break u32::MAX;
                    }
                    let k = #rest.trailing_zeros();
                    if match k { #(#tests)* _ => false } {
                        break k;
                    }
                    #rest &= #rest - 1;
                }
            };
            match #position {
                #(#bodies)*
                _ => { #fallback }
            }
        }}
    } else {
        chain(&krate, &arms, &fallback, &view, &mask, use_table)
    };

    let table_setup = if use_table {
        let checks = arms.iter().take(TABLE_BITS).enumerate().map(|(k, arm)| {
            let ty = &arm.ty;
            let bit = 1u64 << k;
            quote_spanned! {ty.span()=>
                if <#ty as #krate::FromAny<'_>>::match_type_index(#index) {
                    #mask |= #bit;
                }
            }
        });
        quote! {
            static #table: #private::ArmTable = #private::ArmTable::new();
            let #mask: u64 = #table.candidates(
                #krate::AnyView::type_index(&#view),
                (|#index: i32| -> u64 {
                    let mut #mask: u64 = 0;
                    #(#checks)*
                    #mask
                }) as fn(i32) -> u64,
            );
        }
    } else {
        quote!()
    };

    quote! {
        {
            let #source = &(#scrutinee);
            let #view: #krate::AnyView<'_> = #view_of;
            #table_setup
            #chain
        }
    }
}

/// The arms as a chain of nested tests in source order, each skipped by one bit test of the
/// table's mask (or its own type test past the table's bits).
fn chain(
    krate: &TokenStream,
    arms: &[Arm],
    fallback: &Expr,
    view: &syn::Ident,
    mask: &syn::Ident,
    use_table: bool,
) -> TokenStream {
    arms.iter()
        .enumerate()
        .rev()
        .fold(quote!({ #fallback }), |next, (k, arm)| {
            let Arm {
                ty,
                pat,
                guard,
                body,
            } = arm;
            let span = ty.span();
            let convert = quote_spanned! {span=>
                <#ty as #krate::FromAny<'_>>::from_any(&#view)
            };
            let takes = if use_table && k < TABLE_BITS {
                let bit = 1u64 << k;
                quote!(#mask & #bit != 0)
            } else {
                quote_spanned! {span=>
                    <#ty as #krate::FromAny<'_>>::match_type_index(
                        #krate::AnyView::type_index(&#view),
                    )
                }
            };
            let convert = quote! {
                if #takes {
                    #convert
                } else {
                    ::core::option::Option::None
                }
            };
            if let Pat::Wild(_) = pat {
                // The arm binds nothing: ask whether the value converts, without converting it
                // (no reference count taken and released for an object).
                let converts = quote_spanned! {span=>
                    <#ty as #krate::FromAny<'_>>::converts(&#view)
                };
                let guard = guard.as_ref().map(|g| quote!(&& (#g)));
                return quote! {
                    if #takes && #converts #guard { #body } else { #next }
                };
            }
            let guard = guard.as_ref().map(|g| quote!(if #g));
            quote! {
                match #convert {
                    ::core::option::Option::Some(#pat) #guard => { #body }
                    _ => #next,
                }
            }
        })
}
