//! The one SQLite file every Mira process shares.
//!
//! WAL lets readers run beside one writer; every write goes through `BEGIN IMMEDIATE` so a
//! second process waits on `busy_timeout` for the write lock instead of failing later with
//! "database is locked" when a deferred transaction tries to upgrade.

mod checkpoint;
mod fts_rank;
mod migrate;
pub mod projects;
pub mod sessions;
pub mod vec_blob;

use rusqlite::{Connection, OpenFlags, Transaction, TransactionBehavior};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

pub use migrate::{SCHEMA_VERSION, schema_version};

/// How long a writer waits for another process's write lock before giving up.
const BUSY_TIMEOUT: Duration = Duration::from_secs(10);

#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    #[error(
        "cannot create the data directory {path}: {source}. Set MIRA_HOME to a writable directory."
    )]
    CreateDir {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("cannot create the database {path}: {source}. Set MIRA_HOME to a writable directory.")]
    CreateFile {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("cannot open the database {path}: {source}")]
    Open {
        path: PathBuf,
        source: rusqlite::Error,
    },
    #[error(
        "the database {path} was written by a newer Mira (schema {found}; this Mira knows up to {known}). \
         Upgrade Mira, or set MIRA_HOME to another directory to start a separate store."
    )]
    TooNew {
        path: PathBuf,
        found: u32,
        known: u32,
    },
    #[error("migration {name} failed on {path}: {source}")]
    Migration {
        path: PathBuf,
        name: String,
        source: rusqlite::Error,
    },
    #[error("database error: {0}")]
    Sql(#[from] rusqlite::Error),
}

struct Inner {
    path: PathBuf,
    conn: Mutex<Connection>,
    checkpoints: checkpoint::Checkpoints,
}

/// A handle on the store; cheap to clone. All methods block: call them from
/// `spawn_blocking` or a worker thread, never directly on the async runtime.
#[derive(Clone)]
pub struct Store {
    inner: Arc<Inner>,
}

impl std::fmt::Debug for Store {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Store")
            .field("path", &self.inner.path)
            .finish()
    }
}

impl Store {
    /// Open (creating if needed) the database at `path` and bring its schema up to date.
    pub fn open(path: &Path) -> Result<Store, StoreError> {
        register_sqlite_vec();
        prepare_file(path)?;
        let mut conn = connect(path)?;
        migrate::to_latest(&mut conn, path)?;
        Ok(Store {
            inner: Arc::new(Inner {
                path: path.to_path_buf(),
                conn: Mutex::new(conn),
                checkpoints: checkpoint::Checkpoints::new(path),
            }),
        })
    }

    pub fn path(&self) -> &Path {
        &self.inner.path
    }

    fn lock(&self) -> MutexGuard<'_, Connection> {
        // A panic while holding the lock leaves the connection itself intact (SQLite rolls
        // back an open transaction when the Transaction guard drops), so keep serving.
        self.inner.conn.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Run `f` in one read transaction: every query inside sees the same snapshot, so a
    /// write committed by another process between two of them (a summary, a correction)
    /// cannot make the reads disagree.
    pub fn read<T>(
        &self,
        f: impl FnOnce(&Connection) -> rusqlite::Result<T>,
    ) -> Result<T, StoreError> {
        let mut conn = self.lock();
        let tx = conn.transaction_with_behavior(TransactionBehavior::Deferred)?;
        let out = f(&tx)?;
        // Ending the transaction releases the snapshot (commit: a caller that did write
        // something keeps it, as before this was a transaction).
        tx.commit()?;
        Ok(out)
    }

    /// Run `f` in a `BEGIN IMMEDIATE` transaction; commit on `Ok`, roll back on `Err`. The WAL
    /// is checkpointed beside it, not in its commit ([`checkpoint`]).
    pub fn write<T, E: From<rusqlite::Error>>(
        &self,
        f: impl FnOnce(&Transaction) -> Result<T, E>,
    ) -> Result<T, E> {
        let mut conn = self.lock();
        let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
        let out = f(&tx)?;
        tx.commit()?;
        self.inner.checkpoints.committed(&conn);
        Ok(out)
    }

