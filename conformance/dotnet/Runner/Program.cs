// Program.cs — the .NET conformance runner (doc/conformance.md, "The runner
// protocol"):
//   runner [-v] MANIFEST [ID...]   run the cases, one process each
//   runner --check MANIFEST        the manifest against this runner
//   runner --list MANIFEST         the manifest's ids
// stdout carries only CASE and ERROR lines, in manifest order; exit 0 when
// every case run passed, 1 when one failed or is missing, 2 for a usage or
// manifest error or a disagreement between manifest and registry.
//
// Each case runs in a child process (the same program with --run-case ID
// MANIFEST): the case passes when the child prints "CONF-DONE <ms>" and
// exits 0 within 60 s x ZT_TIMEOUT_MULT (a failure bound only).
using System;
using System.Collections.Generic;
using System.Diagnostics;
using System.IO;
using System.Linq;
using System.Text;
using System.Text.Json;
using System.Text.RegularExpressions;

namespace ZLink.Conformance;

internal sealed record Entry(string Id, JsonElement Params, JsonElement? Absent);

internal static class Program
{
    private const int ExitOk = 0, ExitCases = 1, ExitUsage = 2;

    private static int Usage()
    {
        Console.Error.WriteLine("usage: runner [-v] MANIFEST [CASE-ID ...]\n       runner --check MANIFEST\n       runner --list MANIFEST");
        return ExitUsage;
    }

    private static void Error(string text) => Console.Out.WriteLine("ERROR " + text);

    private static readonly string[] Members = { "id", "title", "seed", "params", "later", "absent" };

    internal static List<Entry>? Load(string path, bool report)
    {
        int problems = 0;
        void Bad(string t) { problems++; if (report) Error(t); }
        JsonDocument doc;
        try { doc = JsonDocument.Parse(File.ReadAllText(path)); }
        catch (Exception e) { if (report) Error(path + ": " + e.Message); return null; }
        var root = doc.RootElement;
        if (root.ValueKind != JsonValueKind.Object || !root.TryGetProperty("cases", out var cases) || cases.ValueKind != JsonValueKind.Array)
        {
            if (report) Error(path + ": the top level must be an object with a \"cases\" array");
            return null;
        }
        foreach (var p in root.EnumerateObject())
            if (p.Name != "cases" && p.Name != "about") Bad($"{path}: unknown top-level member \"{p.Name}\"");
        var list = new List<Entry>();
        int i = 0;
        foreach (var c in cases.EnumerateArray())
        {
            i++;
            if (c.ValueKind != JsonValueKind.Object) { Bad($"{path}: case {i} is not an object"); continue; }
            if (!c.TryGetProperty("id", out var id) || id.ValueKind != JsonValueKind.String || !Regex.IsMatch(id.GetString()!, "^[A-Z]+-[0-9]+$"))
            { Bad($"{path}: case {i} has no id of the form XX-00"); continue; }
            string sid = id.GetString()!;
            if (!NonEmpty(c, "title") || !NonEmpty(c, "seed")) Bad($"{path}: case {sid} needs a non-empty \"title\" and \"seed\"");
            if (!c.TryGetProperty("params", out var prm) || prm.ValueKind != JsonValueKind.Object) Bad($"{path}: case {sid} needs a \"params\" object");
            if (c.TryGetProperty("later", out var later))
            {
                if (later.ValueKind != JsonValueKind.Array || later.GetArrayLength() == 0) Bad($"{path}: case {sid}: \"later\" must be a non-empty array");
                else
                {
                    int k = 0;
                    foreach (var e in later.EnumerateArray())
                    {
                        k++;
                        bool ok = e.ValueKind == JsonValueKind.Object && e.EnumerateObject().Count() == 2 && NonEmpty(e, "part") && NonEmpty(e, "needs");
                        if (!ok) Bad($"{path}: case {sid}: \"later\" entry {k} needs exactly a non-empty \"part\" and \"needs\"");
                    }
                }
            }
            JsonElement? absent = null;
            if (c.TryGetProperty("absent", out var ab))
            {
                if (ab.ValueKind != JsonValueKind.Object || !ab.EnumerateObject().Any() ||
                    ab.EnumerateObject().Any(p => p.Value.ValueKind != JsonValueKind.String || p.Value.GetString()!.Length == 0))
                    Bad($"{path}: case {sid}: \"absent\" must be a non-empty object of language -> reason");
                else absent = ab.Clone();
            }
            foreach (var p in c.EnumerateObject())
                if (!Members.Contains(p.Name)) Bad($"{path}: case {sid} has an unknown member \"{p.Name}\"");
            if (list.Any(e => e.Id == sid)) Bad($"{path}: duplicate case id {sid}");
            list.Add(new Entry(sid, c.TryGetProperty("params", out var pp) ? pp.Clone() : default, absent));
        }
        if (list.Count == 0 && problems == 0) Bad($"{path}: the manifest lists no case");
        return problems == 0 ? list : null;
    }

