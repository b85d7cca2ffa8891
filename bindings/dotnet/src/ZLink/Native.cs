// Native.cs — the P/Invoke surface of libzlink.so.1 and its loader.
//
// Design notes
//  - Every import is [LibraryImport] (source-generated marshalling); handles
//    cross as nint inside SafeHandle classes (Handles.cs), strings as UTF-8
//    through Utf8Text (a string C cannot take is refused there).
//  - The loader (a DllImportResolver for the name "zlink") opens the library
//    explicitly, in this order: the ZLINK_LIBRARY environment variable, the
//    AppContext switch "ZLink.LibraryPath", the package's
//    runtimes/linux-x64/native/libzlink.so.1 next to the assembly, then the
//    default search for libzlink.so.1. It then checks, before any import is
//    bound, that zlink_version()'s major equals the generated table's and
//    that every export of the table (AbiTable.Exports) resolves; the first
//    missing name fails the load (ZLinkLoadException names it).
//  - Nothing here decides a semantic: results go back to the caller as ints
//    and are mapped by name through the generated table (Errors.cs).
using System;
using System.IO;
using System.Reflection;
using System.Runtime.CompilerServices;
using System.Runtime.InteropServices;
using System.Text;

namespace ZLink;

/// <summary>The library could not be loaded, has another major version or lacks an export.</summary>
public sealed class ZLinkLoadException : Exception
{
    /// <summary>The export that did not resolve, when that was the cause.</summary>
    public string? MissingExport { get; }
    public ZLinkLoadException(string message, string? missing = null) : base(message) { MissingExport = missing; }
}

/// <summary>Loading and checking libzlink.so.1.</summary>
public static class NativeLibraryLoader
{
    public const string EnvironmentVariable = "ZLINK_LIBRARY";
    public const string AppContextSwitch = "ZLink.LibraryPath";
    internal const string LibName = "zlink";
    private static readonly object Gate = new();
    private static nint _handle;
    private static ZLinkLoadException? _failure;

    /// <summary>The version of the loaded library (loads it first).</summary>
    public static Version LibraryVersion
    {
        get
        {
            EnsureLoaded();
            int a, b, c;
            unsafe { Native.zlink_version(&a, &b, &c); }
            return new Version(a, b, c);
        }
    }

    internal static void Register()
    {
        NativeLibrary.SetDllImportResolver(typeof(NativeLibraryLoader).Assembly, Resolve);
    }

    private static nint Resolve(string name, Assembly asm, DllImportSearchPath? path)
    {
        if (name != LibName) return 0;
        return EnsureLoaded();
    }

    /// <summary>Loads the library and checks it; throws ZLinkLoadException.</summary>
    public static nint EnsureLoaded()
    {
        lock (Gate)
        {
            if (_handle != 0) return _handle;
            if (_failure != null) throw _failure;
            try
            {
                var h = Open();
                Check(h, AbiTable.Major, AbiTable.Exports);
                _handle = h;
                return h;
            }
            catch (ZLinkLoadException e)
            {
                _failure = e;
                throw;
            }
        }
    }

    private static nint Open()
    {
        string? explicitPath = Environment.GetEnvironmentVariable(EnvironmentVariable);
        if (string.IsNullOrEmpty(explicitPath))
            explicitPath = AppContext.GetData(AppContextSwitch) as string;
        if (!string.IsNullOrEmpty(explicitPath))
        {
            if (NativeLibrary.TryLoad(explicitPath, out var h)) return h;
            throw new ZLinkLoadException("cannot load " + explicitPath);
        }
        string dir = Path.GetDirectoryName(typeof(NativeLibraryLoader).Assembly.Location) ?? ".";
        string packaged = Path.Combine(dir, "runtimes", "linux-x64", "native", "libzlink.so.1");
        if (File.Exists(packaged) && NativeLibrary.TryLoad(packaged, out var p)) return p;
        if (NativeLibrary.TryLoad("libzlink.so.1", out var d)) return d;
        throw new ZLinkLoadException("cannot load libzlink.so.1 (set " + EnvironmentVariable + ")");
    }

