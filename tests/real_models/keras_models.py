"""Keras models of the matrix: ``keras.applications`` with random weights (``weights=None``), 64x64 images.

Each is traced as a ``tf.function`` with a dynamic batch ([batch, 64, 64, 3],
NHWC) and converted by ``openvino.convert_model`` from its concrete function.
keras_hub is not in the matrix: its only release (0.32) requires
tensorflow-text, which pulls the full ``tensorflow`` wheel beside
``tensorflow-cpu``.
"""

from __future__ import annotations

import os

import numpy as np

SIZE = 64
CLASSES = 10


def image_inputs(index: int) -> dict[str, np.ndarray]:
    rng = np.random.default_rng(110 + index)
    return {"x": rng.uniform(0, 255, (index + 1, SIZE, SIZE, 3)).astype(np.float32)}  # pixel values, as Keras expects


def _application(name: str, **kwargs):
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")  # no oneDNN / CPU-feature banners
    import openvino as ov
    import tensorflow as tf

    tf.keras.utils.set_random_seed(0)
    model = getattr(tf.keras.applications, name)(weights=None, input_shape=(SIZE, SIZE, 3), classes=CLASSES,
                                                 classifier_activation=None, **kwargs)  # logits
    for layer in model.layers:  # non-trivial batch-norm statistics
        if isinstance(layer, tf.keras.layers.BatchNormalization):
            mean, var = layer.moving_mean, layer.moving_variance
            mean.assign(tf.random.stateless_uniform(mean.shape, (1, 2), -0.5, 0.5))
            var.assign(tf.random.stateless_uniform(var.shape, (3, 4), 0.5, 2.0))

    @tf.function(input_signature=[tf.TensorSpec([None, SIZE, SIZE, 3], tf.float32, name="x")], autograph=False)
    def forward(x):
        return model(x, training=False)

    converted = ov.convert_model(forward.get_concrete_function())
    converted.inputs[0].get_tensor().set_names({"x"})
    return converted


def build_keras_mobilenet_v3_small():
    return _application("MobileNetV3Small")


def build_keras_efficientnet_b0():
    return _application("EfficientNetB0")
