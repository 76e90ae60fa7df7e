"""Measures the step time of a Mistral-7B-shaped decoder on this machine's GPU: the numbers a
simulator timing profile (sim/profiles/*.json) is made of.

    python3 bench/calibrate/step_time.py --compile --out DIR  # on a CUDA machine (about a minute)
    python3 bench/calibrate/step_time.py --smoke --out DIR    # tiny model on the CPU, to check the script

Each step runs as a CUDA graph, the way vLLM runs its decode steps, so what is timed is the GPU's
work, not Python's; --compile fuses the elementwise steps between the matrix products with
torch.compile, as vLLM's custom kernels do. Besides decode batches and prompts it times mixed
steps (a decode batch and a prompt) and resumed conversations (new tokens over a cached prefix, the
step after a tool result). --attention varlen runs each step's attention as one varlen call (varlen.py);
--kv-splits auto splits a decoding sequence's context across thread blocks (flash decoding). It writes step-time[-compiled].json (every sample, the
fits and a proposed profile) and .md; bench/README.md "Calibrating a profile on a GPU" says how
they become a profile.
"""

import argparse
import datetime
import gc
import json
import os
import platform
import statistics
import sys
import time

import torch

import decoder
import varlen
from decoder import KERNELS, MISTRAL_7B, TINY, Decoder
from step_time_report import analyse, write
from varlen import VarlenPlan, varlen_step


def time_step(fn, device, warmup, repeats, use_graph):
    """Milliseconds per call of fn(): per-replay CUDA events on a GPU, wall clock on the CPU."""
    if device.type != "cuda":
        for _ in range(warmup):
            fn()
        samples = []
        for _ in range(repeats):
            t0 = time.perf_counter()
            fn()
            samples.append((time.perf_counter() - t0) * 1e3)
        return samples
    run = fn
    if use_graph:
        side = torch.cuda.Stream()
        side.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(side):
            for _ in range(warmup):
                fn()
        torch.cuda.current_stream().wait_stream(side)
        graph = torch.cuda.CUDAGraph()
        with torch.cuda.graph(graph):
            fn()
        run = graph.replay
    for _ in range(warmup):
        run()
    events = [(torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)) for _ in range(repeats)]
    for start, end in events:
        start.record()
        run()
        end.record()
    torch.cuda.synchronize()
    samples = [start.elapsed_time(end) for start, end in events]
    if use_graph:
        # A captured graph holds its private memory pool until it is destroyed: give it back now,
        # not whenever the garbage collector runs, since the KV cache leaves little to spare.
        del run
        graph.reset()
        gc.collect()
        torch.cuda.empty_cache()
    return samples


def summary(samples):
    ordered = sorted(samples)
    return dict(
        median_ms=statistics.median(ordered),
        mean_ms=statistics.fmean(ordered),
        min_ms=ordered[0],
        max_ms=ordered[-1],
        n=len(ordered),
    )


