// XCases.cs — framework-contract.md §7.3's language cases for .NET, over
// every transport of the case (conformance/c/x_terminators.c is the C
// reference):
//   X-1 the terminator surface: names and types by reflection; Async
//       completes a request once with its reply and a one-way once at
//       admission, before B's gated handler ran it; Submit does the same on
//       an application thread and is InvalidOperation at once in a handler
//       turn, in a completion's continuation inside a handler (the .NET
//       place of a completion callback: RuntimeContextSync) and on a thread
//       the case marked as a runtime context (RuntimeContextSync.Send), the
//       refused call staying unfinished; a second terminator is
//       InvalidOperation and changes nothing; Yield outside a Spot turn is
//       InvalidOperation everywhere, the code after its await never runs
//       and nothing is sent.
//   X-2 isolation: cancelling one of two requests in flight leaves the
//       other pending until its own reply; the late reply completes
//       nothing; outcomes never share storage; a completed call's outcome is
//       unchanged by cancels and second terminators.
using System;
using System.Linq;
using System.Reflection;
using System.Text;
using System.Threading;
using System.Threading.Tasks;

namespace ZLink.Conformance;

internal static class XCases
{
    private static byte[] U(string s) => Encoding.UTF8.GetBytes(s);
    private static string S(byte[] b) => Encoding.UTF8.GetString(b);

    private static void EachTransport(CaseParams p, Action<string> round)
    {
        foreach (var tr in p.Strings("transports"))
        {
            if (tr != "inproc" && tr != "tcp") throw new CheckFailed("unknown transport " + tr);
            round(tr);
        }
    }

    private static void Has(Type t, string name, Type returns, params Type[] args)
    {
        var m = t.GetMethods(BindingFlags.Public | BindingFlags.Instance)
                 .FirstOrDefault(x => x.Name == name && !x.IsGenericMethodDefinition && x.GetParameters().Select(p => p.ParameterType).SequenceEqual(args));
        Check.True(m != null, $"{t.Name}.{name}({string.Join(", ", args.Select(a => a.Name))}) exists");
        Check.Eq(returns, m!.ReturnType, $"{t.Name}.{name} returns");
    }

    private static void HasGeneric(Type t, string name, Type openReturn)
    {
        var m = t.GetMethods(BindingFlags.Public | BindingFlags.Instance).FirstOrDefault(x => x.Name == name && x.IsGenericMethodDefinition);
        Check.True(m != null, $"{t.Name}.{name}<T> exists");
        Check.Eq(openReturn, m!.ReturnType.GetGenericTypeDefinition(), $"{t.Name}.{name}<T> returns");
    }

    /// <summary>What B's "x" handler saw (all set before Finished completes).</summary>
    private sealed class InTurn
    {
        public string SubmitInHandler = "", YieldInHandler = "", SubmitInContinuation = "", YieldInContinuation = "";
        public bool MarkedInHandler, MarkedInContinuation, AfterYield;
        public readonly TaskCompletionSource Finished = new(TaskCreationOptions.RunContinuationsAsynchronously);
    }

    private static async ValueTask XHandler(Turn t, InTurn seen)
    {
        try
        {
            seen.MarkedInHandler = RuntimeContextSync.InRuntimeContext;
            using (var c = t.Host.SendToNode("m", "A").Payload("m", U("x-submit-h"))) seen.SubmitInHandler = Outcome.Of(() => c.Submit());
            using (var y = t.Host.SendToNode("m", "A").Payload("m", U("x-yield-h")))
            {
                try { await y.Yield(); seen.AfterYield = true; }
                catch (Exception e) { seen.YieldInHandler = Outcome.Of(e); }
            }
            // A completion's continuation: awaited here, it resumes on RuntimeContextSync.
            using (var first = t.Host.SendToNode("m", "A").Payload("m", U("x-first")))
                await first.Async();
            seen.MarkedInContinuation = RuntimeContextSync.InRuntimeContext;
            using (var c = t.Host.SendToNode("m", "A").Payload("m", U("x-submit-c"))) seen.SubmitInContinuation = Outcome.Of(() => c.Submit());
            using (var y = t.Host.SendToNode("m", "A").Payload("m", U("x-yield-c")))
            {
                try { await y.Yield(); seen.AfterYield = true; }
                catch (Exception e) { seen.YieldInContinuation = Outcome.Of(e); }
            }
        }
        finally { seen.Finished.TrySetResult(); }
    }

