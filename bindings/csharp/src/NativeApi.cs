using System;
using System.IO;
using System.Reflection;
using System.Runtime.InteropServices;
using System.Text;

namespace Onyx.Runtime
{
    /// <summary>The OnyxApi slot an entry delegate is read from (abi_checks/onyx_api_v5.txt; a test compares them).</summary>
    [AttributeUsage(AttributeTargets.Field)]
    internal sealed class SlotAttribute : Attribute
    {
        public readonly int Slot;
        public SlotAttribute(int slot) { Slot = slot; }
    }

    /// <summary>OnyxTensorArg of the C header; field names are the header's in PascalCase.</summary>
    [StructLayout(LayoutKind.Sequential)]
    internal struct TensorArg
    {
        public IntPtr Data;
        public UIntPtr DataBytes;
        public IntPtr Shape;
        public UIntPtr Rank;
        public int Type;
    }

    /// <summary>OnyxTensorResult of the C header.</summary>
    [StructLayout(LayoutKind.Sequential)]
    internal struct TensorResult
    {
        public IntPtr Value;
        public int Kind;
        public int Type;
        public UIntPtr Rank;
        public IntPtr Shape;
        public IntPtr Data;
    }

    /// <summary>
    /// The C API table of libonyxruntime.so: OnyxGetApiBase() (its only export) -> GetApi(5), then each entry
    /// this binding calls as a delegate over the function pointer in its slot. No native code of its own.
    /// The library is ONYXRUNTIME_LIBRARY when set, else ../libonyxruntime.so or libonyxruntime.so beside this
    /// assembly (the install layout: lib/onyxruntime/OnyxRuntime.dll, lib/libonyxruntime.so), else the
    /// system's search for "onyxruntime" (LD_LIBRARY_PATH, ld.so.cache).
    /// </summary>
    internal static unsafe class NativeApi
    {
        internal const uint ApiVersion = 5;

