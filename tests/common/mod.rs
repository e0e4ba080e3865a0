//! Shared test helpers: a table simulator that seals real events (so every
//! event a scenario produces is hashed, chained and checked against the
//! committed JSON Schemas), and a few CLI helpers.
#![allow(dead_code, clippy::result_large_err)]

pub mod backend;
pub mod browser;
pub mod logs;
pub mod server;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::OnceLock;

use arbiter::event::{ActionType, Draft, Event, parse_time, seal};
use arbiter::fold::{FoldError, Folder};
use arbiter::kernel::{View, Violation};
use arbiter::rules::doomtrooper;
use arbiter::rules::{RulesetState, Table};
use serde_json::{Value, json};

/// The committed schemas, compiled once: the envelope, the header, and each
/// ruleset's payloads (`schemas/<ruleset>/action.schema.json`).
fn schema(path: &str) -> &'static jsonschema::Validator {
    static S: OnceLock<std::collections::BTreeMap<String, jsonschema::Validator>> = OnceLock::new();
    let all = S.get_or_init(|| {
        arbiter::schema::all()
            .into_iter()
            .map(|(p, _)| {
                let file = Path::new(env!("CARGO_MANIFEST_DIR")).join("schemas").join(&p);
                let v: Value = serde_json::from_str(&std::fs::read_to_string(&file).unwrap()).unwrap();
                (p.to_string(), jsonschema::validator_for(&v).unwrap_or_else(|e| panic!("{p}: {e}")))
            })
            .collect()
    });
    all.get(path).unwrap_or_else(|| panic!("no committed schema {path}"))
}

/// Asserts that an event of a game of `ruleset` validates against the committed schemas.
pub fn assert_schema_valid_for(ruleset: &str, event: &Event) {
    let value = serde_json::to_value(event).unwrap();
    if let Err(e) = schema("event.schema.json").validate(&value) {
        panic!("event {} does not match schemas/event.schema.json: {e}", event.seq);
    }
    let payload = match event.action["type"].as_str() {
        _ if event.seq == 0 => "open.schema.json".to_string(),
        Some("ruling" | "note") => "ruling.schema.json".to_string(),
        _ => format!("{ruleset}/action.schema.json"),
    };
    if let Err(e) = schema(&payload).validate(&event.action) {
        panic!("action of event {} does not match schemas/{payload}: {e}: {}", event.seq, event.action);
    }
}

/// Asserts that the board after an event validates against its committed
/// schema (`schemas/<ruleset>/board.schema.json`), and that what changed and
/// the outcome can be said in its words.
pub fn assert_board_valid(before: &Table, after: &Table, seq: u64) {
    let Some(board) = after.board() else { return };
    let ruleset = &after.header.ruleset;
    let value = serde_json::to_value(&board).unwrap();
    if let Err(e) = schema(&format!("{ruleset}/board.schema.json")).validate(&value) {
        panic!("the board after seq {seq} does not match schemas/{ruleset}/board.schema.json: {e}: {value}");
    }
    if let Some(b) = before.board() {
        board.changes_since(&b);
    }
    board.outcome();
}

pub fn assert_schema_valid(event: &Event) {
    assert_schema_valid_for("doomtrooper", event);
}

/// A game at a table, folded in memory: no store, real events.
pub struct Sim {
    pub table: Table,
    pub folder: Folder,
    pub events: Vec<Event>,
}

pub fn header(seats: &[&str], judges: &[&str]) -> Value {
    json!({
        "type": "open", "ruleset": "doomtrooper", "ruleset_version": 1,
        "seats": seats.iter().map(|s| json!({"id": s, "name": format!("Player {s}")})).collect::<Vec<_>>(),
        "judges": judges,
    })
}

impl Sim {
    /// A Doomtrooper game.
    pub fn new(seats: &[&str], judges: &[&str]) -> Sim {
        Sim::ruleset("doomtrooper", seats, judges, json!({}))
    }

