"""SensorModel: noise and latency on a task's observation, seeded per environment.

A real robot's policy sees its sensors late and noisy; training with both is how a policy
learns not to trust one reading (MuJoCo Playground adds uniform noise to every observation
component; Isaac Lab's observation terms take additive uniform or Gaussian noise; delayed
observations model a camera or a slow bus). A task that offers them holds one SensorModel
and calls it at three points:

    reset(rows, rngs)            in reset_rows: a noise seed per row from the row's generator
    record(raw)                  in apply_action, before the physics steps: the observation
                                 the policy was shown this step enters the delay line
    observe(raw)                 in observe: what the policy sees now

With noise n_t (a function of the row's seed, the step count t and the component only, so
it is reproducible and needs no generator state) and delay k control steps:

    o_t = raw_t + n_t                       (uniform in [-scale, scale], or normal(0, scale))
    seen_t = o_{max(t - k, 0)}              (before k steps have passed: the first one)

observe() is pure (an env calls it for every row when it resets some of them); the state
that changes (the seeds, each row's step count and the last k noisy observations) is the
task state a snapshot carries (`state()`).
"""

from __future__ import annotations

import numpy as np

from robogym.checks import Bounds
from robogym.declare import Param
from robogym.errors import ArgumentTypeError, InvalidArgumentError

KINDS = ("uniform", "gaussian")
MAX_DELAY = 1000  # control steps: a whole episode of the legged tasks (20 s at 50 Hz)
# the largest noise scale: MuJoCo's mjMAXVAL; a Gaussian draw here is at most 8.6 deviations
# (Box-Muller of a 53-bit uniform), so noisy observations stay far from overflowing
MAX_SCALE = 1e10


