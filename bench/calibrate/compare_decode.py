"""Two step_time.py runs' decode steps side by side, and a simulator profile's decode plane against
the faster of the two at each point. Needs no GPU and no torch:

    python3 bench/calibrate/compare_decode.py A.json B.json --profile sim/profiles/mistral-7b-h200.json

prints Markdown: per batch × context the two medians, B/A, and the profile's error against the
faster one (each is a kernel layout an engine could pick for that step, so the faster is the
nearer guide to what a tuned engine pays); then the largest errors inside and beyond the span the
profile was fitted on.
"""

import argparse
import json


def label(result):
    splits = result.get("kv_splits", "1")
    return "one attention call" if splits in ("1", 1, None) else f"--kv-splits {splits}"


def plane(profile, batch, context):
    d = profile["decode"]
    return d["baseMs"] + d["perSeqMs"] * batch + d["perContextTokenMs"] * batch * context


def compare(a, b, profile, fitted_context):
    """Rows for every decode point both runs measured, and the profile's worst errors."""
    b_points = {(d["batch"], d["context"]): d for d in b["decode"]}
    rows = []
    for d in a["decode"]:
        other = b_points.get((d["batch"], d["context"]))
        if other is None:
            continue
        a_ms, b_ms = d["median_ms"], other["median_ms"]
        best = min(a_ms, b_ms)
        row = dict(batch=d["batch"], context=d["context"], a_ms=a_ms, b_ms=b_ms, ratio=b_ms / a_ms, best_ms=best)
        row["b_splits"] = other.get("kv_splits", 1)
        if profile:
            row["profile_ms"] = plane(profile, d["batch"], d["context"])
            row["profile_error"] = row["profile_ms"] / best - 1
        rows.append(row)
    rows.sort(key=lambda r: (r["context"], r["batch"]))
    worst = {}
    if profile:
        for name, inside in (("fitted", True), ("beyond", False)):
            span = [r for r in rows if (r["context"] <= fitted_context) == inside]
            if span:
                w = max(span, key=lambda r: abs(r["profile_error"]))
                worst[name] = dict(batch=w["batch"], context=w["context"], error=w["profile_error"], points=len(span))
    return rows, worst


def markdown(a, b, rows, worst, profile, fitted_context):
    la, lb = label(a), label(b)
    lines = [
        f"# Decode steps: {la} (A) against {lb} (B) on {a['device']}",
        "",
        f"A: `{a['command']}` at {a['measured_at']}.",
        f"B: `{b['command']}` at {b['measured_at']}.",
        "",
    ]
    head = "| batch | context | A ms | B ms | B/A |"
    rule = "| ---: | ---: | ---: | ---: | ---: |"
    if profile:
        head += f" {profile['name']} ms | vs the faster |"
        rule += " ---: | ---: |"
    lines += [head, rule]
    for r in rows:
        splits = f" ({r['b_splits']})" if r["b_splits"] > 1 else ""
        line = f"| {r['batch']} | {r['context']} | {r['a_ms']:.3f} | {r['b_ms']:.3f}{splits} | {r['ratio']:.2f} |"
        if profile:
            line += f" {r['profile_ms']:.3f} | {r['profile_error'] * 100:+.1f}% |"
        lines.append(line)
    lines += ["", "B's split count is in brackets where it split a sequence's context."]
    if profile:
        lines.append("")
        for name, w in worst.items():
            where = f"contexts up to {fitted_context:,}" if name == "fitted" else f"contexts beyond {fitted_context:,}"
            lines.append(
                f"- {profile['name']}'s plane against the faster run, {where} ({w['points']} points): largest error "
                f"{w['error'] * 100:+.1f}% (batch {w['batch']}, context {w['context']:,})"
            )
    return "\n".join(lines) + "\n"


def main():
    parser = argparse.ArgumentParser(description="Two step_time.py runs' decode steps side by side.")
    parser.add_argument("a", help="a step-time JSON file (A)")
    parser.add_argument("b", help="another, timed the other way (B)")
    parser.add_argument("--profile", help="a sim/profiles/*.json whose decode plane is checked against the faster run")
    parser.add_argument("--fitted-context", type=int, default=2048, help="the longest context the profile was fitted on")
    args = parser.parse_args()
    runs = []
    for name in (args.a, args.b):
        with open(name) as f:
            runs.append(json.load(f))
    profile = None
    if args.profile:
        with open(args.profile) as f:
            profile = json.load(f)
    rows, worst = compare(runs[0], runs[1], profile, args.fitted_context)
    if not rows:
        raise SystemExit("the two runs share no decode point")
    print(markdown(runs[0], runs[1], rows, worst, profile, args.fitted_context), end="")


if __name__ == "__main__":
    main()
