# SPDX-License-Identifier: BSD-3-Clause
"""Prints the nvrtc library that a CUDA build of torch from PyPI ships (nvidia/*/lib/libnvrtc.so.*)."""
import glob
import os
import sys

import torch

site = os.path.dirname(os.path.dirname(torch.__file__))
found = sorted(p for p in glob.glob(os.path.join(site, "nvidia", "*", "lib", "libnvrtc.so.*"))
               if "builtins" not in p and ".alt." not in p)
if not found:
    sys.exit(f"no libnvrtc.so.* under {site}/nvidia: is torch {torch.__version__} a CUDA build?")
print(found[0])
