//! `#[dispatch(walk)]` / `#[dispatch(visit)]` / `#[dispatch(map)]` / `#[dispatch(mutate)]` on an
//! inherent `impl` block: a structural walk handler (`structural::VisitDispatch`), a user-driven
//! visitor (`structural::Visitor`), a mapper (`structural::MapDispatch`) or a user-driven
//! mutator (`structural::Mutator`) made of the block's `walk_*` / `visit_*` / `map_*` /
//! `mutate_*` methods, tried in source order (the first whose value argument
//! matches runs). Parsed and expanded in one module, like `match_any`.
//!
//! A handler is `fn walk_x(&mut self, value: T) -> R` or `fn walk_x(&mut self, value: T, kind:
//! DefRegionKind) -> R`, with `T` anything a walk callback takes (`i64`, `Array<i64>`, `&Node`,
//! `&VisitValue`, ...); each becomes a closure of the same shape handed to the runtime's link
//! trait, so a handler accepts exactly what a closure in a walk chain accepts. A visitor's
//! handler returns `()`, `Option<VisitInterrupt>` or a `Result` of either, and owns the
//! recursion below its value (`self.visit_child`, `self.default_visit_children`); a value no
//! handler takes has its default children visited. `#[dispatch(visit, policy = expr)]` runs that
//! default descent (and `self.default_visit_children`) through the context policy `expr`, a
//! `structural::ContextPolicy<Self>` (evaluated at each descent). A mutator's handler returns the
//! replacement and likewise owns the recursion (`self.mutate_child`, `self.default_mutate`); a
//! value no handler takes has its default children mutated. A mutator's handler may take a
//! `MutateValue<'_, T>` (the link receives the engine's in-place permission), and
//! `#[dispatch(mutate, policy = <expr>)]` runs a context policy around its default descent.
use proc_macro2::{Span, TokenStream};
use quote::{format_ident, quote, quote_spanned};
use syn::parse::{Parse, ParseStream};
use syn::spanned::Spanned;
use syn::{FnArg, ImplItem, ItemImpl, Token};

use crate::crate_path;

/// What the attribute generates.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Mode {
    Walk,
    Visit,
    Map,
    Mutate,
}

struct Args {
    mode: Mode,
    krate: TokenStream,
    /// `policy = expr` of a visitor or a mutator: the context policy its default descent runs
    /// through.
    policy: Option<syn::Expr>,
}

impl Parse for Args {
    fn parse(input: ParseStream<'_>) -> syn::Result<Self> {
        let usage = "`#[dispatch(walk)]` (a structural walk handler), `#[dispatch(visit)]` (a \
                     structural visitor), `#[dispatch(map)]` (a structural mapper) or \
                     `#[dispatch(mutate)]` (a structural mutator), optionally with \
                     `crate = \"..\"`";
        if input.is_empty() {
            return Err(syn::Error::new(
                Span::call_site(),
                format!("expected {usage}"),
            ));
        }
        let ident: syn::Ident = input.parse()?;
        let mode = match ident.to_string().as_str() {
            "walk" => Mode::Walk,
            "visit" => Mode::Visit,
            "map" => Mode::Map,
            "mutate" => Mode::Mutate,
            _ => {
                return Err(syn::Error::new(
                    ident.span(),
                    format!("unknown dispatch kind `{ident}`: expected {usage}"),
                ))
            }
        };
        let mut krate = None;
        let mut policy = None;
        while !input.is_empty() {
            input.parse::<Token![,]>()?;
            if input.is_empty() {
                break;
            }
            let key: syn::Ident = input.call(syn::ext::IdentExt::parse_any)?;
            if key == "policy" {
                if !matches!(mode, Mode::Visit | Mode::Mutate) {
                    return Err(syn::Error::new(
                        key.span(),
                        "`policy = ..` is an option of `#[dispatch(visit)]` and `#[dispatch(mutate)]` \
                         (the default descent through a `structural::ContextPolicy<Self>` or \
                         `structural::MutContextPolicy<Self>`)",
                    ));
                }
                if policy.is_some() {
                    return Err(syn::Error::new(key.span(), "`policy` is given twice"));
                }
                input.parse::<Token![=]>()?;
                policy = Some(input.parse::<syn::Expr>()?);
                continue;
            }
            if key != "crate" {
                return Err(syn::Error::new(
                    key.span(),
                    format!(
                        "unknown option `{key}`: expected {usage}, or `#[dispatch(visit, policy \
                         = expr)]`"
                    ),
                ));
            }
            if krate.is_some() {
                return Err(syn::Error::new(key.span(), "`crate` is given twice"));
            }
            input.parse::<Token![=]>()?;
            krate = Some(crate_path::parse(&input.parse::<syn::LitStr>()?)?);
        }
        Ok(Args {
            mode,
            krate: krate.unwrap_or_else(crate_path::default_crate),
            policy,
        })
    }
}

