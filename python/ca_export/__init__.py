# SPDX-License-Identifier: BSD-3-Clause
"""ca_export: export torch's compiled-autograd backward graphs for ca-replay's Python-free runtime.

    import ca_export
    with ca_export.capture("out/model"):      # compiled autograd with ca_export's compiler
        loss.backward()                       # writes bwd.fb, batch.pt, expected.pt
    # then: replay --graph out/model/bwd.fb --inputs out/model/batch.pt --check out/model/expected.pt

See `python -m ca_export --help`. Names load on first use, so that `--help` needs no torch."""
import importlib
import importlib.metadata

# ca-replay's version (CMake's project(VERSION), which python/setup.py reads at install time).
__version__ = importlib.metadata.version("ca-export")

_HOMES = {"capture": "exporter", "Capture": "exporter", "ExportedGraph": "exporter",
          "graph_json": "encode", "save_graph": "encode",
          "SchemaTableError": "schema_table", "replay_binary": "schema_table",
          "ExportError": "typed_args"}

__all__ = sorted(_HOMES)


def __getattr__(name):
    if name not in _HOMES:
        raise AttributeError(f"module 'ca_export' has no attribute '{name}'")
    return getattr(importlib.import_module(f".{_HOMES[name]}", __name__), name)
