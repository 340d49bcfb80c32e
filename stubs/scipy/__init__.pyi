# The part of scipy harness uses: the sparse matrices scikit-learn's text features come in.
