"""Training and evaluation on the native vector env: train.py (stable-baselines3 PPO/SAC),
evaluate.py (vectorized evaluation of any policy), plots.py (trajectory and final-metric PNGs)."""
