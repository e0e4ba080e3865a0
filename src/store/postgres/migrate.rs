//! The schema of a PostgreSQL store, brought up to date when it is opened:
//! the migrations in `migrations/postgres/`, each applied once, in order.

use deadpool_postgres::Pool;
use tokio_postgres::error::SqlState;

use super::{said, why_not_connected};

/// The schema's migrations, in order: (version, name, SQL). Each runs once,
/// in one transaction, recorded in `arbiter_migrations`.
const MIGRATIONS: &[(i32, &str, &str)] = &[
    (1, "events_log_settings", include_str!("../../../migrations/postgres/0001_events_log_settings.sql")),
    (2, "events_hash_and_time", include_str!("../../../migrations/postgres/0002_events_hash_and_time.sql")),
    (3, "leaves_without_foreign_key", include_str!("../../../migrations/postgres/0003_leaves_without_foreign_key.sql")),
];

/// The advisory lock that serialises migrations between processes that
/// open one database at once ("arbiter" in ASCII).
const MIGRATION_LOCK: i64 = 0x0061_7262_6974_6572;

/// Why the schema could not be brought up to date (`migrate`).
#[derive(Debug, thiserror::Error)]
pub(super) enum MigrateError {
    #[error("cannot connect: {0}")]
    Connect(String),
    #[error("{0}")]
    Database(String),
    #[error("its schema is version {at}, newer than this arbiter's ({known}): run a newer arbiter")]
    Newer { at: i32, known: i32 },
    #[error("migration {version} ({name}) failed: {why}")]
    Failed { version: i32, name: String, why: String },
    /// PostgreSQL 15 and later no longer let every role create tables in
    /// schema `public`: a database made by a superuser for another role
    /// refuses that role's first open.
    #[error(
        "the role {role} may not create tables in schema {schema} of {db}: {why}. Make the role the database's \
         owner (`createdb -O {role} {db}` for a new one; `ALTER DATABASE {db} OWNER TO {role}` for this one), or \
         `GRANT CREATE ON SCHEMA {schema} TO {role}`"
    )]
    MayNotCreate { role: String, schema: String, db: String, why: String },
}

/// Applies every migration the database has not had, each in its own
/// transaction, under an advisory lock so two processes opening one new
/// database at once do not both apply them. A database migrated by a newer
/// arbiter than this one is refused, not read with the wrong schema.
pub(super) async fn migrate(pool: Pool) -> Result<(), MigrateError> {
    let mut client = pool.get().await.map_err(|e| MigrateError::Connect(why_not_connected(&e)))?;
    let e = |e: tokio_postgres::Error| MigrateError::Database(said(&e));
    client.execute("SELECT pg_advisory_lock($1)", &[&MIGRATION_LOCK]).await.map_err(e)?;
    let migrated = async {
        let made = client
            .batch_execute(
                "CREATE TABLE IF NOT EXISTS arbiter_migrations (\
                 version int PRIMARY KEY, name text NOT NULL, applied_at timestamptz NOT NULL DEFAULT now())",
            )
            .await;
        if let Err(err) = made {
            if err.code() != Some(&SqlState::INSUFFICIENT_PRIVILEGE) {
                return Err(e(err));
            }
            let row = client
                .query_one(
                    "SELECT current_user::text, coalesce(current_schema(), 'public'), current_database()::text",
                    &[],
                )
                .await
                .map_err(e)?;
            let why = err.as_db_error().map_or_else(|| said(&err), |d| d.message().to_string());
            return Err(MigrateError::MayNotCreate { role: row.get(0), schema: row.get(1), db: row.get(2), why });
        }
        let row = client.query_one("SELECT coalesce(max(version), 0) FROM arbiter_migrations", &[]).await.map_err(e)?;
        let at: i32 = row.get(0);
        let known = MIGRATIONS.last().map_or(0, |m| m.0);
        if at > known {
            return Err(MigrateError::Newer { at, known });
        }
        for (version, name, sql) in MIGRATIONS.iter().filter(|m| m.0 > at) {
            let tx = client.transaction().await.map_err(e)?;
            tx.batch_execute(sql).await.map_err(|err| MigrateError::Failed {
                version: *version,
                name: name.to_string(),
                why: err.to_string(),
            })?;
            tx.execute("INSERT INTO arbiter_migrations (version, name) VALUES ($1, $2)", &[version, name])
                .await
                .map_err(e)?;
            tx.commit().await.map_err(e)?;
        }
        Ok(())
    }
    .await;
    let unlocked = client.execute("SELECT pg_advisory_unlock($1)", &[&MIGRATION_LOCK]).await;
    migrated?;
    unlocked.map(drop).map_err(e)
}
