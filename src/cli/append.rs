//! `arbiter append GAME --actor SEAT [--expect-seq N] ACTION_JSON`, or `append GAME -`.

use std::io::BufRead;
use std::process::ExitCode;

use anyhow::bail;
use arbiter::json::parse_strict;
use arbiter::limits::{MAX_BATCH_EVENTS, MAX_LINE_BYTES};
use arbiter::ops;
use arbiter::record::{RecordError, Recorder, Submission};
use serde_json::{Value, json};

use super::new::str;
use super::read::view_text;
use super::{Output, Target, progress, rec};

#[derive(clap::Args)]
pub struct Args {
    /// The game's name in the store.
    #[arg(add = clap_complete::ArgValueCompleter::new(super::completions::game_names))]
    pub game: String,
    /// Who acts (a seat id or a judge's name). Not used with '-'.
    #[arg(long)]
    pub actor: Option<String>,
    /// Append only if this is the next seq (optimistic concurrency).
    #[arg(long)]
    pub expect_seq: Option<u64>,
    /// RFC 3339 UTC time, when a judge transcribes a paper record.
    #[arg(long)]
    pub at: Option<String>,
    /// The action as JSON, e.g. '{"type":"pass"}', or '-' for JSON Lines on stdin.
    pub action: String,
}

pub fn run(target: &Target, a: &Args, out: &Output) -> anyhow::Result<ExitCode> {
    let (subs, lines) = if a.action == "-" {
        if a.actor.is_some() || a.at.is_some() {
            bail!("with '-', each line carries its own actor (and at); drop --actor/--at");
        }
        read_stdin()?
    } else {
        let Some(actor) = a.actor.clone() else { bail!("--actor is required (a seat id or a judge's name)") };
        let action = parse_strict(&a.action)
            .map_err(|e| rec(RecordError::Input(format!("the action is not valid JSON: {e}"))))?;
        (vec![Submission { actor, action, at: a.at.clone() }], vec![])
    };
    let lines = Some(lines.as_slice()).filter(|_| a.action == "-");
    if a.action != "-" || out.json {
        // Each event is acknowledged (printed) as soon as it is stored.
        submit(target, &a.game, &subs, lines, a.expect_seq, |appended| out.emit(appended.clone(), || text(&appended)))?;
        return Ok(ExitCode::SUCCESS);
    }
    // A batch for people: a bar while it runs, then one line for the batch
    // (what was stored, and where the game now stands).
    let bar = progress::bar(Some(subs.len() as u64), "appending");
    let mut stored: Vec<Value> = Vec::new();
    let submitted = submit(target, &a.game, &subs, lines, a.expect_seq, |appended| {
        bar.inc(1);
        stored.push(appended);
    });
    bar.finish_and_clear();
    match (stored.as_slice(), &submitted) {
        ([], Ok(())) => println!("nothing to append: stdin had no actions"),
        ([], Err(_)) => {}
        // Stored before a failure or all of it: either way, say what is stored.
        (stored, _) => println!("{}", batch_text(stored)),
    }
    submitted?;
    Ok(ExitCode::SUCCESS)
}

/// "seqs 1-40 appended (40 events); head 40 HASH" and the view after the last.
fn batch_text(stored: &[Value]) -> String {
    let (first, last) = (&stored[0], &stored[stored.len() - 1]);
    let again = stored.iter().filter(|v| v["duplicate"] == json!(true)).count();
    let again = if again > 0 { format!(", {again} already stored: retry") } else { String::new() };
    let view = serde_json::from_value(last["view"].clone()).map(|v| named_view_text(v, last)).unwrap_or_default();
    format!(
        "seqs {}-{} appended ({} events{again}); head {} {}\n  now: {view}",
        first["event"]["seq"],
        last["event"]["seq"],
        stored.len(),
        last["event"]["seq"],
        str(&last["event"]["hash"])
    )
}

