"""The classes and functions the Rust library registers under `my_package.`.

Written by tvm-ffi-stubgen and kept current by every build: `pip install`/`pip wheel`
regenerate the `tvm-ffi-stubgen(begin)`..`(end)` blocks from the built library (and append a
class for a type added since), `pip install -e .` rewrites this file in place. Edit only
outside the blocks (methods added to a class there stay).
"""

# tvm-ffi-stubgen(begin): import-section
# fmt: off
# isort: off
from __future__ import annotations
from tvm_ffi import Object as _ffi_Object, init_ffi_api as _FFI_INIT_FUNC, register_object as _FFI_REG_OBJ
from tvm_ffi.libinfo import load_lib_module as _FFI_LOAD_LIB
from typing import TYPE_CHECKING
# isort: on
# fmt: on
# tvm-ffi-stubgen(end)
# tvm_ffi_build: names the refined stubs use
from typing import Any
# tvm-ffi-stubgen(import-object): tvm_ffi.libinfo.load_lib_module;False;_FFI_LOAD_LIB
LIB = _FFI_LOAD_LIB("my_package", "my_package")
# tvm-ffi-stubgen(begin): global/my_package
# fmt: off
_FFI_INIT_FUNC("my_package", __name__)
if TYPE_CHECKING:
    def greet(name: str) -> str: ...
# fmt: on
# tvm-ffi-stubgen(end)
# tvm-ffi-stubgen(import-object): tvm_ffi.register_object;False;_FFI_REG_OBJ
# tvm-ffi-stubgen(import-object): ffi.Object;False;_ffi_Object
@_FFI_REG_OBJ("my_package.Counter")
class Counter(_ffi_Object):
    """FFI binding for `my_package.Counter`."""

    # tvm-ffi-stubgen(begin): object/my_package.Counter
    # fmt: off
    name: str
    count: int
    if TYPE_CHECKING:
        def __init__(self, name: str, count: int = ...) -> None: ...
        def __ffi_init__(self, name: str, count: int = ...) -> None: ...
        def add(self, /, n: int) -> int: ...
        @staticmethod
        def starting_at(name: str, start: int) -> Counter: ...
    # fmt: on
    # tvm-ffi-stubgen(end)


__all__ = [
    # tvm-ffi-stubgen(begin): __all__
    "LIB",
    "Counter",
    "greet",
    # tvm-ffi-stubgen(end)
]

# tvm_ffi_build(begin): signatures
def _ffi_native_builder(lib: object, export: str, arity: int) -> object:
    import ctypes
    import sys

    if not getattr(sys, "_is_gil_enabled", lambda: True)():
        return None
    try:
        address = getattr(lib, "get_function")(export)()
    except Exception:  # no such export, or no library given
        return None
    if not address:  # the library found no CPython functions in this process
        return None
    return ctypes.PYFUNCTYPE(ctypes.py_object, *[ctypes.py_object] * arity)(address)


def _ffi_kwargs_flat(args: tuple[object, ...], kwargs: dict[str, object], missing: object) -> list[object]:
    # The runtime's keyword convention, for the Python fallbacks: the positional arguments,
    # `KWARGS`, then name/value pairs (values that are `missing` left out).
    from tvm_ffi import core

    out = [*args, core.KWARGS]
    for item in kwargs.items():
        if item[1] is not missing:
            out.extend(item)
    return out


