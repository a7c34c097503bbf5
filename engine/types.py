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

# transmission types (mjtTrn)
TRN_JOINT = 0
TRN_TENDON = 3

# object types (mjtObj) used by sensors
OBJ_BODY = 1
OBJ_XBODY = 2
OBJ_JOINT = 3
OBJ_GEOM = 5
OBJ_SITE = 6
OBJ_CAMERA = 7
OBJ_ACTUATOR = 19

# sensor types (mjtSensor)
SENS_ACCELEROMETER = 1
SENS_VELOCIMETER = 2
SENS_GYRO = 3
SENS_JOINTPOS = 9
SENS_JOINTVEL = 10
SENS_ACTUATORFRC = 15
SENS_FRAMEPOS = 26
SENS_FRAMEQUAT = 27
SENS_FRAMELINVEL = 31
SENS_FRAMEANGVEL = 32
SENS_SUBTREECOM = 35
SENS_SUBTREELINVEL = 36

# disable flags (mjtDisableBit) the engine honours
DSBL_CONSTRAINT = 1 << 0
DSBL_CONTACT = 1 << 4
DSBL_SPRING = 1 << 5
DSBL_DAMPER = 1 << 6
DSBL_GRAVITY = 1 << 7
DSBL_CLAMPCTRL = 1 << 8
DSBL_FILTERPARENT = 1 << 10
DSBL_ACTUATION = 1 << 11
DSBL_SENSOR = 1 << 13
DSBL_MIDPHASE = 1 << 14
DSBL_EULERDAMP = 1 << 15

# enable flags (mjtEnableBit)
ENBL_ENERGY = 1 << 1
