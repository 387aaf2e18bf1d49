# SPDX-License-Identifier: BSD-3-Clause
"""The installed torch's autograd codegen input, read with the wheel's own torchgen.

Shared by the generators that follow libtorch's generated autograd functions
(gen_op_rules.py, gen_node_readers.py): derivatives.yaml, native_functions.yaml and tags.yaml
from torchgen/packaged, so what they write matches the torch being built against.
"""
import os

import torchgen
from torchgen.packaged.autograd.load_derivatives import load_derivatives


def differentiability_infos():
    """Every DifferentiabilityInfo with a node type (`info.op`), each node type once."""
    base = os.path.join(os.path.dirname(torchgen.__file__), "packaged")
    infos, _ = load_derivatives(os.path.join(base, "autograd/derivatives.yaml"),
                                os.path.join(base, "ATen/native/native_functions.yaml"),
                                os.path.join(base, "ATen/native/tags.yaml"))
    seen = set()
    for per_key in infos.values():
        for info in per_key.values():
            if info.op is None or info.op in seen:
                continue
            seen.add(info.op)
            yield info
