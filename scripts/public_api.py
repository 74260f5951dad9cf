#!/usr/bin/env python3
"""Prints the public API of the `tvm_ffi` crate, one item a line, from rustdoc's JSON.

Usage: public_api.py RUSTDOC_JSON
       public_api.py --private RUSTDOC_JSON


Every item reachable by a user is listed with its path and signature: modules, types, traits
(with `unsafe` and their items), functions (with `unsafe`), inherent methods, fields of
structs, constants, statics and macros. Items under `#[doc(hidden)]` (`__private`) are left out:
they are no API. `tvm-ffi/tests/public_api.rs` compares the listing with `public-api.txt`, so
every change to the public surface shows up as a diff of that file.

With `--private` (on JSON made with `--document-hidden-items`), only `tvm_ffi::__private` is
listed, hidden items included: what generated code reaches, whose soundness discipline (an
`unsafe fn` or a sealed or `unsafe` trait for what unsafe code trusts) `private-api.txt` shows.
"""
import json
import sys

private = sys.argv[1] == "--private"
doc = json.load(open(sys.argv[-1]))
index = doc["index"]
paths = doc["paths"]
out = set()


def hidden(item):
    if private:
        return False
    for attr in item.get("attrs", []):
        text = attr if isinstance(attr, str) else json.dumps(attr)
        if "doc(hidden)" in text.replace(" ", "") or '"hidden"' in text:
            return True
    return False


def path_name(p):
    return p.get("path") or p.get("name") or "?"


def generic_args(args):
    if not args:
        return ""
    if "angle_bracketed" in args:
        parts = []
        for a in args["angle_bracketed"]["args"]:
            if "type" in a:
                parts.append(ty(a["type"]))
            elif "lifetime" in a:
                parts.append(a["lifetime"])
            elif "const" in a:
                parts.append(a["const"].get("expr", "_"))
        for c in args["angle_bracketed"].get("constraints", []):
            binding = c.get("binding", {})
            rhs = ty(binding["equality"]["type"]) if "equality" in binding and "type" in binding["equality"] else "_"
            parts.append(f"{c['name']} = {rhs}")
        return "<" + ", ".join(parts) + ">" if parts else ""
    if "parenthesized" in args:
        p = args["parenthesized"]
        o = p.get("output")
        return "(" + ", ".join(ty(t) for t in p["inputs"]) + ")" + (f" -> {ty(o)}" if o else "")
    return ""


def bound(b):
    if "trait_bound" in b:
        t = b["trait_bound"]["trait"]
        return path_name(t).split("::")[-1] + generic_args(t.get("args"))
    if "outlives" in b:
        return b["outlives"]
    if "use" in b:
        return "use<..>"
    return "?"


def ty(t):
    if t is None:
        return "()"
    k, v = next(iter(t.items()))
    if k == "resolved_path":
        return path_name(v).split("::")[-1] + generic_args(v.get("args"))
    if k == "generic":
        return v
    if k == "primitive":
        return v
    if k == "borrowed_ref":
        lt = (v["lifetime"] + " ") if v.get("lifetime") else ""
        return "&" + lt + ("mut " if v["is_mutable"] else "") + ty(v["type"])
    if k == "raw_pointer":
        return ("*mut " if v["is_mutable"] else "*const ") + ty(v["type"])
    if k == "slice":
        return "[" + ty(v) + "]"
    if k == "array":
        return "[" + ty(v["type"]) + "; " + v["len"] + "]"
    if k == "tuple":
        return "(" + ", ".join(ty(x) for x in v) + ")"
    if k == "impl_trait":
        return "impl " + " + ".join(bound(b) for b in v)
    if k == "dyn_trait":
        return "dyn " + " + ".join(
            path_name(tr["trait"]).split("::")[-1] + generic_args(tr["trait"].get("args"))
            for tr in v["traits"]
        )
    if k == "qualified_path":
        self_ty = ty(v["self_type"])
        trait = v.get("trait")
        trait_name = path_name(trait).split("::")[-1] if trait else "?"
        # rustdoc leaves the trait of `F::Value` (a bound's associated type) without a path.
        return f"<{self_ty} as {trait_name}>::{v['name']}" if trait_name != "?" else f"{self_ty}::{v['name']}"
    if k == "function_pointer":
        sig = v["sig"]
        unsafe = "unsafe " if v["header"]["is_unsafe"] else ""
        return f"{unsafe}fn(" + ", ".join(ty(x[1]) for x in sig["inputs"]) + ")" + (
            f" -> {ty(sig['output'])}" if sig.get("output") else ""
        )
    if k == "infer":
        return "_"
    return k


def fn_sig(name, f):
    header = f["header"]
    quals = ""
    if header.get("is_const"):
        quals += "const "
    if header.get("is_unsafe"):
        quals += "unsafe "
    abi = header.get("abi")
    if abi and abi != "Rust":
        quals += f'extern "{abi if isinstance(abi, str) else next(iter(abi))}" '
    params = []
    for p in f["generics"]["params"]:
        if "lifetime" in p["kind"]:
            continue
        if p["kind"].get("type", {}).get("is_synthetic"):
            continue
        params.append(p["name"])
    gen = "<" + ", ".join(params) + ">" if params else ""
    args = []
    for arg_name, arg_ty in f["sig"]["inputs"]:
        if arg_name == "self":
            t = ty(arg_ty)
            args.append({"Self": "self", "&Self": "&self", "&mut Self": "&mut self"}.get(t, f"self: {t}"))
        else:
            args.append(f"{arg_name}: {ty(arg_ty)}")
    ret = f["sig"].get("output")
    return f"{quals}fn {name}{gen}(" + ", ".join(args) + ")" + (f" -> {ty(ret)}" if ret else "")


