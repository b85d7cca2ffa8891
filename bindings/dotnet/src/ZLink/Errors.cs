// Errors.cs — framework and Core results mapped to .NET exceptions, by the
// generated table's names (Tables.g.cs); no result number is written here.
//   0                       success
//   an error kind (800+k)   ZLinkFrameworkException with Kind
//   CANCELLED               OperationCanceledException (TaskCanceledException
//                           carrying the token when the caller gave one)
//   INVALID_ARGUMENT        ZLinkArgumentException (an ArgumentException)
//   INVALID_HANDLE          ObjectDisposedException
// Core results keep their family's name (ZLinkCoreException.Name).
using System;
using System.Threading;

namespace ZLink;

/// <summary>A framework call or function failed with an error kind.</summary>
public class ZLinkFrameworkException : Exception
{
    public ErrorKind Kind { get; }
    /// <summary>A remote error's wire terminal result, else 0.</summary>
    public uint RemoteCode { get; }
    /// <summary>The framework result value (800 + Kind).</summary>
    public int Result { get; }
    public ZLinkFrameworkException(ErrorKind kind, int result, string message, uint remoteCode = 0)
        : base(message.Length == 0 ? kind.ToString() : message)
    {
        Kind = kind;
        Result = result;
        RemoteCode = remoteCode;
    }
}

/// <summary>The framework refused an argument (ZLINK_FW_INVALID_ARGUMENT).</summary>
public sealed class ZLinkArgumentException : ArgumentException
{
    public int Result { get; }
    public ZLinkArgumentException(int result, string message) : base(message) { Result = result; }
}

/// <summary>A Core function failed: its family's result name and errno.</summary>
public sealed class ZLinkCoreException : Exception
{
    public int Result { get; }
    /// <summary>The constant's name, e.g. "ZLINK_CONFIG_NOT_FOUND".</summary>
    public string Name { get; }
    public int Errno { get; }
    public string ErrnoName => Errnos.Name(Errno);
    public ZLinkCoreException(int result, string name, int errno, string what)
        : base(what + ": " + name + " (" + Errnos.Name(errno) + ")")
    {
        Result = result;
        Name = name;
        Errno = errno;
    }
}

internal static class Errors
{
    internal static Exception? FromFramework(int result, string? message = null, uint remote = 0,
                                             CancellationToken token = default)
    {
        if (result == Results.Framework.Ok) return null;
        message ??= "";
        var kind = ErrorKinds.FromResult(result);
        if (kind is ErrorKind k) return new ZLinkFrameworkException(k, result, message, remote);
        switch (result)
        {
            case Results.Framework.Cancelled:
                return token.CanBeCanceled ? new TaskCanceledExceptionWithToken(token)
                                           : new OperationCanceledException("the call was cancelled");
            case Results.Framework.InvalidArgument:
                return new ZLinkArgumentException(result, message.Length > 0 ? message : "invalid argument");
            case Results.Framework.InvalidHandle:
                return new ObjectDisposedException("ZLink handle", message.Length > 0 ? message : "invalid handle");
            default:
                return new ZLinkFrameworkException(ErrorKind.InternalFailure, result,
                    "unexpected framework result " + Results.Framework.Name(result));
        }
    }

    internal static void Check(int result, string what)
    {
        var e = FromFramework(result, what);
        if (e != null) throw e;
    }

    internal static unsafe void CheckCore(int result, string what)
    {
        if (result == 0) return;
        throw Core(result, what);
    }

    internal static unsafe ZLinkCoreException Core(int result, string what)
    {
        int errno = Native.zlink_errno();
        string name = Native.Str(Native.zlink_result_name(result)) ?? "unknown";
        return new ZLinkCoreException(result, name, errno, what);
    }

    private sealed class TaskCanceledExceptionWithToken : System.Threading.Tasks.TaskCanceledException
    {
        internal TaskCanceledExceptionWithToken(CancellationToken t) : base("the call was cancelled", null, t) { }
    }
}