    /// A game of any ruleset, with its options.
    pub fn ruleset(ruleset: &str, seats: &[&str], judges: &[&str], options: Value) -> Sim {
        let mut h = header(seats, judges);
        h["ruleset"] = json!(ruleset);
        // The version this build records new games under.
        h["ruleset_version"] = json!(arbiter::rules::Kind::named(ruleset).map_or(1, |k| k.version()));
        if options.as_object().is_some_and(|o| !o.is_empty()) {
            h["options"] = options;
        }
        Sim::open(h)
    }

    /// A game opened with this header (event 0's action).
    pub fn open(h: Value) -> Sim {
        let draft = Draft { actor: "organiser".into(), action: h, at: None };
        let (event, _) = seal(&draft, None, parse_time("2026-11-21T10:00:00Z").unwrap()).unwrap();
        assert_schema_valid(&event);
        let mut folder = Folder::new();
        folder.push(&event, &Vec::new()).unwrap_or_else(|e| panic!("header refused: {e:?}"));
        let table = folder.table().unwrap().clone();
        Sim { table, folder, events: vec![event] }
    }

    /// Applies an action; on refusal the state is untouched.
    pub fn try_act(&mut self, actor: &str, action: Value) -> Result<u64, Violation> {
        let prev = self.events.last().unwrap().link();
        let draft = Draft { actor: actor.into(), action, at: None };
        let (event, _) = seal(&draft, Some(&prev), parse_time("2026-11-21T10:00:00Z").unwrap()).unwrap();
        // The fold in place (`push`, what verify and load run) must agree
        // with the fold that keeps the state before (`next`, the append
        // path): the same state after, the same refusal, and a refusal
        // leaves the state byte for byte as it was.
        let mut in_place = self.folder.clone();
        let pushed = in_place.push(&event, &self.events);
        let next = match self.folder.next(&event, &self.events) {
            Ok(next) => {
                assert_offered(&self.table, &self.events, actor, &event.action);
                assert!(pushed.is_ok(), "folded in place, {event:?} was refused: {pushed:?}");
                assert_eq!(in_place.table(), Some(&next.table), "folded in place, {event:?} gave another state");
                next
            }
            Err(FoldError::Illegal { violation, .. }) => {
                match pushed {
                    Err(FoldError::Illegal { violation: v, .. }) => assert_eq!(v, violation),
                    other => panic!("folded in place, a refused {event:?} gave {other:?}"),
                }
                let json = |f: &Folder| serde_json::to_vec(&f.table()).unwrap();
                assert_eq!(json(&in_place), json(&self.folder), "a refusal changed the state folded in place");
                return Err(*violation);
            }
            Err(FoldError::Source(e)) => match e {},
        };
        assert_schema_valid_for(&self.table.header.ruleset, &event);
        self.folder.commit(&event, next);
        let before = std::mem::replace(&mut self.table, self.folder.table().unwrap().clone());
        assert_board_valid(&before, &self.table, event.seq);
        let seq = event.seq;
        self.events.push(event);
        Ok(seq)
    }

    #[track_caller]
    pub fn act(&mut self, actor: &str, action: Value) -> u64 {
        match self.try_act(actor, action.clone()) {
            Ok(seq) => seq,
            Err(v) => panic!("{actor} {action} refused: {v}"),
        }
    }

    /// Asserts the action is refused, leaves nothing behind, and returns the refusal.
    #[track_caller]
    pub fn refused(&mut self, actor: &str, action: Value) -> Violation {
        let before = (self.table.clone(), self.events.len());
        match self.try_act(actor, action.clone()) {
            Ok(_) => panic!("{actor} {action} was accepted at {}", before.0.view().step.reference),
            Err(v) => {
                assert_eq!((self.table.clone(), self.events.len()), before, "a refusal changed the state");
                v
            }
        }
    }

    #[track_caller]
    pub fn pass(&mut self, seats: &[&str]) {
        for s in seats {
            self.act(s, json!({"type": "pass"}));
        }
    }

    /// Each (step, seat): asserts the seat has priority at that step, then passes.
    #[track_caller]
    pub fn walk(&mut self, steps: &[(&str, &str)]) {
        for (no, who) in steps {
            self.at_step(no, &[who]);
            self.pass(&[who]);
        }
    }

