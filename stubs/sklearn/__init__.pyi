# The part of scikit-learn harness uses (the fitted provider and `harness fit`).
__version__: str
