# Windows: build the bundle, then the per-user installer (Inno Setup 6) and a portable zip.
#
#   powershell -ExecutionPolicy Bypass -File packaging\build_windows.ps1 [-Python python] [-NoInstaller]
#
# Makes:
#   dist\domi-desktop\domi-desktop.exe       the tray app (no console window), icon and version info
#   dist\domi-desktop\domi-desktop-cli.exe   the same program with a console: the CLI, --version
#   dist\domi-desktop-<version>-windows-x64-setup.exe   when Inno Setup's ISCC.exe is found
#                                            (PATH, or Program Files\Inno Setup 6): per-user install,
#                                            Start-menu entry, optional start at login, uninstaller
#   dist\domi-desktop-<version>-windows-x64.zip          always: unzip anywhere and run
[CmdletBinding()]
param(
    [string]$Python = "",
    [switch]$NoInstaller
)
Set-StrictMode -Version Latest
$ErrorActionPreference = "Stop"

$Root = Split-Path -Parent $PSScriptRoot
$Packaging = Join-Path $Root "packaging"
$Dist = Join-Path $Root "dist"
$Build = Join-Path $Root "build"
if (-not $Python) {
    $venv = Join-Path $Root ".venv\Scripts\python.exe"
    $Python = if (Test-Path $venv) { $venv } else { "python" }
}

function Invoke-Checked {
    param([string]$Exe, [string[]]$Arguments)
    & $Exe @Arguments
    if ($LASTEXITCODE -ne 0) { throw "$Exe $($Arguments -join ' ') failed with exit code $LASTEXITCODE" }
}

$init = Get-Content (Join-Path $Root "domi_desktop\__init__.py") -Raw
if ($init -notmatch '(?m)^__version__ = "([^"]+)"') { throw "no __version__ in domi_desktop\__init__.py" }
$Version = $Matches[1]
$Name = "domi-desktop-$Version-windows-x64"
$started = Get-Date

Write-Host "== icons"
Invoke-Checked $Python @((Join-Path $Packaging "make_icons.py"), "--out", (Join-Path $Build "icons"))

Write-Host "== PyInstaller"
$env:DOMI_ICON_DIR = Join-Path $Build "icons"
Invoke-Checked $Python @("-m", "PyInstaller", "--noconfirm", "--clean", "--log-level", "WARN",
    "--distpath", $Dist, "--workpath", (Join-Path $Build "pyinstaller"),
    (Join-Path $Packaging "domi-desktop.spec"))
$Bundle = Join-Path $Dist "domi-desktop"
foreach ($exe in @("domi-desktop.exe", "domi-desktop-cli.exe")) {
    if (-not (Test-Path (Join-Path $Bundle $exe))) { throw "the build made no $exe" }
}

Write-Host "== zip"
$zip = Join-Path $Dist "$Name.zip"
if (Test-Path $zip) { Remove-Item $zip }
Compress-Archive -Path $Bundle -DestinationPath $zip -CompressionLevel Optimal

if (-not $NoInstaller) {
    $iscc = Get-Command "ISCC.exe" -ErrorAction SilentlyContinue | Select-Object -ExpandProperty Source
    if (-not $iscc) {
        foreach ($base in @(${env:ProgramFiles(x86)}, $env:ProgramFiles, "$env:LOCALAPPDATA\Programs")) {
            if ($base -and (Test-Path "$base\Inno Setup 6\ISCC.exe")) { $iscc = "$base\Inno Setup 6\ISCC.exe"; break }
        }
    }
    if ($iscc) {
        Write-Host "== installer ($iscc)"
        Invoke-Checked $iscc @("/Q", "/DAppVersion=$Version", "/DSourceDir=$Bundle", "/DOutputDir=$Dist",
            "/DOutputName=$Name-setup", "/DIconFile=$(Join-Path $Build 'icons\domi-desktop.ico')",
            (Join-Path $Packaging "windows\domi-desktop.iss"))
    } else {
        Write-Host "Inno Setup 6 (ISCC.exe) not found: only the zip is made (https://jrsoftware.org/isinfo.php)"
    }
}

$seconds = [math]::Round(((Get-Date) - $started).TotalSeconds, 1)
$size = [math]::Round((Get-ChildItem $Bundle -Recurse -File | Measure-Object Length -Sum).Sum / 1MB, 1)
Write-Host "== done in $seconds s; bundle $Bundle ($size MB)"
Get-ChildItem $Dist -File | ForEach-Object { Write-Host ("   {0} ({1:N1} MB)" -f $_.Name, ($_.Length / 1MB)) }
Write-Host "smoke test: $Python $(Join-Path $Packaging 'smoke_test.py') $(Join-Path $Bundle 'domi-desktop-cli.exe')"
