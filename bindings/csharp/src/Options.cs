using System;
using System.Collections.Generic;

namespace Onyx.Runtime
{
    /// <summary>Logging settings shared by sessions (OnyxEnv). Sessions keep their own reference, so it may be disposed first.</summary>
    public sealed class OnyxEnvironment : IDisposable
    {
        internal readonly OnyxHandle Handle;

        public OnyxEnvironment(LoggingLevel level = LoggingLevel.Warning, string logId = "onyxruntime-csharp")
        {
            IntPtr env;
            NativeApi.Check(NativeApi.EnvCreate((int)level, Utf8.ToNative(logId), out env));
            Handle = new OnyxHandle(env, NativeApi.EnvRelease, "OnyxEnvironment");
        }

        /// <summary>The library's version, e.g. "0.1.0".</summary>
        public static string Version { get { return Utf8.FromNative(NativeApi.GetVersionString()); } }

        /// <summary>The execution providers this build of the library can run.</summary>
        public static IReadOnlyList<string> AvailableProviders
        {
            get
            {
                UIntPtr n;
                NativeApi.Check(NativeApi.GetAvailableProviderCount(out n));
                var names = new List<string>();
                for (ulong i = 0; i < n.ToUInt64(); i++)
                {
                    IntPtr name;
                    NativeApi.Check(NativeApi.GetAvailableProviderName(new UIntPtr(i), out name));
                    names.Add(Utf8.FromNative(name));
                }
                return names;
            }
        }

        public bool IsDisposed { get { return Handle.IsClosed; } }

        public void Dispose() { Handle.Dispose(); }
    }

    /// <summary>Options of a session (OnyxSessionOptions); the engine keeps them, nothing is copied on the C# side.</summary>
    public sealed class SessionOptions : IDisposable
    {
        internal readonly OnyxHandle Handle;

        public SessionOptions()
        {
            Handle = Handles.Create(NativeApi.SessionOptionsCreate, NativeApi.SessionOptionsRelease, "SessionOptions");
        }

        private void Call(Func<IntPtr, IntPtr> call)
        {
            using (var h = Handle.Borrow()) NativeApi.Check(call(h.Ptr));
        }

        public void SetIntraOpNumThreads(int threads) { Call(h => NativeApi.SessionOptionsSetIntraOpThreads(h, threads)); }

        public void SetInterOpNumThreads(int threads) { Call(h => NativeApi.SessionOptionsSetInterOpThreads(h, threads)); }

        public void SetGraphOptimizationLevel(GraphOptimizationLevel level)
        {
            Call(h => NativeApi.SessionOptionsSetGraphOptimizationLevel(h, (int)level));
        }

        public void SetExecutionMode(ExecutionMode mode) { Call(h => NativeApi.SessionOptionsSetExecutionMode(h, (int)mode)); }

        /// <summary>Fixes a symbolic dimension (by its name in the model) to a value.</summary>
        public void AddFreeDimensionOverrideByName(string name, long value)
        {
            Call(h => NativeApi.SessionOptionsAddFreeDimensionOverrideByName(h, Utf8.ToNative(name), value));
        }

        public void AddConfigEntry(string key, string value)
        {
            Call(h => NativeApi.SessionOptionsAddConfigEntry(h, Utf8.ToNative(key), Utf8.ToNative(value)));
        }

        /// <summary>The value of a config entry, or null when it is not set.</summary>
        public string GetConfigEntry(string key)
        {
            IntPtr value = IntPtr.Zero;
            Call(h => NativeApi.SessionOptionsGetConfigEntry(h, Utf8.ToNative(key), out value));
            return Utf8.FromNative(value);
        }

        public bool IsDisposed { get { return Handle.IsClosed; } }

        public void Dispose() { Handle.Dispose(); }
    }

    /// <summary>Options of one or more runs (OnyxRunOptions).</summary>
    public sealed class RunOptions : IDisposable
    {
        internal readonly OnyxHandle Handle;

        public RunOptions()
        {
            Handle = Handles.Create(NativeApi.RunOptionsCreate, NativeApi.RunOptionsRelease, "RunOptions");
        }

        private void Call(Func<IntPtr, IntPtr> call)
        {
            using (var h = Handle.Borrow()) NativeApi.Check(call(h.Ptr));
        }

        /// <summary>The tag the engine's log lines for these runs carry.</summary>
        public string Tag
        {
            get
            {
                IntPtr tag = IntPtr.Zero;
                Call(h => NativeApi.RunOptionsGetTag(h, out tag));
                return Utf8.FromNative(tag);
            }
            set { Call(h => NativeApi.RunOptionsSetTag(h, Utf8.ToNative(value))); }
        }

        /// <summary>When set, runs using these options stop early with an error (and new ones fail at once).</summary>
        public void SetTerminate(bool terminate) { Call(h => NativeApi.RunOptionsSetTerminate(h, terminate ? 1 : 0)); }

        public void AddConfigEntry(string key, string value)
        {
            Call(h => NativeApi.RunOptionsAddConfigEntry(h, Utf8.ToNative(key), Utf8.ToNative(value)));
        }

        public string GetConfigEntry(string key)
        {
            IntPtr value = IntPtr.Zero;
            Call(h => NativeApi.RunOptionsGetConfigEntry(h, Utf8.ToNative(key), out value));
            return Utf8.FromNative(value);
        }

        public bool IsDisposed { get { return Handle.IsClosed; } }

        public void Dispose() { Handle.Dispose(); }
    }
}
