pub mod documents;
pub mod memory;
pub mod store;
