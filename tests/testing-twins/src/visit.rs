//! Structural-traversal fixtures (C++ `testing.cc:155-197`): fields that open def regions, and
//! a `__s_visit__` hook that visits its child in a simple def region and then a sibling.
use std::sync::OnceLock;

use tvm_ffi::builtin::AnyObject;
use tvm_ffi::{ffi_func, ffi_methods, Any, Function, Object, ObjectRef, Result};

// Twin of `testing.TestVisitRegions`: creator values 1, 2, 3.
#[derive(Object, Clone)]
#[ffi_type(key = "testing.rs.TestVisitRegions", final)]
#[repr(C)]
pub struct TestVisitRegions {
    #[ffi(structural = "def-simple")]
    pub simple: i64,
    #[ffi(structural = "def-pattern")]
    pub pattern: i64,
    pub ordinary: i64,
}

impl Default for TestVisitRegions {
    fn default() -> Self {
        TestVisitRegions {
            simple: 1,
            pattern: 2,
            ordinary: 3,
        }
    }
}

// Twin of `testing.TestVisitHook`: no creator (C++ has only `TestVisitHookObj(ObjectRef)`).
#[derive(Object, Clone)]
#[ffi_type(key = "testing.rs.TestVisitHook", final, creator = false)]
#[repr(C)]
pub struct TestVisitHook {
    pub child: Option<ObjectRef<AnyObject>>,
}

// A simple def region (`kTVMFFIDefRegionKindSimple`).
const DEF_REGION_SIMPLE: i64 = 2;

#[ffi_methods]
impl TestVisitHook {
    // The structural visit: the child inside a simple def region, then the integer 4 outside
    // it. Returns the visitor's interrupt, if any.
    #[ffi(type_attr = "__s_visit__")]
    fn s_visit(visitor: ObjectRef<AnyObject>, value: ObjectRef<TestVisitHook>) -> Result<Any> {
        // Looked up once, not on every node of every walk.
        static VISIT: OnceLock<Function> = OnceLock::new();
        static WITH_REGION: OnceLock<Function> = OnceLock::new();
        let global =
            |cell: &'static OnceLock<Function>, name: &str| -> tvm_ffi::Result<&'static Function> {
                if let Some(f) = cell.get() {
                    return Ok(f);
                }
                let f = Function::get_global_required(name)?;
                Ok(cell.get_or_init(|| f))
            };
        let visit = global(&VISIT, "ffi.StructuralVisitorVisit")?;
        let with_region = global(&WITH_REGION, "ffi.StructuralVisitorWithDefRegionKind")?;
        let child = value.child.clone();
        let visit_child = {
            let (visit, visitor) = (visit.clone(), visitor.clone());
            Function::from_typed(move || visit.call((&visitor, child.clone())))
        };
        let interrupt = with_region.call((&visitor, DEF_REGION_SIMPLE, visit_child))?;
        if !interrupt.is_none() {
            return Ok(interrupt);
        }
        visit.call((&visitor, 4_i64))
    }
}

// Twin of `testing.make_visit_region_graph`: a fresh `TestVisitRegions`, wrapped in a
// `TestVisitHook` when `with_hook`.
#[ffi_func(name = "testing.rs.make_visit_region_graph")]
fn make_visit_region_graph(with_hook: bool) -> Any {
    let fields = ObjectRef::new(TestVisitRegions::default()).upcast::<AnyObject, _>();
    if with_hook {
        Any::new(ObjectRef::new(TestVisitHook {
            child: Some(fields),
        }))
    } else {
        Any::new(fields)
    }
}
