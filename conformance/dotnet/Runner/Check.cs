// Check.cs — the checks of a case: the first failed one ends the case's
// process with "file:line: what" (Program.RunHere finds the line).
using System;
using System.Threading;
using System.Threading.Tasks;

namespace ZLink.Conformance;

internal sealed class CheckFailed : Exception
{
    public CheckFailed(string what) : base(what) { }
}

internal static class Check
{
    public static void True(bool cond, string what) { if (!cond) throw new CheckFailed(what); }
    public static void Eq<T>(T want, T got, string what)
    {
        if (!Equals(want, got)) throw new CheckFailed($"{what}: got {got}, expected {want}");
    }

    /// <summary>Failure bound of a wait, scaled by ZT_TIMEOUT_MULT.</summary>
    public static TimeSpan Bound(int ms) => TimeSpan.FromMilliseconds((long)ms * Program.TimeoutMult);

    /// <summary>Waits for t; fails the case after ms (scaled).</summary>
    public static T Wait<T>(Task<T> t, int ms, string what)
    {
        if (!t.Wait(Bound(ms))) throw new CheckFailed($"{what}: did not happen within {ms} ms (x{Program.TimeoutMult})");
        return t.Result;
    }
    public static void Wait(Task t, int ms, string what)
    {
        try { if (!t.Wait(Bound(ms))) throw new CheckFailed($"{what}: did not happen within {ms} ms (x{Program.TimeoutMult})"); }
        catch (AggregateException) { /* the caller inspects the task */ }
    }

    /// <summary>The exception a faulted or cancelled task ended with (fails if it succeeded).</summary>
    public static Exception Failure(Task t, int ms, string what)
    {
        Wait(t, ms, what);
        if (t.IsCompletedSuccessfully) throw new CheckFailed($"{what}: succeeded, expected a failure");
        try { t.GetAwaiter().GetResult(); }
        catch (Exception e) { return e; }
        throw new CheckFailed(what + ": no exception");
    }

    public static ErrorKind Kind(Task t, int ms, string what)
    {
        var e = Failure(t, ms, what);
        return e is ZLinkFrameworkException f ? f.Kind : throw new CheckFailed($"{what}: {e.GetType().Name}: {e.Message}, expected a framework error");
    }

    /// <summary>Polls cond until true or the (scaled) bound: for states the API
    /// shows only as snapshots (as ZT_EVENTUALLY in the C runner).</summary>
    public static void Eventually(Func<bool> cond, int ms, string what)
    {
        var until = DateTime.UtcNow + Bound(ms);
        while (!cond())
        {
            if (DateTime.UtcNow > until) throw new CheckFailed($"{what}: not so within {ms} ms (x{Program.TimeoutMult})");
            Thread.Sleep(1);
        }
    }
}
