//! `testing.SchemaAllTypes` (C++ `testing.cc:867-975`): one field of every storage kind, field
//! and method metadata, a static factory; no creator (C++ has no default constructor).
use tvm_ffi::{
    ffi_methods, Array, Bytes, DataType, Device, Map, Object, ObjectRef, Optional, Result, Rw,
    VariantField,
};

// `Variant<String, Array<int64_t>, Map<String, int64_t>>`.
#[derive(tvm_ffi::Variant, Clone)]
pub enum StrArrayOrMap {
    Str(tvm_ffi::String),
    Array(Array<i64>),
    Map(Map<tvm_ffi::String, i64>),
}

// `Variant<int64_t, String>`.
#[derive(tvm_ffi::Variant, Clone)]
pub enum IntOrStr {
    Int(i64),
    Str(tvm_ffi::String),
}

// Twin of `testing.SchemaAllTypes`.
#[derive(Object, Clone)]
#[ffi_type(key = "testing.rs.SchemaAllTypes", creator = false)]
#[repr(C)]
pub struct SchemaAllTypes {
    /// bool field
    #[ffi(rw, metadata(bool_attr = true, int_attr = 1, str_attr = "hello"))]
    pub v_bool: Rw<bool>,
    /// int field
    #[ffi(rw, default = 0)]
    pub v_int: Rw<i64>,
    /// float field
    #[ffi(rw, default = 0.0)]
    pub v_float: Rw<f64>,
    /// device field
    #[ffi(rw)]
    pub v_device: Rw<Device>,
    /// dtype field
    #[ffi(rw)]
    pub v_dtype: Rw<DataType>,
    /// string field
    #[ffi(rw, default = "s")]
    pub v_string: Rw<tvm_ffi::String>,
    /// bytes field
    #[ffi(rw)]
    pub v_bytes: Rw<Bytes>,
    /// optional int
    #[ffi(rw)]
    pub v_opt_int: Rw<Optional<i64>>,
    /// optional str
    #[ffi(rw)]
    pub v_opt_str: Rw<Optional<tvm_ffi::String>>,
    /// array<int>
    #[ffi(rw)]
    pub v_arr_int: Rw<Array<i64>>,
    /// array<str>
    #[ffi(rw)]
    pub v_arr_str: Rw<Array<tvm_ffi::String>>,
    /// map<str,int>
    #[ffi(rw)]
    pub v_map_str_int: Rw<Map<tvm_ffi::String, i64>>,
    /// map<str,array<int>>
    #[ffi(rw)]
    pub v_map_str_arr_int: Rw<Map<tvm_ffi::String, Array<i64>>>,
    /// variant<str,array<int>,map<str,int>>
    #[ffi(rw)]
    pub v_variant: Rw<VariantField<StrArrayOrMap>>,
    /// optional<array<variant<int,str>>>
    #[ffi(rw)]
    pub v_opt_arr_variant: Rw<Option<Array<IntOrStr>>>,
}

#[ffi_methods]
impl SchemaAllTypes {
    /// add int method
    #[ffi(metadata(bool_attr = true, int_attr = 1, str_attr = "hello"))]
    fn add_int(&self, x: i64) -> i64 {
        self.v_int.get() + x
    }

    /// append int to array
    fn append_int(&self, xs: Array<i64>, y: i64) -> Result<Array<i64>> {
        Array::new(xs.iter().chain([y]))
    }

    /// optional concat
    fn maybe_concat(
        &self,
        a: Option<tvm_ffi::String>,
        b: Option<tvm_ffi::String>,
    ) -> Option<tvm_ffi::String> {
        match (a, b) {
            (Some(a), Some(b)) => Some(format!("{a}{b}").as_str().into()),
            (a, b) => a.or(b),
        }
    }

    /// merge maps
    fn merge_map(
        &self,
        lhs: Map<tvm_ffi::String, Array<i64>>,
        rhs: Map<tvm_ffi::String, Array<i64>>,
    ) -> Result<Map<tvm_ffi::String, Array<i64>>> {
        let mut merged = lhs.entries();
        for (key, values) in rhs.entries() {
            match merged.iter_mut().find(|(k, _)| *k == key) {
                Some((_, existing)) => {
                    *existing = Array::new(existing.iter().chain(values.iter()))?
                }
                None => merged.push((key, values)),
            }
        }
        Map::new(merged)
    }

    /// Constructor with subset of fields
    fn make_with(vi: i64, vf: f64, s: tvm_ffi::String) -> Result<ObjectRef<SchemaAllTypes>> {
        Ok(ObjectRef::new(SchemaAllTypes {
            v_bool: true.into(),
            v_int: vi.into(),
            v_float: vf.into(),
            v_device: Device::cpu().into(),
            v_dtype: DataType::float(32).into(),
            v_string: s.into(),
            v_bytes: Rw::default(),
            v_opt_int: Optional::none().into(),
            v_opt_str: Optional::none().into(),
            v_arr_int: Array::new([])?.into(),
            v_arr_str: Array::new([])?.into(),
            v_map_str_int: Map::new([])?.into(),
            v_map_str_arr_int: Map::new([])?.into(),
            v_variant: VariantField::new(StrArrayOrMap::Str("v".into())).into(),
            v_opt_arr_variant: None.into(),
        }))
    }
}