    /// <summary>The load check on an opened library: the major version of
    /// zlink_version() and every name of exports; the first missing one
    /// fails with its name. Public for the binding's own tests.</summary>
    public static unsafe void Check(nint library, int major, (string Name, string Node)[] exports)
    {
        if (!NativeLibrary.TryGetExport(library, "zlink_version", out var v))
            throw new ZLinkLoadException("libzlink lacks export zlink_version", "zlink_version");
        int a, b, c;
        ((delegate* unmanaged<int*, int*, int*, void>)v)(&a, &b, &c);
        if (a != major)
            throw new ZLinkLoadException($"libzlink major version {a} (this binding needs {major})");
        foreach (var e in exports)
            if (!NativeLibrary.TryGetExport(library, e.Name, out _))
                throw new ZLinkLoadException("libzlink lacks export " + e.Name + " (" + e.Node + ")", e.Name);
    }
}

internal static class ModuleInit
{
#pragma warning disable CA2255
    [ModuleInitializer]
    internal static void Init() => NativeLibraryLoader.Register();
#pragma warning restore CA2255
}

[StructLayout(LayoutKind.Sequential)]
internal unsafe struct NOutcome
{
    public uint struct_size;
    public int result;
    public uint remote_code;
    public uint reserved;
    public byte* message;
    public byte* payload;
    public nuint payload_size;
    public byte* packet;
    public byte* content_type;
}

/// <summary>zlink_host_status_t.</summary>
[StructLayout(LayoutKind.Sequential)]
public unsafe struct NHostStatus
{
    public uint struct_size;
    public int state, is_ready, accepting_work;
    public ulong requests_inflight, oneway_waiting, admission_waiters_max, dispatcher_in_use,
        dispatcher_capacity, turns_running, turns_queued, max_queued_jobs, permits_in_use;
    public fixed ulong reserved[8];
}

/// <summary>zlink_host_capacity_t.</summary>
[StructLayout(LayoutKind.Sequential)]
public unsafe struct NHostCapacity
{
    public uint struct_size;
    public int profile;
    public ulong manual_max;
    public uint pause_percent, resume_percent;
    public ulong effective_processors, effective_max, pause_count, resume_count,
        reserved_supply_permits, queued_jobs, permits_in_use, peak_permits_in_use;
    public int pressure_state, reserved0;
    public long current_pause_ns, cumulative_pause_ns;
    public ulong transitions_paused, transitions_running, capacity_waiters, capacity_waits;
    public long capacity_wait_ns;
    public ulong flow_state_config_failures;
    public fixed ulong reserved[8];
}

/// <summary>zlink_owner_status_t.</summary>
[StructLayout(LayoutKind.Sequential)]
public unsafe struct NOwnerStatus
{
    public uint struct_size;
    public int busy;
    public ulong accepted_seq, queued_records, queued_bytes, running_records, running_bytes, handled;
    public fixed ulong reserved[8];
}

[StructLayout(LayoutKind.Sequential)]
internal unsafe struct NRoutingId
{
    public byte size;
    public fixed byte data[255];
}

/// <summary>zlink_completion_t.</summary>
[StructLayout(LayoutKind.Sequential)]
internal unsafe struct NCompletion
{
    public uint struct_size;
    public int kind;
    public ulong completion_id;
    public nint user_context;
    public NRoutingId peer_rid;
    public int send_result;
    public int send_terminal_errno;
    public int request_result;
    public NMsg* reply_parts;
    public nuint reply_part_count;
}

[StructLayout(LayoutKind.Sequential, Size = 64)]
internal struct NMsg
{
    private readonly nint _align;
}

/// <summary>zlink_poller_event_t.</summary>
[StructLayout(LayoutKind.Sequential)]
public struct NPollerEvent
{
    public int source_kind;
    public nint socket;
    public int fd;
    public nint timer;
    public nint user_data;
    public short events;
}

