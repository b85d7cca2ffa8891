// ScDispatch.cs — SC-18 (framework-contract.md §7 18, conformance/c/sc_dispatch.c):
// 4,096 in-flight operations fill A's dispatcher; one more is
// CapacityExceeded at once and never sent; a completed call whose
// continuation returned frees its slot. The variant "a callback blocked in
// user code keeps its slot" is checked as the C case does, through what a
// .NET user can block: the continuation of the call's ValueTask. The binding
// starts calls held (zlink_call_start_held) and runs a call's synchronous
// continuations inside the pool work item that completes it, before
// zlink_call_callback_done (Call.cs), so a blocked continuation keeps its
// slot and the next request is CapacityExceeded.
using System;
using System.Threading;
using System.Threading.Tasks;

namespace ZLink.Conformance;

internal static class ScDispatch
{
    public static void Sc18(CaseParams p)
    {
        foreach (var tr in p.Strings("transports"))
        {
            if (tr != "inproc" && tr != "tcp") throw new CheckFailed("unknown transport " + tr);
            Cap(tr);
        }
    }

    /// <summary>Runs the case on tr.</summary>
    private static void Cap(string tr)
    {
        const int cap = 4096;   // ZLINK_DISPATCHER_CAPACITY, read back from the status below
        using var b = new ScServer { Name = "B", MaxJobs = 2 * cap }.Open(Mode.Mesh, tr, "sc18");
        b.Reply = (int)ReplyMode.Hold;
        using var a = new ScClient().Open(Mode.Mesh, b);
        Check.Eq((ulong)cap, a.H.Status.DispatcherCapacity, "dispatcher_capacity");
        Check.Eq(0UL, a.H.Status.DispatcherInUse, "dispatcher_in_use at the start");

        var calls = new RequestCall[cap + 1];
        var tasks = new Task<Reply>[cap + 1];
        int completed = 0;
        for (int i = 0; i < cap; i++)
        {
            calls[i] = a.Request("q" + i).Timeout(TimeSpan.FromSeconds(60));
            tasks[i] = calls[i].Async().AsTask();
            tasks[i].ContinueWith(_ => Interlocked.Increment(ref completed), TaskContinuationOptions.ExecuteSynchronously);
        }
        Check.Eventually(() => b.Held == cap, 20000, "all 4,096 requests pending at B");
        Check.Eq((ulong)cap, a.H.Status.DispatcherInUse, "dispatcher_in_use full");
        Check.Eq((ulong)cap, a.H.Status.RequestsInflight, "requests in flight");
        Check.Eq(0, Volatile.Read(ref completed), "none completed");

        // One more: CapacityExceeded at once, nothing sent; one-ways count too.
        long t0 = Done.Clock.ElapsedMilliseconds;
        using (var over = a.Request("over1"))
        {
            var t = over.Async().AsTask();
            Check.True(t.IsCompleted, "the refusal is immediate (the ValueTask is already faulted)");
            Check.Eq("CapacityExceeded", Outcome.Name(t), "request #4,097");
        }
        Check.True(Done.Clock.ElapsedMilliseconds - t0 <= 50L * Program.TimeoutMult, "refused within 50 ms");
        using (var overW = a.Send("over1")) Check.Eq("CapacityExceeded", Outcome.Of(() => overW.Submit()), "a one-way over the cap");

        // Release one reply and let its continuation return: a new request is accepted.
        Check.True(b.ReleaseHeld("q0"), "q0's reply released");
        Check.Eq("q0", System.Text.Encoding.UTF8.GetString(Check.Wait(tasks[0], 5000, "q0").Payload), "q0's reply");
        Check.Eventually(() => Volatile.Read(ref completed) == 1, 5000, "q0's continuation returned");
        Check.Eventually(() => a.H.Status.DispatcherInUse == cap - 1, 2000, "q0's slot freed");
        calls[cap] = a.Request("again").Timeout(TimeSpan.FromSeconds(60));
        tasks[cap] = calls[cap].Async().AsTask();
        Check.True(!tasks[cap].IsCompleted, "'again' accepted");
        Check.Eq((ulong)cap, a.H.Status.DispatcherInUse, "full again");

        // B never saw the refused ones: "again" came after them on the same connection.
        Check.Eventually(() => b.Rec.Has("again") == 1, 5000, "'again' reached B");
        Check.Eq(0, b.Rec.Has("over1"), "over1 never reached B");

        // The variant: cap - 1 pending and one continuation blocked in user code.
        using var block = new ManualResetEventSlim(false);
        int blocked = 0;
        var q1Done = tasks[1].ContinueWith(_ => { Volatile.Write(ref blocked, 1); block.Wait(); }, TaskContinuationOptions.ExecuteSynchronously);
        try
        {
            Check.True(b.ReleaseHeld("q1"), "q1's reply released");
            Check.Eventually(() => Volatile.Read(ref blocked) == 1, 5000, "q1's continuation blocked in user code");
            ulong inUse = a.H.Status.DispatcherInUse;
            string next;
            using (var over2 = a.Request("over2").Timeout(TimeSpan.FromSeconds(60)))
            {
                var t = over2.Async().AsTask();
                next = t.IsCompleted ? Outcome.Name(t) : "accepted";
                over2.Cancel();
            }
            Check.Eq((ulong)cap, inUse, "dispatcher_in_use while q1's continuation is blocked in user code");
            Check.Eq("CapacityExceeded", next, "the next request while q1's continuation is blocked");
        }
        finally { block.Set(); }
        Check.Wait(q1Done, 5000, "q1's continuation unblocked");

        // The rest end with A's shutdown, each once.
        a.H.Shutdown(TimeSpan.FromMilliseconds(100));
        for (int i = 2; i <= cap; i++)
        {
            Check.Failure(tasks[i], 5000, "call " + i);
            Check.Eq("ShuttingDown", Outcome.Name(tasks[i]), "call " + i + " at A's shutdown");
        }
        Check.Eq(0UL, a.H.Status.DispatcherInUse, "the dispatcher drained");
        foreach (var c in calls) c?.Dispose();
    }
}