        [UnmanagedFunctionPointer(CallingConvention.Cdecl)] internal delegate IntPtr GetApiFn(uint version);
        [UnmanagedFunctionPointer(CallingConvention.Cdecl)] internal delegate IntPtr GetStringFn();
        [UnmanagedFunctionPointer(CallingConvention.Cdecl)] internal delegate IntPtr GetApiErrorFn(uint version);
        [UnmanagedFunctionPointer(CallingConvention.Cdecl)] internal delegate int StatusGetCodeFn(IntPtr status);
        [UnmanagedFunctionPointer(CallingConvention.Cdecl)] internal delegate IntPtr StatusGetMessageFn(IntPtr status);
        [UnmanagedFunctionPointer(CallingConvention.Cdecl)] internal delegate void ReleaseFn(IntPtr handle);
        [UnmanagedFunctionPointer(CallingConvention.Cdecl)] internal delegate IntPtr EnvCreateFn(int level, byte[] logId, out IntPtr env);
        [UnmanagedFunctionPointer(CallingConvention.Cdecl)] internal delegate IntPtr CreateFn(out IntPtr created);
        [UnmanagedFunctionPointer(CallingConvention.Cdecl)] internal delegate IntPtr SetIntFn(IntPtr handle, int value);
        [UnmanagedFunctionPointer(CallingConvention.Cdecl)] internal delegate IntPtr SetStringFn(IntPtr handle, byte[] value);
        [UnmanagedFunctionPointer(CallingConvention.Cdecl)] internal delegate IntPtr GetStringOfFn(IntPtr handle, out IntPtr value);
        [UnmanagedFunctionPointer(CallingConvention.Cdecl)] internal delegate IntPtr AddEntryFn(IntPtr handle, byte[] key, byte[] value);
        [UnmanagedFunctionPointer(CallingConvention.Cdecl)] internal delegate IntPtr GetEntryFn(IntPtr handle, byte[] key, out IntPtr value);
        [UnmanagedFunctionPointer(CallingConvention.Cdecl)] internal delegate IntPtr SetInt64ByNameFn(IntPtr handle, byte[] name, long value);
        [UnmanagedFunctionPointer(CallingConvention.Cdecl)] internal delegate IntPtr SessionCreateFn(IntPtr env, byte[] path, IntPtr options, out IntPtr session);
        [UnmanagedFunctionPointer(CallingConvention.Cdecl)] internal delegate IntPtr SessionCreateFromBytesFn(IntPtr env, byte* data, UIntPtr length, IntPtr options, out IntPtr session);
        [UnmanagedFunctionPointer(CallingConvention.Cdecl)] internal delegate IntPtr GetCountFn(IntPtr handle, out UIntPtr count);
        [UnmanagedFunctionPointer(CallingConvention.Cdecl)] internal delegate IntPtr GetCountGlobalFn(out UIntPtr count);
        [UnmanagedFunctionPointer(CallingConvention.Cdecl)] internal delegate IntPtr GetNameAtFn(IntPtr handle, UIntPtr index, out IntPtr name);
        [UnmanagedFunctionPointer(CallingConvention.Cdecl)] internal delegate IntPtr GetNameAtGlobalFn(UIntPtr index, out IntPtr name);
        [UnmanagedFunctionPointer(CallingConvention.Cdecl)] internal delegate IntPtr GetTypeInfoFn(IntPtr session, UIntPtr index, out IntPtr info);
        [UnmanagedFunctionPointer(CallingConvention.Cdecl)] internal delegate IntPtr GetIntOfFn(IntPtr handle, out int value);
        [UnmanagedFunctionPointer(CallingConvention.Cdecl)] internal delegate IntPtr GetPointerOfFn(IntPtr handle, out IntPtr value);
        [UnmanagedFunctionPointer(CallingConvention.Cdecl)] internal delegate IntPtr GetDimsFn(IntPtr info, long[] dims, UIntPtr count);
        [UnmanagedFunctionPointer(CallingConvention.Cdecl)] internal delegate IntPtr GetSymbolicDimsFn(IntPtr info, IntPtr[] names, UIntPtr count);
        [UnmanagedFunctionPointer(CallingConvention.Cdecl)] internal delegate IntPtr SessionRunFn(IntPtr session, IntPtr runOptions,
            IntPtr* inputNames, IntPtr* inputs, UIntPtr inputCount, IntPtr* outputNames, UIntPtr outputCount, IntPtr* outputs);
        [UnmanagedFunctionPointer(CallingConvention.Cdecl)] internal delegate IntPtr ValueCreateTensorFn(IntPtr allocator, long[] shape, UIntPtr rank, int type, out IntPtr value);
        [UnmanagedFunctionPointer(CallingConvention.Cdecl)] internal delegate IntPtr StringTensorFillFn(IntPtr value, IntPtr* strings, UIntPtr* lengths, UIntPtr count);
        [UnmanagedFunctionPointer(CallingConvention.Cdecl)] internal delegate IntPtr StringTensorGetElementFn(IntPtr value, UIntPtr index, out IntPtr s, out UIntPtr length);
        [UnmanagedFunctionPointer(CallingConvention.Cdecl)] internal delegate IntPtr ValueCreateSequenceFn(IntPtr* items, UIntPtr count, out IntPtr value);
        [UnmanagedFunctionPointer(CallingConvention.Cdecl)] internal delegate IntPtr ValueCreateMapFn(IntPtr keys, IntPtr values, out IntPtr value);
        [UnmanagedFunctionPointer(CallingConvention.Cdecl)] internal delegate IntPtr SessionRunTensorsFn(IntPtr session, IntPtr runOptions,
            UIntPtr* inputIndices, TensorArg* inputs, UIntPtr inputCount, UIntPtr* outputIndices, UIntPtr outputCount, TensorResult* outputs);

