"""A Mistral-7B-shaped decoder in plain PyTorch, for timing steps (bench/calibrate/step_time.py):
fused QKV and gate/up projections, GQA attention over a preallocated KV cache, greedy sampling.
The weights are random: a step's time does not depend on their values."""

import torch
import torch.nn.functional as F

MISTRAL_7B = dict(layers=32, hidden=4096, heads=32, kv_heads=8, head_dim=128, ffn=14336, vocab=32000)
TORCH_VERSION = tuple(int(part) for part in torch.__version__.split("+")[0].split(".")[:2])
# Left free beside the KV cache for the steps' activations and the captured graphs.
KV_HEADROOM_BYTES = 4 * 1024**3
TINY = dict(layers=2, hidden=64, heads=4, kv_heads=2, head_dim=16, ffn=128, vocab=100)


class Decoder:
    """The forward pass of a Llama/Mistral block stack, weights as plain tensors."""

    def __init__(self, shape, device, dtype, max_batch, max_context, max_prompt, kv_splits=1):
        self.s = shape
        # Flash decoding: "auto", or how many chunks each decoding sequence's context is split into.
        self.kv_splits = kv_splits
        self.sm_count = torch.cuda.get_device_properties(device).multi_processor_count if device.type == "cuda" else 4
        h, hd = shape["hidden"], shape["head_dim"]
        qkv_out = (shape["heads"] + 2 * shape["kv_heads"]) * hd

        def weight(*size):
            return torch.empty(*size, device=device, dtype=dtype).normal_(0, 0.02)

        self.embed = weight(shape["vocab"], h)
        self.lm_head = weight(shape["vocab"], h)
        self.final_norm = torch.ones(h, device=device, dtype=dtype)
        self.layers = [
            dict(
                norm1=torch.ones(h, device=device, dtype=dtype),
                qkv=weight(qkv_out, h),
                o=weight(h, shape["heads"] * hd),
                norm2=torch.ones(h, device=device, dtype=dtype),
                gate_up=weight(2 * shape["ffn"], h),
                down=weight(h, shape["ffn"]),
            )
            for _ in range(shape["layers"])
        ]
        # The KV cache is one flat pool per layer, seen as [batch, kv_heads, context, head_dim] for
        # each step, as large as the measurements need or as the GPU holds after the weights (an
        # 80 GB H100 holds ~500k tokens of it, not 256 sequences of 2,048): a point that does not
        # fit is skipped, as vLLM would not run that batch either.
        self.kv_tokens = max(max_batch * max_context, max_prompt)
        token_bytes = 2 * shape["layers"] * shape["kv_heads"] * hd * torch.finfo(dtype).bits // 8
        if device.type == "cuda":
            free, _ = torch.cuda.mem_get_info(device)
            self.kv_tokens = min(self.kv_tokens, (free - KV_HEADROOM_BYTES) // token_bytes)
        # A prompt's KV is written into the same storage, seen as one long sequence.
        assert max_prompt <= self.kv_tokens, "the KV cache is too small for the longest prompt"
        for layer in self.layers:
            for name in ("k_cache", "v_cache"):
                layer[name] = torch.zeros(self.kv_tokens * shape["kv_heads"] * hd, device=device, dtype=dtype)
        inv_freq = 1.0 / (1e6 ** (torch.arange(0, hd, 2, device=device, dtype=torch.float32) / hd))
        angles = torch.outer(torch.arange(max(max_context, max_prompt), device=device, dtype=torch.float32), inv_freq)
        self.cos, self.sin = angles.cos().to(dtype), angles.sin().to(dtype)

    def parameter_bytes(self):
        tensors = [self.embed, self.lm_head] + [
            w for layer in self.layers for k, w in layer.items() if not k.endswith("_cache")
        ]
        return sum(t.numel() * t.element_size() for t in tensors)

    def fits(self, batch, context):
        return batch * context <= self.kv_tokens

    def decode(self, tokens, context):
        """One decode step for len(tokens) sequences that each hold `context` tokens of KV cache."""
        cos, sin = self._rotary(torch.full_like(tokens, context - 1))
        return self._forward(self.embed[tokens], cos, sin, lambda *qkv: self._decode_attention(*qkv, context))

    def prefill(self, tokens):
        """One prefill step for a single prompt; logits for its last token only, as vLLM does."""
        cos, sin = self._rotary(torch.arange(tokens.shape[0], device=tokens.device))
        return self._forward(self.embed[tokens], cos, sin, self._prefill_attention, logit_rows=slice(-1, None))

    def mixed(self, decode_tokens, context, prompt_tokens):
        """One step that decodes len(decode_tokens) sequences and prefills one prompt, as vLLM's
        chunked prefill mixes them: the projections run over all rows at once."""
        batch, length = decode_tokens.shape[0], prompt_tokens.shape[0]
        device = decode_tokens.device
        positions = torch.cat((torch.full_like(decode_tokens, context - 1), torch.arange(length, device=device)))
        cos, sin = self._rotary(positions)

        def attend(layer, q, k, v):
            head = self._decode_attention(layer, q[:batch], k[:batch], v[:batch], context)
            return torch.cat((head, self._prefill_attention(layer, q[batch:], k[batch:], v[batch:])))

        rows = torch.cat((torch.arange(batch, device=device), torch.full((1,), batch + length - 1, device=device)))
        return self._forward(self.embed[torch.cat((decode_tokens, prompt_tokens))], cos, sin, attend, logit_rows=rows)

    def resume(self, decode_tokens, context, chunk_tokens, prefix, mask):
        """One step that decodes len(decode_tokens) sequences (none at all is a step of its own)
        and prefills `chunk_tokens` on top of `prefix` cached tokens of the same sequence: a
        conversation resumed after a tool result, its earlier turns found in the prefix cache.
        `mask` is self.resume_mask(prefix, len(chunk_tokens)), made once outside the timed step."""
        batch, length = decode_tokens.shape[0], chunk_tokens.shape[0]
        device = chunk_tokens.device
        positions = torch.cat((torch.full_like(decode_tokens, context - 1), torch.arange(prefix, prefix + length, device=device)))
        cos, sin = self._rotary(positions)

        def attend(layer, q, k, v):
            chunk = self._extend_attention(layer, q[batch:], k[batch:], v[batch:], prefix, mask)
            if batch == 0:
                return chunk
            return torch.cat((self._decode_attention(layer, q[:batch], k[:batch], v[:batch], context), chunk))

        rows = torch.cat((torch.arange(batch, device=device), torch.full((1,), batch + length - 1, device=device)))
        return self._forward(self.embed[torch.cat((decode_tokens, chunk_tokens))], cos, sin, attend, logit_rows=rows)

    def resume_mask(self, prefix, length, device):
        """Which keys each new query sees: the whole cached prefix and the new tokens up to its own
        (causal aligned to the bottom right, as FlashAttention's varlen kernel does), one row per
        query head of a KV head's group, in _extend_attention's order."""
        keys = torch.arange(prefix + length, device=device)
        rows = keys.unsqueeze(0) <= prefix + torch.arange(length, device=device).unsqueeze(1)
        return rows.repeat_interleave(self.s["heads"] // self.s["kv_heads"], 0)

    def _extend_attention(self, layer, q, k, v, prefix, mask):
        s, length = self.s, q.shape[0]
        span = (prefix + length) * s["kv_heads"] * s["head_dim"]
        keys, values = (layer[name][-span:].view(prefix + length, s["kv_heads"], s["head_dim"]) for name in ("k_cache", "v_cache"))
        keys[prefix:] = k
        values[prefix:] = v
        if FLASH_WITH_LSE is not None and q.is_cuda:
            return self._extend_attention_flash(q, keys, values, prefix)
        # A masked attention kernel takes no GQA: a KV head's group of query heads becomes rows of
        # one head, as _decode_attention does, so K and V are read once and not copied.
        group = s["heads"] // s["kv_heads"]
        q = q.view(length, s["kv_heads"], group, s["head_dim"]).permute(1, 0, 2, 3).reshape(1, s["kv_heads"], length * group, -1)
        keys, values = (t.transpose(0, 1).unsqueeze(0) for t in (keys, values))
        out = attention(q, keys, values, causal=False, mask=mask)
        return out.view(s["kv_heads"], length, group, s["head_dim"]).permute(1, 0, 2, 3).reshape(length, -1)

    def _extend_attention_flash(self, q, keys, values, prefix):
        """The same attention as two FlashAttention calls merged by their log-sum-exp, as a varlen
        kernel computes it: a masked kernel streams a long prefix from a handful of thread blocks
        (measured 1.2 ms a step over 1,024 cached tokens on an H200, 40x its KV read). The prefix
        part is not causal, so a KV head's group of query heads is one head's rows there (K and V
        read once); the new tokens' part is causal, its few K and V rows copied per query head."""
        s, length = self.s, q.shape[0]
        group = s["heads"] // s["kv_heads"]
        q = q.transpose(0, 1).unsqueeze(0)  # [1, heads, length, head_dim]
        prefix_keys, prefix_values = (t[:prefix].transpose(0, 1).unsqueeze(0) for t in (keys, values))
        rows = q.reshape(1, s["kv_heads"], group * length, s["head_dim"])
        old, old_lse = FLASH_WITH_LSE(rows, prefix_keys, prefix_values, is_causal=False)[:2]
        new_keys, new_values = (t[prefix:].repeat_interleave(group, 1).transpose(0, 1).unsqueeze(0) for t in (keys, values))
        new, new_lse = FLASH_WITH_LSE(q, new_keys, new_values, is_causal=True)[:2]
        merged = KERNELS["merge_attention"](old.reshape(q.shape), old_lse.reshape(1, s["heads"], length), new, new_lse)
        return merged[0].transpose(0, 1).reshape(length, -1)

    def _rotary(self, positions):
        return self.cos[positions].unsqueeze(-2), self.sin[positions].unsqueeze(-2)

    def _decode_attention(self, layer, q, k, v, context):
        s, batch = self.s, q.shape[0]
        keys, values = (
            layer[name][: batch * s["kv_heads"] * context * s["head_dim"]].view(batch, s["kv_heads"], context, s["head_dim"])
            for name in ("k_cache", "v_cache")
        )
        keys[:, :, context - 1] = k
        values[:, :, context - 1] = v
        # GQA decode as attention of `group` queries per KV head: K and V are read once.
        q = q.reshape(batch, s["kv_heads"], s["heads"] // s["kv_heads"], s["head_dim"])
        splits = self.splits_for(batch, context)
        if splits > 1:
            return self._split_kv_attention(q, keys, values, splits).reshape(batch, -1)
        return attention(q, keys, values, causal=False).reshape(batch, -1)

    def splits_for(self, batch, context):
        """How many chunks each decoding sequence's context is split into. One attention call gives
        each (sequence, KV head) one thread block, 8 of them at batch 1 on a GPU of 132 SMs, each
        streaming the whole context; vLLM's Hopper kernels (FlashAttention-3, FlashInfer) split a long
        context across blocks and merge the parts. "auto" splits in halves until the GPU holds two
        blocks an SM or a chunk would fall under 256 tokens, as their occupancy heuristics do."""
        if self.kv_splits != "auto":
            splits = int(self.kv_splits)
            while context % splits:
                splits -= 1
            return splits
        splits, blocks = 1, batch * self.s["kv_heads"]
        while blocks * splits < 2 * self.sm_count and context % (2 * splits) == 0 and context // (2 * splits) >= 256:
            splits *= 2
        return splits

    def _split_kv_attention(self, q, keys, values, splits):
        """Decode attention as flash decoding runs it: the context in `splits` chunks, each chunk a
        head of its own for one attention call (a view of the cache, nothing copied but the queries),
        the partial results merged by their log-sum-exp."""
        batch, kv_heads, group, head_dim = q.shape
        chunk = keys.shape[2] // splits
        keys, values = (t.reshape(batch, kv_heads * splits, chunk, head_dim) for t in (keys, values))
        queries = q.unsqueeze(2).expand(batch, kv_heads, splits, group, head_dim).reshape(batch, kv_heads * splits, group, head_dim)
        out, lse = attention_with_lse(queries, keys, values)
        return KERNELS["merge_splits"](out.view(batch, kv_heads, splits, group, head_dim), lse.view(batch, kv_heads, splits, group))

    def _prefill_attention(self, layer, q, k, v):
        length = q.shape[0]
        # A prompt's KV goes into the cache storage as one long sequence (its timing, not its place).
        layer["k_cache"][-k.numel() :].view_as(k).copy_(k)
        layer["v_cache"][-v.numel() :].view_as(v).copy_(v)
        q, k, v = (t.transpose(0, 1).unsqueeze(0) for t in (q, k, v))
        return attention(q, k, v, causal=True)[0].transpose(0, 1).reshape(length, -1)

    def _forward(self, x, cos, sin, attend, logit_rows=None):
        s, rows = self.s, x.shape[0]
        q_width, kv_width = s["heads"] * s["head_dim"], s["kv_heads"] * s["head_dim"]
        h = KERNELS["rms_norm"](x, self.layers[0]["norm1"])
        for i, layer in enumerate(self.layers):
            qkv = F.linear(h, layer["qkv"])
            # Q and K side by side in the fused projection: one rotary pass for both.
            qk = KERNELS["rope"](qkv[:, : q_width + kv_width].view(rows, -1, s["head_dim"]), cos, sin)
            q, k = qk[:, : s["heads"]], qk[:, s["heads"] :]
            v = qkv[:, q_width + kv_width :].view(rows, s["kv_heads"], s["head_dim"])
            x, h = KERNELS["add_rms_norm"](x, F.linear(attend(layer, q, k, v), layer["o"]), layer["norm2"])
            mlp = F.linear(KERNELS["silu_mul"](F.linear(h, layer["gate_up"])), layer["down"])
            next_norm = self.layers[i + 1]["norm1"] if i + 1 < len(self.layers) else self.final_norm
            x, h = KERNELS["add_rms_norm"](x, mlp, next_norm)
        if logit_rows is not None:
            h = h[logit_rows]
        return F.linear(h, self.lm_head).argmax(-1)


def rms_norm(x, w):
    return (x.float() * torch.rsqrt(x.float().pow(2).mean(-1, keepdim=True) + 1e-5)).to(x.dtype) * w


def add_rms_norm(x, delta, w):
    """The residual add and the next block's norm, which vLLM runs as one fused kernel."""
    x = x + delta
    return x, rms_norm(x, w)


def rope(x, cos, sin):
    x1, x2 = x[..., ::2], x[..., 1::2]
    return torch.stack((x1 * cos - x2 * sin, x1 * sin + x2 * cos), -1).flatten(-2)


def silu_mul(gate_up):
    gate, up = gate_up.chunk(2, -1)
    return F.silu(gate) * up


def merge_attention(old, old_lse, new, new_lse):
    """Two attention results over disjoint keys as one, weighted by their log-sum-exp."""
    lse = torch.logaddexp(old_lse, new_lse)
    return old * (old_lse - lse).exp().unsqueeze(-1).to(old.dtype) + new * (new_lse - lse).exp().unsqueeze(-1).to(old.dtype)


def merge_splits(out, lse):
    """Flash decoding's partial results over a context's chunks (dim 2) as one, by their log-sum-exp."""
    weights = torch.softmax(lse.float(), dim=2).unsqueeze(-1)
    return (out.float() * weights).sum(2).to(out.dtype)


# The elementwise steps between the matrix products; --compile replaces them with fused Triton
# kernels (torch.compile), the way vLLM's custom kernels fuse them.
KERNELS = dict(
    rms_norm=rms_norm, add_rms_norm=add_rms_norm, rope=rope, silu_mul=silu_mul, merge_attention=merge_attention, merge_splits=merge_splits
)

# FlashAttention that also returns each row's log-sum-exp (PyTorch's own kernel, CUDA only here).
FLASH_WITH_LSE = getattr(torch.ops.aten, "_scaled_dot_product_flash_attention", None) if TORCH_VERSION >= (2, 1) else None


def describe_extend_attention(device):
    """How Decoder.resume attends over a cached prefix on this device, for the results file."""
    if FLASH_WITH_LSE is not None and device.type == "cuda":
        return "two FlashAttention calls (cached prefix, new tokens) merged by their log-sum-exp"
    return "one masked scaled_dot_product_attention"


def attention_with_lse(q, k, v):
    """Attention without a mask, and each query row's log-sum-exp: FlashAttention on a GPU, the
    arithmetic written out on the CPU (--smoke)."""
    if FLASH_WITH_LSE is not None and q.is_cuda:
        return FLASH_WITH_LSE(q, k, v, is_causal=False)[:2]
    scores = (q @ k.transpose(-1, -2)).float() / q.shape[-1] ** 0.5
    return (scores.softmax(-1).to(q.dtype)) @ v, torch.logsumexp(scores, -1)


def attention(q, k, v, causal, mask=None):
    """Scaled dot-product attention; K/V may have fewer heads than Q (GQA); `mask` (True = attend)
    instead of `causal` where the queries are not the keys' last rows."""
    if k.shape[1] != q.shape[1]:
        repeat = q.shape[1] // k.shape[1]
        if TORCH_VERSION >= (2, 5):
            return F.scaled_dot_product_attention(q, k, v, attn_mask=mask, is_causal=causal, enable_gqa=True)
        k, v = k.repeat_interleave(repeat, 1), v.repeat_interleave(repeat, 1)
    if hasattr(F, "scaled_dot_product_attention"):
        return F.scaled_dot_product_attention(q, k, v, attn_mask=mask, is_causal=causal)
    # torch < 2.0 (Debian's CPU build, used by --smoke only).
    scores = (q @ k.transpose(-1, -2)).float() / q.shape[-1] ** 0.5
    if causal:
        scores = scores.masked_fill(torch.ones_like(scores, dtype=torch.bool).triu(1), float("-inf"))
    if mask is not None:
        scores = scores.masked_fill(~mask, float("-inf"))
    return (scores.softmax(-1).to(q.dtype)) @ v
