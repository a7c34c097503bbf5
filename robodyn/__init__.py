"""RoboDyn's one import root.

    robodyn.engine     the articulated-body engine (engine/ in the repository)
    robodyn.envs       the tasks, each registering its Gymnasium id (envs/)
    robodyn.training   stable-baselines3 training, evaluation and the `robodyn` command (training/)
    robodyn.assets     the tasks' MJCF models (assets/)

`robogym` is the Gymnasium face: `import robogym` registers every task (RoboDyn's own and
those of packages declaring the `robodyn.tasks` entry point), after which
`gymnasium.make("RoboDyn/Crane-v0")` works; `gymnasium.make("robogym:RoboDyn/Crane-v0")`
does both in one call.
"""