        [Slot(1)] internal static StatusGetCodeFn StatusGetCode;
        [Slot(2)] internal static StatusGetMessageFn StatusGetMessage;
        [Slot(3)] internal static ReleaseFn StatusRelease;
        [Slot(4)] internal static EnvCreateFn EnvCreate;
        [Slot(5)] internal static ReleaseFn EnvRelease;
        [Slot(6)] internal static CreateFn SessionOptionsCreate;
        [Slot(8)] internal static ReleaseFn SessionOptionsRelease;
        [Slot(9)] internal static SetIntFn SessionOptionsSetIntraOpThreads;
        [Slot(10)] internal static SetIntFn SessionOptionsSetInterOpThreads;
        [Slot(11)] internal static SetIntFn SessionOptionsSetGraphOptimizationLevel;
        [Slot(12)] internal static SetIntFn SessionOptionsSetExecutionMode;
        [Slot(15)] internal static AddEntryFn SessionOptionsAddConfigEntry;
        [Slot(16)] internal static GetEntryFn SessionOptionsGetConfigEntry;
        [Slot(18)] internal static SessionCreateFn SessionCreate;
        [Slot(19)] internal static SessionCreateFromBytesFn SessionCreateFromBytes;
        [Slot(20)] internal static ReleaseFn SessionRelease;
        [Slot(21)] internal static GetCountFn SessionGetInputCount;
        [Slot(22)] internal static GetCountFn SessionGetOutputCount;
        [Slot(24)] internal static GetNameAtFn SessionGetInputName;
        [Slot(25)] internal static GetNameAtFn SessionGetOutputName;
        [Slot(27)] internal static GetTypeInfoFn SessionGetInputTypeInfo;
        [Slot(28)] internal static GetTypeInfoFn SessionGetOutputTypeInfo;
        [Slot(31)] internal static GetCountFn SessionGetProviderCount;
        [Slot(32)] internal static GetNameAtFn SessionGetProviderName;
        [Slot(34)] internal static CreateFn RunOptionsCreate;
        [Slot(35)] internal static ReleaseFn RunOptionsRelease;
        [Slot(36)] internal static SetStringFn RunOptionsSetTag;
        [Slot(37)] internal static GetStringOfFn RunOptionsGetTag;
        [Slot(39)] internal static SetIntFn RunOptionsSetTerminate;
        [Slot(33)] internal static SessionRunFn SessionRun;
        [Slot(52)] internal static ValueCreateTensorFn ValueCreateTensor;
        [Slot(55)] internal static ReleaseFn ValueRelease;
        [Slot(56)] internal static GetIntOfFn ValueGetKind;
        [Slot(57)] internal static GetPointerOfFn ValueGetTensorTypeAndShape;
        [Slot(58)] internal static GetPointerOfFn ValueGetTensorData;
        [Slot(60)] internal static StringTensorFillFn StringTensorFill;
        [Slot(61)] internal static StringTensorGetElementFn StringTensorGetElement;
        [Slot(62)] internal static ReleaseFn TypeInfoRelease;
        [Slot(63)] internal static GetIntOfFn TypeInfoGetKind;
        [Slot(64)] internal static GetPointerOfFn TypeInfoGetTypeString;
        [Slot(65)] internal static GetPointerOfFn TypeInfoGetTensorInfo;
        [Slot(66)] internal static ReleaseFn TensorTypeAndShapeInfoRelease;
        [Slot(67)] internal static GetIntOfFn TensorInfoGetElementType;
        [Slot(68)] internal static GetCountFn TensorInfoGetDimCount;
        [Slot(69)] internal static GetIntOfFn TensorInfoHasShape;
        [Slot(70)] internal static GetDimsFn TensorInfoGetDims;
        [Slot(71)] internal static GetSymbolicDimsFn TensorInfoGetSymbolicDims;
        [Slot(84)] internal static GetCountGlobalFn GetAvailableProviderCount;
        [Slot(85)] internal static GetNameAtGlobalFn GetAvailableProviderName;
        [Slot(88)] internal static GetStringFn GetVersionString;
        [Slot(108)] internal static GetCountFn ValueGetElementCount;
        [Slot(109)] internal static GetTypeInfoFn ValueGetElement;
        [Slot(110)] internal static ValueCreateSequenceFn ValueCreateSequence;
        [Slot(111)] internal static ValueCreateMapFn ValueCreateMap;
        [Slot(112)] internal static GetPointerOfFn ValueCreateOptional;
        [Slot(115)] internal static SetInt64ByNameFn SessionOptionsAddFreeDimensionOverrideByName;
        [Slot(135)] internal static SessionRunTensorsFn SessionRunTensors;
        [Slot(136)] internal static AddEntryFn RunOptionsAddConfigEntry;
        [Slot(137)] internal static GetEntryFn RunOptionsGetConfigEntry;

        /// <summary>The file the table was read from ("onyxruntime" when found by the system's search).</summary>
        internal static readonly string LibraryPath;

        [DllImport("onyxruntime", EntryPoint = "OnyxGetApiBase", CallingConvention = CallingConvention.Cdecl)]
        private static extern IntPtr OnyxGetApiBaseFromSearch();

        [DllImport("libdl.so.2", EntryPoint = "dlopen")]
        private static extern IntPtr DlOpen(string file, int mode);

        [DllImport("libdl.so.2", EntryPoint = "dlsym")]
        private static extern IntPtr DlSym(IntPtr handle, string name);