    pub fn view(&self) -> View {
        self.table.view()
    }

    pub fn step_no(&self) -> String {
        self.view().step.number
    }

    #[track_caller]
    pub fn at_step(&self, no: &str, may_act: &[&str]) {
        let v = self.view();
        assert_eq!(
            (v.step.number.as_str(), v.may_act.iter().map(String::as_str).collect::<Vec<_>>()),
            (no, may_act.to_vec()),
            "at {}",
            v.step.reference
        );
    }

    pub fn state(&self) -> &doomtrooper::State {
        match &self.table.state {
            RulesetState::Doomtrooper(s) => s,
            _ => panic!("not a Doomtrooper game"),
        }
    }

    pub fn rawdeal(&self) -> &arbiter::rules::rawdeal::State {
        match &self.table.state {
            RulesetState::Rawdeal(s) => s,
            _ => panic!("not a Raw Deal game"),
        }
    }

    pub fn gurps(&self) -> &arbiter::rules::gurps::State {
        match &self.table.state {
            RulesetState::Gurps(s) => s,
            _ => panic!("not a GURPS game"),
        }
    }

    pub fn riftbound(&self) -> &arbiter::rules::riftbound::State {
        match &self.table.state {
            RulesetState::Riftbound(s) => s,
            _ => panic!("not a Riftbound game"),
        }
    }

    pub fn wtactics(&self) -> &arbiter::rules::wtactics::State {
        match &self.table.state {
            RulesetState::Wtactics(s) => s,
            _ => panic!("not a WTactics game"),
        }
    }

    pub fn combat(&self) -> &doomtrooper::Combat {
        self.state().combat.as_ref().expect("a combat is under way")
    }
}

/// Completeness of the moves: the action `actor` recorded after `events`
/// is admitted by a move offered to `actor` just before it.
#[track_caller]
pub fn assert_offered(table: &Table, events: &[Event], actor: &str, action: &Value) {
    let moves = table.moves(events.len() as u64);
    assert_view_is_the_moves(table, &moves);
    let mine: Vec<_> = moves.iter().filter(|m| m.seat == actor).collect();
    if mine.iter().any(|m| m.admits(action).is_ok()) {
        return;
    }
    let why: Vec<String> = mine
        .iter()
        .filter(|m| m.kind.name() == action.get("type").and_then(Value::as_str).unwrap_or_default())
        .map(|m| format!("  {}: {}", m.label, m.admits(action).unwrap_err()))
        .collect();
    panic!(
        "{actor} {action} was accepted at {} but no move offered to {actor} admits it:\n{}\nmoves offered to {actor}: {:?}",
        table.view().step.reference,
        why.join("\n"),
        mine.iter().map(|m| &m.label).collect::<Vec<_>>()
    );
}

/// One source of the rules: the view's `may_act` and `legal` are the actors
/// and the action types of the moves of the combat (the moves always open,
/// notes and rulings other than a decision, aside; a decision is a judge's
/// move of the ruleset, which the view lists as the ruleset's type).
#[track_caller]
pub fn assert_view_is_the_moves(table: &Table, moves: &[arbiter::kernel::Move]) {
    use std::collections::BTreeSet;
    let combat: Vec<_> = moves.iter().filter(|m| !arbiter::kernel::moves::always_open(m)).collect();
    let actors: BTreeSet<&str> = combat.iter().map(|m| m.seat.as_str()).collect();
    let kinds: BTreeSet<ActionType> = combat.iter().filter(|m| m.kind != ActionType::Ruling).map(|m| m.kind).collect();
    let view = table.view();
    let at = &view.step.reference;
    assert_eq!(
        actors,
        view.may_act.iter().map(String::as_str).collect(),
        "who may act at {at}, by the moves and by the view"
    );
    assert_eq!(kinds, view.legal.iter().copied().collect(), "what is legal at {at}, by the moves and by the view");
}