    /// A separate connection with the same settings, for worker threads and bulk work.
    pub fn connect(&self) -> Result<Connection, StoreError> {
        connect(&self.inner.path)
    }

    pub fn schema_version(&self) -> Result<u32, StoreError> {
        Ok(schema_version(&self.lock())?)
    }
}

/// Create the data directory (0700) and the database file (0600) before SQLite does, so the
/// file never exists with the process umask's wider mode. SQLite gives -wal/-shm the same mode.
fn prepare_file(path: &Path) -> Result<(), StoreError> {
    use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt};
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty())
        && !dir.exists()
    {
        std::fs::DirBuilder::new()
            .recursive(true)
            .mode(0o700)
            .create(dir)
            .map_err(|source| StoreError::CreateDir {
                path: dir.to_path_buf(),
                source,
            })?;
    }
    match std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .open(path)
    {
        Ok(_) => Ok(()),
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => Ok(()),
        Err(source) => Err(StoreError::CreateFile {
            path: path.to_path_buf(),
            source,
        }),
    }
}

fn connect(path: &Path) -> Result<Connection, StoreError> {
    let open = |path: &Path| -> rusqlite::Result<Connection> {
        let conn = Connection::open_with_flags(
            path,
            OpenFlags::SQLITE_OPEN_READ_WRITE
                | OpenFlags::SQLITE_OPEN_CREATE
                | OpenFlags::SQLITE_OPEN_NO_MUTEX
                | OpenFlags::SQLITE_OPEN_URI,
        )?;
        conn.busy_timeout(BUSY_TIMEOUT)?;
        // WAL + NORMAL: a crash (even kill -9) loses no committed transaction; only a power
        // cut can lose the last ones, never corrupt the file.
        enable_wal(&conn)?;
        conn.pragma_update(None, "synchronous", "NORMAL")?;
        conn.pragma_update(None, "foreign_keys", "ON")?;
        fts_rank::add_to(&conn)?;
        Ok(conn)
    };
    open(path).map_err(|source| StoreError::Open {
        path: path.to_path_buf(),
        source,
    })
}

/// Switching a new file to WAL needs an exclusive lock, and SQLite answers SQLITE_BUSY at
/// once — without consulting busy_timeout — while another process is creating the same
/// database. Retry for as long as busy_timeout would have waited.
fn enable_wal(conn: &Connection) -> rusqlite::Result<()> {
    let deadline = std::time::Instant::now() + BUSY_TIMEOUT;
    let mut pause = Duration::from_millis(2);
    loop {
        let mode: rusqlite::Result<String> =
            conn.pragma_update_and_check(None, "journal_mode", "WAL", |r| r.get(0));
        match mode {
            Ok(_) => return Ok(()),
            Err(rusqlite::Error::SqliteFailure(e, _))
                if e.code == rusqlite::ErrorCode::DatabaseBusy
                    && std::time::Instant::now() < deadline =>
            {
                std::thread::sleep(pause);
                pause = (pause * 2).min(Duration::from_millis(50));
            }
            Err(e) => return Err(e),
        }
    }
}

/// sqlite-vec is compiled against rusqlite's bundled SQLite; registering it as an auto
/// extension makes `vec0` available on every connection opened afterwards.
fn register_sqlite_vec() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        type Init = unsafe extern "C" fn(
            *mut rusqlite::ffi::sqlite3,
            *mut *mut std::os::raw::c_char,
            *const rusqlite::ffi::sqlite3_api_routines,
        ) -> std::os::raw::c_int;
        // SAFETY: sqlite3_vec_init has exactly the auto-extension entry point signature;
        // sqlite-vec declares it without arguments only because it is an extern symbol.
        unsafe {
            let init: Init = std::mem::transmute(sqlite_vec::sqlite3_vec_init as *const ());
            rusqlite::ffi::sqlite3_auto_extension(Some(init));
        }
    });
}

pub fn now_millis() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_millis() as i64)
        .unwrap_or(0)
}

#[cfg(test)]
mod tests;
