"""dm_control's cartpole domain (dm_control/suite/cartpole.py): balance and swing-up of a pole
on a cart, each with a smooth and a sparse reward, and the swing-up of a chain of two or three
poles, as RoboDyn/dmc-cartpole-<task>-v0."""

from __future__ import annotations

from xml.etree import ElementTree

import numpy as np

from robogym.dmc_task import XMAT, DmcTask, Key, dmc_doc, register_dmc, tolerance

CART_RANGE = (-0.25, 0.25)  # the sparse reward's cart bounds (m)
ANGLE_COSINE_RANGE = (0.995, 1.0)  # the sparse reward's bounds of cos(pole angle)
ZZ_XZ = [XMAT["zz"], XMAT["xz"]]


class Cartpole(DmcTask):
    """The cart-pole's readouts (dm_control's cartpole.Physics) and its Balance task, whose
    four benchmark tasks differ in `swing_up` and `sparse`, for a chain of `n_poles` poles
    (more than one: dm_control builds the model in Python from cartpole.xml, and edit_model
    does the same)."""

    domain = "cartpole"
    model_name = "cartpole.xml"
    timestep = 0.01
    time_limit = 10.0
    render_camera = "fixed"
    swing_up = False
    sparse = False
    n_poles = 1

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        cls.builds_model = cls.n_poles > 1
        poles = range(1, cls.n_poles + 1)
        cls.observation = (
            Key(
                "position",
                lambda t: np.concatenate([t.cart_position()[:, None], t.pole_frames()], axis=1),
                ("cart", *(f"pole_{i}.{c}" for i in poles for c in ("zz", "xz"))),
                doc="the cart's position, each pole's cos and sin (its frame's zz and xz)",
            ),
            Key(
                "velocity",
                lambda t: t.physics.named.qvel.all,
                ("slider", *(f"hinge_{i}" for i in poles)),
                doc="qvel",
            ),
        )

    def edit_model(self, mjcf: ElementTree.Element) -> None:
        """dm_control's _make_model: poles 2 to n_poles chained on the first, each a body 1 m
        above its parent's origin with a hinge and a capsule of the pole class; the floor
        lowered to 1 - n_poles - 0.05 m and the two cameras moved back."""
        n = self.n_poles
        parent = mjcf.find("./worldbody/body/body")
        for i in range(2, n + 1):
            child = ElementTree.SubElement(
                parent, "body", {"name": f"pole_{i}", "pos": "0 0 1", "childclass": "pole"}
            )
            ElementTree.SubElement(child, "joint", {"name": f"hinge_{i}"})
            ElementTree.SubElement(child, "geom", {"name": f"pole_{i}"})
            parent = child
        mjcf.find("./worldbody/geom").set("pos", f"0 0 {1 - n - 0.05}")
        fixed, lookatcart = mjcf.findall("./worldbody/camera")[:2]
        fixed.set("pos", f"0 {-1 - 2 * n} 1")
        lookatcart.set("pos", f"0 {-2 * n} 2")

    # --- readouts ---------------------------------------------------------------------------
    def pole_names(self) -> list[str]:
        return [f"pole_{i}" for i in range(1, self.n_poles + 1)]

    def cart_position(self) -> np.ndarray:
        """(B,) the cart's position on the slider (m)."""
        return self.physics.named.qpos["slider"]

    def pole_frames(self) -> np.ndarray:
        """(B, 2 n_poles) each pole's frame entries zz and xz: its angle's cosine and sine
        (the angle from upright, in the world frame)."""
        xmat = self.physics.named.xmat
        return np.concatenate([xmat[p][:, ZZ_XZ] for p in self.pole_names()], axis=1)

    def pole_angle_cosines(self) -> np.ndarray:
        """(B, n_poles) each pole's cos(angle from upright)."""
        return self.pole_frames()[:, 0::2]

    def angular_vel(self) -> np.ndarray:
        """(B, n_poles) the hinges' angular velocities (rad/s)."""
        return self.physics.named.qvel.all[:, 1:]

    # --- episode ------------------------------------------------------------------------------
    def initialize_episode(self, row, random) -> None:
        """Swing-up: the cart near the middle, the first pole hanging, the others near
        straight on it; balance: the cart anywhere in +-0.1 m, the poles within +-0.034 rad
        of upright; small random velocities."""
        qpos, qvel = self.physics.named.qpos, self.physics.named.qvel
        nv = qvel.all.shape[1]
        if self.swing_up:
            qpos["slider"][row] = 0.01 * random.randn()
            qpos["hinge_1"][row] = np.pi + 0.01 * random.randn()
            qpos.all[row, 2:] = 0.1 * random.randn(nv - 2)
        else:
            qpos["slider"][row] = random.uniform(-0.1, 0.1)
            qpos.all[row, 1:] = random.uniform(-0.034, 0.034, nv - 1)
        qvel.all[row] = 0.01 * random.randn(nv)

    def get_reward(self):
        cos = self.pole_angle_cosines()
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


