"""zlink_dotnet_app: a .NET console app on the .NET binding, built offline.

    zlink_dotnet_app(
        name = "node_app",                   # the genrule; its output is <name>.tar
        project = "Node.csproj",             # in this package
        srcs = ["Node.csproj", "Program.cs"],
    )

bindings/dotnet/tools/build_app.sh restores from the machine's package folder
and builds Release; the tar holds the build output, which
bindings/dotnet/tools/run_app.sh unpacks once and starts with dotnet.
"""

def zlink_dotnet_app(name, project, srcs, testonly = False):
    native.genrule(
        name = name,
        testonly = testonly,
        srcs = srcs + [
            "//bindings/dotnet:sources",
            "//bindings/dotnet:tools/dotnet_env.sh",
        ],
        outs = [name + ".tar"],
        cmd = "$(location //bindings/dotnet:tools/build_app.sh) $@ %s/%s $(SRCS)" % (
            native.package_name(),
            project,
        ),
        tools = ["//bindings/dotnet:tools/build_app.sh"],
    )
