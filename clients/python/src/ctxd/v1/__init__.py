"""Generated protobuf and gRPC stubs for the ctxd.v1 API.

The ``*_pb2.py``, ``*_pb2.pyi`` and ``*_pb2_grpc.py`` files next to this one are
generated from ``proto/ctxd/v1`` by ``make generate``; do not edit them. This
``__init__.py`` is hand-written so that ``ctxd.v1`` is a regular package.
"""
