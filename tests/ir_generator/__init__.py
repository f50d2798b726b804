"""A generator of one-layer OpenVINO IRs, run against OpenVINO and our conversion in onnxruntime
(docs/ir-generator.md): ``python -m tests.ir_generator --help``."""
