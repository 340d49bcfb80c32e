"""The ``fitted`` provider: deciders fitted on labelled decisions, answering offline.

A fitted file (JSON beside a ``.npz`` of arrays, never pickle) holds, per question role, an
encoder's settings and a head's weights; the client here encodes what each question reads and
applies the head, and asks the entry's ``base`` model whatever no head answers.
"""
