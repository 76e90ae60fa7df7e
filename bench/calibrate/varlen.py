"""Every sequence of a step in one attention call per layer, as vLLM's FlashAttention backend runs
it (flash_attn_varlen_func): the decoding sequences (one query each over their context), a prompt
and a resumed conversation's new tokens over their cached prefix, packed end to end, causal
aligned to the bottom right. step_time.py --attention varlen times the steps this way; the default
(`split`) runs decode and prompt attention as separate kernels, which costs small steps more."""

import math

import torch

from decoder import TORCH_VERSION

# PyTorch's own FlashAttention-2 varlen kernel (CUDA); the CPU (--smoke) uses reference() instead.
FLASH_VARLEN = getattr(torch.ops.aten, "_flash_attention_forward", None) if TORCH_VERSION >= (2, 1) else None


class VarlenPlan:
    """Where a step's sequences sit: `batch` decoding at `context` tokens, then one sequence that
    prefills `length` tokens over `prefix` cached ones (none when length is 0). Made outside the
    timed step: a captured CUDA graph cannot copy index lists to the GPU."""

    def __init__(self, batch, context, length, prefix, device):
        self.cu_q_list = list(range(batch + 1)) + ([batch + length] if length else [])
        self.cu_k_list = [b * context for b in range(batch + 1)] + ([batch * context + prefix + length] if length else [])
        self.kv_tokens = self.cu_k_list[-1]
        self.max_q = max([1] * (batch > 0) + [length])
        self.max_k = max([context] * (batch > 0) + [prefix + length])
        write = [b * context + context - 1 for b in range(batch)] + [batch * context + prefix + i for i in range(length)]
        positions = [context - 1] * batch + list(range(prefix, prefix + length))
        logits = list(range(batch)) + ([batch + length - 1] if length else [])

        def tensor(values, dtype=torch.long):
            return torch.tensor(values, device=device, dtype=dtype)

        self.cu_q, self.cu_k = tensor(self.cu_q_list, torch.int32), tensor(self.cu_k_list, torch.int32)
        self.write_rows, self.positions, self.logit_rows = tensor(write), tensor(positions), tensor(logits)


def varlen_step(model, decode_tokens, prompt_tokens, plan):
    """One step of the model (decoder.Decoder) over the plan's sequences; greedy tokens out."""
    cos, sin = model._rotary(plan.positions)
    x = model.embed[torch.cat((decode_tokens, prompt_tokens))]
    return model._forward(x, cos, sin, lambda layer, q, k, v: attend(model.s, layer, q, k, v, plan), logit_rows=plan.logit_rows)


def attend(s, layer, q, k, v, plan, kernel=None):
    """The step's new K and V written into the flat KV pool, then one varlen attention over it."""
    size = plan.kv_tokens * s["kv_heads"] * s["head_dim"]
    keys, values = (layer[name][:size].view(plan.kv_tokens, s["kv_heads"], s["head_dim"]) for name in ("k_cache", "v_cache"))
    keys.index_copy_(0, plan.write_rows, k)
    values.index_copy_(0, plan.write_rows, v)
    kernel = kernel or (flash if FLASH_VARLEN is not None and q.is_cuda else reference)
    return kernel(q, keys, values, plan).reshape(q.shape[0], -1)


def describe(device):
    if FLASH_VARLEN is not None and device.type == "cuda":
        return "one varlen FlashAttention call per layer for every sequence of the step"
    return "one varlen attention per layer, computed one sequence at a time (no CUDA kernel here)"


def flash(q, keys, values, plan):
    return FLASH_VARLEN(q, keys, values, plan.cu_q, plan.cu_k, plan.max_q, plan.max_k, 0.0, True, False)[0]


def reference(q, keys, values, plan):
    """The same attention one sequence at a time, in float32: the check of the kernel's packing."""
    group = q.shape[1] // keys.shape[1]
    out = []
    for i in range(len(plan.cu_q_list) - 1):
        qi = q[plan.cu_q_list[i] : plan.cu_q_list[i + 1]].float()
        ki, vi = (t[plan.cu_k_list[i] : plan.cu_k_list[i + 1]].float().repeat_interleave(group, 1) for t in (keys, values))
        n, m = qi.shape[0], ki.shape[0]
        scores = torch.einsum("nhd,mhd->hnm", qi, ki) / math.sqrt(q.shape[-1])
        visible = torch.arange(m, device=q.device)[None, :] <= (m - n) + torch.arange(n, device=q.device)[:, None]
        scores = scores.masked_fill(~visible, float("-inf"))
        out.append(torch.einsum("hnm,mhd->nhd", scores.softmax(-1), vi))
    return torch.cat(out).to(q.dtype)
