using System;
using System.Collections.Generic;
using System.IO;
using Onyx.Runtime;

// test_bindings_same_bytes.py's scenario in C#: MODEL OUT -> the first output's raw bytes.
static class SameBytes
{
    static int Main(string[] args)
    {
        var x = new float[3 * 224 * 224];
        for (long i = 0; i < x.Length; i++) x[i] = (float)((double)((i * 7919) % 1000) / 500.0 - 1.0);
        using (var env = new OnyxEnvironment())
        using (var s = new Session(env, args[0]))
        using (var r = s.Run(new Dictionary<string, Tensor> { { s.InputNames[0], Tensor.Create(x, 1, 3, 224, 224) } }))
        {
            float[] y = r[0].ToArray<float>();
            var bytes = new byte[y.Length * 4];
            Buffer.BlockCopy(y, 0, bytes, 0, bytes.Length);
            File.WriteAllBytes(args[1], bytes);
        }
        return 0;
    }
}
