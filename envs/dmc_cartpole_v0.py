"""dm_control's cartpole domain (dm_control/suite/cartpole.py): balance and swing-up of a pole
on a cart, each with a smooth and a sparse reward, as RoboDyn/dmc-cartpole-<task>-v0."""

from __future__ import annotations

import numpy as np

from robogym.dmc_task import XMAT, DmcTask, Key, dmc_doc, register_dmc, tolerance

CART_RANGE = (-0.25, 0.25)  # the sparse reward's cart bounds (m)
ANGLE_COSINE_RANGE = (0.995, 1.0)  # the sparse reward's bounds of cos(pole angle)
ZZ_XZ = [XMAT["zz"], XMAT["xz"]]


class Cartpole(DmcTask):
    """The cart-pole's readouts (dm_control's cartpole.Physics) and its Balance task, whose
    four benchmark tasks differ in `swing_up` and `sparse`."""

    domain = "cartpole"
    model_name = "cartpole.xml"
    timestep = 0.01
    time_limit = 10.0
    render_camera = "fixed"
    swing_up = False
    sparse = False
    observation = (
        Key(
            "position",
            lambda t: np.concatenate([t.cart_position()[:, None], t.pole_frame()], axis=1),
            ("cart", "pole_1.zz", "pole_1.xz"),
            doc="the cart's position, the pole's cos and sin (its frame's zz and xz)",
        ),
        Key("velocity", lambda t: t.physics.named.qvel.all, ("slider", "hinge_1"), doc="qvel"),
    )

    # --- readouts ---------------------------------------------------------------------------
    def cart_position(self) -> np.ndarray:
        """(B,) the cart's position on the slider (m)."""
        return self.physics.named.qpos["slider"]

    def pole_frame(self) -> np.ndarray:
        """(B, 2) the pole's frame entries zz and xz: its angle's cosine and sine."""
        return self.physics.named.xmat["pole_1"][:, ZZ_XZ]

    def angular_vel(self) -> np.ndarray:
        """(B, 1) the pole's angular velocity (rad/s)."""
        return self.physics.named.qvel[["hinge_1"]]

    # --- episode ------------------------------------------------------------------------------
    def initialize_episode(self, row, random) -> None:
        """Swing-up: the cart near the middle, the pole hanging; balance: the cart anywhere
        in +-0.1 m, the pole within +-0.034 rad of upright; small random velocities."""
        qpos, qvel = self.physics.named.qpos, self.physics.named.qvel
        nv = qvel.all.shape[1]
        if self.swing_up:
            qpos["slider"][row] = 0.01 * random.randn()
            qpos["hinge_1"][row] = np.pi + 0.01 * random.randn()
            qpos.all[row, 2:] = 0.1 * random.randn(nv - 2)  # further poles: none here
        else:
            qpos["slider"][row] = random.uniform(-0.1, 0.1)
            qpos.all[row, 1:] = random.uniform(-0.034, 0.034, nv - 1)
        qvel.all[row] = 0.01 * random.randn(nv)

    def get_reward(self):
        cos = self.pole_frame()[:, :1]
        if self.sparse:
            cart_in_bounds = tolerance(self.cart_position(), CART_RANGE)
            angle_in_bounds = tolerance(cos, ANGLE_COSINE_RANGE).prod(axis=1)
            return cart_in_bounds * angle_in_bounds, {
                "cart_in_bounds": cart_in_bounds,
                "angle_in_bounds": angle_in_bounds,
            }
        upright = ((cos + 1) / 2).mean(axis=1)
        centered = (1 + tolerance(self.cart_position(), margin=2)) / 2
        small_control = tolerance(self.control(), margin=1, value_at_margin=0, sigmoid_kind="quadratic")[:, 0]
        small_control = (4 + small_control) / 5
        small_velocity = (1 + tolerance(self.angular_vel(), margin=5).min(axis=1)) / 2
        reward = upright * small_control * small_velocity * centered
        factors = {"upright": upright, "centered": centered, "small_control": small_control}
        return reward, {**factors, "small_velocity": small_velocity}


class Balance(Cartpole):
    task = "balance"


class BalanceSparse(Cartpole):
    task = "balance_sparse"
    sparse = True


class Swingup(Cartpole):
    task = "swingup"
    swing_up = True


class SwingupSparse(Cartpole):
    task = "swingup_sparse"
    swing_up = True
    sparse = True


_ACTION = "`Box(-1, 1, (1,), float64)`: the cart's motor (force = 10 N x action)."
_SMOOTH = (
    "upright ((1 + cos) / 2) x small_control ((4 + quadratic tolerance of the action, margin 1) "
    "/ 5) x small_velocity ((1 + gaussian tolerance of the pole's rate, margin 5) / 2) x "
    "centered ((1 + gaussian tolerance of the cart's position, margin 2) / 2)."
)
_SPARSE = "1 while the cart is within +-0.25 m and cos(pole angle) >= 0.995, else 0."
_HANGING = "The cart at 0.01 N(0, 1) m, the pole hanging (pi + 0.01 N(0, 1) rad), velocities 0.01 N(0, 1)."
_UPRIGHT = (
    "The cart uniform in +-0.1 m, the pole uniform within +-0.034 rad of upright, velocities 0.01 N(0, 1)."
)


def _doc(task_class, what: str, rewards: str, start: str) -> str:
    return dmc_doc(task_class, description=what, action=_ACTION, rewards=rewards, start=start)


DmcCartpoleBalanceEnv, DmcCartpoleBalanceVectorEnv = register_dmc(
    Balance,
    module=__name__,
    summary="dm_control's cartpole-balance: keep the pole upright",
    doc=_doc(Balance, "Keep a pole upright on a cart by pushing the cart.", _SMOOTH, _UPRIGHT),
)
DmcCartpoleBalanceSparseEnv, DmcCartpoleBalanceSparseVectorEnv = register_dmc(
    BalanceSparse,
    module=__name__,
    summary="dm_control's cartpole-balance_sparse: keep the pole upright, sparse reward",
    doc=_doc(BalanceSparse, "Keep a pole upright on a cart, rewarded only inside bounds.", _SPARSE, _UPRIGHT),
)
DmcCartpoleSwingupEnv, DmcCartpoleSwingupVectorEnv = register_dmc(
    Swingup,
    module=__name__,
    summary="dm_control's cartpole-swingup: swing the pole up and balance it",
    doc=_doc(Swingup, "Swing a hanging pole up by pushing its cart, and balance it.", _SMOOTH, _HANGING),
)
DmcCartpoleSwingupSparseEnv, DmcCartpoleSwingupSparseVectorEnv = register_dmc(
    SwingupSparse,
    module=__name__,
    summary="dm_control's cartpole-swingup_sparse: swing up and balance, sparse reward",
    doc=_doc(
        SwingupSparse,
        "Swing a hanging pole up and balance it, rewarded only inside bounds.",
        _SPARSE,
        _HANGING,
    ),
)
