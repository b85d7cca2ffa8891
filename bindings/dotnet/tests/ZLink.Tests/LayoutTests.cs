using System;
using System.Collections.Generic;
using System.IO;
using System.Runtime.InteropServices;
using System.Text.Json;
using Xunit;

namespace ZLink.Tests;

/// <summary>Every struct the binding marshals against the C header's sizeof/offsetof,
/// as printed by tests/layout_probe.c (ZLINK_LAYOUT_JSON).</summary>
public class LayoutTests
{
    public static IEnumerable<object[]> Structs() => new[]
    {
        new object[] { "zlink_outcome_t", typeof(NOutcome) },
        new object[] { "zlink_host_status_t", typeof(NHostStatus) },
        new object[] { "zlink_host_capacity_t", typeof(NHostCapacity) },
        new object[] { "zlink_owner_status_t", typeof(NOwnerStatus) },
        new object[] { "zlink_routing_id_t", typeof(NRoutingId) },
        new object[] { "zlink_msg_t", typeof(NMsg) },
        new object[] { "zlink_poller_event_t", typeof(NPollerEvent) },
        new object[] { "zlink_pollitem_t", typeof(NPollItem) },
    };

    [Theory]
    [MemberData(nameof(Structs))]
    public void Matches_the_header(string cName, Type t)
    {
        string path = Environment.GetEnvironmentVariable("ZLINK_LAYOUT_JSON") ?? throw new InvalidOperationException("ZLINK_LAYOUT_JSON is not set");
        using var doc = JsonDocument.Parse(File.ReadAllText(path));
        var s = doc.RootElement.GetProperty(cName);
        Assert.Equal(s.GetProperty("size").GetInt32(), Marshal.SizeOf(t));
        int fields = 0;
        foreach (var f in s.GetProperty("fields").EnumerateObject())
        {
            Assert.Equal(f.Value.GetInt32(), (int)Marshal.OffsetOf(t, f.Name));
            fields++;
        }
        int managed = t.GetFields(System.Reflection.BindingFlags.Instance | System.Reflection.BindingFlags.Public).Length;
        if (cName != "zlink_msg_t") Assert.Equal(fields, managed);
    }
}
