# Installs domi-desktop with its setup.exe for the current user, silently, with start at login
# chosen; checks the HKCU Run value; smoke-tests the INSTALLED app (packaging/smoke_test.py, with
# the OS zone changed by tzutil) and starts its windowed exe (packaging/windowed_test.py);
# uninstalls silently and checks that nothing is left.
#
#   pwsh packaging/windows/install_test.ps1 -Setup dist\domi-desktop-<v>-windows-x64-setup.exe
[CmdletBinding()]
param(
    [Parameter(Mandatory = $true)][string]$Setup,
    [string]$Python = "python"
)
Set-StrictMode -Version Latest
$ErrorActionPreference = "Stop"

$Root = Split-Path -Parent (Split-Path -Parent $PSScriptRoot)
$AppDir = Join-Path $env:LOCALAPPDATA "Programs\domi-desktop"
$RunKey = "HKCU:\Software\Microsoft\Windows\CurrentVersion\Run"
$UninstallKey = "HKCU:\Software\Microsoft\Windows\CurrentVersion\Uninstall\{5B0E7C0A-3D7B-4E69-9C3A-7D1F2A6C4E21}_is1"
$Log = Join-Path $env:RUNNER_TEMP "domi-setup.log"

function Get-RunValue {
    (Get-ItemProperty -Path $RunKey -Name "domi-desktop" -ErrorAction SilentlyContinue)."domi-desktop"
}

# Per user by the installer itself (PrivilegesRequired=lowest, no override allowed): /CURRENTUSER
# would be a no-op, Inno Setup reads it only with PrivilegesRequiredOverridesAllowed.
Write-Host "== install (per user, silent, start at login)"
$install = Start-Process -FilePath $Setup -Wait -PassThru -ArgumentList @(
    "/VERYSILENT", "/SUPPRESSMSGBOXES", "/NORESTART", "/TASKS=startatlogin", "/LOG=`"$Log`"")
if ($install.ExitCode -ne 0) { Get-Content $Log; throw "setup exited $($install.ExitCode)" }
foreach ($exe in @("domi-desktop.exe", "domi-desktop-cli.exe", "unins000.exe")) {
    if (-not (Test-Path (Join-Path $AppDir $exe))) { throw "no $exe in $AppDir after the install" }
}
$expected = "`"$(Join-Path $AppDir 'domi-desktop.exe')`""
$value = Get-RunValue
if ($value -ne $expected) { throw "HKCU Run value domi-desktop is '$value', expected '$expected'" }
if (-not (Test-Path $UninstallKey)) { throw "no per-user uninstall entry at $UninstallKey" }

Write-Host "== smoke-test the installed app"
& $Python (Join-Path $Root "packaging\smoke_test.py") --set-os-zone (Join-Path $AppDir "domi-desktop-cli.exe")
if ($LASTEXITCODE -ne 0) { throw "the smoke test failed on the installed app" }

# The windowed domi-desktop.exe, as the Start menu starts it (no console, Qt's own platform).
Write-Host "== start the installed windowed app: first wake, status, quit"
& $Python (Join-Path $Root "packaging\windowed_test.py") (Join-Path $AppDir "domi-desktop.exe")
if ($LASTEXITCODE -ne 0) { throw "the windowed app failed its start, status or quit" }

Write-Host "== uninstall (silent)"
$uninstall = Start-Process -FilePath (Join-Path $AppDir "unins000.exe") -Wait -PassThru -ArgumentList @(
    "/VERYSILENT", "/SUPPRESSMSGBOXES", "/NORESTART")
if ($uninstall.ExitCode -ne 0) { throw "the uninstaller exited $($uninstall.ExitCode)" }
# The uninstaller removes its own unins000.exe from a helper process a moment after it exits.
$deadline = (Get-Date).AddSeconds(30)
while ((Test-Path $AppDir) -and (Get-Date) -lt $deadline) { Start-Sleep -Milliseconds 200 }
if (Test-Path $AppDir) {
    Get-ChildItem $AppDir -Recurse | ForEach-Object { Write-Host "left: $($_.FullName)" }
    throw "$AppDir is still there after the uninstall"
}
if ($null -ne (Get-RunValue)) { throw "the HKCU Run value domi-desktop is still there" }
if (Test-Path $UninstallKey) { throw "the uninstall entry $UninstallKey is still there" }
$shortcut = Join-Path $env:APPDATA "Microsoft\Windows\Start Menu\Programs\domi-desktop.lnk"
if (Test-Path $shortcut) { throw "the Start-menu entry $shortcut is still there" }
Write-Host "installed, ran, uninstalled: nothing left"
