//! A global function looked up once and cached.
use std::sync::OnceLock;

use super::Function;
use crate::base::error::{Error, Result};

/// A global function looked up once and cached (for the runtime's own `ffi.*` helpers; the
/// names are this crate's, so the lookup is unchecked: see `trust`).
pub struct GlobalCache {
    name: &'static str,
    cell: OnceLock<Function>,
}

impl GlobalCache {
    /// A cache for the global `name`.
    pub const fn new(name: &'static str) -> Self {
        GlobalCache {
            name,
            cell: OnceLock::new(),
        }
    }

    /// The function, or an error naming it when it is not registered.
    pub fn get(&self) -> Result<&Function> {
        if let Some(f) = self.cell.get() {
            return Ok(f);
        }
        let f = Function::lookup(self.name).ok_or_else(|| {
            Error::runtime_error(format!("Global Function `{}` is not registered", self.name))
        })?;
        Ok(self.cell.get_or_init(|| f))
    }
}
