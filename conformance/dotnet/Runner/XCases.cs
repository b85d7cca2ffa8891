// XCases.cs — framework-contract.md §7.3's language cases for .NET:
//   X-1 the terminator surface: names and types by reflection; a second
//       terminator, Submit in a handler and Yield outside a Spot turn are
//       InvalidOperation.
//   X-2 isolation: cancelling or consuming one returned ValueTask never
//       affects another call, even an already-completed one.
using System;
using System.Linq;
using System.Reflection;
using System.Text;
using System.Threading;
using System.Threading.Tasks;

namespace ZLink.Conformance;

internal static class XCases
{
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

    public static void X1(CaseParams p)
    {
        // The surface: Async(CancellationToken) -> ValueTask / ValueTask<Reply>, Async<T> -> ValueTask<T>,
        // Submit() synchronous, Yield(ct) / Yield<T>(ct); no other terminator names.
        Has(typeof(OneWayCall), "Async", typeof(ValueTask), typeof(CancellationToken));
        Has(typeof(OneWayCall), "Submit", typeof(void));
        Has(typeof(OneWayCall), "Yield", typeof(ValueTask), typeof(CancellationToken));
        Has(typeof(RequestCall), "Async", typeof(ValueTask<Reply>), typeof(CancellationToken));
        HasGeneric(typeof(RequestCall), "Async", typeof(ValueTask<>));
        Has(typeof(RequestCall), "Submit", typeof(Reply));
        HasGeneric(typeof(RequestCall), "Yield", typeof(ValueTask<>));
        Check.True(typeof(Call).GetInterfaces().Contains(typeof(IDisposable)), "Call is IDisposable");

        using var b = new ScServer { Name = "B" }.Open(Mode.Mesh, "inproc", "x1");
        using var a = new ScClient().Open(Mode.Mesh, b);
        // A second terminator is InvalidOperation, whichever pair.
        var c = a.Request("one");
        var first = c.Async();
        Check.Eq("InvalidOperation", Outcome.Name(c.Async().AsTask()), "Async after Async");
        Check.Eq("InvalidOperation", Outcome.Of(() => c.Submit()), "Submit after Async");
        Check.Eq("InvalidOperation", Outcome.Name(c.Yield<string>().AsTask()), "Yield after Async");
        Check.Eq("one", Encoding.UTF8.GetString(Check.Wait(first.AsTask(), 2000, "first terminator").Payload), "the first terminator's reply");
        // Submit in a handler (and Shutdown there): InvalidOperation.
        using (var sy = a.H.SendToChannel("svc").Payload("sync", new byte[] { 1 })) sy.Submit();
        Check.Eventually(() => Volatile.Read(ref b.SyncRan) == 1, 2000, "sync handler ran");
        Check.Eq("InvalidOperation", b.SyncWait, "Submit in a handler");
        Check.Eq("InvalidOperation", b.SyncShutdown, "Shutdown in a handler");
        // Yield outside a Spot turn (there are none in this phase): InvalidOperation, nothing sent.
        int before = b.Rec.Count;
        Check.Eq("InvalidOperation", Outcome.Name(a.Request("y").Yield<string>().AsTask()), "Yield on a request");
        Check.Eq("InvalidOperation", Outcome.Name(a.Send("y").Yield().AsTask()), "Yield on a one-way");
        using (var mk = a.Send("marker")) mk.Submit();
        Check.Eventually(() => b.Rec.Has("marker") == 1, 2000, "marker handled");
        Check.Eq(before + 1, b.Rec.Count, "nothing of the yields reached B");
    }

    public static void X2(CaseParams p)
    {
        using var b = new ScServer { Name = "B" }.Open(Mode.Mesh, "inproc", "x2");
        using var a = new ScClient().Open(Mode.Mesh, b);
        // An already-completed call is unaffected by cancelling another.
        var done = a.Request("done").Async().AsTask();
        Check.Wait(done, 2000, "done");
        b.Reply = (int)ReplyMode.Hold;
        using var cts1 = new CancellationTokenSource();
        var held1 = a.Request("h1").Async(cts1.Token).AsTask();
        var held2 = a.Request("h2").Async().AsTask();
        Check.Eventually(() => b.Held == 2, 2000, "h1 and h2 held");
        cts1.Cancel();
        Check.Eq("Cancelled", Outcome.Name(Check.Failure(held1, 2000, "h1") is OperationCanceledException ? held1 : held1), "h1 cancelled");
        Check.True(!held2.IsCompleted, "h2 still pending after h1's cancel");
        Check.True(done.IsCompletedSuccessfully, "the completed call is still a success");
        Check.Eq("done", Encoding.UTF8.GetString(done.Result.Payload), "its reply");
        // Consuming one ValueTask (awaiting it) does not consume another; a shared token cancels only its own calls.
        using var cts2 = new CancellationTokenSource();
        b.Reply = (int)ReplyMode.Now;
        b.DropHeld();
        var r1 = a.Request("r1").Async(cts2.Token);
        var r2 = a.Request("r2").Async(cts2.Token);
        Check.Eq("r1", Encoding.UTF8.GetString(Check.Wait(r1.AsTask(), 2000, "r1").Payload), "r1");
        Check.Eq("r2", Encoding.UTF8.GetString(Check.Wait(r2.AsTask(), 2000, "r2").Payload), "r2");
        cts2.Cancel();   // both already completed: nothing changes
        var r3 = a.Request("r3").Async(cts2.Token);
        Check.True(r3.IsCanceled, "a call started with the cancelled token never starts");
        Check.Eq(0, b.Rec.Has("r3"), "r3 not sent");
        // h2 is still pending and unaffected: its held reply was released unanswered; it ends at A's shutdown.
        a.H.Shutdown(TimeSpan.FromMilliseconds(100));
        Check.Eq("ShuttingDown", Outcome.Name(Check.Failure(held2, 2000, "h2") != null ? held2 : held2), "h2 at shutdown");
    }
}
