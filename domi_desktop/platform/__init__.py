"""The edge of each OS: start at login (``autostart``), resume-from-sleep signals (``resume``),
notifications (``notify``) and the OS time zone (``timezone``).

Each subpackage picks its OS's implementation itself, so no OS loads another's modules.
"""
