"""Records allocation traces of PyTorch inference workloads, in RMM's log format.

Two workloads whose allocation sizes vary widely from one request to the next, as in serving:
  gpt2_generate  a GPT-2-sized decoder (12 layers, 768 wide, random weights: the trace depends on
                 shapes, not values) generating for 24 requests with random prompt lengths
                 (16..1000 tokens), batch sizes (1..12) and new-token counts (8..96), so the KV
                 cache of every request grows step by step to a size of its own;
  bert_encode    a BERT-base-sized encoder (12 layers, 768 wide, random weights) over 60 batches of
                 random batch size (1..64) and sequence length (8..512).
The trace comes from PyTorch's own allocation history (torch.cuda.memory._record_memory_history):
each tensor block PyTorch's caching allocator handed out and took back, which is what any allocator
under PyTorch would see. Written as Thread,Time,Action,Pointer,Size,Stream (gzip), plus PyTorch's
peak reserved / peak allocated on the same run.

Run on a GPU machine: python3 bench/traces/capture_inference.py OUTDIR
"""
import gzip
import os
import random
import sys
import time

import torch


def write_trace(path, events):
    with gzip.open(path, "wt") as f:
        f.write("Thread,Time,Action,Pointer,Size,Stream\n")
        for action, addr, size, stream, t_us in events:
            secs = int(t_us // 1_000_000)
            micros = int(t_us % 1_000_000)
            hh, mm, ss = (secs // 3600) % 24, (secs // 60) % 60, secs % 60
            f.write(f"1,{hh:02d}:{mm:02d}:{ss:02d}.{micros:06d},{action},0x{addr:x},{size},{stream:x}\n")


def events_from_snapshot(snapshot):
    out = []
    for trace in snapshot["device_traces"]:
        for e in trace:
            a = e["action"]
            if a == "alloc":
                out.append(("allocate", e["addr"], e["size"], e.get("stream", 0), e.get("time_us", 0)))
            elif a == "free_completed":
                out.append(("free", e["addr"], e["size"], e.get("stream", 0), e.get("time_us", 0)))
    return out


def peak_live(events):
    live = peak = 0
    for action, _, size, _, _ in events:
        live += size if action == "allocate" else -size
        peak = max(peak, live)
    return peak


def gpt2_generate(rng):
    from transformers import GPT2Config, GPT2LMHeadModel
    model = GPT2LMHeadModel(GPT2Config(n_layer=12, n_embd=768, n_head=12, n_positions=1200)).cuda().eval().half()
    with torch.no_grad():
        for _ in range(24):
            batch = rng.randint(1, 12)
            prompt = rng.randint(16, 1000)
            new = rng.randint(8, 96)
            ids = torch.randint(0, 50257, (batch, prompt), device="cuda")
            model.generate(ids, attention_mask=torch.ones_like(ids), max_new_tokens=new, min_new_tokens=new,
                           do_sample=False, pad_token_id=0, use_cache=True)


def bert_encode(rng):
    from transformers import BertConfig, BertModel
    model = BertModel(BertConfig(num_hidden_layers=12, hidden_size=768, num_attention_heads=12, max_position_embeddings=512)).cuda().eval().half()
    with torch.no_grad():
        for _ in range(60):
            batch = rng.randint(1, 64)
            seq = rng.randint(8, 512)
            ids = torch.randint(0, 30522, (batch, seq), device="cuda")
            model(input_ids=ids, attention_mask=torch.ones_like(ids))


def main():
    outdir = sys.argv[1] if len(sys.argv) > 1 else "."
    os.makedirs(outdir, exist_ok=True)
    for name, fn in (("gpt2_generate", gpt2_generate), ("bert_encode", bert_encode)):
        torch.cuda.empty_cache()
        torch.cuda.reset_peak_memory_stats()
        torch.cuda.memory._record_memory_history(max_entries=2_000_000)
        t0 = time.time()
        fn(random.Random(7))
        torch.cuda.synchronize()
        snap = torch.cuda.memory._snapshot()
        torch.cuda.memory._record_memory_history(enabled=None)
        events = events_from_snapshot(snap)
        reserved, allocated = torch.cuda.max_memory_reserved(), torch.cuda.max_memory_allocated()
        path = os.path.join(outdir, f"{name}.csv.gz")
        write_trace(path, events)
        print(f"{name}: {len(events)} events, peak live {peak_live(events) / 2**20:.0f} MiB, "
              f"PyTorch peak reserved / peak allocated {reserved / max(allocated, 1):.3f} "
              f"({reserved / 2**20:.0f} / {allocated / 2**20:.0f} MiB), {time.time() - t0:.1f} s -> {path}", flush=True)
        torch.cuda.empty_cache()


if __name__ == "__main__":
    main()
