"""Measures the step time of a Mistral-7B-shaped decoder on this machine's GPU: the numbers a
simulator timing profile (sim/profiles/*.json) is made of.

    python3 bench/calibrate/step_time.py --compile --out DIR  # on a CUDA machine (about a minute)
    python3 bench/calibrate/step_time.py --smoke --out DIR    # tiny model on the CPU, to check the script

Each step runs as a CUDA graph, the way vLLM runs its decode steps, so what is timed is the GPU's
work, not Python's; --compile fuses the elementwise steps between the matrix products with
torch.compile, as vLLM's custom kernels do. It writes step-time[-compiled].json (every sample, the
fits and a proposed profile) and .md; bench/README.md "Calibrating a profile on a GPU" says how
they become a profile.
"""

import argparse
import datetime
import json
import os
import platform
import statistics
import sys
import time

import torch

from decoder import KERNELS, MISTRAL_7B, TINY, Decoder
from step_time_report import analyse, write


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
    return [start.elapsed_time(end) for start, end in events]


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
    return 2 * src.numel() * src.element_size() / (ms / 1e3)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", required=True, help="folder for step-time.json and step-time.md")
    parser.add_argument("--smoke", action="store_true", help="tiny model on the CPU, to check the script")
    parser.add_argument("--batches", default="1,2,4,8,16,32,64,128,256")
    parser.add_argument("--contexts", default="512,1024,2048", help="KV-cache tokens per sequence")
    parser.add_argument("--prompts", default="16,64,256,512,1024,2048,4096", help="prefill lengths")
    parser.add_argument("--mixed-batches", default="1,16,64", help="decode batches of the mixed steps")
    parser.add_argument("--mixed-prompts", default="128,512,2048", help="prompt lengths of the mixed steps")
    parser.add_argument("--profile-context", type=int, default=1024, help="context the proposed profile is fitted at")
    parser.add_argument("--repeats", type=int, default=30)
    parser.add_argument("--compile", action="store_true", help="fuse the elementwise steps with torch.compile")
    args = parser.parse_args()

    device = torch.device("cpu" if args.smoke else "cuda")
    dtype = torch.float32 if args.smoke else torch.bfloat16
    shape = TINY if args.smoke else MISTRAL_7B
    batches = [int(b) for b in args.batches.split(",")]
    contexts = [int(c) for c in args.contexts.split(",")]
    prompts = [int(p) for p in args.prompts.split(",")]
    if args.smoke:
        batches, contexts, prompts, args.repeats = batches[:3], [16, 32], [8, 16, 32], 3
    if args.compile:
        torch._dynamo.config.cache_size_limit = 64
        for name, fn in KERNELS.items():
            KERNELS[name] = torch.compile(fn, dynamic=True)
    torch.manual_seed(0)
    began = time.time()
    model = Decoder(shape, device, dtype, max(batches), max(contexts), max(prompts))
    use_graph = device.type == "cuda"

    decode = []
    for context in contexts:
        for batch in batches:
            tokens = torch.randint(0, shape["vocab"], (batch,), device=device)
            samples = time_step(lambda: model.decode(tokens, context), device, 3, args.repeats, use_graph)
            decode.append(dict(batch=batch, context=context, **summary(samples)))
            print(f"decode batch {batch:4d} context {context:5d}: {decode[-1]['median_ms']:.3f} ms", flush=True)
    eager = None
    if use_graph:
        tokens = torch.randint(0, shape["vocab"], (1,), device=device)
        eager = summary(time_step(lambda: model.decode(tokens, contexts[0]), device, 3, args.repeats, False))
        print(f"decode batch 1 without a CUDA graph: {eager['median_ms']:.3f} ms", flush=True)
    prefill = []
    for length in prompts:
        tokens = torch.randint(0, shape["vocab"], (length,), device=device)
        samples = time_step(lambda: model.prefill(tokens), device, 3, max(5, args.repeats // 3), use_graph)
        prefill.append(dict(tokens=length, **summary(samples)))
        print(f"prefill {length:5d} tokens: {prefill[-1]['median_ms']:.3f} ms", flush=True)
    # Decode and a prompt in one step, to check the simulator's additive step model against.
    mixed = []
    mixed_context = args.profile_context if args.profile_context in contexts else contexts[-1]
    mixed_batches = batches[:2] if args.smoke else [int(b) for b in args.mixed_batches.split(",")]
    mixed_prompts = prompts[-2:] if args.smoke else [int(p) for p in args.mixed_prompts.split(",")]
    for batch in mixed_batches:
        for length in mixed_prompts:
            decode_tokens = torch.randint(0, shape["vocab"], (batch,), device=device)
            prompt = torch.randint(0, shape["vocab"], (min(length, max(prompts)),), device=device)
            samples = time_step(
                lambda: model.mixed(decode_tokens, mixed_context, prompt), device, 3, max(5, args.repeats // 3), use_graph
            )
            mixed.append(dict(batch=batch, context=mixed_context, tokens=prompt.shape[0], **summary(samples)))
            print(f"mixed batch {batch:4d} + prompt {prompt.shape[0]:5d}: {mixed[-1]['median_ms']:.3f} ms", flush=True)

    gpu = torch.cuda.get_device_name(device) if device.type == "cuda" else platform.processor() or "cpu"
    bandwidth = copy_bandwidth(device, dtype)
    weight_bytes = model.parameter_bytes()
    result = dict(
        measured_at=datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        command="python3 bench/calibrate/step_time.py " + " ".join(sys.argv[1:]),
        device=gpu,
        torch=torch.__version__,
        cuda=torch.version.cuda,
        dtype=str(dtype).replace("torch.", ""),
        shape=shape,
        weight_bytes=weight_bytes,
        copy_bandwidth_bytes_per_s=bandwidth,
        weight_read_floor_ms=weight_bytes / bandwidth * 1e3 if bandwidth else None,
        cuda_graphs=use_graph,
        elementwise="torch.compile (fused Triton kernels)" if args.compile else "eager PyTorch ops",
        decode=decode,
        decode_batch1_eager=eager,
        prefill=prefill,
        mixed=mixed,
        seconds=round(time.time() - began, 1),
    )
    analyse(result, args.profile_context)
    os.makedirs(args.out, exist_ok=True)
    write(result, os.path.join(args.out, "step-time-compiled" if args.compile else "step-time"))
    print(json.dumps(result["proposed_profile"]), f"in {result['seconds']} s", flush=True)
if __name__ == "__main__":
    main()
