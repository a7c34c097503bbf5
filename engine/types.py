"""Integer type codes shared by the loader and the kernels (values equal MuJoCo's enums)."""

# joint types (mjtJoint)
JNT_FREE = 0
JNT_BALL = 1
JNT_SLIDE = 2
JNT_HINGE = 3

# integrators (mjtIntegrator)
INT_EULER = 0
INT_RK4 = 1
INT_IMPLICIT = 2
INT_IMPLICITFAST = 3

# actuator gain and bias types (mjtGain, mjtBias)
GAIN_FIXED = 0
GAIN_AFFINE = 1
BIAS_NONE = 0
BIAS_AFFINE = 1

# actuator activation dynamics (mjtDyn); dynprm[0] is the filters' time constant tau
DYN_NONE = 0  # no activation: the force's input is ctrl
DYN_INTEGRATOR = 1  # act_dot = ctrl
DYN_FILTER = 2  # act_dot = (ctrl - act) / tau, act += h act_dot
DYN_FILTEREXACT = 3  # the same act_dot, act integrated exactly over the step

# geom types (mjtGeom)
# mjtSameFrame: a frame the compiler found equal (to within its tolerance) to the body's or
# the body's inertial frame, whose pose mj_kinematics then copies (mj_local2Global)
SAMEFRAME_NONE = 0
SAMEFRAME_BODY = 1
SAMEFRAME_INERTIA = 2
SAMEFRAME_BODYROT = 3  # the rotation alone
SAMEFRAME_INERTIAROT = 4

GEOM_PLANE = 0
GEOM_HFIELD = 1
GEOM_SPHERE = 2
GEOM_CAPSULE = 3
GEOM_ELLIPSOID = 4
GEOM_CYLINDER = 5
GEOM_BOX = 6
GEOM_MESH = 7
GEOM_SDF = 8

# transmission types (mjtTrn)
TRN_JOINT = 0
TRN_TENDON = 3
TRN_SITE = 4

# object types (mjtObj) used by sensors
OBJ_BODY = 1
OBJ_XBODY = 2
OBJ_JOINT = 3
OBJ_GEOM = 5
OBJ_SITE = 6
OBJ_CAMERA = 7
OBJ_ACTUATOR = 19

# sensor types (mjtSensor)
SENS_TOUCH = 0
SENS_ACCELEROMETER = 1
SENS_VELOCIMETER = 2
SENS_GYRO = 3
SENS_FORCE = 4
SENS_TORQUE = 5
SENS_RANGEFINDER = 7
SENS_JOINTPOS = 9
SENS_JOINTVEL = 10
SENS_TENDONPOS = 11
SENS_TENDONVEL = 12
SENS_ACTUATORPOS = 13
SENS_ACTUATORVEL = 14
SENS_ACTUATORFRC = 15
SENS_JOINTACTFRC = 16
SENS_TENDONACTFRC = 17
SENS_FRAMEPOS = 26
SENS_FRAMEQUAT = 27
SENS_FRAMEXAXIS = 28
SENS_FRAMEYAXIS = 29
SENS_FRAMEZAXIS = 30
SENS_FRAMELINVEL = 31
SENS_FRAMEANGVEL = 32
SENS_FRAMELINACC = 33
SENS_FRAMEANGACC = 34
SENS_SUBTREECOM = 35
SENS_SUBTREELINVEL = 36
SENS_SUBTREEANGMOM = 37
SENS_CLOCK = 45

# disable flags (mjtDisableBit) the engine honours
DSBL_CONSTRAINT = 1 << 0
DSBL_EQUALITY = 1 << 1
DSBL_FRICTIONLOSS = 1 << 2
DSBL_LIMIT = 1 << 3
DSBL_CONTACT = 1 << 4
DSBL_SPRING = 1 << 5
DSBL_DAMPER = 1 << 6
DSBL_GRAVITY = 1 << 7
DSBL_CLAMPCTRL = 1 << 8
DSBL_WARMSTART = 1 << 9
DSBL_FILTERPARENT = 1 << 10
DSBL_ACTUATION = 1 << 11
DSBL_REFSAFE = 1 << 12
DSBL_SENSOR = 1 << 13
DSBL_MIDPHASE = 1 << 14
DSBL_EULERDAMP = 1 << 15
DSBL_NATIVECCD = 1 << 17
DSBL_ISLAND = 1 << 18
DSBL_MULTICCD = 1 << 19