def copy_bandwidth(device, dtype):
    """Device-to-device copy, bytes read + written per second: the ceiling a decode step streams at."""
    if device.type != "cuda":
        return None
    src = torch.empty(2 * 1024**3 // 2, device=device, dtype=dtype)
    dst = torch.empty_like(src)
    ms = statistics.median(time_step(lambda: dst.copy_(src), device, 3, 10, use_graph=False))
    moved = 2 * src.numel() * src.element_size()
    del src, dst
    torch.cuda.empty_cache()
    return moved / (ms / 1e3)


def parse_args():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", required=True, help="folder for step-time.json and step-time.md")
    parser.add_argument("--smoke", action="store_true", help="tiny model on the CPU, to check the script")
    parser.add_argument("--batches", default="1,2,4,8,16,32,64,128,256")
    parser.add_argument("--contexts", default="512,1024,2048", help="KV-cache tokens per sequence")
    parser.add_argument("--prompts", default="16,64,256,512,1024,2048,4096", help="prefill lengths")
    parser.add_argument("--mixed-batches", default="1,16,64", help="decode batches of the mixed steps")
    parser.add_argument("--mixed-prompts", default="128,512,2048", help="prompt lengths of the mixed steps")
    parser.add_argument("--mixed-context", type=int, default=1024, help="context of the mixed steps' decode batch")
    parser.add_argument("--resume-batches", default="0,1,16,64", help="decode batches beside a resumed conversation")
    parser.add_argument("--resume-chunks", default="16,32,64,128,256,512", help="new tokens of a resumed conversation")
    parser.add_argument("--resume-prefixes", default="1024,4096", help="its tokens found in the prefix cache")
    parser.add_argument("--repeats", type=int, default=30)
    parser.add_argument("--compile", action="store_true", help="fuse the elementwise steps with torch.compile")
    parser.add_argument(
        "--kv-splits",
        default="1",
        help="flash decoding: chunks each decoding sequence's context is split into, or auto (decoder.Decoder.splits_for)",
    )
    parser.add_argument(
        "--attention",
        choices=("split", "varlen"),
        default="split",
        help="split: decode and prompt attention as separate kernels; varlen: one call per layer, as vLLM (varlen.py)",
    )
    args = parser.parse_args()
    lists = ("batches", "contexts", "prompts", "mixed_batches", "mixed_prompts", "resume_batches", "resume_chunks", "resume_prefixes")
    for name in lists:
        setattr(args, name, [int(v) for v in getattr(args, name).split(",")])
    if args.smoke:
        args.batches, args.contexts, args.prompts, args.repeats = args.batches[:3], [16, 32], [8, 16, 32], 3
        args.mixed_batches, args.mixed_prompts = args.batches[:2], args.prompts[-2:]
        args.resume_batches, args.resume_chunks, args.resume_prefixes = [0, 1], [4, 8], [16]
    return args


class Bench:
    """Times the model's steps on one device; each method prints a line per measurement."""

    def __init__(self, model, vocab, device, repeats, attention):
        self.model, self.vocab, self.device, self.repeats = model, vocab, device, repeats
        self.use_graph = device.type == "cuda"
        self.varlen = attention == "varlen"

    def tokens(self, count):
        return torch.randint(0, self.vocab, (count,), device=self.device)

    def time(self, fn, repeats=None, use_graph=None):
        use_graph = self.use_graph if use_graph is None else use_graph
        return summary(time_step(fn, self.device, 3, repeats or self.repeats, use_graph))

    def step(self, batch, context, length=0, prefix=0):
        """The step to time: `batch` sequences decoding at `context`, beside one that prefills
        `length` tokens over `prefix` cached ones. Inputs are made here, outside the timed call."""
        decode_tokens, prompt = self.tokens(batch), self.tokens(length)
        model = self.model
        if self.varlen:
            plan = VarlenPlan(batch, context, length, prefix, self.device)
            return lambda: varlen_step(model, decode_tokens, prompt, plan)
        if length == 0:
            return lambda: model.decode(decode_tokens, context)
        if prefix > 0:
            mask = model.resume_mask(prefix, length, self.device)
            return lambda: model.resume(decode_tokens, context, prompt, prefix, mask)
        if batch == 0:
            return lambda: model.prefill(prompt)
        return lambda: model.mixed(decode_tokens, context, prompt)

    def decode(self, batches, contexts):
        rows = []
        for context in contexts:
            for batch in batches:
                if not self.model.fits(batch, context):
                    print(f"decode batch {batch:4d} context {context:5d}: skipped, its KV cache does not fit", flush=True)
                    continue
                splits = self.model.splits_for(batch, context)
                rows.append(dict(batch=batch, context=context, kv_splits=splits, **self.time(self.step(batch, context))))
                print(f"decode batch {batch:4d} context {context:5d}: {rows[-1]['median_ms']:.3f} ms", flush=True)
        return rows

    def decode_without_graph(self, context):
        """What Python launching every kernel costs: the reason engines replay CUDA graphs."""
        if not self.use_graph:
            return None
        row = self.time(self.step(1, context), use_graph=False)
        print(f"decode batch 1 without a CUDA graph: {row['median_ms']:.3f} ms", flush=True)
        return row

    def prefill(self, prompts):
        rows = []
        for length in prompts:
            rows.append(dict(tokens=length, **self.time(self.step(0, 0, length), max(5, self.repeats // 3))))
            print(f"prefill {length:5d} tokens: {rows[-1]['median_ms']:.3f} ms", flush=True)
        return rows

    def mixed(self, batches, prompts, context):
        """Decode and a prompt in one step, to check the simulator's additive step model against."""
        rows = []
        for batch in batches:
            for length in prompts:
                row = self.time(self.step(batch, context, length), max(5, self.repeats // 3))
                rows.append(dict(batch=batch, context=context, tokens=length, **row))
                print(f"mixed batch {batch:4d} + prompt {length:5d}: {row['median_ms']:.3f} ms", flush=True)
        return rows

    def check_split_decode(self, batch, context):
        """Flash decoding's merged chunks against one attention call over the whole context."""
        splits = self.model.splits_for(batch, context)
        if splits == 1:
            return None
        s, layer = self.model.s, self.model.layers[0]
        for name in ("k_cache", "v_cache"):
            layer[name].normal_()
        q, k, v = (torch.randn(batch, n, s["head_dim"], device=self.device, dtype=layer["qkv"].dtype) for n in (s["heads"], s["kv_heads"], s["kv_heads"]))
        timed = self.model._decode_attention(layer, q, k, v, context)
        setting, self.model.kv_splits = self.model.kv_splits, 1
        try:
            plain = self.model._decode_attention(layer, q, k, v, context)
        finally:
            self.model.kv_splits = setting
        difference = (timed - plain).abs().max().item()
        print(f"decode attention in {splits} chunks vs one call (batch {batch}, context {context}): max difference {difference:.2e}", flush=True)
        return dict(batch=batch, context=context, kv_splits=splits, max_difference=difference)

    def check_attention(self, prefix, length):
        """The timed attention of a resumed conversation beside two decoding sequences against a
        plain one (masked, or one sequence at a time in float32)."""
        s, layer = self.model.s, self.model.layers[0]
        for name in ("k_cache", "v_cache"):
            layer[name].normal_()
        q = torch.randn(length, s["heads"], s["head_dim"], device=self.device, dtype=layer["qkv"].dtype)
        k, v = (torch.randn(length, s["kv_heads"], s["head_dim"], device=self.device, dtype=q.dtype) for _ in range(2))
        if self.varlen:
            plan = VarlenPlan(2, 8, length, prefix, self.device)
            q, k, v = (torch.cat((t[:2], t)) for t in (q, k, v))
            timed, plain = (varlen.attend(s, layer, q, k, v, plan, kernel) for kernel in (None, varlen.reference))
        else:
            mask = self.model.resume_mask(prefix, length, self.device)
            timed = self.model._extend_attention(layer, q, k, v, prefix, mask)
            flash, decoder.FLASH_WITH_LSE = decoder.FLASH_WITH_LSE, None
            try:
                plain = self.model._extend_attention(layer, q, k, v, prefix, mask)
            finally:
                decoder.FLASH_WITH_LSE = flash
        print(f"attention vs plain reference: max difference {(timed - plain).abs().max().item():.2e}", flush=True)

    def resume(self, batches, chunks, prefixes, context):
        """A conversation resumed after a tool result: the new tokens prefilled over the cached
        prefix, alone (batch 0) or beside a decode batch. The simulator charges only the new
        tokens; this says what the prefix's attention adds."""
        rows = []
        self.check_attention(min(prefixes), min(chunks))
        for prefix in prefixes:
            for batch in batches:
                for length in chunks:
                    row = self.time(self.step(batch, context, length, prefix), max(5, self.repeats // 3))
                    rows.append(dict(batch=batch, context=context, prefix=prefix, tokens=length, **row))
                    print(f"resume batch {batch:4d} + {length:4d} tokens over {prefix:5d}: {row['median_ms']:.3f} ms", flush=True)
        return rows


def main():
    args = parse_args()
    device = torch.device("cpu" if args.smoke else "cuda")
    dtype = torch.float32 if args.smoke else torch.bfloat16
    shape = TINY if args.smoke else MISTRAL_7B
    if args.compile:
        torch._dynamo.config.cache_size_limit = 64
        for name, fn in KERNELS.items():
            KERNELS[name] = torch.compile(fn, dynamic=True)
    torch.manual_seed(0)
    began = time.time()
    # Before the model: its KV cache takes what memory the weights leave.
    bandwidth = copy_bandwidth(device, dtype)
    longest_prompt = max(args.prompts + args.mixed_prompts + [max(args.resume_prefixes) + max(args.resume_chunks)])
    widest = max(args.batches + args.mixed_batches + args.resume_batches)
    model = Decoder(shape, device, dtype, widest, max(args.contexts), longest_prompt, args.kv_splits)
    bench = Bench(model, shape["vocab"], device, args.repeats, args.attention)
    mixed_context = args.mixed_context if args.mixed_context in args.contexts else args.contexts[-1]
    split_check = bench.check_split_decode(args.batches[0], max(args.contexts))
    decode = bench.decode(args.batches, args.contexts)
    without_graph = bench.decode_without_graph(args.contexts[0])
    prefill = bench.prefill(args.prompts)
    mixed = bench.mixed(args.mixed_batches, args.mixed_prompts, mixed_context)
    resume = bench.resume(args.resume_batches, args.resume_chunks, args.resume_prefixes, mixed_context)

    weight_bytes = model.parameter_bytes()
    result = dict(
        measured_at=datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        command="python3 bench/calibrate/step_time.py " + " ".join(sys.argv[1:]),
        device=torch.cuda.get_device_name(device) if device.type == "cuda" else platform.processor() or "cpu",
        torch=torch.__version__,
        cuda=torch.version.cuda,
        dtype=str(dtype).replace("torch.", ""),
        shape=shape,
        weight_bytes=weight_bytes,
        kv_cache_tokens=model.kv_tokens,
        copy_bandwidth_bytes_per_s=bandwidth,
        weight_read_floor_ms=weight_bytes / bandwidth * 1e3 if bandwidth else None,
        cuda_graphs=bench.use_graph,
        elementwise="torch.compile (fused Triton kernels)" if args.compile else "eager PyTorch ops",
        decode=decode,
        decode_batch1_eager=without_graph,
        prefill=prefill,
        mixed=mixed,
        resume=resume,
        attention=args.attention,
        kv_splits=args.kv_splits,
        kv_split_check=split_check,
        resume_attention=varlen.describe(device) if bench.varlen else decoder.describe_extend_attention(device),
        seconds=round(time.time() - began, 1),
    )
    os.makedirs(args.out, exist_ok=True)
    stem = os.path.join(
        args.out,
        "step-time"
        + ("-compiled" if args.compile else "")
        + ("-varlen" if bench.varlen else "")
        + ("" if args.kv_splits == "1" else f"-kvsplits-{args.kv_splits}"),
    )
    # The measurements first: GPU time is scarce, and step_time_report.py refits them anywhere.
    with open(stem + ".json", "w") as f:
        json.dump(result, f, indent=2)
    analyse(result)
    write(result, stem)
    print(json.dumps(result["proposed_profile"]), f"in {result['seconds']} s", flush=True)


if __name__ == "__main__":
    main()
