"""Motion captures and retargeting: captures as data (capture.py, holosoma.py), a robot's
joint trajectory from a capture by matching points (retarget.py, with the correspondence
tables of tables.py), and how good the result is (metrics.py)."""
