// Registry.cs — case id -> case body. A case the manifest lists but this
// registry lacks is reported `missing`; a case the registry has and the
// manifest lacks is an ERROR (Program.cs).
using System;
using System.Collections.Generic;
using System.Linq;
using System.Text.Json;

namespace ZLink.Conformance;

internal static class Registry
{
    private static readonly Dictionary<string, Action<CaseParams>> Cases = new()
    {
        ["PL-02"] = PlCases.Pl02,
        ["PL-03"] = PlCases.Pl03,
        ["PL-04"] = PlCases.Pl04,
        ["PL-05"] = PlCases.Pl05,
        ["PL-06"] = PlCases.Pl06,
        ["PL-07"] = PlCases.Pl07,
        ["PL-08"] = PlCases.Pl08,
        ["PL-11"] = PlCases.Pl11,
        ["PL-12"] = PlCases.Pl12,
        ["PL-13"] = PlCases.Pl13,
        ["PL-14"] = PlCases.Pl14,
        ["PL-15"] = PlSignals.Pl15,
        ["PL-16"] = PlCompletion.Pl16,
        ["PL-18"] = PlCompletion.Pl18,
        ["PL-19"] = PlCompletion.Pl19,
        ["PL-20"] = PlCompletion.Pl20,
        ["PL-21"] = PlCases.Pl21,
        ["PL-22"] = PlCases.Pl22,
        ["PL-24"] = PlCases.Pl24,
        ["PL-26"] = PlCases.Pl26,
        ["SC-01"] = ScCases.Sc01,
        ["SC-02"] = ScCases.Sc02,
        ["SC-03"] = ScCases.Sc03,
        ["SC-06"] = ScCases.Sc06,
        ["SC-09"] = ScCases.Sc09,
        ["SC-11"] = ScCases.Sc11,
        ["SC-12"] = ScCases.Sc12,
        ["SC-13"] = JqCases.Sc13,
        ["SC-16"] = ScCases.Sc16,
        ["SC-17"] = ScCases.Sc17,
        ["SC-18"] = ScDispatch.Sc18,
        ["SC-19"] = ScCases.Sc19,
        ["SC-20"] = ScCases.Sc20,
        ["JQ-01"] = JqCases.Jq01,
        ["JQ-02"] = JqCases.Jq02,
        ["JQ-04"] = JqCases.Jq04,
        ["JQ-05"] = JqCases.Jq05,
        ["JQ-06"] = JqCases.Jq06,
        ["JQ-07"] = JqCases.Jq07,
        ["JQ-14"] = JqCases.Jq14,
        ["JQ-15"] = JqCases.Jq15,
        ["JQ-16"] = JqCases.Jq16,
        ["JQ-17"] = JqCases.Jq17,
        ["JQ-18"] = JqCases.Jq18,
        ["JQ-21"] = ScCases.Sc12,   // SC-12 run in the 001 suite (as the C runner's registry)
        ["JQ-20"] = JqCases.Jq20,
        // raw-peer cases (RawPeer.cs, ScRaw.cs, JqRaw.cs)
        ["SC-14"] = ScRaw.Sc14,
        ["SC-15"] = ScRaw.Sc15,
        ["JQ-03"] = JqRaw.Jq03,
        ["JQ-08"] = JqRaw.Jq08,
        ["JQ-09"] = JqRaw.Jq09,
        ["JQ-10"] = JqRaw.Jq10,
        ["JQ-19"] = JqRaw.Jq19,
        ["JQ-22"] = JqRaw.Jq22,
        // end of the raw-peer cases
        // --- PL-01/09/10/17/23/25/27, JQ-11/12/13 (PlMore.cs, JqPressure.cs) ---
        ["PL-01"] = PlMore.Pl01,
        ["PL-09"] = PlMore.Pl09,
        ["PL-10"] = PlMore.Pl10,
        ["PL-17"] = PlMore.Pl17,
        ["PL-23"] = PlMore.Pl23,
        ["PL-25"] = PlMore.Pl25,
        ["PL-27"] = PlMore.Pl27,
        ["JQ-11"] = JqPressure.Jq11,
        ["JQ-12"] = JqPressure.Jq12,
        ["JQ-13"] = JqPressure.Jq13,
        // --- end of the PlMore / JqPressure block ---
        ["X-1"] = XCases.X1,
        ["X-2"] = XCases.X2,
    };

    public static IEnumerable<string> Ids => Cases.Keys;
    public static bool Has(string id) => Cases.ContainsKey(id);

    /// <summary>Runs a case; returns the absent-by-seed detail when the case is
    /// absent for .NET by the manifest and the runner proved it, else null.</summary>
    public static string? Run(string id, CaseParams p, JsonElement? absent)
    {
        if (absent is JsonElement a && a.TryGetProperty("dotnet", out var reason))
            throw new CheckFailed("the manifest marks this case absent for .NET (" + reason.GetString() +
                                  "), but the .NET surface exists: nothing proves it absent");
        Cases[id](p);
        return null;
    }
}