    private static bool NonEmpty(JsonElement o, string key) =>
        o.TryGetProperty(key, out var v) && v.ValueKind == JsonValueKind.String && v.GetString()!.Length > 0;

    public static int Main(string[] args)
    {
        if (args.Length == 3 && args[0] == "--run-case") return RunHere(args[1], args[2]);
        bool verbose = false, check = false, list = false;
        int i = 0;
        for (; i < args.Length && args[i].StartsWith("-"); i++)
        {
            if (args[i] == "-v") verbose = true;
            else if (args[i] == "--check") check = true;
            else if (args[i] == "--list") list = true;
            else return Usage();
        }
        if (i >= args.Length || (check && list) || ((check || list) && args.Length - i != 1)) return Usage();
        string path = Path.GetFullPath(args[i++]);
        var wantedIds = args.Skip(i).ToList();
        var m = Load(path, true);
        if (m == null) return ExitUsage;
        if (list)
        {
            foreach (var e in m) Console.Out.WriteLine(e.Id);
            return ExitOk;
        }
        int problems = 0;
        foreach (var id in Registry.Ids)
            if (!m.Any(e => e.Id == id))
            { Error($"case {id} is implemented by the .NET runner but not in the manifest"); problems++; }
        foreach (var id in wantedIds)
            if (!m.Any(e => e.Id == id)) { Error($"case {id} is not in the manifest"); problems++; }
        int pass = 0, fail = 0, missing = 0, absent = 0;
        foreach (var e in m)
        {
            if (wantedIds.Count > 0 && !wantedIds.Contains(e.Id)) continue;
            if (!Registry.Has(e.Id))
            {
                Console.Out.WriteLine($"CASE {e.Id} missing not implemented by the .NET runner");
                missing++;
                continue;
            }
            if (check) continue;
            var (status, detail, output) = RunChild(e.Id, path);
            Console.Out.WriteLine($"CASE {e.Id} {status} {detail}");
            Console.Out.Flush();
            if (status != "pass" || verbose)
                foreach (var line in output.Split('\n', StringSplitOptions.RemoveEmptyEntries))
                    Console.Error.WriteLine($"  | {line}");
            if (status == "pass") pass++;
            else if (status == "absent-by-seed") absent++;
            else fail++;
        }
        if (check)
            Console.Error.WriteLine($"conformance (dotnet): {m.Count} cases in {path}, {m.Count - missing} implemented, {missing} missing, {problems} error(s)");
        else
            Console.Error.WriteLine($"conformance (dotnet): {pass} pass, {fail} fail, {missing} missing, {absent} absent-by-seed, {problems} error(s)");
        if (problems > 0) return ExitUsage;
        return fail + missing > 0 ? ExitCases : ExitOk;
    }

    internal static int TimeoutMult =>
        int.TryParse(Environment.GetEnvironmentVariable("ZT_TIMEOUT_MULT"), out int k) && k > 0 ? k : 1;