        [DllImport("libdl.so.2", EntryPoint = "dlerror")]
        private static extern IntPtr DlError();

        private const int RTLD_NOW = 2;

        static NativeApi()
        {
            if (IntPtr.Size != 8)
                throw new PlatformNotSupportedException("onyxruntime's C# binding needs a 64-bit process");
            IntPtr apiBase = LoadApiBase(out LibraryPath);
            IntPtr getApi = Marshal.ReadIntPtr(apiBase, 0);
            IntPtr api = ((GetApiFn)Marshal.GetDelegateForFunctionPointer(getApi, typeof(GetApiFn)))(ApiVersion);
            if (api == IntPtr.Zero)
            {
                var getError = (GetApiErrorFn)Marshal.GetDelegateForFunctionPointer(
                    Marshal.ReadIntPtr(apiBase, IntPtr.Size), typeof(GetApiErrorFn));
                throw new DllNotFoundException(LibraryPath + " does not provide C API version " + ApiVersion + ": " +
                                               Utf8.FromNative(getError(ApiVersion)));
            }
            foreach (FieldInfo field in Entries())
            {
                int slot = field.GetCustomAttribute<SlotAttribute>().Slot;
                IntPtr fn = Marshal.ReadIntPtr(api, slot * IntPtr.Size);
                if (fn == IntPtr.Zero)
                    throw new DllNotFoundException(LibraryPath + ": C API entry " + field.Name + " (slot " + slot + ") is NULL");
                field.SetValue(null, Marshal.GetDelegateForFunctionPointer(fn, field.FieldType));
            }
        }

        /// <summary>The entry delegates with their slots, for the binding and its ABI test.</summary>
        internal static FieldInfo[] Entries()
        {
            return Array.FindAll(typeof(NativeApi).GetFields(BindingFlags.Static | BindingFlags.NonPublic),
                                 f => f.GetCustomAttribute<SlotAttribute>() != null);
        }

        private static IntPtr LoadApiBase(out string path)
        {
            string explicitPath = Environment.GetEnvironmentVariable("ONYXRUNTIME_LIBRARY");
            if (string.IsNullOrEmpty(explicitPath))
            {
                string here = Path.GetDirectoryName(typeof(NativeApi).Assembly.Location) ?? ".";
                foreach (string candidate in new[] { Path.Combine(here, "..", "libonyxruntime.so"), Path.Combine(here, "libonyxruntime.so") })
                {
                    if (File.Exists(candidate))
                    {
                        explicitPath = Path.GetFullPath(candidate);
                        break;
                    }
                }
            }
            if (string.IsNullOrEmpty(explicitPath))
            {
                path = "onyxruntime";
                return OnyxGetApiBaseFromSearch();
            }
            path = explicitPath;
            IntPtr lib = DlOpen(explicitPath, RTLD_NOW);
            if (lib == IntPtr.Zero)
                throw new DllNotFoundException("cannot load " + explicitPath + ": " + Utf8.FromNative(DlError()));
            IntPtr sym = DlSym(lib, "OnyxGetApiBase");
            if (sym == IntPtr.Zero)
                throw new DllNotFoundException(explicitPath + " does not export OnyxGetApiBase");
            var getBase = (GetStringFn)Marshal.GetDelegateForFunctionPointer(sym, typeof(GetStringFn));
            return getBase();
        }

        /// <summary>Throws the OnyxException a non-NULL status carries, releasing the status.</summary>
        internal static void Check(IntPtr status)
        {
            if (status == IntPtr.Zero) return;
            int code = StatusGetCode(status);
            string message = Utf8.FromNative(StatusGetMessage(status));
            StatusRelease(status);
            throw new OnyxException((ErrorCode)code, message);
        }
    }

    /// <summary>UTF-8 strings to and from C.</summary>
    internal static class Utf8
    {
        /// <summary>A NUL-terminated UTF-8 copy of s, or null for null.</summary>
        internal static byte[] ToNative(string s)
        {
            if (s == null) return null;
            byte[] bytes = new byte[Encoding.UTF8.GetByteCount(s) + 1];
            Encoding.UTF8.GetBytes(s, 0, s.Length, bytes, 0);
            return bytes;
        }

        internal static unsafe string FromNative(IntPtr p)
        {
            if (p == IntPtr.Zero) return null;
            byte* b = (byte*)p;
            int n = 0;
            while (b[n] != 0) n++;
            return Encoding.UTF8.GetString(b, n);
        }
    }
}