// Actions, in the payloads of schemas/doomtrooper/action.schema.json.
pub fn combat(defending: &str, attacker: &str, defender: &str) -> Value {
    json!({"type": "announce", "what": "combat", "defending_player": defending, "attacker": attacker, "defender": defender})
}
pub fn tactic(t: &str) -> Value {
    json!({"type": "announce", "what": "battle_tactic", "tactic": t})
}
pub fn warzone(w: Option<&str>) -> Value {
    json!({"type": "announce", "what": "warzone", "warzone": w})
}
pub fn equipment(items: &[&str]) -> Value {
    json!({"type": "announce", "what": "equipment", "items": items})
}
pub fn play(effect: &str, card: &str) -> Value {
    json!({"type": "play", "effect": effect, "card": card})
}
pub fn counter(card: &str, target: u64) -> Value {
    json!({"type": "counter", "card": card, "target": target})
}
pub fn standing(a: (&str, i64), d: (&str, i64)) -> Value {
    json!({"type": "resolve", "what": "standing", "ratings": [{"warrior": a.0, "rating": a.1}, {"warrior": d.0, "rating": d.1}]})
}
pub fn results(list: &[(&str, &str)], counted: &[u64]) -> Value {
    json!({"type": "resolve", "what": "results", "counted": counted,
           "results": list.iter().map(|(w, o)| json!({"warrior": w, "outcome": o})).collect::<Vec<_>>()})
}
pub fn status(list: &[(&str, &str)]) -> Value {
    json!({"type": "resolve", "what": "status", "status": list.iter().map(|(w, o)| json!({"warrior": w, "outcome": o})).collect::<Vec<_>>()})
}
pub fn award(points: u64) -> Value {
    json!({"type": "resolve", "what": "award", "points": points})
}

// CLI helpers.
pub fn arbiter(data: &Path, args: &[&str]) -> Output {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_arbiter"));
    cmd.env_remove("ARBITER_SERVER").env_remove("ARBITER_TOKEN");
    // --data and --server on one command line are refused: a verb against
    // a server gets no store directory.
    if !args.contains(&"--server") {
        cmd.arg("--data").arg(data);
    }
    cmd.args(args).output().expect("run arbiter")
}

pub fn arbiter_stdin(data: &Path, args: &[&str], stdin: &str) -> Output {
    use std::io::Write;
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_arbiter"));
    cmd.env_remove("ARBITER_SERVER").env_remove("ARBITER_TOKEN");
    if !args.contains(&"--server") {
        cmd.arg("--data").arg(data);
    }
    let mut child = cmd
        .args(args)
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    child.stdin.take().unwrap().write_all(stdin.as_bytes()).unwrap();
    child.wait_with_output().unwrap()
}

/// A ruleset's bundled sample as (actor, action) lines, event 0 first.
pub fn sample_lines(ruleset: &str) -> Vec<(String, Value)> {
    let kind = arbiter::rules::Kind::named(ruleset).unwrap_or_else(|| panic!("no ruleset {ruleset}"));
    kind.sample()
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| {
            let v: Value = serde_json::from_str(l).unwrap();
            (v["actor"].as_str().unwrap().to_string(), v["action"].clone())
        })
        .collect()
}

pub fn sample() -> &'static str {
    include_str!("../../examples/doomtrooper-sample.actions.jsonl")
}

pub fn repo_file(p: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join(p)
}

/// The view is complete and honest: of `actors`, exactly those in `may_act`
/// get one of the `candidates` accepted, and exactly the `legal` types are
/// accepted from someone. Tries each without committing it.
pub fn assert_view_is_what_the_reducer_accepts(sim: &Sim, actors: &[&str], candidates: &[(ActionType, Value)]) {
    use std::collections::BTreeSet;
    let seq = sim.events.len() as u64;
    let (mut accepted, mut types) = (BTreeSet::new(), BTreeSet::new());
    for actor in actors {
        for (kind, action) in candidates {
            if sim.table.apply(seq, actor, action).is_ok() {
                accepted.insert(actor.to_string());
                types.insert(kind.name());
            }
        }
    }
    let view = sim.view();
    let at = &view.step.reference;
    assert_eq!(accepted, view.may_act.iter().cloned().collect::<BTreeSet<_>>(), "who may act at {at}");
    assert_eq!(types, view.legal.iter().map(|t| t.name()).collect::<BTreeSet<_>>(), "what is legal at {at}");
}

