pub mod config;
pub mod documents;
pub mod project;
pub mod store;
