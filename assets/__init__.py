"""RoboDyn's MJCF models (this directory), installed as the package `robodyn_assets` so that
`robogym.physics.asset_path` finds them in a wheel as in the repository."""
