"""Converters between OpenVINO IR (model.xml + model.bin) and ONNX, and their verification."""
