//! `MemoryError`: everything the memory layer can refuse or fail at, each message saying
//! what to do next.

use super::model::Status;

/// Everything that can go wrong in the memory layer. Messages say what to do next.
#[derive(Debug, thiserror::Error)]
pub enum MemoryError {
    #[error("the text is empty; give the text to remember, e.g. `mira remember \"we use tabs\"`")]
    Empty,
    #[error(
        "the text is {len} bytes; a memory holds at most {max} bytes. Remember a short summary \
         and keep the long document in the project"
    )]
    TooLong { len: usize, max: usize },
    #[error("unknown memory kind `{0}`; use one of: fact, preference, decision, correction")]
    UnknownKind(String),
    #[error("no memory with id {0}; `mira memories` lists them")]
    NotFound(i64),
    #[error("memory {id} is {status}, so it cannot be {action}{hint}")]
    WrongStatus {
        id: i64,
        status: Status,
        action: &'static str,
        hint: String,
    },
    #[error("memory {id} has the same text as active memory {existing}; nothing to restore")]
    DuplicateActive { id: i64, existing: i64 },
    #[error("{what} {id} does not exist; {hint}")]
    NoSuch {
        what: &'static str,
        id: i64,
        hint: &'static str,
    },
    #[error("invalid {field}: {message}")]
    Invalid {
        field: &'static str,
        message: String,
    },
    #[error("memory database error: {0}")]
    Sql(#[from] rusqlite::Error),
    #[error(transparent)]
    Store(#[from] crate::store::StoreError),
    #[error("{0}")]
    Internal(String),
}
