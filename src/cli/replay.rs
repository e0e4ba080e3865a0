//! `arbiter replay GAME|FILE [--from N] [--to M] [--json] [--interactive]`

use std::io::IsTerminal;
use std::process::ExitCode;

use anyhow::bail;
use arbiter::compare::Record;
use arbiter::replay::{Shown, Told, replay};

use super::progress::{self, Ticking};
use super::{Output, RecordArg, rec};

#[derive(clap::Args)]
pub struct Args {
    /// A stored game or an export file.
    #[arg(add = clap_complete::ArgValueCompleter::new(super::completions::game_names_or_files))]
    pub record: String,
    /// First seq to show.
    #[arg(long, default_value_t = 0)]
    pub from: u64,
    /// Last seq to show (default: the head).
    #[arg(long)]
    pub to: Option<u64>,
    /// Fold each run of passes into one line ("p1, p3 pass"), with the step before and after the run.
    #[arg(long)]
    pub hide_passes: bool,
    /// Step one event per key: right/n/space forward, left/p back, g then a seq and Enter to jump, q to quit.
    #[arg(long)]
    pub interactive: bool,
}

/// The step once when the event left it where it was, else before -> after.
fn steps(s: &Shown) -> String {
    match &s.before {
        Some(b) if b.reference == s.after.reference => format!("at {}", b.reference),
        Some(b) => format!("{} -> {}", b.reference, s.after.reference),
        None => format!("-> {}", s.after.reference),
    }
}

fn text(s: &Shown) -> String {
    let mark = if s.rewound { "  [REWOUND]" } else { "" };
    let kind = match s.kind {
        "ruling" => "RULING ",
        "note" => "NOTE ",
        _ => "",
    };
    let head = format!("{:>5}  {}  {:<10} {kind}{}{mark}", s.seq, s.at, s.by, s.action);
    // Rulings stand out; a rewound event is struck (on a terminal).
    let paint = super::board::Paint::for_stdout();
    let head = match (s.kind, s.rewound) {
        (_, true) => paint.struck(&head),
        ("ruling", _) => paint.alert(&head),
        _ => head,
    };
    format!("{head}\n       {}", steps(s)) + &what_changed(s)
}

/// What the event changed, one line each: in the board's words, then what
/// the ruleset recorded (a score follows the combat that made it). The
/// text asks for no state paths (`Told::Words`): `--json` gives them.
fn what_changed(s: &Shown) -> String {
    s.said.iter().flatten().chain(&s.recorded).map(|line| format!("\n       {line}")).collect()
}

pub fn run(record: RecordArg, a: &Args, out: &Output) -> anyhow::Result<ExitCode> {
    if a.interactive {
        if !std::io::stdout().is_terminal() || !std::io::stdin().is_terminal() {
            bail!("--interactive needs a terminal");
        }
        let mut pages = Vec::new();
        let mut passes = Passes::default();
        // The pages are built before the first is shown: a long game gets a bar.
        let bar = progress::bar(events(&record).map(|n| 2 * n), "replaying");
        let source = Ticking { source: record.source(), bar: &bar };
        replay(&source, a.from, a.to, Told::Words, |s| {
            if a.hide_passes {
                pages.extend(passes.take(s).map(|s| s.text()));
            } else {
                pages.push(text(s));
            }
        })
        .map_err(rec)?;
        bar.finish_and_clear();
        pages.extend(passes.flush());
        return interactive(&pages).map(|()| ExitCode::SUCCESS);
    }
    let mut passes = Passes::default();
    // Written to a file or a pipe while a person waits at the terminal: a bar on stderr.
    let waiting = !std::io::stdout().is_terminal();
    let bar = match waiting {
        true => progress::bar(events(&record).map(|n| 2 * n), "replaying"),
        false => indicatif::ProgressBar::hidden(),
    };
    let source = Ticking { source: record.source(), bar: &bar };
    // The text says what changed in the board's words; JSON, for tools,
    // also gives each change as a path in the state.
    let told = match out.json {
        true => Told::WordsAndPaths,
        false => Told::Words,
    };
    replay(&source, a.from, a.to, told, |s| {
        if a.hide_passes && !out.json {
            for shown in passes.take(s) {
                println!("{}", shown.text());
            }
        } else {
            out.emit(serde_json::to_value(s).expect("serialises"), || text(s));
        }
    })
    .map_err(rec)?;
    bar.finish_and_clear();
    if let Some(run) = passes.flush() {
        println!("{run}");
    }
    Ok(ExitCode::SUCCESS)
}

/// How many events a stored game has (files are counted as they are read).
fn events(record: &RecordArg) -> Option<u64> {
    match record.source() {
        Record::Stored(game) => game.store.head(&game.game).ok().flatten().map(|h| h.seq + 1),
        _ => None,
    }
}

/// `--hide-passes`: a run of passes (not rewound) held back until the next
/// other event, then shown as one line. A judge reading a dispute looks
/// for what was played; "p2, p1, p3 pass" says as much as three entries.
#[derive(Default)]
pub struct Passes {
    run: Vec<Shown>,
}

/// What `Passes::take` lets out: a run of passes, or one other event (as
/// `replay` lent it: only the passes held back are copied).
pub enum Line<'a> {
    Run(Vec<Shown>),
    One(&'a Shown),
}

impl Line<'_> {
    fn text(&self) -> String {
        match self {
            Line::One(s) => text(s),
            Line::Run(run) => run_text(run),
        }
    }
}

impl Passes {
    /// Takes the next event; returns the lines now complete.
    pub fn take<'a>(&mut self, s: &'a Shown) -> impl Iterator<Item = Line<'a>> + use<'a> {
        if s.kind == "pass" && !s.rewound {
            self.run.push(s.clone());
            return None.into_iter().chain(None);
        }
        let run = (!self.run.is_empty()).then(|| Line::Run(std::mem::take(&mut self.run)));
        run.into_iter().chain(Some(Line::One(s)))
    }

    /// The run still held at the end, as text.
    pub fn flush(&mut self) -> Option<String> {
        (!self.run.is_empty()).then(|| run_text(&std::mem::take(&mut self.run)))
    }
}

/// "  12-14  ...  p2, p1, p3 pass", with the step before the first and after the last.
fn run_text(run: &[Shown]) -> String {
    let (first, last) = (&run[0], &run[run.len() - 1]);
    if run.len() == 1 {
        return text(first);
    }
    let who: Vec<&str> = run.iter().map(|s| s.by.as_str()).collect();
    let before = first.before.as_ref().map_or("-".to_string(), |b| b.reference.clone());
    let line = passes_line(first.seq, last.seq, &first.at, &who);
    // A pass can end a showdown: what the passes changed is said under the run.
    let changed: String = run.iter().map(what_changed).collect();
    format!("{line}\n       {before} -> {}{changed}", last.after.reference)
}

/// One line for a run of passes, shared with `log --hide-passes`.
pub fn passes_line(first: u64, last: u64, at: &str, who: &[&str]) -> String {
    format!("{:>5}  {at}  {} pass", format!("{first}-{last}"), who.join(", "))
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
