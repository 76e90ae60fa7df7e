"""Turns measured step times (step_time.py's JSON) into fits, a proposed simulator profile and a
Markdown table. Needs no GPU and no torch, so a result can be refitted anywhere:

    python3 bench/calibrate/step_time_report.py RESULT.json

rewrites RESULT.json's `fits` and `proposed_profile` and writes RESULT.md beside it.
"""

import argparse
import json
import statistics


def linear_fit(xs, ys):
    """Least squares y = a + b·x, with the largest residual relative to y."""
    mx, my = statistics.fmean(xs), statistics.fmean(ys)
    b = sum((x - mx) * (y - my) for x, y in zip(xs, ys)) / sum((x - mx) ** 2 for x in xs)
    a = my - b * mx
    worst = max(abs(a + b * x - y) / y for x, y in zip(xs, ys))
    return dict(intercept=a, slope=b, max_rel_error=worst)


def least_squares(rows, ys):
    """Coefficients c minimising Σ (c·row − y)², by the normal equations (a handful of unknowns)."""
    n = len(rows[0])
    m = [[sum(r[i] * r[j] for r in rows) for j in range(n)] + [sum(r[i] * y for r, y in zip(rows, ys))] for i in range(n)]
    for i in range(n):
        pivot = max(range(i, n), key=lambda k: abs(m[k][i]))
        m[i], m[pivot] = m[pivot], m[i]
        for k in range(n):
            if k != i:
                factor = m[k][i] / m[i][i]
                m[k] = [a - factor * b for a, b in zip(m[k], m[i])]
    return [m[i][n] / m[i][i] for i in range(n)]


