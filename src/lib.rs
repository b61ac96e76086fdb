pub mod documents;
pub mod embed;
pub mod memory;
pub mod store;