def impl_items(prefix, impl_ids):
    for iid in impl_ids:
        impl = index.get(str(iid))
        if impl is None or hidden(impl):
            continue
        im = impl["inner"]["impl"]
        if im.get("is_synthetic") or im.get("blanket_impl"):
            continue
        if im.get("trait") is not None:
            t = im["trait"]
            name = path_name(t).split("::")[-1] + generic_args(t.get("args"))
            out.add(f"impl {'unsafe ' if im['is_unsafe'] else ''}{name} for {ty(im['for'])}")
            continue
        for mid in im["items"]:
            m = index.get(str(mid))
            if m is not None and m.get("visibility") == "public":
                add_member(prefix, m)


def add_member(prefix, m):
    """Lists a method, associated type or associated constant of `prefix`."""
    if hidden(m):
        return
    kind, inner = next(iter(m["inner"].items()))
    if kind == "function":
        out.add(f"{prefix}::{fn_sig(m['name'], inner)}")
    elif kind == "assoc_type":
        out.add(f"{prefix}::type {m['name']}")
    elif kind == "assoc_const":
        out.add(f"{prefix}::const {m['name']}: {ty(inner['type'])}")


def walk(item_id, prefix, seen):
    item = index.get(str(item_id))
    if item is None:
        # An item of another crate, re-exported: name it by its path.
        info = paths.get(str(item_id))
        if info:
            out.add(f"{prefix} (re-export of {'::'.join(info['path'])})")
        return
    if hidden(item) or (item_id, prefix) in seen:
        return
    seen.add((item_id, prefix))
    kind, inner = next(iter(item["inner"].items()))
    if kind == "module":
        out.add(f"mod {prefix}")
        for child in inner["items"]:
            c = index.get(str(child))
            if c is None or c.get("visibility") != "public":
                continue
            ck = next(iter(c["inner"]))
            if ck == "use":
                u = c["inner"]["use"]
                if u["is_glob"]:
                    target = index.get(str(u["id"])) if u["id"] is not None else None
                    if target and "module" in target["inner"]:
                        for g in target["inner"]["module"]["items"]:
                            gi = index.get(str(g))
                            if gi and gi.get("visibility") == "public" and gi.get("name"):
                                walk(g, f"{prefix}::{gi['name']}", seen)
                    continue
                if hidden(c):
                    continue
                if u["id"] is None:
                    out.add(f"{prefix}::{u['name']} (re-export of {u['source']})")
                    continue
                walk(u["id"], f"{prefix}::{u['name']}", seen)
            elif c.get("name"):
                walk(child, f"{prefix}::{c['name']}", seen)
    elif kind == "struct":
        out.add(f"struct {prefix}")
        k = inner["kind"]
        if "plain" in k:
            for fid in k["plain"]["fields"]:
                f = index[str(fid)]
                if f.get("visibility") == "public" and not hidden(f):
                    out.add(f"{prefix}::{f['name']}: {ty(f['inner']['struct_field'])} (pub field)")
        elif "tuple" in k:
            for i, fid in enumerate(k["tuple"]):
                if fid is None:
                    continue
                f = index[str(fid)]
                if f.get("visibility") == "public":
                    out.add(f"{prefix}::{i}: {ty(f['inner']['struct_field'])} (pub field)")
        impl_items(prefix, inner["impls"])
    elif kind == "enum":
        out.add(f"enum {prefix}")
        for vid in inner["variants"]:
            out.add(f"{prefix}::{index[str(vid)]['name']}")
        impl_items(prefix, inner["impls"])
    elif kind == "union":
        out.add(f"union {prefix}")
    elif kind == "trait":
        unsafe = "unsafe " if inner["is_unsafe"] else ""
        out.add(f"{unsafe}trait {prefix}")
        for mid in inner["items"]:
            add_member(prefix, index[str(mid)])
    elif kind == "function":
        out.add(fn_sig(prefix, inner))
    elif kind == "constant":
        out.add(f"const {prefix}: {ty(inner['type'])}")
    elif kind == "static":
        out.add(f"static {'mut ' if inner['is_mutable'] else ''}{prefix}: {ty(inner['type'])}")
    elif kind == "type_alias":
        out.add(f"type {prefix} = {ty(inner['type'])}")
    elif kind in ("macro", "proc_macro"):
        out.add(f"macro {prefix}")
    else:
        out.add(f"{kind} {prefix}")


root = doc["root"]
if private:
    module = next(
        c for c in index[str(root)]["inner"]["module"]["items"]
        if index.get(str(c), {}).get("name") == "__private"
    )
    walk(module, "tvm_ffi::__private", set())
else:
    walk(root, "tvm_ffi", set())
for line in sorted(out):
    print(line)