def analyse(result):
    """Adds `fits` and `proposed_profile` (sim/profiles' decode and prefill fields) to a result."""
    decode, prefill = result["decode"], result["prefill"]
    fits = {}
    for context in sorted({r["context"] for r in decode}):
        rows = [r for r in decode if r["context"] == context]
        if len({r["batch"] for r in rows}) < 2:
            continue  # a line needs two batches; a long context may fit only one beside the weights
        fits[f"decode_context_{context}"] = linear_fit([r["batch"] for r in rows], [r["median_ms"] for r in rows])
    # The simulator's step: base + perSeqMs × batch + perContextTokenMs × the context the batch holds
    # (the KV cache it reads), one plane through every measured batch and context. One context
    # cannot tell the two apart: its KV read then stays in perSeqMs.
    if len({r["context"] for r in decode}) > 1:
        base, per_seq, per_context = least_squares(
            [(1, r["batch"], r["batch"] * r["context"]) for r in decode], [r["median_ms"] for r in decode]
        )
    else:
        (base, per_seq), per_context = least_squares([(1, r["batch"]) for r in decode], [r["median_ms"] for r in decode]), 0.0
    worst = max(
        abs((base + per_seq * r["batch"] + per_context * r["batch"] * r["context"]) / r["median_ms"] - 1) for r in decode
    )
    fits["decode_model"] = dict(base_ms=base, per_seq_ms=per_seq, per_context_token_ms=per_context, max_rel_error=worst)
    # The simulator adds prefill on top of the step's decode cost; a real mixed step reads the
    # weights once, so a prompt's share is what it costs beyond a one-sequence decode step.
    one_seq = min(decode, key=lambda r: (r["context"], r["batch"]))["median_ms"]
    longer = sorted(prefill, key=lambda r: r["tokens"])[len(prefill) // 2 :]
    fits["prefill_marginal"] = linear_fit([r["tokens"] for r in longer], [max(r["median_ms"] - one_seq, 1e-6) for r in longer])
    # A sequence prefilled alone holds no context yet: the step is base + perSeqMs + its prefill.
    per_token, free_tokens, worst = knee_fit(prefill, base + per_seq, fits["prefill_marginal"]["slope"])
    fits["prefill_knee"] = dict(per_token_ms=per_token, free_tokens=free_tokens, max_rel_error=worst)
    result["fits"] = fits
    result["proposed_profile"] = dict(
        decode=dict(
            baseMs=round(max(base, 0), 2),
            perSeqMs=round(max(per_seq, 0), 4),
            perContextTokenMs=float(f"{max(per_context, 0):.3g}"),
        ),
        prefill=dict(baseMs=0, perTokenMs=per_token, freeTokens=free_tokens),
    )
    resume = result.get("resume", [])
    if resume:
        fits["prefill_context"] = prefix_attention_fit(resume)
        per_pair = max(fits["prefill_context"]["per_token_context_ms"], 0)
        result["proposed_profile"]["prefill"]["perTokenContextMs"] = float(f"{per_pair:.3g}")
        fits["prefill_context"]["overhead_ms"] = split_attention_overhead(resume, prefill, per_pair)
    for row in result.get("mixed", []) + resume:
        # As the simulator charges it: the admitted sequence decodes in the same step, the others
        # read their context, and new tokens attend over the cached prefix.
        row["predicted_ms"] = predicted_step_ms(
            result["proposed_profile"],
            row["batch"] + 1,
            row["batch"] * row["context"],
            row["tokens"],
            row["tokens"] * row.get("prefix", 0),
        )
    return result


def prefix_attention_fit(resume):
    """What a resumed conversation's new tokens pay per token of cached prefix they attend over:
    the step at each longer prefix less the same step (batch, new tokens) at the shortest, through
    the origin against tokens × extra prefix. Differences, because the absolute steps also hold
    this decoder's split attention, which a varlen kernel does not pay (split_attention_overhead)."""
    shortest = min(r["prefix"] for r in resume)
    base = {(r["batch"], r["tokens"]): r["median_ms"] for r in resume if r["prefix"] == shortest}
    pairs = [
        (r["tokens"] * (r["prefix"] - shortest), r["median_ms"] - base[(r["batch"], r["tokens"])])
        for r in resume
        if r["prefix"] > shortest and (r["batch"], r["tokens"]) in base
    ]
    if not pairs:
        return dict(per_token_context_ms=0.0, max_abs_error_ms=None, points=0)
    slope = sum(x * y for x, y in pairs) / sum(x * x for x, _ in pairs)
    return dict(per_token_context_ms=slope, max_abs_error_ms=max(abs(slope * x - y) for x, y in pairs), points=len(pairs))


def split_attention_overhead(resume, prefill, per_pair):
    """A resumed step alone (batch 0) less a fresh prefill of as many tokens and less its prefix
    attention: the extra kernels this decoder launches to attend over a cached prefix."""
    fresh = {r["tokens"]: r["median_ms"] for r in prefill}
    extra = [
        r["median_ms"] - fresh[r["tokens"]] - per_pair * r["tokens"] * r["prefix"]
        for r in resume
        if r["batch"] == 0 and r["tokens"] in fresh
    ]
    return statistics.median(extra) if extra else None


def knee_fit(prefill, one_seq_ms, slope_guess):
    """perTokenMs and freeTokens for `one_seq_ms + perTokenMs × max(0, tokens − freeTokens)`, the
    prefill step as the simulator charges it, with the smallest largest relative error over every
    measured prompt length. Short prompts ride on the weight read a decode step pays anyway (the
    roofline knee); GEMMs grow efficient gradually, so a least-squares line through the long
    prompts alone overcharges nothing but undercharges prompts of a few hundred tokens."""
    longest = max(r["tokens"] for r in prefill)
    slope_guess = max(slope_guess, 1e-6)
    best = None
    for free in range(0, longest // 4 + 1, max(1, longest // 1024)):
        for step in range(50, 151):
            per_token = round(slope_guess * step / 100, 5)
            worst = max(
                abs((one_seq_ms + per_token * max(0, r["tokens"] - free)) / r["median_ms"] - 1) for r in prefill
            )
            if best is None or worst < best[2]:
                best = (per_token, free, worst)
    return best


def predicted_step_ms(profile, batch, context_tokens, prompt_tokens, prefill_context_pairs=0):
    """sim/engine-loop.ts stepDurationMs, for checking a profile against measured mixed steps."""
    d, p = profile["decode"], profile["prefill"]
    decode = d["baseMs"] + d["perSeqMs"] * batch + d["perContextTokenMs"] * context_tokens
    prefill = p["baseMs"] + p["perTokenMs"] * max(0, prompt_tokens - p["freeTokens"])
    return decode + prefill + p.get("perTokenContextMs", 0) * prefill_context_pairs


def markdown(r):
    batches = sorted({d["batch"] for d in r["decode"]})
    contexts = sorted({d["context"] for d in r["decode"]})
    lines = [
        f"# Step time of a Mistral-7B-shaped decoder on {r['device']}",
        "",
        f"`{r['command']}` at {r['measured_at']}; torch {r['torch']}, CUDA {r['cuda']}, {r['dtype']}, "
        f"CUDA graphs: {r['cuda_graphs']}; elementwise steps: {r['elementwise']}; "
        f"{r['weight_bytes'] / 1e9:.2f} GB of weights.",
        "",
    ]
    if r["copy_bandwidth_bytes_per_s"]:
        lines += [
            f"Copy bandwidth {r['copy_bandwidth_bytes_per_s'] / 1e12:.2f} TB/s (read + write) ⇒ weight-read floor "
            f"{r['weight_read_floor_ms']:.2f} ms per step.",
            "",
        ]
    split_rows = [d for d in r["decode"] if d.get("kv_splits", 1) > 1]
    if split_rows:
        check = r.get("kv_split_check")
        lines += [
            f"Decode attention: flash decoding (`--kv-splits {r['kv_splits']}`), a sequence's context split into "
            f"chunks attended in one call and merged by their log-sum-exp; {len(split_rows)} of "
            f"{len(r['decode'])} decode points split (the split count beside each)."
            + (f" Merged against one call: max difference {check['max_difference']:.1e}." if check else ""),
            "",
        ]
    lines += [f"Decode step, median ms of {r['decode'][0]['n']} steps:", ""]
    lines += ["| batch | " + " | ".join(f"context {c}" for c in contexts) + " |"]
    lines += ["| ---: | " + " | ".join("---:" for _ in contexts) + " |"]
    for b in batches:
        cells = [
            next((f"{d['median_ms']:.3f}" + (f" ({d['kv_splits']})" if d.get("kv_splits", 1) > 1 else "") for d in r["decode"] if d["batch"] == b and d["context"] == c), "–")
            for c in contexts
        ]
        lines.append(f"| {b} | " + " | ".join(cells) + " |")
    if len(r["decode"]) < len(batches) * len(contexts):
        held = f"the {r['kv_cache_tokens']:,} tokens" if r.get("kv_cache_tokens") else "what"
        lines += ["", f"–: not measured; that batch's KV cache is larger than {held} the GPU held beside the weights."]
    if r["decode_batch1_eager"]:
        lines += [
            "",
            "Batch 1 without a CUDA graph (Python launching every kernel): "
            f"{r['decode_batch1_eager']['median_ms']:.3f} ms.",
        ]
    lines += ["", "Prefill of one prompt (batch 1):", "", "| tokens | median ms |", "| ---: | ---: |"]
    lines += [f"| {p['tokens']} | {p['median_ms']:.3f} |" for p in r["prefill"]]
    if r.get("mixed"):
        lines += [
            "",
            f"Mixed steps (decode batch + one prompt, context {r['mixed'][0]['context']}) against the proposed "
            "profile's prediction (the admitted sequence counted in the batch, as the simulator does):",
            "",
            "| batch | prompt tokens | measured ms | predicted ms | error |",
            "| ---: | ---: | ---: | ---: | ---: |",
        ]
        lines += [
            f"| {m['batch']} | {m['tokens']} | {m['median_ms']:.3f} | {m['predicted_ms']:.3f} | "
            f"{(m['predicted_ms'] / m['median_ms'] - 1) * 100:+.1f}% |"
            for m in r["mixed"]
        ]
    if r.get("resume"):
        fit = r["fits"]["prefill_context"]
        overhead = fit.get("overhead_ms")
        lines += [
            "",
            f"Resumed conversations (new tokens prefilled over a cached prefix, beside a decode batch at context "
            f"{r['resume'][0]['context']}) against the proposed profile, which charges "
            f"{fit['per_token_context_ms'] * 1e6:.3g} ns per new token × cached token:",
            "",
        ]
        if r.get("resume_attention"):
            lines += [f"Attention over the prefix: {r['resume_attention']}.", ""]
        if overhead is not None:
            lines += [
                f"Each measured step holds ~{overhead:.2f} ms (median, batch 0) that a fresh prefill of as many tokens "
                "does not: this decoder's attention over the prefix takes more kernels a layer than vLLM's one "
                "varlen kernel, so the fit uses only differences between prefixes.",
                "",
            ]
        lines += [
            "| batch | cached prefix | new tokens | measured ms | predicted ms | error |",
            "| ---: | ---: | ---: | ---: | ---: | ---: |",
        ]
        lines += [
            f"| {m['batch']} | {m['prefix']} | {m['tokens']} | {m['median_ms']:.3f} | {m['predicted_ms']:.3f} | "
            f"{(m['predicted_ms'] / m['median_ms'] - 1) * 100:+.1f}% |"
            for m in r["resume"]
        ]
    lines += ["", "Fits (least squares unless named; max error relative to the measured median):", ""]
    for name, fit in r["fits"].items():
        if name == "decode_model":
            lines.append(
                f"- decode step (every batch and context): {fit['base_ms']:.3f} + {fit['per_seq_ms']:.5f} × batch + "
                f"{fit['per_context_token_ms'] * 1e6:.2f} ns × batch × context, max error {fit['max_rel_error'] * 100:.1f}%"
            )
            continue
        if name == "prefill_context":
            if fit["points"]:
                lines.append(
                    f"- prefix attention (differences between prefixes, through the origin): "
                    f"{fit['per_token_context_ms'] * 1e6:.3f} ns × new tokens × extra cached tokens, "
                    f"max error {fit['max_abs_error_ms']:.3f} ms over {fit['points']} pairs"
                )
            continue
        if name == "prefill_knee":
            lines.append(
                f"- prefill step (minimax): batch-1 decode + {fit['per_token_ms']} × max(0, tokens − "
                f"{fit['free_tokens']}), max error {fit['max_rel_error'] * 100:.1f}%"
            )
            continue
        lines.append(
            f"- {name}: {fit['intercept']:.3f} + {fit['slope']:.5f} × x, max error {fit['max_rel_error'] * 100:.1f}%"
        )
    lines += ["", "Proposed profile: `" + json.dumps(r["proposed_profile"]) + "`", ""]
    return "\n".join(lines)


def write(result, stem):
    with open(stem + ".json", "w") as f:
        json.dump(result, f, indent=2)
        f.write("\n")
    with open(stem + ".md", "w") as f:
        f.write(markdown(result))


def main():
    parser = argparse.ArgumentParser(description="Refit a step_time.py result and rewrite its Markdown.")
    parser.add_argument("result", help="a step-time JSON file written by step_time.py")
    args = parser.parse_args()
    with open(args.result) as f:
        result = json.load(f)
    stem = args.result[: -len(".json")] if args.result.endswith(".json") else args.result
    write(analyse(result), stem)
    print(json.dumps(result["proposed_profile"]))


if __name__ == "__main__":
    main()
