using System;
using System.Collections.Generic;
using System.Linq;
using Onyx.Runtime;

// C# consumer of the installed assembly (lib/onyxruntime/OnyxRuntime.dll finds lib/libonyxruntime.so itself).
static class Consumer
{
    static int Main(string[] args)
    {
        using (var env = new OnyxEnvironment())
        using (var s = new Session(env, args[0]))
        using (var r = s.Run(new Dictionary<string, Tensor>
        {
            { "x", Tensor.Create(new float[] { 1, 2, 3, 4, 5, 6 }, 2, 3) },
            { "y", Tensor.Create(new float[] { 10, 20, 30, 40, 50, 60 }, 2, 3) },
        }))
        {
            Console.WriteLine("z = " + string.Join(" ", r["z"].ToArray<float>().Select(v => ((int)v).ToString())));
        }
        return 0;
    }
}