/// Expands the attribute; on error the item is re-emitted unchanged next to the errors.
pub fn expand(attr: TokenStream, item: TokenStream) -> TokenStream {
    match try_expand(attr, item.clone()) {
        Ok(tokens) => tokens,
        Err(error) => {
            let error = error.to_compile_error();
            quote!(#item #error)
        }
    }
}

fn try_expand(attr: TokenStream, item: TokenStream) -> syn::Result<TokenStream> {
    let args: Args = syn::parse2(attr)?;
    let block: ItemImpl = syn::parse2(item).map_err(|e| {
        syn::Error::new(
            e.span(),
            "`#[dispatch(..)]` goes on an inherent `impl` block whose `walk_*` / `visit_*` / \
             `map_*` methods are the handlers",
        )
    })?;
    if let Some((_, path, _)) = &block.trait_ {
        return Err(syn::Error::new(
            path.span(),
            "`#[dispatch(..)]` goes on an inherent `impl` block, not a trait implementation",
        ));
    }
    let prefix = match args.mode {
        Mode::Walk => "walk_",
        Mode::Visit => "visit_",
        Mode::Map => "map_",
        Mode::Mutate => "mutate_",
    };
    let krate = &args.krate;
    let mut errors: Option<syn::Error> = None;
    fn push(errors: &mut Option<syn::Error>, error: syn::Error) {
        match errors {
            Some(all) => all.combine(error),
            None => *errors = Some(error),
        }
    }
    let mut arms = Vec::new();
    for item in &block.items {
        let ImplItem::Fn(method) = item else { continue };
        let name = &method.sig.ident;
        if !name.to_string().starts_with(prefix) {
            continue;
        }
        let mut inputs = method.sig.inputs.iter();
        match inputs.next() {
            Some(FnArg::Receiver(receiver))
                if receiver.reference.is_some() && receiver.mutability.is_some() => {}
            first => {
                let span = first.map_or(method.sig.ident.span(), |arg| arg.span());
                push(
                    &mut errors,
                    syn::Error::new(span, format!("the handler `{name}` must take `&mut self`")),
                );
                continue;
            }
        }
        let params: Vec<&syn::Type> = inputs
            .filter_map(|arg| match arg {
                FnArg::Typed(typed) => Some(&*typed.ty),
                FnArg::Receiver(_) => None,
            })
            .collect();
        if params.is_empty() || params.len() > 2 {
            push(
                &mut errors,
                syn::Error::new(
                    method.sig.inputs.span(),
                    format!(
                        "the handler `{name}` must take the value and, optionally, a trailing \
                     `DefRegionKind` (`fn {name}(&mut self, value: T)` or `fn {name}(&mut self, \
                     value: T, kind: DefRegionKind)`)"
                    ),
                ),
            );
            continue;
        }
        if !method.sig.generics.params.is_empty() {
            push(&mut errors, syn::Error::new(
                method.sig.generics.span(),
                format!("the handler `{name}` cannot be generic: its argument type selects the values it takes"),
            ));
            continue;
        }
        let value_ty = params[0];
        let call = match args.mode {
            Mode::Walk => quote!(#krate::__private::try_visit_link),
            Mode::Visit => quote!(#krate::__private::try_visitor_link),
            Mode::Map => quote!(#krate::__private::try_map_link),
            Mode::Mutate => quote!(#krate::__private::try_mutate_link),
        };
        let span = method.sig.ident.span();
        let value = format_ident!("__dispatch_value");
        let kind = format_ident!("__dispatch_kind");
        let (call_one, call_two) = (
            quote_spanned!(span=> Self::#name(&mut *self, #value)),
            quote_spanned!(span=> Self::#name(&mut *self, #value, #kind)),
        );
        // A visitor handler's outcome travels through the walk link as a walk result.
        let (call_one, call_two) = match args.mode {
            Mode::Visit => (
                quote_spanned!(span=> #krate::__private::visit_outcome_as_walk(#call_one)),
                quote_spanned!(span=> #krate::__private::visit_outcome_as_walk(#call_two)),
            ),
            _ => (call_one, call_two),
        };
        let closure = match params.get(1) {
            None => quote_spanned!(span=> |#value: #value_ty| #call_one),
            Some(kind_ty) => quote_spanned!(span=>
                |#value: #value_ty, #kind: #kind_ty| #call_two
            ),
        };
        let found = match args.mode {
            Mode::Visit | Mode::Mutate => quote_spanned!(span=> result),
            _ => quote_spanned!(span=> ::core::option::Option::Some(result)),
        };
        // A mutator's handler may take a `MutateValue`, which carries the in-place permission.
        let mode_arg = match args.mode {
            Mode::Mutate => quote!(__dispatch_mode,),
            _ => quote!(),
        };
        arms.push(quote_spanned!(span=>
            if let ::core::option::Option::Some(result) =
                #call(#closure, __dispatch_input, #mode_arg __dispatch_region)
            {
                return #found;
            }
        ));
    }
    if arms.is_empty() && errors.is_none() {
        push(
            &mut errors,
            syn::Error::new(
                block.self_ty.span(),
                format!("`#[dispatch(..)]` found no handler: name the handler methods `{prefix}*`"),
            ),
        );
    }
    if let Some(errors) = errors {
        return Err(errors);
    }
    let (impl_generics, _, where_clause) = block.generics.split_for_impl();
    let self_ty = &block.self_ty;
    let structural = quote!(#krate::structural);
    // With a policy, the visitor's default descent runs through it; `visit` marks the region of
    // its value, which that descent cannot leave when it is a pattern.
    let (policy_scope, policy_descent) = match &args.policy {
        None => (quote!(), quote!()),
        Some(policy) => (
            quote! {
                let __dispatch_policy_scope =
                    #krate::__private::enter_policy_visit(__dispatch_region);
            },
            quote_spanned! {policy.span()=>
                fn default_visit_children(
                    &mut self,
                    __dispatch_input: &#structural::VisitValue,
                    __dispatch_region: #structural::DefRegionKind,
                ) -> #krate::Result<::core::option::Option<#structural::VisitInterrupt>>
                where
                    Self: ::core::marker::Sized,
                {
                    #krate::__private::default_visit_with_policy(
                        self,
                        &(#policy),
                        __dispatch_input,
                        __dispatch_region,
                    )
                }
            },
        ),
    };
    let dispatch_impl = match args.mode {
        Mode::Visit => quote! {
            impl #impl_generics #structural::Visitor for #self_ty #where_clause {
                fn visit(
                    &mut self,
                    __dispatch_input: &#structural::VisitValue,
                    __dispatch_region: #structural::DefRegionKind,
                ) -> #krate::Result<::core::option::Option<#structural::VisitInterrupt>> {
                    #policy_scope
                    #(#arms)*
                    #structural::Visitor::default_visit_children(
                        self,
                        __dispatch_input,
                        __dispatch_region,
                    )
                }
                #policy_descent
            }
        },
        Mode::Mutate => {
            // With `policy = ..`, every default descent runs through the policy (evaluated
            // each time, so it may read `self`).
            let on_default = args.policy.as_ref().map(|policy| {
                // Spanned at the policy: a value that is no policy of `Self` is reported there.
                let run = quote_spanned!(policy.span()=>
                    #krate::__private::mutate_with_policy(
                        self,
                        &__dispatch_policy,
                        __dispatch_value,
                        __dispatch_region,
                    )
                );
                quote! {
                    fn on_default_mutate(
                        &mut self,
                        __dispatch_value: #structural::MutateValue<'_>,
                        __dispatch_region: #structural::DefRegionKind,
                    ) -> #krate::Result<#krate::Any> {
                        let __dispatch_policy = #policy;
                        #run
                    }
                }
            });
            quote! {
            impl #impl_generics #structural::Mutator for #self_ty #where_clause {
                #on_default

                fn mutate(
                    &mut self,
                    __dispatch_input: &#structural::MapValue,
                    __dispatch_region: #structural::DefRegionKind,
                ) -> #krate::Result<#krate::Any> {
                    let __dispatch_mode = #structural::InplaceMode::Disallow;
                    #(#arms)*
                    #structural::Mutator::default_mutate(self, __dispatch_input, __dispatch_region)
                }

                fn maybe_inplace_mutate(
                    &mut self,
                    __dispatch_owned: #structural::InplaceValue<'_>,
                    __dispatch_region: #structural::DefRegionKind,
                ) -> #krate::Result<#krate::Any> {
                    {
                        let __dispatch_mode = __dispatch_owned.inplace_mode();
                        let __dispatch_input = __dispatch_owned.as_value();
                        #(#arms)*
                    }
                    #structural::Mutator::default_maybe_inplace_mutate(
                        self,
                        __dispatch_owned,
                        __dispatch_region,
                    )
                }
            }
            }
        }
        Mode::Walk => quote! {
            impl #impl_generics #structural::VisitDispatch for #self_ty #where_clause {
                #[inline]
                fn dispatch_visit(
                    &mut self,
                    __dispatch_input: &#structural::VisitValue,
                    __dispatch_region: #structural::DefRegionKind,
                ) -> ::core::option::Option<#krate::Result<#structural::WalkResult>> {
                    #(#arms)*
                    ::core::option::Option::None
                }
            }
        },
        Mode::Map => quote! {
            impl #impl_generics #structural::MapDispatch for #self_ty #where_clause {
                #[inline]
                fn dispatch_map(
                    &mut self,
                    __dispatch_input: &#structural::MapValue,
                    __dispatch_region: #structural::DefRegionKind,
                ) -> ::core::option::Option<#krate::Result<#krate::Any>> {
                    #(#arms)*
                    ::core::option::Option::None
                }
            }
        },
    };
    Ok(quote! {
        #block
        #dispatch_impl
    })
}
