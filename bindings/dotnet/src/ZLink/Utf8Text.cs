// Utf8Text.cs — how every string parameter of Native.cs crosses to C.
//
// Design notes
//  - The runtime's UTF-8 marshaller with one check first: a string that has
//    no UTF-8 form C can take as a C string is refused before C is called,
//    with ZLinkArgumentException (INVALID_ARGUMENT), as the Java binding does.
//    Those are a U+0000 (C would read a shorter string) and a lone surrogate
//    (the encoder would write U+FFFD in its place, a different name).
//  - The check is one vectorised search for each case, so a name costs no
//    more than before when it is clean.
using System;
using System.Runtime.InteropServices.Marshalling;

namespace ZLink;

[CustomMarshaller(typeof(string), MarshalMode.Default, typeof(Utf8Text))]
[CustomMarshaller(typeof(string), MarshalMode.ManagedToUnmanagedIn, typeof(ManagedToUnmanagedIn))]
internal static unsafe class Utf8Text
{
    public static byte* ConvertToUnmanaged(string? s)
    {
        Check(s);
        return Utf8StringMarshaller.ConvertToUnmanaged(s);
    }

    public static string? ConvertToManaged(byte* p) => Utf8StringMarshaller.ConvertToManaged(p);

    public static void Free(byte* p) => Utf8StringMarshaller.Free(p);

    public ref struct ManagedToUnmanagedIn
    {
        public static int BufferSize => Utf8StringMarshaller.ManagedToUnmanagedIn.BufferSize;

        private Utf8StringMarshaller.ManagedToUnmanagedIn inner;

        public void FromManaged(string? s, Span<byte> buffer)
        {
            Check(s);
            inner.FromManaged(s, buffer);
        }

        public byte* ToUnmanaged() => inner.ToUnmanaged();

        public void Free() => inner.Free();
    }

    private static void Check(string? s)
    {
        if (s is null)
            return;
        ReadOnlySpan<char> t = s;
        if (t.IndexOf('\0') >= 0)
            throw new ZLinkArgumentException(Results.Framework.InvalidArgument,
                                             "a string passed to C contains U+0000");
        int i = t.IndexOfAnyInRange('\uD800', '\uDFFF');
        while (i >= 0 && i < t.Length) {
            if (!char.IsHighSurrogate(t[i]) || i + 1 >= t.Length || !char.IsLowSurrogate(t[i + 1]))
                throw new ZLinkArgumentException(Results.Framework.InvalidArgument,
                                                 "a string passed to C has a lone surrogate");
            i += 2;
            int next = t.Slice(i).IndexOfAnyInRange('\uD800', '\uDFFF');
            i = next < 0 ? -1 : i + next;
        }
    }
}
