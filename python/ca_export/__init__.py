"""ca_export: export torch's compiled-autograd backward graphs for ca-replay's Python-free runtime.

    import ca_export
    with ca_export.capture("out/model"):      # compiled autograd with ca_export's compiler
        loss.backward()                       # writes bwd.fb, batch.pt, expected.pt
    # then: replay --graph out/model/bwd.fb --inputs out/model/batch.pt --check out/model/expected.pt

See `python -m ca_export --help`."""
from .exporter import Capture, ExportedGraph, capture
from .fb_write import graph_bytes, save_graph
from .schema_table import SchemaTableError, replay_binary
from .typed_args import ExportError

__all__ = ["capture", "Capture", "ExportedGraph", "ExportError", "SchemaTableError",
           "replay_binary", "graph_bytes", "save_graph"]
