#!/usr/bin/env python3
"""Writes examples/doomtrooper-sample.jsonl, the sample combat `arbiter demo` records.

Kept as a script so the seqs that counters name are computed, not typed.
Run: python3 tools/make-sample.py > examples/doomtrooper-sample.jsonl
"""
import json

lines = []


def act(actor, **action):
    lines.append({"actor": actor, "action": action})
    return len(lines) - 1  # the seq this action will get (the header is seq 0)


def passes(*seats):
    for s in seats:
        act(s, type="pass")


act("organiser", type="open", ruleset="doomtrooper", ruleset_version=1,
    seats=[{"id": "p1", "name": "Alice"}, {"id": "p2", "name": "Bob"}, {"id": "p3", "name": "Carol"}],
    judges=["Dana"], tournament="Luna City Open", round=3, table=12)

# Combat 1: p1 attacks p2.
act("p1", type="announce", what="combat", defending_player="p2", attacker="Max Steiner", defender="Legionnaire")
tactic = act("p1", type="announce", what="battle_tactic", tactic="Fight")           # step 2
act("p2", type="counter", card="Cancel", target=tactic)                               # step 3
passes("p1", "p3", "p2")                                                              # 4-6
act("p2", type="announce", what="warzone", warzone="Venus Jungle")                   # step 7
passes("p1", "p2", "p3")                                                              # 8-11
act("p2", type="play", effect="change_combatants", card="Body Guard", defender="Legionnaire Sergeant")  # 12
passes("p1", "p3", "p2")                                                              # 13-15: changed
act("p1", type="announce", what="battle_tactic", tactic="Fight")                     # repeat: step 2
passes("p2", "p1", "p3")
act("p2", type="announce", what="warzone", warzone=None)
passes("p1", "p2", "p3")
passes("p2", "p1", "p3")                                                              # 12-15: no change
act("p1", type="play", effect="strike_order", card="Ambush", first="p1")             # 16
passes("p1")
passes("p2", "p3")                                                                    # 17
passes("p2")                                                                          # 18
passes("p1", "p3")                                                                    # 19: non-simultaneous, p1 first
passes("p1"); passes("p2", "p3"); passes("p2"); passes("p1", "p3")                   # 20-23
act("p1", type="announce", what="equipment", items=["Bolter"])                      # 24
passes("p2", "p3", "p1")                                                              # 25
passes("p1"); passes("p2", "p3"); passes("p2"); passes("p1", "p3")                   # 28-31
act("p1", type="resolve", what="standing", ratings=[{"warrior": "Max Steiner", "rating": 7}, {"warrior": "Legionnaire Sergeant", "rating": 4}])
drugs = act("p1", type="play", effect="modify", card="Combat Drugs")                 # 33
shield = act("p2", type="play", effect="modify", card="Shield of Faith")             # 34
act("p3", type="counter", card="Cancel", target=shield)                              # 35
passes("p1", "p2", "p3")                                                              # 36
act("p1", type="resolve", what="results", counted=[drugs],
    results=[{"warrior": "Max Steiner", "outcome": "unharmed"}, {"warrior": "Legionnaire Sergeant", "outcome": "killed"}])
passes("p1"); passes("p2", "p3", "p1"); passes("p3"); passes("p1", "p2", "p3")       # 38-43
act("p1", type="resolve", what="status",
    status=[{"warrior": "Max Steiner", "outcome": "unharmed"}, {"warrior": "Legionnaire Sergeant", "outcome": "killed"}])
act("p1", type="resolve", what="award", points=2)                                    # 45
passes("p2", "p3", "p1")                                                              # 46: second warrior is dead

# Combat 2: p2 attacks p3; p2 ends it with Smoke Bomb at step 20.
act("p2", type="announce", what="combat", defending_player="p3", attacker="Legionnaire Captain", defender="Valerie Duval")
act("p2", type="announce", what="battle_tactic", tactic="Shoot")
passes("p3", "p2", "p1")
act("p3", type="announce", what="warzone", warzone=None)
passes("p2", "p3", "p1")
passes("p3", "p2", "p1")
passes("p2"); passes("p3", "p1"); passes("p3"); passes("p2", "p1")                   # 16-19
act("p2", type="play", effect="end_combat", card="Smoke Bomb")                       # 20
passes("p2")
passes("p3", "p1"); passes("p3"); passes("p2", "p1")                                 # 21-23: it stands -> 37
act("p2", type="resolve", what="results", counted=[],
    results=[{"warrior": "Legionnaire Captain", "outcome": "unharmed"}, {"warrior": "Valerie Duval", "outcome": "unharmed"}])
passes("p2"); passes("p3", "p1", "p2"); passes("p3"); passes("p2", "p1", "p3"); passes("p1"); passes("p2", "p3", "p1")
act("p2", type="resolve", what="status",
    status=[{"warrior": "Legionnaire Captain", "outcome": "unharmed"}, {"warrior": "Valerie Duval", "outcome": "unharmed"}])
act("p2", type="resolve", what="award", points=0)
passes("p3", "p1", "p2")
act("p3", type="resolve", what="award", points=0)
passes("p2", "p1", "p3")

for line in lines:
    print(json.dumps(line))