# enable flags (mjtEnableBit)
ENBL_ENERGY = 1 << 1

# constraint row types (mjtConstraint) and states (mjtConstraintState)
CNSTR_EQUALITY = 0
CNSTR_FRICTION_DOF = 1
CNSTR_FRICTION_TENDON = 2
CNSTR_LIMIT_JOINT = 3
CNSTR_LIMIT_TENDON = 4
CNSTR_CONTACT_FRICTIONLESS = 5
CNSTR_CONTACT_PYRAMIDAL = 6
CNSTR_CONTACT_ELLIPTIC = 7
CNSTRSTATE_SATISFIED = 0
CNSTRSTATE_QUADRATIC = 1
CNSTRSTATE_LINEARNEG = 2
CNSTRSTATE_LINEARPOS = 3
CNSTRSTATE_CONE = 4

# friction cones (mjtCone)
CONE_PYRAMIDAL = 0
CONE_ELLIPTIC = 1

# equality constraint types (mjtEq)
EQ_CONNECT = 0
EQ_WELD = 1
EQ_JOINT = 2
EQ_TENDON = 3

# constraint solvers (mjtSolver)
SOL_PGS = 0
SOL_CG = 1
SOL_NEWTON = 2

# mjtJacobian: how the constraint Jacobian is stored (option jacobian=)
JAC_DENSE = 0
JAC_SPARSE = 1
JAC_AUTO = 2  # engine.capacity.dense_jacobian decides
SPARSE_NV = 60  # MuJoCo's mj_isSparse: jacobian="auto" is sparse from this many dofs up

# drives inside the stepping loop (engine.drive; RoboDyn's own, no MuJoCo counterpart)
DRIVE_NONE = 0
DRIVE_ACCELERATION = 1
DRIVE_PD = 2

# stepping flags (engine.step)
STEP_OBSERVE_END = 1  # sensors once, of the state after the last step (not of each step's start)
STEP_GRAVITY_COMPENSATION = 2  # DRIVE_PD adds the gravity load inside the clamp
STEP_RESET_BAD = 4  # a bad qpos, qvel or qacc resets the row and steps on (MuJoCo's autoreset)
# after the last step, the position and velocity stages and their sensors only (MuJoCo's mj_step1,
# as dm_control ends a control step): acceleration-stage quantities stay the last step's start's
STEP_OBSERVE_POSVEL = 8

# warnings counted per row in Data.warning (mjtWarning's order and meaning, for those kept)
WARN_BADQPOS = 0  # qpos NaN, inf or beyond MAXVAL at the start of a step
WARN_BADQVEL = 1  # qvel NaN, inf or beyond MAXVAL at the start of a step
WARN_BADQACC = 2  # qacc NaN, inf or beyond MAXVAL after the forward pass
WARN_BADCTRL = 3  # a control NaN, inf or beyond MAXVAL: every control of the row taken as 0
NWARN = 4
MAXVAL = 1e10  # MuJoCo's mjMAXVAL: larger |qpos|, |qvel|, |qacc| or |ctrl| counts as bad
MINVAL = 1e-15  # MuJoCo's mjMINVAL: a smaller norm, mass or inertia counts as zero
MINMU = 1e-5  # MuJoCo's mjMINMU: the least friction a contact gets

# tendon wrap objects (mjtWrap)
WRAP_JOINT = 1
WRAP_PULLEY = 2
WRAP_SITE = 3
WRAP_SPHERE = 4
WRAP_CYLINDER = 5
