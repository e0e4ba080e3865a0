//! The bundled Doomtrooper sample, replayed as long as a benchmark needs:
//! it ends between combats, so it can follow itself once its seq
//! references are shifted to the round being replayed.
#![allow(dead_code)]

use arbiter::event::Header;
use arbiter::record::Submission;

const SAMPLE: &str = include_str!("../../examples/doomtrooper-sample.actions.jsonl");

/// The sample's counters and counted cards name seqs: shift them to the round being replayed.
fn shifted(sub: &Submission, by: u64) -> Submission {
    let mut sub = sub.clone();
    if let Some(t) = sub.action.get_mut("target") {
        *t = (t.as_u64().unwrap() + by).into();
    }
    if let Some(serde_json::Value::Array(list)) = sub.action.get_mut("counted") {
        for q in list {
            *q = (q.as_u64().unwrap() + by).into();
        }
    }
    sub
}

pub struct Sample {
    pub opened_by: String,
    pub header: Header,
    pub actions: Vec<Submission>,
}

impl Sample {
    pub fn load() -> Sample {
        let mut lines = SAMPLE.lines().filter(|l| !l.trim().is_empty());
        let first = Submission::parse(lines.next().unwrap()).unwrap();
        let header = serde_json::from_value(first.action).unwrap();
        Sample { opened_by: first.actor, header, actions: lines.map(|l| Submission::parse(l).unwrap()).collect() }
    }
    /// The i-th action of a table (seq i + 1).
    pub fn action(&self, i: usize) -> Submission {
        let n = self.actions.len();
        shifted(&self.actions[i % n], (i / n * n) as u64)
    }
}