    public static void X1(CaseParams p)
    {
        // The surface: Async(CancellationToken) -> ValueTask / ValueTask<Reply>, Async<T> -> ValueTask<T>,
        // Submit() synchronous, Yield(ct) / Yield<T>(ct).
        Has(typeof(OneWayCall), "Async", typeof(ValueTask), typeof(CancellationToken));
        Has(typeof(OneWayCall), "Submit", typeof(void));
        Has(typeof(OneWayCall), "Yield", typeof(ValueTask), typeof(CancellationToken));
        Has(typeof(RequestCall), "Async", typeof(ValueTask<Reply>), typeof(CancellationToken));
        HasGeneric(typeof(RequestCall), "Async", typeof(ValueTask<>));
        Has(typeof(RequestCall), "Submit", typeof(Reply));
        HasGeneric(typeof(RequestCall), "Yield", typeof(ValueTask<>));
        Check.True(typeof(Call).GetInterfaces().Contains(typeof(IDisposable)), "Call is IDisposable");
        EachTransport(p, X1On);
    }

    private static void X1On(string tr)
    {
        using var b = new ScServer { Name = "B" }.Open(Mode.Mesh, tr, "x1");
        using var a = new ScClient().Open(Mode.Mesh, b);

        // Async: a request once with its reply; a one-way at admission, before B's gated handler ran it.
        using (var c = a.Request("r-async"))
            Check.Eq("r-async", S(Check.Wait(c.Async().AsTask(), 2000, "Async request").Payload), "Async request's reply");
        b.Gated = true;
        using (var c = a.Send("o-async"))
        {
            Check.Wait(c.Async().AsTask(), 2000, "Async one-way admitted");
            Check.Eq(0, b.Rec.Has("o-async"), "the one-way completed before B's handler ran it");
            Check.Eventually(() => b.Gate.Waiting == 1, 2000, "o-async at B's gate");
        }
        b.Gate.Open();
        Check.Eventually(() => b.Rec.Has("o-async") == 1, 2000, "o-async handled once");
        b.Gated = false;

        // Submit on an application thread: the same.
        using (var c = a.Request("r-sync")) Check.Eq("r-sync", S(c.Submit().Payload), "Submit request's reply");
        using (var c = a.Send("o-sync")) c.Submit();
        Check.Eventually(() => b.Rec.Has("o-sync") == 1, 2000, "o-sync handled once");

        // Submit on a thread the case marked as a runtime context: InvalidOperation at once,
        // the call unfinished; waited for (request) or started (one-way) afterwards, it completes.
        var rm = a.Request("r-marked");
        var om = a.Send("o-marked");
        bool marked = false;
        string rIn = "", oIn = "";
        long took = 0;
        RuntimeContextSync.Instance.Send(_ =>
        {
            marked = RuntimeContextSync.InRuntimeContext;
            var t0 = Done.Clock.ElapsedMilliseconds;
            rIn = Outcome.Of(() => rm.Submit());
            oIn = Outcome.Of(() => om.Submit());
            took = Done.Clock.ElapsedMilliseconds - t0;
        }, null);
        Check.True(marked, "RuntimeContextSync.Send marks its thread as a runtime context");
        Check.True(!RuntimeContextSync.InRuntimeContext, "the case's thread is unmarked again");
        Check.Eq("InvalidOperation", rIn, "Submit of a request on a marked thread");
        Check.Eq("InvalidOperation", oIn, "Submit of a one-way on a marked thread");
        Check.True(took < 100L * Program.TimeoutMult, $"refused at once ({took} ms)");
        Check.Eq("r-marked", S(rm.Submit().Payload), "the refused request, waited for afterwards");
        Check.Wait(om.Async().AsTask(), 2000, "the refused one-way, started afterwards");
        Check.Eventually(() => b.Rec.Has("o-marked") == 1, 2000, "o-marked handled once");
        Check.Eq(1, b.Rec.Has("r-marked"), "r-marked handled once");
        rm.Dispose(); om.Dispose();

        // In a handler turn and in a completion's continuation inside it: Submit and Yield refused,
        // the code after the Yield's await never runs.
        var seen = new InTurn();
        b.X = t => XHandler(t, seen);
        using (var c = a.H.SendToChannel("svc").Payload("x", new byte[] { 1 })) c.Submit();
        Check.Wait(seen.Finished.Task, 5000, "B's x handler finished");
        Check.True(seen.MarkedInHandler, "the handler turn is a runtime context");
        Check.True(seen.MarkedInContinuation, "the continuation inside the handler is a runtime context");
        Check.Eq("InvalidOperation", seen.SubmitInHandler, "Submit in a handler turn");
        Check.Eq("InvalidOperation", seen.SubmitInContinuation, "Submit in a completion's continuation");
        Check.Eq("InvalidOperation", seen.YieldInHandler, "Yield in a handler turn");
        Check.Eq("InvalidOperation", seen.YieldInContinuation, "Yield in a completion's continuation");
        Check.True(!seen.AfterYield, "the code after a refused Yield never ran");
        // The existing sync handler: Submit and Shutdown in a handler.
        using (var sy = a.H.SendToChannel("svc").Payload("sync", new byte[] { 1 })) sy.Submit();
        Check.Eventually(() => Volatile.Read(ref b.SyncRan) == 1, 2000, "sync handler ran");
        Check.Eq("InvalidOperation", b.SyncWait, "Submit in the sync handler");
        Check.Eq("InvalidOperation", b.SyncShutdown, "Shutdown in a handler");

        // A second terminator on a call in flight, a completed one-way and a completed request:
        // InvalidOperation, one record at B, the first outcome intact.
        b.Reply = (int)ReplyMode.Hold;
        var inflight = a.Request("r-second");
        var first = inflight.Async().AsTask();
        Check.Eventually(() => b.Held == 1, 2000, "r-second held at B");
        Check.Eq("InvalidOperation", Outcome.Name(inflight.Async().AsTask()), "Async on a call in flight");
        Check.Eq("InvalidOperation", Outcome.Of(() => inflight.Submit()), "Submit on a call in flight");
        Check.Eq("InvalidOperation", Outcome.Name(inflight.Yield<string>().AsTask()), "Yield on a call in flight");
        Check.True(!first.IsCompleted, "the call in flight is still pending");
        Check.True(b.ReleaseHeld("r-second"), "r-second's reply released");
        b.Reply = (int)ReplyMode.Now;
        Check.Eq("r-second", S(Check.Wait(first, 2000, "the first terminator").Payload), "the first terminator's reply");
        Check.Eq("InvalidOperation", Outcome.Name(inflight.Async().AsTask()), "Async on a completed request");
        Check.Eq("InvalidOperation", Outcome.Of(() => inflight.Submit()), "Submit on a completed request");
        Check.Eq("r-second", S(first.Result.Payload), "the first outcome intact");
        inflight.Dispose();
        var ow = a.Send("o-second");
        Check.Wait(ow.Async().AsTask(), 2000, "o-second admitted");
        Check.Eq("InvalidOperation", Outcome.Name(ow.Async().AsTask()), "Async on a completed one-way");
        Check.Eq("InvalidOperation", Outcome.Of(() => ow.Submit()), "Submit on a completed one-way");
        Check.Eq("InvalidOperation", Outcome.Name(ow.Yield().AsTask()), "Yield on a completed one-way");
        ow.Dispose();

        // Yield on an application thread: InvalidOperation, nothing sent.
        Check.Eq("InvalidOperation", Outcome.Name(a.Request("y-r").Yield<string>().AsTask()), "Yield on a request");
        Check.Eq("InvalidOperation", Outcome.Name(a.Send("y-o").Yield().AsTask()), "Yield on a one-way");
        using (var mk = a.Send("marker")) mk.Submit();
        Check.Eventually(() => b.Rec.Has("marker") == 1, 2000, "marker handled");
        Check.Eq(1, b.Rec.Has("r-second"), "one record of r-second at B");
        Check.Eq(1, b.Rec.Has("o-second"), "one record of o-second at B");
        Check.Eq(0, b.Rec.Has("y-r") + b.Rec.Has("y-o"), "nothing of the yields reached B");
        Check.Eventually(() => a.H.Status.RequestsInflight == 0, 2000, "A's in-flight back to 0");
    }

