//! Fields and methods of any object by name, through the runtime's reflection tables: for
//! objects whose types are defined elsewhere (C++, Python, another Rust library) and never
//! declared in Rust. As C++'s `reflection::FieldGetter`/`FieldSetter`/`GetMethod`, extended to
//! inherited members: a name is looked up in the object's own type, then in its ancestors,
//! child first.
//!
//! ```
//! use tvm_ffi::{ffi_methods, Object, ObjectRef};
//!
//! #[derive(Object)]
//! #[ffi_type(key = "doc_example.Pair")]
//! #[repr(C)]
//! pub struct Pair { pub a: i64, pub b: i64 }
//!
//! #[ffi_methods]
//! impl Pair {
//!     pub fn sum(&self) -> i64 { self.a + self.b }
//! }
//!
//! // Type-erased, as an object of a C++ or Python type arrives.
//! let pair = ObjectRef::new(Pair { a: 1, b: 2 }).into_object();
//! let a: i64 = pair.get_field("a").unwrap();
//! let sum: i64 = pair.call_method("sum", ()).unwrap();
//! assert_eq!((a, sum), (1, 3));
//! assert_eq!(pair.get_field::<i64>("c").unwrap_err().kind(), "AttributeError");
//! ```
use crate::abi::sys::{self, field_flags, TVMFFIAny};
use crate::base::error::{Error, Result};
use crate::base::object::type_info::{self, methods, type_info};
use crate::base::object::{ObjectRef, ObjectType, RuntimeType};
use crate::base::value::{Any, AnyView, FromAny};
use crate::call::function::{object_view, Function, IntoArg, IntoArgs};

/// The type indices to search for a member of objects of type `index`: the type, then its
/// ancestors from the direct parent up (the root `ffi.Object` has no members).
fn search_order(index: i32) -> Vec<i32> {
    let mut order = vec![index];
    if let Some(info) = type_info(index) {
        for depth in (1..info.type_depth.max(0) as usize).rev() {
            // SAFETY: `type_ancestors` has `type_depth` valid entries.
            order.push(unsafe { (**info.type_ancestors.add(depth)).type_index });
        }
    }
    order
}

fn name_of(bytes: &sys::TVMFFIByteArray) -> &[u8] {
    // SAFETY: registry strings live for the process.
    unsafe { bytes.as_bytes() }
}

pub(super) fn find_field(index: i32, name: &str) -> Option<sys::TVMFFIFieldInfo> {
    search_order(index).into_iter().find_map(|ty| {
        type_info::fields(ty)
            .into_iter()
            .find(|f| name_of(&f.name) == name.as_bytes())
    })
}

fn find_method(index: i32, name: &str) -> Option<sys::TVMFFIMethodInfo> {
    search_order(index).into_iter().find_map(|ty| {
        methods(ty)
            .into_iter()
            .find(|m| name_of(&m.name) == name.as_bytes())
    })
}

