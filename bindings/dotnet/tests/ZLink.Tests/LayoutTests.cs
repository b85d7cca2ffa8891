using System;
using System.Collections.Generic;
using System.IO;
using System.Linq;
using System.Reflection;
using System.Runtime.CompilerServices;
using System.Runtime.InteropServices;
using System.Text.Json;
using Xunit;

namespace ZLink.Tests;

/// <summary>Every struct the binding marshals against //abi:layout_json (ZLINK_LAYOUT_JSON:
/// sizeof, alignment, each field's offset and size and the struct_size convention, as the
/// C compiler computed them from the public header).</summary>
public class LayoutTests
{
    /// <summary>C struct -> the binding's struct. Every N* struct of the binding is listed
    /// (Every_marshalled_struct_is_listed).</summary>
    private static readonly (string C, Type T)[] Marshalled =
    {
        ("zlink_outcome_t", typeof(NOutcome)),
        ("zlink_host_status_t", typeof(NHostStatus)),
        ("zlink_host_capacity_t", typeof(NHostCapacity)),
        ("zlink_owner_status_t", typeof(NOwnerStatus)),
        ("zlink_routing_id_t", typeof(NRoutingId)),
        ("zlink_completion_t", typeof(NCompletion)),
        ("zlink_msg_t", typeof(NMsg)),
        ("zlink_poller_event_t", typeof(NPollerEvent)),
        ("zlink_pollitem_t", typeof(NPollItem)),
        // CoreFlow.cs: the socket monitor
        ("zlink_monitor_config_t", typeof(NMonitorConfig)),
        ("zlink_monitor_event_t", typeof(NMonitorEvent)),
        ("zlink_monitor_status_t", typeof(NMonitorStatus)),
    };

    /// <summary>Structs the binding keeps as opaque storage of the right size and alignment
    /// (the C struct is a union the binding never reads).</summary>
    private static readonly HashSet<string> Opaque = new() { "zlink_msg_t" };

    public static IEnumerable<object[]> Structs() => Marshalled.Select(m => new object[] { m.C, m.T });

    private static JsonElement Layout()
    {
        string path = Environment.GetEnvironmentVariable("ZLINK_LAYOUT_JSON") ?? throw new InvalidOperationException("ZLINK_LAYOUT_JSON is not set");
        return JsonDocument.Parse(File.ReadAllText(path)).RootElement;
    }

    private static int SizeOfField(FieldInfo f)
    {
        var fixedBuf = f.GetCustomAttribute<FixedBufferAttribute>();
        if (fixedBuf != null) return fixedBuf.Length * Marshal.SizeOf(fixedBuf.ElementType);
        if (f.FieldType.IsPointer) return IntPtr.Size;
        return Marshal.SizeOf(f.FieldType);
    }

    private static int AlignOf(Type t)
    {
        if (t.IsPointer || t == typeof(nint) || t == typeof(nuint)) return IntPtr.Size;
        if (t.IsPrimitive || t.IsEnum) return Marshal.SizeOf(t.IsEnum ? Enum.GetUnderlyingType(t) : t);
        int a = 1;
        foreach (var f in t.GetFields(BindingFlags.Instance | BindingFlags.Public | BindingFlags.NonPublic))
        {
            var fixedBuf = f.GetCustomAttribute<FixedBufferAttribute>();
            a = Math.Max(a, fixedBuf != null ? AlignOf(fixedBuf.ElementType) : AlignOf(f.FieldType));
        }
        return a;
    }

    [Theory]
    [MemberData(nameof(Structs))]
    public void Matches_the_header(string cName, Type t)
    {
        var s = Layout().GetProperty("structs").GetProperty(cName);
        Assert.Equal(s.GetProperty("size").GetInt32(), Marshal.SizeOf(t));
        Assert.Equal(s.GetProperty("align").GetInt32(), AlignOf(t));
        if (s.GetProperty("struct_size").ValueKind == JsonValueKind.Number)
            Assert.Equal(s.GetProperty("struct_size").GetInt32(), Marshal.SizeOf(t));   // what the binding stores
        if (Opaque.Contains(cName)) return;
        var managed = t.GetFields(BindingFlags.Instance | BindingFlags.Public).ToDictionary(f => f.Name);
        var cFields = s.GetProperty("fields").EnumerateArray().ToList();
        foreach (var f in cFields)
        {
            string name = f.GetProperty("name").GetString()!;
            Assert.False(name.Contains('.'), $"{cName}.{name}: a nested member the binding does not marshal");
            Assert.True(managed.TryGetValue(name, out var mf), $"{cName}.{name} has no field in {t.Name}");
            Assert.Equal(f.GetProperty("offset").GetInt32(), (int)Marshal.OffsetOf(t, name));
            Assert.Equal(f.GetProperty("size").GetInt32(), SizeOfField(mf!));
        }
        Assert.Equal(cFields.Count, managed.Count);
    }

    [Fact]
    public void Every_marshalled_struct_is_listed()
    {
        var listed = Marshalled.Select(m => m.T).ToHashSet();
        var structs = typeof(Host).Assembly.GetTypes()
            .Where(x => x.IsValueType && !x.IsEnum && x.Namespace == "ZLink" && x.IsLayoutSequential && x.Name.StartsWith("N", StringComparison.Ordinal)
                        && x.GetCustomAttribute<CompilerGeneratedAttribute>() == null && !x.IsNested);
        foreach (var x in structs) Assert.Contains(x, listed);
        var names = Layout().GetProperty("structs");
        foreach (var (c, _) in Marshalled) Assert.True(names.TryGetProperty(c, out _), c + " is not in layout.json");
    }
}
