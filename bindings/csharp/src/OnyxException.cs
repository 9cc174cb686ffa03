using System;

namespace Onyx.Runtime
{
    /// <summary>OnyxErrorCode values of the C header.</summary>
    public enum ErrorCode
    {
        Ok = 0, Fail = 1, InvalidArgument = 2, NoSuchFile = 3, NoModel = 4, EngineError = 5, RuntimeException = 6,
        InvalidProtobuf = 7, ModelLoaded = 8, NotImplemented = 9, InvalidGraph = 10, EpFail = 11,
    }

    /// <summary>A failure reported by the engine, or a misuse caught before calling it, with the C API's error code.</summary>
    public class OnyxException : Exception
    {
        public ErrorCode Code { get; }

        public OnyxException(ErrorCode code, string message)
            : base("[OnyxRuntimeError] : " + (int)code + " : " + code + " : " + message)
        {
            Code = code;
        }

        internal static OnyxException InvalidArgument(string message)
        {
            return new OnyxException(ErrorCode.InvalidArgument, message);
        }
    }
}
