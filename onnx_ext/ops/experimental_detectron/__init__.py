"""The opset6 ExperimentalDetectron ops of issue 18 that are not NMS heads: PriorGridGenerator, TopKROIs
(``grid_topk.py``) and ROIFeatureExtractor (``features.py``). One OpSpec each."""
