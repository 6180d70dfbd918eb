#!/usr/bin/env python3
"""Issue #17's review figures on the foreign clips (../shared/foreign): each record's calls
with evidence checked against that set's truth, as `fishtrack eval` checks them on its own
sets (src/eval.rs, review_calls), and whether each was flagged (confidence below the
record's review_below, default 0.8).

  python3 eval/foreign_review.py BIN RECORDS_DIR [FOREIGN_DIR]

RECORDS_DIR holds fNN.record.json (as `make eval-foreign` / judge.py run writes them).
The truth's put-backs and violations come from the rules: the record's shot with the
truth's observations put in (lost items and exits, rest poses, coins in own holes,
stacking, the flicked fish as first moved) is scored by `BIN score --json`. The foreign
truth knows only coins in their own holes (as its judge.py), so a coin-in call about
another fish's hole counts as wrong. Prints a line per clip and the total; with -v every
wrong call unflagged.
"""
import json
import math
import os
import subprocess
import sys
import tempfile

EXIT_TOLERANCE_MM = 25.0


def load(p):
    with open(p) as f:
        return json.load(f)


def main():
    args = [a for a in sys.argv[1:] if a != "-v"]
    verbose = "-v" in sys.argv
    binary, records = args[0], args[1]
    foreign = args[2] if len(args) > 2 else os.path.join(os.path.dirname(__file__), "..", "..", "shared", "foreign")
    total = dict(calls=0, wrong=0, wrong_flagged=0, correct_flagged=0)
    for clip in sorted(os.listdir(foreign)):
        rp = os.path.join(records, f"{clip}.record.json")
        if not clip.startswith("f") or not os.path.exists(rp):
            continue
        c, missed = review(binary, load(rp), os.path.join(foreign, clip))
        for k in total:
            total[k] += c[k]
        print(line(clip, c))
        if verbose:
            for m in missed:
                print("    missed:", m)
    print(line("TOTAL", total))


def line(name, c):
    right = c["calls"] - c["wrong"]
    share = 100.0 * c["correct_flagged"] / right if right else 0.0
    return (f"{name:6} calls {c['calls']:3}  wrong flagged {c['wrong_flagged']}/{c['wrong']}"
            f"  right flagged {c['correct_flagged']}/{right} ({share:.0f} %)")


def review(binary, rec, clip):
    t = load(os.path.join(clip, "truth.json"))
    rot = load(os.path.join(clip, "rotation.json"))
    m, n = rot["m"], rot["n"]

    def rid(s):  # truth id -> record id
        kind, k = s.split(":")
        return f"{kind}:{(int(k) - m) % n}"

    below = (rec.get("game") or {}).get("review_below", 0.8)
    count = dict(calls=0, wrong=0, wrong_flagged=0, correct_flagged=0)
    missed = []
    if not rec.get("shots"):
        return count, missed
    flick = t["flick"]["frame"]
    # The record's shot nearest the flick is the one judged; any other is a shot the
    # truth does not have.
    k = min(range(len(rec["shots"])), key=lambda i: abs(rec["shots"][i]["flick_frame"] - flick))
    frames = t["frames"]
    res = t["result"]
    lost = {rid(i): res["exits"].get(i) for i in res["lost"]}
    holes = {rid(c): rid("fish:" + c.split(":")[1]) for c, v in res["coin_in_own_hole"].items() if v.get("inside")}
    stacks = {(rid(s["upper"]), rid(s["lower"])) for s in res.get("stacking", [])}
    mover = rid(t["flick"]["mover"])

    def poses(f):
        out = {}
        for i, v in frames[min(f, len(frames) - 1)]["items"].items():
            if v["on_table"]:
                p = {"x": v["x_mm"], "y": v["y_mm"]}
                if i.startswith("fish"):
                    p["theta"] = v["theta_rad"]
                out[rid(i)] = p
        return out

    # The truth as a record, scored by the rules: its put-backs and violations.
    tr = json.loads(json.dumps(rec))
    ts = tr["shots"][k]
    ts.update(first_moved=mover, start=poses(max(flick - 1, 0)), end=poses(len(frames) - 1),
              tracks={}, coins_in_holes=holes, stacking=[{"top": a, "under": b} for a, b in stacks],
              notes=[], doubt=[], decisions=[], amendments=[], unknown=[],
              lost=[{"item": i, "frame": (e or {}).get("frame", flick),
                     "exit": {"x": (e or {}).get("x_mm", 0.0), "y": (e or {}).get("y_mm", 0.0)}}
                    for i, e in lost.items()])
    tr["shots"] = [ts]
    ts["index"] = 0
    with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as f:
        json.dump(tr, f)
    try:
        out = subprocess.run([binary, "score", f.name, "--json"], capture_output=True, text=True, check=True)
    finally:
        os.unlink(f.name)
    scored = json.loads(out.stdout)["shots"][0]
    t_put = {(p["item"], p.get("verdict")) for p in scored.get("put_back", [])}
    t_codes = {v["code"] for v in scored.get("violations", [])}

    for i, s in enumerate(rec["shots"]):
        calls = [(d["call"], d["item"], d.get("other"), None, d) for d in s.get("decisions", [])]
        calls += [("put-back", p["item"], None, None, p["decision"]) for p in s.get("put_back", []) if p.get("decision")]
        calls += [("violation", None, None, v["code"], v["decision"]) for v in s.get("violations", []) if v.get("decision")]
        r_lost = {l["item"]: l for l in s.get("lost", [])}
        r_put = {p["item"]: p.get("verdict") for p in s.get("put_back", [])}
        flagged_items = set()
        for call, item, other, code, d in calls:
            flagged = d["confidence"] < below and not s.get("amendments")
            if i != k:
                wrong = True
            elif call in ("lost", "lost-unseen"):
                wrong = item not in lost
            elif call == "exit":
                e, l = lost.get(item), r_lost.get(item)
                wrong = not (e and l and math.hypot(l["exit"]["x"] - e["x_mm"], l["exit"]["y"] - e["y_mm"]) <= EXIT_TOLERANCE_MM)
            elif call == "on-table":
                wrong = item in lost
            elif call == "coin-in":
                wrong = holes.get(item) != other
            elif call == "coin-out":
                wrong = other is not None and holes.get(item) == other
            elif call == "stacking":
                wrong = (item, other) not in stacks
            elif call == "first-moved":
                wrong = item != mover
            elif call == "put-back":
                wrong = (item, r_put.get(item)) not in t_put
            else:
                wrong = code not in t_codes
            count["calls"] += 1
            if flagged:
                flagged_items.update(x for x in (item, other) if x)
            if wrong:
                count["wrong"] += 1
                count["wrong_flagged"] += flagged
                if not flagged:
                    missed.append(f"shot {i}: {call} {code or ''}{item or ''} {other or ''} conf {d['confidence']:.2f}: {d.get('why', '')}")
            else:
                count["correct_flagged"] += flagged
        if i == k:
            for item in lost:
                if item not in r_lost:
                    count["calls"] += 1
                    count["wrong"] += 1
                    count["wrong_flagged"] += item in flagged_items
                    if item not in flagged_items:
                        missed.append(f"shot {i}: {item} lost, not called lost")
            for coin, fish in holes.items():
                if s.get("coins_in_holes", {}).get(coin) == fish or coin not in s.get("end", {}):
                    continue
                if any(c[0] == "coin-out" and c[1] == coin for c in calls):
                    continue
                count["calls"] += 1
                count["wrong"] += 1
                missed.append(f"shot {i}: {coin} in {fish}'s hole, not called")
    return count, missed


if __name__ == "__main__":
    main()
