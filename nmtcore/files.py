"""Writing the files a run leaves behind, so that a reader never sees a half-written one."""

import json
import os


def write_json(path, obj):
    """Write JSON atomically: a reader never sees a half-written file, even after a kill."""
    tmp = path + ".tmp"
    with open(tmp, "w", encoding="utf-8") as f:
        json.dump(obj, f, indent=2)
        f.write("\n")
    os.replace(tmp, path)
