"""Shows, with a CUDA-level profile, that an IOBinding run whose inputs and
outputs live in GPU memory makes no host<->device copy, while sess.run with
numpy feeds makes one each way (the control that proves the profiler sees the
provider's copies). Needs torch with CUDA (its profiler reads CUPTI, which
records every copy the process makes, the provider library's too).

    python tests/cuda/iobinding_profile.py      # prints counts, exits 1 on a host copy

Also prints the copy steps of onyxruntime's own profile (enable_profiling):
device-resident feeds pass through their copy steps without copying.
"""

import json
import os
import sys

import numpy as np

import onyxruntime as rt

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench_cuda import mlp_model  # noqa: E402


def cuda_activity(torch, fn, runs=5):
    from torch.profiler import ProfilerActivity, profile
    torch.cuda.synchronize()
    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        for _ in range(runs):
            fn()
        torch.cuda.synchronize()
    copies, kernels = {}, 0
    for e in prof.events():
        name = e.name
        if name.startswith("Memcpy") or name.startswith("Memset"):
            copies[name] = copies.get(name, 0) + 1
        elif e.device_type.name == "CUDA":
            kernels += 1
    return copies, kernels


def main():
    try:
        import torch
    except ImportError:
        print("torch is not installed")
        return 2
    if not torch.cuda.is_available() or "CUDAExecutionProvider" not in rt.get_available_providers():
        print("CUDA is not available")
        return 2
    model = mlp_model()
    so = rt.SessionOptions()
    so.enable_profiling = True
    sess = rt.InferenceSession(model, so, providers=["CUDAExecutionProvider", "CPUExecutionProvider"])
    x = torch.randn(1, 128, 768, device="cuda", dtype=torch.float32)
    y = torch.empty(1, 128, 768, device="cuda", dtype=torch.float32)
    binding = sess.io_binding()
    binding.bind_input("x", "cuda", 0, np.float32, list(x.shape), x.data_ptr())
    binding.bind_output("z", "cuda", 0, np.float32, list(y.shape), y.data_ptr())
    sess.run_with_iobinding(binding)  # warm-up: constants, arena
    want = rt.InferenceSession(model, providers=["CPUExecutionProvider"]).run(None, {"x": x.cpu().numpy()})[0]
    err = float(np.max(np.abs(y.cpu().numpy() - want)))
    bound, bound_kernels = cuda_activity(torch, lambda: sess.run_with_iobinding(binding))
    feeds = {"x": x.cpu().numpy()}
    plain, plain_kernels = cuda_activity(torch, lambda: sess.run(None, feeds))
    print("IOBinding (device in/out), 5 runs: %d GPU kernels, copies/memsets: %s"
          % (bound_kernels, bound or "none"))
    print("sess.run (numpy in/out),   5 runs: %d GPU kernels, copies/memsets: %s" % (plain_kernels, plain or "none"))
    print("max abs diff vs CPU provider: %.2e" % err)
    path = sess.end_profiling()
    with open(path) as f:
        events = json.load(f)
    steps = sorted({e["name"] for e in events if "Memcpy" in e.get("name", "")})
    print("copy steps in onyxruntime's profile: %s" % (", ".join(steps) or "none"))
    os.remove(path)
    host_copies = sum(n for k, n in bound.items() if "HtoD" in k or "DtoH" in k)
    plain_copies = sum(n for k, n in plain.items() if "HtoD" in k or "DtoH" in k)
    if plain_copies == 0:
        print("the profiler saw no copy for sess.run either: it does not see the provider's copies")
        return 1
    return 1 if host_copies else 0


if __name__ == "__main__":
    sys.exit(main())