/// Appends `subs` in order, at `expect` if given, and calls `done` with
/// each `{event, duplicate, view}` once it is stored and durable. `lines`:
/// the stdin line of each submission, for a batch read from stdin.
///
/// A local batch is checked whole first (a refused line stores nothing),
/// then stored by `Recorder::append_batch` in chunks of at most
/// `MAX_BATCH_EVENTS`: each chunk one durable write, all of it or none.
/// If a chunk fails (a full disk), the error says exactly which seqs and
/// lines were stored before it.
pub fn submit(
    target: &Target,
    game: &str,
    subs: &[Submission],
    lines: Option<&[usize]>,
    expect: Option<u64>,
    mut done: impl FnMut(Value),
) -> anyhow::Result<()> {
    match target {
        Target::Local(store) => {
            let mut recorder = Recorder::load(store.as_ref(), game).map_err(rec)?;
            let Some(lines) = lines.filter(|_| subs.len() > 1) else {
                for sub in subs {
                    let d = recorder.append(sub, expect).map_err(rec)?;
                    done(ops::appended(&d, &d.view));
                }
                return Ok(());
            };
            let line = |i: usize| lines.get(i).copied().unwrap_or(i + 1);
            // A retry of a batch already stored in part: those lines are
            // not checked again as if they were new.
            let retried = recorder.already_stored(subs, expect).map_err(rec)?.len();
            recorder.check_batch(&subs[retried..]).map_err(|(i, e)| {
                rec(e).context(format!("stdin line {} was refused; nothing from stdin was stored", line(retried + i)))
            })?;
            // Submission i goes at seq first + i (a retried run at expect, the rest after it).
            let first = expect.unwrap_or(recorder.head().seq + 1);
            let mut stored = 0;
            for chunk in subs.chunks(MAX_BATCH_EVENTS) {
                match recorder.append_batch(chunk, expect.map(|e| e + stored as u64)) {
                    Ok(appended) => {
                        appended.iter().for_each(|d| done(ops::appended(d, &d.view)));
                        stored += chunk.len();
                    }
                    Err((i, e)) => {
                        let stored = stored + i;
                        let what = match stored {
                            0 => "nothing from stdin was stored".to_string(),
                            n => format!(
                                "seqs {first}-{} (stdin lines 1-{}) are stored and durable; line {} on was not stored",
                                first + n as u64 - 1,
                                line(n - 1),
                                line(n)
                            ),
                        };
                        return Err(rec(e).context(what));
                    }
                }
            }
            Ok(())
        }
        Target::Remote(c) => {
            // The server needs the seq the table expects; without
            // --expect-seq, that is the head the client sees now.
            let expect = match expect {
                Some(e) => e,
                None => c.get(&c.game(game, "")?)?["seq"].as_u64().unwrap_or(0) + 1,
            };
            if let [sub] = subs {
                let body = json!({"actor": sub.actor, "action": sub.action, "at": sub.at, "expect_seq": expect});
                let mut body = body;
                if sub.at.is_none() {
                    body.as_object_mut().expect("object").remove("at");
                }
                done(c.post(&c.game(game, "/events")?, &body)?);
                return Ok(());
            }
            // The server stores a batch whole and acknowledges it at once.
            let answer = c.post(&c.game(game, "/batch")?, &json!({"events": subs, "expect_seq": expect}))?;
            answer["appended"].as_array().into_iter().flatten().cloned().for_each(done);
            Ok(())
        }
    }
}

/// One appended event, as `append` prints it.
pub fn text(v: &Value) -> String {
    let again = if v["duplicate"] == json!(true) { " (already stored: retry)" } else { "" };
    let view = serde_json::from_value(v["view"].clone()).map(|view| named_view_text(view, v)).unwrap_or_default();
    format!("seq {} appended{again}: {}\n  now: {view}", v["event"]["seq"], str(&v["event"]["hash"]))
}

/// The submissions on stdin, and the line each is on (blank lines are skipped).
fn read_stdin() -> anyhow::Result<(Vec<Submission>, Vec<usize>)> {
    let mut subs = Vec::new();
    let mut lines = Vec::new();
    for (i, line) in std::io::stdin().lock().lines().enumerate() {
        let line = line?;
        if line.len() > MAX_LINE_BYTES {
            return Err(rec(RecordError::Input(format!("stdin line {} is longer than {MAX_LINE_BYTES} bytes", i + 1))));
        }
        if line.trim().is_empty() {
            continue;
        }
        subs.push(Submission::parse(&line).map_err(|e| rec(e).context(format!("stdin line {}", i + 1)))?);
        lines.push(i + 1);
    }
    Ok((subs, lines))
}

/// The view after an append, who may act by name where the answer names
/// them (`may_act_names`; an older server's answer has ids only).
fn named_view_text(mut view: arbiter::kernel::View, appended: &Value) -> String {
    if let Ok(names) = serde_json::from_value::<Vec<String>>(appended["may_act_names"].clone())
        && names.len() == view.may_act.len()
    {
        view.may_act = names;
    }
    view_text(&view)
}
