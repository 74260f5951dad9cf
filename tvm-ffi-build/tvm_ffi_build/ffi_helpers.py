"""The Python side of a package built by tvm-ffi-build, run once when its `_ffi_api.py` is
imported (the build places this file next to it as `_ffi_api`'s sibling `_ffi_helpers.py`, so an
installed package needs only `apache-tvm-ffi` at run time).

* `signatures(namespace, prefix, lib)` gives the module's functions and its classes' methods and
  explicit constructors their `inspect.signature` (`help()`, IDEs) from the parameter names and
  defaults the SDK registers (metadata `arg_names`, `arg_defaults`), and makes the functions and
  member methods take keywords: the runtime's `Function.__call__` takes positional arguments
  only, so each one with named parameters is replaced by a generated Python function with those
  parameters, which calls the runtime's function with every argument in position (or, where
  Python cannot take the names, passes keywords in the runtime's `KWARGS` convention, which the
  Rust binder reads).
* `fast_constructors(namespace, lib)` makes `Type(1, 2)` call the type's `__ffi_init__` directly
  (about a third of the runtime's `__init__`, which copies and normalizes its arguments first):
  each eligible class gets a metaclass of its own whose `__call__` hands the arguments to
  `__ffi_init__`, keywords in the `KWARGS` convention exactly as the runtime's `__init__` passes
  them. Eligible: a class registered for its type whose `__init__` is the runtime's generated one
  and adds nothing to the call (no `__post_init__`, no init properties, no Python enum field). A
  Python subclass gets the plain metaclass back, so it constructs as it always did.

Anything unexpected (another runtime version's internals) leaves a name or class as it was
rather than failing the import.
"""

from __future__ import annotations

import inspect
import itertools
import keyword
from typing import Any

import tvm_ffi
from tvm_ffi import _dunder, core

__all__ = ["fast_constructors", "parameters", "signatures"]


def parameters(names: list[str], defaults: dict[str, object], scope: dict[str, object]) -> str | None:
    # The parameter list of a generated `def` taking `names`, with `defaults` (stored in
    # `scope`), or None where Python cannot take them: a repeated name, one that is no
    # identifier, a keyword or one of `scope`'s, or a default before a parameter without one.
    first = next((i for i, name in enumerate(names) if name in defaults), len(names))
    if (len(set(names)) != len(names) or not all(name in defaults for name in names[first:])
            or any(not name.isidentifier() or keyword.iskeyword(name) or name in scope
                   or name.startswith("__d") for name in names)):
        return None
    params = []
    for i, name in enumerate(names):
        if name in defaults:
            scope[f"__d{i}"] = defaults[name]
            params.append(f"{name}=__d{i}")
        else:
            params.append(name)
    return ", ".join(params)


def signatures(namespace: dict[str, object], prefix: str, lib: object = None) -> None:
    param = inspect.Parameter

    def signature(meta: dict[str, object], keywords: bool) -> inspect.Signature | None:
        names = meta.get("arg_names")
        if not isinstance(names, list):
            return None
        found = meta.get("arg_defaults")
        defaults: dict[str, object] = found if isinstance(found, dict) else {}
        kind = param.POSITIONAL_OR_KEYWORD if keywords else param.POSITIONAL_ONLY
        return inspect.Signature([
            param(str(name), param.POSITIONAL_ONLY if name == "self" else kind,
                  default=defaults.get(str(name), param.empty))
            for name in names
        ])

    marker = core.KWARGS
    pairs = itertools.chain.from_iterable

    def keyword_callable(function: Any, meta: dict[str, Any]) -> Any:
        names = [str(name) for name in meta["arg_names"]]
        scope: dict[str, Any] = {"__f": function}
        params = parameters(names, meta.get("arg_defaults") or {}, scope)
        if params is not None:  # `def f(a, b=1): return __f(a, b)`
            if names[:1] == ["self"]:
                params = "self, /" + params[len("self"):]
            exec(f"def call({params}):\n    return __f({', '.join(names)})\n", scope)
            call: Any = scope["call"]
        else:
            def with_kwargs(*args: Any, **kwargs: Any) -> Any:
                if kwargs:
                    return function(*args, marker, *pairs(kwargs.items()))
                return function(*args)

            call = with_kwargs

        setattr(call, "__ffi_keywords__", True)  # what a second run over the namespace leaves alone
        return call

    # The runtime's wrapper of a member method (`_member_method_wrapper`): only that one is
    # replaced (a class may define its own method of the name).
    probe: Any = getattr(core, "_member_method_wrapper", None)
    wrapper_code: Any = getattr(probe(len) if probe else None, "__code__", None)

    def is_runtime_wrapper(attr: Any) -> bool:
        code = getattr(attr, "__code__", None)
        return (code is not None and wrapper_code is not None
                and (code.co_filename, code.co_name) == (wrapper_code.co_filename, wrapper_code.co_name))

    # A convenience: a runtime without the metadata API (or objects that refuse attributes, or
    # a name not registered) leaves those functions positional-only and their signatures unset
    # rather than failing the import.
    get_metadata = getattr(tvm_ffi, "get_global_func_metadata", None)
    for name, value in list(namespace.items()):
        try:
            if type(value) is core.Function and value.__chandle__():
                meta = get_metadata(prefix + name) if get_metadata else {}
                sig = signature(meta, True)
                if sig is not None:
                    made = namespace[name] = keyword_callable(value, meta)
                    made.__name__ = made.__qualname__ = name
                    made.__module__ = str(namespace.get("__name__", made.__module__))
                    made.__doc__ = getattr(value, "__doc__", None)
                    setattr(made, "__signature__", sig)
                continue
            if not isinstance(value, type):
                continue
            info = getattr(value, "__tvm_ffi_type_info__", None)
            for method in getattr(info, "methods", None) or []:
                meta = getattr(method, "metadata", None) or {}
                attr = value.__dict__.get(method.name)
                target = getattr(attr, "__func__", attr)
                if getattr(target, "__ffi_keywords__", False):
                    continue  # made by an earlier run over the same class
                if method.name == "__ffi_init__":
                    sig = signature(meta, True)
                    init = value.__dict__.get("__init__")
                    if sig is not None and init is not None:
                        self_param = param("self", param.POSITIONAL_ONLY)
                        sig = sig.replace(parameters=[self_param, *sig.parameters.values()])
                        setattr(init, "__signature__", sig)
                        if target is not None:
                            setattr(target, "__signature__", sig)
                    continue
                static = isinstance(attr, staticmethod) and target is method.func
                member = not static and is_runtime_wrapper(attr)
                usable = type(method.func) is core.Function and bool(method.func.__chandle__())
                sig = signature(meta, usable and (static or member))
                if sig is not None and usable and (static or member):
                    made = keyword_callable(method.func, meta)
                    for key in ("__module__", "__name__", "__qualname__", "__doc__"):
                        if hasattr(target, key):  # the names the runtime gave the method
                            setattr(made, key, getattr(target, key))
                    setattr(value, method.name, made if member else staticmethod(made))
                    target = made
                if sig is not None and target is not None:
                    setattr(target, "__signature__", sig)
        except Exception:
            continue


