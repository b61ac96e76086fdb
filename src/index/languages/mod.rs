//! One file per language. Shared grammar families (`ecmascript`, `clike`) hold what their
//! members have in common.

pub mod c;
mod clike;
pub mod cpp;
mod ecmascript;
pub mod go;
pub mod java;
pub mod javascript;
pub mod python;
pub mod ruby;
pub mod rust;
pub mod typescript;
