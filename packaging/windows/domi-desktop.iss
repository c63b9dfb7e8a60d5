; Inno Setup 6 script of domi-desktop: a per-user install (no administrator rights), a Start-menu
; entry, optional start at login, and an uninstaller. build_windows.ps1 compiles it as
;
;   ISCC.exe /DAppVersion=0.1.0 /DSourceDir=dist\domi-desktop /DOutputDir=dist ^
;            /DOutputName=domi-desktop-0.1.0-windows-x64-setup /DIconFile=build\icons\domi-desktop.ico ^
;            packaging\windows\domi-desktop.iss
;
; Start at login is the same registry value the app's own Settings switch writes and reads
; (HKCU\Software\Microsoft\Windows\CurrentVersion\Run, value "domi-desktop"), so the two agree.

#ifndef AppVersion
  #error Pass /DAppVersion=X.Y.Z
#endif
#ifndef SourceDir
  #define SourceDir "..\..\dist\domi-desktop"
#endif
#ifndef OutputDir
  #define OutputDir "..\..\dist"
#endif
#ifndef OutputName
  #define OutputName "domi-desktop-" + AppVersion + "-windows-x64-setup"
#endif
#ifndef IconFile
  #define IconFile "..\..\build\icons\domi-desktop.ico"
#endif

#define AppName "domi-desktop"
#define AppExe "domi-desktop.exe"
#define CliExe "domi-desktop-cli.exe"

[Setup]
; The AppId identifies the installation across upgrades: never change it.
AppId={{5B0E7C0A-3D7B-4E69-9C3A-7D1F2A6C4E21}
AppName={#AppName}
AppVersion={#AppVersion}
AppVerName={#AppName} {#AppVersion}
AppPublisher=domi-desktop
AppComments=Runs your recurring jobs on cron schedules, honest about what happened while the laptop slept
VersionInfoVersion={#AppVersion}
; Per user: %LOCALAPPDATA%\Programs\domi-desktop, the user's Start menu, HKCU only.
PrivilegesRequired=lowest
DefaultDirName={code:UserProgramFiles}\{#AppName}
DefaultGroupName={#AppName}
DisableProgramGroupPage=yes
ArchitecturesAllowed=x64compatible
ArchitecturesInstallIn64BitMode=x64compatible
OutputDir={#OutputDir}
OutputBaseFilename={#OutputName}
SetupIconFile={#IconFile}
UninstallDisplayIcon={app}\{#AppExe}
UninstallDisplayName={#AppName}
Compression=lzma2/max
SolidCompression=yes
WizardStyle=modern
; An upgrade or uninstall while the app runs: the Restart Manager closes it first.
CloseApplications=force
RestartApplications=no

[Languages]
Name: "english"; MessagesFile: "compiler:Default.isl"

[Tasks]
Name: "startatlogin"; Description: "Start {#AppName} when I log in"; GroupDescription: "Start:"; Flags: unchecked
Name: "desktopicon"; Description: "{cm:CreateDesktopIcon}"; GroupDescription: "{cm:AdditionalIcons}"; Flags: unchecked

[Files]
Source: "{#SourceDir}\*"; DestDir: "{app}"; Flags: ignoreversion recursesubdirs createallsubdirs

[InstallDelete]
; An upgrade replaces the whole bundle: no stale libraries of the previous version stay behind.
Type: filesandordirs; Name: "{app}\_internal"

[Icons]
Name: "{autoprograms}\{#AppName}"; Filename: "{app}\{#AppExe}"; Comment: "Cron schedules in the tray"
Name: "{autodesktop}\{#AppName}"; Filename: "{app}\{#AppExe}"; Tasks: desktopicon

[Registry]
Root: HKCU; Subkey: "Software\Microsoft\Windows\CurrentVersion\Run"; ValueType: string; ValueName: "{#AppName}"; ValueData: """{app}\{#AppExe}"""; Flags: uninsdeletevalue; Tasks: startatlogin

[Run]
Filename: "{app}\{#AppExe}"; Description: "{cm:LaunchProgram,{#AppName}}"; Flags: nowait postinstall skipifsilent

[UninstallRun]
; Ask a running app to quit cleanly (running jobs are recorded as interrupted) before its files go.
Filename: "{app}\{#CliExe}"; Parameters: "quit"; Flags: runhidden waituntilterminated; RunOnceId: "QuitApp"

[Code]
// {autopf}, per user: %LOCALAPPDATA%\Programs unless the user's known folder is redirected. Wine
// (8.0) has no FOLDERID_UserProgramFiles ("Failed to expand shell folder constant autopf", and
// /DIR= does not help: the default is expanded anyway), so there it is the same folder by name.
function UserProgramFiles(Param: String): String;
begin
  try
    Result := ExpandConstant('{autopf}');
  except
    Result := ExpandConstant('{localappdata}\Programs');
  end;
end;

procedure CurUninstallStepChanged(CurUninstallStep: TUninstallStep);
begin
  // Remove the app's own start-at-login value too (Settings > Start at login), whoever wrote it.
  if CurUninstallStep = usPostUninstall then
  begin
    RegDeleteValue(HKEY_CURRENT_USER, 'Software\Microsoft\Windows\CurrentVersion\Run', '{#AppName}');
    // And Task Manager's on/off switch for it, so a reinstall starts from the user's choice again.
    RegDeleteValue(HKEY_CURRENT_USER, 'Software\Microsoft\Windows\CurrentVersion\Explorer\StartupApproved\Run', '{#AppName}');
  end;
end;
