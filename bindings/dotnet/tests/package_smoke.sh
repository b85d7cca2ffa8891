#!/bin/bash
# package_smoke.sh NUPKG README — //bindings/dotnet:package_smoke: a new
# console project takes the ZLink package (restored offline from the built
# nupkg and /opt/nuget/packages), runs the README's example with no
# ZLINK_LIBRARY set (so the package's runtimes/linux-x64/native/libzlink.so.1
# is what loads) and must print 42.
set -euo pipefail
nupkg=$(readlink -f "$1"); readme=$(readlink -f "$2")
work="${TEST_TMPDIR:-$(mktemp -d)}/smoke"
. bindings/dotnet/tools/dotnet_env.sh
zl_dotnet_env "$work"
unset ZLINK_LIBRARY
mkdir -p "$work/feed" "$work/app"
cp "$nupkg" "$work/feed/"
awk '/^```csharp$/{on=1; next} /^```$/{on=0} on' "$readme" >"$work/app/Program.cs"
cat >"$work/app/smoke.csproj" <<'PROJ'
<Project Sdk="Microsoft.NET.Sdk">
  <PropertyGroup>
    <OutputType>Exe</OutputType>
    <TargetFramework>net10.0</TargetFramework>
    <Nullable>enable</Nullable>
    <ImplicitUsings>enable</ImplicitUsings>
    <NuGetAudit>false</NuGetAudit>
  </PropertyGroup>
  <ItemGroup>
    <PackageReference Include="ZLink" Version="1.4.0" />
  </ItemGroup>
</Project>
PROJ
dotnet restore "$work/app/smoke.csproj" --source "$work/feed" --source "$ZL_NUGET_SOURCE" -nologo -v q
dotnet build "$work/app/smoke.csproj" --no-restore -nologo -v q -o "$work/out"
[ -f "$work/out/runtimes/linux-x64/native/libzlink.so.1" ] || { echo "the package's native library was not deployed" >&2; exit 1; }
out=$(dotnet "$work/out/smoke.dll")
echo "example printed: $out"
[ "$out" = "42" ]