    public static void X2(CaseParams p) => EachTransport(p, tr =>
    {
        using var b = new ScServer { Name = "B" }.Open(Mode.Mesh, tr, "x2");
        using var a = new ScClient().Open(Mode.Mesh, b);

        // Two requests in flight: cancelling h1 ends it Cancelled; h2 stays pending and then
        // gets its own reply; the late reply to h1 completes nothing.
        b.Reply = (int)ReplyMode.Hold;
        using var cts1 = new CancellationTokenSource();
        var c1 = a.Request("h1");
        var c2 = a.Request("h2");
        var h1 = c1.Async(cts1.Token).AsTask();
        var h2 = c2.Async().AsTask();
        Check.Eventually(() => b.Held == 2, 2000, "h1 and h2 held");
        cts1.Cancel();
        Check.Failure(h1, 2000, "h1");
        Check.Eq("Cancelled", Outcome.Name(h1), "h1 cancelled");
        Check.True(!h2.IsCompleted, "h2 still pending after h1's cancel");
        Check.True(b.ReleaseHeld("h2"), "h2's reply released");
        Check.Eq("h2", S(Check.Wait(h2, 2000, "h2").Payload), "h2 gets its own reply");
        Check.True(b.ReleaseHeld("h1"), "h1's late reply released");
        using (var mk = a.Request("after-late")) { b.Reply = (int)ReplyMode.Now; mk.Submit(); }
        Check.Eq("Cancelled", Outcome.Name(h1), "the late reply completed nothing: h1 still cancelled");
        Check.Eventually(() => a.H.Status.RequestsInflight == 0, 2000, "A's in-flight back to 0");
        c1.Dispose();

        // Outcomes never share storage: r1's reply intact after r2 completed, after r2 was
        // released and after r3 completed.
        var r1 = a.Request("r1-payload").Async().AsTask();
        var rr1 = Check.Wait(r1, 2000, "r1");
        var c3 = a.Request("r2-other");
        var rr2 = Check.Wait(c3.Async().AsTask(), 2000, "r2");
        Check.Eq("r1-payload", S(rr1.Payload), "r1 after r2 completed");
        c3.Dispose();
        Check.Eq("r1-payload", S(rr1.Payload), "r1 after r2 was released");
        var rr3 = Check.Wait(a.Request("r3-third-one").Async().AsTask(), 2000, "r3");
        Check.Eq("r1-payload", S(rr1.Payload), "r1 after r3 completed");
        Check.Eq("r2-other", S(rr2.Payload), "r2 after r3 completed");
        Check.True(!ReferenceEquals(rr1.Payload, rr2.Payload) && !ReferenceEquals(rr2.Payload, rr3.Payload), "separate payloads");

        // A completed call's outcome read again after another call was cancelled, after
        // cancelling itself and after a second terminator: unchanged; none changes h2.
        b.Reply = (int)ReplyMode.Hold;
        using var cts2 = new CancellationTokenSource();
        var other = a.Request("other").Async(cts2.Token).AsTask();
        Check.Eventually(() => b.Held == 1, 2000, "other held");
        cts2.Cancel();
        Check.Failure(other, 2000, "other");
        Check.Eq("h2", S(h2.Result.Payload), "h2 after another call was cancelled");
        c2.Cancel();
        Check.Eq("h2", S(h2.Result.Payload), "h2 after cancelling it");
        Check.Eq("InvalidOperation", Outcome.Name(c2.Async().AsTask()), "a second terminator on h2");
        Check.True(h2.IsCompletedSuccessfully, "h2 still a success");
        Check.Eq("h2", S(h2.Result.Payload), "h2 after a second terminator");
        Check.Eq("Cancelled", Outcome.Name(other), "the other call unchanged");
        Check.Eq("r1-payload", S(rr1.Payload), "r1 unchanged by all of it");
        c2.Dispose();
        b.DropHeld();
        Check.Eventually(() => a.H.Status.RequestsInflight == 0, 2000, "A's in-flight back to 0");
    });
}