/// <summary>zlink_pollitem_t.</summary>
[StructLayout(LayoutKind.Sequential)]
public struct NPollItem
{
    public nint socket;
    public int fd;
    public short events;
    public short revents;
}

internal static unsafe partial class Native
{
    private const string L = NativeLibraryLoader.LibName;

    // ---- common
    [LibraryImport(L)] internal static partial void zlink_version(int* major, int* minor, int* patch);
    [LibraryImport(L)] internal static partial int zlink_errno();
    [LibraryImport(L)] internal static partial byte* zlink_strerror(int errnum);
    [LibraryImport(L)] internal static partial byte* zlink_result_name(int value);

    // ---- framework: host
    [LibraryImport(L, StringMarshalling = StringMarshalling.Custom, StringMarshallingCustomType = typeof(Utf8Text))] internal static partial nint zlink_host_new(string name, int* result);
    [LibraryImport(L)] internal static partial int zlink_host_set_option(nint host, int option, long value);
    [LibraryImport(L)] internal static partial int zlink_host_get_option(nint host, int option, long* value);
    [LibraryImport(L, StringMarshalling = StringMarshalling.Custom, StringMarshallingCustomType = typeof(Utf8Text))] internal static partial int zlink_host_add_cs_server(nint host, string channel, string endpoint);
    [LibraryImport(L, StringMarshalling = StringMarshalling.Custom, StringMarshallingCustomType = typeof(Utf8Text))] internal static partial int zlink_host_add_cs_client(nint host, string channel, string endpoint);
    [LibraryImport(L, StringMarshalling = StringMarshalling.Custom, StringMarshallingCustomType = typeof(Utf8Text))] internal static partial int zlink_channel_set_option(nint host, string channel, int option, long value);
    [LibraryImport(L, StringMarshalling = StringMarshalling.Custom, StringMarshallingCustomType = typeof(Utf8Text))] internal static partial int zlink_channel_get_option(nint host, string channel, int option, long* value);
    [LibraryImport(L, StringMarshalling = StringMarshalling.Custom, StringMarshallingCustomType = typeof(Utf8Text))] internal static partial int zlink_host_add_mesh_node(nint host, string mesh, byte* rid, nuint ridSize, string? listen);
    [LibraryImport(L, StringMarshalling = StringMarshalling.Custom, StringMarshallingCustomType = typeof(Utf8Text))] internal static partial int zlink_mesh_connect(nint host, string mesh, string endpoint, byte* rid, nuint ridSize);
    [LibraryImport(L, StringMarshalling = StringMarshalling.Custom, StringMarshallingCustomType = typeof(Utf8Text))] internal static partial int zlink_mesh_set_option(nint host, string mesh, int option, long value);
    [LibraryImport(L, StringMarshalling = StringMarshalling.Custom, StringMarshallingCustomType = typeof(Utf8Text))] internal static partial int zlink_mesh_get_option(nint host, string mesh, int option, long* value);
    [LibraryImport(L, StringMarshalling = StringMarshalling.Custom, StringMarshallingCustomType = typeof(Utf8Text))] internal static partial int zlink_mesh_add_channel_client(nint host, string mesh, string channel);
    [LibraryImport(L, StringMarshalling = StringMarshalling.Custom, StringMarshallingCustomType = typeof(Utf8Text))] internal static partial int zlink_mesh_add_channel_server(nint host, string mesh, string channel, int weight);
    [LibraryImport(L, StringMarshalling = StringMarshalling.Custom, StringMarshallingCustomType = typeof(Utf8Text))] internal static partial int zlink_mesh_set_weight(nint host, string mesh, string channel, int weight);
    [LibraryImport(L, StringMarshalling = StringMarshalling.Custom, StringMarshallingCustomType = typeof(Utf8Text))] internal static partial int zlink_host_endpoint(nint host, string name, byte* buf, nuint size);
    [LibraryImport(L, StringMarshalling = StringMarshalling.Custom, StringMarshallingCustomType = typeof(Utf8Text))] internal static partial int zlink_mesh_ready_peers(nint host, string mesh, int* result);
    [LibraryImport(L, StringMarshalling = StringMarshalling.Custom, StringMarshallingCustomType = typeof(Utf8Text))] internal static partial int zlink_host_add_handler(nint host, int owner, string ownerName, int kind, string packet, delegate* unmanaged<nint, nint, void> fn, nint user);
    [LibraryImport(L)] internal static partial int zlink_host_start(nint host);
    [LibraryImport(L)] internal static partial int zlink_host_shutdown(nint host, long deadline);
    [LibraryImport(L)] internal static partial int zlink_host_destroy(nint host);
    [LibraryImport(L)] internal static partial int zlink_host_state(nint host);
    [LibraryImport(L)] internal static partial int zlink_host_status(nint host, NHostStatus* status);
    [LibraryImport(L)] internal static partial int zlink_host_capacity(nint host, NHostCapacity* capacity);
    [LibraryImport(L, StringMarshalling = StringMarshalling.Custom, StringMarshallingCustomType = typeof(Utf8Text))] internal static partial int zlink_host_owner_status(nint host, int owner, string ownerName, NOwnerStatus* status);
    [LibraryImport(L)] internal static partial int zlink_host_reset_metrics(nint host);
    [LibraryImport(L, StringMarshalling = StringMarshalling.Custom, StringMarshallingCustomType = typeof(Utf8Text))] internal static partial int zlink_host_metric(nint host, string name, string? labels, long* value);