def fast_constructors(namespace: dict[str, object], lib: object = None) -> None:
    base: Any = type(tvm_ffi.Object)
    marker, missing = core.KWARGS, core.MISSING
    pairs = itertools.chain.from_iterable

    def eligible_init(cls: type) -> Any:
        info: Any = cls.__dict__.get("__tvm_ffi_type_info__")
        if info is None or getattr(info, "type_cls", None) is not cls or type(cls) is not base:
            return None
        code: Any = getattr(cls.__dict__.get("__init__"), "__code__", None)
        if code is None or code.co_filename != _dunder._make_init.__code__.co_filename:
            return None
        if hasattr(cls, "__post_init__") or _dunder._collect_init_property_funcs(cls):
            return None
        _, fields = _dunder._init_normalization_fields(info)
        if any(field._is_payload_enum_field() for field in fields.values()):
            return None
        for method in info.methods:
            if method.name == "__ffi_init__":
                return method.func
        return core._lookup_type_attr(info.type_index, "__ffi_init__")

    def generated(cls: Any, make: Any, slow: Any) -> Any:
        # For a Rust constructor (`arg_names`, literal `arg_defaults`): `def Type(a, b=1)`
        # calling `make(a, b)`, Python binding the keywords (a static `__call__` of the
        # metaclass: not given the class); a `MISSING` value (which the runtime's `__init__`
        # drops) takes the general path.
        meta: dict[str, Any] = {}
        for method in cls.__dict__["__tvm_ffi_type_info__"].methods:
            if method.name == "__ffi_init__":
                meta = dict(method.metadata)
        names = [str(name) for name in meta.get("arg_names", ())]
        scope: dict[str, Any] = {"__make": make, "__M": missing, "__slow": slow, "__cls": cls}
        params = parameters(names, meta.get("arg_defaults") or {}, scope)
        if not names or params is None:
            return None
        given = ", ".join(names)
        exec(f"def call({params}):\n"
             f"    if {' or '.join(f'{n} is __M' for n in names)}:\n"
             f"        return __slow(__cls, {', '.join(f'{n}={n}' for n in names)})\n"
             f"    return __make({given})\n", scope)
        call = scope["call"]
        call.__name__ = call.__qualname__ = cls.__name__
        return call

    def fast_metaclass(cls: Any, make: Any) -> Any:
        def __call__(cls: Any, *args: Any, **kwargs: Any) -> Any:
            if kwargs:  # as the runtime's `__init__` passes them (`MISSING` values left out)
                if any(value is missing for value in kwargs.values()):
                    kwargs = {k: v for k, v in kwargs.items() if v is not missing}
                return make(*args, marker, *pairs(kwargs.items()))
            return make(*args)

        plain = generated(cls, make, __call__)
        call: Any = __call__ if plain is None else staticmethod(plain)
        try:
            setattr(plain or __call__, "__signature__", inspect.signature(cls.__dict__["__init__"]))
        except (KeyError, TypeError, ValueError):
            pass

        def __init__(sub: Any, *args: Any, **kwargs: Any) -> None:
            base.__init__(sub, *args, **kwargs)
            sub.__class__ = base  # a subclass constructs through its own `__init__`

        return type(f"{cls.__name__}Meta", (base,), {"__call__": call, "__init__": __init__,
                                                     "__module__": cls.__module__})

    for value in list(namespace.values()):
        try:
            if isinstance(value, type) and (make := eligible_init(value)) is not None:
                value.__class__ = fast_metaclass(value, make)
        except (AttributeError, TypeError, ValueError):
            continue
