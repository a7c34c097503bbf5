"""RoboDyn's MJCF models (this directory), installed as the package `robodyn.assets` so that
`robogym.physics.asset_path` finds them in a wheel as in the repository."""
