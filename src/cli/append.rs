//! `arbiter append GAME --actor SEAT [--expect-seq N] ACTION_JSON`, or `append GAME -`.

use std::io::BufRead;
use std::process::ExitCode;

use anyhow::bail;
use arbiter::json::parse_strict;
use arbiter::limits::MAX_LINE_BYTES;
use arbiter::ops;
use arbiter::record::{RecordError, Recorder, Submission};
use serde_json::{Value, json};

use super::new::str;
use super::read::view_text;
use super::{Output, Target, progress, rec};

#[derive(clap::Args)]
pub struct Args {
    /// The game's name in the store.
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
    let subs = if a.action == "-" {
        if a.actor.is_some() || a.at.is_some() {
            bail!("with '-', each line carries its own actor (and at); drop --actor/--at");
        }
        read_stdin()?
    } else {
        let Some(actor) = a.actor.clone() else { bail!("--actor is required (a seat id or a judge's name)") };
        let action = parse_strict(&a.action)
            .map_err(|e| rec(RecordError::Input(format!("the action is not valid JSON: {e}"))))?;
        vec![Submission { actor, action, at: a.at.clone() }]
    };
    if a.action != "-" || out.json {
        // Each event is acknowledged (printed) as soon as it is stored.
        submit(target, &a.game, &subs, a.expect_seq, |appended| out.emit(appended.clone(), || text(&appended)))?;
        return Ok(ExitCode::SUCCESS);
    }
    // A batch for people: a bar while it runs, then one line for the batch
    // (what was stored, and where the game now stands).
    let bar = progress::bar(Some(subs.len() as u64), "appending");
    let mut stored: Vec<Value> = Vec::new();
    let submitted = submit(target, &a.game, &subs, a.expect_seq, |appended| {
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
    let view = serde_json::from_value(last["view"].clone()).map(|v| view_text(&v)).unwrap_or_default();
    format!(
        "seqs {}-{} appended ({} events{again}); head {} {}\n  now: {view}",
        first["event"]["seq"],
        last["event"]["seq"],
        stored.len(),
        last["event"]["seq"],
        str(&last["event"]["hash"])
    )
}

/// Appends `subs` in order (a batch is checked whole first: a refused one
/// stores none), at `expect` if given. Calls `done` with each `{event,
/// duplicate, view}` once it is stored.
pub fn submit(
    target: &Target,
    game: &str,
    subs: &[Submission],
    expect: Option<u64>,
    mut done: impl FnMut(Value),
) -> anyhow::Result<()> {
    match target {
        Target::Local(store) => {
            let mut recorder = Recorder::load(store, game).map_err(rec)?;
            let batch = subs.len() > 1;
            let line = |e, i: usize| match batch {
                true => rec(e).context(format!("stdin line {} was refused; nothing from stdin was stored", i + 1)),
                false => rec(e),
            };
            if batch {
                recorder.check_batch(subs).map_err(|(i, e)| line(e, i))?;
            }
            let mut expect = expect;
            for (i, sub) in subs.iter().enumerate() {
                let d = recorder.append(sub, expect).map_err(|e| line(e, i))?;
                expect = expect.map(|_| d.event.seq + 1);
                done(ops::appended(&d, &recorder.table().view()));
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
    let view = serde_json::from_value(v["view"].clone()).map(|v| view_text(&v)).unwrap_or_default();
    format!("seq {} appended{again}: {}\n  now: {view}", v["event"]["seq"], str(&v["event"]["hash"]))
}

fn read_stdin() -> anyhow::Result<Vec<Submission>> {
    let mut subs = Vec::new();
    for (i, line) in std::io::stdin().lock().lines().enumerate() {
        let line = line?;
        if line.len() > MAX_LINE_BYTES {
            return Err(rec(RecordError::Input(format!("stdin line {} is longer than {MAX_LINE_BYTES} bytes", i + 1))));
        }
        if line.trim().is_empty() {
            continue;
        }
        subs.push(Submission::parse(&line).map_err(|e| rec(e).context(format!("stdin line {}", i + 1)))?);
    }
    Ok(subs)
}