    // ---- framework: calls
    [LibraryImport(L, StringMarshalling = StringMarshalling.Custom, StringMarshallingCustomType = typeof(Utf8Text))] internal static partial nint zlink_call_send_to_channel(nint host, string channel, int* result);
    [LibraryImport(L, StringMarshalling = StringMarshalling.Custom, StringMarshallingCustomType = typeof(Utf8Text))] internal static partial nint zlink_call_request_to_channel(nint host, string channel, int* result);
    [LibraryImport(L, StringMarshalling = StringMarshalling.Custom, StringMarshallingCustomType = typeof(Utf8Text))] internal static partial nint zlink_call_send_to_node(nint host, string mesh, byte* rid, nuint ridSize, int* result);
    [LibraryImport(L, StringMarshalling = StringMarshalling.Custom, StringMarshallingCustomType = typeof(Utf8Text))] internal static partial nint zlink_call_request_to_node(nint host, string mesh, byte* rid, nuint ridSize, int* result);
    [LibraryImport(L, StringMarshalling = StringMarshalling.Custom, StringMarshallingCustomType = typeof(Utf8Text))] internal static partial int zlink_call_set_payload(nint call, string packet, string? contentType, byte* data, nuint size);
    [LibraryImport(L)] internal static partial int zlink_call_set_timeout(nint call, long timeout);
    [LibraryImport(L, StringMarshalling = StringMarshalling.Custom, StringMarshallingCustomType = typeof(Utf8Text))] internal static partial int zlink_call_set_metadata(nint call, string key, string value);
    [LibraryImport(L)] internal static partial int zlink_call_start(nint call, delegate* unmanaged<nint, NOutcome*, nint, void> fn, nint user);
    [LibraryImport(L)] internal static partial int zlink_call_start_held(nint call, delegate* unmanaged<nint, NOutcome*, nint, void> fn, nint user);
    [LibraryImport(L)] internal static partial int zlink_call_callback_done(nint call);
    [LibraryImport(L)] internal static partial int zlink_call_wait(nint call, NOutcome* outcome);
    [LibraryImport(L)] internal static partial int zlink_call_yield(nint call, delegate* unmanaged<nint, NOutcome*, nint, void> fn, nint user);
    [LibraryImport(L)] internal static partial int zlink_call_cancel(nint call);
    [LibraryImport(L)] internal static partial int zlink_call_release(nint call);