/// The reflected method `name` of the registered type `index` (own or inherited, child
/// first), as C++ `reflection::GetMethod` finds it: an instance method takes the object as its
/// first argument, a static method (`__ffi_init__`, ...) only its own arguments. A missing
/// method raises `AttributeError`; an index the runtime does not know, `KeyError`.
///
/// ```
/// use tvm_ffi::{ffi_methods, reflection, Object, ObjectRef, ObjectType};
///
/// #[derive(Object)]
/// #[ffi_type(key = "doc_example.MethodPair")]
/// #[repr(C)]
/// pub struct MethodPair { pub a: i64, pub b: i64 }
///
/// #[ffi_methods]
/// impl MethodPair {
///     pub fn sum(&self) -> i64 { self.a + self.b }
/// }
///
/// let sum = reflection::method(MethodPair::type_index(), "sum").unwrap();
/// let pair = ObjectRef::new(MethodPair { a: 1, b: 2 });
/// assert_eq!(sum.call_as::<i64, _>((&pair,)).unwrap(), 3);
/// let err = reflection::method(MethodPair::type_index(), "product").unwrap_err();
/// assert_eq!(err.to_string(), "AttributeError: Cannot find method `product` in doc_example.MethodPair");
/// assert_eq!(reflection::method(1 << 30, "sum").unwrap_err().kind(), "KeyError");
/// ```
pub fn method(index: i32, name: &str) -> Result<Function> {
    if !type_info::is_registered(index) {
        return Err(Error::key_error(format!(
            "Cannot find type with index {index}"
        )));
    }
    let info = find_method(index, name).ok_or_else(|| no_member("method", name, index))?;
    // SAFETY: the method is a borrowed view of a registry-owned function, which lives for the
    // process.
    let view = unsafe { &*(&info.method as *const TVMFFIAny as *const AnyView<'_>) };
    view.cast()
}

/// [`method`] of the type registered as `type_key`; an unknown key raises `KeyError`.
///
/// ```
/// use tvm_ffi::reflection;
/// let err = reflection::method_of_type("no_such.Type", "sum").unwrap_err();
/// assert_eq!(err.to_string(), "KeyError: Cannot find type `no_such.Type`");
/// let err = reflection::method_of_type("ffi.Shape", "no_such_method").unwrap_err();
/// assert_eq!(err.kind(), "AttributeError");
/// ```
pub fn method_of_type(type_key: &str, name: &str) -> Result<Function> {
    let ty = type_info::lookup_type(type_key)
        .ok_or_else(|| Error::key_error(format!("Cannot find type `{type_key}`")))?;
    method(ty.index, name)
}

pub(super) fn no_member(what: &str, name: &str, index: i32) -> Error {
    Error::new(
        "AttributeError",
        format!(
            "Cannot find {what} `{name}` in {}",
            type_info::type_key_of_index(index)
        ),
    )
}

/// The address of a field at `offset` bytes from the object header.
fn field_address<T: ObjectType>(obj: &ObjectRef<T>, offset: i64) -> Result<*mut std::ffi::c_void> {
    let offset = usize::try_from(offset)
        .map_err(|_| Error::runtime_error(format!("a field has the negative offset {offset}")))?;
    Ok((obj.as_raw().as_ptr() as *mut u8).wrapping_add(offset) as *mut std::ffi::c_void)
}

/// Reads `field` of `obj` through its getter.
///
/// # Safety
/// `field` is a field of `obj`'s type or of one of its ancestors.
unsafe fn read_field<T: ObjectType>(
    obj: &ObjectRef<T>,
    field: &sys::TVMFFIFieldInfo,
    name: &str,
) -> Result<Any> {
    let getter = field
        .getter
        .ok_or_else(|| Error::runtime_error(format!("the field `{name}` has no getter")))?;
    let mut out = TVMFFIAny::NONE;
    // SAFETY: the field's own getter (the caller's contract: the field is laid out in this
    // live object), called with the field's address (offsets are relative to the header) and a
    // writable result slot.
    let rc = unsafe { getter(field_address(obj, field.offset)?, &mut out) };
    if rc != 0 {
        return Err(Error::from_return_code(rc));
    }
    if out.type_index == sys::type_index::kTVMFFIDLTensorPtr {
        // Not an owned value (C++ `Any(AnyView)` copies a borrowed DLTensor* bitwise): it
        // may point into an argument of a call that has ended. It holds no reference.
        return Err(crate::base::value::borrowed_tensor_error());
    }
    // SAFETY: on success the getter wrote one owned value.
    Ok(unsafe { Any::from_raw(out) })
}

/// A reflected field of a type, looked up once by name and read from any object of that type
/// or of a subtype (C++ `reflection::FieldGetter`): for objects of any language, without
/// declaring their layout. [`ObjectRef::get_field`] looks the name up at every read.
///
/// ```
/// use tvm_ffi::reflection::FieldGetter;
/// use tvm_ffi::{Array, ObjectRef, ObjectType};
/// #[derive(tvm_ffi::Object)]
/// #[ffi_type(key = "doc_examples.FieldGetterPoint")]
/// #[repr(C)]
/// pub struct Point { pub x: i64, pub y: i64 }
/// let y = FieldGetter::new(Point::type_index(), "y").unwrap();
/// let points = [ObjectRef::new(Point { x: 1, y: 2 }), ObjectRef::new(Point { x: 3, y: 4 })];
/// let ys: Vec<i64> = points.iter().map(|p| y.get(p).unwrap()).collect();
/// assert_eq!(ys, [2, 4]);
/// // An object of another type is refused, and so is a missing field.
/// assert_eq!(y.get_any(Array::new([1i64]).unwrap().as_object_ref()).unwrap_err().kind(), "TypeError");
/// assert_eq!(FieldGetter::new(Point::type_index(), "z").unwrap_err().kind(), "AttributeError");
/// ```
pub struct FieldGetter {
    owner: RuntimeType,
    name: std::string::String,
    field: sys::TVMFFIFieldInfo,
}

impl FieldGetter {
    /// The field `name` of the registered type `type_index` (its own or an ancestor's):
    /// `AttributeError` when it has none, `TypeError` for an index that is no registered
    /// object type. An example is on [`FieldGetter`].
    pub fn new(type_index: i32, name: &str) -> Result<FieldGetter> {
        let info = type_info(type_index)
            .filter(|_| type_index >= sys::type_index::kTVMFFIStaticObjectBegin)
            .ok_or_else(|| {
                Error::type_error(format!(
                    "type index {type_index} is no registered object type"
                ))
            })?;
        let field =
            find_field(type_index, name).ok_or_else(|| no_member("field", name, type_index))?;
        Ok(FieldGetter {
            owner: RuntimeType {
                index: type_index,
                depth: info.type_depth,
            },
            name: name.to_owned(),
            field,
        })
    }

    /// The field's value in `object`, as its getter returns it; `TypeError` when `object` is
    /// not of the getter's type (or a subtype). An example is on [`FieldGetter`].
    pub fn get_any<T: ObjectType>(&self, object: &ObjectRef<T>) -> Result<Any> {
        let index = object.type_index();
        if !type_info::is_instance_index(index, self.owner) {
            return Err(Error::type_error(format!(
                "the field `{}` of {} read from an object of type {}",
                self.name,
                type_info::type_key_of_index(self.owner.index),
                type_info::type_key_of_index(index)
            )));
        }
        // SAFETY: `object` is an instance of the type the field was found in.
        unsafe { read_field(object, &self.field, &self.name) }
    }

    /// The field's value in `object`, converted to `V` (`TypeError` when it does not
    /// convert). An example is on [`FieldGetter`].
    pub fn get<T: ObjectType, V: for<'a> FromAny<'a>>(&self, object: &ObjectRef<T>) -> Result<V> {
        self.get_any(object)?.cast()
    }
}

impl std::fmt::Debug for FieldGetter {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("FieldGetter")
            .field("type", &type_info::type_key_of_index(self.owner.index))
            .field("name", &self.name)
            .finish()
    }
}

impl<T: ObjectType> ObjectRef<T> {
    /// The value of the reflected field `name` (own or inherited), converted to `V`: for
    /// objects of any language, without declaring their layout. A missing field raises
    /// `AttributeError`; a value that does not convert raises `TypeError`.
    pub fn get_field<V: for<'a> FromAny<'a>>(&self, name: &str) -> Result<V> {
        self.get_field_any(name)?.cast()
    }

    /// The value of the reflected field `name`, as the getter returns it.
    pub fn get_field_any(&self, name: &str) -> Result<Any> {
        let index = self.type_index();
        let field = find_field(index, name).ok_or_else(|| no_member("field", name, index))?;
        // SAFETY: `field` was found in this object's type or one of its ancestors.
        unsafe { read_field(self, &field, name) }
    }

    /// Sets the reflected field `name` through its setter (which converts and checks the
    /// value as the defining language does). A missing field raises `AttributeError`, a value
    /// the setter refuses its error (a read-only field of a Rust-defined object that Rust has
    /// used raises `AttributeError`).
    ///
    /// # Safety
    /// No other thread may read or write the field meanwhile unless its setter synchronises:
    /// the setters of Rust-defined types do (an `Rw` field is written under its lock, a
    /// read-only one is refused once Rust uses the object), but those of C++ types and of the
    /// runtime's Python-defined classes write the field's memory unsynchronised, as C++ code
    /// writing a field does.
    pub unsafe fn set_field<V: IntoArg>(&self, name: &str, value: V) -> Result<()> {
        let index = self.type_index();
        let field = find_field(index, name).ok_or_else(|| no_member("field", name, index))?;
        let address = field_address(self, field.offset)?;
        let holder = value.into_holder()?;
        let view = V::view(&holder);
        // A moved value is taken here (atomically): a setter moves with a plain read and clear.
        let taken;
        let view = if view.type_index() == sys::type_index::kTVMFFIObjectRValueRef {
            taken = view.to_owned()?;
            taken.view()
        } else {
            view
        };
        if view.type_index() == sys::type_index::kTVMFFIDLTensorPtr {
            // A field stores an owned value; a borrowed DLTensor* would outlive its call.
            return Err(crate::base::value::borrowed_tensor_error());
        }
        let rc = if field.flags & field_flags::kTVMFFIFieldFlagBitSetterIsFunctionObj != 0 {
            // A setter function object takes (field address, value).
            let mut args = [TVMFFIAny::NONE, *view.as_raw()];
            args[0].type_index = sys::type_index::kTVMFFIOpaquePtr;
            args[0].value.v_ptr = address;
            let mut result = TVMFFIAny::NONE;
            // SAFETY: `setter` is a live function object of the registry; the arguments are
            // valid borrowed views; `result` is a writable slot, dropped below.
            let rc = unsafe {
                sys::TVMFFIFunctionCall(
                    field.setter as sys::TVMFFIObjectHandle,
                    args.as_mut_ptr(),
                    2,
                    &mut result,
                )
            };
            if rc == 0 {
                // SAFETY: on success the call wrote one owned value.
                drop(unsafe { Any::from_raw(result) });
            }
            rc
        } else {
            // SAFETY: without the flag, `setter` is a `TVMFFIFieldSetter` function pointer
            // (never null for a registered field).
            let setter: sys::TVMFFIFieldSetter = unsafe { std::mem::transmute(field.setter) };
            // SAFETY: the field's own setter with the field's address and a borrowed value.
            unsafe { setter(address, view.as_raw()) }
        };
        if rc != 0 {
            return Err(Error::from_return_code(rc));
        }
        Ok(())
    }

    /// The reflected method `name` (own or inherited) as a function; an instance method takes
    /// the object as its first argument. A missing method raises `AttributeError`.
    pub fn method(&self, name: &str) -> Result<Function> {
        self.find_method(name).map(|(f, _)| f)
    }

    /// Calls the reflected method `name` on this object (an instance method receives the
    /// object first, a static method only `args`) and converts the result to `R`.
    pub fn call_method<R: for<'a> FromAny<'a>>(
        &self,
        name: &str,
        args: impl IntoArgs,
    ) -> Result<R> {
        let (method, is_static) = self.find_method(name)?;
        let this = object_view(self);
        let out = args.with_args(|views| {
            if is_static {
                method.call(views)
            } else {
                let mut all: Vec<AnyView<'_>> = Vec::with_capacity(views.len() + 1);
                all.push(this);
                all.extend_from_slice(views);
                method.call(&all[..])
            }
        })??;
        out.cast()
    }

    fn find_method(&self, name: &str) -> Result<(Function, bool)> {
        let index = self.type_index();
        let info = find_method(index, name).ok_or_else(|| no_member("method", name, index))?;
        // SAFETY: the method is a borrowed view of a registry-owned function.
        let view = unsafe { &*(&info.method as *const TVMFFIAny as *const AnyView<'_>) };
        let method: Function = view.cast()?;
        Ok((
            method,
            info.flags & field_flags::kTVMFFIFieldFlagBitMaskIsStaticMethod != 0,
        ))
    }
}
