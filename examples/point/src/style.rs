//! Enums: how a point is drawn. An `int` enum and a `str` enum become Python enum classes
//! with one attribute per variant (`my_ext.Marker.Dot`, `my_ext.Color.red`).
use tvm_ffi::{ffi_func, ffi_methods, Enum, EnumRef};

/// The marker drawn at a point (an `int` enum: `my_ext.Marker.Dot.value == 1`).
#[derive(Enum, Clone, Copy, PartialEq, Eq, Debug)]
#[ffi_type(key = "my_ext.Marker", int)]
pub enum Marker {
    /// A dot.
    Dot = 1,
    /// A cross.
    Cross = 2,
}

/// The colour of a marker (a `str` enum: `my_ext.Color.red.value == "red"`).
#[derive(Enum, Clone, Copy, PartialEq, Eq, Debug)]
#[ffi_type(key = "my_ext.Color", str)]
pub enum Color {
    /// Red.
    #[ffi(value = "red")]
    Red,
    /// Green.
    #[ffi(value = "green")]
    Green,
    /// Dark blue: a value that is no Python name, bound as `Color.dark_blue`.
    #[ffi(name = "dark_blue", value = "dark blue")]
    DarkBlue,
}

/// How a marker looks, e.g. `"green Cross"`.
#[ffi_func(name = "my_ext.describe_marker")]
pub fn describe_marker(
    #[ffi(default = Marker::Dot)] marker: Marker,
    #[ffi(default = "green")] color: Color,
) -> String {
    let color = match color {
        Color::Red => "red",
        Color::Green => "green",
        Color::DarkBlue => "dark blue",
    };
    format!("{color} {marker:?}")
}

/// A marker drawn in a colour: enum fields, set by a constructor whose colour has a default.
#[derive(tvm_ffi::Object)]
#[ffi_type(key = "my_ext.Stroke")]
#[repr(C)]
pub struct Stroke {
    /// The marker.
    pub marker: EnumRef<Marker>,
    /// Its colour.
    pub color: EnumRef<Color>,
}

#[ffi_methods]
impl Stroke {
    /// A `marker` drawn in `color` (green unless given).
    #[ffi(init)]
    pub fn new(marker: Marker, #[ffi(default = "green")] color: Color) -> Self {
        Stroke {
            marker: marker.into(),
            color: color.into(),
        }
    }
}
