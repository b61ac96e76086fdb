pub mod documents;
pub mod store;