def _ffi_signatures(namespace: dict[str, object], prefix: str, lib: object = None) -> None:
    import inspect
    import sys
    from typing import Any

    import tvm_ffi
    from tvm_ffi import core

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

    native: Any = _ffi_native_builder(lib, "__sdk_python_keyword_function_v2", 7)
    identity: Any = None
    try:  # what the builder shares a handle through
        identity = getattr(lib, "get_function")("__sdk_python_identity_v1")
    except Exception:
        native = None

    # A function call drops no keyword value (a constructor drops the runtime's `MISSING`, as
    # its `__init__` does): the "missing" value is one no caller has.
    never: Any = object()

    class KeywordFunction(core.Function):  # the fallback for functions: a Python `__call__`
        def __call__(self, /, *args: Any, **kwargs: Any) -> Any:  # a keyword may be `self`
            flat = _ffi_kwargs_flat(args, kwargs, never) if kwargs else args
            return core.Function.__call__(self, *flat)

    def python_method(function: Any) -> Any:  # the fallback for methods (binds as functions do)
        def method(*args: Any, **kwargs: Any) -> Any:
            return function(*(_ffi_kwargs_flat(args, kwargs, never) if kwargs else args))

        return method

    # The runtime's wrapper of a member method (`_member_method_wrapper`): only that one is
    # replaced (a class may define its own method of the name).
    probe: Any = getattr(core, "_member_method_wrapper", None)
    wrapper_code: Any = getattr(probe(len) if probe else None, "__code__", None)

    def is_runtime_wrapper(attr: Any) -> bool:
        code = getattr(attr, "__code__", None)
        return (code is not None and wrapper_code is not None
                and (code.co_filename, code.co_name) == (wrapper_code.co_filename, wrapper_code.co_name))

    def with_keywords(function: Any, meta: dict[str, object], member: bool, fresh: Any) -> Any:
        # `fresh()`: another wrapper of the function, for the fallback to take over (None for
        # a method: the fallback is a Python wrapper).
        names = tuple(sys.intern(str(name)) for name in meta["arg_names"])  # type: ignore[attr-defined]
        made: Any = None
        if native is not None:
            try:  # a second object sharing `function`'s handle
                made = native(core.Function, function, identity, core.KWARGS, never, names, member)
            except Exception:  # the types could not be made: the fallback serves
                made = None
        if made is None and fresh is None:
            made = python_method(function)
        elif made is None:
            made = KeywordFunction.__new__(KeywordFunction)
            made.__move_handle_from__(fresh())
            made.release_gil = function.release_gil  # the builder copies it itself
        if isinstance(made, core.Function):
            made.__dict__.update(function.__dict__)
        setattr(made, "__ffi_keywords__", True)  # what a second run over the namespace leaves alone
        return made

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
                    fresh = lambda name=name: tvm_ffi.get_global_func(prefix + name)
                    value = namespace[name] = with_keywords(value, meta, False, fresh)
                    setattr(value, "__signature__", sig)
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
                    made = with_keywords(method.func, meta, member, None)
                    for key in ("__module__", "__name__", "__qualname__", "__doc__"):
                        if hasattr(target, key):  # the names the runtime gave the method
                            setattr(made, key, getattr(target, key))
                    setattr(value, method.name, made if member else staticmethod(made))
                    target = made
                if sig is not None and target is not None:
                    setattr(target, "__signature__", sig)
        except Exception:
            continue


def _ffi_fast_constructors(namespace: dict[str, object], lib: object = None) -> None:
    import inspect
    import sys
    from typing import Any

    import tvm_ffi
    from tvm_ffi import _dunder, core

    base: Any = type(tvm_ffi.Object)

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

    native: Any = _ffi_native_builder(lib, "__sdk_python_constructor_v1", 4)

    def parameter_names(cls: Any) -> tuple[str, ...]:
        # A Rust constructor's parameters (`arg_names`), all positional-or-keyword: keywords
        # that fill them from the front are passed by position (the runtime's generic
        # field-by-field init has none, and keeps the `KWARGS` form).
        for method in cls.__dict__["__tvm_ffi_type_info__"].methods:
            if method.name == "__ffi_init__":
                return tuple(sys.intern(str(name)) for name in method.metadata.get("arg_names", ()))
        return ()

    def fast_metaclass(cls: Any, make: Any) -> Any:
        marker, missing = core.KWARGS, core.MISSING

        def __call__(cls: Any, *args: Any, **kwargs: Any) -> Any:
            # Keywords as the runtime's `__init__` passes them (`MISSING` values left out).
            return make(*(_ffi_kwargs_flat(args, kwargs, missing) if kwargs else args))

        call: Any = None
        try:
            call = native(make, marker, missing, parameter_names(cls))
        except Exception:  # no builtin: no library export, or no CPython functions found
            call = __call__
            try:
                setattr(call, "__signature__", inspect.signature(cls.__dict__["__init__"]))
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
_ffi_signatures(globals(), "my_package.", globals().get("LIB"))
_ffi_fast_constructors(globals(), globals().get("LIB"))
# tvm_ffi_build(end)
