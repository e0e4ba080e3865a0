//! One store test, run on each backend: sled in a temporary directory, and
//! PostgreSQL in a new database of the cluster `.ci/run` starts (its URL in
//! `ARBITER_TEST_POSTGRES`). A test written against `Backend` is the same
//! test on both; `on_both_backends!` makes one `#[test]` per backend.
//!
//! Without `ARBITER_TEST_POSTGRES` the PostgreSQL half is skipped, saying
//! so and how to start a cluster (`common::has`); under
//! `ARBITER_REQUIRE_ALL=1` (`.ci/run`) it fails instead.

use std::process::Command;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use arbiter::store::{PostgresStore, SledStore, Store};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    Sled,
    Postgres,
}

/// A store of one kind, and what a test needs to reopen it or to damage it
/// behind arbiter's back.
pub struct Backend {
    pub kind: Kind,
    /// None only while it is reopened.
    store: Option<Arc<dyn Store>>,
    /// sled's directory, or the database's URL.
    pub location: String,
    _dir: Option<tempfile::TempDir>,
    _db: Option<TestDatabase>,
}

impl Backend {
    pub fn new(kind: Kind) -> Backend {
        match kind {
            Kind::Sled => {
                let dir = tempfile::tempdir().unwrap();
                let location = dir.path().to_str().unwrap().to_string();
                let store = Arc::new(SledStore::open(dir.path()).unwrap());
                Backend { kind, store: Some(store), location, _dir: Some(dir), _db: None }
            }
            Kind::Postgres => {
                let db = TestDatabase::new();
                let store = Arc::new(PostgresStore::open(&db.url).unwrap());
                Backend { kind, store: Some(store), location: db.url.clone(), _dir: None, _db: Some(db) }
            }
        }
    }

    /// The store as the library takes it.
    pub fn store(&self) -> &dyn Store {
        self.store.as_deref().expect("the store is open")
    }

    /// The flags that name this store to the `arbiter` binary.
    pub fn cli_args(&self) -> [&str; 2] {
        match self.kind {
            Kind::Sled => ["--data", &self.location],
            Kind::Postgres => ["--store", &self.location],
        }
    }

    /// The store, to share with other threads.
    pub fn shared(&self) -> Arc<dyn Store> {
        self.store.clone().expect("the store is open")
    }

    /// Closes the store, runs `between` (sled's files are free then), and
    /// opens it again.
    pub fn reopen_after(&mut self, between: impl FnOnce(&Backend)) {
        let closed = self.store.take().expect("the store is open");
        assert_eq!(Arc::strong_count(&closed), 1, "the test still holds the store");
        drop(closed);
        between(self);
        self.store = Some(self.open().unwrap());
    }

    /// Opens the store at `location` again, beside the one open (sled's
    /// refuses: one process holds it).
    pub fn open(&self) -> Result<Arc<dyn Store>, arbiter::store::OpenError> {
        Ok(match self.kind {
            Kind::Sled => Arc::new(SledStore::open(std::path::Path::new(&self.location))?),
            Kind::Postgres => Arc::new(PostgresStore::open(&self.location)?),
        })
    }

    /// Rewrites the stored bytes of `game`'s event `seq` behind arbiter's
    /// back (the store closed): through sled itself, or an UPDATE.
    pub fn tamper(&mut self, game: &str, seq: u64, change: impl Fn(&str) -> String) {
        self.reopen_after(|b| match b.kind {
            Kind::Sled => {
                // sled lets go of its lock a moment after the store is
                // dropped (its epochs, passed by the next thread): try again.
                let open = || sled::Config::new().path(&b.location).segment_size(8 * 1024 * 1024).open();
                let mut tries = 0;
                let db = loop {
                    match open() {
                        Ok(db) => break db,
                        Err(e) if tries == 200 => panic!("{e}"),
                        Err(_) => {
                            tries += 1;
                            sled::pin().flush();
                            std::thread::sleep(std::time::Duration::from_millis(10));
                        }
                    }
                };
                let tree = db.open_tree(format!("game/{game}")).unwrap();
                let (c, i) = arbiter::store::chunk::event_place(seq);
                let stored = tree.get(arbiter::store::chunk::events_key(c)).unwrap().unwrap().to_vec();
                let mut entries = arbiter::store::chunk::Events::decode(stored).unwrap().entries();
                entries[i].1 = change(std::str::from_utf8(&entries[i].1).unwrap()).into_bytes();
                let mut tampered = arbiter::store::chunk::Events::default();
                for (index, bytes) in &entries {
                    tampered.push(*index, bytes);
                }
                tree.insert(arbiter::store::chunk::events_key(c), tampered.bytes()).unwrap();
                db.flush().unwrap();
            }
            Kind::Postgres => {
                let bytes = psql(&b.location, &format!(
                    "SELECT convert_from(bytes, 'UTF8') FROM events WHERE game = '{game}' AND seq = {seq}"
                ));
                let tampered = change(bytes.trim_end_matches('\n')).replace('\'', "''");
                psql(&b.location, &format!(
                    "UPDATE events SET bytes = convert_to('{tampered}', 'UTF8') WHERE game = '{game}' AND seq = {seq}"
                ));
            }
        });
    }
}

/// The cluster's URL, from `.ci/run` (or `tools/pg-cluster start`).
pub fn cluster_url() -> String {
    std::env::var("ARBITER_TEST_POSTGRES").unwrap_or_else(|_| {
        panic!(
            "ARBITER_TEST_POSTGRES is not set: the store tests run on PostgreSQL too. Run .ci/run, or start a \
             cluster with `tools/pg-cluster start DIR` and export ARBITER_TEST_POSTGRES=<the URL it prints>"
        )
    })
}

/// Runs `sql` with psql against `url`; returns what it printed (unaligned,
/// tuples only). Panics, with psql's message, if it fails.
pub fn psql(url: &str, sql: &str) -> String {
    let out =
        Command::new("psql").args([url, "-X", "-q", "-A", "-t", "-v", "ON_ERROR_STOP=1", "-c", sql]).output().unwrap();
    assert!(out.status.success(), "psql {sql}: {}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8(out.stdout).unwrap()
}

/// A database of its own for one test, dropped after it.
pub struct TestDatabase {
    pub url: String,
    name: String,
    admin: String,
}

impl TestDatabase {
    pub fn new() -> TestDatabase {
        static N: AtomicU64 = AtomicU64::new(0);
        let admin = cluster_url();
        let name = format!("arbiter_test_{}_{}", std::process::id(), N.fetch_add(1, Ordering::SeqCst));
        psql(&admin, &format!("CREATE DATABASE {name}"));
        let base = admin.rsplit_once('/').expect("a URL with a database").0;
        TestDatabase { url: format!("{base}/{name}"), name, admin }
    }
}

impl Drop for TestDatabase {
    fn drop(&mut self) {
        let _ = Command::new("psql")
            .args([&self.admin, "-X", "-q", "-c", &format!("DROP DATABASE IF EXISTS {} WITH (FORCE)", self.name)])
            .output();
    }
}

/// Makes `mod sled` and `mod postgres`, each with one `#[test]` per named
/// function `fn(Kind)`.
#[macro_export]
macro_rules! on_both_backends {
    ($($test:ident),* $(,)?) => {
        mod sled {
            $(#[test] fn $test() { super::$test($crate::common::backend::Kind::Sled) })*
        }
        mod postgres {
            $(#[test] fn $test() {
                if $crate::common::has($crate::common::Need::Postgres) {
                    super::$test($crate::common::backend::Kind::Postgres)
                }
            })*
        }
    };
}
