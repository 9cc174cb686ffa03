"""ONNX backend conformance tests (a package so its conftest does not shadow tests/python/conftest)."""
