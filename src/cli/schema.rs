//! `arbiter schema [--dir schemas] [--check]`

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::{Context, bail};

#[derive(clap::Args)]
pub struct Args {
    /// Directory the schemas are written to (or checked in).
    #[arg(long, default_value = "schemas")]
    pub dir: PathBuf,
    /// Only check that the files are current.
    #[arg(long)]
    pub check: bool,
}

pub fn run(a: &Args) -> anyhow::Result<ExitCode> {
    for (path, schema) in arbiter::schema::all() {
        let file = a.dir.join(path);
        let text = arbiter::schema::render(&schema);
        if a.check {
            let found = std::fs::read_to_string(&file).unwrap_or_default();
            if found != text {
                bail!("{} is not current: run `arbiter schema`", file.display());
            }
        } else {
            std::fs::create_dir_all(file.parent().expect("parent"))
                .with_context(|| format!("cannot create {}", a.dir.display()))?;
            std::fs::write(&file, text).with_context(|| format!("cannot write {}", file.display()))?;
            println!("wrote {}", file.display());
        }
    }
    Ok(ExitCode::SUCCESS)
}
