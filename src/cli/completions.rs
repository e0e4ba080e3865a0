//! `arbiter completions bash|zsh|fish` and `arbiter man [--dir DIR]`: the
//! shell completions and man pages, generated from the same argument
//! definitions as `--help`, so they cannot drift from it.

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Context;
use clap::CommandFactory;

#[derive(clap::Args)]
pub struct CompletionsArgs {
    /// The shell to complete for.
    pub shell: clap_complete::Shell,
}

#[derive(clap::Args)]
pub struct ManArgs {
    /// Write arbiter.1 and one page per verb (arbiter-append.1, ...) into
    /// this directory; without it, arbiter.1 goes to stdout.
    #[arg(long)]
    pub dir: Option<PathBuf>,
}

pub fn completions(a: &CompletionsArgs) -> anyhow::Result<ExitCode> {
    let mut cmd = super::Cli::command();
    clap_complete::generate(a.shell, &mut cmd, "arbiter", &mut std::io::stdout());
    Ok(ExitCode::SUCCESS)
}

pub fn man(a: &ManArgs) -> anyhow::Result<ExitCode> {
    let cmd = super::Cli::command();
    match &a.dir {
        Some(dir) => {
            std::fs::create_dir_all(dir).with_context(|| format!("cannot create {}", dir.display()))?;
            clap_mangen::generate_to(cmd, dir).with_context(|| format!("cannot write into {}", dir.display()))?;
            println!("wrote the man pages into {}", dir.display());
        }
        None => clap_mangen::Man::new(cmd).render(&mut std::io::stdout()).context("cannot write the man page")?,
    }
    Ok(ExitCode::SUCCESS)
}