/// Opens a store in this process, waiting out the moment after a CLI run
/// (or an earlier drop) in which sled's lock may still be held: arbiter
/// says so (`InUse`), or sled does, when the lock is taken between
/// arbiter's check and sled's own (seen on a loaded machine).
pub fn open_store(dir: &Path) -> arbiter::store::SledStore {
    use arbiter::store::{OpenError, SledStore};
    for _ in 0..500 {
        match SledStore::open(dir) {
            Err(OpenError::InUse { .. }) => {}
            Err(OpenError::Io { why, .. }) if why.contains("could not acquire lock") => {}
            opened => return opened.unwrap(),
        }
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
    panic!("the store at {} stayed in use", dir.display())
}

/// A Doomtrooper game's header: seats p1 (Alice) and p2 (Bob), judge Dana.
pub fn doomtrooper_header() -> arbiter::event::Header {
    use arbiter::event::{Header, OpenTag, Seat};
    Header {
        kind: OpenTag::Open,
        ruleset: "doomtrooper".into(),
        ruleset_version: 1,
        seats: vec![Seat { id: "p1".into(), name: "Alice".into() }, Seat { id: "p2".into(), name: "Bob".into() }],
        judges: vec!["Dana".into()],
        tournament: None,
        round: None,
        table: None,
        options: Default::default(),
    }
}

/// A component some tests need beyond cargo: `.ci/run` installs or starts
/// each of them.
#[derive(Debug, Clone, Copy)]
pub enum Need {
    /// A PostgreSQL cluster, named by `ARBITER_TEST_POSTGRES`.
    Postgres,
    /// Debian's chromium and chromium-driver.
    Chromium,
    /// schemathesis, from PyPI.
    Schemathesis,
    /// Python's `cryptography`, from PyPI.
    PythonCryptography,
    /// A program on the PATH (jq, b3sum, strace, tmux, psql).
    Program(&'static str),
}

impl Need {
    fn missing(self) -> Option<String> {
        let runs =
            |program: &str, args: &[&str]| Command::new(program).args(args).output().is_ok_and(|o| o.status.success());
        let why = match self {
            Need::Postgres if std::env::var_os("ARBITER_TEST_POSTGRES").is_none() => {
                "set ARBITER_TEST_POSTGRES (tools/pg-cluster start DIR prints it) or run .ci/run"
            }
            Need::Chromium
                if !Path::new("/usr/bin/chromium").exists() || !Path::new("/usr/bin/chromedriver").exists() =>
            {
                "install Debian's chromium and chromium-driver, or run .ci/run"
            }
            Need::Schemathesis if !runs("python3", &["-c", "import schemathesis"]) => {
                "pip install schemathesis (in a venv), or run .ci/run"
            }
            Need::PythonCryptography if !runs("python3", &["-c", "import cryptography"]) => {
                "pip install cryptography (in a venv), or run .ci/run"
            }
            Need::Program(p) if !runs("sh", &["-c", &format!("command -v {p}")]) => {
                return Some(format!("{p} is not on the PATH: install it, or run .ci/run"));
            }
            _ => return None,
        };
        Some(why.to_string())
    }
}

/// Whether `need` is here. When it is not, the test that asks must return at
/// once: it says so on stderr, past the test harness's capture, as
/// `skipped: TEST (WHY)`, so that a plain `cargo test` never passes in
/// silence what it did not run. Under `ARBITER_REQUIRE_ALL=1` (`.ci/run`
/// sets it) a missing component fails the test instead.
pub fn has(need: Need) -> bool {
    let Some(why) = need.missing() else { return true };
    let test = std::thread::current().name().unwrap_or("?").to_string();
    if std::env::var_os("ARBITER_REQUIRE_ALL").is_some_and(|v| v == "1") {
        panic!("{test} needs {need:?}: {why} (ARBITER_REQUIRE_ALL=1)");
    }
    use std::io::Write;
    let _ = writeln!(std::io::stderr(), "skipped: {test} ({why})");
    false
}
