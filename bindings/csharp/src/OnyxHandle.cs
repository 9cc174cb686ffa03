using System;
using System.Runtime.InteropServices;

namespace Onyx.Runtime
{
    /// <summary>
    /// An owned C handle released once by its C API release entry: on Dispose, or by the finalizer when the
    /// owner was never disposed. Calls borrow it (Lease), so a Dispose racing a call releases it only after
    /// the call returns; use after Dispose is an OnyxException, never a crash.
    /// </summary>
    internal sealed class OnyxHandle : SafeHandle
    {
        private readonly NativeApi.ReleaseFn release;
        private readonly string what;

        internal OnyxHandle(IntPtr handle, NativeApi.ReleaseFn release, string what) : base(IntPtr.Zero, true)
        {
            this.release = release;
            this.what = what;
            SetHandle(handle);
        }

        public override bool IsInvalid { get { return handle == IntPtr.Zero; } }

        protected override bool ReleaseHandle()
        {
            release(handle);
            return true;
        }

        internal Lease Borrow()
        {
            bool added = false;
            try
            {
                DangerousAddRef(ref added);
            }
            catch (ObjectDisposedException)
            {
                throw OnyxException.InvalidArgument(what + " is disposed");
            }
            return new Lease(this, DangerousGetHandle());
        }

        /// <summary>The raw handle for one call; Dispose gives the reference back.</summary>
        internal struct Lease : IDisposable
        {
            private readonly OnyxHandle owner;
            internal readonly IntPtr Ptr;

            internal Lease(OnyxHandle owner, IntPtr ptr)
            {
                this.owner = owner;
                Ptr = ptr;
            }

            public void Dispose()
            {
                if (owner != null) owner.DangerousRelease();
            }
        }
    }

    /// <summary>Creates handles from C API create calls.</summary>
    internal static class Handles
    {
        internal static OnyxHandle Create(NativeApi.CreateFn create, NativeApi.ReleaseFn release, string what)
        {
            IntPtr created;
            NativeApi.Check(create(out created));
            return new OnyxHandle(created, release, what);
        }
    }
}
