//! `arbiter replay GAME|FILE [--from N] [--to M] [--json] [--interactive]`

use std::io::IsTerminal;
use std::process::ExitCode;

use anyhow::bail;
use arbiter::replay::{Shown, replay};

use super::whatif::show;
use super::{Output, RecordArg, rec};

#[derive(clap::Args)]
pub struct Args {
    /// A stored game or an export file.
    pub record: String,
    #[arg(long, default_value_t = 0)]
    pub from: u64,
    #[arg(long)]
    pub to: Option<u64>,
    /// Step one event per key: right/n/space forward, left/p back, g then a seq and Enter to jump, q to quit.
    #[arg(long)]
    pub interactive: bool,
}

fn text(s: &Shown) -> String {
    let mark = if s.rewound { "  [REWOUND]" } else { "" };
    let kind = match s.kind {
        "ruling" => "RULING ",
        "note" => "NOTE ",
        _ => "",
    };
    let before = s.before.as_ref().map_or("-".to_string(), |b| b.reference.clone());
    let mut out = format!(
        "{:>5}  {}  {:<10} {kind}{}{mark}\n       {} -> {}",
        s.seq, s.at, s.actor, s.action, before, s.after.reference
    );
    for said in &s.said {
        out += &format!("\n       {said}");
    }
    for c in &s.changes {
        out += &format!("\n       {}: {} -> {}", c.path, show(&c.before), show(&c.after));
    }
    out
}

pub fn run(record: RecordArg, a: &Args, out: &Output) -> anyhow::Result<ExitCode> {
    if a.interactive {
        if !std::io::stdout().is_terminal() || !std::io::stdin().is_terminal() {
            bail!("--interactive needs a terminal");
        }
        let mut pages = Vec::new();
        replay(record.source(), a.from, a.to, |s| pages.push(text(&s))).map_err(rec)?;
        return interactive(&pages).map(|()| ExitCode::SUCCESS);
    }
    replay(record.source(), a.from, a.to, |s| {
        out.emit(serde_json::to_value(&s).expect("serialises"), || text(&s));
    })
    .map_err(rec)?;
    Ok(ExitCode::SUCCESS)
}

/// Where the reader is, and what a key does to it (kept apart from the terminal so it can be tested).
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Navigator {
    pub at: usize,
    pub len: usize,
    /// Digits typed after 'g'.
    pub jump: Option<String>,
}

pub enum Key {
    Next,
    Back,
    Jump,
    Digit(char),
    Enter,
    Quit,
}

impl Navigator {
    /// The new position; None to quit. `first_seq` maps a typed seq to a position.
    pub fn key(&mut self, key: Key, first_seq: usize) -> Option<usize> {
        match key {
            Key::Quit => return None,
            Key::Next => self.at = (self.at + 1).min(self.len.saturating_sub(1)),
            Key::Back => self.at = self.at.saturating_sub(1),
            Key::Jump => self.jump = Some(String::new()),
            Key::Digit(c) => {
                if let Some(j) = &mut self.jump {
                    j.push(c);
                }
            }
            Key::Enter => {
                if let Some(seq) = self.jump.take().and_then(|j| j.parse::<usize>().ok()) {
                    self.at = seq.saturating_sub(first_seq).min(self.len.saturating_sub(1));
                }
            }
        }
        Some(self.at)
    }
}

fn interactive(pages: &[String]) -> anyhow::Result<()> {
    use crossterm::event::{Event, KeyCode, read};
    use crossterm::terminal::{disable_raw_mode, enable_raw_mode};
    if pages.is_empty() {
        bail!("no events in that range");
    }
    let first_seq: usize = pages[0].split_whitespace().next().and_then(|s| s.parse().ok()).unwrap_or(0);
    let mut nav = Navigator { at: 0, len: pages.len(), jump: None };
    enable_raw_mode()?;
    let result = (|| -> anyhow::Result<()> {
        loop {
            print!(
                "\x1b[2J\x1b[H{}\r\n\r\n[{}/{}] right/n next, left/p back, g<seq>Enter jump, q quit\r\n",
                pages[nav.at].replace('\n', "\r\n"),
                nav.at + 1,
                nav.len
            );
            std::io::Write::flush(&mut std::io::stdout())?;
            let key = match read()? {
                Event::Key(k) => match k.code {
                    KeyCode::Right | KeyCode::Char('n') | KeyCode::Char(' ') => Key::Next,
                    KeyCode::Left | KeyCode::Char('p') => Key::Back,
                    KeyCode::Char('g') => Key::Jump,
                    KeyCode::Char(c) if c.is_ascii_digit() => Key::Digit(c),
                    KeyCode::Enter => Key::Enter,
                    KeyCode::Char('q') | KeyCode::Esc => Key::Quit,
                    _ => continue,
                },
                _ => continue,
            };
            if nav.key(key, first_seq).is_none() {
                return Ok(());
            }
        }
    })();
    disable_raw_mode()?;
    result
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_step_forward_back_and_jump() {
        let mut n = Navigator { at: 0, len: 10, jump: None };
        assert_eq!(n.key(Key::Next, 5), Some(1));
        assert_eq!(n.key(Key::Back, 5), Some(0));
        assert_eq!(n.key(Key::Back, 5), Some(0));
        n.key(Key::Jump, 5);
        n.key(Key::Digit('1'), 5);
        n.key(Key::Digit('2'), 5);
        assert_eq!(n.key(Key::Enter, 5), Some(7), "seq 12 is the 8th event from seq 5");
        n.key(Key::Jump, 5);
        n.key(Key::Digit('9'), 5);
        n.key(Key::Digit('9'), 5);
        assert_eq!(n.key(Key::Enter, 5), Some(9), "past the end: the last event");
        assert_eq!(n.key(Key::Quit, 5), None);
    }
}