    private static (string status, string detail, string output) RunChild(string id, string path)
    {
        var psi = new ProcessStartInfo(Environment.ProcessPath!)
        {
            RedirectStandardOutput = true,
            RedirectStandardError = true,
            UseShellExecute = false,
        };
        string self = typeof(Program).Assembly.Location;
        if (!Path.GetFileNameWithoutExtension(Environment.ProcessPath!).Equals(Path.GetFileNameWithoutExtension(self), StringComparison.Ordinal))
            psi.ArgumentList.Add(self);   // run through the dotnet host
        psi.ArgumentList.Add("--run-case");
        psi.ArgumentList.Add(id);
        psi.ArgumentList.Add(path);
        var sw = Stopwatch.StartNew();
        using var p = Process.Start(psi)!;
        var outText = new StringBuilder();
        p.OutputDataReceived += (_, a) => { if (a.Data != null) lock (outText) outText.AppendLine(a.Data); };
        p.ErrorDataReceived += (_, a) => { if (a.Data != null) lock (outText) outText.AppendLine(a.Data); };
        p.BeginOutputReadLine();
        p.BeginErrorReadLine();
        int limitMs = 60000 * TimeoutMult;
        if (!p.WaitForExit(limitMs))
        {
            try { p.Kill(true); } catch (InvalidOperationException) { }
            p.WaitForExit();
            return ("fail", $"timeout after {limitMs / 1000} s", outText.ToString());
        }
        p.WaitForExit();
        string output;
        lock (outText) output = outText.ToString();
        var lines = output.Split('\n').Select(l => l.TrimEnd('\r')).ToArray();
        var done = lines.LastOrDefault(l => l.StartsWith("CONF-DONE "));
        var absentLine = lines.LastOrDefault(l => l.StartsWith("CONF-ABSENT "));
        var failed = lines.FirstOrDefault(l => l.StartsWith("CONF-FAIL "));
        if (p.ExitCode == 0 && absentLine != null) return ("absent-by-seed", absentLine.Substring(12), output);
        if (p.ExitCode == 0 && done != null) return ("pass", $"{sw.ElapsedMilliseconds} ms", output);
        if (failed != null) return ("fail", failed.Substring(10), output);
        return ("fail", $"exit {p.ExitCode} without a completion line", output);
    }

    private static int RunHere(string id, string path)
    {
        var m = Load(path, false);
        var e = m?.FirstOrDefault(x => x.Id == id);
        if (e == null) { Console.Out.WriteLine("CONF-FAIL the manifest does not list " + id); return 1; }
        var sw = Stopwatch.StartNew();
        try
        {
            string? absent = Registry.Run(id, new CaseParams(e.Params), e.Absent);
            if (absent != null) { Console.Out.WriteLine("CONF-ABSENT " + absent); Console.Out.Flush(); Environment.Exit(0); }
            Console.Out.WriteLine($"CONF-DONE {sw.ElapsedMilliseconds}");
            Console.Out.Flush();
            Environment.Exit(0);   // do not wait for finalizers of what a case left
            return 0;
        }
        catch (Exception ex)
        {
            string where = "";
            var st = new StackTrace(ex, true);
            var frame = st.GetFrames().FirstOrDefault(f => f.GetFileName() != null && !f.GetFileName()!.EndsWith("Check.cs"));
            if (frame != null) where = $"{Path.GetFileName(frame.GetFileName())}:{frame.GetFileLineNumber()}: ";
            Console.Out.WriteLine("CONF-FAIL " + where + (ex is CheckFailed ? "" : ex.GetType().Name + ": ") + ex.Message.Replace('\n', ' '));
            Console.Error.WriteLine(ex.ToString());
            Console.Out.Flush();
            Environment.Exit(1);
            return 1;
        }
    }
}

/// <summary>A case's parameters (its manifest entry's "params"); a missing one fails the case.</summary>
internal sealed class CaseParams
{
    private readonly JsonElement _p;
    public CaseParams(JsonElement p) { _p = p; }
    public long Int(string key) =>
        _p.ValueKind == JsonValueKind.Object && _p.TryGetProperty(key, out var v) && v.ValueKind == JsonValueKind.Number
            ? v.GetInt64() : throw new CheckFailed($"parameter \"{key}\" is missing or not an integer");
    public string[] Strings(string key)
    {
        if (_p.ValueKind != JsonValueKind.Object || !_p.TryGetProperty(key, out var v) || v.ValueKind != JsonValueKind.Array || v.GetArrayLength() == 0)
            throw new CheckFailed($"parameter \"{key}\" is missing or not a non-empty array");
        return v.EnumerateArray().Select(x => x.ValueKind == JsonValueKind.String ? x.GetString()! : throw new CheckFailed($"parameter \"{key}\" holds a non-string")).ToArray();
    }
}
