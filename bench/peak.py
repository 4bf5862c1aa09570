"""Peak resident memory of a benchmark child process, measured the one right way.

``resource.getrusage(RUSAGE_SELF).ru_maxrss`` keeps, across ``exec``, the high-water mark of
the process that spawned the child, so a child started by a large benchmark process reports
the parent's size (seen: two different workloads both "peaking" at 580 MB). ``VmHWM`` in
``/proc/self/status`` belongs to the child's own memory map. Child scripts run with
``python -c`` prepend :data:`PEAK_RSS` and call ``peak_rss()`` (bytes).
"""

from __future__ import annotations

PEAK_RSS = """
def peak_rss():
    try:
        with open("/proc/self/status") as fh:
            for line in fh:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    import resource
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
"""