    // ---- framework: turns
    [LibraryImport(L)] internal static partial int zlink_turn_kind(nint turn);
    [LibraryImport(L)] internal static partial byte* zlink_turn_packet(nint turn);
    [LibraryImport(L)] internal static partial byte* zlink_turn_content_type(nint turn);
    [LibraryImport(L)] internal static partial byte* zlink_turn_payload(nint turn, nuint* size);
    [LibraryImport(L, StringMarshalling = StringMarshalling.Custom, StringMarshallingCustomType = typeof(Utf8Text))] internal static partial byte* zlink_turn_metadata(nint turn, string key);
    [LibraryImport(L)] internal static partial int zlink_turn_source(nint turn, NRoutingId* rid);
    [LibraryImport(L)] internal static partial ulong zlink_turn_sequence(nint turn);
    [LibraryImport(L)] internal static partial nint zlink_turn_reply(nint turn, int* result);
    [LibraryImport(L, StringMarshalling = StringMarshalling.Custom, StringMarshallingCustomType = typeof(Utf8Text))] internal static partial nint zlink_turn_reply_error(nint turn, int kind, string message, int* result);
    [LibraryImport(L, StringMarshalling = StringMarshalling.Custom, StringMarshallingCustomType = typeof(Utf8Text))] internal static partial int zlink_turn_end(nint turn, int failed, string? message);
    [LibraryImport(L, StringMarshalling = StringMarshalling.Custom, StringMarshallingCustomType = typeof(Utf8Text))] internal static partial int zlink_turn_respond(nint turn, string packet, string? contentType, byte* data, nuint size);

    // ---- framework: runtime context
    [LibraryImport(L)] internal static partial int zlink_runtime_context_enter();
    [LibraryImport(L)] internal static partial int zlink_runtime_context_leave();
    [LibraryImport(L)] internal static partial int zlink_in_runtime_context();