def _mix(x: np.ndarray) -> np.ndarray:
    """splitmix64's finalizer (Steele, Lea, Flood 2014): a bijection of uint64 whose output
    bits each depend on every input bit; applied to distinct counters it gives independent
    looking uniform words."""
    with np.errstate(over="ignore"):
        x = (x ^ (x >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
        x = (x ^ (x >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
        return x ^ (x >> np.uint64(31))


def _uniform(seed: np.ndarray, step: np.ndarray, n: int, stream: int) -> np.ndarray:
    """(B, n) uniform numbers in (0, 1) for rows with `seed` (B,) at step counts `step` (B,):
    the 53 high bits of mix(seed + mix(step * 2n + 2j + stream)) + 0.5 ulp."""
    with np.errstate(over="ignore"):
        component = np.arange(n, dtype=np.uint64) * np.uint64(2)
        counter = step.astype(np.uint64)[:, None] * np.uint64(2 * n) + component
        words = _mix(seed[:, None] + _mix(counter + np.uint64(stream)))
    return ((words >> np.uint64(11)).astype(np.float64) + 0.5) / 2.0**53


def _given(scale) -> str:
    """A refused scale in a few words: its value, or how many numbers it holds."""
    try:
        return f"{len(scale)} numbers" if len(scale) > 8 else repr(scale)
    except TypeError:
        return repr(scale)


def _shown(given, scale: np.ndarray) -> str:
    """The scale as given, or the offending entry of a long vector."""
    if np.ndim(given) == 0 or scale.size <= 8:
        return repr(given)
    bad = np.flatnonzero(~(np.isfinite(scale) & (scale >= 0) & (scale <= MAX_SCALE)))
    return f"{scale[bad[0]]!r} in component {bad[0]}"


class SensorModel:
    """Additive noise (`kind` "uniform" or "gaussian", `scale` a number or one per
    observation component, 0 for none) and a delay of `delay` control steps on a (B, n)
    observation; see the module docstring."""

    def __init__(self, batch: int, n: int, scale=0.0, kind: str = "uniform", delay: int = 0):
        if not isinstance(kind, str):
            raise ArgumentTypeError(f"sensor noise kind must be one of {KINDS} (a str), got {kind!r}")
        if kind not in KINDS:
            raise InvalidArgumentError(f"sensor noise kind must be one of {KINDS}, got {kind!r}")
        if isinstance(delay, bool) or not isinstance(delay, int | np.integer):
            raise ArgumentTypeError(f"observation delay must be an int (control steps), got {delay!r}")
        if not 0 <= delay <= MAX_DELAY:
            raise InvalidArgumentError(
                f"observation delay must be in [0, {MAX_DELAY}] control steps, got {delay} (a delay "
                "longer than an episode would show its first observation throughout)"
            )
        try:
            s = np.broadcast_to(np.asarray(scale, dtype=np.float64), (n,)).copy()
        except (TypeError, ValueError):
            raise ArgumentTypeError(
                f"sensor noise scale must be a number or {n} numbers (one per observation "
                f"component), got {_given(scale)}"
            ) from None
        if not np.all(np.isfinite(s)) or np.any(s < 0) or np.any(s > MAX_SCALE):
            raise InvalidArgumentError(
                f"sensor noise scale must be finite and in [0, {MAX_SCALE:g}] (MuJoCo's mjMAXVAL: "
                f"larger values are what the engine treats as a diverged state), got {_shown(scale, s)}"
            )
        self.kind = kind
        self.scale = s
        self.delay = int(delay)
        self.seed = np.zeros(batch, dtype=np.uint64)
        self.count = np.zeros(batch, dtype=np.int64)  # control steps since the row's reset
        self.history = np.zeros((batch, max(self.delay, 1), n))  # o_t at slot t mod delay

    @property
    def active(self) -> bool:
        return self.delay > 0 or bool(np.any(self.scale > 0))

    def reset(self, rows: np.ndarray, rngs: list[np.random.Generator]) -> None:
        """Rows start a new episode: a fresh noise seed from each row's generator (drawn only
        when the model is active, so an inactive one changes no generator's sequence)."""
        if not self.active:
            return
        self.seed[rows] = [rng.integers(0, 2**63, dtype=np.uint64) for rng in rngs]
        self.count[rows] = 0

    def noisy(self, raw: np.ndarray, rows: np.ndarray | None = None) -> np.ndarray:
        """(k, n) o_t = raw + n_t for `rows` (all rows if None; raw holds just those rows) at
        each row's current step count (new array)."""
        if not np.any(self.scale > 0):
            return np.array(raw, dtype=np.float64)
        seed, count = (self.seed, self.count) if rows is None else (self.seed[rows], self.count[rows])
        n = raw.shape[1]
        u = _uniform(seed, count, n, 0)
        if self.kind == "uniform":
            noise = 2.0 * u - 1.0
        else:  # Box-Muller with a second independent stream
            noise = np.sqrt(-2.0 * np.log(u)) * np.cos(2.0 * np.pi * _uniform(seed, count, n, 1))
        return raw + self.scale * noise

    def observe(self, raw: np.ndarray) -> np.ndarray:
        """(B, n) what the policy sees now, seen_t = o_{max(t - delay, 0)} (pure): with a
        delay, rows past their first step read the delay line and only rows at t = 0 draw
        noise."""
        if self.delay == 0:
            return self.noisy(raw)
        out = np.empty(raw.shape)
        rows = np.flatnonzero(self.count > 0)
        past = np.maximum(self.count[rows] - self.delay, 0)
        out[rows] = self.history[rows, past % self.delay]
        fresh = np.flatnonzero(self.count == 0)
        if len(fresh):
            out[fresh] = self.noisy(raw[fresh], fresh)
        return out

    def record(self, raw: np.ndarray) -> None:
        """Before the physics steps: o_t joins the delay line and every row's count advances."""
        if not self.active:
            return
        if self.delay > 0:
            slot = self.count % self.delay
            self.history[np.arange(len(slot)), slot] = self.noisy(raw)
        self.count += 1

    def get_state(self, prefix: str = "sensor_") -> dict[str, np.ndarray]:
        """The per-row state a snapshot carries, keyed `prefix` + name (for Task.get_state)."""
        return {f"{prefix}{k}": getattr(self, k) for k in ("seed", "count", "history")}

    def set_state(self, state: dict[str, np.ndarray], rows: np.ndarray, prefix: str = "sensor_") -> None:
        """Write back what get_state gave (for Task.set_state); other keys are left alone."""
        for k in ("seed", "count", "history"):
            if prefix + k in state:
                getattr(self, k)[rows] = state[prefix + k]


def sensor_params(noise_doc: str, per_component: bool = False) -> tuple[Param, Param, Param]:
    """The `sensor_noise`, `sensor_noise_kind` and `observation_delay` parameters of a task
    with a SensorModel, for its class body (`noise_doc` says what the noise scale means for
    the task; `per_component`: one number or one per component):

        sensor_noise, sensor_noise_kind, observation_delay = sensor_params("...")
    """
    return (
        Param(0.0, noise_doc, Bounds(0.0, MAX_SCALE), per_component=per_component),
        Param("uniform", "the noise's law: uniform in [-s, s] or normal with deviation s", choices=KINDS),
        Param(0, "control steps the observation lags behind the state", Bounds(0, MAX_DELAY)),
    )
