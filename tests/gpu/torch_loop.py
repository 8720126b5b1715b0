"""torch_loop.py — the PyTorch workloads of scripts/gpu-check.sh (needs a GPU).

`serve` (default): a small transformer (2 blocks: attention through
scaled_dot_product_attention, an MLP through cuBLAS, bf16) served three ways,
one phase each: `eager`, `compile` (torch.compile: Triton kernels) and `graph`
(a CUDA graph replayed). Every iteration copies a pageable input batch to the
device, runs the model and copies the result back, so each iteration moves
BATCH*SEQ*DIM*2 bytes each way.

A phase's measured iterations lie between two marker copies, host to device,
of sizes no other copy has (MARK_START + phase index, MARK_END + phase index
bytes): a trace's window is found from them without NVTX. With --profile-dir,
torch.profiler (CUPTI) records exactly those iterations, each phase into
DIR/<phase>.json (Chrome trace), the reference gpu-check compares with.

`nvml`: holds 6 GiB on the device and keeps it busy with bf16 matrix products
for --seconds, between the markers of phase 0, for the NVML check.

--out FILE gets a JSON summary: per phase the median host time per iteration
(ms), the iteration count and the bytes per iteration each way; and the
model's parameter bytes. --exit-holding ends the process with os._exit while
the model is alive, so its weights are allocated at the end (with
PYTORCH_NO_CUDA_MEMORY_CACHING=1, each its own allocation).
"""
import argparse
import json
import statistics
import sys
import time

import torch
import torch.nn.functional as F

MARK_START = 40960 + 13
MARK_END = 40960 + 29
PHASES = ["eager", "compile", "graph"]


class Block(torch.nn.Module):
    def __init__(self, dim, heads):
        super().__init__()
        self.heads = heads
        self.ln1 = torch.nn.LayerNorm(dim)
        self.qkv = torch.nn.Linear(dim, 3 * dim)
        self.proj = torch.nn.Linear(dim, dim)
        self.ln2 = torch.nn.LayerNorm(dim)
        self.fc1 = torch.nn.Linear(dim, 4 * dim)
        self.fc2 = torch.nn.Linear(4 * dim, dim)

    def forward(self, x):
        b, s, d = x.shape
        q, k, v = self.qkv(self.ln1(x)).view(b, s, 3, self.heads, d // self.heads).permute(
            2, 0, 3, 1, 4)
        a = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        x = x + self.proj(a.transpose(1, 2).reshape(b, s, d))
        return x + self.fc2(F.gelu(self.fc1(self.ln2(x))))


def marker(nbytes):
    """One host-to-device copy of exactly nbytes, finished before returning."""
    torch.cuda.synchronize()
    torch.zeros(nbytes, dtype=torch.uint8).to("cuda")
    torch.cuda.synchronize()


def make_step(phase, model, shape):
    """A function that serves one batch: host -> device, model, device -> host."""
    if phase == "eager":
        return lambda xh: model(xh.to("cuda")).to("cpu")
    if phase == "compile":
        compiled = torch.compile(model)
        return lambda xh: compiled(xh.to("cuda")).to("cpu")
    static_x = torch.zeros(shape, device="cuda", dtype=torch.bfloat16)
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        for _ in range(3):
            model(static_x)
    torch.cuda.current_stream().wait_stream(side)
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        static_y = model(static_x)

    def replay(xh):
        static_x.copy_(xh)
        graph.replay()
        return static_y.to("cpu")
    return replay


def run_phase(index, phase, model, args):
    shape = (args.batch, args.seq, args.dim)
    xh = torch.randn(shape).to(torch.bfloat16)  # pageable host memory
    step = make_step(phase, model, shape)
    for _ in range(args.warmup):
        step(xh)
    marker(MARK_START + index)
    times = []
    prof = None
    if args.profile_dir:
        from torch.profiler import ProfilerActivity, profile
        prof = profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA])
        prof.__enter__()
    for _ in range(args.iters):
        t0 = time.perf_counter()
        step(xh)
        times.append(time.perf_counter() - t0)
    torch.cuda.synchronize()
    if prof is not None:
        prof.__exit__(None, None, None)
        prof.export_chrome_trace("%s/%s.json" % (args.profile_dir, phase))
    marker(MARK_END + index)
    nbytes = args.batch * args.seq * args.dim * 2
    return {"iter_ms_median": statistics.median(times) * 1e3, "iters": args.iters,
            "h2d_bytes_per_iter": nbytes, "d2h_bytes_per_iter": nbytes,
            "marks": [MARK_START + index, MARK_END + index]}


KEPT = []  # --exit-holding: the model, alive when the process ends


def serve(args):
    torch.manual_seed(0)
    model = torch.nn.Sequential(*[Block(args.dim, args.heads) for _ in range(2)])
    model = model.to("cuda", torch.bfloat16).eval()  # the weights' line (gpu_checks.py)
    out = {"param_bytes": sum(p.numel() * p.element_size() for p in model.parameters())}
    with torch.inference_mode():
        for phase in args.phases.split(","):
            out[phase] = run_phase(PHASES.index(phase), phase, model, args)
    KEPT.append(model)
    return out


def nvml_load(args):
    """6 GiB held and the GPU busy for args.seconds, between phase 0's markers."""
    hold = torch.empty(6 << 30, dtype=torch.uint8, device="cuda")
    hold.fill_(1)
    a = torch.randn(8192, 8192, device="cuda", dtype=torch.bfloat16)
    marker(MARK_START)
    start = time.time()
    while time.time() - start < args.seconds:
        for _ in range(10):
            a @ a
        torch.cuda.synchronize()
    busy = {"start": start, "end": time.time(), "held_bytes": hold.numel()}
    marker(MARK_END)
    return {"nvml": busy}


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("mode", nargs="?", default="serve", choices=["serve", "nvml"])
    p.add_argument("--phases", default=",".join(PHASES))
    p.add_argument("--iters", type=int, default=30)
    p.add_argument("--warmup", type=int, default=5)
    p.add_argument("--batch", type=int, default=8)
    p.add_argument("--seq", type=int, default=512)
    p.add_argument("--dim", type=int, default=1024)
    p.add_argument("--heads", type=int, default=16)
    p.add_argument("--seconds", type=float, default=4.0)
    p.add_argument("--profile-dir")
    p.add_argument("--out")
    p.add_argument("--exit-holding", action="store_true",
                   help="end with os._exit while the model is alive: its weights are "
                   "still allocated when the process ends")
    args = p.parse_args()
    result = serve(args) if args.mode == "serve" else nvml_load(args)
    result["torch"] = torch.__version__
    result["device"] = torch.cuda.get_device_name(0)
    text = json.dumps(result)
    if args.out:
        with open(args.out, "w") as f:
            f.write(text + "\n")
    print(text)
    if args.exit_holding:
        import os
        sys.stdout.flush()
        os._exit(0)


if __name__ == "__main__":
    main()
