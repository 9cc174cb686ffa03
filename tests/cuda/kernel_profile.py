"""Where a model's GPU time goes, in onyxruntime's CUDA provider and in the
torch-eager peer of bench_cuda.py: wall time per run (numpy in/out, and for
onyxruntime also with inputs and outputs bound in GPU memory), the GPU time
of the kernels and of the copies (CUPTI, through torch's profiler), and the
kernels that take the most of it. A diagnostic for a GPU machine, not a test.

    python tests/cuda/kernel_profile.py [--models resnet50,mlp] [--batch 32] [--top 12]
        [--options cudnn_conv_algo_search=HEURISTIC]
"""

import argparse
import os
import sys
import tempfile

import onyxruntime as rt

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench_cuda import feeds_for, generated_model, load_torch_eager, mlp_model, timed, torch_runner  # noqa: E402


def gpu_profile(torch, fn, runs):
    """(kernel ms per run, copy ms per run, span ms per run, {kernel: ms per run})."""
    from torch.profiler import ProfilerActivity, profile
    torch.cuda.synchronize()
    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        for _ in range(runs):
            fn()
        torch.cuda.synchronize()
    by_name, kern, copy = {}, 0.0, 0.0
    first, last = None, None
    for e in prof.events():
        if e.device_type.name != "CUDA":
            continue
        us = e.time_range.elapsed_us()
        first = e.time_range.start if first is None else min(first, e.time_range.start)
        last = e.time_range.end if last is None else max(last, e.time_range.end)
        if e.name.startswith("Memcpy") or e.name.startswith("Memset"):
            copy += us
        else:
            kern += us
        by_name[e.name] = by_name.get(e.name, 0.0) + us
    span = (last - first) if first is not None else 0.0
    return kern / runs / 1e3, copy / runs / 1e3, span / runs / 1e3, {k: v / runs / 1e3 for k, v in by_name.items()}


def report(label, prof, top):
    kern, copy, span, by_name = prof
    print("  %s: GPU kernels %.3f ms, copies %.3f ms, first-to-last span %.3f ms per run" % (label, kern, copy, span))
    for name, ms in sorted(by_name.items(), key=lambda kv: -kv[1])[:top]:
        print("    %8.3f ms  %s" % (ms, name[:150]))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--models", default="resnet50,mlp")
    ap.add_argument("--batch", type=int, default=32)
    ap.add_argument("--top", type=int, default=12)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--options", default="", help="CUDA provider options, k=v,k=v")
    args = ap.parse_args()
    torch, te = load_torch_eager()
    if torch is None or "CUDAExecutionProvider" not in rt.get_available_providers():
        print("needs torch with CUDA and onyxruntime's CUDA provider")
        return 2
    opts = dict(kv.split("=", 1) for kv in args.options.split(",") if kv)
    out_dir = os.environ.get("ONYX_MODEL_DIR", os.path.join(tempfile.gettempdir(), "onyx_bench_models"))
    for name in args.models.split(","):
        model = mlp_model() if name == "mlp" else generated_model(name, out_dir)
        sess = rt.InferenceSession(model, providers=[("CUDAExecutionProvider", opts), "CPUExecutionProvider"])
        feeds = feeds_for(sess, args.batch)
        outs = sess.run(None, feeds)
        # The same run with inputs and outputs in GPU memory (torch tensors).
        dev_in = {k: torch.from_numpy(v).cuda() for k, v in feeds.items()}
        dev_out = [torch.empty(o.shape, dtype=torch.from_numpy(o[:0]).dtype, device="cuda") for o in outs]
        binding = sess.io_binding()
        for k, v in dev_in.items():
            binding.bind_input(k, "cuda", 0, feeds[k].dtype, list(v.shape),
                               v.data_ptr())
        for o, (meta, t) in zip(outs, zip(sess.get_outputs(), dev_out)):
            binding.bind_output(meta.name, "cuda", 0, o.dtype, list(t.shape), t.data_ptr())

        def bound():
            sess.run_with_iobinding(binding)
            torch.cuda.synchronize()
        print("%s b%d (options %s)" % (name, args.batch, opts or "default"), flush=True)
        print("  onyx wall: numpy in/out %.3f ms, GPU in/out %.3f ms" % (
            timed(lambda: sess.run(None, feeds), 10), timed(bound, 10)), flush=True)
        report("onyx numpy in/out", gpu_profile(torch, lambda: sess.run(None, feeds), args.runs), args.top)
        report("onyx GPU in/out", gpu_profile(torch, bound, args.runs), 4)
        _, run_torch = torch_runner(torch, te, model)
        print("  torch-eager wall: numpy in/out %.3f ms" % timed(lambda: run_torch(feeds), 10), flush=True)
        report("torch-eager", gpu_profile(torch, lambda: run_torch(feeds), args.runs), args.top)
        del sess, binding, dev_in, dev_out
        torch.cuda.empty_cache()
    return 0


if __name__ == "__main__":
    sys.exit(main())