class TwoPoles(Cartpole):
    task = "two_poles"
    swing_up = True
    n_poles = 2


class ThreePoles(Cartpole):
    task = "three_poles"
    swing_up = True
    n_poles = 3


_ACTION = "`Box(-1, 1, (1,), float64)`: the cart's motor (force = 10 N x action)."
_SMOOTH = (
    "upright ((1 + cos) / 2) x small_control ((4 + quadratic tolerance of the action, margin 1) "
    "/ 5) x small_velocity ((1 + gaussian tolerance of the pole's rate, margin 5) / 2) x "
    "centered ((1 + gaussian tolerance of the cart's position, margin 2) / 2)."
)
_SPARSE = "1 while the cart is within +-0.25 m and cos(pole angle) >= 0.995, else 0."
_HANGING = "The cart at 0.01 N(0, 1) m, the pole hanging (pi + 0.01 N(0, 1) rad), velocities 0.01 N(0, 1)."
_CHAIN_SMOOTH = (
    "upright (the mean over the poles of (1 + cos) / 2, each pole's angle from upright in the "
    "world frame) x small_control ((4 + quadratic tolerance of the action, margin 1) / 5) x "
    "small_velocity ((1 + the least over the hinges of a gaussian tolerance of the rate, margin "
    "5) / 2) x centered ((1 + gaussian tolerance of the cart's position, margin 2) / 2)."
)
_CHAIN_HANGING = (
    "The cart at 0.01 N(0, 1) m, the first pole hanging (pi + 0.01 N(0, 1) rad), each further "
    "hinge at 0.1 N(0, 1) rad, velocities 0.01 N(0, 1)."
)
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
    # the settings of the shipped dmc_cartpole_swingup_ppo (training/README.md): without
    # target_kl the same run collapsed after 1.25M steps
    training={
        "ppo": {
            "timesteps": 1_500_000,
            "num_envs": 16,
            "vecnormalize": True,
            "algo_kwargs": {
                "n_steps": 256,
                "batch_size": 256,
                "n_epochs": 10,
                "gamma": 0.99,
                "use_sde": False,
                "target_kl": 0.02,
                "policy_kwargs": {"log_std_init": 0.0},
            },
        }
    },
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
DmcCartpoleTwoPolesEnv, DmcCartpoleTwoPolesVectorEnv = register_dmc(
    TwoPoles,
    module=__name__,
    summary="dm_control's cartpole-two_poles: swing a chain of two poles up and balance it",
    doc=_doc(
        TwoPoles,
        "Swing a hanging chain of two poles (hinged end to end on a cart) up by pushing the cart, and "
        "balance it.",
        _CHAIN_SMOOTH,
        _CHAIN_HANGING,
    ),
)
DmcCartpoleThreePolesEnv, DmcCartpoleThreePolesVectorEnv = register_dmc(
    ThreePoles,
    module=__name__,
    summary="dm_control's cartpole-three_poles: swing a chain of three poles up and balance it",
    doc=_doc(
        ThreePoles,
        "Swing a hanging chain of three poles (hinged end to end on a cart) up by pushing the cart, "
        "and balance it.",
        _CHAIN_SMOOTH,
        _CHAIN_HANGING,
    ),
)