    // ---- Core
    [LibraryImport(L)] internal static partial nint zlink_ctx_new();
    [LibraryImport(L)] internal static partial int zlink_ctx_shutdown(nint ctx);
    [LibraryImport(L)] internal static partial int zlink_ctx_term(nint ctx);
    [LibraryImport(L)] internal static partial nint zlink_socket(nint ctx, int type);
    [LibraryImport(L)] internal static partial int zlink_close(nint socket);
    [LibraryImport(L)] internal static partial int zlink_setsockopt(nint socket, int option, void* value, nuint size);
    [LibraryImport(L)] internal static partial int zlink_getsockopt(nint socket, int option, void* value, nuint* size);
    [LibraryImport(L)] internal static partial int zlink_set_routing_id(nint socket, byte* id, nuint size);
    [LibraryImport(L, StringMarshalling = StringMarshalling.Custom, StringMarshallingCustomType = typeof(Utf8Text))] internal static partial int zlink_bind(nint socket, string endpoint);
    [LibraryImport(L, StringMarshalling = StringMarshalling.Custom, StringMarshallingCustomType = typeof(Utf8Text))] internal static partial int zlink_connect(nint socket, string endpoint);
    [LibraryImport(L)] internal static partial int zlink_msg_init_size(NMsg* msg, nuint size);
    [LibraryImport(L)] internal static partial int zlink_msg_close(NMsg* msg);
    [LibraryImport(L)] internal static partial void* zlink_msg_data(NMsg* msg);
    [LibraryImport(L)] internal static partial nuint zlink_msg_size(NMsg* msg);
    [LibraryImport(L)] internal static partial void zlink_multipart_close(NMsg* parts, nuint n);
    [LibraryImport(L)] internal static partial int zlink_send(nint socket, NMsg* parts, nuint n, int flags, nint userContext, ulong* completionId);
    [LibraryImport(L)] internal static partial int zlink_send_rid(nint socket, NRoutingId* rid, NMsg* parts, nuint n, int flags, nint userContext, ulong* completionId);
    [LibraryImport(L)] internal static partial int zlink_recv(nint socket, NRoutingId** rid, NMsg* parts, nuint cap, nuint* count, int flags);
    [LibraryImport(L)] internal static partial int zlink_completion_recv(nint socket, NCompletion* record, int flags);
    [LibraryImport(L)] internal static partial void zlink_completion_close(NCompletion* record);
    [LibraryImport(L)] internal static partial int zlink_request(nint socket, NRoutingId* rid, NMsg* parts, nuint n, int flags, uint timeoutMs, nint userContext, ulong* completionId);
    [LibraryImport(L)] internal static partial int zlink_reply_submit(nint router, NRoutingId* srcRid, ulong token, int error, NMsg* parts, nuint n, int flags, nint userContext, ulong* completionId);
    [LibraryImport(L)] internal static partial int zlink_router_recv(nint socket, NRoutingId** rid, ulong* token, NMsg* parts, nuint cap, nuint* count, int flags);
    [LibraryImport(L)] internal static partial int zlink_poll(NPollItem* items, int count, nint timeoutMs, int* error);
    [LibraryImport(L)] internal static partial nint zlink_poller_new();
    [LibraryImport(L)] internal static partial int zlink_poller_destroy(nint* poller);
    [LibraryImport(L)] internal static partial int zlink_poller_size(nint poller, int* error);
    [LibraryImport(L)] internal static partial int zlink_poller_add(nint poller, nint source, nint user, short events);
    [LibraryImport(L)] internal static partial int zlink_poller_modify(nint poller, nint source, short events);
    [LibraryImport(L)] internal static partial int zlink_poller_remove(nint poller, nint source);
    [LibraryImport(L)] internal static partial int zlink_poller_add_fd(nint poller, int fd, nint user, short events);
    [LibraryImport(L)] internal static partial int zlink_poller_modify_fd(nint poller, int fd, short events);
    [LibraryImport(L)] internal static partial int zlink_poller_remove_fd(nint poller, int fd);
    [LibraryImport(L)] internal static partial int zlink_poller_add_timer(nint poller, nint timer, nint user);
    [LibraryImport(L)] internal static partial int zlink_poller_remove_timer(nint poller, nint timer);
    [LibraryImport(L)] internal static partial int zlink_poller_wait(nint poller, NPollerEvent* events, int capacity, nint timeoutMs, int* error);
    [LibraryImport(L)] internal static partial nint zlink_timer_new();
    [LibraryImport(L)] internal static partial int zlink_timer_destroy(nint* timer);
    [LibraryImport(L)] internal static partial int zlink_timer_start(nint timer, ulong intervalNs, ulong repeat);
    [LibraryImport(L)] internal static partial int zlink_timer_stop(nint timer);
    [LibraryImport(L)] internal static partial int zlink_timer_recv(nint timer, ulong* count, int flags);

    internal static string? Str(byte* p) => p == null ? null : Marshal.PtrToStringUTF8((nint)p);
}

/// <summary>The last string one call site decoded, with its UTF-8 bytes: a
/// packet name or content type that repeats (every reply of a benchmark, every
/// turn of one handler) is compared, not decoded and allocated again. The
/// pair is swapped as one immutable object, so any thread may use it.</summary>
internal sealed unsafe class Utf8Cache
{
    private sealed class Entry
    {
        internal readonly byte[] Bytes;
        internal readonly string Text;
        internal Entry(byte[] b, string t) { Bytes = b; Text = t; }
    }
    private Entry? _last;

    /// <summary>The NUL-terminated string at p, or null for NULL.</summary>
    internal string? Get(byte* p)
    {
        if (p == null) return null;
        var bytes = MemoryMarshal.CreateReadOnlySpanFromNullTerminated(p);
        var last = _last;
        if (last != null && bytes.SequenceEqual(last.Bytes)) return last.Text;
        if (bytes.Length > 256) return Encoding.UTF8.GetString(bytes);   // not worth keeping
        var text = Encoding.UTF8.GetString(bytes);
        _last = new Entry(bytes.ToArray(), text);
        return text;
    }
}
